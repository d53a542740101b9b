"""The compiled build: which modules it compiles, that mypy accepts them, and that a test run has the build it
expects.

``scripts/test.sh`` builds the compiled wheel (``AUTODIFF_VIZ_COMPILE=1``) and runs the engine's tests again on
it with ``AUTODIFF_VIZ_EXPECT_COMPILED=1``; every other run expects the pure package.
"""
import ast
import os
import pathlib

import pytest

from autodiff_viz import _compiled

PACKAGE = pathlib.Path(_compiled.__file__).resolve().parent
SOURCES = [pathlib.Path(__file__).resolve().parent.parent / "autodiff_viz" / f"{name}.py"
           for name in _compiled.MODULES]


def test_this_run_has_the_build_it_expects():
    expected = _compiled.MODULES if os.environ.get("AUTODIFF_VIZ_EXPECT_COMPILED") == "1" else ()
    assert _compiled.compiled() == expected, (
        f"autodiff_viz from {PACKAGE} has {_compiled.compiled() or 'no'} compiled modules; this run expects "
        f"{expected or 'none'} (AUTODIFF_VIZ_EXPECT_COMPILED says which)")


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_a_compiled_module_holds_functions_and_constants_only(source):
    # A class in a compiled module would become a native class: no object.__new__, no attribute set on the
    # fly, no subclass in Python.  Every class stays interpreted instead.
    classes = [n.name for n in ast.walk(ast.parse(source.read_text())) if isinstance(n, ast.ClassDef)]
    assert classes == [], f"{source.name} is compiled (autodiff_viz/_compiled.py) and defines {classes}"


def test_mypy_accepts_the_compiled_modules_with_the_builds_flags():
    # mypyc compiles the types mypy infers and checks them at run time: a module mypy rejects could raise a
    # TypeError in a compiled build where the pure one runs (a local given a 2-tuple, then a 1-tuple).
    api = pytest.importorskip("mypy.api", reason="mypy comes with the dev extra")
    out, err, status = api.run([*_compiled.MYPY_FLAGS, f"--cache-dir={os.devnull}", *map(str, SOURCES)])
    assert status == 0, out + err


def test_the_version_says_which_build_runs(capsys):
    from autodiff_viz import __version__, cli

    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    said = capsys.readouterr().out
    build = f"compiled build: {', '.join(_compiled.MODULES)}" if _compiled.compiled() else "pure Python"
    assert said == f"autodiff-viz {__version__} ({build}) from {PACKAGE}\n"
