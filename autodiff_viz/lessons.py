"""A static lesson site from the tutorial notebooks: ``autodiff-viz lessons OUTDIR``.

Each tutorial (``notebooks/NN_*.ipynb``, in course order) runs top to bottom
in a fresh ``python3`` kernel, then becomes one page: the code, its results,
the plots, the graphs and the step-through players (their self-contained
views, see :mod:`autodiff_viz.nbconvert`), math typeset by MathJax.  An index
page lists the lessons; each page links to the previous and the next one.
Nothing is loaded from the network: MathJax is copied from the
``jupyter-server-mathjax`` package into ``OUTDIR/_static/``, so the site works
from ``file://`` or any static host.

The exercises are linked as notebooks to download, as handed out (with their
TODOs, without the solutions); the solutions are not published.

Markdown (the notebooks' text cells, their titles and the README's
summaries) runs no script on the site: the HTML made from it is sanitized
(:func:`_safe_html`): only ``http``, ``https``, ``mailto`` and relative links
survive, and raw HTML other than markdown's own tags shows as text.

    from autodiff_viz.lessons import build_site
    build_site("site")          # the course of this package (see course_files), into site/index.html

The one-line descriptions on the index come from the notebooks' README table:

>>> table = '''| notebook | what it teaches |
... | --- | --- |
... | [01_tapes](01_tapes.ipynb) | Recording on a tape, `gradient()`. |'''
>>> readme_summaries(table)
{'01_tapes.ipynb': 'Recording on a tape, `gradient()`.'}
"""
from __future__ import annotations

import dataclasses
import html
import importlib.metadata
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time

from .course_files import EXERCISES, NO_COURSE, TUTORIALS, default_folder

KERNEL = "python3"
CELL_TIMEOUT_S = 120.0  # one cell; whole notebooks take seconds
TIMEOUT_S = 1200.0  # every notebook together
STATIC = "_static"
TEMPLATES = pathlib.Path(__file__).resolve().parent / "lesson_templates"
MATHJAX_PACKAGE = "jupyter_server_mathjax"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"  # the one combined configuration the package ships


class LessonError(Exception):
    """The site could not be built; the message is one line (which notebook, which cell, why)."""


@dataclasses.dataclass(frozen=True)
class Lesson:
    """One tutorial: its notebook, its page, its title and one-line summary (markdown)."""

    source: pathlib.Path
    title: str
    summary: str

    @property
    def page(self) -> str:
        return self.source.stem + ".html"


# ---------------------------------------------------------------------------
# What the site lists
# ---------------------------------------------------------------------------
def default_notebooks() -> pathlib.Path | None:
    """The course installed with this package, else ``notebooks/`` of a clone, else None."""
    return default_folder()


def readme_summaries(text: str) -> dict:
    """``{notebook path: description}`` from the markdown tables of a README (the first linked ``.ipynb``
    of a row, and the row's last cell)."""
    found = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        link = re.search(r"\]\(([^)\s]+\.ipynb)\)", cells[0])
        if link and len(cells) >= 2 and cells[-1]:
            found.setdefault(link.group(1), cells[-1])
    return found


def _first_heading_and_summary(nb) -> tuple[str, str]:
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        title, paragraph = "", []
        for line in cell.source.splitlines():
            text = line.strip()
            if not title and text.startswith("#"):
                title = text.lstrip("#").strip()
            elif title and text and not text.startswith("#"):
                paragraph.append(text)
            elif paragraph:
                break
        summary = " ".join(paragraph)
        sentence = re.match(r"(.+?[.!?])(\s|$)", summary)
        return title, (sentence.group(1) if sentence else summary)[:300]
    return "", ""


def find_lessons(folder) -> list:
    """The tutorials in ``folder``, in course order, each with its title and summary."""
    import nbformat

    folder = pathlib.Path(folder)
    readme = folder / "README.md"
    summaries = readme_summaries(readme.read_text(encoding="utf-8")) if readme.is_file() else {}
    lessons = []
    for path in sorted(folder.glob(TUTORIALS)):
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as e:  # noqa: BLE001 - one line for any unreadable notebook
            raise LessonError(f"cannot read {path.name}: {type(e).__name__}: {_one_line(e)}") from None
        title, first = _first_heading_and_summary(nb)
        lessons.append(Lesson(path, title or path.stem.replace("_", " "), summaries.get(path.name, first)))
    return lessons


