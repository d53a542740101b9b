"""One look (viz/draw/look.py): every renderer draws each role as the look table says.

One trace holds a node of every kind of box the players draw (op, variable, unwatched variable, watched
tensor, constant, rule op, skipped op, NumPy) and both marks (source, target).  It is drawn in DOT (the
attributes parsed), in a matplotlib frame (the artists' colours read back), in an SVG still and in the
player (both in headless Chromium, computed styles), and each node's colours are compared with the
table's look for what the node is.  Changing a colour in any one renderer fails here.
"""
import pathlib
import re

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.draw import look as _look
from autodiff_viz.viz.draw.look import LOOKS, node_look, player_width

from browser_util import launch, require_chromium


@pytest.fixture(scope="module")
def every_role():
    """A trace with every box and mark; the outer tape records the inner gradient's ops (rule ops)."""
    v = ad.Variable(2.0, name="v")
    u = ad.Variable(5.0, name="u", trainable=False)
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as outer:
            outer.watch(x)
            with ad.GradientTape() as inner:
                inner.watch(x)
                y = x * x * v * 2.0 + u
                with inner.stop_recording():
                    ad.sin(x)
                np.asarray(y * 1.0)
                with np.errstate(divide="ignore"):
                    ad.math.log(x - 3.0)  # log of 0: where a NaN/inf first appears (the nonfinite mark)
            g = inner.gradient(y, [x, v])
        outer.gradient(g[0], x)
    return tr, x


@pytest.fixture(scope="module")
def story(every_role):
    tr, x = every_role
    return ad.viz.animate(tr, names={"x": x}, linked=False).data


def rgb(hex_colour: str) -> str:
    """A colour as Chromium's computed style writes it."""
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def hex_of(colour) -> str:
    from matplotlib.colors import to_hex

    return to_hex(colour).upper()


def quiet_step(story):
    """The last step at which a node of every box and mark is quiet (computed, not running, not just
    receiving), and the ids of the nodes that are not."""
    from autodiff_viz.viz.model.story import states

    want = set(_look.PLAYER_BOXES) | set(_look.MARKS)
    found = None
    for i, st in enumerate(states(story)):
        busy = {nd["id"] for nd, alive in zip(story["nodes"], st["alive"]) if not alive}
        busy |= set(st["recv"]) | {st["node"]}
        quiet = [nd for nd in story["nodes"] if nd["id"] not in busy]
        if want <= {nd["box"] for nd in quiet} | {nd["role"] for nd in quiet}:
            found = i, busy
    assert found is not None
    return found


def test_the_trace_has_every_box_and_mark(story):
    assert {n["box"] for n in story["nodes"]} == set(_look.PLAYER_BOXES)
    assert {"source", "target"} <= {n["role"] for n in story["nodes"]}


def test_the_table_gives_one_meaning_per_colour():
    # the graph's conventions: the target and gradients vermillion, green only for a watched tensor
    assert LOOKS["target"].border == _look.GRADIENT == _look.PALETTE["vermillion"]
    assert LOOKS["watched"].border == _look.PALETTE["green"]
    greens = [k for k, lk in LOOKS.items() if _look.PALETTE["green"] in (lk.border, lk.fill)]
    assert greens == ["watched"]
    # a just-received gradient has its own colour, which no box or mark uses
    received = LOOKS["received"].border
    assert all(received not in (lk.border, lk.fill) for k, lk in LOOKS.items() if k != "received")
    assert len({lk.word for lk in LOOKS.values()}) == len(LOOKS)  # one word per role
    assert sorted(k for k, lk in LOOKS.items() if "backward" in lk.word) == ["backward", "backward_pass"]  # the pass


# ---------------------------------------------------------------------------
# DOT
# ---------------------------------------------------------------------------
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|<<.*?>>|[^,\]]+)')


def dot_nodes(source: str) -> dict:
    """``{node id: {attribute: value}}`` of the nodes in DOT text (labels left out)."""
    out = {}
    for line in source.splitlines():
        m = re.match(r"\s*n(\d+) \[(.*)\];$", line)
        if m:
            attrs = re.sub(r"label=<.*>, tooltip", "tooltip", m.group(2))
            out[int(m.group(1))] = {k: v.strip('"') for k, v in _ATTR.findall(attrs)}
    return out


