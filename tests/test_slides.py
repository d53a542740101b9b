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
from autodiff_viz import tour

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
    """Graphs of two to four boxes, as the exercises draw them (the last one in the slide style)."""
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
            ad.viz.graph(tr, tape=2, detail="full"), ad.viz.graph(tr, tape=2, style="slide", tape_notes=False)]


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
    square = tour.square()   # x*x under a tape whose gradient() was called: a spent tape

    def source(**options):
        return ad.viz._graph.draw(square.model, **options).source

    said = "Tape T1 is spent"
    assert said in square.source
    assert said not in source(legend=False)
    assert said not in source(style="slide")
    assert said not in source(tape_notes=False)
    assert said in source(legend=False, tape_notes=True)
    assert "tape T1</b>" in source(detail="full") and "tape T1</b>" not in source(detail="full", tape_notes=False)
    with pytest.raises(ValueError, match="style must be 'default' or 'slide', not 'poster'"):
        source(style="poster")
    with pytest.raises(TypeError, match="tape_notes must be True or False, not 'no'"):
        source(tape_notes="no")


@needs_dot
def test_a_slide_is_16_by_9_with_larger_text_on_white():
    from PIL import Image
    import numpy as np

    graphs = _small_graphs()
    assert graphs[4]._options["style"] == "slide" and "fontsize=14" in graphs[4].source   # ad.viz.graph's way
    for g in graphs[1:3]:
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


# ---------------------------------------------------------------------------
# GIF and MP4 frames
# ---------------------------------------------------------------------------
def _xor_step():
    """One training step of a 2-4-1 network on XOR: a graph too tall to read whole on a frame."""
    import numpy as np

    x = ad.constant(np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32))
    y = ad.constant(np.array([[0], [1], [1], [0]], np.float32))
    w1, b1 = ad.Variable(np.full((2, 4), 0.5, np.float32), name="w1"), ad.Variable(np.zeros(4, np.float32), name="b1")
    w2, b2 = ad.Variable(np.full((4, 1), 0.5, np.float32), name="w2"), ad.Variable(np.zeros(1, np.float32), name="b2")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            h = ad.nn.relu(ad.matmul(x, w1) + b1)
            p = ad.sigmoid(ad.matmul(h, w2) + b2)
            loss = ad.reduce_mean(ad.square(p - y))
        tape.gradient(loss, [w1, b1, w2, b2])
    return ad.viz.animate(tr, names={"loss": loss})


def _inside(rect, cam, window) -> bool:
    return (rect[0] >= cam[0] and rect[1] >= cam[1] and rect[2] <= cam[0] + window[0]
            and rect[3] <= cam[1] + window[1])


def test_fit_graph_shows_every_node_and_follow_ends_on_the_loss():
    from autodiff_viz.viz.draw.frames import FrameRenderer

    anim = _xor_step()
    whole = FrameRenderer(anim.data, dpi=40, fit="graph")
    assert not whole.scrolls
    from autodiff_viz.viz.draw.frames import PAD

    boxes = [((p["x"] - p["w"] / 2 + PAD) * whole.ppu, (p["y"] - p["h"] / 2 + PAD) * whole.ppu,
              (p["x"] + p["w"] / 2 + PAD) * whole.ppu, (p["y"] + p["h"] / 2 + PAD) * whole.ppu)
             for p in anim.data["layout"]["nodes"].values()]
    assert len(boxes) == len(anim.nodes)
    for cam in whole._cams:   # every node's box inside the frame's view of the graph, on every frame
        assert all(_inside(b, cam, whole.window) for b in boxes)
    follow = FrameRenderer(anim.data, dpi=40, fit="follow")
    assert follow.scrolls and follow.window[1] < follow._graph_px[1]   # a window, not the whole
    loss = next(j for j, n in enumerate(anim.nodes) if n["label"] == "loss")
    assert _inside(follow._rects[loss], follow._cams[-1], follow.window)
    with pytest.raises(ValueError, match="fit must be one of 'auto', 'graph', 'follow', not 'page'"):
        FrameRenderer(anim.data, fit="page")


def test_save_writes_the_chosen_frames_at_the_size_asked(tmp_path):
    from PIL import Image

    anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
    path = anim.save(tmp_path / "a.gif", dpi=40, size=(320, 180), frames=[0, 2, -1], fit="graph")
    img = Image.open(path)
    assert img.n_frames == 3 and img.size == (320, 180)


@pytest.mark.parametrize("kw, kind, words", [
    ({"fps": 0}, ValueError, "fps must be"), ({"fps": "2"}, TypeError, "fps must be a number"),
    ({"dpi": 5000}, ValueError, "dpi must be"), ({"fit": "all"}, ValueError, "fit must be"),
    ({"size": (320, 181)}, ValueError, "size must be even"), ({"size": "big"}, TypeError, "size must be"),
    ({"frames": []}, ValueError, "frames must be a non-empty"), ({"frames": [0, 1.5]}, TypeError, "1.5"),
    ({"frames": [99]}, IndexError, "frames holds step 99, but this animation has"),
])
def test_save_names_the_bad_argument_and_its_value(tmp_path, kw, kind, words):
    anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
    with pytest.raises(kind, match=re.escape(words)):
        anim.save(tmp_path / "a.gif", **kw)


