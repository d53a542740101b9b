"""What a backward pass reaches: the shortcut that skips the walk over the records, and when it must not.

A pass takes every live id of the tape as reached when the tape watches only
sources and no record stops a gradient (``_tape._backward``); otherwise it walks
the records.  Each case checks values against closed forms, and which rules ran
by the ops an outer tape recorded for them.
"""
import numpy as np

import autodiff_viz as ad

X = np.array([0.3, -1.2, 2.0], dtype=np.float32)
Y = np.array([1.5, 0.25, -0.7], dtype=np.float32)


def _types(tape):
    return [rec[0].type for rec in tape._records]


def test_every_record_reached_gives_the_closed_form_and_runs_every_rule(backend_name):
    x = ad.constant(X)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = ad.reduce_sum(ad.sin(x) * x ** 3.0)
        g = inner.gradient(y, x)
        assert inner._watched == {x._id}
        if backend_name != "array_api_strict":  # (its dtypes are never known floating at once: the walk runs)
            assert not inner._stops
    x64 = X.astype(np.float64)
    np.testing.assert_allclose(g.numpy(), np.cos(x64) * x64 ** 3 + 3 * np.sin(x64) * x64 ** 2, rtol=1e-5)
    h = outer.gradient(g, x)
    want = -np.sin(x64) * x64 ** 3 + 6 * np.cos(x64) * x64 ** 2 + 6 * np.sin(x64) * x64
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-4)


def test_a_watched_tensor_that_is_not_a_source_is_not_reached():
    # The tape watches x and y; the gradient is asked for x only: sin(y)'s rule must not run.
    x, y = ad.constant(X), ad.constant(Y)
    with ad.GradientTape(persistent=True) as outer:
        outer.watch([x, y])
        with ad.GradientTape() as inner:
            inner.watch([x, y])
            z = ad.reduce_sum(x * y + ad.sin(y))
        before = len(outer._records)
        (gx,) = inner.gradient(z, [x])
    np.testing.assert_array_equal(gx.numpy(), Y)
    assert "Cos" not in _types(outer)[before:]  # (sin's rule reads cos(y): it never ran)
    assert outer.gradient(gx, y).numpy().tolist() == [1.0, 1.0, 1.0]


def test_a_record_without_a_gradient_stops_reach():
    x = ad.constant(X)
    with ad.GradientTape() as tape:
        tape.watch(x)
        z = ad.reduce_sum(x * ad.stop_gradient(x) + ad.cast(ad.cast(x * 4.0, ad.int32), ad.float32))
    assert tape._stops
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), X)  # d/dx of x*c with c = x, held fixed


def test_a_comparison_marks_the_tape_and_its_result_carries_no_gradient():
    x = ad.constant(X)
    with ad.GradientTape() as tape:
        tape.watch(x)
        positive = ad.cast(ad.greater(x, 0.0), ad.float32)
        z = ad.reduce_sum(positive * x)
    assert tape._stops
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), (X > 0).astype(np.float32))


def test_reset_forgets_what_the_tape_watched_and_stopped():
    x, y = ad.constant(X), ad.constant(Y)
    with ad.GradientTape() as tape:
        tape.watch(y)
        ad.stop_gradient(y * 2.0)
        tape.reset()
        assert not tape._stops and tape._watched == set()
        tape.watch(x)
        z = ad.reduce_sum(x * x)
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), 2 * X)


def test_a_variable_read_is_watched_and_counts_as_watched():
    v = ad.Variable(X)
    c = ad.constant(Y)
    with ad.GradientTape() as tape:
        tape.watch(c)
        z = ad.reduce_sum(v * c)
    assert tape._watched == {v._id, c._id}
    (gv,) = tape.gradient(z, [v])  # c is watched but not a source: the walk decides, and gives c's values
    np.testing.assert_array_equal(gv.numpy(), Y)
