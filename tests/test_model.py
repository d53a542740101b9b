"""The view model (viz/model/): built once for every picture, its invariants, the storyboard's deltas,
formulas from the table of primitives."""
import json
import math

import pytest

import autodiff_viz as ad
from autodiff_viz import events as ev, traces
from autodiff_viz import tour
from autodiff_viz._registry import NOT_DIFFERENTIABLE, PRIMITIVES
from autodiff_viz.viz.model import build as _build, story as _story

pytest.importorskip("matplotlib")


def _num(text):
    return float(text)


# ---------------------------------------------------------------------------
# The gradient table is right at every step of every tour animation
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(tour.ANIMATIONS))
def test_table_totals_are_the_sums_and_end_at_the_gradients(name):
    anim = tour.ANIMATIONS[name]()
    steps = anim.steps
    # a backward pass, or (forward mode) an evaluation trace: each tour animation teaches one
    assert any(s["phase"] == "backward" for s in steps) or any(s["trace"] for s in steps)
    for k, st in enumerate(steps):
        for row in st["panel"]:
            assert _num(row["total"]) == pytest.approx(sum(_num(t) for t in row["terms"]), rel=1e-3), \
                (name, k, row)
        if st["phase"] == "done":
            # Each result equals the total its tensor's row holds when the backward pass ends.
            totals = {row["name"]: _num(row["total"]) for row in st["panel"]}
            for line in st["results"]:
                who, value = line[len("∂target/∂"):].split(" = ")
                assert totals[who] == pytest.approx(_num(value), rel=1e-6), (name, k, line)


def test_second_derivative_table_shows_27_when_the_first_gradient_is_done():
    anim = tour.animation_second_derivative()
    first_done = next(s for s in anim.steps if s["phase"] == "done")
    assert first_done["results"] == ["∂target/∂x = 27.0"]
    row = next(r for r in first_done["panel"] if r["name"] == "x")
    assert _num(row["total"]) == 27.0 and len(row["terms"]) == 3   # 3x² formed from three paths: 9 + 9 + 9
    # A "+=" is shown on the step that adds it; the next step shows the plain running total.
    k = anim.steps.index(first_done)
    xi = [n["label"] for n in anim.nodes].index("x")
    plus = [i for i, s in enumerate(anim.steps) if s["grads"][xi].startswith("+=")]
    assert plus
    for i in plus:
        now, after = anim.steps[i]["grads"][xi], anim.steps[i + 1]["grads"][xi]
        assert after == now.split("→ ")[1] or after.startswith("+=")
    assert anim.steps[k]["grads"][xi] == "27.0"
    second_done = [s for s in anim.steps if s["phase"] == "done"][1]
    assert second_done["results"] == ["∂target/∂x = 18.0"]          # 6x


# ---------------------------------------------------------------------------
# The storyboard is deltas: linear in ops, and replays to the same states
# ---------------------------------------------------------------------------
def _chain(n):
    x = ad.constant(1.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n):
                y = y * 1.001
        tape.gradient(y, x)
    return tr


def test_storyboard_grows_linearly_with_ops():
    sizes = {}
    for n in (50, 200):
        tr = _chain(n)
        story = _story.build_story(tr.events, _build.build(tr.events, subscripts=True))
        sizes[n] = len(json.dumps(story["steps"]))
    assert sizes[200] / sizes[50] < 4 * 1.3   # 4x the ops, about 4x the text (full snapshots gave 16x)


def test_states_replay_deltas_to_full_steps():
    tr = _chain(3)
    anim = ad.viz.animate(tr)
    full = anim.steps
    assert len(full) == len(anim.data["steps"])
    labels = [n["label"] for n in anim.nodes]
    last = labels.index("Mul₃")
    assert full[0]["alive"][last] == 0 and full[-1]["alive"][last] == 1
    assert full[-1]["vals"][last] == "1.003"                # 1.001³
    assert _story.state_at(anim.data, -1) == full[-1]


