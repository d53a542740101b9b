"""Side-by-side benchmark: autodiff_viz against the libraries a user would pick instead.

Peers (each optional, skipped with a note when missing; ``pip install -e ".[bench]"``):
PyTorch (CPU, eager), HIPS autograd, JAX (eager: no ``jit``), micrograd (W1 only,
Python floats), TensorFlow (eager), and hand-written NumPy where a floor makes sense.

Two builds of autodiff_viz run side by side: ``autodiff_viz``, the pure-Python
package this script finds, and ``compiled``, the same checkout built with
``AUTODIFF_VIZ_COMPILE=1`` (its hot modules compiled by mypyc; see
``autodiff_viz/_compiled.py``).  The script builds that wheel itself into a
temporary folder (``pip wheel --no-build-isolation``: the ``bench`` extra brings
mypy and setuptools) and unpacks it first on the children's ``PYTHONPATH``; a
build that fails is skipped with its reason.  Every ratio and target is printed
for both builds.

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

Method (times, W1-W4)
  One process per library and workload: a child (this script with ``--child``)
  imports one library, builds one workload and warms it up, so no library's
  thread pools, allocator or lazy state touch another's.  Warm-up: single calls
  first (a first call can cost thousands of steady ones: PyTorch's first
  grad-of-grad takes over 0.25 s), then batches of about 0.1 s, until two
  batches in a row agree within 10% per call, after at least 5 calls and 0.5 s
  (at most 5 s; a child that never settles says so).  Only then does the child
  choose how many calls make a round last ``--min-round`` seconds (0.2), and a
  round that still ends short keeps calling until it has lasted that long.
  Rounds are interleaved across processes: the children of one workload wait
  side by side, and the parent asks each in turn for one round (one child runs
  at a time; the order rotates from round to round; a short pause between
  children lets a thread pool that spins after its work go to sleep first).
  Round r of every library thus falls within the same second or two, so a
  machine that speeds up or slows down moves both sides of a ratio alike.
  A library's time is the median over rounds of its time per call, shown with
  the min-max over rounds; a ratio is the median over rounds of that round's
  ratio (autodiff_viz / peer), with its min-max.  Machine speed wanders, so
  only ratios within one run mean anything.
Threads
  By default everything runs twice: pinned to one thread (every child gets
  ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` = 1,
  ``torch.set_num_threads(1)``, single-threaded XLA) and with each library's
  defaults (those variables removed from the children's environment).
  ``--threads N`` runs pinned to N threads only; ``--threads 0`` the defaults only.
Memory (W5)
  Each library runs in a fresh process.  NumPy-based libraries (autodiff_viz,
  autograd, NumPy) are measured with ``tracemalloc`` (NumPy reports its array
  buffers to it): peak traced bytes during the step minus those held before it.
  PyTorch, JAX and TensorFlow allocate outside Python's tracing, so for every
  library the table also shows the growth of the process' peak resident set
  (``VmHWM`` in ``/proc/self/status``, Linux) over its value just before the
  step (one cold step per process, with every workload's input data still held,
  so no library's step reuses pages freed just before it; a coarser number,
  allocator caching included).

    python benchmarks/bench.py                      # both thread settings, 7 rounds
    python benchmarks/bench.py --rounds 9 --only W1,W3
    python benchmarks/bench.py --threads 1          # pinned to one thread only
    python benchmarks/bench.py --profile W2         # cProfile of autodiff_viz on one workload
"""
from __future__ import annotations

import argparse
import cProfile
import importlib.metadata
import importlib.util
import io
import json
import math
import os
import pathlib
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

W1_STEPS = 300
W3_N = 1024
W4_N = 1000
W5_N = 1_000_000
W5_OPS = 50
LR = 0.01

OURS = "autodiff_viz"
COMPILED = "compiled"  # the same checkout built with AUTODIFF_VIZ_COMPILE=1, timed beside the pure package
OURS_BUILDS = (OURS, COMPILED)
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


BUILDERS = {OURS: build_autodiff_viz, COMPILED: build_autodiff_viz, "numpy": build_numpy, "torch": build_torch,
            "autograd": build_autograd, "jax": build_jax, "micrograd": build_micrograd, "tensorflow": build_tensorflow}
MODULES = {OURS: "autodiff_viz", COMPILED: "autodiff_viz", "numpy": "numpy", "torch": "torch", "autograd": "autograd",
           "jax": "jax", "micrograd": "micrograd", "tensorflow": "tensorflow"}
