"""Memory an open ``ad.trace()`` holds per recorded op and per backward step, measured with tracemalloc.

A chain ``y = tanh(y) * 1.01 + y * 0.5`` (4 ops a step) runs under a tape,
then ``tape.gradient`` (one backward step per op), inside ``with ad.trace()
as tr:``; measured before the trace is read (small values' announcements
still wait as records and raw values) and after (``tr.events``: every
announcement has become its event).  The bytes still allocated while the
trace and its tape live, less the same work's without a trace, divided by
the ops recorded, is the trace's cost: per op (the forward pass alone: its
op events and their summaries) and per backward step (what the gradient adds:
the backward-step and accumulate events), and both together.

Two chains: on a scalar, and on 1,000 float32 values (an event keeps a
summary of a large value, never the array); each with and without
``keep_tensors=True`` (which also keeps every op's output alive).

    python benchmarks/trace_memory.py [--steps 500]
"""
from __future__ import annotations

import argparse
import gc
import tracemalloc

import numpy as np

import autodiff_viz as ad

OPS_PER_STEP = 4  # Tanh, Mul, Mul, Add


def _chain(x, steps, backward=True):
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(steps):
            y = ad.tanh(y) * 1.01 + y * 0.5
    return tape, (tape.gradient(y, x) if backward else y)


def held_bytes(x, steps, traced, keep_tensors=False, read=True, backward=True) -> int:
    """Bytes allocated by the chain (and its trace, read or not) that are still held afterwards."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    if traced:
        with ad.trace(keep_tensors=keep_tensors) as tr:
            kept = _chain(x, steps, backward)
        kept = (kept, tr, len(tr.events) if read else None)
    else:
        kept = _chain(x, steps, backward)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del kept
    return held


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=500)
    args = ap.parse_args(argv)
    ops = args.steps * OPS_PER_STEP
    print(f"bytes an open trace holds ({ops} ops, each with one backward step)")
    for label, value in (("scalar", np.float32(0.3)), ("1000 values", np.linspace(-1, 1, 1000, dtype=np.float32))):
        x = ad.constant(value)
        _chain(x, 5)  # (first calls fill the engine's caches: not the trace's memory)
        base = {b: held_bytes(x, args.steps, traced=False, backward=b) for b in (False, True)}
        for keep, read in ((False, False), (False, True), (True, True)):
            extra = {b: held_bytes(x, args.steps, traced=True, keep_tensors=keep, read=read, backward=b) - base[b]
                     for b in (False, True)}
            print(f"{label:11s} keep_tensors={keep!s:5s} {'read' if read else 'unread':6s}: "
                  f"{extra[False] / ops:6.0f} per op, {(extra[True] - extra[False]) / ops:6.0f} per backward step, "
                  f"{extra[True] / ops:6.0f} both ({(base[True] + extra[True]) / 1e6:.1f} MB with the trace, "
                  f"{base[True] / 1e6:.2f} MB without)")


if __name__ == "__main__":
    main()
