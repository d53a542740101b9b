"""Side-by-side benchmark: autodiff_viz against the libraries a user would pick instead.

Peers (each optional, skipped with a note when missing; ``pip install -e ".[bench]"``):
PyTorch (CPU, eager), HIPS autograd, JAX (eager: no ``jit``), micrograd (W1 only,
Python floats), TensorFlow (eager), and hand-written NumPy where a floor makes sense.

Workloads
  W1  scalar chain ``y = tanh(y)*1.01 + y*0.5``, 300 steps, forward + backward;
      microseconds per op (4 ops a step).
  W2  one training step of a small MLP: x 64x32, 64 tanh hidden units, 10 outputs,
      mean squared error, SGD update; milliseconds per step.
  W3  ``sum(relu(A@B)@B)`` and its gradient w.r.t. A and B, 1024x1024 float32;
      milliseconds.  Floor: the same forward and backward written by hand in NumPy.
  W4  diagonal of the second derivative of ``sum(sin(x)*x**3)`` for 1,000
      float32 elements via nested tapes (grad of grad); milliseconds.
  W5  peak memory of forward + backward through a 50-op elementwise chain on
      1e6 float32 values (ops cycle sin, *1.01, tanh, +0.1, square); MiB above
      the inputs.  Floor: hand-written NumPy keeping only what each backward
      step needs.

Method
  Times: every round runs each library once per workload (several calls, the
  mean per call after a warm-up), rotating the order of libraries from round to
  round; the table shows the median over rounds, and each ratio is the median
  over rounds of that round's ratio (a round's libraries run back to back, so
  a machine that speeds up or slows down between rounds moves both sides of a
  ratio alike).  Machine speed wanders, so only ratios within one run mean anything.
  Memory (W5): each library runs in a fresh subprocess.  NumPy-based libraries
  (autodiff_viz, autograd, NumPy) are measured with ``tracemalloc`` (NumPy
  reports its array buffers to it): peak traced bytes during the step minus
  those held before it.  PyTorch, JAX and TensorFlow allocate outside Python's
  tracing, so for every library the table also shows the growth of the process'
  peak resident set (``VmHWM`` in ``/proc/self/status``, Linux) over its value
  just before the step (one cold step per process, with every workload's input
  data still held, so no library's step reuses pages freed just before it; a
  coarser number, allocator caching included).

    python benchmarks/bench.py                      # everything, 5 rounds
    python benchmarks/bench.py --rounds 7 --only W1,W3
    python benchmarks/bench.py --profile W2         # cProfile of autodiff_viz on one workload
    python benchmarks/bench.py --threads 1          # every library single-threaded

On a small shared machine the libraries' thread pools (OpenBLAS, MKL/OpenMP,
Eigen) fight each other and other processes: a PyTorch op that waits for a
descheduled worker thread can take milliseconds.  ``--threads N`` pins every
library to N threads (the script restarts itself with the environment set
before any library loads), which makes small-op timings repeatable.
"""
from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import json
import os
import math
import pstats
import statistics
import subprocess
import sys
import time

import numpy as np

W1_STEPS = 300
W3_N = 1024
W4_N = 1000
W5_N = 1_000_000
W5_OPS = 50
LR = 0.01

OURS = "autodiff_viz"
PEERS = ["numpy", "torch", "autograd", "jax", "micrograd", "tensorflow"]


# ---------------------------------------------------------------------------
# Data shared by every library (float32, seeded)
# ---------------------------------------------------------------------------
def _data():
    r = np.random.default_rng(0)
    f = np.float32
    return {
        "x": r.normal(size=(64, 32)).astype(f), "y": r.normal(size=(64, 10)).astype(f),
        "w1": (r.normal(size=(32, 64)) * 0.2).astype(f), "b1": np.zeros(64, f),
        "w2": (r.normal(size=(64, 10)) * 0.2).astype(f), "b2": np.zeros(10, f),
        "A": r.normal(size=(W3_N, W3_N)).astype(f) / 32, "B": r.normal(size=(W3_N, W3_N)).astype(f) / 32,
        "v": r.uniform(-1, 1, size=W4_N).astype(f),
        "big": r.uniform(-1, 1, size=W5_N).astype(f),
    }