TIMED = ["W1", "W2", "W3", "W4"]
UNIT = {"W1": ("us/op", 1e6 / (4 * W1_STEPS)), "W2": ("ms", 1e3), "W3": ("ms", 1e3), "W4": ("ms", 1e3)}
# The engine's targets: this package's time (or memory) over the reference library's, at most this much.
TARGETS = {"W1": ("torch", 0.55), "W2": ("torch", 0.6), "W3": ("numpy", 1.0), "W4": ("torch", 1.0),
           "W5": ("numpy", 1.03)}
MIN_ROUND = 0.2  # seconds a timed round lasts at least
GAP = 0.2  # seconds between two children's rounds: a thread pool that spins after its work goes to sleep
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
SCRIPT = pathlib.Path(__file__).resolve()
ROOT = SCRIPT.parent.parent  # the checkout whose compiled build is timed


def available(libs):
    """Split ``libs`` into the installed ones and {library: why not}, importing none of them (the compiled
    build is there once :func:`build_compiled` has made it)."""
    out, missing = [], {}
    for lib in libs:
        if lib == COMPILED:
            out.append(lib)
        elif lib not in MODULES:
            missing[lib] = f"unknown library (known: {', '.join(MODULES)})"
        elif importlib.util.find_spec(MODULES[lib]) is None:
            missing[lib] = "not installed"
        else:
            out.append(lib)
    return out, missing


def child_env(threads, first_on_path=None):
    """The environment of the children: pinned to ``threads`` threads, or each library's defaults (0/None);
    ``first_on_path``: a folder put first on ``PYTHONPATH`` (where the compiled build is unpacked).

    >>> child_env(1)["OMP_NUM_THREADS"], "OMP_NUM_THREADS" in child_env(None)
    ('1', False)
    >>> child_env(1, "compiled-site")["PYTHONPATH"].split(os.pathsep)[0]
    'compiled-site'
    """
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    if first_on_path:
        env["PYTHONPATH"] = os.pathsep.join([first_on_path] + [p for p in [env.get("PYTHONPATH")] if p])
    if threads:
        env.update({k: str(threads) for k in THREAD_VARS})
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                            f" intra_op_parallelism_threads={threads}").strip()
    return env


# ---------------------------------------------------------------------------
# Timing harness: what one child does.  The clock is a parameter so that tests
# can drive it with a clock of their own.
# ---------------------------------------------------------------------------
def _seconds(fn, n, clock):
    t0 = clock()
    for _ in range(n):
        fn()
    return clock() - t0


def warm_up(fn, clock=time.perf_counter, *, batch=0.1, tolerance=0.1, min_calls=5, min_seconds=0.5, budget=5.0):
    """Call ``fn`` until its time per call settles; return (seconds per call, calls made, settled).

    Single calls come first, since a first call may cost thousands of steady ones
    (lazy initialisation, caches, compilation); then batches sized from the last
    time per call to last about ``batch`` seconds.  Settled: two batches in a row
    agree within ``tolerance`` per call, after at least ``min_calls`` calls and
    ``min_seconds``.  After ``budget`` seconds it stops, unsettled.

    >>> now = [0.0]
    >>> def call():  # 1 s the first time, 2 ms after that, on this clock
    ...     now[0] += 1.0 if now[0] == 0 else 0.002
    >>> per_call, calls, settled = warm_up(call, lambda: now[0])
    >>> round(per_call, 9), settled
    (0.002, True)
    """
    start, calls, n, last = clock(), 0, 1, None
    while True:
        per_call = _seconds(fn, n, clock) / n
        calls += n
        spent = clock() - start
        if (last is not None and abs(per_call - last) <= tolerance * min(per_call, last)
                and calls >= min_calls and spent >= min_seconds):
            return per_call, calls, True
        if spent >= budget:
            return per_call, calls, False
        last, n = per_call, calls_per_round(per_call, batch)


def calls_per_round(per_call, min_round=MIN_ROUND):
    """How many calls of ``per_call`` seconds each last at least ``min_round`` seconds.

    >>> calls_per_round(0.03, 0.2), calls_per_round(5.0, 0.2)
    (7, 1)
    """
    return max(1, math.ceil(min_round / max(per_call, 1e-9)))


