"""The course travels with the package: ``autodiff-viz notebooks DIR``, and a wheel that carries the notebooks.

The fast tests copy the course of this clone; the slow one builds a wheel, installs it in a fresh virtual
environment outside the repository (no network: it sees this environment's dependencies, not its copy of the
package) and runs the installed command there.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from autodiff_viz import cli, course_files

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def _expected_names(folder: pathlib.Path) -> set:
    """What a student gets, read off the folder by name: README, GLOSSARY, NN_*.ipynb, exercises/*.ipynb."""
    names = {n for n in ("README.md", "GLOSSARY.md") if (folder / n).is_file()}
    names |= {n for n in os.listdir(folder) if re.fullmatch(r"\d\d_\w+\.ipynb", n)}
    names |= {f"exercises/{n}" for n in os.listdir(folder / "exercises") if n.endswith(".ipynb")}
    return names


def _tree(folder: pathlib.Path) -> set:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_course_is_the_tutorials_the_exercises_and_the_readme():
    names = {p.as_posix() for p in course_files.student_files(NOTEBOOKS)}
    assert names == _expected_names(NOTEBOOKS)
    assert len([n for n in names if n.startswith("exercises/")]) == 6 and "00_build_a_tape.ipynb" in names
    assert "GLOSSARY.md" in names   # every notebook links to it
    assert not any(n.startswith("solutions/") or n.endswith(".py") for n in names)  # no answers, no scripts
    assert course_files.default_folder() == NOTEBOOKS  # a clone reads its own notebooks/


def test_notebooks_command_copies_the_course(tmp_path, capsys):
    dest = tmp_path / "my course"
    assert cli.main(["notebooks", str(dest)]) == 0
    printed = capsys.readouterr().out.split("\n")[:-1]
    assert _tree(dest) == _expected_names(NOTEBOOKS)
    assert sorted(printed) == sorted(str(dest / n) for n in _expected_names(NOTEBOOKS))
    for name in _tree(dest):
        assert (dest / name).read_bytes() == (NOTEBOOKS / name).read_bytes(), name


def test_the_copied_readme_links_only_to_files_the_copy_has(tmp_path):
    course_files.copy_course(tmp_path)
    text = (tmp_path / "README.md").read_text(encoding="utf-8")
    links = [m for m in re.findall(r"\]\(([^)\s#]+)", text) if "://" not in m]
    assert len(links) >= 12  # the tutorials and the exercises are linked
    assert [m for m in links if not (tmp_path / m).is_file()] == []


def test_notebooks_command_keeps_existing_files_unless_forced(tmp_path, capsys):
    (tmp_path / "exercises").mkdir()
    mine = tmp_path / "exercises" / "ex1_write_a_rule.ipynb"
    mine.write_text("my answers", encoding="utf-8")
    assert cli.main(["notebooks", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == (f"autodiff-viz: {tmp_path} already has exercises/ex1_write_a_rule.ipynb; nothing copied "
                   "(--force overwrites them)\n")
    assert _tree(tmp_path) == {"exercises/ex1_write_a_rule.ipynb"}  # nothing else was copied either
    assert mine.read_text(encoding="utf-8") == "my answers"
    assert cli.main(["notebooks", str(tmp_path), "--force"]) == 0
    assert mine.read_bytes() == (NOTEBOOKS / "exercises" / "ex1_write_a_rule.ipynb").read_bytes()


def test_notebooks_command_errors_are_one_line(tmp_path, capsys, monkeypatch):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x", encoding="utf-8")
    assert cli.main(["notebooks", str(a_file)]) == 1
    assert capsys.readouterr().err == f"autodiff-viz: {a_file} is not a folder\n"
    (tmp_path / "d" / "README.md").mkdir(parents=True)
    assert cli.main(["notebooks", str(tmp_path / "d"), "--force"]) == 1
    assert capsys.readouterr().err == (f"autodiff-viz: cannot write {tmp_path / 'd' / 'README.md'}: it is a "
                                       "folder; nothing copied\n")
    assert _tree(tmp_path / "d") == set()
    # a copy of the package with neither a packaged course nor a clone's notebooks/
    monkeypatch.setattr(course_files, "PACKAGED", tmp_path / "no-course")
    monkeypatch.setattr(course_files, "CLONE", tmp_path / "no-notebooks")
    assert cli.main(["notebooks", str(tmp_path / "e")]) == 1
    assert capsys.readouterr().err == ("autodiff-viz: this copy of autodiff_viz has no course (install it from a "
                                       "wheel or use a clone of the repository)\n")
    assert not (tmp_path / "e").exists()
    assert cli.main(["lessons", str(tmp_path / "site")]) == 1
    assert capsys.readouterr().err == ("autodiff-viz: this copy of autodiff_viz has no course (install it from a "
                                       "wheel or use a clone of the repository); pass --notebooks DIR; no site "
                                       "written\n")
    assert not (tmp_path / "site").exists()
    with pytest.raises(SystemExit) as stop:
        cli.main(["notebooks"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


# ---------------------------------------------------------------------------
# From a built wheel, in a fresh virtual environment
# ---------------------------------------------------------------------------
def _setuptools_version() -> tuple:
    try:
        import setuptools
    except ImportError:
        return ()
    return tuple(int(p) for p in re.findall(r"\d+", setuptools.__version__)[:2])


def _check(done):
    assert done.returncode == 0, (f"{done.args[:3]} failed ({done.returncode}):\n{done.stdout[-3000:]}\n"
                                  f"{done.stderr[-3000:]}")
    return done


def _run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)


def _build_wheel(src: pathlib.Path, dist: pathlib.Path, env: dict):
    """``pip wheel`` with the build backend pyproject.toml names: this environment's when it is new enough
    (the dev extra installs it: no network), else pip fetches it (skipped where it cannot)."""
    offline = _setuptools_version() >= (77,)
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, src]
    cmd += ["--no-build-isolation", "--no-index"] if offline else ["--timeout", "20", "--retries", "1"]
    done = _run(cmd, cwd=dist.parent, env=env)
    if done.returncode and not offline and re.search(r"No matching distribution|Could not find a version|"
                                                     r"Failed to establish|Network is unreachable", done.stderr):
        pytest.skip("no setuptools>=77 here to build the wheel with, and pip cannot fetch it "
                    "(pip install -e '.[dev]' installs it)")
    _check(done)
    (wheel,) = dist.glob("autodiff_viz-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(python, autodiff-viz command, environment, folder, wheel)``: the wheel installed in a fresh venv."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"  # a copy of what the build reads: it writes build/ and *.egg-info beside them
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE"):
        shutil.copyfile(ROOT / name, src / name)
    for name in ("autodiff_viz", "notebooks"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    wheel = _build_wheel(src, base / "dist", env)
    env["HOME"] = str(base / "home")  # kernels write under HOME
    env["PIP_NO_INDEX"] = "1"
    venv = base / "venv"
    _check(_run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=base, env=env))
    python = venv / "bin" / "python"
    _check(_run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", wheel], cwd=base,
                env=env))
    # the dependencies come from this environment's site-packages (its own autodiff_viz there is an editable
    # install, whose finder a plain path in a .pth file does not start), after the venv's own
    purelib = _check(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=base,
                          env=env)).stdout.strip()
    deps = [p for p in sys.path if pathlib.Path(p).name in ("site-packages", "dist-packages")]
    pathlib.Path(purelib, "deps-from-the-test-environment.pth").write_text("\n".join(deps) + "\n",
                                                                           encoding="utf-8")
    # and so do their Jupyter data files (nbconvert's templates), which pip puts under the prefix
    shares = [pathlib.Path(p).parents[2] / "share" / "jupyter" for p in deps]  # PREFIX/lib/pythonX.Y/site-packages
    env["JUPYTER_PATH"] = os.pathsep.join(str(p) for p in shares if p.is_dir())
    return python, venv / "bin" / "autodiff-viz", env, base, wheel


@pytest.mark.slow
def test_the_wheel_carries_the_course_and_not_the_solutions(installed):
    *_, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    course = {n.removeprefix("autodiff_viz/course/") for n in names if n.startswith("autodiff_viz/course/")}
    assert course == _expected_names(NOTEBOOKS)
    assert not any("solutions" in n or n.startswith("notebooks/") for n in names)


@pytest.mark.slow
def test_installed_notebooks_command_copies_the_packaged_course(installed):
    python, command, env, base, _ = installed
    where = _check(_run([python, "-c", "import autodiff_viz.course_files as c; print(c.__file__, "
                         "c.default_folder())"], cwd=base, env=env)).stdout.split()
    assert pathlib.Path(where[0]).is_relative_to(base / "venv")  # the wheel's copy, not this clone's
    assert where[1] == str(pathlib.Path(where[0]).parent / "course")
    done = _check(_run([command, "notebooks", "class"], cwd=base, env=env))
    dest = base / "class"
    assert _tree(dest) == _expected_names(NOTEBOOKS)
    assert len(done.stdout.splitlines()) == len(_expected_names(NOTEBOOKS))
    for name in _tree(dest):
        assert (dest / name).read_bytes() == (NOTEBOOKS / name).read_bytes(), name
    again = _run([command, "notebooks", "class"], cwd=base, env=env)
    assert again.returncode == 1 and again.stderr.startswith("autodiff-viz: class already has README.md, ")
    assert again.stderr.count("\n") == 1


@pytest.mark.slow
def test_installed_lessons_command_runs_the_packaged_course(installed):
    pytest.importorskip("nbclient")
    pytest.importorskip("jupyter_server_mathjax")
    _, command, env, base, _ = installed
    _check(_run([command, "lessons", "site", "--only", "00_build_a_tape"], cwd=base, env=env))
    site = base / "site"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="00_build_a_tape.html"' in index
    for exercise in ("ex1_write_a_rule", "ex2_custom_gradient", "ex3_predict_the_gradient"):
        assert f'href="exercises/{exercise}.ipynb" download' in index
        assert (site / "exercises" / f"{exercise}.ipynb").read_bytes() == (
            NOTEBOOKS / "exercises" / f"{exercise}.ipynb").read_bytes()
    assert (site / "notebooks" / "00_build_a_tape.ipynb").is_file()
    assert "class=\"adv-host\"" in (site / "00_build_a_tape.html").read_text(encoding="utf-8")  # a player ran
