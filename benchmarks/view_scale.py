"""How the views scale with the size of a recording: animation HTML, static graphs, layouts.

    python benchmarks/view_scale.py                              # the default sizes
    python benchmarks/view_scale.py --chain 250,1000 --fan 2000
    python benchmarks/view_scale.py --fan-animate 2000,10000     # also animate the 10,000-op fan-out
    python benchmarks/view_scale.py --no-tracemalloc             # truer times, no Python peak
    python benchmarks/view_scale.py --chain '' --fan '' --fan-animate ''   # only the drawing-time rows

Workloads
  chain N   ``y = y * 1.001`` and ``y = y + 0.0`` alternating, N scalar ops, under
            ``ad.trace()`` and a ``GradientTape``, then the gradient.  Measures
            ``ad.viz.animate(tr)`` and ``.to_html()``: build time, HTML size, and
            which layout was used.
  fan N     one ``ad.Variable`` feeding every op of a chain of N ops (``y = y * v``),
            the worst case for Graphviz.  Measures
              graph    ``ad.viz.graph(tape).svg()``: a picture, or the message it gives;
              layout   the animation layout alone (``viz.draw.layout.layout``) of the same
                       graph, so that large sizes do not wait for a storyboard;
              animate  ``ad.viz.animate(tr)`` as a whole (only the sizes in ``--fan-animate``).
  graph chain N
            the chain above drawn by ``ad.viz.graph(tape)`` (``--graph-chain``): the time to
            build the graph (view model and DOT text), then ``.svg()``; past Graphviz's
            budget the picture is folded and says so.
  fan-in N  one op (``add_n``) of N inputs, one of them watched (``--fan-in``), saved
            as JSON and loaded with ``Trace.from_json`` (not timed); then every view
            of the loaded trace: ``graph(tr)`` and its SVG, ``animate(tr)`` and its HTML.

Method
  Every measurement runs in a fresh Python process (this script with ``--one``),
  so a failure, a timeout (``--timeout``) or a memory blow-up ends that row only,
  and the peak memories belong to that row alone.  The child runs under an
  address-space limit (``--memory-limit``, RLIMIT_AS on POSIX) so a runaway
  cannot take the machine.  Columns:
    time     seconds of the measured call (trace recording not included);
    py peak  tracemalloc's peak of Python allocations during the call (NumPy's
             buffers included), MiB; tracemalloc slows Python down several times, so the
             chain rows are measured without it (and every row with ``--no-tracemalloc``);
    RSS      peak resident memory of the Python process, MiB (imports included);
    dot RSS  peak resident memory of its child processes (Graphviz), MiB, from
             ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``;
    result   HTML size, SVG size, or the error's first line; the layout engine and
             its note when a layout fell back.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc

MIB = 1 << 20


def chain_trace(n):
    import autodiff_viz as ad

    x = ad.constant(1.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in range(n):
                y = y * 1.001 if i % 2 == 0 else y + 0.0
        tape.gradient(y, x)
    return tr, tape


def fan_trace(n):
    import autodiff_viz as ad

    v = ad.Variable(1.0, name="v")
    x = ad.constant(1.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n):
                y = y * v
        tape.gradient(y, [x, v])
    return tr, tape


def fan_in_trace(n):
    import autodiff_viz as ad

    xs = [ad.constant(float(i)) for i in range(n)]
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(xs[0])
            y = ad.add_n(xs)
        tape.gradient(y, xs[0])
    return ad.Trace.from_json(tr.to_json()), None


def _rss_mib(who):
    import resource

    kb = resource.getrusage(who).ru_maxrss  # KiB on Linux (bytes on macOS)
    return kb / 1024 if sys.platform != "darwin" else kb / MIB


def _layout_note(lay):
    if not lay:
        return ""
    note = f"layout {lay.get('engine')}"
    if lay.get("note"):
        note += f" ({lay['note']})"
    return note


def measure(kind, n, trace_memory):
    """One row, in this process; returns a dict."""
    import resource

    import autodiff_viz as ad

    make = {"chain": chain_trace, "graph-chain": chain_trace, "fan-in": fan_in_trace}.get(kind, fan_trace)
    tr, tape = make(n)
    row = {"kind": kind, "n": n}
    if trace_memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    try:
        if kind == "chain":
            anim = ad.viz.animate(tr)
            built = time.perf_counter() - t0
            html = anim.to_html()
            row["result"] = (f"{len(html.encode('utf-8')) / 1e6:.2f} MB HTML (animate {built:.2f} s, to_html "
                             f"{time.perf_counter() - t0 - built:.2f} s); " + _layout_note(anim.data.get("layout")))
        elif kind == "graph":
            svg = ad.viz.graph(tape).svg()
            row["result"] = f"SVG {len(svg) / 1e3:,.0f} kB"
        elif kind == "graph-chain":
            g = ad.viz.graph(tape)
            built = time.perf_counter() - t0
            row["result"] = f"graph() {built:.2f} s, {len(g.model.nodes):,} boxes; "
            svg = g.svg()
            row["result"] += f"svg() {time.perf_counter() - t0 - built:.2f} s, SVG {len(svg) / 1e3:,.0f} kB"
            if "folded" in svg:
                row["result"] += " (folded, with a note)"
        elif kind == "fan-in":
            times = []
            g = ad.viz.graph(tr)
            times.append(time.perf_counter() - t0)
            svg = g.svg()
            times.append(time.perf_counter() - t0)
            anim = ad.viz.animate(tr)
            times.append(time.perf_counter() - t0)
            html = anim.to_html()
            times.append(time.perf_counter() - t0)
            steps = [b - a for a, b in zip([0.0] + times, times)]
            row["result"] = (f"graph() {steps[0]:.2f} s, svg() {steps[1]:.2f} s ({len(svg) / 1e3:,.0f} kB), "
                             f"animate() {steps[2]:.2f} s, to_html() {steps[3]:.2f} s "
                             f"({len(html.encode('utf-8')) / 1e6:.1f} MB); " + _layout_note(anim.data.get("layout")))
        elif kind == "layout":
            from autodiff_viz.viz.draw import layout as _layout

            model = ad.viz.graph(tape).model
            story = {"nodes": [{"id": str(nd.id)} for nd in model.nodes],
                     "edges": [{"id": f"e{i}", "from": str(e.src), "to": str(e.dst)}
                               for i, e in enumerate(model.edges)]}
            row["result"] = f"{len(story['nodes']):,} boxes; " + _layout_note(_layout.layout(story))
        elif kind == "animate":
            anim = ad.viz.animate(tr)
            row["result"] = f"{len(anim)} steps; " + _layout_note(anim.data.get("layout"))
    except Exception as e:  # noqa: BLE001  (a row reports what went wrong and the others go on)
        row["result"] = (row.get("result", "") if kind == "graph-chain" else "") + \
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    row["time_s"] = time.perf_counter() - t0
    if trace_memory:
        row["py_peak_mib"] = tracemalloc.get_traced_memory()[1] / MIB
        tracemalloc.stop()
    row["rss_mib"] = _rss_mib(resource.RUSAGE_SELF)
    row["dot_rss_mib"] = _rss_mib(resource.RUSAGE_CHILDREN)
    return row


def _limit_memory(mib):
    def preexec():
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (mib * MIB, mib * MIB))
        except (ImportError, ValueError, OSError):
            pass
    return preexec if mib and sys.platform != "win32" else None


def run_child(kind, n, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--one", kind, str(n)]
    if kind in ("chain", "graph-chain", "fan-in") or args.no_tracemalloc:
        cmd.append("--no-tracemalloc")
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                           preexec_fn=_limit_memory(args.memory_limit))
    except subprocess.TimeoutExpired:
        return {"kind": kind, "n": n, "time_s": time.perf_counter() - t0,
                "result": f"stopped after {args.timeout:g} s (--timeout)"}
    lines = p.stdout.strip().splitlines()
    if p.returncode == 0 and lines:
        return json.loads(lines[-1])
    err = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
    return {"kind": kind, "n": n, "time_s": time.perf_counter() - t0,
            "result": f"failed ({err[:150]}; --memory-limit is {args.memory_limit} MiB)"}


def _sizes(text):
    return [int(s) for s in text.split(",") if s.strip()]


def _fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-".rjust(int(spec.split(".")[0]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chain", default="250,1000,2000", help="chain sizes to animate (ops, comma-separated)")
    ap.add_argument("--fan", default="2000,10000", help="fan-out sizes for graph().svg() and the layout")
    ap.add_argument("--fan-animate", default="2000",
                    help="fan-out sizes to animate as a whole ('' for none; 10,000 may take minutes and GBs)")
    ap.add_argument("--graph-chain", default="2000,10000,20000",
                    help="chain sizes to draw with graph() (ops, comma-separated)")
    ap.add_argument("--fan-in", default="100000", help="inputs of the one op of the fan-in, drawn and animated")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per measurement")
    ap.add_argument("--memory-limit", type=int, default=8192, help="MiB of address space per measurement")
    ap.add_argument("--one", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--no-tracemalloc", action="store_true",
                    help="time the fan-out rows without tracemalloc (no 'py peak' column, truer times)")
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), not args.no_tracemalloc)))
        return
    print(f"{'workload':<20}{'time s':>9}{'py peak':>9}{'RSS':>8}{'dot RSS':>9}  result (memory in MiB)")
    jobs = ([("chain", n) for n in _sizes(args.chain)]
            + [(k, n) for n in _sizes(args.fan) for k in ("graph", "layout")]
            + [("animate", n) for n in _sizes(args.fan_animate)]
            + [("graph-chain", n) for n in _sizes(args.graph_chain)]
            + [("fan-in", n) for n in _sizes(args.fan_in)])
    for kind, n in jobs:
        r = run_child(kind, n, args)
        name = {"chain": f"chain {n} animate", "graph-chain": f"chain {n} graph",
                "fan-in": f"fan-in {n}"}.get(kind, f"fan {n} {kind}")
        print(f"{name:<20}{_fmt(r.get('time_s'), '9.2f')}{_fmt(r.get('py_peak_mib'), '9.0f')}"
              f"{_fmt(r.get('rss_mib'), '8.0f')}{_fmt(r.get('dot_rss_mib'), '9.0f')}  {r['result']}", flush=True)


if __name__ == "__main__":
    main()