# ---------------------------------------------------------------------------
# Running a notebook
# ---------------------------------------------------------------------------
def _one_line(text, limit=300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _kernel_env() -> dict:
    """The kernel imports this copy of the package, and draws plots inline whatever MPLBACKEND says here."""
    env = dict(os.environ)
    parent = str(pathlib.Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (parent, env.get("PYTHONPATH")) if p)
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    return env


def execute_notebook(path, workdir, *, cell_timeout=CELL_TIMEOUT_S, deadline=None):
    """Run a notebook in a fresh kernel with ``workdir`` as its working directory; the notebook with outputs.

    A failing cell is a :class:`LessonError` naming the notebook and the cell.  ``deadline`` is a
    ``time.monotonic()`` time that no cell may run past.
    """
    import nbclient
    import nbformat
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    path = pathlib.Path(path)
    nb = nbformat.read(path, as_version=4)
    at = {"index": None}

    def on_start(cell, cell_index):
        at["index"] = cell_index
        if deadline is not None and time.monotonic() >= deadline:
            raise LessonError(f"{path.name}: out of time before cell {cell_index + 1} (--timeout)")

    def timeout_for(cell):
        budget = cell_timeout if deadline is None else min(cell_timeout, deadline - time.monotonic())
        return max(1, int(budget))

    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout_func=timeout_for, on_cell_start=on_start,
                                     resources={"metadata": {"path": str(workdir)}})

    def where(traceback=""):
        i = at["index"]
        if i is None:
            return f"{path.name}"
        lines = nb.cells[i].source.splitlines()
        # the line that raised, from the traceback's first frame (the cell itself)
        found = re.search(r"Cell In\[\d*\], line (\d+)", re.sub(r"\x1b\[[0-9;]*m", "", traceback))
        n = int(found.group(1)) if found else 0
        if 1 <= n <= len(lines) and lines[n - 1].strip():
            return f"{path.name}, cell {i + 1}, line {n} ({_one_line(lines[n - 1].strip(), 80)})"
        first = next((line.strip() for line in lines if line.strip()), "")
        return f"{path.name}, cell {i + 1} ({_one_line(first, 80)})"

    try:
        # the kernel's own start-up warnings are noise here; its errors reach us as messages
        client.execute(env=_kernel_env(), stderr=subprocess.DEVNULL)
    except LessonError:
        raise
    except CellExecutionError as e:
        said = f": {_one_line(e.evalue)}" if str(e.evalue).strip() else ""
        raise LessonError(f"{where(e.traceback)} raised {e.ename}{said}") from None
    except CellTimeoutError:
        what = "--timeout" if deadline is not None and time.monotonic() >= deadline - 1 else "--cell-timeout"
        raise LessonError(f"{where()} did not finish in time ({what})") from None
    except DeadKernelError:
        raise LessonError(f"{where()}: the kernel died (out of memory?)") from None
    except Exception as e:  # noqa: BLE001 - no kernel, a kernel that would not start...
        raise LessonError(f"{where()}: could not run it: {type(e).__name__}: {_one_line(e)}") from None
    return nb


# ---------------------------------------------------------------------------
# MathJax, from a pip package
# ---------------------------------------------------------------------------
def mathjax_files() -> tuple:
    """``(folder, MathJax version, package version)`` of the MathJax that the site copies."""
    spec = importlib.util.find_spec(MATHJAX_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LessonError("MathJax is missing: pip install 'autodiff_viz[lessons]' (it installs "
                          "jupyter-server-mathjax)")
    folder = pathlib.Path(list(spec.submodule_search_locations)[0]) / "static"
    main = folder / "MathJax.js"
    if not main.is_file():
        raise LessonError(f"MathJax is incomplete: {main} is missing")
    version = re.search(r'MathJax\.version\s*=\s*"([^"]+)"', main.read_text(encoding="utf-8", errors="replace"))
    return folder, version.group(1) if version else "2", importlib.metadata.version("jupyter-server-mathjax")


# ---------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------
# What HTML made from markdown may keep: markdown's own tags, Pygments' highlighting (span and div with
# classes), heading ids and their anchor links, table alignment; links to the web, to mail and to the
# site's own files.  Everything else is escaped into text (strip=False), so a script never runs.
SAFE_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "table",
    "tbody", "td", "th", "thead", "tr", "ul",
})
SAFE_ATTRIBUTES = {"*": ["class", "id"], "a": ["href", "title"], "img": ["src", "alt", "title", "width", "height"],
                   "th": ["style"], "td": ["style"]}
SAFE_PROTOCOLS = frozenset({"http", "https", "mailto"})  # and relative links, which have no scheme