def test_dot_draws_each_role_as_the_table_says(every_role):
    from autodiff_viz.viz.draw.dot import to_dot

    tr, _ = every_role
    model = ad.viz.graph(tr).model
    for n in model.nodes:  # the boxes and marks alone: no path drawn over them
        n.on_path = n.dimmed = False
    for e in model.edges:
        e.on_path = e.dimmed = False
    nodes = dot_nodes(to_dot(model))
    seen = set()
    for n in model.nodes:
        role = n.role or ("nonfinite" if n.nonfinite else None)
        a, lk = nodes[n.id], node_look(n.box, role)
        seen.update({n.box, role})
        assert (a["fillcolor"], a["color"], a["fontcolor"]) == (lk.fill, lk.border, lk.text), (n.label, n.box, n.role)
        assert float(a["penwidth"]) == lk.width and ("dashed" in a["style"]) == lk.dash, n.label
        assert a.get("peripheries") == ("2" if n.role == "source" else None)
    assert set(_look.PLAYER_BOXES) | set(_look.MARKS) <= seen


def test_dot_path_and_legend_as_the_table_says(every_role):
    tr, _ = every_role
    g = ad.viz.graph(tr)
    nodes = dot_nodes(g.source)
    on_path = [n for n in g.model.nodes if n.on_path and n.role is None and n.kind == "op"]
    dimmed = [n for n in g.model.nodes if n.dimmed]
    assert on_path and dimmed
    assert {nodes[n.id]["color"] for n in on_path} == {LOOKS["path"].border}
    assert {nodes[n.id]["color"] for n in dimmed} == {LOOKS["dimmed"].border}
    # every legend swatch: the colours of the look whose words it holds
    cells = re.findall(r'<td border="\d" color="(#\w+)" bgcolor="(#\w+)"[^>]*><font point-size="10">([^<]*)</font>',
                       g.source)
    cells += [(c, f, t) for c, f, t in re.findall(r'<td color="(#\w+)" bgcolor="(#\w+)"><font point-size="10">'
                                                  r'([^<]*)</font>', g.source)]
    by_words = {lk.says: lk for lk in LOOKS.values()}
    checked = set()
    for border, fill, text in cells:
        words = text.split(" (double border)")[0].split(" (thick border)")[0]
        lk = by_words.get(words) or (LOOKS["broken"] if words.startswith("✗") else None)
        assert lk is not None, text
        assert (fill, border) == (lk.fill, lk.border), text
        checked.add(lk.word)
    assert {"source", "target", "rule op", "skipped op", "NumPy", "constant", "watched tensor"} <= checked


# ---------------------------------------------------------------------------
# matplotlib frames
# ---------------------------------------------------------------------------
def test_frames_draw_each_role_and_moment_as_the_table_says(story):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from autodiff_viz.viz.draw.frames import FrameRenderer

    r = FrameRenderer(story, dpi=40)
    try:
        steps = story["steps"]
        quiet, busy = quiet_step(story)
        r.draw(quiet)
        seen = set()
        for nd, box, lab, _val, grad, *_ in r.nodes:
            if nd["id"] in busy:
                continue
            lk = node_look(nd["box"], nd["role"])
            seen.update({nd["box"], nd["role"]})
            assert (hex_of(box.get_facecolor()), hex_of(box.get_edgecolor())) == (lk.fill, lk.border), nd["label"]
            assert box.get_linewidth() == pytest.approx(player_width(lk) * r.k), nd["label"]
            assert (box.get_linestyle() != "-") == lk.dash, nd["label"]
            assert hex_of(lab.get_color()) == lk.text and hex_of(grad.get_color()) == _look.GRADIENT
        assert set(_look.PLAYER_BOXES) | set(_look.MARKS) <= seen
        # the moments of a step: the node running now (forward, backward) and those that just received
        for phase in ("forward", "backward"):
            i = next(k for k, s in enumerate(steps) if s["phase"] == phase and s["node"])
            r.draw(i)
            box = r.nodes[r._index[steps[i]["node"]]][1]
            assert (hex_of(box.get_facecolor()), hex_of(box.get_edgecolor())) == (LOOKS[phase].fill,
                                                                                  LOOKS[phase].border)
        i = next(k for k, s in enumerate(steps) if s["recv"] and s["node"] not in s["recv"])
        r.draw(i)
        nd, box = r.nodes[r._index[steps[i]["recv"][0]]][:2]
        own = node_look(nd["box"], nd["role"]).fill  # a received gradient is a border over the box's own fill
        assert (hex_of(box.get_facecolor()), hex_of(box.get_edgecolor())) == (own, LOOKS["received"].border)
        # the colour key: each swatch in the look whose words label it
        by_words = {lk.says: lk for lk in LOOKS.values()}
        for (face, edge, *_), label in r.key:
            assert (face, edge) == (by_words[label].fill, by_words[label].border), label
        assert len(r.key) >= 10
    finally:
        plt.close(r.fig)


