"""viz.explain: each way a gradient becomes None, named in the order a student reasons and marked on the graph.

The independent source is the tape itself: every case computes ``tape.gradient`` and checks that
``explain`` agrees with it (``None`` exactly when the reason is not ``connected``), never says both
"is None" and "is not None", and draws no path to a source that gets no gradient.
"""
import warnings

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import viz


def _broken(e):
    """The marked boxes: an op by its type (its label may be the name the code gives it), a leaf by its label."""
    return {n.op or n.label for n in e.graph.model.nodes if n.broken}


def _agrees(e, grad):
    """The explanation and the tape's gradient say the same thing, and the picture does too."""
    if grad is None:
        assert e.reason != "connected", e.message
        assert e.message.startswith("The gradient is None because") and "is not None" not in e.message
        assert not any(n.on_path for n in e.graph.model.nodes), "no path is drawn to a source without gradient"
        assert _broken(e), "a None is marked where the path breaks"
    else:
        assert e.reason == "connected", e.message
        assert e.message.startswith("The gradient is not None") and "is None because" not in e.message
    for sentence in e.message.split(". "):
        assert sentence[:1].isupper(), f"every sentence starts as one: {sentence!r}"
    for n in e.graph.model.nodes:
        for note in n.notes:
            assert note[:1].isupper() or note.startswith(("dtype", "not recorded", "left the", "assign")), note


def test_not_watched_trainable_false_and_tensors():
    x0 = ad.Variable(3.0, name="x0")
    x1 = ad.Variable(3.0, name="x1", trainable=False)
    x2 = ad.Variable(2.0, name="x2") + 1.0
    x3 = ad.constant(3.0, name="x3")
    with ad.GradientTape(persistent=True) as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grads = tape.gradient(y, [x0, x1, x2, x3])
    assert float(grads[0]) == 6.0 and grads[1:] == [None, None, None]
    _agrees(viz.explain(tape, y, x0), grads[0])
    e1 = viz.explain(tape, y, x1)
    _agrees(e1, grads[1])
    assert e1.reason == "not_trainable" and "trainable=False" in e1.message and _broken(e1) == {"x1"}
    assert "tape.watch(x1)" in e1.message
    for src, grad in ((x2, grads[2]), (x3, grads[3])):
        e = viz.explain(tape, y, src)
        _agrees(e, grad)
        assert e.reason == "not_watched" and "tape.watch" in e.message


def test_exercise_3_trainable_false_is_not_called_connected():
    """Exercise 3, task 3: b (trainable=False) is read by Mul, but never watched: None, and no path to b."""
    a = ad.Variable(2.0, name="a")
    b = ad.Variable(3.0, name="b", trainable=False)
    c = ad.Variable(4.0, name="c")
    with ad.trace():
        with ad.GradientTape(persistent=True) as tape:
            y = a * b + ad.constant(np.square(c.numpy()))
        grads = tape.gradient(y, [a, b, c])
    assert float(grads[0]) == 3.0 and grads[1] is None and grads[2] is None
    e = viz.explain(tape, y, b)
    _agrees(e, grads[1])
    assert e.reason == "not_trainable" and _broken(e) == {"b"}
    assert "depends on" not in e.message
    ok = viz.explain(tape, y, a)
    _agrees(ok, grads[0])
    assert "tape.gradient gave 3.0" in ok.message       # the number, as the tape computed it (b = 3)
    assert not _broken(ok) and 'bgcolor="#F2F2F2"' in ok.graph.source   # nothing wrong: a grey box


def test_exercise_3_read_through_numpy_method_is_marked_and_named():
    """c used only through c.numpy(): named as the NumPy detour it is, with .numpy() named, and c marked."""
    a = ad.Variable(2.0, name="a")
    c = ad.Variable(4.0, name="c")
    with ad.trace():
        with ad.GradientTape() as tape:
            y = a + ad.constant(np.square(c.numpy()))
        grad = tape.gradient(y, c)
    e = viz.explain(tape, y, c)
    _agrees(e, grad)
    assert e.reason == "left_numpy" and ".numpy() turned it into a plain number (4.0)" in e.message
    assert _broken(e) == {"c"}
    assert "never read while the tape was recording" not in e.message


def test_variable_replaced_by_tensor():
    x = ad.Variable(2.0)
    reasons = []
    for _ in range(2):
        with ad.GradientTape(persistent=True) as tape:
            y = x + 1
        e = viz.explain(tape, y, x)
        _agrees(e, tape.gradient(y, x))
        reasons.append(e.reason)
        x = x + 1   # should be x.assign_add(1)
    assert reasons == ["connected", "not_watched"]


