"""Presenting from the player and the inspector in a real browser: the stepping keys (a clicker's PageDown,
PageUp, Space, Backspace; arrows, Home, End) from anywhere on the page, which player owns them, full screen,
the dark themes of JupyterLab and VS Code, the inspector's layout; and the widget module loaded the way
marimo loads a plain anywidget."""
import json
import pathlib
import re

import pytest

import autodiff_viz as ad
from autodiff_viz.viz.draw.widget import css_source, esm_source, initial_state

from browser_util import open_widget_page as _open, require_chromium

pytestmark = pytest.mark.browser


def _trace():
    x, y = ad.constant(3.0), ad.constant(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch([x, y])
            z = x * y + ad.sin(x)
        tape.gradient(z, [x, y])
    return tr, x, y


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The player, the inspector, and a page with two players, saved as files."""
    require_chromium()
    pytest.importorskip("playwright")
    tr, x, y = _trace()
    out = tmp_path_factory.mktemp("presenter")
    anim = ad.viz.animate(tr, names={"x": x, "y": y})
    view = ad.viz.graph(tr).inspect()
    anim.save(out / "player.html")
    view.save(out / "inspector.html")
    two = "".join(f'<div style="margin: 40px">{anim.to_html(standalone=False)}</div>' for _ in range(2))
    (out / "two.html").write_text(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>two</title>'
                                  f'</head><body><main>{two}</main></body></html>', encoding="utf-8")
    return {"dir": out, "anim": anim, "view": view}


def _step(page, host=0) -> int:
    return int(page.locator(".adv-animate").nth(host).get_attribute("data-step"))


# (key, what it does) for a player on step 2 of n
KEYS = [("PageDown", +1), ("Space", +1), ("ArrowRight", +1), ("PageUp", -1), ("Backspace", -1),
        ("ArrowLeft", -1), ("Home", "first"), ("End", "last")]


@pytest.mark.parametrize("key, move", KEYS)
def test_each_key_steps_the_player(pages, browser, key, move):
    n = len(pages["anim"].data["steps"])
    page = _open(browser, pages["dir"] / "player.html")
    page.keyboard.press("End")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert _step(page) == 2
    page.keyboard.press(key)
    want = {"first": 0, "last": n - 1}.get(move, 2 + move if isinstance(move, int) else None)
    assert _step(page) == want
    # The step's title is the storyboard's: the key moved the whole player, not only a counter.
    assert page.locator(".adv-step-title").text_content() == pages["anim"].data["steps"][want]["title"]
    assert not page.errors
    page.close()


def test_keys_still_step_after_a_click_elsewhere_on_the_page(pages, browser):
    page = _open(browser, pages["dir"] / "player.html", height=1200)
    page.locator(".adv-next").click()
    assert _step(page) == 1
    # A click on the page outside the player (below it): the focus goes to the page itself.
    box = page.locator(".adv-animate").bounding_box()
    page.mouse.click(box["x"] + 10, box["y"] + box["height"] + 40)
    assert page.evaluate("document.activeElement === document.body")
    page.keyboard.press("PageDown")
    page.keyboard.press("Space")
    assert _step(page) == 3
    # A click on the heading (text, not a control) keeps the keys too.
    page.locator(".adv-heading").click()
    page.keyboard.press("PageUp")
    assert _step(page) == 2
    page.close()


def test_with_two_players_the_last_one_clicked_owns_the_keys(pages, browser):
    page = _open(browser, pages["dir"] / "two.html", height=1800)
    page.wait_for_function("document.querySelectorAll('.adv-host[data-ready]').length === 2")
    page.keyboard.press("PageDown")  # nobody chose a player yet: neither moves
    assert (_step(page, 0), _step(page, 1)) == (0, 0)
    page.locator(".adv-heading").nth(1).click()
    page.mouse.click(2, 2)  # then on the page margin
    page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")
    assert (_step(page, 0), _step(page, 1)) == (0, 2)
    page.locator(".adv-animate").nth(0).focus()  # focus (keyboard) claims them as a click does
    page.keyboard.press("End")
    n = len(pages["anim"].data["steps"])
    assert (_step(page, 0), _step(page, 1)) == (n - 1, 2)
    page.close()


def test_keys_leave_the_sliders_and_buttons_alone(pages, browser):
    page = _open(browser, pages["dir"] / "player.html")
    page.locator(".adv-next").focus()
    page.keyboard.press("Space")  # presses the focused button (one step), not the button and a key step
    assert _step(page) == 1
    page.locator(".adv-speed").focus()
    page.keyboard.press("ArrowRight")  # the speed menu's own key
    assert _step(page) == 1
    page.close()


STUB = """
window.__full = [];
Object.defineProperty(Document.prototype, "fullscreenEnabled", {get: () => true, configurable: true});
Element.prototype.requestFullscreen = function () { window.__full.push(this.className); return Promise.resolve(); };
"""


@pytest.mark.parametrize("name", ["player.html", "inspector.html"])
def test_full_screen_from_the_button_and_f(pages, browser, name):
    page = _open(browser, pages["dir"] / name, init=STUB)
    page.locator(".adv-full").click()
    page.mouse.click(2, 2)
    page.keyboard.press("f")
    calls = page.evaluate("window.__full")
    assert len(calls) == 2 and all("adv " in c + " " and "adv-presenter" in c for c in calls), calls
    page.close()


def test_full_screen_is_disabled_where_the_page_may_not_use_it(pages, browser):
    # As inside a sandboxed iframe without allowfullscreen: no error, a disabled button that says why.
    page = _open(browser, pages["dir"] / "player.html", init="""
        Object.defineProperty(Document.prototype, "fullscreenEnabled", {get: () => false, configurable: true});""")
    button = page.locator(".adv-full")
    assert button.is_disabled()
    assert "not available" in button.get_attribute("title")
    page.keyboard.press("f")
    page.keyboard.press("PageDown")
    assert _step(page) == 1 and not page.errors
    page.close()


def test_the_inspector_steps_through_the_nodes_with_the_same_keys(pages, browser):
    labels = [n["label"] for n in pages["view"].data["nodes"]]
    page = _open(browser, pages["dir"] / "inspector.html")
    title = page.locator(".adv-details-title")
    page.mouse.click(2, 2)
    seen = []
    for key in ["PageDown", "Space", "ArrowRight", "End", "PageUp", "Backspace", "ArrowLeft", "Home"]:
        page.keyboard.press(key)
        seen.append(title.text_content())
    assert seen == [labels[0], labels[1], labels[2], labels[-1], labels[-2], labels[-3], labels[-4], labels[0]]
    page.keyboard.press("Escape")
    assert page.locator(".adv-details").is_hidden()
    page.close()


def _rects(page):
    return page.evaluate("""() => Object.fromEntries(['.adv-inspect .adv-graph-box', '.adv-inspect .adv-side', '.adv-svg']
        .map((s) => { const r = document.querySelector(s).getBoundingClientRect(); const e = document.querySelector(s);
          return [s, {l: r.left, r: r.right, t: r.top, b: r.bottom, sh: e.scrollHeight, ch: e.clientHeight,
                      sw: e.scrollWidth, cw: e.clientWidth}]; }))""")


def test_the_inspector_is_sized_to_its_graph_with_the_details_beside_it(pages, browser):
    page = _open(browser, pages["dir"] / "inspector.html")
    page.locator("g.node").first.click()
    r = _rects(page)
    graph, side, svg = r[".adv-inspect .adv-graph-box"], r[".adv-inspect .adv-side"], r[".adv-svg"]
    assert graph["sh"] <= graph["ch"] + 1 and graph["sw"] <= graph["cw"] + 1  # no scroll box: the graph fits
    assert side["l"] >= graph["r"] - 1  # beside the graph, not over it
    natural = float(re.search(r'width="([\d.]+)pt"', pages["view"].svg).group(1)) * 4 / 3
    assert svg["r"] - svg["l"] == pytest.approx(natural, rel=0.02)  # at its own size
    page.close()
    page = _open(browser, pages["dir"] / "inspector.html", width=600)  # a narrow screen: below
    page.locator("g.node").first.click()
    r = _rects(page)
    assert r[".adv-inspect .adv-side"]["t"] >= r[".adv-inspect .adv-graph-box"]["b"] - 1
    page.close()


def _luminance(css: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio of two computed colours ("rgb(r, g, b)")."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


COLOURS = """() => { const root = document.querySelector('.adv'); const cs = getComputedStyle(root);
  const node = document.querySelector('.adv-node.adv-is-op'); const lab = node.querySelector('.adv-label');
  const line = document.querySelector('.adv-lines');
  return {bg: cs.backgroundColor, fg: cs.color, box: getComputedStyle(node.querySelector('.adv-box')).fill,
          label: getComputedStyle(lab).fill, lines: getComputedStyle(line).backgroundColor,
          linesFg: getComputedStyle(line).color}; }"""

THEMES = {
    # JupyterLab's dark theme: its body attribute and layout variables
    "jupyterlab": """document.body.dataset.jpThemeLight = "false";
        document.body.style.setProperty("--jp-layout-color0", "#111111");
        document.body.style.setProperty("--jp-ui-font-color0", "rgba(255, 255, 255, 1)");""",
    # VS Code's dark theme: its body class and editor variables
    "vscode": """document.body.classList.add("vscode-dark");
        document.body.style.setProperty("--vscode-editor-background", "#1f1f1f");
        document.body.style.setProperty("--vscode-editor-foreground", "#cccccc");""",
}


@pytest.mark.parametrize("front_end", sorted(THEMES))
def test_the_player_follows_a_dark_notebook_theme(pages, browser, front_end):
    page = _open(browser, pages["dir"] / "player.html", color_scheme="light")
    page.keyboard.press("End")
    light = page.evaluate(COLOURS)
    page.evaluate("() => {" + THEMES[front_end] + "}")
    dark = page.evaluate(COLOURS)
    for key in ("bg", "fg", "box", "label"):
        assert dark[key] != light[key], key
    assert _luminance(dark["bg"]) < 0.05 < _luminance(light["bg"])
    for fg, bg in (("fg", "bg"), ("label", "box"), ("linesFg", "lines")):
        assert contrast(dark[fg], dark[bg]) >= 4.5, (fg, dark)
        assert contrast(light[fg], light[bg]) >= 4.5, (fg, light)
    page.close()


def test_a_plain_page_follows_the_system_theme_and_a_light_notebook_wins(pages, browser):
    page = _open(browser, pages["dir"] / "player.html", color_scheme="dark")
    dark = page.evaluate(COLOURS)
    assert _luminance(dark["bg"]) < 0.05 and contrast(dark["fg"], dark["bg"]) >= 4.5
    page.evaluate("() => { document.body.dataset.jpThemeLight = 'true'; }")  # JupyterLab, light, on a dark system
    assert _luminance(page.evaluate(COLOURS)["box"]) > 0.8
    page.close()


# --- front ends ---------------------------------------------------------------------------------------

MARIMO_HOST = """
const handlers = {};
const state = %s;
const model = {get: (k) => state[k], set: (k, v) => { state[k] = v; }, save_changes: () => {
    for (const f of handlers["change:step"] || []) f(); },
  on: (name, f) => { (handlers[name] = handlers[name] || []).push(f); },
  off: (name, f) => { handlers[name] = (handlers[name] || []).filter((g) => g !== f); }};
const url = URL.createObjectURL(new Blob([%s], {type: "text/javascript"}));
const mod = await import(url);
const el = document.getElementById("out");
window.cleanup = await mod.default.render({model, el});
window.model = model;
document.body.dataset.ready = "1";
"""


def test_the_widget_module_runs_as_a_plain_anywidget(pages, browser):
    """marimo runs an anywidget's module as is: its default export's render({model, el}), with a model that has
    get/set/on/off/save_changes and no ipywidgets behind it (and no `still` argument)."""
    anim = pages["anim"]
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content('<!DOCTYPE html><html lang="en"><head><title>marimo-like</title></head>'
                     '<body><div id="out"></div></body></html>')
    page.add_style_tag(content=css_source())
    page.add_script_tag(type="module", content=MARIMO_HOST % (json.dumps(initial_state("animate", anim.data)),
                                                              json.dumps(esm_source("animate"))))
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    assert page.locator(".adv-node").count() == len(anim.data["nodes"])
    page.locator(".adv-next").click()
    page.locator(".adv-next").click()
    assert page.locator(".adv-step-title").text_content() == anim.data["steps"][2]["title"]
    # A change from the other side (Python setting the trait) redraws too.
    page.evaluate("() => { window.model.set('step', 4); window.model.save_changes(); }")
    assert page.locator(".adv-step-title").text_content() == anim.data["steps"][4]["title"]
    assert page.evaluate("typeof window.cleanup") == "function"
    assert not errors
    page.close()


def test_no_widget_uses_ipywidgets_containers():
    # marimo renders a plain anywidget but not ipywidgets' containers (VBox, HBox, Tab...): none in the package.
    package = pathlib.Path(ad.__file__).parent
    pattern = re.compile(r"\b(?:ipywidgets|widgets)\.(?:VBox|HBox|Box|GridBox|Tab|Accordion|Stack)\b"
                         r"|from\s+ipywidgets\s+import[^\n]*\b(?:VBox|HBox|Box|GridBox|Tab|Accordion|Stack)\b")
    found = [f"{p.relative_to(package)}: {m.group()}" for p in package.rglob("*.py")
             for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert found == []
    assert pattern.search("from ipywidgets import HBox, Output") and pattern.search("w = ipywidgets.VBox([a])")


def test_a_linked_player_fits_a_narrow_screen(browser, tmp_path):
    # A phone or a split screen: the linked plot scales down instead of running past the page.
    path = ad.viz.animate(lambda x: x * x + ad.sin(x), 2.0).save(tmp_path / "linked.html")
    page = _open(browser, path, width=420, height=800)
    try:
        assert page.query_selector("svg.adv-plot") is not None
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 420
        assert page.errors == []
    finally:
        page.close()