# ---------------------------------------------------------------------------
# One builder per library: workload name -> zero-argument callable doing the work.
# A builder returns None for a workload the library does not take part in.
# ---------------------------------------------------------------------------
def build_tape_api(tf, w, d):
    """The workloads in TensorFlow's GradientTape API.

    The same code runs on this package and on TensorFlow: the package's promise
    is that guide code needs only its import line changed.  Results are copied
    to the host (``.numpy()``) so both are timed to the same finished state.
    """
    if w == "W1":
        def run():
            x = tf.constant(0.5)
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x
                for _ in range(W1_STEPS):
                    y = tf.tanh(y) * 1.01 + y * 0.5
            return tape.gradient(y, x)
        return run
    if w == "W2":
        x, y = tf.constant(d["x"]), tf.constant(d["y"])
        params = [tf.Variable(d[k]) for k in ("w1", "b1", "w2", "b2")]

        def run():
            w1, b1, w2, b2 = params
            with tf.GradientTape() as tape:
                h = tf.tanh(tf.matmul(x, w1) + b1)
                loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) + b2 - y))
            for p, g in zip(params, tape.gradient(loss, params)):
                p.assign_sub(LR * g)
        return run
    if w == "W3":
        a, b = tf.constant(d["A"]), tf.constant(d["B"])

        def run():
            with tf.GradientTape() as tape:
                tape.watch([a, b])
                s = tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(a, b)), b))
            return [g.numpy() for g in tape.gradient(s, [a, b])]
        return run
    if w == "W4":
        v = tf.constant(d["v"])

        def run():
            with tf.GradientTape() as outer:
                outer.watch(v)
                with tf.GradientTape() as inner:
                    inner.watch(v)
                    s = tf.reduce_sum(tf.sin(v) * v ** 3.0)
                g = inner.gradient(s, v)
            return outer.gradient(g, v).numpy()
        return run
    if w == "W5":
        x = tf.constant(d["big"])
        ops = [tf.sin, lambda t: t * 1.01, tf.tanh, lambda t: t + 0.1, tf.square]

        def run():
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x
                for i in range(W5_OPS):
                    y = ops[i % 5](y)
                s = tf.reduce_sum(y)
            return tape.gradient(s, x).numpy()
        return run


def build_autodiff_viz(w, d):
    import autodiff_viz as ad

    return build_tape_api(ad, w, d)


def build_numpy(w, d):
    """Hand-written forward and backward: the floor for W2, W3 and W5."""
    if w == "W2":
        x, y = d["x"], d["y"]
        params = [d[k].copy() for k in ("w1", "b1", "w2", "b2")]

        def run():
            w1, b1, w2, b2 = params
            h = np.tanh(x @ w1 + b1)
            out = h @ w2 + b2
            diff = out - y
            g_out = (2.0 / diff.size) * diff
            g_w2, g_b2 = h.T @ g_out, g_out.sum(0)
            g_pre = (g_out @ w2.T) * (1 - h * h)
            g_w1, g_b1 = x.T @ g_pre, g_pre.sum(0)
            for p, g in zip(params, (g_w1, g_b1, g_w2, g_b2)):
                p -= np.float32(LR) * g
        return run
    if w == "W3":
        a, b = d["A"], d["B"]

        def run():
            c = a @ b
            r = np.maximum(c, 0)
            s = (r @ b).sum()
            g_d = np.ones_like(r)
            g_r = g_d @ b.T
            g_b = r.T @ g_d
            g_c = g_r * (c > 0)
            g_a = g_c @ b.T
            g_b += a.T @ g_c
            return s, g_a, g_b
        return run
    if w == "W5":
        x = d["big"]

        def run():
            saved, y = [], x
            for i in range(W5_OPS):
                k = i % 5
                if k == 0:
                    saved.append(y)
                    y = np.sin(y)
                elif k == 1:
                    y = y * np.float32(1.01)
                elif k == 2:
                    y = np.tanh(y)
                    saved.append(y)
                elif k == 3:
                    y = y + np.float32(0.1)
                else:
                    saved.append(y)
                    y = y * y
            g = np.ones_like(y)
            for i in reversed(range(W5_OPS)):
                k = i % 5
                if k == 0:
                    g = g * np.cos(saved.pop())
                elif k == 1:
                    g = g * np.float32(1.01)
                elif k == 2:
                    t = saved.pop()
                    g = g * (1 - t * t)
                elif k == 4:
                    g = g * (2 * saved.pop())
            return g
        return run


