"""Time to write an animation as GIF and MP4 frames (``Animation.save``), seconds per frame.

    python benchmarks/frames.py                     # chain of 36 ops (75 frames), GIF and MP4
    python benchmarks/frames.py --ops 12 --only gif
    python benchmarks/frames.py --profile gif       # cProfile of one save, the top 25 functions

Workloads
  chain N   ``y = x``, then N scalar ops alternating ``y * 1.1`` and ``sin(y)``, under
            ``ad.trace()`` and a ``GradientTape``, then the gradient: 2N + 3 steps.
  sum-rule  the tour's ``z = x·y + sin(x)`` (``tour.animation_sum_rule``), 10 steps.

Method
  The animation (trace, storyboard, layout) is built first and not timed; each
  row times one ``save`` (figure set-up, drawing, encoding, writing) at the tour's
  settings (``fps=1, dpi=80``) and at the default ``dpi=100``, and divides by the
  number of frames: wall-clock seconds, and CPU seconds of this process and its
  children (ffmpeg), which a busy machine disturbs less.  Imports are warmed up
  first (one tiny GIF).  Frame sizes in pixels are read back from the file.  One
  run per row: on a shared machine, compare rows of the same run.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import tempfile
import time

import autodiff_viz as ad
from autodiff_viz import tour


def chain(n: int):
    """The animation of an ``n``-op scalar chain (``* 1.1`` and ``sin`` alternating)."""
    x = ad.constant(0.5)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in range(n):
                y = ad.sin(y) if i % 2 else y * 1.1
        tape.gradient(y, x)
    return ad.viz.animate(tr, names={"x": x})


def cpu_seconds() -> float:
    """CPU time so far of this process and its finished children (ffmpeg)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def frame_size(path: str) -> str:
    if path.endswith(".gif"):
        from PIL import Image

        with Image.open(path) as im:
            return f"{im.width}×{im.height}"
    return "-"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", type=int, default=36, help="ops in the chain (default 36: 75 frames)")
    ap.add_argument("--only", default="gif,mp4", help="formats, comma-separated (gif, mp4)")
    ap.add_argument("--dpi", default="80,100", help="dpi values, comma-separated")
    ap.add_argument("--profile", choices=["gif", "mp4"], help="profile one save of the chain instead")
    args = ap.parse_args(argv)
    cases = [(f"chain {args.ops}", chain(args.ops)), ("sum-rule", tour.animation_sum_rule())]
    with tempfile.TemporaryDirectory() as tmp:
        chain(1).save(os.path.join(tmp, "warm.gif"), dpi=20)  # imports, fonts
        if args.profile:
            path = os.path.join(tmp, "a." + args.profile)
            prof = cProfile.Profile()
            prof.runcall(cases[0][1].save, path, fps=1.0, dpi=80)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
            return
        print(f"{'workload':<10} {'frames':>6} {'fmt':>4} {'dpi':>4} {'seconds':>8} {'s/frame':>8} {'cpu s':>7} "
              f"{'cpu/frame':>9} {'size':>10}")
        for name, anim in cases:
            for fmt in args.only.split(","):
                for dpi in (int(d) for d in args.dpi.split(",")):
                    path = os.path.join(tmp, f"a.{fmt}")
                    c0, t0 = cpu_seconds(), time.perf_counter()
                    anim.save(path, fps=1.0, dpi=dpi)
                    dt, dc = time.perf_counter() - t0, cpu_seconds() - c0
                    print(f"{name:<10} {len(anim):>6} {fmt:>4} {dpi:>4} {dt:>8.2f} {dt / len(anim):>8.3f} {dc:>7.2f} "
                          f"{dc / len(anim):>9.3f} {frame_size(path):>10}", flush=True)


if __name__ == "__main__":
    main()