def test_left_through_numpy():
    x = ad.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=ad.float32, name="x")
    with ad.trace():
        with ad.GradientTape() as tape:
            x2 = x**2
            y = np.mean(x2, axis=0)
            y = ad.reduce_mean(y, axis=0)
        assert tape.gradient(y, x) is None
    e = viz.explain(tape, y, x)
    _agrees(e, None)
    assert e.reason == "left_numpy" and "NumPy" in e.message
    assert _broken(e) == {"Pow"} and any(edge.broken and edge.kind == "leave"
                                                   for edge in e.graph.model.edges)
    assert "path breaks" in e.graph.source


def test_integer_dtype():
    x = ad.constant(10)
    with ad.trace(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ad.GradientTape() as g:
            g.watch(x)
            y = x * x
        grad = g.gradient(y, x)
    e = viz.explain(g, y, x)
    _agrees(e, grad)
    assert e.reason == "integer_dtype" and "int32" in e.message and _broken(e) == {"x"}


def test_integer_on_the_way():
    x = ad.constant(2.5)
    with ad.trace():
        with ad.GradientTape() as g:
            g.watch(x)
            y = ad.cast(ad.cast(x, ad.int32), ad.float32) * 2.0
        grad = g.gradient(y, x)
    e = viz.explain(g, y, x)
    _agrees(e, grad)
    assert e.reason == "integer_dtype" and "int32" in e.message and _broken(e) == {"Cast"}


def test_state_blocks_gradients():
    x0 = ad.Variable(3.0, name="x0")
    x1 = ad.Variable(0.0, name="x1")
    with ad.trace():
        with ad.GradientTape() as tape:
            x1.assign_add(x0)
            y = x1**2
        grad = tape.gradient(y, x0)
    e = viz.explain(tape, y, x0)
    _agrees(e, grad)
    assert e.reason == "state" and "assign_add" in e.message and "x1" in _broken(e)


def test_stop_recording_only_path():
    x = ad.constant(2.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            z = x * x
        y = z + 1.0
    e = viz.explain(tape, y, x)
    _agrees(e, tape.gradient(y, x))
    assert e.reason in ("stop_recording", "not_on_tape") and "Mul" in _broken(e)
    assert "stop_recording" in e.message


def test_stop_recording_on_one_branch_is_connected_and_says_what_is_left_out():
    x = ad.constant(2.0)
    with ad.trace():
        with ad.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                z = x * x
            y = x + z
        grad = tape.gradient(y, x)
    assert float(grad) == 1.0          # d(x + x²)/dx = 1 + 2x = 5 if it were all recorded; the tape gives 1
    e = viz.explain(tape, y, x)
    _agrees(e, grad)
    assert "tape.gradient gave 1.0" in e.message and "Mul is not counted" in e.message
    assert [n.kind for n in e.graph.model.nodes if n.broken] == ["skipped"]


def test_stop_gradient():
    x = ad.constant(2.0)
    with ad.trace():
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            only = ad.stop_gradient(x * x)
            part = x + ad.stop_gradient(x * x)
        g_only, g_part = tape.gradient(only, x), tape.gradient(part, x)
    assert g_only is None and float(g_part) == 1.0
    e = viz.explain(tape, only, x)
    _agrees(e, g_only)
    assert e.reason == "stop_gradient" and _broken(e) == {"StopGradient"}
    e = viz.explain(tape, part, x)
    _agrees(e, g_part)
    assert "StopGradient is not counted" in e.message and _broken(e) == {"StopGradient"}
    on_path = {n.op or n.label for n in e.graph.model.nodes if n.on_path}
    assert on_path == {"x", "Add"}, "the highlighted path is the one the gradient takes"


def test_not_connected():
    x = ad.Variable(2.0, name="x")
    y = ad.Variable(3.0, name="y")
    with ad.trace():
        with ad.GradientTape() as tape:
            z = y * y
        grad = tape.gradient(z, x)
    e = viz.explain(tape, z, x)
    _agrees(e, grad)
    assert e.reason == "not_read" and "x" in _broken(e)


def test_watched_but_not_connected():
    x, y = ad.constant(2.0), ad.constant(3.0)
    with ad.trace():
        with ad.GradientTape() as tape:
            tape.watch([x, y])
            z = y * y
        grad = tape.gradient(z, x)
    e = viz.explain(tape, z, x)
    _agrees(e, grad)
    assert e.reason == "not_connected" and {"x", "Mul"} <= _broken(e)


def test_target_from_an_earlier_tape():
    """A target computed on the previous cell's tape: "computed on another tape", both tapes named."""
    x = ad.constant(2.0)
    with ad.trace():
        with ad.GradientTape() as first:
            first.watch(x)
            y = x * x
        with ad.GradientTape() as second:
            second.watch(x)
            y2 = ad.sin(x)
        grad = second.gradient(y, x)
    assert float(ad.sin(x)) == pytest.approx(np.sin(2.0)) and y2 is not None
    e = viz.explain(second, y, x)
    _agrees(e, grad)
    assert e.reason == "other_tape" and "another tape (T1)" in e.message and "target" in _broken(e)


def test_target_not_on_the_tape_without_a_trace():
    x = ad.constant(2.0)
    with ad.GradientTape() as first:
        first.watch(x)
        y = x * x
    with ad.GradientTape() as second:
        second.watch(x)
    e = viz.explain(second, y, x)
    _agrees(e, second.gradient(y, x))
    assert e.reason == "not_on_tape" and "another (earlier) tape" in e.message


@pytest.mark.parametrize("value", [3.0, np.array([1.0, 2.0])])
def test_python_number_or_numpy_array_as_source(value):
    x = ad.constant(value)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    e = viz.explain(tape, y, value)
    assert e.reason == "python_number" and "cannot" in e.graph.source and len(_broken(e)) == 1
    assert ("a Python number" if isinstance(value, float) else "a NumPy array") in e.message
    assert not any(n.on_path for n in e.graph.model.nodes)


def test_watched_integer_source_unwatched_says_both():
    x = ad.constant(10)
    with ad.GradientTape() as tape:
        y = ad.cast(x, ad.float32) * 2.0
    e = viz.explain(tape, y, x)
    assert e.reason == "not_watched" and "integer tensor (int32)" in e.message


def test_control_flow_branch_not_taken():
    x = ad.constant(1.0)
    v0 = ad.Variable(2.0, name="v0")
    v1 = ad.Variable(2.0, name="v1")
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        result = v0 if x > 0.0 else v1**2
    e = viz.explain(tape, result, v1)
    _agrees(e, tape.gradient(result, v1))
    assert e.reason == "not_read"
    e = viz.explain(tape, result, x)
    _agrees(e, tape.gradient(result, x))


@pytest.mark.parametrize("reason", ["connected", "not_watched"])
def test_explanation_displays(reason):
    x = ad.constant(3.0)
    with ad.GradientTape(persistent=True) as tape:
        if reason == "connected":
            tape.watch(x)
        y = x * x + 1.0
    e = viz.explain(tape, y, x)
    assert e.reason == reason and str(e) == e.message
    assert e._repr_mimebundle_()["text/plain"] == e.message


def test_variable_read_only_under_stop_recording():
    v = ad.Variable(2.0, name="v")
    with ad.trace():
        with ad.GradientTape() as tape:
            with tape.stop_recording():
                y = v * v
            z = y + 1.0
        grad = tape.gradient(z, v)
    e = viz.explain(tape, z, v)
    _agrees(e, grad)
    assert e.reason == "not_read" and "stop_recording" in e.message and _broken(e) == {"v"}


def test_a_connected_gradient_says_what_it_would_be_had_every_part_counted():
    # The guide's point: y = x + x*x with x*x under stop_recording gives 1, not 1 + 2x = 5 at x = 2.
    x = ad.constant(2.0)
    with ad.trace():
        with ad.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                z = x * x
            y = x + z
        g = tape.gradient(y, x)
    assert float(g) == 1.0
    why = ad.viz.explain(tape, y, x)
    assert why.reason == "connected"
    assert "Had every part counted, the gradient would be 5.0, not 1.0." in why.message
    # The same through stop_gradient: d(x + stop_gradient(x*x))/dx = 1, 1 + 2x = 5 had it counted.
    with ad.trace():
        with ad.GradientTape() as tape2:
            tape2.watch(x)
            y2 = x + ad.stop_gradient(x * x)
        tape2.gradient(y2, x)
    assert "would be 5.0, not 1.0" in ad.viz.explain(tape2, y2, x).message


def test_explain_names_tensors_as_the_code_does():
    w = ad.Variable(2.0)                  # no name=: the code calls it w
    with ad.trace():
        with ad.GradientTape() as tape:
            u = w * w
            out = u + 1.0
        tape.gradient(out, w)
    e = viz.explain(tape, out, w)
    assert "'w'" in e.message and "Variable" not in e.message
    labels = {n.label for n in e.graph.model.nodes}
    assert {"w", "u", "out"} <= labels
    xi = ad.constant(3)
    with ad.GradientTape() as tape2, pytest.warns(UserWarning, match="floating"):
        tape2.watch(xi)
        yi = xi * xi
    e2 = viz.explain(tape2, yi, xi)
    assert e2.reason == "integer_dtype" and "'xi'" in e2.message