def build_torch(w, d):
    import torch

    if os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

    if w == "W1":
        def run():
            x = torch.tensor(0.5, requires_grad=True)
            y = x
            for _ in range(W1_STEPS):
                y = torch.tanh(y) * 1.01 + y * 0.5
            y.backward()
            return x.grad
        return run
    if w == "W2":
        x, y = torch.from_numpy(d["x"]), torch.from_numpy(d["y"])
        params = [torch.tensor(d[k], requires_grad=True) for k in ("w1", "b1", "w2", "b2")]

        def run():
            w1, b1, w2, b2 = params
            h = torch.tanh(x @ w1 + b1)
            loss = torch.mean(torch.square(h @ w2 + b2 - y))
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p -= LR * g
        return run
    if w == "W3":
        a = torch.tensor(d["A"], requires_grad=True)
        b = torch.tensor(d["B"], requires_grad=True)

        def run():
            s = torch.sum(torch.relu(a @ b) @ b)
            return torch.autograd.grad(s, [a, b])
        return run
    if w == "W4":
        v = torch.tensor(d["v"], requires_grad=True)

        def run():
            s = torch.sum(torch.sin(v) * v ** 3.0)
            (g,) = torch.autograd.grad(s, v, create_graph=True)
            return torch.autograd.grad(g, v, grad_outputs=torch.ones_like(g))[0]
        return run
    if w == "W5":
        x = torch.tensor(d["big"], requires_grad=True)
        ops = [torch.sin, lambda t: t * 1.01, torch.tanh, lambda t: t + 0.1, torch.square]

        def run():
            y = x
            for i in range(W5_OPS):
                y = ops[i % 5](y)
            return torch.autograd.grad(y.sum(), x)
        return run


def build_autograd(w, d):
    import autograd
    import autograd.numpy as anp

    if w == "W1":
        def f(y):
            for _ in range(W1_STEPS):
                y = anp.tanh(y) * 1.01 + y * 0.5
            return y
        g = autograd.grad(f)
        return lambda: g(0.5)
    if w == "W2":
        x, y = d["x"], d["y"]
        params = [d[k].copy() for k in ("w1", "b1", "w2", "b2")]

        def loss(ps):
            w1, b1, w2, b2 = ps
            h = anp.tanh(anp.dot(x, w1) + b1)
            return anp.mean(anp.square(anp.dot(h, w2) + b2 - y))
        g = autograd.grad(loss)

        def run():
            for p, gp in zip(params, g(params)):
                p -= np.float32(LR) * gp
        return run
    if w == "W3":
        a, b = d["A"], d["B"]
        g = autograd.grad(lambda a, b: anp.sum(anp.dot(anp.maximum(anp.dot(a, b), 0), b)), argnum=(0, 1))
        return lambda: g(a, b)
    if w == "W4":
        v = d["v"]
        d2 = autograd.elementwise_grad(autograd.elementwise_grad(lambda x: anp.sin(x) * x ** 3.0))
        return lambda: d2(v)
    if w == "W5":
        x = d["big"]
        ops = [anp.sin, lambda t: t * np.float32(1.01), anp.tanh, lambda t: t + np.float32(0.1), anp.square]

        def f(y):
            for i in range(W5_OPS):
                y = ops[i % 5](y)
            return anp.sum(y)
        g = autograd.grad(f)
        return lambda: g(x)


def build_jax(w, d):
    import jax
    import jax.numpy as jnp

    def ready(fn):  # JAX dispatches asynchronously: wait for the result
        return lambda: jax.block_until_ready(fn())

    if w == "W1":
        def f(y):
            for _ in range(W1_STEPS):
                y = jnp.tanh(y) * 1.01 + y * 0.5
            return y
        g = jax.grad(f)
        x = jnp.float32(0.5)
        return ready(lambda: g(x))
    if w == "W2":
        x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
        params = [jnp.asarray(d[k]) for k in ("w1", "b1", "w2", "b2")]

        def loss(ps):
            w1, b1, w2, b2 = ps
            h = jnp.tanh(x @ w1 + b1)
            return jnp.mean(jnp.square(h @ w2 + b2 - y))
        g = jax.grad(loss)

        def run():
            params[:] = [p - LR * gp for p, gp in zip(params, g(params))]
            return params
        return ready(run)
    if w == "W3":
        a, b = jnp.asarray(d["A"]), jnp.asarray(d["B"])
        g = jax.grad(lambda a, b: jnp.sum(jax.nn.relu(a @ b) @ b), argnums=(0, 1))
        return ready(lambda: g(a, b))
    if w == "W4":
        v = jnp.asarray(d["v"])
        g1 = jax.grad(lambda x: jnp.sum(jnp.sin(x) * x ** 3.0))
        g2 = jax.grad(lambda x: jnp.sum(g1(x)))
        return ready(lambda: g2(v))
    if w == "W5":
        x = jnp.asarray(d["big"])
        ops = [jnp.sin, lambda t: t * 1.01, jnp.tanh, lambda t: t + 0.1, jnp.square]

        def f(y):
            for i in range(W5_OPS):
                y = ops[i % 5](y)
            return jnp.sum(y)
        g = jax.grad(f)
        return ready(lambda: g(x))


