"""Tests that pin the engine's fast paths: invariants that hold the speed, not the results.

The engine's hot path (``_record``, ``_tape``, ``_recording``, ``_context``)
takes shortcuts that behaviour tests cannot see: a record is a plain tuple
read by the field names ``_record`` declares, with its plain facts first; a
lone trace hears every op with the record as it is (no payload dict, no op
view), and several listeners each hear it through ``state.audience``;
announcements wait in one flat list laid out by ``_recording._Layout``;
scalar facts are looked up by type; a two-input op keeps only what its
rule reads; no trace or tape leaves a reference cycle.  These tests read
internals on purpose, to fail when a shortcut changes what it must not
(a wrong shape, a dropped event, a kept value, a cycle).  Their speed is
measured in ``benchmarks/`` (W1, ``trace_overhead.py``), never asserted here.
Behaviour tests live with the modules they test.
"""
import contextlib
import gc
import threading
import weakref

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _context, _op_view, _record, _recording, extend
from autodiff_viz.traces import event_to_dict


def _square_step(x):
    with ad.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x)


# -- records: named fields, plain facts first ------------------------------------
def test_a_record_reads_by_its_declared_names_and_lets_go_of_its_values():
    x, c = ad.constant([[1.0, 2.0]]), ad.constant(3.0)
    with ad.name_scope("layer"):
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * c
    (rec,) = tape._records
    assert rec[_record.PRIM].type == "Mul" and rec[_record.IN_IDS] == (x._id, c._id) and rec[_record.OUT_ID] == y._id
    assert rec[_record.IN_SHAPES] == ((1, 2), ()) and rec[_record.OUT_SHAPE] == (1, 2)
    assert rec[_record.SCOPE] == "layer" and rec[_record.INPUTS] == (None, c)  # Mul keeps c for x's gradient
    # The plain facts come first: a released record keeps exactly them, and from_facts rebuilds it.
    gone = _record.released(rec)
    assert gone[:_record.FACTS] == rec[:_record.FACTS] and gone[_record.FACTS:] == (None, None, None)
    assert _record.from_facts(rec[:_record.FACTS]) == gone and _record.released(gone) is gone
    op = _op_view.Op(gone)
    assert (op.type, op.name, op.in_ids, op.out_id) == ("Mul", "layer/Mul", (x._id, c._id), y._id)
    assert op.inputs == (None, None) and op.outputs == (None,)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[3.0, 3.0]])


