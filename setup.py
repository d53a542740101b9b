"""The build steps pyproject.toml cannot say: the course goes into the wheel; a compiled build, when asked.

The tutorials, the exercises and their README (``autodiff_viz/course_files.py`` says which) are copied from
``notebooks/`` to ``autodiff_viz/course/`` in the build, so an installed package has them with no second
copy in the repository.  An editable install reads ``notebooks/`` of the clone instead.

With ``AUTODIFF_VIZ_COMPILE=1`` the engine's hot modules (``autodiff_viz/_compiled.py`` says which) are
compiled with mypyc, which pip then fetches for the build.  Never for an editable install: the compiled
modules would be loaded instead of the sources being edited.
"""
import os
import pathlib
import runpy
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent
COURSE = runpy.run_path(str(ROOT / "autodiff_viz" / "course_files.py"))


class BuildWithCourse(build_py):
    """``build_py``, then the course's notebooks into ``autodiff_viz/course/`` of the build."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        source = ROOT / "notebooks"
        target = pathlib.Path(self.build_lib) / "autodiff_viz" / "course"
        for rel in COURSE["student_files"](source):
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / rel, target / rel)


# mypy versions the compiled modules are known to check with (a newer one may reject them, and then nothing builds);
# pyproject.toml's dev and bench extras ask for the same
MYPY = "mypy>=1.18,<2.5"


def compile_asked() -> bool:
    flag = os.environ.get("AUTODIFF_VIZ_COMPILE", "").strip().lower()
    if flag in ("", "0", "false", "no", "off"):
        return False
    if flag not in ("1", "true", "yes", "on"):
        sys.exit(f"AUTODIFF_VIZ_COMPILE={flag!r}: say 1 to compile the engine's hot modules, or 0 (the default) not to")
    if "editable_wheel" in sys.argv:
        print("AUTODIFF_VIZ_COMPILE is ignored by an editable install: its compiled modules would be loaded "
              "instead of the sources you edit", file=sys.stderr)
        return False
    return True


COMPILE = compile_asked()


def compiled_extensions() -> list:
    """The C extensions of the compiled build (none unless asked)."""
    if not COMPILE:
        return []
    try:
        from mypyc.build import mypycify  # noqa: PLC0415  (only a compiled build needs mypy)
    except ImportError:
        if "egg_info" in sys.argv or "dist_info" in sys.argv:
            return []  # (pip asks for the build's requirements first: mypy comes with setup_requires below)
        sys.exit(f"AUTODIFF_VIZ_COMPILE=1: the compiled build needs {MYPY} (pip install it first), or pip's own "
                 "build environment, which fetches it")
    build = runpy.run_path(str(ROOT / "autodiff_viz" / "_compiled.py"))
    files = [f"autodiff_viz/{name}.py" for name in build["MODULES"]]
    return mypycify([*build["MYPY_FLAGS"], *files], opt_level="3", group_name="autodiff_viz")


setup(cmdclass={"build_py": BuildWithCourse}, ext_modules=compiled_extensions(),
      setup_requires=[MYPY] if COMPILE else [])