def build_micrograd(w, d):
    from micrograd.engine import Value

    if w != "W1":
        return None

    def tanh(v):
        # micrograd ships no tanh; added with its own extension pattern (a node and its _backward).
        t = math.tanh(v.data)
        out = Value(t, (v,), "tanh")

        def _backward():
            v.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    def run():
        x = Value(0.5)
        y = x
        for _ in range(W1_STEPS):
            y = tanh(y) * 1.01 + y * 0.5
        y.backward()
        return x.grad
    return run


def build_tensorflow(w, d):
    import tensorflow as tf

    n = int(os.environ.get("OMP_NUM_THREADS", "0"))
    if n and tf.config.threading.get_intra_op_parallelism_threads() != n:
        try:
            tf.config.threading.set_intra_op_parallelism_threads(n)
            tf.config.threading.set_inter_op_parallelism_threads(n)
        except RuntimeError:  # already initialized by an earlier workload
            pass

    return build_tape_api(tf, w, d)


BUILDERS = {OURS: build_autodiff_viz, "numpy": build_numpy, "torch": build_torch, "autograd": build_autograd,
            "jax": build_jax, "micrograd": build_micrograd, "tensorflow": build_tensorflow}
MODULES = {OURS: "autodiff_viz", "numpy": "numpy", "torch": "torch", "autograd": "autograd", "jax": "jax",
           "micrograd": "micrograd", "tensorflow": "tensorflow"}
TIMED = ["W1", "W2", "W3", "W4"]
UNIT = {"W1": ("us/op", 1e6 / (4 * W1_STEPS)), "W2": ("ms", 1e3), "W3": ("ms", 1e3), "W4": ("ms", 1e3)}
# The targets: autodiff_viz's time (or memory) over the reference library's, at most this much.
# The engine's targets: this package's time (or memory) over the peer's.
TARGETS = {"W1": ("torch", 0.7), "W2": ("torch", 0.7), "W3": ("numpy", 1.03), "W4": ("torch", 1.0),
           "W5": ("numpy", 1.03)}


def available(libs):
    out, missing = [], {}
    for lib in libs:
        try:
            importlib.import_module(MODULES[lib])
            out.append(lib)
        except Exception as e:  # ImportError, or a broken install
            missing[lib] = f"{type(e).__name__}: {e}"
    return out, missing


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------
def _calls_for(fn, budget=0.25):
    """Warm up, then pick a call count that takes about ``budget`` seconds."""
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    return max(1, min(200, int(budget / max(one, 1e-6))))


def time_workloads(libs, workloads, rounds):
    d = _data()
    runs = {}
    for w in workloads:
        for lib in libs:
            fn = BUILDERS[lib](w, d)
            if fn is not None:
                runs[(w, lib)] = [fn, _calls_for(fn), []]
    for r in range(rounds):
        for w in workloads:
            order = [lib for lib in libs if (w, lib) in runs]
            order = order[r % len(order):] + order[:r % len(order)]  # rotate who goes first
            for lib in order:
                fn, n, samples = runs[(w, lib)]
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                samples.append((time.perf_counter() - t0) / n)
        print(f"  round {r + 1}/{rounds} done", file=sys.stderr)
    return {key: v[2] for key, v in runs.items()}  # per (workload, library): one time per round


def paired_ratio(times, w, lib):
    """autodiff_viz's time over ``lib``'s: the median over rounds of each round's ratio.

    A round times every library back to back, so a machine that speeds up or
    slows down between rounds moves both sides of a round's ratio alike.
    """
    ours, theirs = times.get((w, OURS)), times.get((w, lib))
    if not ours or not theirs:
        return None
    return statistics.median(a / b for a, b in zip(ours, theirs))


