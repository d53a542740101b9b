"""Accessibility: meaning never carried by colour alone (the pictures in greyscale), the player's steps
read out (aria-live), each graph's text alternative, keyboard-only use, and an axe-core audit of the
player, the inspector and the explorer pages in headless Chromium."""
import io
import itertools
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.draw.look import LOOKS
from autodiff_viz.viz.model.alt import text_alternative

from browser_util import open_widget_page as _open, require_chromium

MARKS = ("target", "path", "received")


def _trace():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x + ad.sin(x)
        tape.gradient(y, x)
    return tr, x


def test_marks_differ_by_more_than_colour_in_the_look_table():
    def cue(role):
        return LOOKS[role].dash, LOOKS[role].width, LOOKS[role].cue

    for a, b in itertools.combinations(MARKS, 2):
        assert cue(a) != cue(b), (a, b)
        # not only a width a reader must compare: a dash or a shape cue differs, or the width by a third
        assert (LOOKS[a].dash != LOOKS[b].dash or LOOKS[a].cue != LOOKS[b].cue
                or abs(LOOKS[a].width - LOOKS[b].width) >= LOOKS[b].width / 3), (a, b)
    assert LOOKS["source"].cue == "double" and LOOKS["target"].cue != "double"


def _grey_of(png: bytes, colours: dict) -> dict:
    """The mean greyscale level (Pillow's 'L') of the pixels drawn in each colour (within antialiasing)."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    rgb = np.asarray(img, dtype=float)
    grey = np.asarray(img.convert("L"), dtype=float)
    out = {}
    for name, hex_colour in colours.items():
        want = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
        near = np.linalg.norm(rgb - want, axis=2) < 30
        assert near.sum() > 20, f"no {name} border in the picture"
        out[name] = grey[near].mean()
    return out


def test_a_graph_in_greyscale_tells_the_target_from_the_path():
    tr, _ = _trace()
    png = ad.viz.graph(tr).pipe("png")
    grey = _grey_of(png, {m: LOOKS[m].border for m in ("target", "path")})
    assert abs(grey["target"] - grey["path"]) > 25, grey


def test_a_player_frame_in_greyscale_tells_the_target_from_a_received_gradient(tmp_path):
    tr, x = _trace()
    anim = ad.viz.animate(tr, names={"x": x})
    target = next(n["id"] for n in anim.data["nodes"] if n["role"] == "target")
    # a step where some other box just received a gradient while the target shows its own border
    k = next(i for i, st in enumerate(anim.data["steps"]) if st["recv"] and target not in st["recv"]
             and st["node"] != target)
    anim.frame(k, tmp_path / "frame.png")
    grey = _grey_of((tmp_path / "frame.png").read_bytes(), {m: LOOKS[m].border for m in ("target", "received")})
    assert abs(grey["target"] - grey["received"]) > 25, grey


def test_the_text_alternative_lists_each_op_with_its_value_and_gradient():
    tr, _ = _trace()
    view = ad.viz.graph(tr).inspect()
    lines = text_alternative(view.data)
    assert [ln.split(". ", 1)[1].split(":", 1)[0] for ln in lines] == [n["label"] for n in view.data["nodes"]]
    by_label = {ln.split(". ", 1)[1].split(":", 1)[0]: ln for ln in lines}
    # x² + sin x at 3: Mul = 9, Sin = sin 3, the target (Add) 9 + sin 3; its derivative 2x + cos x
    assert f"value {np.sin(3.0):.5g}" in by_label["Sin"]
    assert f"value {9.0:.1f}" in by_label["Mul"]
    assert f"value {9 + np.sin(3.0):.5g}" in by_label["Add"]
    assert f": {6 + np.cos(3.0):.5g}" in by_label["x"] and "gradient" in by_label["x"]
    assert "the target" in by_label["Add"] and "the source" in by_label["x"]


# --- in the browser -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    require_chromium()
    pytest.importorskip("playwright")
    tr, x = _trace()
    out = tmp_path_factory.mktemp("a11y")
    anim = ad.viz.animate(tr, names={"x": x})
    view = ad.viz.graph(tr).inspect()
    anim.save(out / "player.html")
    view.save(out / "inspector.html")
    ad.viz.explore(lambda x: x * x, x=(-2.0, 2.0), points=5).save(out / "explore.html")
    ad.viz.animate(lambda x: ad.sin(x) * x, 1.0, points=5).save(out / "linked.html")  # with its plot
    ad.viz.explore(lambda x, y: x * x + y * y, x=(-2.0, 2.0), y=(-2.0, 2.0), points=5).save(out / "explore2.html")
    return {"dir": out, "anim": anim, "view": view}


@pytest.mark.browser
def test_the_player_reads_each_step_aloud(pages, browser):
    steps = pages["anim"].data["steps"]
    page = _open(browser, pages["dir"] / "player.html")
    live = page.locator("[aria-live='polite'].adv-spoken")
    assert live.count() == 1
    said = []
    for k in range(len(steps)):
        said.append(live.text_content())
        page.keyboard.press("PageDown")
    # The storyboard's words for each step, nothing written in the page
    assert said == [". ".join([st["title"], *st["lines"]]) for st in steps]
    assert len(set(said)) == len(said)
    assert any("+=" in s or "sent" in s for s in said)  # the backward steps say what each gradient received
    # visually hidden, yet in the page for screen readers
    box = live.bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1
    page.close()


@pytest.mark.browser
def test_the_players_source_has_a_double_border_and_the_target_a_single_thick_one(pages, browser):
    page = _open(browser, pages["dir"] / "player.html")
    page.keyboard.press("End")
    rings = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('.adv-node')].map((g) => {
        const cs = getComputedStyle(g.querySelector('.adv-ring'));
        return [g.dataset.label, cs.display !== 'none' && cs.stroke !== 'none' && parseFloat(cs.strokeWidth) > 0];
      }))""")
    roles = {n["label"]: n["role"] for n in pages["anim"].data["nodes"]}
    assert {label for label, ring in rings.items() if ring} == {k for k, r in roles.items() if r == "source"} != set()
    page.close()


