"""The one build step pyproject.toml cannot say: the course goes into the wheel.

The tutorials, the exercises and their README (``autodiff_viz/course_files.py`` says which) are copied from
``notebooks/`` to ``autodiff_viz/course/`` in the build, so an installed package has them with no second
copy in the repository.  An editable install reads ``notebooks/`` of the clone instead.
"""
import pathlib
import runpy
import shutil

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


setup(cmdclass={"build_py": BuildWithCourse})