# ---------------------------------------------------------------------------
# Memory (W5): one fresh process per library
# ---------------------------------------------------------------------------
# Peak RSS is read from VmHWM: getrusage's ru_maxrss would start from the
# parent's peak (Linux carries it over exec), hiding the child's own growth.
_MEMORY_CHILD = r"""
import json, sys, tracemalloc
sys.path.insert(0, sys.argv[1])
import bench

def peak_rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))

lib = sys.argv[2]
# The data stays alive while the step runs.  Freed just before it (the W3 arrays alone are
# 8 MiB), its pages were partly reused by the step, by an amount that depended on what each
# library's builder kept: peak-RSS growth differed by about 4 MiB between libraries whose
# traced peaks were equal.
data = bench._data()
fn = bench.BUILDERS[lib]("W5", data)
tracemalloc.start()
before_rss = peak_rss()
held = tracemalloc.get_traced_memory()[0]
result = fn()
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"traced": peak - held, "rss": peak_rss() - before_rss}))
"""


def measure_memory(libs):
    here = str(__import__("pathlib").Path(__file__).resolve().parent)
    out = {}
    for lib in libs:
        if BUILDERS[lib]("W5", {"big": np.zeros(1, np.float32)}) is None:
            continue
        p = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, here, lib], capture_output=True, text=True)
        if p.returncode != 0:
            out[lib] = None
            print(f"  W5 {lib} failed: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        out[lib] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------
def report(times, memory, libs, workloads, missing):
    mib = 2.0 ** 20
    print()
    for w in workloads:
        if w == "W5":
            continue
        unit, scale = UNIT[w]
        print(f"{w} ({unit}, median; ratios paired by round)")
        for lib in libs:
            t = times.get((w, lib))
            if t is None:
                continue
            r = None if lib == OURS else paired_ratio(times, w, lib)
            ratio = "" if r is None else f"   autodiff_viz / {lib} = {r:5.2f}"
            print(f"  {lib:<13}{statistics.median(t) * scale:10.3f}{ratio}")
        ref = TARGETS[w][0]
        _target_line(w, paired_ratio(times, w, ref))
    if memory:
        print(f"W5 (MiB above the inputs: tracemalloc peak | peak-RSS growth)")
        for lib, m in memory.items():
            if m is None:
                print(f"  {lib:<13}   failed")
                continue
            traced = f"{m['traced'] / mib:8.1f}" if lib in (OURS, "numpy", "autograd") else "       -"
            print(f"  {lib:<13}{traced} | {m['rss'] / mib:8.1f}")
        ours, ref = (memory.get(OURS) or {}).get("traced"), (memory.get(TARGETS["W5"][0]) or {}).get("traced")
        _target_line("W5", ours / ref if ours and ref else None)
    for lib, why in missing.items():
        print(f"skipped {lib}: {why}")


def _target_line(w, ratio):
    ref, limit = TARGETS[w]
    if ratio is not None:
        print(f"  target: autodiff_viz / {ref} <= {limit}: {ratio:.2f} -> {'met' if ratio <= limit else 'MISSED'}")


def profile(workload, top=25):
    fn = BUILDERS[OURS](workload, _data())
    fn()
    n = _calls_for(fn, budget=1.0)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        fn()
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(top)
    print(f"{workload}: {n} calls, sorted by own time")
    print(s.getvalue())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="W1,W2,W3,W4,W5", help="comma-separated workloads")
    ap.add_argument("--libs", default=",".join([OURS] + PEERS), help="comma-separated libraries")
    ap.add_argument("--profile", metavar="W", help="profile autodiff_viz on one workload instead")
    ap.add_argument("--threads", type=int, help="threads for every library (default: each library's own)")
    args = ap.parse_args(argv)
    if args.threads and os.environ.get("OMP_NUM_THREADS") != str(args.threads):
        n = str(args.threads)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = n
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                                   f" intra_op_parallelism_threads={n}").strip()
        os.execv(sys.executable, [sys.executable, *sys.argv])  # restart: thread pools are sized at import
    if args.profile:
        profile(args.profile)
        return
    workloads = [w.strip() for w in args.only.split(",")]
    libs, missing = available([lib.strip() for lib in args.libs.split(",")])
    import numpy
    print(f"threads: {os.environ.get('OMP_NUM_THREADS', 'library defaults')}; "
          f"python {sys.version.split()[0]}, numpy {numpy.__version__}, "
          + ", ".join(f"{lib} {getattr(sys.modules[MODULES[lib]], '__version__', '?')}" for lib in libs if lib != "numpy"))
    timed = [w for w in workloads if w in TIMED]
    times = time_workloads(libs, timed, args.rounds) if timed else {}
    memory = measure_memory(libs) if "W5" in workloads else {}
    report(times, memory, libs, timed + (["W5"] if memory else []), missing)


if __name__ == "__main__":
    main()
