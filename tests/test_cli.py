"""The autodiff-viz command line: graph of a script's tapes, and the tour."""
import shutil
import xml.etree.ElementTree as ET

import pytest

from autodiff_viz import cli
from autodiff_viz.tour import EXAMPLES

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")

SCRIPT = '''
import autodiff_viz as tf
x = tf.Variable(3.0, name="x")
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = x * x
    dy = inner.gradient(y, x)
d2 = outer.gradient(dy, x)
print("d2", float(d2))
'''


def test_graph_writes_one_file_per_tape(tmp_path, capfd):
    script = tmp_path / "second.py"
    script.write_text(SCRIPT)
    assert cli.main(["graph", str(script), "-o", str(tmp_path / "out.dot")]) == 0
    outputs = sorted(p.name for p in tmp_path.glob("out-T*.dot"))
    assert outputs == ["out-T1.dot", "out-T2.dot"]
    assert "d2 2.0" in capfd.readouterr().out   # the script runs in a child process
    assert "backward pass of T2" in (tmp_path / "out-T1.dot").read_text()


@needs_dot
def test_graph_one_tape_as_svg(tmp_path):
    script = tmp_path / "second.py"
    script.write_text(SCRIPT)
    out = tmp_path / "t2.svg"
    assert cli.main(["graph", str(script), "-o", str(out), "--tape", "2"]) == 0
    root = ET.fromstring(out.read_text())
    assert "Mul" in " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert cli.main(["graph", str(script), "-o", str(out), "--tape", "5"]) == 2


def test_graph_script_without_tapes(tmp_path):
    script = tmp_path / "nothing.py"
    script.write_text("print('no tapes')\n")
    assert cli.main(["graph", str(script), "-o", str(tmp_path / "x.dot")]) == 1
    assert cli.main(["graph", str(tmp_path / "missing.py")]) == 2


def test_graph_script_that_raises_shows_its_own_traceback(tmp_path, capfd):
    script = tmp_path / "broken.py"
    script.write_text("x = 1\nraise ValueError('boom')\n")
    assert cli.main(["graph", str(script), "-o", str(tmp_path / "x.dot")]) == 1
    err = capfd.readouterr().err
    assert "ValueError: boom" in err and "broken.py\", line 2" in err
    assert "runpy" not in err and "cli.py" not in err   # only the script's frames
    assert not list(tmp_path.glob("x*.dot"))
    # sys.exit() ends a script normally: its tapes are still drawn
    script.write_text(SCRIPT + "import sys\nsys.exit()\n")
    assert cli.main(["graph", str(script), "-o", str(tmp_path / "y.dot"), "--tape", "1"]) == 0
    assert (tmp_path / "y.dot").exists()
    script.write_text("import sys\nsys.exit(3)\n")
    assert cli.main(["graph", str(script), "-o", str(tmp_path / "z.dot")]) == 1


@needs_dot
def test_tour_renders_every_example(tmp_path):
    from PIL import Image

    assert cli.main(["tour", str(tmp_path), "--format", "png"]) == 0
    pngs = sorted(tmp_path.glob("graph-*.png"))
    assert len(pngs) == len(EXAMPLES)
    for p in pngs:
        img = Image.open(p)
        assert img.width > 150 and img.height > 80
        assert len(img.convert("L").getcolors(1 << 16) or ()) > 10


def test_tour_unknown_example(tmp_path):
    assert cli.main(["tour", str(tmp_path), "--only", "nope"]) == 2


def test_animate_writes_a_self_contained_player(tmp_path, capsys):
    script = tmp_path / "second.py"
    script.write_text(SCRIPT)
    out = tmp_path / "steps.html"
    assert cli.main(["animate", str(script), "-o", str(out)]) == 0
    page = out.read_text()
    assert "<script src=" not in page and "URL.createObjectURL" in page
    # both tapes are in it: the inner tape's backward pass is recorded by the outer one
    assert "tape T2" in page and "tape T1" in page


