"""Pictures for slides: the slide preset, a legend never larger than its graph, the tape notes switchable.

Sizes are measured on what Graphviz draws (its SVG: the legend's table
outline against the boxes of the nodes) and on the PNG it renders.
"""
import io
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

import autodiff_viz as ad

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"
OUTLINE = "#123456"  # drawn round the heading's table for the measurement only


def _points(el) -> list:
    nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", el.get("points") or el.get("d"))]
    return list(zip(nums[::2], nums[1::2]))


def _area(points) -> float:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (max(xs) - min(xs)) * (max(ys) - min(ys))


def _legend_and_graph_area(g) -> tuple:
    """``(legend's area, graph's area)`` in points², as Graphviz lays them out: the heading's table gets
    a border here so that Graphviz draws its outline; the graph is the bounding box of every node."""
    src = g.source.replace('label=<<table border="0" cellborder="0" cellspacing="4"',
                           f'label=<<table border="1" color="{OUTLINE}" cellborder="0" cellspacing="4"', 1)
    assert src != g.source
    root = ET.fromstring(ad.viz._graph.render(src, "svg"))
    top = root.find(f"{SVG}g")
    outline = [_points(p) for p in top.findall(f"{SVG}polygon") if p.get("stroke") == OUTLINE]
    nodes = [pt for n in top.findall(f"{SVG}g") if n.get("class") == "node"
             for el in n.iter() if el.tag in (f"{SVG}polygon", f"{SVG}path") for pt in _points(el)]
    return (_area(outline[0]) if outline else 0.0), _area(nodes)


def _small_graphs():
    """Graphs of two to four boxes, as the exercises draw them."""
    x, w = ad.Variable(3.0, name="x"), ad.Variable(2.0, name="w")
    c = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as t1:
            t1.watch(c)
            sq = c * c
        t1.gradient(sq, c)
        with ad.GradientTape() as t2:
            y = x * w
            loss = y + 1.0
        t2.gradient(loss, [x, w])
        with ad.GradientTape() as t3:
            with ad.name_scope("layer"):
                h = ad.sin(x) * w
            out = h * h
        t3.gradient(out, x)
    return [ad.viz.graph(tr, tape=1), ad.viz.graph(tr, tape=2), ad.viz.graph(tr, tape=3, collapse=True),
            ad.viz.graph(tr, tape=2, detail="full")]


@needs_dot
@pytest.mark.parametrize("style", ["default", "slide"])
def test_a_small_graphs_legend_is_never_larger_than_the_graph(style):
    drawn = 0
    for g in _small_graphs():
        g = ad.viz._graph.draw(g.model, **dict(g._options, style=style, tape_notes=False))
        legend, graph = _legend_and_graph_area(g)
        assert legend <= graph, (g, legend, graph)
        drawn += legend > 0
    assert drawn >= 3   # compact, not simply left out


def test_the_tape_sentence_goes_with_the_legend_and_is_switchable():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
    said = "Tape T1 is spent"
    assert said in ad.viz.graph(tr).source
    assert said not in ad.viz.graph(tr, legend=False).source
    assert said not in ad.viz.graph(tr, style="slide").source
    assert said not in ad.viz.graph(tr, tape_notes=False).source
    assert said in ad.viz.graph(tr, legend=False, tape_notes=True).source
    assert "tape T1</b>" not in ad.viz.graph(tr, detail="full", tape_notes=False).source
    with pytest.raises(ValueError, match="style must be 'default' or 'slide', not 'poster'"):
        ad.viz.graph(tr, style="poster")
    with pytest.raises(TypeError, match="tape_notes must be True or False, not 'no'"):
        ad.viz.graph(tr, tape_notes="no")


@needs_dot
def test_a_slide_is_16_by_9_with_larger_text_on_white():
    from PIL import Image
    import numpy as np

    for g in _small_graphs()[1:3]:
        slide = ad.viz._graph.draw(g.model, **dict(g._options, style="slide"))
        img = Image.open(io.BytesIO(slide.pipe("png"))).convert("RGB")
        assert abs(img.width / img.height - 16 / 9) < 0.01, img.size
        corners = np.asarray(img)[[0, 0, -1, -1], [0, -1, 0, -1]]
        assert (corners == 255).all()   # light background to the edges
        svg = slide.svg()
        w, h = (float(v) for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
        assert abs(w / h - 16 / 9) < 0.01
        assert "fontsize=14" in slide.source and "fontsize=11" in g.source


@needs_dot
def test_a_folded_scopes_name_keeps_clear_of_its_border():
    g = _small_graphs()[2]
    root = ET.fromstring(g.svg().replace('style="max-width:100%;height:auto" ', ""))
    scope = next(n for n in root.iter(f"{SVG}g") if n.get("class") == "node"
                 and any(t.text == "layer" for t in n.iter(f"{SVG}text")))
    title = next(t for t in scope.iter(f"{SVG}text") if t.text == "layer")
    box = [pt for el in scope.iter(f"{SVG}polygon") for pt in _points(el)]
    top = min(y for _, y in box)
    baseline, size = float(title.get("y")), float(title.get("font-size"))
    assert baseline - 0.8 * size - top >= 6   # points between the top of the capitals and the box's top edge
