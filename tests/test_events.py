"""Trace events: what the engine emits, JSON round trip, schema validation, summaries; traces are per thread,
bounded, and not kept alive by the package."""
import gc
import json
import threading
import weakref

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import events as ev
from autodiff_viz._recording import from_tape


def _square_trace():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        g = tape.gradient(y, x)
    return tr, x, y, g


def test_kinds_in_order_and_seq():
    tr, x, y, g = _square_trace()
    kinds = [e.kind for e in tr.events]
    assert kinds[:3] == ["tape_begin", "watch", "op"]
    assert kinds.index("gradient_begin") < kinds.index("backward_step") < kinds.index("gradient_end")
    assert [e.seq for e in tr.events] == list(range(len(tr.events)))
    assert len({e.tape for e in tr.events}) == 1


def test_op_event_keeps_duplicate_inputs_and_values():
    tr, x, y, g = _square_trace()
    (op,) = tr.of_kind("op")
    assert op.op_type == "Mul" and op.inputs == (x._id, x._id) and op.output == y._id
    assert op.value.head == (9.0,) and op.in_values[0].head == (3.0,)


def test_backward_step_replays_without_engine():
    tr, x, y, g = _square_trace()
    (step,) = tr.of_kind("backward_step")
    assert step.upstream.head == (1.0,)
    assert [s.head for s in step.grads] == [(3.0,), (3.0,)]   # d(x*x)/dx sent twice: 3 + 3
    acc = [e for e in tr.of_kind("accumulate") if e.tensor == x._id]
    assert [a.total.head[0] for a in acc] == [3.0, 6.0] and acc[-1].count == 2
    (end,) = tr.of_kind("gradient_end")
    assert end.results[0].head == (6.0,) and end.spent


def test_nested_tapes_are_told_apart():
    x = ad.Variable(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as outer:
            with ad.GradientTape() as inner:
                y = x * x * x
            d = inner.gradient(y, x)
        d2 = outer.gradient(d, x)
    assert float(d) == 27.0 and float(d2) == 18.0
    begins = tr.of_kind("tape_begin")
    assert [b.tape for b in begins] == [outer._id, inner._id] and begins[1].parent == outer._id
    during = {e.during for e in tr.of_kind("op") if e.tape == outer._id}
    assert during == {None, inner._id}   # the outer tape recorded the inner backward pass
    watch = [w for w in tr.of_kind("watch") if w.tape == inner._id]
    assert watch[0].auto and watch[0].variable and watch[0].name == "Variable:0"


def test_json_round_trip():
    tr, *_ = _square_trace()
    text = tr.to_json()
    back = ad.Trace.from_json(text)
    assert back.events == tr.events
    assert json.loads(text)["format"] == "autodiff_viz.trace"


def test_nonfinite_values_survive_json():
    s = ev.summarize(np.array([np.nan, np.inf, -1.0], dtype=np.float32))
    tr = ad.Trace([ev.Watch(0, 1, tensor=5, value=s)])
    back = ad.Trace.from_json(tr.to_json())
    head = back.events[0].value.head
    assert np.isnan(head[0]) and head[1] == np.inf and head[2] == -1.0
    assert "NaN" not in tr.to_json()   # plain JSON, not Python's extension


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(format="pickle"), "not an autodiff_viz trace"),
    (lambda d: d["events"][0].update(kind="exec"), "unknown event kind"),
    (lambda d: d["events"][0].update(evil=1), "unknown fields"),
    (lambda d: d["events"][2].pop("inputs"), "missing fields"),
    (lambda d: d["events"][2].update(inputs="1,2"), "expected a list"),
    (lambda d: d["events"][2].update(output=True), "expected an integer"),
    (lambda d: d["events"][2]["value"].update(size=7), "does not match shape"),
    (lambda d: d["events"][2]["attrs"].update(f={"__class__": "x"}), "attributes hold"),
])
def test_malformed_traces_are_rejected(mutate, message):
    tr, *_ = _square_trace()
    data = json.loads(tr.to_json())
    mutate(data)
    with pytest.raises(ev.TraceFormatError, match=message):
        ad.Trace.from_json(json.dumps(data))


def test_not_json_is_rejected():
    with pytest.raises(ev.TraceFormatError, match="not valid JSON"):
        ad.Trace.from_json(b"\x80\x04K\x01.")   # a pickle is not even read
    with pytest.raises(ev.TraceFormatError):
        ad.Trace.from_json('{"format": "autodiff_viz.trace", "version": 1, "events": [NaN]}')


