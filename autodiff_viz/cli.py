"""``autodiff-viz``: draw or animate the tapes of a Python script, or render the built-in tour.

    autodiff-viz graph script.py -o out.png            one file per tape: out-T1.png, out-T2.png...
    autodiff-viz graph script.py -o out.svg --tape 2   only tape T2
    autodiff-viz animate script.py -o steps.gif        the forward and backward passes, step by step
                                                       (.gif, .html: a self-contained player, .mp4)
    autodiff-viz animate script.py -o DIR --steps 3,5  steps 3 and 5 as DIR/step-3.png... (--format svg)
    autodiff-viz tour OUTDIR [--format svg]            the guides' examples as pictures
    autodiff-viz lessons OUTDIR                        the tutorial notebooks, run, as a static web site
    autodiff-viz notebooks DIR                         the tutorials and exercises, copied to open in Jupyter
    autodiff-viz --version                             the version, and whether this install is the compiled build

The script runs in a child process under ``ad.trace()``; it hands the trace
back as JSON, which a second child loads with ``Trace.load`` (so a script
cannot hand over anything but events) and draws, with the names the script's
module variables give its tensors (``loss``, ``w``) on the boxes.  One time
limit (``--timeout``) covers the script and the drawing together; each child
runs under the memory limit (``--memory-limit``) in a process group of its
own, which is killed whole when it ends or runs out of time (so nothing the
script started outlives the command).  The script's standard input is empty
(``input()`` sees the end of the file).  Arguments after ``--`` go to the
script, wherever ``--`` stands.

The command never writes over what the run read: an output that is the
script, a file named among the script's arguments, or any file the script
opened for reading (the child notes them with an audit hook) is refused with
one line, and nothing is written.

Every failure prints one line ``autodiff-viz: ...`` on standard error (after
the script's own traceback when the script raised) and exits non-zero: 1 when
the script or the drawing failed, 2 for a wrong command line, 130 when
interrupted.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import runpy
import signal
import subprocess
import sys
import tempfile
import time
import traceback

FORMATS = ("png", "svg", "pdf", "dot")
MOVIES = ("gif", "html", "mp4")

# A lesson's script records in well under a second, and starting Python with NumPy
# takes a second or two; two minutes leaves room for a slow machine or a small
# training loop, yet a script stuck in a loop ends while someone still waits for it.
DEFAULT_TIMEOUT_S = 120.0
# Memory the script may take beyond what Python, NumPy and autodiff_viz hold when it
# starts (RLIMIT_AS, POSIX only): far more than a traced lesson needs (a trace keeps
# summaries, not arrays), less than an ordinary laptop has, so a runaway allocation
# ends with MemoryError instead of swapping the machine to a halt.  0: no limit
# (needed for the CuPy backend: CUDA reserves a large address space).
DEFAULT_MEMORY_MIB = 4096
# Events the script's trace keeps (later ones are dropped with a warning): no graph
# or animation of more is readable, and the trace file stays under about 100 MB.
MAX_EVENTS = 100_000
# The largest trace file this process reads back (well above MAX_EVENTS events).
MAX_TRACE_BYTES = 256 * 2 ** 20
MAX_FPS = 100  # a GIF frame lasts at least 1/100 s
# The script's own names for its tensors (its module variables) come back beside the trace.
MAX_NAMES = 10_000
MAX_NAMES_BYTES = 4 * 2 ** 20
# Files the script opened for reading that the child reports (an output may be none of them).
MAX_READS = 100_000

# How a child starts: import this copy of the package (whatever the current directory), then record
# the script (``_record``) or draw its trace (``_draw``).
_BOOT = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import autodiff_viz.cli as c; del sys.path[0]; "
         "sys.exit(c._child_main(sys.argv[1:]))")


class _Stop(Exception):
    """The command cannot go on; the message was printed, ``code`` is the exit status."""

    def __init__(self, code):
        self.code = code


def _one_line(text, limit=300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _fail(message, code):
    print(f"autodiff-viz: {_one_line(message, 1000)}", file=sys.stderr)
    raise _Stop(code)


# ---------------------------------------------------------------------------
# Argument types: a wrong value is argparse's one-line error and exit status 2
# ---------------------------------------------------------------------------
def _number(text, what):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}: expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{what}: expected a finite number, got {text!r}")
    return value


def _fps(text):
    value = _number(text, "frames per second")
    if not 0 < value <= MAX_FPS:
        raise argparse.ArgumentTypeError(f"frames per second must be above 0 and at most {MAX_FPS}, got {text}")
    return value


def _timeout(text):
    value = _number(text, "seconds")
    if not 0 < value <= 7 * 24 * 3600:
        raise argparse.ArgumentTypeError(f"the timeout must be above 0 and at most a week (604800 s), got {text}")
    return value


def _memory(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of MiB (0: no limit), got {text!r}") from None
    if not 0 <= value <= 2 ** 40:
        raise argparse.ArgumentTypeError(f"the memory limit is between 0 (no limit) and 2**40 MiB, got {text}")
    return value


def _tape(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a tape number (1 for T1), got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"tapes are numbered from 1 (T1), got {text}")
    return value


# ---------------------------------------------------------------------------
# The child: runs the script under a trace and writes what happened
# ---------------------------------------------------------------------------
def _vm_bytes() -> int:
    """The address space this process maps now (0 where /proc cannot tell)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _limit_memory(mib):
    """Cap the address space at what is mapped now plus ``mib`` MiB; the old soft limit, to restore."""
    try:
        import resource
    except ImportError:  # not POSIX: no limit
        return None
    if not mib:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = _vm_bytes() + mib * 2 ** 20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY and soft <= want:
        return None  # already tighter
    try:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):
        return None
    return soft