def run_round(fn, calls, clock=time.perf_counter, min_round=MIN_ROUND):
    """Time one round: ``calls`` calls, and more until it has lasted ``min_round``; return (calls, seconds).

    >>> now = [0.0]
    >>> def call():
    ...     now[0] += 0.01
    >>> calls, seconds = run_round(call, 3, lambda: now[0], min_round=0.2)
    >>> calls, round(seconds, 9)
    (20, 0.2)
    """
    t0, done, n = clock(), 0, calls
    while True:
        for _ in range(n):
            fn()
        done += n
        spent = clock() - t0
        if spent >= min_round:
            return done, spent
        n = calls_per_round(spent / done, min_round - spent)


def serve(fn, commands, reply, clock=time.perf_counter, min_round=MIN_ROUND):
    """A child's life: warm ``fn`` up, then time one round per ``"round"`` line read from ``commands``.

    ``reply`` gets dicts: first what warming up found (``warm``: seconds per
    call, ``warm_calls``, ``settled``, ``calls``: per round), then one
    ``{"calls", "seconds"}`` per round.  Any other line, or the end, stops it.

    >>> now, out = [0.0], []
    >>> def call():
    ...     now[0] += 0.03
    >>> serve(call, ["round", "round"], out.append, lambda: now[0])
    >>> out[0]["calls"], [(r["calls"], round(r["seconds"], 9)) for r in out[1:]]
    (7, [(7, 0.21), (7, 0.21)])
    """
    per_call, warm_calls, settled = warm_up(fn, clock)
    calls = calls_per_round(per_call, min_round)
    reply({"warm": per_call, "warm_calls": warm_calls, "settled": settled, "calls": calls})
    for line in commands:
        if line.strip() != "round":
            return
        done, seconds = run_round(fn, calls, clock, min_round)
        reply({"calls": done, "seconds": seconds})


def _version(lib):
    if lib in OURS_BUILDS:  # (and where each build was loaded from: the pure one is whichever Python finds)
        from autodiff_viz import _compiled
        n = len(_compiled.compiled())
        where = pathlib.Path(_compiled.__file__).parent
        return f"{_version_of(lib)} ({f'{n} modules compiled' if n else 'pure'}, from {where})"
    return _version_of(lib)


def _version_of(lib):
    mod = sys.modules[MODULES[lib]]
    try:
        return getattr(mod, "__version__", None) or importlib.metadata.version(MODULES[lib])
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _threads_seen(lib):
    """The intra-op threads a library reports using, where it reports them."""
    return sys.modules["torch"].get_num_threads() if lib == "torch" else None


def timing_child(lib, workload, min_round):
    """Entry of one timing child (``--child time``): replies as JSON lines on stdout.

    Whatever the library itself prints is sent to stderr, so stdout carries
    only the replies: first ``{"library", "version", "threads"}`` (or
    ``{"error"}`` / ``{"skip"}``), then those of ``serve``.
    """
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def reply(message):
        replies.write(json.dumps(message) + "\n")

    try:
        fn = BUILDERS[lib](workload, _data())
    except Exception as e:  # noqa: BLE001  (ImportError, or a broken install)
        reply({"error": f"{type(e).__name__}: {e}"})
        return
    if fn is None:
        reply({"skip": f"{lib} does not take part in {workload}"})
        return
    if lib in OURS_BUILDS:  # each build must be the one it is named for
        from autodiff_viz import _compiled
        if bool(_compiled.compiled()) != (lib == COMPILED):
            reply({"error": f"{lib}: found the {'compiled' if _compiled.compiled() else 'pure'} build of autodiff_viz "
                            f"({sys.modules['autodiff_viz'].__file__})"})
            return
    reply({"library": lib, "version": _version(lib), "threads": _threads_seen(lib)})
    serve(fn, sys.stdin, reply, min_round=min_round)


# ---------------------------------------------------------------------------
# The parent: children interleaved round by round
# ---------------------------------------------------------------------------
class Child:
    """One library's timing process for one workload; ``round()`` asks it for one round.

    ``info`` is its first reply merged with what warming up found, or holds
    ``error`` or ``skip`` when it cannot take part (then it has exited).
    """

    def __init__(self, lib, workload, env, min_round=MIN_ROUND):
        self.lib, self.workload = lib, workload
        self._err = tempfile.TemporaryFile("w+")
        self._proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), "--child", "time", "--libs", lib, "--only", workload,
             "--min-round", repr(min_round)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True, env=env)
        self.info = self._read()
        if "library" in self.info:
            self.info.update(self._read())

    @property
    def ok(self):
        return "warm" in self.info

    def _read(self):
        line = self._proc.stdout.readline()
        if line:
            return json.loads(line)
        self._proc.wait()
        self._err.seek(0)
        last = (self._err.read().strip().splitlines() or ["(no message)"])[-1]
        return {"error": f"{self.lib} on {self.workload} exited with {self._proc.returncode}: {last}"}

    def round(self):
        """This child's seconds per call over one round."""
        self._proc.stdin.write("round\n")
        self._proc.stdin.flush()
        reply = self._read()
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["seconds"] / reply["calls"]

    def close(self):
        if self._proc.poll() is None:
            self._proc.stdin.close()  # the child's loop ends at the end of its input
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._err.close()


