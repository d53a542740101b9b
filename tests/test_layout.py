"""Graphviz with a budget: the one runner (viz.draw.graphviz), the animation layout and its fallback (viz.draw.layout)."""
import shutil
import subprocess
import sys
import re
import time

import pytest

import autodiff_viz as ad
from autodiff_viz import viz
from autodiff_viz.viz import _graph
from autodiff_viz.viz.draw import graphviz as _graphviz, layout as _layout
from autodiff_viz.viz.draw.graphviz import GraphvizNotFound, LayoutBudgetExceeded

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="the memory limit is POSIX's RLIMIT_AS")

HANG = 60.0  # seconds: a generous guard against hanging, never a performance assertion


def fan_story(n, chain=True):
    """One variable feeding each of ``n`` ops (chained one after the other when ``chain``)."""
    nodes = [{"id": "v"}, {"id": "x"}] + [{"id": f"op{i}"} for i in range(n)]
    edges = [{"id": f"v{i}", "from": "v", "to": f"op{i}"} for i in range(n)]
    edges.append({"id": "x0", "from": "x", "to": "op0"})
    if chain:
        edges += [{"id": f"c{i}", "from": f"op{i - 1}", "to": f"op{i}"} for i in range(1, n)]
    return {"nodes": nodes, "edges": edges}


def chain_story(n):
    nodes = [{"id": f"n{i}"} for i in range(n)]
    edges = [{"id": f"e{i}", "from": f"n{i}", "to": f"n{i + 1}"} for i in range(n - 1)]
    return {"nodes": nodes, "edges": edges}


def fan_tape(n):
    v = ad.Variable(1.0, name="v")
    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(n):
            y = y * v
    tape.gradient(y, [x, v])
    return tape