def test_large_arrays_are_summarized():
    rng = np.random.default_rng(0)
    a = ad.constant(rng.standard_normal((1000, 1000)).astype(np.float32))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(a)
            loss = ad.reduce_sum(ad.tanh(a) * a)
        tape.gradient(loss, a)
    text = tr.to_json()
    assert len(text) < 200_000
    s = tr.of_kind("watch")[0].value
    assert s.shape == (1000, 1000) and s.size == 10**6 and len(s.head) == ev.HEAD
    assert s.min == pytest.approx(float(a.numpy().min())) and s.mean == pytest.approx(float(a.numpy().mean()), abs=1e-6)


def test_summary_of_small_values_is_complete():
    s = ev.summarize(ad.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert s.complete and s.array().tolist() == [[1.0, 2.0], [3.0, 4.0]] and s.mean == 2.5
    b = ev.summarize(np.array([True, False]))
    assert b.dtype == "bool" and b.head == (1, 0)
    assert ev.summarize(None) is None


def test_notes_leave_state_skipped():
    x = ad.Variable(2.0, name="x")
    v = ad.Variable(0.0, name="v")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            y = x * 2.0
            np.asarray(y)
            v.assign_add(1.0)
            with tape.stop_recording():
                x * x
    assert [e.how for e in tr.of_kind("leave")] == ["numpy"]
    (state,) = tr.of_kind("state")
    assert state.name == "v:0" and state.how == "assign_add" and state.value.head == (1.0,)
    (skipped,) = tr.of_kind("op_skipped")
    assert skipped.op_type == "Mul" and skipped.reason == "stop_recording"


def test_from_tape_without_trace():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape(persistent=True) as tape:
        ad.sin(x) * x
    tr = from_tape(tape)
    assert [e.op_type for e in tr.of_kind("op")] == ["Sin", "Mul"]
    (w,) = tr.of_kind("watch")
    assert w.name == "x:0" and w.auto
    mul = tr.of_kind("op")[1]
    assert mul.in_names[1] == "x:0"


def test_each_listener_gets_its_own_payload():
    from autodiff_viz import extend
    seen = []

    def greedy(kind, payload):  # a listener may keep or change what it is given
        payload.clear()

    x = ad.constant(2.0)
    with ad.trace() as tr, extend.announcements(greedy), extend.announcements(lambda k, p: seen.append((k, set(p)))):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
    assert ("op", {"tape", "node", "output", "inputs"}) in seen
    step = [keys for kind, keys in seen if kind == "backward_step"]
    assert step and {"upstream", "input_grads", "totals", "counts"} <= step[0]
    acc = [e for e in tr.of_kind("accumulate") if e.tensor == x._id]
    assert [a.total.head[0] for a in acc] == [2.0, 4.0] and [a.count for a in acc] == [1, 2]


# ---------------------------------------------------------------------------
# Traces are per thread, bounded, and not kept alive by the package
# ---------------------------------------------------------------------------
def test_a_trace_sees_only_its_own_thread():
    started, done = threading.Event(), threading.Event()

    def train():
        v = ad.Variable(1.0)
        started.set()
        while not done.is_set():
            with ad.GradientTape() as t:
                loss = v * v
            t.gradient(loss, v)

    other = threading.Thread(target=train)
    other.start()
    started.wait()
    try:
        x = ad.constant(2.0)
        with ad.trace() as tr:
            for _ in range(50):
                with ad.GradientTape() as tape:
                    tape.watch(x)
                    y = x * x * x
                tape.gradient(y, x)
    finally:
        done.set()
        other.join()
    ops = [e for e in tr.events if e.kind == "op"]
    assert len(ops) == 100 and {e.op_type for e in ops} == {"Mul"}
    assert [e.seq for e in tr.events] == list(range(len(tr.events)))
    assert len({e.tape for e in tr.events}) == 50
    assert sum(1 for e in tr.events if e.kind == "gradient_begin") == 50


def test_a_full_trace_drops_events_with_one_warning():
    x = ad.constant(2.0)
    with pytest.warns(RuntimeWarning, match="max_events"):
        with ad.trace(max_events=20) as tr:
            for _ in range(10):
                with ad.GradientTape() as tape:
                    tape.watch(x)
                    y = x * x
                tape.gradient(y, x)
    assert len(tr.events) == 20 and tr.dropped > 0
    with pytest.raises(ValueError, match="max_events"):
        with ad.trace(max_events=0):
            pass


def test_a_closed_trace_is_freed_with_its_names_and_tapes():
    x = ad.constant(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
    ref = weakref.ref(tr)
    assert ad.viz.graph(tape).model.traced   # the tape finds its trace
    del tr
    gc.collect()
    assert ref() is not None                 # the tape still holds it
    del tape, y
    gc.collect()
    assert ref() is None