def round_order(libs, r):
    """Round ``r``'s order: the list turned by ``r``, so no library always runs first.

    >>> round_order(["a", "b", "c"], 1)
    ['b', 'c', 'a']
    """
    k = r % len(libs) if libs else 0
    return libs[k:] + libs[:k]


def time_workload(libs, workload, rounds, env, min_round=MIN_ROUND, gap=GAP, envs=None):
    """Time one workload: per library its seconds per call in each round, children taking turns.

    ``env``: the children's environment; ``envs``: {library: its own}, for those that need another.

    Returns ``(times, info, notes)``: {library: [seconds per call, one per
    round]}, {library: the child's info}, {library: why it has no times}.
    Round r of every library comes from one pass over the children, so it is
    paired with round r of every other.
    """
    children, notes = {}, {}
    try:
        for lib in libs:
            child = Child(lib, workload, (envs or {}).get(lib, env), min_round)
            if child.ok:
                children[lib] = child
            else:
                child.close()
                if "error" in child.info:
                    notes[lib] = child.info["error"]
        times = {lib: [] for lib in children}
        for r in range(rounds):
            for lib in round_order(list(times), r):
                try:
                    times[lib].append(children[lib].round())
                except RuntimeError as e:  # died mid-run: its rounds pair with nothing now
                    notes[lib] = str(e)
                    del times[lib]
                time.sleep(gap)
            print(f"  {workload} round {r + 1}/{rounds} done", file=sys.stderr)
    finally:
        for child in children.values():
            child.close()
    return times, {lib: children[lib].info for lib in times}, notes


def spread(values):
    """(median, min, max).

    >>> spread([3.0, 1.0, 2.0, 10.0])
    (2.5, 1.0, 10.0)
    """
    return statistics.median(values), min(values), max(values)


def paired_ratios(ours, theirs):
    """Each round's ratio of our time to theirs (rounds paired by index).

    >>> paired_ratios([2.0, 3.0, 4.0], [1.0, 1.0, 2.0])
    [2.0, 3.0, 2.0]
    """
    return [a / b for a, b in zip(ours, theirs)]


# ---------------------------------------------------------------------------
# Memory (W5): one fresh process per library
# ---------------------------------------------------------------------------
def _peak_rss():
    # VmHWM, not getrusage's ru_maxrss: Linux carries the parent's peak over exec.
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


def memory_child(lib):
    """Entry of one memory child (``--child memory``): one cold W5 step, its growth as JSON on stdout."""
    # The data stays alive while the step runs.  Freed just before it (the W3 arrays alone
    # are 8 MiB), its pages were partly reused by the step, by an amount that depended on
    # what each library's builder kept.
    import tracemalloc

    data = _data()
    fn = BUILDERS[lib]("W5", data)
    tracemalloc.start()
    before_rss = _peak_rss()
    held = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    print(json.dumps({"traced": peak - held, "rss": _peak_rss() - before_rss}))


