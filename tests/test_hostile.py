"""Hostile user text (names, scopes, titles, notes) in every output: DOT, SVG, PNG, PDF, HTML, GIF frames.

Each string is used as a variable name, a name scope, a graph title, a note,
an animation title and an animation name.  Nothing may raise, no markup may
survive unescaped, long text comes out shortened, and in headless Chromium no
click or page load opens a dialog.
"""
import doctest
import functools
import html
import io
import json
import re
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import autodiff_viz as ad
from autodiff_viz.viz.text import labels as L

from browser_util import launch, require_chromium

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
LONG = "n" * 20_000
# A title that ends the HTML-like label, adds a node whose link runs a script, then reopens a label
# so the DOT text stays valid.  Before titles were escaped it drew a javascript: link.
INJECT = 'x</td></tr></table>>; n9 [URL="javascript:alert(1)" label="click"]; label=<<table><tr><td>'

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "]; evil [",
    '"',
    '\\"',
    "scope\\",
    "nul\x00byte",
    "bell\x07 esc\x1b[31m del\x7f c1\x85\x9b tab\there",
    "$\\foo$",
    "$x^2$",
    "{}",
    "&amp;",
    "javascript:alert(1)",
    'x"]; n9 [URL="javascript:alert(1)" label="click',
    INJECT,
    "> <",
    "\u202eevil\u202c",
    "\\N \\G \\L \\n",
    "</script><script>alert(1)</script><!--",
    "one\ntwo\r\nthree",
    "lone \ud800 surrogate",
    LONG,
]
IDS = [repr(h)[:24] if h is not LONG else "20000 chars" for h in HOSTILE]
# Strings whose cleaned text is short and plain enough to find verbatim in the output.
VERBATIM = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "]; evil [", "$\\foo$", "&amp;",
            "javascript:alert(1)", "> <", "{}"]
FORBIDDEN_TAGS = {"script", "foreignObject", "iframe", "image", "img", "object", "embed"}


def _svg_texts(root) -> list:
    return [t.text or "" for t in root.iter(SVG + "text")]


def _check_svg(svg: str) -> ET.Element:
    """Well-formed, no script-bearing elements or attributes, no javascript: link, every text run short."""
    root = ET.fromstring(svg)
    for el in root.iter():
        assert el.tag.split("}")[-1] not in FORBIDDEN_TAGS, el.tag
        for name, value in el.attrib.items():
            local = name.split("}")[-1].lower()
            assert not local.startswith("on"), (name, value)
            if local == "href":
                assert not value.strip().lower().startswith("javascript:"), value
    for text in _svg_texts(root):
        assert len(text) <= L.TITLE_LIMIT + 1, len(text)
    return root


@functools.lru_cache(maxsize=None)  # the browser test shows the same graphs (each renders its SVG once)
def _hostile_graphs(h):
    """The graph, the folded graph and the explanation of one hostile string in every user-text slot."""
    x = ad.Variable(2.0, name=h)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            with ad.name_scope(h):
                y = x * x + 1.0
        tape.gradient(y, x)
    v = ad.Variable(3.0, name=h, trainable=False)
    with ad.GradientTape() as t2:
        z = v * 2.0
    return [ad.viz.graph(tr, title=h, mark={y: h}),
            ad.viz.graph(tr, collapse=True, title=h),
            ad.viz.explain(t2, z, v).graph]  # its remarks quote the name


# -- the label rules -------------------------------------------------------------------------------------------
def test_labels_docstring_examples_run():
    result = doctest.testmod(L, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 10


class _Broken:
    def __str__(self):
        raise RuntimeError("no str")

    def __repr__(self):
        raise RuntimeError("no repr")


class _Sub(str):
    def __str__(self):
        raise RuntimeError("no str")


@pytest.mark.parametrize("obj, expected", [
    (None, ""), (b"a\x00\xff", "a\\xff"), (bytearray(b"ok"), "ok"), (memoryview(b"mv"), "mv"), (3.5, "3.5"),
    (_Broken(), "<_Broken>"), (_Sub("sub\x00"), "sub"), ("a\tb\nc\u2028d", "a b c d"), ("\u202eab\u2066", "ab"),
    ("x\ud800y\ufffe", "xy"),
])
def test_clean_never_raises_and_drops_control_characters(obj, expected):
    out = L.clean(obj)
    assert type(out) is str and out == expected
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]", out)