def test_animate_gif_has_one_frame_per_step_of_the_chosen_tape(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    import autodiff_viz as ad

    script = tmp_path / "second.py"
    script.write_text(SCRIPT)
    out = tmp_path / "inner.gif"
    assert cli.main(["animate", str(script), "-o", str(out), "--tape", "2", "--fps", "2"]) == 0
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:  # the inner tape alone: y = x*x and its one backward step
        with ad.GradientTape() as inner:
            y = x * x
        inner.gradient(y, x)
    assert Image.open(out).n_frames == len(ad.viz.animate(tr).steps)


def test_animate_rejects_an_unknown_format(tmp_path, capsys):
    script = tmp_path / "second.py"
    script.write_text(SCRIPT)
    assert cli.main(["animate", str(script), "-o", str(tmp_path / "x.png")]) == 2
    assert "name the output .gif, .html or .mp4" in capsys.readouterr().err


def test_animate_exports_the_chosen_steps_as_pictures(tmp_path, capfd):
    pytest.importorskip("PIL")
    from PIL import Image

    script = tmp_path / "second.py"
    script.write_text(SCRIPT)
    out = tmp_path / "frames"
    out.mkdir()
    assert cli.main(["animate", str(script), "-o", str(out), "--tape", "2", "--steps", "1,3"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["step-1.png", "step-3.png"]
    assert Image.open(out / "step-3.png").width > 200
    assert cli.main(["animate", str(script), "-o", str(out), "--tape", "2", "--steps", "2", "--format", "svg"]) == 0
    root = ET.fromstring((out / "step-2.svg").read_text())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    capfd.readouterr()
    assert cli.main(["animate", str(script), "-o", str(out), "--tape", "2", "--steps", "99"]) == 2
    assert "the animation has" in capfd.readouterr().err
    assert cli.main(["animate", str(script), "-o", str(tmp_path / "none"), "--steps", "1"]) == 2
    assert "not a folder" in capfd.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["animate", str(script), "-o", str(out), "--steps", "0,x"])
    assert "--steps wants step numbers" in capfd.readouterr().err


# ---------------------------------------------------------------------------
# Failing cleanly: one line "autodiff-viz: ..." on stderr and a non-zero exit
# ---------------------------------------------------------------------------
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

posix_only = pytest.mark.skipif(os.name != "posix", reason="process groups and signals are POSIX")


def _cli(*args, cwd, timeout=60):
    return subprocess.run([sys.executable, "-m", "autodiff_viz.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def _one_line(err, starts=""):
    """stderr is exactly one line, ``autodiff-viz: ...``; returns it."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("autodiff-viz: " + starts), err
    return lines[0]


def _last_line(err):
    """stderr ends with the one ``autodiff-viz:`` line (after the script's traceback); returns it."""
    lines = err.strip().splitlines()
    assert [ln for ln in lines if ln.startswith("autodiff-viz:")] == lines[-1:], err
    return lines[-1]


@pytest.fixture
def second(tmp_path):
    script = tmp_path / "second.py"
    script.write_text(SCRIPT + "open('ran.txt', 'w').close()\n")
    return script


@pytest.mark.parametrize("command, output", [("graph", "missing/out.png"), ("graph", "a/b/c.dot"),
                                             ("animate", "missing/steps.gif")])
def test_output_into_a_missing_folder_fails_before_the_script_runs(tmp_path, second, command, output):
    r = _cli(command, second, "-o", output, cwd=tmp_path)
    assert r.returncode == 2
    assert "does not exist" in _one_line(r.stderr)
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "missing").exists()


def test_output_that_is_a_folder_or_under_a_file(tmp_path, second):
    (tmp_path / "afile").write_text("")
    r = _cli("graph", second, "-o", "afile/out.dot", cwd=tmp_path)
    assert r.returncode == 2 and "is not a folder" in _one_line(r.stderr)
    r = _cli("animate", second, "-o", tmp_path, cwd=tmp_path)
    assert r.returncode == 2 and _one_line(r.stderr)
    assert not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize("option, value", [
    ("--fps", "0"), ("--fps", "-1"), ("--fps", "abc"), ("--fps", "nan"), ("--fps", "inf"), ("--fps", "1e9"),
    ("--timeout", "0"), ("--timeout", "-5"), ("--timeout", "x"), ("--timeout", "inf"),
    ("--memory-limit", "-1"), ("--memory-limit", "1.5"), ("--tape", "0"), ("--tape", "two"),
])
def test_bad_option_values_are_one_line_and_status_2(tmp_path, second, option, value):
    r = _cli("animate", second, "-o", "steps.gif", option, value, cwd=tmp_path)
    assert r.returncode == 2
    assert option in _one_line(r.stderr)
    assert not (tmp_path / "ran.txt").exists()


def test_unknown_command_is_one_line(tmp_path):
    r = _cli("paint", "x.py", cwd=tmp_path)
    assert r.returncode == 2 and _one_line(r.stderr)


def test_script_that_raises_keyboard_interrupt(tmp_path):
    (tmp_path / "kbd.py").write_text("print('started')\nraise KeyboardInterrupt\n")
    r = _cli("graph", "kbd.py", "-o", "out.dot", cwd=tmp_path)
    assert r.returncode == 130
    assert "kbd.py was interrupted" in _one_line(r.stderr) and "started" in r.stdout
    assert not list(tmp_path.glob("out*"))


@posix_only
def test_script_that_never_ends_is_stopped_by_the_timeout(tmp_path):
    (tmp_path / "loop.py").write_text("while True:\n    pass\n")
    start = time.monotonic()
    r = _cli("graph", "loop.py", "-o", "out.dot", "--timeout", "2", cwd=tmp_path, timeout=30)
    assert time.monotonic() - start < 30
    assert r.returncode == 1
    assert _one_line(r.stderr) == ("autodiff-viz: loop.py did not finish within 2 s (--timeout); "
                                   "nothing was drawn")
    assert not list(tmp_path.glob("out*"))


@posix_only
def test_timeout_also_kills_what_the_script_started(tmp_path):
    (tmp_path / "spawn.py").write_text(
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "open('child.pid', 'w').write(str(p.pid))\n"
        "time.sleep(120)\n")
    r = _cli("animate", "spawn.py", "-o", "out.gif", "--timeout", "3", cwd=tmp_path, timeout=40)
    assert r.returncode == 1 and "did not finish within 3 s" in _one_line(r.stderr)
    pid = int((tmp_path / "child.pid").read_text())
    for _ in range(50):   # killed with its group (and reaped by init)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the script's own child outlived the timeout")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux")
def test_script_over_the_memory_limit(tmp_path):
    (tmp_path / "greedy.py").write_text("hog = bytearray(8 * 2**30)\n")
    r = _cli("graph", "greedy.py", "-o", "out.dot", "--memory-limit", "256", cwd=tmp_path)
    assert r.returncode == 1
    line = _one_line(r.stderr)
    assert "ran out of memory" in line and "--memory-limit 256 MiB" in line


@posix_only
def test_script_killed_by_a_signal(tmp_path):
    (tmp_path / "die.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    r = _cli("graph", "die.py", "-o", "out.dot", cwd=tmp_path)
    assert r.returncode == 1 and "killed by SIGKILL" in _one_line(r.stderr)


def test_script_that_raises_prints_its_traceback_then_one_line(tmp_path):
    (tmp_path / "broken.py").write_text("def f():\n    raise ValueError('boom\\nsecond line')\nf()\n")
    r = _cli("graph", "broken.py", "-o", "out.dot", cwd=tmp_path)
    assert r.returncode == 1
    assert "Traceback" in r.stderr and 'broken.py", line 2' in r.stderr
    assert "cli.py" not in r.stderr and "runpy" not in r.stderr
    assert _last_line(r.stderr) == ("autodiff-viz: broken.py stopped with ValueError: boom second line; "
                                    "nothing was drawn")


def test_sys_exit_zero_still_draws_and_script_sees_its_folder_and_arguments(tmp_path):
    (tmp_path / "helper.py").write_text("N = 2\n")
    (tmp_path / "main.py").write_text(SCRIPT + "import sys, helper\nprint('args', sys.argv[1:], helper.N)\n"
                                               "sys.exit(0)\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    r = _cli("graph", tmp_path / "main.py", "a", "b", "-o", "g.dot", "--tape", "2", cwd=sub)
    assert r.returncode == 0, r.stderr
    assert "args ['a', 'b'] 2" in r.stdout and (sub / "g.dot").exists()


def test_tape_out_of_range_and_nothing_recorded(tmp_path, second):
    r = _cli("graph", second, "-o", "g.dot", "--tape", "3", cwd=tmp_path)
    assert r.returncode == 2 and "T1..T2" in _one_line(r.stderr)
    (tmp_path / "plain.py").write_text("print(1 + 1)\n")
    r = _cli("animate", "plain.py", "-o", "s.gif", cwd=tmp_path)
    assert r.returncode == 1 and "recorded nothing" in _one_line(r.stderr)
    r = _cli("graph", "nowhere.py", cwd=tmp_path)
    assert r.returncode == 2 and "no such script" in _one_line(r.stderr)


def test_script_reads_an_empty_standard_input(tmp_path):
    (tmp_path / "ask.py").write_text("input('name? ')\n")
    r = _cli("graph", "ask.py", "-o", "g.dot", cwd=tmp_path, timeout=60)
    assert r.returncode == 1 and "EOFError" in _last_line(r.stderr)


@posix_only
def test_interrupting_the_command_stops_the_script(tmp_path):
    (tmp_path / "slow.py").write_text("import os, time\nopen('script.pid', 'w').write(str(os.getpid()))\n"
                                      "time.sleep(120)\n")
    p = subprocess.Popen([sys.executable, "-m", "autodiff_viz.cli", "graph", "slow.py", "-o", "g.dot"],
                         cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    for _ in range(300):
        if (tmp_path / "script.pid").exists() and (tmp_path / "script.pid").read_text():
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130 and "interrupted" in _one_line(err)
    pid = int((tmp_path / "script.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_trace_comes_back_through_the_checked_loader(tmp_path, capsys):
    # the drawing child reads what the script's child wrote with Trace.load: a broken file is one line
    import argparse
    import re

    import autodiff_viz as ad

    x = ad.Variable(3.0)
    with ad.trace() as tr:
        with ad.GradientTape():
            x * x
    text = re.sub(r'"tensor":\d+', '"tensor":99999999999999999999999', tr.to_json(), count=1)
    (tmp_path / "trace.json").write_text(text)
    args = argparse.Namespace(script="s.py", tape=None)
    with pytest.raises(cli._Stop) as stop:
        cli._load(tmp_path, args)
    assert stop.value.code == 1
    line = _one_line(capsys.readouterr().err, "could not read the trace of s.py")
    assert "99999999999999999999999" in line


def test_a_script_with_a_syntax_error_gets_its_own_message_only(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad.py"
    bad.write_text("x = (\n")
    proc = subprocess.run([sys.executable, "-m", "autodiff_viz.cli", "graph", str(bad), "-o", str(tmp_path / "o.png")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "SyntaxError" in proc.stderr and "cli.py" not in proc.stderr and "runpy" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("autodiff-viz: ")


# ---------------------------------------------------------------------------
# Never writing over an input; one --timeout for the script and its drawing
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("command, name", [("graph", "run.svg"), ("graph", "run.dot"), ("animate", "run.html"),
                                           ("graph", "run.py"), ("animate", "run.py")])
def test_an_output_that_is_the_script_itself_is_refused(tmp_path, command, name):
    script = tmp_path / name
    script.write_text(SCRIPT + "open('ran.txt', 'w').close()\n")
    before = script.read_bytes()
    r = _cli(command, name, "-o", name, cwd=tmp_path)
    assert r.returncode == 2
    assert f"will not write {name}: it is an input of this run" in _one_line(r.stderr)
    assert script.read_bytes() == before
    assert not (tmp_path / "ran.txt").exists()   # refused before the script runs


@posix_only
def test_an_output_linked_to_the_script_or_to_a_script_argument_is_refused(tmp_path, second):
    before = second.read_bytes()
    os.link(second, tmp_path / "hard.dot")
    (tmp_path / "soft.svg").symlink_to(second)
    for out in ("hard.dot", "soft.svg"):
        r = _cli("graph", second, "-o", out, cwd=tmp_path)
        assert r.returncode == 2 and "(the same file as" in _one_line(r.stderr)
    (tmp_path / "data.dot").write_text("digraph { a -> b }\n")
    for extra in (["--", "data.dot"], ["--", "--data=data.dot"]):
        r = _cli("graph", second, "-o", "data.dot", *extra, cwd=tmp_path)
        assert r.returncode == 2 and "will not write data.dot" in _one_line(r.stderr)
    assert second.read_bytes() == before and (tmp_path / "data.dot").read_text() == "digraph { a -> b }\n"
    assert not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize("command, out", [("graph", "notes.dot"), ("animate", "notes.html")])
def test_an_output_the_script_read_is_refused_and_left_as_it_was(tmp_path, command, out):
    # the script opens the file itself (no argument names it): the child reports what it read
    (tmp_path / out).write_text("my notes\n")
    (tmp_path / "s.py").write_text(SCRIPT + f"print(open({out!r}).read().strip())\n"
                                            "open('written.dot', 'w').write('made by the script')\n")
    one = ["--tape", "1"] if command == "graph" else []   # one file, not notes-T1.dot and notes-T2.dot
    r = _cli(command, "s.py", "-o", out, *one, cwd=tmp_path)
    assert r.returncode == 2
    assert _one_line(r.stderr) == (f"autodiff-viz: will not write {out}: it is an input of this run; "
                                   "name another output")
    assert "my notes" in r.stdout   # the script ran
    assert (tmp_path / out).read_text() == "my notes\n"
    # a file the script only wrote is not an input: drawing over it is allowed
    r = _cli("graph", "s.py", "-o", "written.dot", "--tape", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "digraph" in (tmp_path / "written.dot").read_text()


def test_arguments_after_a_double_dash_go_to_the_script_wherever_it_stands(tmp_path):
    (tmp_path / "s.py").write_text(SCRIPT + "import sys\nprint('args', sys.argv[1:])\n")
    r = _cli("graph", "s.py", "-o", "out.dot", "--tape", "1", "--", "--alpha", "7", "-o", "x", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "args ['--alpha', '7', '-o', 'x']" in r.stdout and (tmp_path / "out.dot").exists()
    r = _cli("animate", "s.py", "first", "-o", "out.html", "--", "--beta", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "args ['first', '--beta']" in r.stdout
    r = _cli("tour", tmp_path, "--", "x", cwd=tmp_path)
    assert r.returncode == 2 and "only graph and animate run one" in _one_line(r.stderr)


def _gone(pid, seconds=5.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return False


@posix_only
def test_what_the_script_started_does_not_outlive_a_successful_command(tmp_path):
    (tmp_path / "spawn.py").write_text(
        SCRIPT + "import os, subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "open('child.pid', 'w').write(str(p.pid))\n")
    r = _cli("graph", "spawn.py", "-o", "out.dot", "--tape", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _gone(int((tmp_path / "child.pid").read_text())), "the script's own child outlived the command"


@posix_only
def test_the_timeout_covers_the_drawing_too(tmp_path):
    # recording 3,000 ops takes a second or two; drawing 3,000 GIF frames takes minutes
    (tmp_path / "long.py").write_text(
        "import autodiff_viz as tf\nx = tf.Variable(1.0)\nwith tf.GradientTape() as t:\n    y = x\n"
        "    for _ in range(3000):\n        y = y * 1.001\nt.gradient(y, x)\nopen('recorded', 'w').close()\n")
    start = time.monotonic()
    r = _cli("animate", "long.py", "-o", "long.gif", "--timeout", "25", cwd=tmp_path, timeout=120)
    took = time.monotonic() - start
    assert r.returncode == 1 and took < 60
    line = _one_line(r.stderr)
    assert line == "autodiff-viz: long.py and its drawing did not finish within 25 s (--timeout); nothing was drawn"
    assert (tmp_path / "recorded").exists() and not (tmp_path / "long.gif").exists()