def _unlimit_memory(old_soft):
    if old_soft is None:
        return
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (old_soft, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ValueError, OSError):
        pass


def _write_json(path, data):
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def _child_main(argv) -> int:
    """A child's entry point: ``_record ...`` (see :func:`_record_main`) or ``_draw ...`` (:func:`_draw_main`)."""
    what, *rest = argv
    return _record_main(rest) if what == "_record" else _draw_main(rest)


def _note_reads(limit=MAX_READS) -> set:
    """Note, from now on, the absolute path of every file this process opens other than write-only.

    An audit hook (it stays for the life of the process, which is the
    script's own); returns the set it fills, at most ``limit`` paths.
    """
    seen: set = set()
    wronly = getattr(os, "O_WRONLY", 1)
    accmode = getattr(os, "O_ACCMODE", 3)

    def hook(event, args):
        if event != "open" or len(seen) >= limit or not args:
            return
        try:  # never let the record-keeping break the script's own open()
            path = args[0]
            flags = args[2] if len(args) > 2 else None
            if isinstance(path, int) or (isinstance(flags, int) and flags & accmode == wronly):
                return
            seen.add(os.path.abspath(os.fsdecode(path)))
        except Exception:  # noqa: BLE001
            pass

    sys.addaudithook(hook)
    return seen


