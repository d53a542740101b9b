"""The course a student gets: which notebooks, where this copy of the package keeps them, copying them out.

The tutorials (``NN_name.ipynb``), the exercises (``exercises/*.ipynb``, with their TODOs), the
course's ``README.md`` and the ``GLOSSARY.md`` every notebook links to.  The solutions stay in the repository: a class hands out the exercises, and an
installed package would give the answers away.  A built wheel carries these files in
``autodiff_viz/course/`` (``setup.py`` copies them there from ``notebooks/``); a clone of the repository
reads ``notebooks/`` itself.  Only the standard library is imported here: the build runs this file.

    autodiff-viz notebooks my-course        # the same as copy_course("my-course")

>>> import pathlib, tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     (pathlib.Path(tmp) / "exercises").mkdir()
...     for name in ("README.md", "01_tapes.ipynb", "01_tapes.py", "exercises/ex1.ipynb"):
...         _ = (pathlib.Path(tmp) / name).write_text("{}")
...     [p.as_posix() for p in student_files(tmp)]
['README.md', '01_tapes.ipynb', 'exercises/ex1.ipynb']
"""
from __future__ import annotations

import pathlib
import shutil

TUTORIALS = "[0-9][0-9]_*.ipynb"  # the course, in the order of their names
EXERCISES = "exercises/*.ipynb"  # as handed out: TODO cells, no answers
README = "README.md"
GLOSSARY = "GLOSSARY.md"
PACKAGED = pathlib.Path(__file__).resolve().parent / "course"  # in an installed wheel
CLONE = pathlib.Path(__file__).resolve().parent.parent / "notebooks"  # in a clone of the repository
NO_COURSE = "this copy of autodiff_viz has no course (install it from a wheel or use a clone of the repository)"


class CourseError(Exception):
    """The course could not be found or copied; the message is one line."""


def default_folder() -> pathlib.Path | None:
    """The course this copy of the package has: the packaged one, else a clone's ``notebooks/``, else None."""
    for folder in (PACKAGED, CLONE):
        if folder.is_dir():
            return folder
    return None


def student_files(folder) -> list:
    """The course's files in ``folder``, relative to it: the README, the glossary, the tutorials, the exercises."""
    folder = pathlib.Path(folder)
    found = [pathlib.Path(name) for name in (README, GLOSSARY) if (folder / name).is_file()]
    for pattern in (TUTORIALS, EXERCISES):
        found += sorted(p.relative_to(folder) for p in folder.glob(pattern) if p.is_file())
    return found


def copy_course(dest, folder=None, *, force=False) -> list:
    """Copy the course (from ``folder``, else :func:`default_folder`) into ``dest``; the paths written.

    Nothing is written when ``dest`` already has one of the files, unless ``force``.
    """
    source = pathlib.Path(folder) if folder is not None else default_folder()
    if source is None or not source.is_dir():
        raise CourseError(NO_COURSE if source is None else f"no course folder at {source}")
    files = student_files(source)
    if not any(p.match(TUTORIALS) for p in files):
        raise CourseError(f"no tutorial notebooks ({TUTORIALS}) in {source}")
    dest = pathlib.Path(dest)
    if dest.exists() and not dest.is_dir():
        raise CourseError(f"{dest} is not a folder")
    folders = [p.as_posix() for p in files if (dest / p).is_dir()]
    if folders:
        raise CourseError(f"cannot write {dest / folders[0]}: it is a folder; nothing copied")
    there = [p.as_posix() for p in files if (dest / p).exists()]
    if there and not force:
        more = f" and {len(there) - 3} more" if len(there) > 3 else ""
        raise CourseError(f"{dest} already has {', '.join(there[:3])}{more}; nothing copied "
                          "(--force overwrites them)")
    written = []
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target)
        written.append(target)
    return written
