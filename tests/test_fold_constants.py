"""A constant that only one folded name scope reads is drawn inside that scope's box.

``graph(..., collapse=True)`` folds each name scope into one box; a constant read only by that box's ops is
part of what the scope computes, so it folds in too.  A constant read by two boxes, or by an op outside any
folded scope, stays its own box with an arrow into each reader; variables, watched tensors, sources, targets
and the seeds of backward passes never fold away.  Every number checked here is the closed form's.
"""
import collections
import math
import re

import pytest

import autodiff_viz as ad
from autodiff_viz.viz.model.build import build
from test_false_sums import check_player, parse_value

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

X, SHARED = 2.0, 0.5
OWN = {"a": (1.0, 3.0), "b": (2.0, 2.0), "c": (3.0, 1.0)}   # scope -> its two constants (p, q)


def _three_scopes():
    """y = s_a + s_b · s_c with s_k = (x · p_k + q_k) · shared in name scope k: each scope reads its own two
    constants and the one all three share."""
    x = ad.Variable(X, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            shared = ad.constant(SHARED)
            s = {}
            for name, (p, q) in OWN.items():
                with ad.name_scope(name):
                    s[name] = (x * ad.constant(p) + ad.constant(q)) * shared
            y = s["a"] + s["b"] * s["c"]
        g = tape.gradient(y, x)
    return tr, float(g.numpy())


def _closed_form():
    """Each scope's output and ∂y/∂x along the arrow x → scope: ∂y/∂s_k · p_k · shared."""
    s = {k: (X * p + q) * SHARED for k, (p, q) in OWN.items()}
    upstream = {"a": 1.0, "b": s["c"], "c": s["b"]}
    return s, {k: upstream[k] * OWN[k][0] * SHARED for k in OWN}


def _kinds(model):
    return collections.Counter(n.kind for n in model.nodes)


def test_each_scopes_own_constants_fold_and_the_shared_one_stays():
    tr, _ = _three_scopes()
    flat = ad.viz.graph(tr).model
    folded = ad.viz.graph(tr, collapse=True).model
    # unfolded: x, 3 · 2 own constants + the shared one, 3 · 3 ops in the scopes + Mul and Add
    assert _kinds(flat) == {"variable": 1, "constant": 7, "op": 11}
    # folded: x, the shared constant, 3 scope boxes, Mul and Add (before: the 6 own constants stayed too)
    assert _kinds(folded) == {"variable": 1, "constant": 1, "scope": 3, "op": 2}
    (const,) = [n for n in folded.nodes if n.kind == "constant"]
    assert const.value.array() == SHARED
    s, _ = _closed_form()
    for box in (n for n in folded.nodes if n.kind == "scope"):
        assert len(box.members) == 3 and box.op_types == ("Mul", "Add")  # the ops only: constants are no ops
        assert box.value.array() == pytest.approx(s[box.label])
        assert "It also holds 2 constants that only its ops read." in box.notes


def test_the_shared_constant_keeps_one_arrow_into_each_scope_box():
    tr, _ = _three_scopes()
    g = ad.viz.graph(tr, collapse=True)
    m = g.model
    (const,) = [n for n in m.nodes if n.kind == "constant"]
    out = m.consumers_of(const.id)
    assert sorted(m.node(e.dst).label for e in out) == ["a", "b", "c"]
    assert all(e.kind == "data" and e.count == 1 and e.grad is None for e in out)  # no gradient into a constant
    assert not m.inputs_of(const.id)
    for e in out:  # and the picture draws them: one arrow each, no label
        (line,) = [s for s in g.source.splitlines() if s.strip().startswith(f"n{const.id} -> n{e.dst} ")]
        assert "label" not in line


def test_the_gradients_on_the_arrows_into_the_scope_boxes_sum_to_the_sources():
    tr, dx = _three_scopes()
    _, along = _closed_form()
    assert dx == pytest.approx(sum(along.values()))  # 0.5 + 3.5 + 4.5
    g = ad.viz.graph(tr, collapse=True)
    m = g.model
    (x,) = [n for n in m.nodes if n.kind == "variable"]
    sent = {m.node(e.dst).label: float(e.grad.array()) for e in m.consumers_of(x.id)}
    assert sent == pytest.approx(along)
    assert float(x.grad.array()) == pytest.approx(sum(sent.values()))
    for e in m.consumers_of(x.id):  # each arrow writes what it carries
        (line,) = [s for s in g.source.splitlines() if s.strip().startswith(f"n{x.id} -> n{e.dst} ")]
        assert re.search(rf"∂ {along[m.node(e.dst).label]:g}\b", line), line


def test_the_players_steps_for_the_folded_boxes_write_true_sums():
    tr, dx = _three_scopes()
    assert check_player(tr, [("gradient", dx)], collapse=True) > 0
    anim = ad.viz.animate(tr, collapse=True)
    ids = {n["label"]: n["id"] for n in anim.data["nodes"]}
    assert len(ids) == 7 and {"x", "a", "b", "c"} <= set(ids)  # x, the shared constant, 3 boxes, Mul, Add
    (shared,) = [n["id"] for n in anim.data["nodes"] if n["label"].startswith("const")]
    forward = [s for s in anim.steps if re.match(r"Forward \d+/", s["title"])]
    assert [s["title"].split(":")[0] for s in forward] == [f"Forward {k}/5" for k in range(1, 6)]
    edges = [(e["from"], e["to"]) for e in anim.data["edges"]]  # a step names its arrows by position
    s, _ = _closed_form()
    for name in OWN:  # a box's step lights the arrows from x and the shared constant, nothing else
        (step,) = [st for st in forward if st["title"].endswith(f"{name} (3 ops folded: Mul, Add)")]
        assert sorted(edges[k][0] for k in step["edges"]) == sorted([ids["x"], shared])
        assert step["lines"][1].startswith("= ") and parse_value(step["lines"][1][2:]).array == s[name]


def test_a_constant_read_outside_the_scope_or_by_a_scope_left_unfolded_stays():
    x = ad.Variable(X, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            k = ad.constant(3.0)
            with ad.name_scope("a"):
                a = x * k * ad.constant(5.0)
            with ad.name_scope("b"):
                b = x * ad.constant(7.0)
            y = a + b * k  # k: read in scope a and outside any scope
        assert float(tape.gradient(y, x).numpy()) == 3.0 * 5.0 + 7.0 * 3.0
    both = ad.viz.graph(tr, collapse=True).model
    assert _kinds(both) == {"variable": 1, "constant": 1, "scope": 2, "op": 2}
    (kept,) = [n for n in both.nodes if n.kind == "constant"]
    assert kept.value.array() == 3.0
    assert sorted(both.node(e.dst).label for e in both.consumers_of(kept.id)) == ["Mul", "a"]
    only_a = ad.viz.graph(tr, collapse=["a"]).model  # b's ops stay as they are, and so does its constant
    assert sorted(float(n.value.array()) for n in only_a.nodes if n.kind == "constant") == [3.0, 7.0]


def test_a_scoped_chain_of_6000_ops_draws_its_scopes_and_no_constants():
    x = ad.constant(1.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for block in range(120):
                with ad.name_scope(f"block{block}"):
                    for _ in range(50):
                        y = y * 1.001
        dx = float(tape.gradient(y, x).numpy())
    assert dx == pytest.approx(1.001 ** 6000, rel=1e-3)
    m = ad.viz.graph(tr, collapse=True).model
    assert _kinds(m) == {"watched": 1, "scope": 120}  # before: 6,000 constants beside them
    assert not m.remarks  # small enough: nothing folded in the middle
    boxes = [n for n in m.nodes if n.kind == "scope"]
    assert [len(b.members) for b in boxes] == [50] * 120
    assert float(boxes[0].grad.array()) == pytest.approx(1.001 ** 5950, rel=1e-3)  # ∂y/∂(block0's output)


def test_leaves_that_are_not_constants_and_the_seed_of_a_backward_pass_never_fold():
    # the inner gradient runs in name scope "grads" under an outer tape: its seed ∂y/∂y is a constant
    # that only the rules' ops in "grads" read, and still its own box
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as outer:
            with ad.GradientTape() as inner:
                y = x * x * x
            with ad.name_scope("grads"):
                dy_dx = inner.gradient(y, x)
        d2 = outer.gradient(dy_dx, x)
    assert (float(dy_dx.numpy()), float(d2.numpy())) == (27.0, 18.0)  # 3x², 6x at 3
    flat, folded = build(tr.events), build(tr.events, collapse=True)
    (seed,) = [n for n in flat.nodes if n.seed_of is not None]
    assert {flat.node(e.dst).scope for e in flat.consumers_of(seed.id)} == {"grads"}
    assert [(n.kind, n.label) for n in folded.nodes if n.is_leaf] == [("variable", "x"), ("constant", seed.label)]
    (box,) = [n for n in folded.nodes if n.kind == "scope"]
    (fed,) = [e for e in folded.edges if folded.node(e.src).seed_of is not None]
    assert fed.dst == box.id and fed.count == 2  # both of the rule's Muls that read the seed: one arrow
    assert not any("constant" in note for note in box.notes)


def test_a_box_that_reads_a_tensor_twice_has_one_arrow_from_it_carrying_both_terms():
    # the box takes the id of its first op: the edge into that op and the edges into its other ops
    # must merge into one arrow (they once made two arrows, one with a single term's gradient)
    x = ad.Variable(X, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            with ad.name_scope("sq"):
                s = x * x + ad.sin(x)  # ∂s/∂x = 2x + cos x, from three reads of x
            y = s * 3.0
        dx = float(tape.gradient(y, x).numpy())
    assert dx == pytest.approx(3 * (2 * X + math.cos(X)), rel=1e-6)
    g = ad.viz.graph(tr, collapse=True)
    m = g.model
    (xn,) = [n for n in m.nodes if n.kind == "variable"]
    (box,) = [n for n in m.nodes if n.kind == "scope"]
    (arrow,) = m.consumers_of(xn.id)
    assert (arrow.dst, arrow.count) == (box.id, 3)
    assert float(arrow.grad.array()) == pytest.approx(dx, rel=1e-6) == float(xn.grad.array())
    (line,) = [s for s in g.source.splitlines() if s.strip().startswith(f"n{xn.id} -> n{box.id} ")]
    assert f"∂ {dx:.4g}" in line and "×3" in line


def test_an_arrow_merging_edges_from_several_tensors_writes_no_gradient():
    # a box's two outputs read by one op: the gradients along them are of different tensors, no sum of them
    x = ad.Variable(X, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            with ad.name_scope("two"):
                u, v = x * 2.0, x * 5.0
            y = u * v  # ∂y/∂u = v = 10, ∂y/∂v = u = 4: Mul reads the box twice
        assert float(tape.gradient(y, x).numpy()) == pytest.approx(2 * 5.0 * X * 2)
    g = ad.viz.graph(tr, collapse=True)
    m = g.model
    (box,) = [n for n in m.nodes if n.kind == "scope"]
    (arrow,) = m.consumers_of(box.id)
    assert arrow.count == 2 and arrow.grad is None and not arrow.grads
    (line,) = [s for s in g.source.splitlines() if s.strip().startswith(f"n{box.id} -> ")]
    assert 'label="×2"' in line and "∂" not in line


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sets(st.sampled_from(["a", "b", "c", None]), min_size=1), min_size=1, max_size=5))
def test_a_constant_folds_exactly_when_one_scope_reads_it(readers):
    """Constant ``j`` is read by the scopes in ``readers[j]`` (``None``: by an op outside any scope); every
    scope also reads x.  y is the sum of every product, so ∂y/∂x is closed form."""
    x = ad.Variable(X, name="x")
    values = [float(j + 2) for j in range(len(readers))]
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            consts = [ad.constant(v) for v in values]
            y = ad.constant(0.0)
            for name in ("a", "b", "c"):
                with ad.name_scope(name):
                    t = x * 1.0
                    for c, who in zip(consts, readers):
                        if name in who:
                            t = t * c
                y = y + t
            for c, who in zip(consts, readers):
                if None in who:
                    y = y + c
        dx = float(tape.gradient(y, x).numpy())
    products = {n: 1.0 for n in "abc"}
    for v, who in zip(values, readers):
        for n in who - {None}:
            products[n] *= v
    assert dx == pytest.approx(sum(products.values()))
    m = ad.viz.graph(tr, collapse=True).model
    kept = sorted(float(n.value.array()) for n in m.nodes if n.kind == "constant" and n.value.array() >= 2.0)
    assert kept == sorted(v for v, who in zip(values, readers) if len(who) > 1 or None in who)
    (xn,) = [n for n in m.nodes if n.kind == "variable"]
    sent = [float(e.grad.array()) for e in m.consumers_of(xn.id)]
    assert sorted(sent) == pytest.approx(sorted(products.values()))
    assert float(xn.grad.array()) == pytest.approx(sum(sent))


def test_an_array_of_data_read_by_one_scope_stays_in_the_picture():
    # A model's input batch is a constant that only its first layer reads: where the data comes in stays drawn,
    # while that layer's one-number constants (a scale) fold into its box.
    x = ad.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    w = ad.Variable([[1.0, 0.0], [0.0, 1.0]], name="w")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            with ad.name_scope("layer"):
                h = ad.matmul(x, w) * ad.constant(0.5)
            loss = ad.reduce_sum(h)
        tape.gradient(loss, w)
    folded = ad.viz.graph(tr, collapse=True).model
    assert _kinds(folded) == {"variable": 1, "constant": 1, "scope": 1, "op": 1}
    (data,) = [n for n in folded.nodes if n.kind == "constant"]
    (box,) = [n for n in folded.nodes if n.kind == "scope"]
    assert tuple(data.shape) == (3, 2) and any(e.src == data.id and e.dst == box.id for e in folded.edges)