def _record_main(argv) -> int:
    """The recording child's side: ``OUTDIR MEMORY_MIB SCRIPT [ARGS...]``.

    Writes ``OUTDIR/trace.json`` (the trace), ``names.json``, ``read.json``
    (the files the script opened for reading) and then ``OUTDIR/status.json``:
    ``{"code": 0}`` or ``{"code": N, "message": "..."}``.  The parent prints
    the message; this side prints only the script's own output and traceback.
    """
    outdir, mib, script, *script_args = argv
    outdir, mib, script = pathlib.Path(outdir), int(mib), pathlib.Path(script)
    status = {"code": 1, "message": f"could not record {script}"}
    old_soft = None
    try:
        import warnings

        from ._recording import trace

        # a full trace is reported by the parent, in the command's words
        warnings.filterwarnings("ignore", message=r"ad\.trace\(max_events=", category=RuntimeWarning)

        here = str(script.resolve().parent)  # first on the path, as `python script.py` puts it
        if sys.path and sys.path[0] == "":
            sys.path[0] = here
        else:
            sys.path.insert(0, here)
        sys.argv = [str(script), *script_args]
        old_soft = _limit_memory(mib)
        failed = None
        namespace: dict = {}
        reads = _note_reads()
        with trace(max_events=MAX_EVENTS) as tr:
            try:
                namespace = runpy.run_path(str(script), run_name="__main__")
            except SystemExit as e:  # sys.exit() or sys.exit(0) ends the script normally
                if e.code not in (None, 0):
                    failed = e
            except BaseException as e:  # noqa: BLE001 - whatever the script raises is reported
                failed = e
        if failed is None:
            (outdir / "trace.json").write_text(tr.to_json(), encoding="utf-8")
            _write_json(outdir / "names.json", _script_names(namespace))
            _write_json(outdir / "read.json", sorted(reads))
            status = {"code": 0, "dropped": tr.dropped}
        else:
            del tr
            status = _verdict(failed, script, mib)
    except MemoryError:
        status = {"code": 1, "message": f"{script}: its trace did not fit in memory ({_limit_text(mib)}); "
                                        "nothing was drawn"}
    except KeyboardInterrupt:
        status = {"code": 130, "message": f"{script} was interrupted; nothing was drawn"}
    except BaseException as e:  # noqa: BLE001 - the parent turns it into one line
        status = {"code": 1, "message": f"could not record {script}: {type(e).__name__}: {_one_line(e)}"}
    finally:
        _unlimit_memory(old_soft)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        _write_json(outdir / "status.json", status)
    return 0


def _script_names(namespace) -> dict:
    """``{tensor id: name}`` for the tensors the script's module variables hold (as ``graph()`` finds them)."""
    from .viz.model.source import names_in

    try:
        found = names_in([namespace])
    except Exception:  # noqa: BLE001 - a script's odd objects never stop the drawing; it is drawn unnamed
        return {}
    return {str(k): v for k, v in list(found.items())[:MAX_NAMES]}


def _read_names(path) -> dict:
    """The child's names, checked: ``{int id: str}``, at most MAX_NAMES, each cut to a label's length."""
    from .viz.text import labels as _labels

    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(MAX_NAMES_BYTES))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {int(k): _labels.shorten(v, _labels.TOOLTIP_LIMIT) for k, v in list(data.items())[:MAX_NAMES]
            if isinstance(k, str) and k.isdigit() and len(k) < 20 and isinstance(v, str)}


def _limit_text(mib):
    return f"--memory-limit {mib} MiB" if mib else "no --memory-limit"


def _verdict(failed, script, mib) -> dict:
    """What the parent says about an exception of the script (its traceback is printed here)."""
    if isinstance(failed, KeyboardInterrupt):
        return {"code": 130, "message": f"{script} was interrupted (KeyboardInterrupt); nothing was drawn"}
    if isinstance(failed, MemoryError):
        return {"code": 1, "message": f"{script} ran out of memory (MemoryError, {_limit_text(mib)}); "
                                      "nothing was drawn"}
    # the script's own traceback, without the frames of this command and of runpy
    tb = failed.__traceback__
    while tb is not None and pathlib.Path(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    try:
        if tb is None and isinstance(failed, SyntaxError):  # it never ran: the file and line are the whole story
            traceback.print_exception(type(failed), failed, None, file=sys.stderr)
        else:
            traceback.print_exception(type(failed), failed, tb or failed.__traceback__, file=sys.stderr)
    except Exception:  # noqa: BLE001 - a broken __str__ must not hide the verdict
        pass
    try:
        text = _one_line(failed)
    except Exception:  # noqa: BLE001
        text = "(its message could not be shown)"
    return {"code": 1, "message": f"{script} stopped with {type(failed).__name__}: {text}; nothing was drawn"}


# ---------------------------------------------------------------------------
# The parent: runs the child with a time limit, reads the trace back
# ---------------------------------------------------------------------------
def _kill_group(pid):
    """Kill a process group (a child started in a session of its own, and whatever it started)."""
    if os.name != "posix":  # pragma: no cover - Windows: the child alone is killed by the caller
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill(proc):
    """Kill the child and everything it started (its process group), then reap it."""
    _kill_group(proc.pid)
    if os.name != "posix":  # pragma: no cover
        proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process in uninterruptible sleep
        pass


def _read_status(path):
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(1 << 16))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or type(data.get("code")) is not int:
        return None
    return data