def _safe_html(text: str) -> str:
    """HTML made from markdown, sanitized with nh3 (the maintained successor of bleach): no script survives.

    Tags and attributes outside the lists above are removed (a script or style element with its
    content); links keep only the http, https and mailto schemes, or none (a relative link).

    >>> _safe_html('<a href="javascript:alert(1)">x</a> <a href="02.html#a">y</a> <script>z</script>')
    '<a rel="noopener noreferrer">x</a> <a href="02.html#a" rel="noopener noreferrer">y</a> '
    """
    import nh3

    return nh3.clean(text, tags=set(SAFE_TAGS), clean_content_tags={"script", "style"},
                     attributes={k: set(v) for k, v in SAFE_ATTRIBUTES.items()}, url_schemes=set(SAFE_PROTOCOLS),
                     strip_comments=True, filter_style_properties={"text-align"})


def _inline_markdown(text: str) -> str:
    """One line of markdown as HTML without the paragraph around it ("1. Title" stays a title, not a list)."""
    from nbconvert.filters import markdown2html

    text = re.sub(r"^(\d+)\.", r"\1\\.", text.strip())
    # raw HTML shows as text here (a title "a < b" stays one); code spans escape themselves
    text = "".join(part if part.startswith("`") else html.escape(part, quote=False)
                   for part in re.split(r"(`[^`]*`)", text))
    out = _safe_html(markdown2html(text).strip())
    return out[3:-4] if out.startswith("<p>") and out.endswith("</p>") else out


def _plain(text: str) -> str:
    return re.sub(r"[`*_]", "", text)


_LOCAL_REF = re.compile(r'\b(?:src|href)="([^"#?:]+)(?:[#?][^"]*)?"')


def _local_files(page: str, workdir: pathlib.Path) -> list:
    """The files of ``workdir`` that a page refers to by a relative link (pictures and pages a notebook saved)."""
    root = workdir.resolve()
    found = []
    for ref in dict.fromkeys(_LOCAL_REF.findall(page)):
        ref = html.unescape(ref)
        if ref.startswith("/"):
            continue
        target = (root / ref).resolve()
        # notebooks and scripts are published on purpose only (the lessons', the exercises'), never a solution
        if target.suffix in (".ipynb", ".py"):
            continue
        if target.is_file() and root in target.parents:
            found.append(target.relative_to(root))
    return found


def _link_lessons(page: str, lessons) -> str:
    """Links to another tutorial's ``.ipynb`` go to its page."""
    pages = {lesson.source.name: lesson.page for lesson in lessons}

    def swap(m):
        name = m.group(2)
        return m.group(1) + pages[name] if name in pages else m.group(0)

    return re.sub(r'(href=")(?:\./)?([^"/#?:]+\.ipynb)(?=["#])', swap, page)


def _exporter():
    from jinja2 import pass_context
    from nbconvert import HTMLExporter

    from .nbconvert import StaticWidgets

    class LessonExporter(HTMLExporter):
        """nbconvert's HTML, with the markdown cells sanitized (:func:`_safe_html`)."""

        @pass_context
        def markdown2html(self, context, source):
            return _safe_html(super().markdown2html(context, source))

    return LessonExporter(template_name="lab", template_file=str(TEMPLATES / "lesson_page.html.j2"),
                          preprocessors=[StaticWidgets])


def _jinja():
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True)