def test_shorten_keeps_both_ends_of_a_name_and_the_start_of_prose():
    name = "encoder/" + "x" * 100 + "/dense_3/kernel"
    short = L.shorten(name, L.LINE_LIMIT)
    assert len(short) == L.LINE_LIMIT and short.count("…") == 1
    assert short.startswith("encoder/") and short.endswith("/dense_3/kernel")
    assert L.shorten("a title that goes on", 8, "end") == "a title…"
    assert L.shorten(LONG, 1) == "…" and L.shorten(LONG, 0) == "" and L.shorten("abc", 3) == "abc"
    assert L.lines("a\nb\nc\nd", 10, max_lines=2) == ["a", "b…"]
    assert L.for_dot_string("a\\") == "a\u29f5"  # a trailing backslash cannot swallow the closing quote
    assert L.for_dot_html("\\N") == "\\\\N"  # Graphviz reads this as a backslash and N, not the node name


# -- DOT, SVG, PNG, PDF --------------------------------------------------------------------------------------------
def test_graph_source_escapes_everything_without_graphviz():
    for h in HOSTILE:
        for g in _hostile_graphs(h):
            src = g.source
            assert "<script" not in src and "<img" not in src and "\x00" not in src
            assert 'URL="' not in src and "URL=" not in src.replace("URL=&quot;", "")  # injected titles stay text
            assert len(src) < 40_000  # the 20,000-character name is not in it, three times over
            assert max(len(line) for line in src.splitlines()) < 16_384  # Graphviz's limit on a label