def test_player_html_of_a_chain_stays_small():
    tr = _chain(300)
    html = ad.viz.animate(tr).to_html()
    assert len(html.encode()) < 1_000_000   # full snapshots made this about 5 MB


# ---------------------------------------------------------------------------
# Formulas live in the table of primitives and travel in the events
# ---------------------------------------------------------------------------
def test_every_differentiable_op_has_a_formula_and_partials():
    missing = [p.type for p in PRIMITIVES.values()
               if p.grad is not NOT_DIFFERENTIABLE and callable(p.grad) and (not p.formula or not p.partials)]
    assert missing == []


def test_op_events_carry_the_formula_and_the_rule_text_uses_it():
    x = ad.constant(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.sin(x)
        tape.gradient(y, x)
    op = next(e for e in tr.events if e.kind == "op")
    assert (op.formula, op.partials) == ("sin(a)", ("cos(a)",))
    again = ad.Trace.from_json(tr.to_json())
    assert next(e for e in again.events if e.kind == "op").partials == ("cos(a)",)
    back = next(s for s in ad.viz.animate(tr).steps if s["phase"] == "backward")
    # The local derivative's number is read off the step: cos(2).
    assert back["numbers"]["local"][0] == pytest.approx(math.cos(2.0), rel=1e-6)
    assert f"∂(sin(a))/∂a = cos(a) = {back['lines'][2].rsplit(' = ', 1)[1]}" == back["lines"][2]


# ---------------------------------------------------------------------------
# One model: graph and animation agree on labels
# ---------------------------------------------------------------------------
def test_graph_and_animation_name_nodes_alike():
    x, y = ad.constant(3.0), ad.constant(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch([x, y])
            z = x * y + ad.sin(x)
        tape.gradient(z, [x, y])
    g = ad.viz.graph(tr)
    a = ad.viz.animate(tr)
    assert [n.label for n in g.model.nodes if n.is_leaf] == ["x", "y"]
    assert [n["label"] for n in a.nodes if n["kind"] == "leaf"] == ["x", "y"]
    named = ad.viz.graph(tr, names={"z": z})
    assert "z" in [n.label for n in named.model.nodes]


def test_animate_a_function_uses_its_parameter_names():
    anim = ad.viz.animate(lambda a, b: a * a * b, 2.0, 3.0, linked=False)
    assert [n["label"] for n in anim.nodes if n["kind"] == "leaf"] == ["a", "b"]


# ---------------------------------------------------------------------------
# Invariants: bad traces raise TraceFormatError naming the event, never hang
# ---------------------------------------------------------------------------
S = ev.summarize


def _op(seq, node, inputs, output, shape=()):
    return ev.Op(seq, 1, node=node, op_type="Mul", inputs=inputs, output=output, shape=shape, value=S(1.0))


@pytest.mark.parametrize("events, words", [
    ([ev.TapeBegin(0, 1), _op(1, 1, (10, 11), 11)], "used before"),                    # its own input
    ([ev.TapeBegin(0, 1), _op(1, 1, (12,), 11), _op(2, 2, (11,), 12)], "used before"),  # a two-op cycle
    ([ev.TapeBegin(0, 1), _op(1, 1, (10,), 11), _op(2, 2, (10,), 11)], "already made"),
    ([ev.TapeBegin(0, 1), ev.BackwardStep(1, 1, node=99, op_type="Mul")], "never recorded"),
    ([ev.TapeBegin(0, 1), ev.Accumulate(1, 1, tensor=3, node=7)], "never recorded"),
    ([ev.TapeBegin(0, 1), _op(1, 1, (10,), 11, shape=(2 ** 40, 2 ** 40))], "more elements"),
    ([ev.TapeBegin(0, 1), _op(1, 1, (10,), 11, shape=(-1, 2))], "not a shape"),
])
def test_broken_traces_raise_a_format_error(events, words):
    for view in (ad.viz.graph, ad.viz.animate):
        with pytest.raises(ev.TraceFormatError, match=words) as info:
            view(events)
        assert "event 1" in str(info.value) or "event 2" in str(info.value)


def test_a_cyclic_trace_from_json_is_refused_when_it_loads():
    events = [ev.TapeBegin(0, 1), _op(1, 1, (12,), 11), _op(2, 2, (11,), 12)]
    text = json.dumps({"format": ev.FORMAT, "version": ev.VERSION, "events": [traces.event_to_dict(e) for e in events]})
    with pytest.raises(ev.TraceFormatError, match=r"event 2 \(op Mul\): output 12 is used before the op makes it"):
        ad.Trace.from_json(text)
    with pytest.raises(ev.TraceFormatError, match="a cycle"):  # the same rule for a hand-written list
        ad.viz.animate(events)


# ---------------------------------------------------------------------------
# A tape recorded without a trace says so, and never prints None
# ---------------------------------------------------------------------------
def test_untraced_tape_is_drawn_with_a_hint_and_no_none():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    g = ad.viz.graph(tape)
    assert not g.model.traced and any("ad.trace()" in r for r in g.model.remarks)
    assert "None" not in g.source
    assert "ad.trace()" in g.source
    anim = ad.viz.animate(tape)
    assert any("ad.trace()" in line for line in anim.steps[0]["lines"])
    assert not any("None" in v for st in anim.steps for v in st["vals"])


def test_a_layout_that_falls_back_says_so_in_the_first_step(monkeypatch):
    monkeypatch.setenv("AUTODIFF_VIZ_DOT", "no-such-dot-program")
    tr = _chain(3)
    anim = ad.viz.animate(tr)
    assert anim.data["layout"]["engine"] == "layered"
    assert anim.data["layout"]["note"] in anim.steps[0]["lines"]


def test_a_named_constant_keeps_its_name_in_pictures():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * ad.constant(2.0, name="rate")
        tape.gradient(y, x)
    again = ad.Trace.from_json(tr.to_json())
    for source in (tr, again):
        labels = {n.label for n in ad.viz.graph(source, names=False).model.nodes}
        assert "rate" in labels and "const" not in labels
        assert "rate" in [n["label"] for n in ad.viz.animate(source, names=False).nodes]


def _scalar_steps(keep_tensors):
    v = ad.Variable(0.5)
    x = ad.constant(2.0)
    with ad.trace(keep_tensors=keep_tensors) as tr:
        for _ in range(3):
            with ad.GradientTape() as tape:
                tape.watch(x)
                y = ad.tanh(x) * v + x * x
            g = tape.gradient(y, [x, v])
            v.assign_sub(0.1 * g[1])   # a variable changes between steps: its values must be those of each step
    return tr


def test_events_made_later_equal_events_made_at_once():
    # Small values wait and become events when the trace is read; keep_tensors=True makes every event at
    # once.  Both give the same events (ids differ between runs: compare everything else).
    def plain(tr):
        return [{k: v for k, v in traces.event_to_dict(e).items() if k not in ("tape", "node", "tensor", "inputs",
                 "output", "targets", "sources", "variable", "parent", "seed")} for e in tr.events]
    assert plain(_scalar_steps(False)) == plain(_scalar_steps(True))
    tr = _scalar_steps(False)
    watched = [e.value.head[0] for e in tr.events if e.kind == "watch" and e.variable]
    assert watched == pytest.approx([0.5, 0.5 - 0.1 * math.tanh(2.0),
                                     0.5 - 0.1 * math.tanh(2.0) - 0.1 * math.tanh(2.0)], rel=1e-6)


def test_the_untraced_hint_is_shown_whole():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        x * x
    source = ad.viz.graph(tape).source
    assert "with ad.trace():" in source and "to see them." in source   # the instruction and the sentence's end