def build_site(outdir, notebooks=None, *, cell_timeout=CELL_TIMEOUT_S, timeout=TIMEOUT_S, only=None,
               log=None) -> pathlib.Path:
    """Run the tutorials and write the site into ``outdir``; the path of its ``index.html``.

    ``only``: names (``01_gradient_tapes`` or its file name) of the tutorials to include.  ``log`` is
    called with one line per step.  Nothing is written when a notebook fails (:class:`LessonError`).
    """
    log = log or (lambda line: None)
    notebooks = pathlib.Path(notebooks) if notebooks is not None else default_notebooks()
    outdir = pathlib.Path(outdir)
    if notebooks is None:
        raise LessonError(f"{NO_COURSE}; pass --notebooks DIR")
    if not notebooks.is_dir():
        raise LessonError(f"no notebooks folder at {notebooks} (pass --notebooks DIR)")
    if outdir.exists() and not outdir.is_dir():
        raise LessonError(f"{outdir} is not a folder")
    lessons = find_lessons(notebooks)
    if only:
        wanted = {pathlib.Path(n).stem for n in only}
        unknown = sorted(wanted - {lesson.source.stem for lesson in lessons})
        if unknown:
            raise LessonError(f"no tutorial named {', '.join(unknown)} in {notebooks}")
        lessons = [lesson for lesson in lessons if lesson.source.stem in wanted]
    if not lessons:
        raise LessonError(f"no tutorial notebooks ({TUTORIALS}) in {notebooks}")
    mathjax, mathjax_version, package_version = mathjax_files()
    exercises = sorted(notebooks.glob(EXERCISES))
    readme = notebooks / "README.md"
    summaries = readme_summaries(readme.read_text(encoding="utf-8")) if readme.is_file() else {}

    deadline = time.monotonic() + timeout
    site = {"mathjax_version": mathjax_version, "mathjax_package": f"jupyter-server-mathjax {package_version}",
            "static": STATIC, "count": len(lessons), "mathjax_config": MATHJAX_CONFIG}
    with tempfile.TemporaryDirectory(prefix="autodiff-viz-lessons-") as tmp:
        work = pathlib.Path(tmp) / "notebooks"
        # Run in a copy: notebooks save files (slides, pictures) next to themselves.
        shutil.copytree(notebooks, work, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        executed = []
        for i, lesson in enumerate(lessons, 1):
            start = time.monotonic()
            log(f"running {lesson.source.name} ({i}/{len(lessons)})")
            nb = execute_notebook(work / lesson.source.name, work, cell_timeout=cell_timeout, deadline=deadline)
            log(f"  ran in {time.monotonic() - start:.1f} s")
            executed.append(nb)

        pages, files = [], set()
        exporter = _exporter()
        for i, (lesson, nb) in enumerate(zip(lessons, executed)):
            nb.metadata["title"] = _plain(lesson.title)
            nav = {
                "number": i + 1,
                "prev": _nav(lessons[i - 1]) if i > 0 else None,
                "next": _nav(lessons[i + 1]) if i + 1 < len(lessons) else None,
                "download": f"notebooks/{lesson.source.name}",
            }
            body, _ = exporter.from_notebook_node(nb, resources={"lesson": nav, "site": site})
            body = _link_lessons(body, lessons)
            files.update(_local_files(body, work))
            pages.append((lesson, body))

        outdir.mkdir(parents=True, exist_ok=True)
        for lesson, body in pages:
            (outdir / lesson.page).write_text(body, encoding="utf-8")
            log(str(outdir / lesson.page))
        for rel in sorted(files):
            (outdir / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(work / rel, outdir / rel)
    _copy_tree(mathjax, outdir / STATIC / "mathjax")
    shutil.copyfile(TEMPLATES / "lessons.css", outdir / STATIC / "lessons.css")
    downloads = outdir / "notebooks"
    downloads.mkdir(exist_ok=True)
    for lesson in lessons:
        shutil.copyfile(lesson.source, downloads / lesson.source.name)
    listed = []
    for path in exercises:
        rel = path.relative_to(notebooks).as_posix()
        (outdir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, outdir / rel)
        listed.append({"href": rel, "name": path.stem, "summary": _inline_markdown(summaries.get(rel, ""))})
    (outdir / "LICENSES.txt").write_text(_licenses(mathjax_version, package_version), encoding="utf-8")
    shutil.copyfile(mathjax / "LICENSE", outdir / STATIC / "mathjax" / "LICENSE")
    index = outdir / "index.html"
    entries = [{"href": lesson.page, "title": _inline_markdown(lesson.title),
                "summary": _inline_markdown(lesson.summary)} for lesson in lessons]
    math = any("$" in e["title"] + e["summary"] for e in entries) or any("$" in e["summary"] for e in listed)
    index.write_text(_jinja().get_template("lesson_index.html.j2").render(
        lessons=entries, exercises=listed, site=site, math=math, markup=_markup), encoding="utf-8")
    log(str(index))
    return index


def _markup(text):
    import markupsafe

    return markupsafe.Markup(text)


def _nav(lesson) -> dict:
    return {"href": lesson.page, "title": html.escape(_plain(lesson.title))}


def _copy_tree(src: pathlib.Path, dst: pathlib.Path):
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))


def _licenses(mathjax_version, package_version) -> str:
    return (
        "Licences of what this site contains\n"
        "===================================\n\n"
        "The lessons and the step-through players: autodiff_viz, MIT licence.\n\n"
        f"_static/mathjax/: MathJax {mathjax_version}, Copyright (c) The MathJax Consortium, Apache License 2.0\n"
        "(full text in _static/mathjax/LICENSE), copied from the Python package\n"
        f"jupyter-server-mathjax {package_version} (Jupyter Development Team, BSD 3-Clause licence).\n\n"
        "The page styles inlined in each lesson page come from nbconvert's 'lab' template and JupyterLab's\n"
        "stylesheets (Jupyter Development Team, BSD 3-Clause licence).\n"
    )
