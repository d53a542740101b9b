"""The lesson site (``autodiff-viz lessons OUTDIR``), read offline in headless Chromium.

A small course made here runs in a few seconds and is checked in detail; the real tutorials are built once
(about a minute and a half: every notebook runs) and every page is opened with the network cut off.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import tempfile

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("nbconvert")
pytest.importorskip("jupyter_server_mathjax")

from autodiff_viz import cli, lessons  # noqa: E402

from browser_util import launch, require_chromium  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LOCAL = ("file:", "data:", "about:", "blob:")  # about:blank is MathJax's own font probe, never the network


@pytest.fixture(scope="module", autouse=True)
def jupyter_home():
    """Kernels write under HOME: keep that in a temporary folder."""
    home = tempfile.mkdtemp(prefix="lessons-home-")
    old = os.environ.get("HOME")
    os.environ["HOME"] = home
    yield home
    if old is not None:
        os.environ["HOME"] = old
    shutil.rmtree(home, ignore_errors=True)


# ---------------------------------------------------------------------------
# A small course, made here
# ---------------------------------------------------------------------------
def _notebook(path, *cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
                for kind, src in cells]
    nbformat.write(nb, path)


PLAYER = '''import autodiff_viz as ad
x = ad.constant(3.0)
with ad.trace() as tr:
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
ad.viz.animate(tr, names={"x": x})'''

PLOT = '''import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot([0, 1, 2], [0, 1, 4])
fig.savefig("curve.png")
print(6 * 7)'''


def _course(folder: pathlib.Path) -> pathlib.Path:
    folder.mkdir()
    _notebook(folder / "01_first.ipynb",
              ("md", "# 1. First steps with `x` & <tapes>\n\nThe derivative of $x^2$ is $2x$. More text.\n\n"
                     "$$\\frac{d}{dx} x^3 = 3x^2$$\n\nNext: [the second lesson](02_second.ipynb#Second)."),
              ("code", PLAYER),
              ("code", PLOT),
              ("md", "The curve the notebook saved: ![a parabola](curve.png)"))
    _notebook(folder / "02_second.ipynb",
              ("md", "# 2. Second\n\nIt prints one number. And then some."),
              ("code", "print(1 + 1)"))
    (folder / "exercises").mkdir()
    _notebook(folder / "exercises" / "ex1_try.ipynb", ("md", "# Try"), ("code", "raise NotImplementedError"))
    (folder / "README.md").write_text(
        "| notebook | what it teaches |\n| --- | --- |\n"
        "| [01_first](01_first.ipynb) | A player, a plot and $x^2$. |\n\n"
        "| exercise | task |\n| --- | --- |\n| [ex1_try](exercises/ex1_try.ipynb) | Try **it**. |\n")
    return folder


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    base = tmp_path_factory.mktemp("lessons")
    course = _course(base / "course")
    index = lessons.build_site(base / "site", course)
    return index


def test_small_site_files(small_site):
    site = small_site.parent
    assert sorted(p.name for p in site.iterdir()) == [
        "01_first.html", "02_second.html", "LICENSES.txt", "_static", "curve.png", "exercises", "index.html",
        "notebooks"]
    assert (site / "_static" / "mathjax" / "MathJax.js").is_file()
    assert (site / "_static" / "mathjax" / "LICENSE").read_text().count("Apache License") >= 1
    assert "MathJax 2.7" in (site / "LICENSES.txt").read_text()
    assert (site / "exercises" / "ex1_try.ipynb").is_file()         # handed out as a download
    assert (site / "notebooks" / "01_first.ipynb").is_file()        # the lesson's notebook, to run in Jupyter
    page = (site / "01_first.html").read_text()
    # nothing from a CDN: no http(s) URL in any src or href that the browser would load by itself
    for html in [page, (site / "02_second.html").read_text(), small_site.read_text()]:
        assert not re.search(r'(?:src|href)="(?:https?:)?//', html), re.findall(r'(?:src|href)="[^"]*"', html)
    assert "require.min.js" not in page and "unpkg" not in page and "cdnjs" not in page
    assert 'href="02_second.html#Second"' in page                   # a link to a notebook goes to its page
    assert "First steps with x &amp; &lt;tapes&gt;" in (site / "02_second.html").read_text()  # previous link
    assert 'class="adv-host"' in page                               # the player's self-contained view
    assert "application/vnd.jupyter.widget-view+json" not in page


def test_index_lists_lessons_in_order_with_summaries(small_site):
    html = small_site.read_text()
    links = re.findall(r'<li><a href="([^"]+\.html)">(.*?)</a>', html)
    assert links == [("01_first.html", "1. First steps with <code>x</code> &amp; &lt;tapes&gt;"),
                     ("02_second.html", "2. Second")]
    assert "A player, a plot and $x^2$." in html                     # from the README's table
    assert "It prints one number." in html and "And then some" not in html   # else the first sentence
    assert 'href="exercises/ex1_try.ipynb" download' in html and "Try <strong>it</strong>." in html


def test_a_failing_cell_is_one_line_naming_notebook_and_cell(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    _notebook(course / "01_ok.ipynb", ("md", "# OK"), ("code", "a = 1"))
    _notebook(course / "02_broken.ipynb", ("md", "# Broken"), ("code", "a = 1"), ("code", "b = 2\nc = b / 0"))
    out = tmp_path / "site"
    assert cli.main(["lessons", str(out), "--notebooks", str(course)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("autodiff-viz: 02_broken.ipynb, cell 3, line 2 (c = b / 0) raised ZeroDivisionError: "
                       "division by zero; no site written")
    assert not out.exists()


def test_command_line_errors(tmp_path, capsys):
    assert cli.main(["lessons", str(tmp_path / "s"), "--notebooks", str(tmp_path / "none")]) == 1
    assert "no notebooks folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli.main(["lessons", str(tmp_path / "s"), "--notebooks", str(tmp_path / "empty")]) == 1
    assert "no tutorial notebooks" in capsys.readouterr().err
    assert cli.main(["lessons", str(tmp_path / "s"), "--only", "99_nothing"]) == 1
    assert capsys.readouterr().err.strip().endswith("no tutorial named 99_nothing in "
                                                    f"{lessons.default_notebooks()}; no site written")


def test_a_cell_past_its_time_limit(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    _notebook(course / "01_slow.ipynb", ("md", "# Slow"), ("code", "import time\ntime.sleep(60)"))
    with pytest.raises(lessons.LessonError, match=r"^01_slow.ipynb, cell 2 \(import time\) did not finish in "
                                                  r"time \(--cell-timeout\)$"):
        lessons.build_site(tmp_path / "site", course, cell_timeout=2)


def test_all_notebooks_past_the_total_time_limit(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    _notebook(course / "01_slow.ipynb", ("md", "# Slow"), ("code", "import time\ntime.sleep(60)"))
    with pytest.raises(lessons.LessonError, match=r"^01_slow.ipynb.* \(--timeout\)$"):
        lessons.build_site(tmp_path / "site", course, timeout=3)
    assert not (tmp_path / "site").exists()


def test_a_linked_solution_is_not_published(tmp_path):
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    _notebook(course / "solutions" / "ex1.ipynb", ("code", "answer = 42"))
    (course / "note.txt").write_text("notes")
    _notebook(course / "01_links.ipynb", ("md", "# Links\n\n[the answer](solutions/ex1.ipynb), [notes](note.txt)"))
    site = lessons.build_site(tmp_path / "site", course).parent
    assert (site / "note.txt").read_text() == "notes"
    assert not (site / "solutions").exists()


# ---------------------------------------------------------------------------
# In the browser, with the network cut off
# ---------------------------------------------------------------------------
class Offline:
    """A Chromium page that may load file: URLs only; it remembers every other request and every error."""

    def __init__(self, browser, width, height):
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.requests, self.failed, self.errors = [], [], []
        self.page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "blob:", "data:"))
                        else r.abort())
        self.page.on("request", lambda r: self.requests.append(r.url))
        # A request the page cancelled by being left (MathJax fetching a font file late) is not a failure;
        # a missing or refused file is (net::ERR_FILE_NOT_FOUND, ERR_FAILED...).
        self.page.on("requestfailed", lambda r: None if "ERR_ABORTED" in (r.failure or "") and
                     r.url.startswith("file:") else self.failed.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path_or_url):
        url = path_or_url if isinstance(path_or_url, str) else path_or_url.as_uri()
        self.page.goto(url)
        self.page.wait_for_load_state("load")

    def check_clean(self):
        """Nothing but local files was even asked for; everything asked for loaded; no script failed."""
        assert [u for u in self.requests if not u.startswith(LOCAL)] == []
        assert [u for u in self.failed if u != "about:blank"] == []
        assert self.errors == []

    def close(self):
        self.context.close()


def _wait_for_math(page) -> dict:
    """Wait until MathJax has typeset the page; how many formulas there were and how many it drew."""
    page.wait_for_function("window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 && "
                           "MathJax.Hub.queue.running === 0 && MathJax.isReady", timeout=30_000)
    # (page.evaluate has no timeout of its own: a queue that never ran its callback hung the suite)
    page.evaluate("() => new Promise((done, fail) => { MathJax.Hub.Queue(done); "
                  "setTimeout(() => fail(new Error('MathJax queue still busy after 30 s')), 30000); })")
    return page.evaluate("""() => ({
        sources: document.querySelectorAll('script[type^="math/tex"]').length,
        drawn: document.querySelectorAll('span.MathJax').length,
        errors: document.querySelectorAll('.MathJax_Error, merror').length,
        stixLoaded: Array.from(document.fonts).some(f => f.family.startsWith('STIXMathJax') && f.status === 'loaded'),
        rawDollars: /\\$[^$\\s][^$]*\\$/.test(proseText()),
    })""".replace("proseText()", PROSE))


# The text of the markdown cells outside code: a formula MathJax missed would still show its dollars there.
PROSE = """(() => {
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    let text = '';
    while (walk.nextNode()) {
        const node = walk.currentNode, el = node.parentElement;
        if (el.closest('.jp-RenderedMarkdown') && !el.closest('code, pre, script, .MathJax, .MJX_Assistive_MathML'))
            text += node.textContent + ' ';
    }
    return text;
})()"""


def _images(page) -> list:
    """``[src, naturalWidth]`` of every picture on the page, once each has loaded (or failed)."""
    page.wait_for_function("Array.from(document.images).every(i => i.complete)")
    return page.evaluate("Array.from(document.images).map(i => [i.src.slice(0, 200), i.naturalWidth])")


def _step_player(page, expect, first="Forward and backward pass, step by step"):
    """The page's first step-through player steps: one click on step ▶ shows the first forward op.

    None where the page has no player (its other views, explorers and explanations, have no steps)."""
    page.wait_for_function("Array.from(document.querySelectorAll('.adv-host')).every(h => h.dataset.ready === '1')",
                           timeout=15_000)
    players = page.locator(".adv-host:has(.adv-step-title)")
    if not players.count():
        return None
    host = players.first
    host.scroll_into_view_if_needed()
    title = host.locator(".adv-step-title")
    if first:
        expect(title).to_have_text(first)
    before = title.inner_text()
    host.locator(".adv-next").click()
    expect(title).not_to_have_text(before)
    if first:
        expect(title).to_contain_text("Forward 1/")
    return title.inner_text()


def _fits_phone(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_small_site_offline_in_chromium(small_site, tmp_path):
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    site = small_site.parent
    with sync_playwright() as p:
        browser = launch(p)
        for width, height, name in [(1366, 900, "laptop"), (390, 844, "phone")]:
            tab = Offline(browser, width, height)
            page = tab.page
            tab.open(small_site)
            assert page.title() == "Automatic differentiation you can see: lessons"
            page.screenshot(path=str(tmp_path / f"index-{name}.png"), full_page=True)
            assert _fits_phone(page)
            page.click("text=First steps with")
            assert page.url == (site / "01_first.html").as_uri()
            math = _wait_for_math(page)
            assert math["sources"] == 3 and math["drawn"] == 3 and math["errors"] == 0   # $x^2$, $2x$, $$..$$
            assert math["stixLoaded"] and not math["rawDollars"]
            assert page.title() == "1. First steps with x & <tapes>"
            assert _step_player(page, expect) == "Forward 1/1: y"  # the Mul, named as the notebook names it
            images = _images(page)
            assert len(images) == 2 and all(w > 0 for _, w in images)   # the inline plot and the saved curve.png
            assert any(src.startswith("data:image/png") for src, _ in images)
            assert any(src.endswith("curve.png") for src, _ in images)
            page.screenshot(path=str(tmp_path / f"first-{name}.png"), full_page=True)
            if name == "phone":
                assert _fits_phone(page)
                assert page.locator(".jp-InputPrompt").first.is_hidden()  # no prompt column on a phone
            page.locator(".lesson-nav-bottom .lesson-next").click()
            assert page.url == (site / "02_second.html").as_uri()
            expect(page.locator(".jp-OutputArea-output pre").first).to_have_text("2")
            _wait_for_math(page)   # as a reader would: leaving while MathJax loads would cancel its requests
            page.locator(".lesson-nav-top .lesson-prev").click()
            assert page.url == (site / "01_first.html").as_uri()
            _wait_for_math(page)
            page.locator(".lesson-nav-top .lesson-home").click()
            assert page.url == small_site.as_uri()
            tab.check_clean()
            tab.close()
        browser.close()


# ---------------------------------------------------------------------------
# Hostile markdown: no link or tag of a notebook or README runs a script on the site
# ---------------------------------------------------------------------------
HOSTILE = ("[js](javascript:alert('md1')) [JS](JAVASCRIPT:alert('md2')) [tab](jav&#x09;ascript:alert('md3')) "
           "[data](data:text/html,<script>alert('md4')</script>) [vb](vbscript:msgbox('md5')) "
           "<a href=\"javascript:alert('raw1')\">raw</a> <a href=\" &#106;avascript:alert('raw2')\">ent</a> "
           "<a href='#' onclick=\"alert('raw3')\">onclick</a> <script>alert('raw4')</script> "
           "<img src=x onerror=\"alert('raw5')\"> <svg><script>alert('raw6')</script></svg> "
           "<iframe srcdoc=\"<script>parent.alert('raw7')</script>\"></iframe> "
           "<details open ontoggle=\"alert('raw8')\">d</details> <form action=\"javascript:alert('raw9')\">"
           "<button>go</button></form> <math><mtext><table><mglyph><style><img src=x onerror=alert('raw10')>"
           "</style></mglyph></table></mtext></math> "
           "[web](https://example.org/page) [mail](mailto:someone@example.org) [next](02_calm.ipynb)")


def _hostile_course(folder: pathlib.Path) -> pathlib.Path:
    folder.mkdir()
    _notebook(folder / "01_hostile.ipynb",
              ("md", "# 1. Hostile <img src=x onerror=\"alert('title')\"> [t](javascript:alert('title2'))\n\n"
                     + HOSTILE),
              ("code", "print(6 * 7)"),
              ("md", "## More\n\n" + HOSTILE))
    _notebook(folder / "02_calm.ipynb", ("md", "# 2. Calm\n\nNothing here."), ("code", "print(1)"))
    (folder / "exercises").mkdir()
    _notebook(folder / "exercises" / "ex1_try.ipynb", ("md", "# Try"), ("code", "pass"))
    (folder / "README.md").write_text(
        "| notebook | what it teaches |\n| --- | --- |\n"
        "| [01_hostile](01_hostile.ipynb) | [sum](javascript:alert('readme1')) "
        "<img src=x onerror=\"alert('readme2')\"> <a href=\"javascript:alert('readme3')\">a</a> |\n\n"
        "| exercise | task |\n| --- | --- |\n"
        "| [ex1_try](exercises/ex1_try.ipynb) | [go](javascript:alert('readme4')) <script>alert('readme5')</script> |\n")
    return folder


def test_markdown_is_sanitized_and_clicking_every_link_runs_no_script(tmp_path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    index = lessons.build_site(tmp_path / "site", _hostile_course(tmp_path / "course"))
    site = index.parent
    pages = [index, site / "01_hostile.html", site / "02_calm.html"]
    for path in pages:   # in the files themselves: no live script link, no script or handler from markdown
        text = path.read_text()
        # (inside real tags: the same words escaped into text are harmless and expected)
        assert not re.search(r'<[^<>]*\b(?:href|src|action)\s*=\s*["\']?\s*(?:javascript|vbscript|data:text)',
                             text, re.I)
        assert not re.search(r"<[^<>]*\bon(?:error|click|toggle|load)\s*=", text, re.I)
        assert "alert('raw4')</script>" not in text and "<iframe" not in text
    hostile = (site / "01_hostile.html").read_text()
    assert hostile.count('href="https://example.org/page"') == 2 and 'href="mailto:someone@example.org"' in hostile
    assert 'href="02_calm.html"' in hostile   # a relative link to a lesson still goes to its page
    assert "raw4" not in hostile   # a raw script element in markdown is removed with its content
    dialogs, clicked = [], 0
    with sync_playwright() as p:
        browser = launch(p)
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        # local files only (a click on a web link is refused, not sent); every page, popups too, reports dialogs
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
                      else r.abort())
        context.on("page", lambda pg: pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss())))
        for path in pages:
            page = context.new_page()
            page.goto(path.as_uri())
            hrefs = page.evaluate("Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))")
            assert not [h for h in hrefs if h and re.match(r"\s*(javascript|vbscript|data):", h, re.I)]
            inline = page.evaluate("""Array.from(document.querySelectorAll('.jp-MarkdownCell *, li *, li'))
                .flatMap(el => Array.from(el.attributes).map(a => a.name)).filter(n => n.startsWith('on'))""")
            assert inline == []
            assert page.evaluate("document.querySelectorAll('.jp-MarkdownCell script, iframe, form').length") == 0
            page.wait_for_timeout(200)   # the images and the details of the hostile markdown had their chance
            page.close()
            for i in range(len(hrefs)):   # every link, each clicked on a freshly opened page
                page = context.new_page()
                page.goto(path.as_uri())
                page.evaluate("i => document.querySelectorAll('a')[i].click()", i)
                page.wait_for_timeout(100)
                clicked += 1
                page.close()
        context.close()
        browser.close()
    assert clicked >= 30
    assert dialogs == []


# ---------------------------------------------------------------------------
# The real course: every tutorial runs, every page opens offline
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def full_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "site"
    assert cli.main(["lessons", str(out)]) == 0
    return out


@pytest.mark.slow
def test_full_site_lists_every_tutorial(full_site, capsys):
    tutorials = sorted(NOTEBOOKS.glob(lessons.TUTORIALS))
    assert len(tutorials) >= 8
    html = (full_site / "index.html").read_text()
    assert re.findall(r'<li><a href="([^"]+)\.html">', html) == [p.stem for p in tutorials]
    for path, lesson in zip(tutorials, lessons.find_lessons(NOTEBOOKS)):
        assert lesson.source == path and lesson.title and not lesson.title.startswith("#")
        assert (full_site / f"{path.stem}.html").is_file()
    assert not (full_site / "solutions").exists()                   # the exercises' answers are not published
    exercises = sorted(p.name for p in (NOTEBOOKS / "exercises").glob("*.ipynb"))
    assert sorted(p.name for p in (full_site / "exercises").glob("*.ipynb")) == exercises


@pytest.mark.slow
@pytest.mark.browser
def test_full_site_offline_in_chromium(full_site, tmp_path):
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    pages = sorted(p.stem for p in NOTEBOOKS.glob(lessons.TUTORIALS))
    stepped, formulas = [], 0
    with sync_playwright() as p:
        browser = launch(p)
        tab = Offline(browser, 1366, 900)
        page = tab.page
        tab.open(full_site / "index.html")
        for i, stem in enumerate(pages):
            if i == 0:
                page.locator(f'a[href="{stem}.html"]').first.click()   # from the index...
            else:
                page.locator(".lesson-nav-bottom .lesson-next").click()   # ...then lesson after lesson
            assert page.url == (full_site / f"{stem}.html").as_uri()
            math = _wait_for_math(page)
            assert math["drawn"] == math["sources"] and math["errors"] == 0, (stem, math)
            assert not math["rawDollars"], stem
            formulas += math["drawn"]
            assert all(w > 0 for _, w in _images(page)), (stem, _images(page))
            title = _step_player(page, expect, first=None)
            if title:
                stepped.append((stem, title))
        assert page.locator(".lesson-nav-bottom a.lesson-next").count() == 0   # the last lesson
        assert stepped, "no lesson has a step-through player"
        assert formulas > 0, "no formula was typeset"
        tab.check_clean()
        page.set_viewport_size({"width": 390, "height": 844})
        page.reload()
        _wait_for_math(page)
        assert _fits_phone(page)
        page.screenshot(path=str(tmp_path / f"{pages[-1]}-phone.png"))
        tab.close()
        browser.close()