def measure_memory(libs, env, envs=None):
    out = {}
    for lib in libs:
        if BUILDERS[lib]("W5", {"big": np.zeros(1, np.float32)}) is None:
            continue
        p = subprocess.run([sys.executable, str(SCRIPT), "--child", "memory", "--libs", lib],
                           capture_output=True, text=True, env=(envs or {}).get(lib, env))
        if p.returncode != 0:
            out[lib] = None
            print(f"  W5 {lib} failed: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        out[lib] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------
def _fmt(m, lo, hi, digits=3):
    return f"{m:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def report_times(w, times, info, rounds):
    """Print one workload's table; return {(build, peer): (median, min, max) of the paired ratios}, for
    each build of ours that ran (``autodiff_viz``, ``compiled``)."""
    unit, scale = UNIT[w]
    print(f"{w} ({unit} per call: median [min-max] over {rounds} rounds; calls per round; warm-up)")
    ratios = {}
    builds = [b for b in OURS_BUILDS if b in times]
    for lib, t in times.items():
        med, lo, hi = spread([x * scale for x in t])
        warm = info[lib]
        settled = "" if warm["settled"] else ", NOT settled"
        line = f"  {lib:<13}{_fmt(med, lo, hi):>28}  x{warm['calls']:<5} {warm['warm_calls']} calls{settled}"
        said = []
        for build in builds:
            if lib not in OURS_BUILDS:
                ratios[build, lib] = spread(paired_ratios(times[build], t))
                said.append(f"{build} / {lib} = {_fmt(*ratios[build, lib], digits=2)}")
        print(line + ("   " + "; ".join(said) if said else ""))
    ref, limit = TARGETS[w]
    for build in builds:
        if (build, ref) in ratios:
            r = ratios[build, ref][0]
            print(f"  target: {build} / {ref} <= {limit}: {r:.2f} -> {'met' if r <= limit else 'MISSED'}")
    return ratios


def report_memory(memory):
    """Print W5's table; return {(build, reference): our traced peak over the reference's} for each build."""
    mib = 2.0 ** 20
    print("W5 (MiB above the inputs: tracemalloc peak | peak-RSS growth)")
    for lib, m in memory.items():
        if m is None:
            print(f"  {lib:<13}   failed")
            continue
        traced = f"{m['traced'] / mib:8.1f}" if lib in (*OURS_BUILDS, "numpy", "autograd") else "       -"
        print(f"  {lib:<13}{traced} | {m['rss'] / mib:8.1f}")
    ref, limit = TARGETS["W5"]
    out = {}
    for build in OURS_BUILDS:
        ours, theirs = (memory.get(build) or {}).get("traced"), (memory.get(ref) or {}).get("traced")
        if ours and theirs:
            out[build, ref] = r = ours / theirs
            print(f"  target: {build} / {ref} <= {limit}: {r:.2f} -> {'met' if r <= limit else 'MISSED'}")
    return out


def setting_name(threads):
    return f"pinned to {threads} thread{'s' if threads > 1 else ''}" if threads else "library defaults"


def run_setting(threads, libs, workloads, rounds, min_round, compiled_site=None):
    """Run and print every workload under one thread setting; return {(workload, build): ratio vs its
    reference}.  ``compiled_site``: where the compiled build is unpacked (see :func:`build_compiled`)."""
    env = child_env(threads)
    envs = {COMPILED: child_env(threads, compiled_site)} if compiled_site else {}
    print(f"\n== threads: {setting_name(threads)}; {_load()} ==")
    if hasattr(os, "getloadavg") and os.getloadavg()[0] >= (os.cpu_count() or 1):
        print("note: every core is busy with other work; a thread pool that waits for a descheduled thread "
              "(PyTorch on small ops, with its default threads) can take many times its quiet time")
    summary, versions, notes = {}, {}, {}
    for w in workloads:
        if w == "W5":
            for (build, _), r in report_memory(measure_memory(libs, env, envs)).items():
                summary[w, build] = r
            continue
        times, info, why = time_workload(libs, w, rounds, env, min_round, envs=envs)
        notes.update(why)
        for lib, i in info.items():
            versions[lib] = f"{i['version']}" + (f" ({i['threads']} threads)" if i["threads"] else "")
        ratios = report_times(w, times, info, rounds)
        for build in OURS_BUILDS:
            if (build, TARGETS[w][0]) in ratios:
                summary[w, build] = ratios[build, TARGETS[w][0]]
    print("versions: " + ", ".join(f"{lib} {v}" for lib, v in versions.items()) + f"; at the end, {_load()}")
    for lib, why in notes.items():
        print(f"failed {lib}: {why}")
    return summary


def report_summary(summaries):
    """One line per workload and build: its time (or memory) over the reference's, in every setting run."""
    print("\nSummary: build / reference, median [min-max] of the per-round ratios")
    print(f"  {'':4}{'build':<14}{'reference':<11}" + "".join(f"{setting_name(t):<26}" for t in summaries)
          + "target")
    rows = sorted({key for s in summaries.values() for key in s}, key=lambda k: (k[0], OURS_BUILDS.index(k[1])))
    for w, build in rows:
        cells = []
        for s in summaries.values():
            r = s.get((w, build))
            cells.append("-" if r is None else f"{r:.2f}" if isinstance(r, float) else _fmt(*r, digits=2))
        ref, limit = TARGETS[w]
        print(f"  {w:<4}{build:<14}{ref:<11}" + "".join(f"{c:<26}" for c in cells) + f"<= {limit}")


def build_compiled(into, source=ROOT):
    """Build the compiled engine (``AUTODIFF_VIZ_COMPILE=1``) of the checkout ``source`` and unpack its wheel
    under the folder ``into``; return (the unpacked folder, None), or (None, why it could not be built)."""
    env = dict(os.environ, AUTODIFF_VIZ_COMPILE="1")
    wheels = pathlib.Path(into) / "wheel"
    try:
        p = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(wheels), str(source)], capture_output=True, text=True, env=env, timeout=900)
    except subprocess.TimeoutExpired:
        return None, "building the compiled wheel took over 15 minutes"
    found = sorted(wheels.glob("autodiff_viz-*.whl"))
    if p.returncode != 0 or not found:
        # The first line that says what went wrong (a missing compiler, a mypy error), not pip's summary.
        lines = [line.strip() for line in p.stderr.splitlines() if line.strip()]
        said = [line for line in lines if "error" in line.lower() and "failed to build" not in line.lower()]
        why = (said or lines or [f"pip wheel exited with {p.returncode}"])[0]
        return None, (f"the compiled build failed: {why} (it needs a C compiler and Python's headers; the bench "
                      "extra brings mypy and setuptools)")
    site = pathlib.Path(into) / "site"
    with zipfile.ZipFile(found[0]) as wheel:
        wheel.extractall(site)
    return str(site), None