@pytest.mark.browser
@pytest.mark.parametrize("name", ["player.html", "inspector.html"])
def test_each_widget_carries_the_graphs_text_alternative(pages, browser, name):
    data = pages["view"].data if name == "inspector.html" else pages["anim"].data
    page = _open(browser, pages["dir"] / name)
    items = page.locator("ol.adv-sr li").all_text_contents()
    assert items == text_alternative(data)
    assert len(items) == len(data["nodes"])
    assert page.locator("ol.adv-sr").get_attribute("aria-label")
    page.close()


def _tab_through(page, n=80):
    seen = []
    for _ in range(n):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("""() => { const e = document.activeElement; const cs = getComputedStyle(e);
            return {key: e.className.baseVal !== undefined ? 'node:' + e.dataset.id : e.className + '|' +
                    (e.getAttribute('aria-label') || e.textContent),
                    outline: cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2,
                    glow: e.className.baseVal !== undefined}; }"""))
    return seen


@pytest.mark.browser
@pytest.mark.parametrize("name", ["player.html", "inspector.html", "explore.html", "explore2.html"])
def test_keyboard_only_every_control_takes_the_focus_and_shows_it(pages, browser, name):
    page = _open(browser, pages["dir"] / name)
    controls = page.evaluate("""() => [...document.querySelectorAll('.adv button:not([disabled]), .adv input, .adv select')]
        .filter((e) => e.getClientRects().length > 0).map((e) => e.className + '|' + (e.getAttribute('aria-label') || e.textContent))""")
    seen = _tab_through(page)
    keys = {s["key"] for s in seen}
    assert set(controls) <= keys, set(controls) - keys
    # the focus shows: a 2 px outline on controls (nodes glow, which the player's own tests look at)
    assert all(s["outline"] for s in seen if s["key"] in controls), [s for s in seen if not s["outline"]]
    if name != "explore.html" and name != "explore2.html":
        nodes = pages["view" if name == "inspector.html" else "anim"].data["nodes"]
        assert {f"node:{n['id']}" for n in nodes} <= keys  # every node, by Tab
    page.close()


@pytest.fixture(scope="session")
def axe_script(tmp_path_factory):
    """axe-core's script, from npm (installed once into a scratch folder)."""
    scratch = pathlib.Path(os.environ.get("AUTODIFF_VIZ_SCRATCH") or tmp_path_factory.getbasetemp()) / "axe"
    js = scratch / "node_modules" / "axe-core" / "axe.min.js"
    if not js.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed (apt-get install npm): the audit needs axe-core from npm")
        subprocess.run([npm, "install", "--prefix", str(scratch), "--no-audit", "--no-fund", "--silent",
                        "axe-core@4"], check=True, timeout=600, capture_output=True)
    return js.read_text(encoding="utf-8")


@pytest.mark.browser
@pytest.mark.parametrize("name", ["player.html", "inspector.html", "explore.html", "explore2.html", "linked.html"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious(pages, browser, axe_script, name, scheme):
    page = _open(browser, pages["dir"] / name, color_scheme=scheme)
    if name in ("player.html", "linked.html"):
        page.keyboard.press("End")  # the backward pass drawn: gradients, badges, the table
        page.locator(".adv-node").first.click()  # and a node's details open
    elif name == "inspector.html":
        page.locator("g.node").first.click()
    page.add_script_tag(content=axe_script)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]
           if v["impact"] in ("serious", "critical")]
    assert bad == []
    assert result["testEngine"]["name"] == "axe-core"
    page.close()


def test_a_graphs_svg_names_and_describes_itself():
    import xml.etree.ElementTree as ET

    tr, _ = _trace()
    g = ad.viz.graph(tr)
    root = ET.fromstring(g.svg())
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("role") == "img"
    assert root[0].tag == ns + "title" and root[0].text == g.inspect().data["title"]
    assert root[1].tag == ns + "desc" and root[1].text.split("\n") == text_alternative(g.inspect().data)
    assert f"value {9 + np.sin(3.0):.5g}" in root[1].text