def test_side_text_wraps_prose_and_says_each_thing_once():
    from autodiff_viz.viz.draw import panel

    anim = _xor_step()
    seed = next(s for s in anim.steps if s["phase"] == "seed")
    lines, _ = panel.side_text(seed)
    words = " ".join(line.strip() for line in lines)
    assert "a node's rule runs only after every path from the target" in words
    # A wrapped line is full: it breaks only where the next word would not fit (prose, not re-wrapped lines).
    for line, after in zip(lines, lines[1:]):
        if after.startswith("   "):
            assert len(line) + 1 + len(after.split()[0]) > panel.WRAP
    done = anim.steps[-1]
    lines, rows = panel.side_text(done)
    for result in done["results"]:
        assert sum(result in t for t in lines + [t for _, t in rows]) == 1
    from autodiff_viz.viz.draw.frames import FrameRenderer

    r = FrameRenderer(anim.data, dpi=40)
    assert r._sides[0][0] == [] and r._sides[1][0]   # the heading says the first step's title
    titled = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0, title="Product")
    assert FrameRenderer(titled.data, dpi=40)._sides[0][0] == []


def test_auto_fit_shows_the_whole_graph_only_where_it_stays_readable_at_the_size_asked():
    from autodiff_viz.viz.draw.frames import K_MIN
    from autodiff_viz.viz.draw.movie import renderer

    small = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
    r = renderer(small.data, 40, "auto", (1280, 720))
    assert not r.scrolls and r.k * min(1.0, 1280 / r.width, 720 / r.height) >= K_MIN
    xor = _xor_step()
    big = renderer(xor.data, 40, "auto", (320, 180))   # the whole graph would be tiny: follow instead
    assert big.scrolls
    whole = renderer(xor.data, 40, "graph", (320, 180))
    assert whole.scrolls is False
    import matplotlib.pyplot as plt

    for fig in (r.fig, big.fig, whole.fig):
        plt.close(fig)


def test_a_slide_movie_is_16_by_9(tmp_path):
    from PIL import Image

    anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
    img = Image.open(anim.save(tmp_path / "a.gif", dpi=40, style="slide", frames=[-1]))
    assert img.size == ad.viz._animate.SLIDE_SIZE and img.n_frames == 1
    with pytest.raises(ValueError, match="style must be 'default' or 'slide', not 'poster'"):
        anim.save(tmp_path / "a.gif", style="poster")


def test_save_steps_writes_the_steps_asked_and_names_what_is_wrong(tmp_path):
    anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
    paths = anim.save_steps(tmp_path, frames=[1, 3], format="svg", dpi=40)
    assert [p.name for p in paths] == ["step-2.svg", "step-4.svg"]
    assert all(ET.parse(p).getroot().tag == f"{SVG}svg" for p in paths)
    with pytest.raises(ValueError, match="Animation.save_steps: format must be 'png' or 'svg', not 'gif'"):
        anim.save_steps(tmp_path, format="gif")
    with pytest.raises(FileNotFoundError, match="no folder"):
        anim.save_steps(tmp_path / "missing")
    with pytest.raises(IndexError, match=r"Animation.save_steps: frames holds step 7, but this animation has 5"):
        anim.save_steps(tmp_path, frames=[7])
    with pytest.raises(ValueError, match="Animation.frame: fit must be"):
        anim.frame(0, fit="window")


def test_the_untraced_tape_note_goes_with_the_tape_notes():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as t:
        y = x * x
    t.gradient(y, x)
    said = "recorded without ad.trace()"
    assert said in ad.viz.graph(t).source
    for quiet in (ad.viz.graph(t, tape_notes=False), ad.viz.graph(t, style="slide")):
        assert said not in quiet.source


def test_frame_names_the_step_it_cannot_draw():
    anim = ad.viz.animate(lambda x: x * x, 2.0, linked=False)
    with pytest.raises(IndexError, match=r"Animation.frame: i=99 is not a step of this animation: it has 5 steps"):
        anim.frame(99)


@pytest.mark.parametrize("name, kw", [("a.html", {"size": (640, 360)}), ("a.pdf", {"fps": 2}),
                                      ("a.json", {"frames": [0]}), ("a.html", {"style": "slide"})])
def test_save_refuses_options_the_file_type_ignores(tmp_path, name, kw):
    anim = ad.viz.animate(lambda x: x * x, 2.0, linked=False)
    option = next(iter(kw))
    with pytest.raises(ValueError, match=f"Animation.save: {option}=.* is for .gif, .mp4"):
        anim.save(tmp_path / name, **kw)
    assert not (tmp_path / name).exists()