def test_a_spent_tape_holds_each_record_as_released_makes_it():
    # The backward pass lets a reached record go from its unpacked fields, not through released():
    # both must give the same plain facts, for records on and off the path, nested tapes included.
    x, c = ad.constant([1.0, -2.0]), ad.constant(3.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            s = ad.reduce_sum(ad.sin(x) * x ** 3.0)
            off_path = ad.exp(x) * c  # recorded, never reached from s
        kept = list(inner._records)
        g = inner.gradient(s, x)
    assert len(kept) == 6 and inner._records == [_record.released(rec) for rec in kept]
    assert all(rec[_record.FACTS:] == (None, None, None) for rec in inner._records)
    outer_kept = list(outer._records)
    h = outer.gradient(g, x)
    assert outer._records == [_record.released(rec) for rec in outer_kept]
    v = np.array([1.0, -2.0])  # d/dx of 3x^2 sin x + x^3 cos x
    np.testing.assert_allclose(h.numpy(), 6 * v * np.sin(v) + 6 * v ** 2 * np.cos(v) - v ** 3 * np.sin(v), rtol=1e-5)
    assert off_path.shape == (2,)


def test_records_hold_the_shapes_and_dtypes_of_scalars_and_arrays_alike():
    # NumPy numbers' facts are looked up by type, arrays' are read: both must be the values' own.
    values = [ad.constant(1.5), ad.constant(2, dtype=ad.int32), ad.constant(1.5, dtype=ad.float64),
              ad.constant([1.0, 2.0]), ad.constant([[1.0], [2.0]], dtype=ad.float64)]
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([values[0]] + values[2:])
        with pytest.warns(UserWarning, match="must be floating"):
            tape.watch(values[1])  # (recorded all the same: the int ops' facts are checked too)
        cases = []
        for a in values:
            for b in values:
                if a.dtype == b.dtype:
                    cases.append(((a, b), a * b))
            cases.append(((a,), -a))
            cases.append(((a, a, a), ad.add_n([a, a, a])))
    for op, (inputs, out) in zip(tape._ops(), cases):
        assert op.in_shapes == tuple(tuple(np.shape(t.numpy())) for t in inputs)
        assert op.in_dtypes == tuple(t.dtype for t in inputs)
        assert (op.out_shape, op.out_dtype) == (tuple(np.shape(out.numpy())), out.dtype)
    assert len(tape._ops()) == len(cases)


# -- what a record keeps: only the values its rule reads ------------------------------
def test_saved_values_are_only_what_rules_need():
    x = ad.constant([1.0, -2.0])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = x + 1.0
        r = ad.nn.relu(a)
        r * x
    add, relu, mul = tape._ops()
    assert add.inputs == (None, None) and add.outputs == (None,)
    assert relu.inputs == (None,) and relu.outputs[0] is r
    assert mul.inputs[0] is r and mul.inputs[1] is x


def test_what_a_two_input_op_keeps_follows_which_inputs_need_a_gradient():
    # Mul's rule reads the other input; Pow's output is read only for the exponent's gradient.
    x, c = ad.constant(2.0), ad.constant(3.0)
    v = ad.Variable(5.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        cx, xc, xx, xv = c * x, x * c, x * x, x * v
        base_only, exponent = ad.pow(x, c), ad.pow(c, x)
    ops = tape._ops()
    assert ops[0].inputs == (c, None) and ops[1].inputs == (None, c)  # c needs no gradient: x is not kept
    assert ops[2].inputs == (x, x)
    assert ops[3].inputs[0] is x and ops[3].inputs[1] is not None  # a trainable variable needs one (its snapshot)
    assert float(ops[3].inputs[1]) == 5.0
    assert ops[4].outputs == (None,) and ops[5].outputs[0] is exponent
    gx, gv = tape.gradient([cx, xc, xx, xv, base_only, exponent], [x, v])
    assert float(gx) == pytest.approx(3.0 + 3.0 + 4.0 + 5.0 + 3.0 * 4.0 + 9.0 * np.log(3.0), rel=1e-6)
    assert float(gv) == 2.0
    # Nested tapes: each input counts if either tape watches it.
    with ad.GradientTape() as outer:
        outer.watch(c)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x * c
    assert inner._ops()[0].inputs == (x, c)
    assert float(inner.gradient(y, x)) == 3.0 and float(outer.gradient(y, c)) == 2.0


# -- announcements: one path, chosen when a listener comes or goes ----------------
def test_trace_removes_its_listener_on_error():
    before = _context.listeners()
    with pytest.raises(ZeroDivisionError):
        with ad.trace():
            1 / 0
    assert _context.listeners() == before and _context.LISTENING[0] == len(before)
    assert _context.state.audience is _context.NOBODY


def test_a_lone_trace_hears_records_as_they_are_and_several_listeners_each_hear_them():
    x = ad.constant(2.0)
    seen = []
    with ad.trace() as tr:
        assert _context.state.audience is tr._recorder  # alone: called with the record, no payload
        with extend.announcements(lambda kind, p: seen.append((kind, p))):
            assert _context.state.audience not in (tr._recorder, _context.NOBODY)  # both hear every op
            _square_step(x)
        assert _context.state.audience is tr._recorder
        _square_step(x)
    assert _context.state.audience is _context.NOBODY
    kinds = [e.kind for e in tr.events]
    assert kinds.count("op") == 2 and kinds.count("backward_step") == 2
    (op,) = [p for kind, p in seen if kind == "op"]
    (step,) = [p for kind, p in seen if kind == "backward_step"]
    assert op["node"].type == "Mul" and op["node"].inputs == (x, x) and op["inputs"] == (x, x)
    assert step["node"].type == "Mul" and [float(g) for g in step["input_grads"]] == [2.0, 2.0]
    assert [float(t) for t in step["totals"]] == [2.0, 4.0] and step["counts"] == (1, 2)


def test_a_trace_writes_the_same_events_alone_or_beside_another_listener():
    x = ad.constant([1.0, -2.0])

    def events(beside):
        with ad.trace() as tr, contextlib.ExitStack() as also:
            if beside:
                also.enter_context(extend.announcements(lambda kind, p: None))
            with ad.GradientTape() as t:
                t.watch(x)
                y = ad.add_n([ad.tanh(x), x * x, x])
            t.gradient(y, x)
        return [event_to_dict(e) for e in tr.events]

    alone, beside = events(False), events(True)
    ids = {e["node"] for e in alone if e["kind"] == "op"}
    assert len(alone) == len(beside) and len(ids) == 3  # Tanh, Mul, AddN
    def strip(e):
        return {k: v for k, v in e.items() if k not in ("node", "tape", "inputs", "output", "tensor", "targets",
                                                        "sources", "seed")}
    assert [strip(e) for e in alone] == [strip(e) for e in beside]
    (add_n,) = [e for e in alone if e["kind"] == "op" and e["op_type"] == "AddN"]
    assert len(add_n["in_values"]) == 3  # three rows of input facts read back from the waiting list
    (last,) = [e for e in alone if e["kind"] == "gradient_end"]
    want = (1.0 - np.tanh([1.0, -2.0]) ** 2) + 2.0 * np.array([1.0, -2.0]) + 1.0
    np.testing.assert_allclose(last["results"][0]["head"], want, rtol=1e-6)


def test_a_thread_without_a_listener_hears_nothing_while_another_thread_traces():
    x = ad.constant(3.0)
    audience, grads = [], []

    def worker():
        audience.append(_context.state.audience)
        grads.append(float(_square_step(x)))

    with ad.trace() as tr:
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert audience == [_context.NOBODY] and grads == [6.0]
    assert not [e for e in tr.events if e.kind == "op"]


# -- the waiting list ---------------------------------------------------------------
def test_waiting_announcements_become_the_events_made_at_once():
    # A trace that keeps tensors turns each announcement into its event at once; one that does not
    # lets small ones wait in the flat list: read back by the layout, they must give the same events.
    def events(keep):
        x = ad.Variable([0.5, 1.5], name="x")
        with ad.trace(keep_tensors=keep) as tr:
            with ad.GradientTape() as t:
                y = ad.reduce_sum(ad.sin(x) * ad.constant([2.0, 3.0]))
            t.gradient(y, x)
        return [event_to_dict(e) for e in tr.events]

    waited, at_once = events(False), events(True)
    def strip(e):
        return {k: v for k, v in e.items() if k not in ("node", "tape", "inputs", "output", "tensor", "variable",
                                                        "targets", "sources", "seed")}
    assert [strip(e) for e in waited] == [strip(e) for e in at_once]
    (last,) = [e for e in waited if e["kind"] == "gradient_end"]
    np.testing.assert_allclose(last["results"][0]["head"], np.cos([0.5, 1.5]) * [2.0, 3.0], rtol=1e-6)


def test_the_waiting_list_layouts_name_their_offsets():
    lay = _recording._OP
    assert (lay.record, lay.value, lay.n_inputs, lay.row) == (0, 1, 2, 1)
    step = _recording._STEP
    assert (step.record, step.n_sent, step.size, step.row) == (0, 3, 4, 3)


def test_a_waiting_op_holds_its_tapes_record_and_one_with_a_rule_of_its_own_never_waits(backend_name):
    # A custom_gradient's closure may hold anything (here a large array): its record must not wait.
    big = np.ones(100_000)

    @ad.custom_gradient
    def f(v):
        return v * 2.0, lambda up: up * 2.0 + float(big[0]) * 0.0

    x = ad.constant(1.5)
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            t.watch(x)
            y = f(x) * 3.0
        waiting = [s for s in tr._recorder.pending if type(s) is tuple and len(s) == len(_record._FIELDS)]
        assert all(rec[_record.RULE] is None for rec in waiting)
        if backend_name == "numpy":  # (another backend's values become events at once: nothing waits)
            assert any(s is t._records[-1] for s in waiting)  # the record itself, not a copy
        g = t.gradient(y, x)
    assert float(g) == 6.0
    ops = [e for e in tr.events if e.kind == "op"]
    assert [e.op_type for e in ops] == ["IdentityN", "Mul"] and ops[1].in_values[1].head == (3.0,)


# -- no cycles: a finished trace and its tapes go with their last name ---------------
def test_a_finished_trace_is_freed_with_its_tape_without_the_garbage_collector():
    # The trace, its recorder and the tapes it saw hold no reference cycle: dropping the last
    # name frees them at once, even with values still waiting to become events.
    gc.disable()
    try:
        with ad.trace() as tr:
            x = ad.constant(0.5)
            with ad.GradientTape() as tape:
                tape.watch(x)
                y = ad.tanh(x) * 2.0
            tape.gradient(y, x)
        trace_ref, tape_ref, recorder_ref = weakref.ref(tr), weakref.ref(tape), weakref.ref(tr._recorder)
        del tr, tape, y
        assert trace_ref() is None and tape_ref() is None and recorder_ref() is None
    finally:
        gc.enable()


# -- the tape stack and the process-wide count every op reads first -----------------
def test_a_tape_left_inside_a_custom_gradient_function_leaves_the_stack():
    x = ad.constant(2.0)
    outer = ad.GradientTape()
    outer.__enter__()
    outer.watch(x)
    active = _context.ACTIVE[0]

    @ad.custom_gradient
    def f(v):
        outer.__exit__(None, None, None)  # entered outside the function, left inside it
        return v * v, lambda up: up * 2.0 * v

    f(x)
    assert outer not in _context.state.tapes and _context.ACTIVE[0] == active - 1
    # Later tapes work as usual, and the tape that left notes nothing more.
    notes = len(outer._notes)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    assert float(tape.gradient(y, x)) == 3.0 and len(outer._notes) == notes


# -- a number with a tensor, while nothing records ------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_number_with_a_tensor_outside_any_tape_gives_numpys_own_result(dtype, backend_name):
    if dtype is np.float16 and backend_name == "array_api_strict":
        pytest.skip("the Array API standard has no float16")
    # ``0.01 * g`` outside a tape runs on the arrays without making the number a tensor:
    # the same bytes and dtype as NumPy's, and as the same op recorded on a tape.
    arr = np.asarray([[0.3, -1.7, 2.5], [1e-3, 4.0, -0.2]], dtype=dtype)
    g = ad.constant(arr)
    cases = [(lambda t: 0.01 * t, lambda a: dtype(0.01) * a), (lambda t: t * 0.5, lambda a: a * dtype(0.5)),
             (lambda t: t - 0.25, lambda a: a - dtype(0.25)), (lambda t: 2.0 - t, lambda a: dtype(2.0) - a),
             (lambda t: t / 3.0, lambda a: a / dtype(3.0)), (lambda t: 0.7 + t, lambda a: dtype(0.7) + a)]
    for ours, numpys in cases:
        for _ in range(2):  # (the first call keeps the number's NumPy scalar; the second takes the shortcut)
            got = ours(g)
        want = numpys(arr)
        assert got.dtype.as_numpy_dtype == dtype and got.numpy().tobytes() == want.tobytes()
        with ad.GradientTape() as tape:
            tape.watch(g)
            taped = ours(g)
        assert taped.numpy().tobytes() == want.tobytes() and len(tape._records) == 1


def test_a_failing_op_on_a_number_outside_any_tape_is_reported_by_the_op(backend_name):
    if backend_name == "cupy":
        pytest.skip("np.errstate sets NumPy's floating-point traps; a GPU kernel has none to raise")
    big = ad.constant([3e38], dtype=ad.float32)
    with np.errstate(over="raise"):
        for _ in range(2):  # (the second call takes the shortcut, and its failure is said as the first)
            with pytest.raises(ad.errors.InvalidArgumentError, match=r"^Mul: .*overflow"):
                _ = 10.0 * big