def _died(who, code, mib, what="nothing was drawn", handing="a trace"):
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = f" (out of memory? {_limit_text(mib)})" if -code in (signal.SIGKILL, signal.SIGSEGV) else ""
        return f"{who} was killed by {name}{hint}; {what}"
    return f"{who} ended without handing back {handing} (exit status {code}); {what}"


def _child(cmd, deadline, timeout, on_timeout, on_interrupt):
    """Run a child in a process group of its own until it ends or ``deadline``; its exit status.

    Whatever the child started is killed with its group when it ends, so no
    process of the script outlives the command.
    """
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=os.name == "posix")
    except OSError as e:
        _fail(f"could not start Python: {e}", 1)
    try:
        code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill(proc)
        _fail(f"{on_timeout} within {timeout:g} s (--timeout); nothing was drawn", 1)
    except KeyboardInterrupt:
        _kill(proc)
        _fail(f"interrupted while {on_interrupt}; nothing was drawn", 130)
    _kill_group(proc.pid)  # what it left running (a forked grandchild)
    return code


def _identity(path):
    """``(device, inode)`` of an existing file (links followed), else None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _given_inputs(args) -> list:
    """The files the command line names as the run's inputs: the script, and script arguments that are files."""
    found = [str(args.script)]
    for a in getattr(args, "script_args", ()):
        for part in (a, a.partition("=")[2]):  # `data.csv` and `--data=data.csv`
            if part and os.path.isfile(part):
                found.append(part)
    return found


def _refuse_input(out, inputs):
    """Stop, with one line, when writing ``out`` would write over one of ``inputs`` (the same file)."""
    me = _identity(out)
    if me is None:
        return
    for path in inputs:
        if _identity(path) == me:
            same = "" if os.path.abspath(path) == os.path.abspath(out) else f" (the same file as {path})"
            _fail(f"will not write {out}: it is an input of this run{same}; name another output", 2)


