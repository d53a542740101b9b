"""``autodiff-viz``: draw or animate the tapes of a Python script, or render the built-in tour.

    autodiff-viz graph script.py -o out.png            one file per tape: out-T1.png, out-T2.png...
    autodiff-viz graph script.py -o out.svg --tape 2   only tape T2
    autodiff-viz animate script.py -o steps.gif        the forward and backward passes, step by step
                                                       (.gif, .html: a self-contained player, .mp4)
    autodiff-viz tour OUTDIR [--format svg]            the guides' examples as pictures
"""
from __future__ import annotations

import argparse
import pathlib
import runpy
import sys
import traceback

FORMATS = ("png", "svg", "pdf", "dot")


class _Stop(Exception):
    """The command cannot go on; the message was printed, ``code`` is the exit status."""

    def __init__(self, code):
        self.code = code


def _fail(message, code):
    print(f"autodiff-viz: {message}", file=sys.stderr)
    raise _Stop(code)


def _run_script(args):
    """Run the script under a trace; its trace and tapes, or a printed reason to stop."""
    from ._recording import trace

    script = pathlib.Path(args.script)
    if not script.is_file():
        _fail(f"no such script: {script}", 2)
    old_argv = sys.argv
    sys.argv = [str(script), *args.script_args]
    failed = None
    try:
        with trace() as tr:
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as e:  # sys.exit() or sys.exit(0) ends the script normally
                if e.code not in (None, 0):
                    failed = e
            except Exception as e:
                failed = e
    finally:
        sys.argv = old_argv
    if failed is not None:
        # the script's own traceback, without the frames of this command and of runpy
        tb = failed.__traceback__
        while tb is not None and pathlib.Path(tb.tb_frame.f_code.co_filename) != script:
            tb = tb.tb_next
        traceback.print_exception(type(failed), failed, tb or failed.__traceback__, file=sys.stderr)
        _fail(f"{script} stopped with {type(failed).__name__}: {failed}; nothing was drawn", 1)
    tapes = tr.tapes()
    if not tapes:
        _fail("the script recorded nothing on a GradientTape", 1)
    if args.tape is not None and not 1 <= args.tape <= len(tapes):
        _fail(f"--tape {args.tape}: the script used {len(tapes)} tape(s), T1..T{len(tapes)}", 2)
    return script, tr, tapes


def _graph_command(args) -> int:
    from . import viz

    script = pathlib.Path(args.script)
    out = pathlib.Path(args.output) if args.output else script.with_suffix("." + (args.format or "png"))
    fmt = args.format or out.suffix.lstrip(".").lower() or "png"
    if fmt not in FORMATS:
        _fail(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})", 2)
    script, tr, tapes = _run_script(args)
    if args.tape is not None:
        chosen = [args.tape]
    elif args.all_in_one:
        chosen = [None]
    else:
        chosen = list(range(1, len(tapes) + 1))
    stem = out.with_suffix("")
    for number in chosen:
        g = viz.graph(tr, tape=number, collapse=args.collapse or False)
        path = out if len(chosen) == 1 else pathlib.Path(f"{stem}-T{number}.{fmt}")
        path = path.with_suffix("." + fmt)
        g.save(path, format=fmt)
        print(path)
    return 0


MOVIES = ("gif", "html", "mp4")


def _animate_command(args) -> int:
    from . import events, viz

    script = pathlib.Path(args.script)
    out = pathlib.Path(args.output) if args.output else script.with_suffix(".gif")
    fmt = out.suffix.lstrip(".").lower()
    if fmt not in MOVIES:
        _fail(f"unknown animation format {fmt!r}: name the output .gif, .html or .mp4", 2)
    script, tr, tapes = _run_script(args)
    source = tr
    if args.tape is not None:  # that tape's events only: its forward ops and its backward pass
        raw = tapes[args.tape - 1]
        source = events.Trace([e for e in tr.events if e.tape == raw])
    anim = viz.animate(source, title=args.title, rankdir=args.rankdir)
    print(anim.save(out, fps=args.fps))
    return 0


def _tour_command(args) -> int:
    from .tour import EXAMPLES, run_tour

    only = args.only or None
    if only:
        unknown = [n for n in only if n not in EXAMPLES]
        if unknown:
            print(f"autodiff-viz: unknown example(s) {unknown}; choose from {', '.join(EXAMPLES)}", file=sys.stderr)
            return 2
    for path in run_tour(args.outdir, formats=tuple(args.format), only=only):
        print(path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autodiff-viz", description="Pictures of what GradientTape recorded.")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("graph", help="run a Python script and draw the graphs of its tapes")
    g.add_argument("script")
    g.add_argument("script_args", nargs="*", help="arguments passed to the script (after --)")
    g.add_argument("-o", "--output", help="output file (default: SCRIPT.png); several tapes add -T1, -T2...")
    g.add_argument("--format", choices=FORMATS, help="file format (default: from the output's extension)")
    g.add_argument("--tape", type=int, help="only tape N (T1 is the first tape the script used)")
    g.add_argument("--all-in-one", action="store_true", help="all tapes in one picture")
    g.add_argument("--collapse", nargs="*", metavar="SCOPE",
                   help="fold name scopes into boxes (all of them, or the ones named)")
    g.set_defaults(run=_graph_command)
    a = sub.add_parser("animate", help="run a Python script and animate its forward and backward passes")
    a.add_argument("script")
    a.add_argument("script_args", nargs="*", help="arguments passed to the script (after --)")
    a.add_argument("-o", "--output", help="output file: .gif (default), .html (a self-contained player) or .mp4")
    a.add_argument("--tape", type=int, help="only tape N (default: every tape, nested ones included)")
    a.add_argument("--fps", type=float, default=1.0, help="frames (steps) per second for .gif and .mp4")
    a.add_argument("--title", help="the title above the animation")
    a.add_argument("--rankdir", choices=("auto", "LR", "TB"), default="auto", help="layout direction")
    a.set_defaults(run=_animate_command)
    t = sub.add_parser("tour", help="render the built-in examples into OUTDIR")
    t.add_argument("outdir")
    t.add_argument("--format", nargs="+", choices=FORMATS, default=["png"])
    t.add_argument("--only", nargs="+", metavar="NAME", help="only these examples")
    t.set_defaults(run=_tour_command)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "collapse", None) == []:
        args.collapse = True
    try:
        return args.run(args)
    except _Stop as stop:
        return stop.code


if __name__ == "__main__":
    sys.exit(main())