@needs_dot
@pytest.mark.parametrize("h", HOSTILE, ids=IDS)
def test_graph_renders_to_svg_png_pdf(h, tmp_path):
    from PIL import Image

    graphs = _hostile_graphs(h)
    for k, g in enumerate(graphs):
        svg = g.save(tmp_path / f"g{k}.svg").read_text(encoding="utf-8")
        root = _check_svg(svg)
        nodes = [el for el in root.iter(SVG + "g") if el.get("class") == "node"]
        assert len(nodes) == len(g.model.nodes)  # no node injected by a title or a name
        texts = " ".join(_svg_texts(root))
        if h in VERBATIM and k < 2:
            assert h in texts  # the text is shown as typed
        if h is LONG:
            assert "…" in texts and "n" * (L.TITLE_LIMIT + 1) not in texts
    g = graphs[0]
    texts = _svg_texts(ET.fromstring(g.svg()))
    if h == "\\N \\G \\L \\n":  # no Graphviz escape is expanded, in the title or in the tooltip
        assert h in texts
        tips = [a.get(XLINK + "title") for a in ET.fromstring(g.svg()).iter(SVG + "a")]
        assert any(t and t.startswith(h.replace("\\", "\u29f5")) for t in tips), tips  # a look-alike backslash
    if h == "scope\\":
        assert any(t == h for t in texts)  # the scope's cluster label, backslash and all
    png = g.save(tmp_path / "g.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(io.BytesIO(png)) as im:
        assert im.width < 2_500 and im.height < 2_500  # a long name does not make a huge picture
    assert g.save(tmp_path / "g.pdf").read_bytes()[:5] == b"%PDF-"


@needs_dot
def test_injected_title_draws_no_link():
    x = ad.Variable(1.0, name="x")
    with ad.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    svg = ad.viz.graph(tape, title=INJECT).svg()
    root = _check_svg(svg)
    assert not [a for a in root.iter(SVG + "a") if a.get(XLINK + "href") or a.get("href")]
    assert INJECT in " ".join(_svg_texts(root))


def test_rankdir_is_checked():
    x = ad.Variable(1.0, name="x")
    with ad.GradientTape() as tape:
        x * x
    with pytest.raises(ValueError, match="rankdir"):
        ad.viz.graph(tape, rankdir='LR]; n9 [URL="javascript:alert(1)"')
    assert "rankdir=TB" in ad.viz.graph(tape, rankdir="tb").source


def test_deep_scopes_fold_into_one_cluster():
    from autodiff_viz.viz.draw.dot import MAX_SCOPE_DEPTH

    x = ad.Variable(1.0, name="x")
    with ad.GradientTape() as tape:
        with ad.name_scope("/".join(f"s{i}" for i in range(300))):
            x * x
    src = ad.viz.graph(tape).source
    assert src.count("subgraph cluster_s") == MAX_SCOPE_DEPTH


# -- HTML and animation frames ---------------------------------------------------------------------------------
class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.title = [], [], ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def _traced(name):
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            y = x * x + 1.0
        tape.gradient(y, x)
    return tr, x


def _hostile_animation(h):
    tr, x = _traced("x")
    return ad.viz.animate(tr, title=h, names={h: x})


def _check_page(text: str, h) -> _Tags:
    p = _Tags()
    p.feed(text)
    assert set(p.tags) <= {"html", "head", "meta", "title", "body", "main", "noscript", "div", "style", "script", "img"}
    assert p.tags.count("script") == 1 and "img" not in p.tags  # no fallback image asked for here
    assert not [a for a in p.attrs if a[0].startswith("on")]
    assert not [a for a in p.attrs if a[0] in ("href", "src", "action") and "javascript:" in (a[1] or "").lower()]
    assert p.title == L.shorten(L.clean(h), L.TITLE_LIMIT, "end")
    script = text.split('<script type="module">', 1)[1].rsplit("</script>", 1)[0]
    assert "</script" not in script.lower() and "<!--" not in script
    state = re.search(r"^const state = (.*);$", script, flags=re.M).group(1)
    # The storyboard holds the title cleaned and shortened; the page escapes what it writes.
    assert json.loads(state)["data"]["title"] == L.shorten(L.clean(h), L.TITLE_LIMIT, "end")
    return p


@pytest.mark.parametrize("h", HOSTILE, ids=IDS)
def test_animation_html_escapes_title_and_names(h):
    anim = _hostile_animation(h)
    assert any(n["label"] == L.shorten(L.clean(h)) for n in anim.nodes)  # the storyboard holds clean, short text
    assert anim.data["title"] == L.shorten(L.clean(h), L.TITLE_LIMIT, "end")
    _check_page(anim.to_html(), h)


def test_widget_html_checks_fallback_image():
    from autodiff_viz.viz.draw.html import widget_html

    data = _hostile_animation("x").data
    with pytest.raises(ValueError, match="base64"):
        widget_html("animate", data, fallback_png='x" onerror="alert(1)')
    page = widget_html("animate", data, alt='"><script>alert(1)</script>' + LONG, fallback_png="iVBORw0KGgo=")
    alt = re.search(r'<img class="adv-fallback" alt="([^"]*)"', page).group(1)
    assert html.unescape(alt).startswith('"><script>alert(1)</script>nnn') and len(html.unescape(alt)) == L.ALT_LIMIT


@pytest.mark.parametrize("h", ["$\\foo$", "$x^2$", "{}", "bell\x07 esc\x1b[31m", "nul\x00byte", "\u202eevil",
                               "one\ntwo", LONG], ids=["mathtext", "superscript", "braces", "controls", "nul", "rtl",
                                                       "newline", "long"])
def test_animation_frame_shows_text_as_typed(h, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text
    from PIL import Image

    from autodiff_viz.viz.draw.frames import FrameRenderer

    anim = _hostile_animation(h)
    r = FrameRenderer(anim.data)
    try:
        for i in (0, len(anim) - 1):
            r.draw(i)
            r.fig.savefig(tmp_path / f"f{i}.png")
            texts = [t for t in r.fig.findobj(Text) if t.get_text()]
            for t in texts:
                assert not t.get_usetex() and not t._parse_math, t.get_text()
                assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", t.get_text()), t.get_text()
                assert len(t.get_text()) < 2_000
        renderer = r.fig.canvas.get_renderer()
        (n, box, lab, *_rest) = next(row for row in r.nodes if row[0]["label"] == L.shorten(L.clean(h)))
        shown = L.clean(h)
        if len(shown) <= 12:
            assert lab.get_text() == shown  # "$\foo$" stays "$\foo$": no mathtext
        else:
            assert "…" in lab.get_text() and len(lab.get_text()) < 30
        assert lab.get_window_extent(renderer).width <= box.get_window_extent(renderer).width
        assert r.heading.get_text() == L.shorten(shown, L.TITLE_LIMIT, "end") or (
            "…" in r.heading.get_text() and r.heading.get_window_extent(renderer).x1 <= r.fig.bbox.x1)
    finally:
        plt.close(r.fig)
    with Image.open(tmp_path / "f0.png") as im:
        assert im.width < 3_000
    anim.frame(1, tmp_path / "frame.png")
    assert (tmp_path / "frame.png").read_bytes()[:4] == b"\x89PNG"


def test_gif_with_mathtext_names(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0, names=["$\\foo$", "$x^2$"], title="$\\bar{x$")
    anim.save(tmp_path / "a.gif", fps=10, dpi=40)
    with Image.open(tmp_path / "a.gif") as im:
        assert im.n_frames == len(anim)


def test_plot_title_is_not_mathtext():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig = ad.viz.plot_derivatives(ad.sin, (-1, 1), order=1, title="$\\foo$ \x00" + LONG)
    try:
        fig.canvas.draw()
        title = fig.axes[0].get_title()
        assert title.startswith("$\\foo$ n") and len(title) == L.TITLE_LIMIT and "\x00" not in title
    finally:
        plt.close(fig)


# -- in a browser ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    p = sync_playwright().start()
    b = launch(p)
    yield b
    b.close()
    p.stop()


def _open(browser):
    """A page with no network, and the dialogs and script errors it sees."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    dialogs, errors = [], []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route("**/*", lambda route: route.abort() if not route.request.url.startswith(("file:", "blob:", "data:"))
               else route.continue_())
    return page, dialogs, errors


# Clicks every <a> in an SVG with a click event (which follows a link as a mouse click does: the canary
# below checks it), all in one call; then the number of links clicked.
_CLICK_LINKS = """() => { const links = [...document.querySelectorAll('svg a')];
    for (const a of links) a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
    return links.length; }"""
# Event-handler attributes, and javascript: URLs in attributes that hold a URL.
_JS_LINKS = """() => [...document.querySelectorAll('*')].flatMap((el) => [...el.attributes]
    .filter((a) => /^on/i.test(a.name) || (/(^|:)(href|src|action|formaction)$/i.test(a.name)
                                          && /^\\s*javascript:/i.test(a.value)))
    .map((a) => el.tagName + ' ' + a.name))"""


def _click_all(page, mouse_first: int = 0) -> int:
    """Click every SVG link (the first ``mouse_first`` with the mouse too); the page must not navigate."""
    start = page.url
    links = page.locator("svg a")
    for i in range(min(mouse_first, links.count())):
        links.nth(i).click(force=True, timeout=5_000)
    n = page.evaluate(_CLICK_LINKS)
    page.wait_for_timeout(300)  # a javascript: URL runs after the click returns
    assert page.url == start
    return n


@pytest.mark.browser
@needs_dot
def test_svgs_in_a_page_click_without_dialogs(browser, tmp_path):
    page, dialogs, errors = _open(browser)
    # The listener and both ways of clicking work: a javascript: link in an SVG opens a dialog.
    page.set_content('<svg width="200" height="50"><a href="javascript:alert(\'canary\')">'
                     '<rect width="200" height="50"/></a></svg>')
    assert _click_all(page, mouse_first=1) == 1
    assert dialogs == ["canary", "canary"]
    dialogs.clear()

    svgs = []
    for h in [INJECT] + HOSTILE:  # the DOT-injection title first: its links are also clicked with the mouse
        for g in _hostile_graphs(h):
            svg = g.svg()
            svgs.append(svg[svg.index("<svg"):])
    path = tmp_path / "graphs.html"
    path.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>graphs</title></head><body>'
                    + "\n".join(svgs) + "</body></html>", encoding="utf-8")
    page.goto(path.as_uri())
    assert page.locator("body > svg").count() == len(svgs)
    assert page.locator("script, img, iframe, foreignObject").count() == 0
    assert page.evaluate(_JS_LINKS) == []
    clicked = _click_all(page, mouse_first=4)
    assert clicked >= len(svgs)  # node tooltips make Graphviz wrap each node in <a>
    assert dialogs == [] and errors == []
    page.close()


@pytest.mark.browser
def test_animation_pages_load_and_play_without_dialogs(browser, tmp_path):
    from playwright.sync_api import expect

    page, dialogs, errors = _open(browser)
    # Saved pages, one per string that means something to HTML or to a browser's text layout.
    for k, h in enumerate(["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', INJECT,
                           "</script><script>alert(1)</script><!--", "\u202eevil\u202c", "nul\x00byte", LONG]):
        path = tmp_path / f"a{k}.html"
        _hostile_animation(h).save(path)
        page.goto(path.as_uri())
        page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
        assert page.title() == " ".join(L.shorten(L.clean(h), L.TITLE_LIMIT, "end").split())  # spaces collapse
        if h in VERBATIM:
            expect(page.locator(".adv-step-title")).to_have_text(h)  # shown as text
        page.click(".adv-next")
        assert page.locator("script").count() == 1 and page.locator("img, iframe").count() == 0
        assert page.evaluate(_JS_LINKS) == []
        _click_all(page)
        assert dialogs == [] and errors == [], (h[:40], dialogs, errors)
    # Every string, each in its own player, all on one page (as a notebook shows them).
    path = tmp_path / "all.html"
    path.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>all</title></head><body>'
                    + "\n".join(_hostile_animation(h).to_html(standalone=False) for h in HOSTILE)
                    + "</body></html>", encoding="utf-8")
    page.goto(path.as_uri())
    hosts = page.locator(".adv-host")
    expect(page.locator(".adv-host[data-ready='1']")).to_have_count(len(HOSTILE), timeout=20_000)
    for k, h in enumerate(HOSTILE):
        host = hosts.nth(k)
        if h in VERBATIM:
            expect(host.locator(".adv-step-title")).to_have_text(h)
            expect(host.locator(".adv-label", has_text=h).first).to_be_visible()
        host.locator(".adv-next").click()
    assert page.locator("script").count() == len(HOSTILE) and page.locator("img, iframe").count() == 0
    assert page.evaluate(_JS_LINKS) == []
    _click_all(page)
    assert dialogs == [] and errors == []
    page.close()