def _run(args, outputs):
    """Run the script in a child under a trace, then draw in a second child; within one --timeout.

    ``outputs``: the output paths known before the script runs (refused
    before it runs when they are inputs).  Returns the drawing's exit status.
    """
    deadline = time.monotonic() + args.timeout
    script = pathlib.Path(args.script)
    if not script.is_file():
        _fail(f"no such script: {script}", 2)
    for out in outputs:
        _refuse_input(out, _given_inputs(args))
    if not sys.executable:
        _fail("cannot find the Python interpreter to run the script with", 1)
    package_parent = str(pathlib.Path(__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory(prefix="autodiff-viz-") as tmp:
        tmp = pathlib.Path(tmp)
        boot = [sys.executable, "-c", _BOOT, package_parent]
        code = _child([*boot, "_record", str(tmp), str(args.memory_limit), str(script), *args.script_args],
                      deadline, args.timeout, f"{script} did not finish", f"{script} ran")
        status = _read_status(tmp / "status.json")
        if status is None:
            _fail(_died(script, code, args.memory_limit), 1)
        if status["code"] != 0:
            _fail(str(status.get("message") or f"{script} failed"), status["code"] if status["code"] > 0 else 1)
        dropped = status.get("dropped")
        if type(dropped) is int and dropped > 0:
            print(f"autodiff-viz: note: the trace kept the first {MAX_EVENTS:,} events of {script}; "
                  f"{dropped:,} later ones are not drawn", file=sys.stderr)
        settings = {k: v for k, v in vars(args).items() if k != "run"}
        _write_json(tmp / "args.json", {"args": settings, "inputs": _given_inputs(args)})
        sys.stdout.flush()
        code = _child([*boot, "_draw", str(tmp), str(args.memory_limit)], deadline, args.timeout,
                      f"{script} and its drawing did not finish", f"{script} was drawn")
        done = _read_status(tmp / "drawn.json")
        if done is None:
            _fail(_died(f"the drawing of {script}", code, args.memory_limit, "it was not finished",
                        "its status"), 1)
        return done["code"]


# ---------------------------------------------------------------------------
# The drawing child: loads the trace with the checked loader and writes the pictures
# ---------------------------------------------------------------------------
def _draw_main(argv) -> int:
    """The drawing child's side: ``WORKDIR MEMORY_MIB``; writes ``WORKDIR/drawn.json`` ``{"code": N}``.

    Prints the paths it wrote, or one line ``autodiff-viz: ...`` (as
    :func:`main` does), within the same memory limit as the script.
    """
    workdir, mib = pathlib.Path(argv[0]), int(argv[1])
    code = 1
    old_soft = None
    try:
        from . import viz  # noqa: F401  (imported before the limit: it is the drawing's, not the trace's)

        setup = json.loads((workdir / "args.json").read_text(encoding="utf-8"))
        args = argparse.Namespace(**setup["args"])
        old_soft = _limit_memory(mib)
        code = _guarded(lambda: _DRAW[args.command](args, workdir, setup["inputs"]))
    finally:
        _unlimit_memory(old_soft)
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        _write_json(workdir / "drawn.json", {"code": code})
    return code


def _load(workdir, args):
    """The trace the script's child wrote, read with the checked loader; ``(script, trace, tapes, names)``."""
    from .events import TraceFormatError
    from .traces import Trace

    script = pathlib.Path(args.script)
    path = workdir / "trace.json"
    try:
        if path.stat().st_size > MAX_TRACE_BYTES:
            _fail(f"the trace of {script} is larger than {MAX_TRACE_BYTES // 2 ** 20} MiB; record fewer steps", 1)
        tr = Trace.load(path, max_chars=MAX_TRACE_BYTES)
    except (OSError, TraceFormatError) as e:
        _fail(f"could not read the trace of {script}: {e}", 1)
    names = _read_names(workdir / "names.json")
    tapes = tr.tapes()
    if not tapes:
        _fail("the script recorded nothing on a GradientTape", 1)
    if args.tape is not None and not 1 <= args.tape <= len(tapes):
        _fail(f"--tape {args.tape}: the script used {len(tapes)} tape(s), T1..T{len(tapes)}", 2)
    return script, tr, tapes, names


def _read_inputs(workdir, given) -> list:
    """The files the run read: those the command line names and those the script's child reported."""
    try:
        with open(workdir / "read.json", "rb") as f:
            reported = json.loads(f.read(64 * 2 ** 20))
    except (OSError, ValueError):
        reported = []
    if not isinstance(reported, list):
        reported = []
    return list(given) + [p for p in reported[:MAX_READS] if isinstance(p, str)]


def _graph_output(args):
    """``(output path, format)`` of ``graph``, checked before anything runs."""
    script = pathlib.Path(args.script)
    out = pathlib.Path(args.output) if args.output else script.with_suffix("." + (args.format or "png"))
    fmt = args.format or out.suffix.lstrip(".").lower() or "png"
    if fmt not in FORMATS:
        _fail(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})", 2)
    return out, fmt


def _animate_output(args):
    script = pathlib.Path(args.script)
    out = pathlib.Path(args.output) if args.output else script.with_suffix(".gif")
    fmt = out.suffix.lstrip(".").lower()
    if fmt not in MOVIES:
        _fail(f"unknown animation format {fmt!r}: name the output .gif, .html or .mp4", 2)
    return out, fmt


def _check_output(out: pathlib.Path, several=False):
    """Fail before the script runs when the output cannot be written: no folder, or a folder in its place."""
    folder = out.parent
    if not folder.is_dir():
        if folder.exists():
            _fail(f"cannot write {out}: {folder} is not a folder", 2)
        _fail(f"cannot write {out}: the folder {folder} does not exist (create it first)", 2)
    if out.is_dir():
        _fail(f"cannot write {out}: it is a folder; name a file", 2)
    if not os.access(folder, os.W_OK):
        _fail(f"cannot write {out}: the folder {folder} is not writable", 2)


def _named_output_is_no_input(args) -> None:
    """An output named on the command line that is one of the run's inputs is refused first, before its
    format is read (``-o script.py`` is a script about to be written over, not an unknown format)."""
    if args.output:
        _refuse_input(pathlib.Path(args.output), _given_inputs(args))


def _graph_command(args) -> int:
    _named_output_is_no_input(args)
    out, _ = _graph_output(args)
    _check_output(out)
    return _run(args, [out])


def _animate_command(args) -> int:
    _named_output_is_no_input(args)
    if args.steps is not None or args.format is not None:
        _steps_folder(args)  # before the script runs; the pictures' names are checked by the drawing
        return _run(args, [])
    out, _ = _animate_output(args)
    _check_output(out)
    return _run(args, [out])


def _draw_graph(args, workdir, given) -> int:
    from . import viz

    out, fmt = _graph_output(args)
    script, tr, tapes, names = _load(workdir, args)
    inputs = _read_inputs(workdir, given)
    if args.tape is not None:
        chosen = [args.tape]
    elif args.all_in_one:
        chosen = [None]
    else:
        chosen = list(range(1, len(tapes) + 1))
    stem = out.with_suffix("")
    paths = [(out if len(chosen) == 1 else pathlib.Path(f"{stem}-T{number}.{fmt}")).with_suffix("." + fmt)
             for number in chosen]
    for path in paths:  # every one checked before the first is written
        _refuse_input(path, inputs)
    for number, path in zip(chosen, paths):
        g = viz.graph(tr, tape=number, collapse=args.collapse or False, names=names or False)
        g.save(path, format=fmt)
        print(path)
    return 0


def _draw_animate(args, workdir, given) -> int:
    from . import viz
    from .traces import Trace

    if args.steps is not None or args.format is not None:
        return _draw_steps(args, workdir, given)
    out, _ = _animate_output(args)
    script, tr, tapes, names = _load(workdir, args)
    _refuse_input(out, _read_inputs(workdir, given))
    source = tr
    if args.tape is not None:  # that tape's events only: its forward ops and its backward pass
        raw = tapes[args.tape - 1]
        source = Trace([e for e in tr.events if e.tape == raw])
    anim = viz.animate(source, title=args.title, rankdir=args.rankdir, names=names or None)
    print(anim.save(out, fps=args.fps))
    return 0


def _steps(text):
    """``--steps 3,5``: step numbers as the frames' counter shows them (1 is the first)."""
    try:
        steps = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--steps wants step numbers separated by commas (3,5), not {text!r}")
    if not steps or min(steps) < 1:
        raise argparse.ArgumentTypeError(f"--steps wants step numbers from 1 (3,5), not {text!r}")
    return steps


def _steps_folder(args) -> pathlib.Path:
    """``animate ... -o DIR --steps 3,5 --format png``: the folder the chosen steps are written into."""
    if not args.output:
        _fail("--steps and --format write pictures into a folder: name it with -o DIR", 2)
    folder = pathlib.Path(args.output)
    if not folder.is_dir():
        _fail(f"cannot write steps into {folder}: it is not a folder (create it first)", 2)
    return folder


def _draw_steps(args, workdir, given) -> int:
    """The drawing child's side of a step export: the chosen steps as pictures in the folder."""
    from . import viz
    from .traces import Trace

    folder, fmt = _steps_folder(args), args.format or "png"
    script, tr, tapes, names = _load(workdir, args)
    source = tr if args.tape is None else Trace([e for e in tr.events if e.tape == tapes[args.tape - 1]])
    anim = viz.animate(source, title=args.title, rankdir=args.rankdir, names=names or None)
    steps = args.steps or list(range(1, len(anim) + 1))
    if max(steps) > len(anim):
        _fail(f"--steps {','.join(map(str, steps))}: the animation has {len(anim)} steps (1 to {len(anim)})", 2)
    inputs = _read_inputs(workdir, given)
    for k in steps:  # every picture checked before the first is written
        _refuse_input(folder / f"step-{k:0{len(str(len(anim)))}d}.{fmt}", inputs)
    for path in anim.save_steps(folder, frames=[k - 1 for k in steps], format=fmt):
        print(path)
    return 0


_DRAW = {"graph": _draw_graph, "animate": _draw_animate}


def _tour_command(args) -> int:
    from .tour import ANIMATIONS, EXAMPLES, STILLS, run_tour

    only = args.only or None
    if only:
        known = list(dict.fromkeys([*EXAMPLES, *ANIMATIONS, *STILLS]))
        unknown = [n for n in only if n not in known]
        if unknown:
            _fail(f"unknown example(s) {unknown}; choose from {', '.join(known)}", 2)
    outdir = pathlib.Path(args.outdir)
    if outdir.exists() and not outdir.is_dir():
        _fail(f"{outdir} is not a folder", 2)
    for path in run_tour(outdir, formats=tuple(args.format), only=only):
        print(path)
    return 0


def _lessons_command(args) -> int:
    from .lessons import LessonError, build_site

    try:
        index = build_site(args.outdir, args.notebooks, cell_timeout=args.cell_timeout, timeout=args.timeout,
                           only=args.only, log=lambda line: print(line, file=sys.stderr, flush=True))
    except LessonError as e:
        _fail(f"{e}; no site written", 1)
    print(index)
    return 0


def _notebooks_command(args) -> int:
    from .course_files import CourseError, copy_course

    try:
        written = copy_course(args.dir, force=args.force)
    except CourseError as e:
        _fail(e, 1)
    for path in written:
        print(path)
    return 0


def _add_notebooks_command(sub):
    n = sub.add_parser("notebooks", help="copy the tutorials and exercises into DIR, to open in Jupyter")
    n.add_argument("dir")
    n.add_argument("--force", action="store_true", help="overwrite the files DIR already has")
    n.set_defaults(run=_notebooks_command)


def _add_run_options(p):
    p.add_argument("--timeout", type=_timeout, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"stop after this long, running the script and drawing together (default: "
                        f"{DEFAULT_TIMEOUT_S:g} s)")
    p.add_argument("--memory-limit", type=_memory, default=DEFAULT_MEMORY_MIB, metavar="MIB",
                   help=f"memory the script, and then its drawing, may take, in MiB (default: {DEFAULT_MEMORY_MIB}; 0: no limit, "
                        "needed for the CuPy backend)")


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (``autodiff-viz: ...``, exit status 2) instead of the usage."""

    def error(self, message):
        print(f"autodiff-viz: {_one_line(message, 1000)} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


class _Version(argparse.Action):
    """``--version``: the version and the build (pure Python, or which modules are compiled), read when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from . import __version__, _compiled

        done = _compiled.compiled()
        build = f"compiled build: {', '.join(done)}" if done else "pure Python"
        print(f"autodiff-viz {__version__} ({build}) from {pathlib.Path(_compiled.__file__).resolve().parent}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="autodiff-viz", description="Pictures of what GradientTape recorded.")
    p.add_argument("--version", action=_Version, help="print the version and the build (pure or compiled), and exit")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("graph", help="run a Python script and draw the graphs of its tapes")
    g.add_argument("script")
    g.add_argument("script_args", nargs="*", help="arguments passed to the script (all of them after a --, wherever it stands)")
    g.add_argument("-o", "--output", help="output file (default: SCRIPT.png); several tapes add -T1, -T2...; "
                                          "its folder must exist")
    g.add_argument("--format", choices=FORMATS, help="file format (default: from the output's extension)")
    g.add_argument("--tape", type=_tape, help="only tape N (T1 is the first tape the script used)")
    g.add_argument("--all-in-one", action="store_true", help="all tapes in one picture")
    g.add_argument("--collapse", nargs="*", metavar="SCOPE",
                   help="fold name scopes into boxes (all of them, or the ones named)")
    _add_run_options(g)
    g.set_defaults(run=_graph_command)
    a = sub.add_parser("animate", help="run a Python script and animate its forward and backward passes")
    a.add_argument("script")
    a.add_argument("script_args", nargs="*", help="arguments passed to the script (all of them after a --, wherever it stands)")
    a.add_argument("-o", "--output", help="output file: .gif (default), .html (a self-contained player) or .mp4; "
                                          "its folder must exist")
    a.add_argument("--tape", type=_tape, help="only tape N (default: every tape, nested ones included)")
    a.add_argument("--fps", type=_fps, default=1.0,
                   help=f"frames (steps) per second for .gif and .mp4, above 0 and at most {MAX_FPS}")
    a.add_argument("--title", help="the title above the animation")
    a.add_argument("--rankdir", choices=("auto", "LR", "TB"), default="auto", help="layout direction")
    a.add_argument("--steps", type=_steps, metavar="N,M",
                   help="write only these steps (numbered from 1, as the frames' counter), as pictures into "
                        "the folder -o DIR")
    a.add_argument("--format", choices=("png", "svg"),
                   help="with -o DIR: each step as a picture in this format (default png)")
    _add_run_options(a)
    a.set_defaults(run=_animate_command)
    t = sub.add_parser("tour", help="render the built-in examples into OUTDIR")
    t.add_argument("outdir")
    t.add_argument("--format", nargs="+", choices=FORMATS, default=["png"])
    t.add_argument("--only", nargs="+", metavar="NAME", help="only these examples")
    t.set_defaults(run=_tour_command)
    from .lessons import CELL_TIMEOUT_S, TIMEOUT_S

    s = sub.add_parser("lessons", help="run the tutorial notebooks and write a static web site into OUTDIR "
                                       "(no network needed to read it)")
    s.add_argument("outdir")
    s.add_argument("--notebooks", metavar="DIR",
                   help="the folder of the tutorials, NN_name.ipynb (default: the course installed with this "
                        "package, or notebooks/ of a clone)")
    s.add_argument("--only", nargs="+", metavar="NAME", help="only these tutorials (01_gradient_tapes ...)")
    s.add_argument("--cell-timeout", type=_timeout, default=CELL_TIMEOUT_S, metavar="SECONDS",
                   help=f"stop a cell after this long (default: {CELL_TIMEOUT_S:g} s)")
    s.add_argument("--timeout", type=_timeout, default=TIMEOUT_S, metavar="SECONDS",
                   help=f"stop after this long for all notebooks together (default: {TIMEOUT_S:g} s)")
    s.set_defaults(run=_lessons_command)
    _add_notebooks_command(sub)
    return p


def _guarded(run) -> int:
    """``run()``'s exit status; every failure is one printed line ``autodiff-viz: ...`` and its status."""
    try:
        try:
            return run()
        except _Stop:
            raise
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except MemoryError:
            _fail("out of memory while drawing", 1)
        except OSError as e:
            _fail(f"cannot write the output: {_one_line(e)}", 1)
        except Exception as e:  # noqa: BLE001 - one line, not the command's traceback
            _fail(f"drawing failed: {type(e).__name__}: {_one_line(e)}", 1)
    except _Stop as stop:
        return stop.code


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first ``--`` is the script's, wherever it stands (argparse alone takes it only
    # right after the script's own arguments).
    after = None
    if "--" in argv:
        cut = argv.index("--")
        argv, after = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    if after is not None:
        if not hasattr(args, "script_args"):
            parser.error(f"arguments after -- ({_one_line(' '.join(after), 80)}) are passed to a script: "
                         "only graph and animate run one")
        args.script_args = [*args.script_args, *after]
    if getattr(args, "collapse", None) == []:
        args.collapse = True
    return _guarded(lambda: args.run(args))


if __name__ == "__main__":
    sys.exit(main())