# ---------------------------------------------------------------------------
# The SVG still and the player, in Chromium
# ---------------------------------------------------------------------------
_BOXES_JS = """(sel) => [...document.querySelectorAll(sel)].map((el) => {
    const box = el.matches('rect') ? el : el.querySelector('.adv-box');
    const label = el.matches('rect') ? el.parentNode.querySelector('.l') : el.querySelector('.adv-label');
    const grad = el.matches('rect') ? el.parentNode.querySelector('.g') : el.querySelector('.adv-grad');
    const s = getComputedStyle(box);
    return {fill: s.fill, stroke: s.stroke, width: parseFloat(s.strokeWidth), dash: s.strokeDasharray,
            text: getComputedStyle(label).fill, grad: grad ? getComputedStyle(grad).fill : null,
            cls: el.getAttribute('class') || ''};
})"""


def check_boxes(found, nodes, skip=()):
    seen = set()
    for got, nd in zip(found, nodes, strict=True):
        if nd["id"] in skip:
            continue
        lk = node_look(nd["box"], nd["role"])
        seen.update({nd["box"], nd["role"]})
        assert (got["fill"], got["stroke"], got["text"]) == (rgb(lk.fill), rgb(lk.border), rgb(lk.text)), nd["label"]
        assert got["width"] == pytest.approx(player_width(lk), abs=0.01) and (got["dash"] != "none") == lk.dash
        if got["grad"] is not None:
            assert got["grad"] == rgb(_look.GRADIENT)
    assert set(_look.PLAYER_BOXES) | set(_look.MARKS) <= seen


@pytest.fixture(scope="module")
def chromium():
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        yield browser
        browser.close()


@pytest.mark.browser
def test_still_draws_each_role_as_the_table_says(story, chromium):
    from autodiff_viz.viz.draw.still import animation_svg

    page = chromium.new_page()
    page.set_content(f"<!DOCTYPE html><html><body>{animation_svg(story)}</body></html>")
    check_boxes(page.evaluate(_BOXES_JS, "rect[class^='k-']"), story["nodes"])
    page.close()


@pytest.mark.browser
def test_player_draws_each_role_and_moment_as_the_table_says(story, chromium, tmp_path):
    from autodiff_viz.viz.draw.html import widget_html

    path = pathlib.Path(tmp_path) / "look.html"
    path.write_text(widget_html("animate", story, title="look"), encoding="utf-8")
    page = chromium.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(path.as_uri())
    page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
    steps = story["steps"]

    def go(i):
        page.fill(".adv-slider", str(i))
        page.dispatch_event(".adv-slider", "input")
        page.wait_for_function(f"document.querySelector('.adv').dataset.step === '{i}'")
        return page.evaluate(_BOXES_JS, ".adv-node")

    quiet, busy = quiet_step(story)
    check_boxes(go(quiet), story["nodes"], skip=busy)
    ids = [nd["id"] for nd in story["nodes"]]
    for phase in ("forward", "backward"):
        i = next(k for k, s in enumerate(steps) if s["phase"] == phase and s["node"])
        got = go(i)[ids.index(steps[i]["node"])]
        assert (got["fill"], got["stroke"]) == (rgb(LOOKS[phase].fill), rgb(LOOKS[phase].border)), phase
        assert got["width"] == pytest.approx(player_width(LOOKS[phase]), abs=0.01)
    i = next(k for k, s in enumerate(steps) if s["recv"] and s["node"] not in s["recv"])
    k = ids.index(steps[i]["recv"][0])
    got, own = go(i)[k], node_look(story["nodes"][k]["box"], story["nodes"][k]["role"]).fill
    assert (got["fill"], got["stroke"]) == (rgb(own), rgb(LOOKS["received"].border))
    assert got["width"] == pytest.approx(player_width(LOOKS["received"]), abs=0.01)
    pending = [f for f in go(0) if "adv-pending" in f["cls"]]
    assert pending and all(f["dash"] == "4px, 4px" for f in pending)
    assert page.evaluate("getComputedStyle(document.querySelector('.adv-pending')).opacity") == str(_look.FADED)
    page.close()