def _load():
    # Other processes' load slows every library, Python-heavy ones and thread pools most.
    return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""


def machine():
    """One line naming the machine: cores, CPU model, Python, NumPy, the date (UTC)."""
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        pass
    return (f"{os.cpu_count()} cores ({model}), {platform.system()}; python {platform.python_version()}, "
            f"numpy {np.__version__}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def profile(workload, top=25):
    """cProfile of autodiff_viz on one workload, after a warm-up, sorted by own time."""
    fn = BUILDERS[OURS](workload, _data())
    per_call, _, _ = warm_up(fn)
    n = calls_per_round(per_call, 1.0)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        fn()
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(top)
    print(f"{workload}: {n} calls after warming up, sorted by own time")
    print(s.getvalue())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", default="W1,W2,W3,W4,W5", help="comma-separated workloads")
    ap.add_argument("--libs", default=",".join([*OURS_BUILDS, *PEERS]), help="comma-separated libraries")
    ap.add_argument("--profile", metavar="W", help="profile autodiff_viz on one workload instead")
    ap.add_argument("--threads", type=int, help="run pinned to N threads only (0: the libraries' defaults only)")
    ap.add_argument("--min-round", type=float, default=MIN_ROUND, help="seconds a timed round lasts at least")
    ap.add_argument("--child", choices=["time", "memory", "profile"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # tables and stderr's progress lines in order
    workloads = [w.strip() for w in args.only.split(",")]
    if args.child == "time":
        return timing_child(args.libs, workloads[0], args.min_round)
    if args.child == "memory":
        return memory_child(args.libs)
    if args.child == "profile":
        return profile(workloads[0])
    unknown = [w for w in workloads + [args.profile or "W1"] if w not in TARGETS]
    if unknown:
        ap.error(f"unknown workload(s) {', '.join(unknown)} (known: {', '.join(TARGETS)})")
    settings = [1, None] if args.threads is None else [args.threads or None]
    if args.profile:  # in a child, so that the thread setting reaches NumPy before it loads
        p = subprocess.run([sys.executable, str(SCRIPT), "--child", "profile", "--only", args.profile],
                           env=child_env(settings[0]))
        sys.exit(p.returncode)
    libs, missing = available([lib.strip() for lib in args.libs.split(",")])
    print(machine())
    with tempfile.TemporaryDirectory(prefix="autodiff_viz_compiled_") as into:
        site = None
        if COMPILED in libs:
            print("building the compiled engine (AUTODIFF_VIZ_COMPILE=1)...", file=sys.stderr)
            site, why = build_compiled(into)
            if site is None:
                libs.remove(COMPILED)
                missing[COMPILED] = why
        for lib, why in missing.items():
            print(f"skipped {lib}: {why}")
        summaries = {t: run_setting(t, libs, workloads, args.rounds, args.min_round, site) for t in settings}
    report_summary(summaries)


if __name__ == "__main__":
    main()