def no_dot_allowed(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("dot was started")
    monkeypatch.setattr(subprocess, "Popen", refuse)


# --- the size estimate ----------------------------------------------------------------------------
def test_dot_size_counts_nodes_and_edges_of_real_graphs():
    x = ad.Variable(2.0, name="x")
    with ad.GradientTape() as tape:
        with ad.name_scope("layer"):
            ad.sin(x) * x + 1.0
    for g in (viz.graph(tape), viz.graph(tape, collapse=True)):
        nodes, edges, span = _graphviz.dot_size(g.source)
        assert (nodes, edges) == (len(g.model.nodes), len(g.model.edges))
        assert span <= 1  # x feeds Sin and the Mul after it
    # quoted ids, ports, comments, HTML labels with "->" inside, attribute statements
    src = '''digraph "g" { // a -> comment
      graph [label=<a -&gt; b <b>x</b>>]; rankdir=LR; node [shape=box];
      "a b" -> c:p1 -> d [label="e -> f"]; /* c -> z */ e; subgraph cluster_1 { f -> g }
    }'''
    assert _graphviz.dot_size(src)[:2] == (6, 3)


def test_span_measures_one_value_feeding_ops_far_apart():
    src = _layout._dot_source(fan_story(100), "TB")
    assert _graphviz.dot_size(src) == (102, 200, 100 * 99 // 2)
    # a constant per op (every one a leaf) costs nothing: it sits next to its op
    n = 300
    nodes = [{"id": f"op{i}"} for i in range(n)] + [{"id": f"k{i}"} for i in range(n)]
    edges = ([{"id": f"c{i}", "from": f"op{i - 1}", "to": f"op{i}"} for i in range(1, n)]
             + [{"id": f"k{i}", "from": f"k{i}", "to": f"op{i}"} for i in range(n)])
    assert _graphviz.dot_size(_layout._dot_source({"nodes": nodes, "edges": edges}, "TB"))[2] == 0


# --- the runner -----------------------------------------------------------------------------------
def test_size_check_refuses_before_starting_dot(monkeypatch):
    no_dot_allowed(monkeypatch)
    fan = _layout._dot_source(fan_story(2000), "TB")
    with pytest.raises(LayoutBudgetExceeded, match="collapse=True") as err:
        _graphviz.run_dot(fan, "svg")
    assert err.value.limit == "span" and err.value.value > err.value.budget
    assert "target=" in str(err.value) and "edge segments" in str(err.value)
    chain = _layout._dot_source(chain_story(6000), "TB")
    with pytest.raises(LayoutBudgetExceeded, match="6,000 boxes") as err:
        _graphviz.run_dot(chain, "json")
    assert err.value.limit == "nodes"
    with pytest.raises(LayoutBudgetExceeded) as err:
        _graphviz.run_dot("digraph { a -> b }", "svg", size=(10, 20_000, 0))
    assert err.value.limit == "edges"


def test_limits_come_from_arguments_not_module_globals(monkeypatch):
    no_dot_allowed(monkeypatch)
    monkeypatch.setattr(_graphviz, "MAX_NODES", 10**9)  # changes nothing: defaults are bound at import
    with pytest.raises(LayoutBudgetExceeded):
        _graphviz.run_dot("digraph { a }", "svg", size=(6000, 0, 0))
    with pytest.raises(LayoutBudgetExceeded):
        _graphviz.run_dot("digraph { a -> b -> c }", "svg", max_nodes=2)


@needs_dot
def test_small_graph_renders_within_the_budget():
    svg = _graphviz.run_dot("digraph { a -> b }", "svg").decode()
    assert "<svg" in svg


@needs_dot
def test_timeout_stops_dot_with_a_clear_error():
    # A fan-out of 250 ops takes dot over a minute; the size check is lifted so that dot starts.
    src = _layout._dot_source(fan_story(250), "TB")
    t0 = time.perf_counter()
    with pytest.raises(LayoutBudgetExceeded, match="longer than 0.5 s") as err:
        _graphviz.run_dot(src, "json", timeout=0.5, max_span=None)
    assert time.perf_counter() - t0 < HANG
    assert err.value.limit == "time" and not isinstance(err.value, subprocess.TimeoutExpired)
    assert "collapse=True" in str(err.value)


@needs_dot
@posix_only
def test_memory_limit_stops_dot_with_a_clear_error():
    # A fan-out of 1,000 ops takes dot past 3 GB within seconds; 200 MiB stops it at once.
    src = _layout._dot_source(fan_story(1000), "TB")
    t0 = time.perf_counter()
    with pytest.raises(LayoutBudgetExceeded, match="memory") as err:
        _graphviz.run_dot(src, "json", memory=200 << 20, max_span=None)
    assert time.perf_counter() - t0 < HANG
    assert err.value.limit == "memory"


def test_dot_missing(monkeypatch):
    monkeypatch.setenv("AUTODIFF_VIZ_DOT", "no-such-graphviz-dot")
    assert _graphviz._dot_binary() is None
    with pytest.raises(GraphvizNotFound, match="apt-get install graphviz"):
        _graphviz.run_dot("digraph { a }", "png")
    with pytest.raises(GraphvizNotFound):
        _graphviz.run_dot("digraph { a }", "json", wasm=False)


@needs_dot
def test_dot_errors_are_graphviz_failed():
    with pytest.raises(_graphviz.GraphvizFailed, match="syntax error"):
        _graphviz.run_dot("digraph { a -> }", "svg")


# --- static graphs --------------------------------------------------------------------------------
def test_static_graph_past_the_budget_says_what_to_do(monkeypatch):
    no_dot_allowed(monkeypatch)
    g = viz.graph(fan_tape(300))
    with pytest.raises(LayoutBudgetExceeded, match="collapse=True"):
        g.svg()
    with pytest.raises(LayoutBudgetExceeded, match="target="):
        _graph.render(g.source, "png")
    # the notebook view shows the message instead of failing
    bundle = g._repr_mimebundle_()
    assert "image/svg+xml" not in bundle and "collapse=True" in bundle["text/plain"]
    assert viz.LayoutBudgetExceeded is LayoutBudgetExceeded


@needs_dot
def test_static_graph_limits_are_arguments_of_render():
    g = viz.graph(fan_tape(3))
    assert b"<svg" in _graph.render(g.source, "svg", timeout=60)
    with pytest.raises(LayoutBudgetExceeded, match="boxes"):
        _graph.render(g.source, "svg", max_nodes=2)


# --- the animation layout -------------------------------------------------------------------------
def test_layout_falls_back_with_a_note_when_too_big(monkeypatch):
    no_dot_allowed(monkeypatch)
    story = fan_story(1000)
    out = _layout.layout(story)
    assert out["engine"] == "layered" and out["rankdir"] == "TB"
    assert "too big for Graphviz" in out["note"] and "layered layout is shown" in out["note"]
    assert set(out["nodes"]) == {n["id"] for n in story["nodes"]}
    assert set(out["edges"]) == {e["id"] for e in story["edges"]}


@needs_dot
def test_layout_falls_back_with_a_note_on_timeout():
    t0 = time.perf_counter()
    out = _layout.layout(fan_story(250), timeout=0.5, max_span=None)
    assert time.perf_counter() - t0 < HANG
    assert out["engine"] == "layered" and "longer than 0.5 s" in out["note"]


@needs_dot
def test_layout_uses_dot_within_the_budget():
    out = _layout.layout(fan_story(5))
    assert out["engine"] == "dot" and "note" not in out


def test_layout_without_dot_falls_back_with_a_note(monkeypatch):
    monkeypatch.setenv("AUTODIFF_VIZ_DOT", "no-such-graphviz-dot")
    out = _layout.layout(fan_story(5))
    assert out["engine"] == "layered" and "not installed" in out["note"]
    assert len(out["nodes"]) == 7


def test_ranks_raise_on_a_cycle_instead_of_looping():
    story = chain_story(20_000)
    story["edges"].append({"id": "back", "from": "n19999", "to": "n10000"})
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="cycle through node 'n1"):
        _layout._ranks(story)
    with pytest.raises(ValueError, match="cycle"):
        _layout.layout(story)
    assert time.perf_counter() - t0 < HANG
    loop = {"nodes": [{"id": "a"}], "edges": [{"id": "e", "from": "a", "to": "a"}]}
    with pytest.raises(ValueError, match="'a'"):
        _layout._ranks(loop)


def test_ranks_are_longest_paths_in_any_edge_order():
    story = chain_story(5)
    story["edges"].reverse()
    story["edges"].append({"id": "skip", "from": "n0", "to": "n3"})
    assert _layout._ranks(story) == {"n0": 0, "n1": 1, "n2": 2, "n3": 3, "n4": 4}


def test_layered_layout_of_10000_nodes():
    story = chain_story(10_000)
    t0 = time.perf_counter()
    out = _layout._layered_layout(story, "TB")
    assert time.perf_counter() - t0 < HANG
    assert len(out["nodes"]) == 10_000 and len(out["edges"]) == 9_999
    ys = [out["nodes"][f"n{i}"]["y"] for i in range(10_000)]
    assert ys == sorted(ys) and len(set(ys)) == 10_000  # one row per rank, in order
    assert out["height"] >= ys[-1]


def test_layered_layout_wraps_wide_ranks_and_keeps_constants_by_their_ops():
    n = 10_000
    nodes = [{"id": "sum"}] + [{"id": f"in{i}"} for i in range(n)]
    edges = [{"id": f"e{i}", "from": f"in{i}", "to": "sum"} for i in range(n)]
    out = _layout._layered_layout({"nodes": nodes, "edges": edges}, "TB")
    assert len(out["nodes"]) == n + 1
    spots = {(p["x"], p["y"]) for p in out["nodes"].values()}
    assert len(spots) == n + 1  # no two boxes in the same place
    assert out["width"] <= _layout.MAX_LAYER_WIDTH * (_layout.NODE_W + 30) + 4
    assert out["nodes"]["sum"]["y"] > max(p["y"] for k, p in out["nodes"].items() if k != "sum")
    # a chain with a constant into every op: each constant is in the row just before its op
    m = 50
    nodes = [{"id": f"op{i}"} for i in range(m)] + [{"id": f"k{i}"} for i in range(m)]
    edges = ([{"id": f"c{i}", "from": f"op{i - 1}", "to": f"op{i}"} for i in range(1, m)]
             + [{"id": f"k{i}", "from": f"k{i}", "to": f"op{i}"} for i in range(m)])
    out = _layout._layered_layout({"nodes": nodes, "edges": edges}, "TB")
    step = _layout.NODE_H + 60
    for i in range(m):
        assert out["nodes"][f"op{i}"]["y"] - out["nodes"][f"k{i}"]["y"] == pytest.approx(step)


# --- graphs past the budget are folded, before any work on the picture ----------------------------
def chain_tape(n):
    x = ad.constant(1.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in range(n):
                y = y * 1.001 if i % 2 == 0 else y + 0.0
        tape.gradient(y, x)
    return tr, tape


def test_a_chain_past_the_node_budget_is_folded_with_a_visible_note(monkeypatch):
    tr, tape = chain_tape(2600)   # 5,201 boxes: more than Graphviz's 5,000
    g = viz.graph(tape)
    m = g.model
    assert len(m.nodes) == _graph.FOLD_KEEP + 1 and len(m.nodes) <= _graphviz.MAX_NODES
    box = next(n for n in m.nodes if n.kind == "scope")
    assert box.label == "4,201 boxes folded"
    assert len(box.members) == 2600 - sum(n.kind == "op" for n in m.nodes)   # the folded ops, counted
    assert set(box.op_types) == {"Mul", "Add"}
    # the start and the end of the chain stay: the watched input and the target, still marked
    assert m.nodes[0].label == "x" and m.nodes[0].role == "source" and m.nodes[-1].role == "target"
    assert "5,201 boxes" in m.remarks[-1] and "4,201 boxes in the middle are folded" in m.remarks[-1]
    assert "collapse=True" in m.remarks[-1]
    assert "4,201 boxes folded" in g.source and "5,201 boxes and 5,200 edges" in g.source
    # every edge still joins two drawn boxes; the chain runs through the folded box
    ids = {n.id for n in m.nodes}
    assert all(e.src in ids and e.dst in ids for e in m.edges)
    assert {e.dst for e in m.edges if e.src == box.id} and {e.src for e in m.edges if e.dst == box.id}
    # the size check then lets it through: dot is given a graph within the budget
    assert _graphviz.dot_size(g.source)[0] <= _graphviz.MAX_NODES


@needs_dot
def test_a_folded_chain_is_drawn_with_its_note():
    import xml.etree.ElementTree as ET

    _, tape = chain_tape(2600)
    svg = viz.graph(tape).svg()
    text = " ".join(t.text or "" for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text"))
    assert "4,201 boxes folded" in text and "more than Graphviz lays out" in text


def test_a_loaded_trace_with_one_op_of_many_inputs_finishes_every_view():
    n = 6000
    xs = [ad.constant(float(i)) for i in range(n)]
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(xs[0])
            y = ad.add_n(xs)
        tape.gradient(y, xs[0])
    loaded = ad.Trace.from_json(tr.to_json())
    g = viz.graph(loaded)
    assert len(g.model.nodes) == _graph.FOLD_KEEP + 1   # 6,001 boxes: the middle 5,001 inputs fold into one
    box = next(nd for nd in g.model.nodes if nd.kind == "scope")
    assert box.label == "5,001 boxes folded" and box.members == ()   # inputs only, no op
    assert "0 ops" not in g.source
    anim = viz.animate(loaded)
    assert len(anim.data["layout"]["nodes"]) == n + 1 and "layered layout" in anim.data["layout"]["note"]
    assert anim.to_html().count('"from"') >= n


def test_collapsed_scopes_past_the_budget_fold_in_the_middle_without_a_cycle():
    # A folded name scope sits where its first op was and the constants it reads come after it:
    # folding a run of ids (or of positions) put a scope and its constants on both sides of the
    # fold, and the layout refused the cycle.  Each constant is read by two scopes, so it stays its
    # own box (a constant only one scope reads folds into it): 5,000 constants, 200 scopes and x.
    x = ad.constant(1.0)
    shared = [[ad.constant(1.0 + 1e-4 * j) for j in range(50)] for _ in range(100)]
    with ad.trace():
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for block in range(200):
                with ad.name_scope(f"block{block}"):
                    for c in shared[block // 2]:
                        y = y * c
        tape.gradient(y, x)
    m = viz.graph(tape, collapse=True).model
    assert int(re.search(r"([\d,]+) boxes and", m.remarks[-1]).group(1).replace(",", "")) == 5_000 + 200 + 1
    total = int(re.search(r"([\d,]+) boxes and", m.remarks[-1]).group(1).replace(",", ""))
    box = next(n for n in m.nodes if n.label.endswith("boxes folded"))
    assert int(box.label.split()[0].replace(",", "")) == total - (len(m.nodes) - 1)  # the count is what went
    ins = {n.id: 0 for n in m.nodes}  # Kahn's walk: every box is reached, so there is no cycle
    for e in m.edges:
        ins[e.dst] += 1
    ready, seen = [i for i, k in ins.items() if k == 0], 0
    while ready:
        i = ready.pop()
        seen += 1
        for e in m.edges:
            if e.src == i:
                ins[e.dst] -= 1
                if ins[e.dst] == 0:
                    ready.append(e.dst)
    assert seen == len(m.nodes)
    assert m.nodes[0].label == "x" and m.nodes[0].role == "source"


def test_graphs_and_animations_share_one_auto_direction_rule(monkeypatch):
    tr, tape = chain_tape(4)
    seen = []

    def rule(size_of, frame):
        seen.append(frame)
        return "TB"
    monkeypatch.setattr(_layout, "auto_rankdir", rule)
    assert "rankdir=TB" in viz.graph(tape).source
    assert viz.animate(tr).data["layout"]["rankdir"] == "TB"
    assert seen == [_layout.SLIDE, _layout.PLAYER]


def test_dot_ranks_put_each_input_next_to_its_first_consumer():
    # a chain a -> b -> c -> d with a constant k into d and the watched x into b
    ranks = _layout.dot_ranks("abcdkx", [(0, 1), (1, 2), (2, 3), (4, 3), (5, 1)])
    assert ranks == [0, 1, 2, 3, 2, 0]
    with pytest.raises(ValueError, match="cycle through node '[ab]'"):
        _layout.dot_ranks("ab", [(0, 1), (1, 0)])
