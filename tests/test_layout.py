"""Graphviz with a budget: the one runner (viz.draw.graphviz), the animation layout and its fallback (viz.draw.layout)."""
import shutil
import subprocess
import sys
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
            y = ad.sin(x) * x + 1.0
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
