"""``explain`` beyond None (viz/explain_value.py): NaN, inf, zero, tiny, detours, a summed target, a spent tape.

Each case runs on the engine and checks its real gradient against closed-form math first, then what
``explain`` says about it and which box it marks.
"""
import contextlib
import math

import numpy as np
import pytest

import autodiff_viz as ad

from test_nonfinite import cross_entropy, traced

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the engine's NumPy warns on log(0), 1/0


def explained(f, *values, source=0):
    tr, tape, xs, y, g = traced(f, *values)
    return ad.viz.explain(tape, y, xs[source]), g[source]


def test_explain_a_nan_gradient_names_its_origin_and_is_never_neutral():
    from autodiff_viz.viz.draw.look import PALETTE

    e, g = explained(cross_entropy, [0.0, 1.0], [0.0, 0.5], source=1)
    assert math.isnan(g.numpy()[0])
    assert e.reason == "not_finite"
    assert e.sentences[0].startswith("The gradient is NaN: tape.gradient gave [nan, -2.0]")
    assert any("0 · inf" in s and "Log" in s for s in e.sentences)
    assert any("log of 0 is -inf" in s for s in e.sentences)
    assert f'color="{PALETTE["vermillion"]}"' in e.graph.source.split("\n  n0 ")[0]  # the remarks' box


def test_explain_an_inf_gradient():
    e, g = explained(lambda x: ad.sqrt(x), 0.0)
    assert float(g) == math.inf and e.reason == "not_finite"
    assert e.sentences[0].startswith("The gradient is inf") and any("sqrt's slope at 0" in s for s in e.sentences)


def test_explain_relu_below_zero():
    e, g = explained(lambda x: ad.nn.relu(x), -2.0)
    assert float(g) == 0.0 and e.reason == "zero"
    assert "its input here is -2.0" in e.sentences[1]
    assert [n.op for n in e.graph.model.nodes if n.broken] == ["Relu"]


def test_explain_where_marks_the_branch_not_the_comparison():
    e, g = explained(lambda x: ad.where(x > 5, x * x, 1.0), 3.0)
    assert float(g) == 0.0 and e.reason == "zero"
    assert [n.op for n in e.graph.model.nodes if n.broken] == ["SelectV2"]
    assert "the condition was False" in e.sentences[0]


def test_explain_saturation():
    e, g = explained(lambda x: ad.sigmoid(x), 10.0)
    s = 1 / (1 + math.exp(-10.0))
    assert float(g) == pytest.approx(s * (1 - s), rel=1e-3)
    assert e.reason == "tiny" and "saturated" in e.sentences[0]
    assert f"slope is {float(g):.4g}".replace("e-05", "e-5") in e.sentences[0]


def test_explain_a_product_of_many_small_slopes():
    def chain(x):
        for _ in range(10):
            x = ad.sigmoid(x)
        return x

    e, g = explained(chain, 1.0)
    # the closed form: the product of σ'(h_k) along the chain
    h, expected = 1.0, 1.0
    for _ in range(10):
        s = 1 / (1 + math.exp(-h))
        expected, h = expected * s * (1 - s), s
    assert float(g) == pytest.approx(expected, rel=1e-4)
    assert e.reason == "tiny" and "product of 10 local slopes below 1" in e.sentences[0]
    assert sum(n.broken for n in e.graph.model.nodes) == 10


def test_explain_a_target_that_sums():
    e, g = explained(lambda x: x * x, [1.0, 2.0])
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    assert e.reason == "sums" and "reduce_sum(target)" in e.sentences[0] and "jacobian" in e.sentences[1]


@pytest.mark.parametrize("traced_too", [True, False])
def test_explain_after_a_second_call_on_a_spent_tape(traced_too):
    """With a trace, or on a bare tape (it remembers which call spent it, without values)."""
    x = ad.constant(3.0)
    with ad.trace() if traced_too else contextlib.nullcontext():
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            z = x * 3.0
        assert float(tape.gradient(y, x)) == 6.0
        with pytest.raises(RuntimeError):
            tape.gradient(z, x)
    e = ad.viz.explain(tape, z, x)
    assert e.reason == "spent" and "persistent=True" in e.sentences[1]
    assert ad.viz.explain(tape, y, x).reason == "connected"  # the call that was answered


def test_the_package_reading_a_value_is_no_detour():
    """boolean_mask reads its mask's values itself: nothing left the package, no box says so."""
    x = ad.constant([1.0, -2.0, 3.0])
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.reduce_sum(ad.boolean_mask(x, x > 0))
        g = tape.gradient(y, x)
    np.testing.assert_array_equal(g.numpy(), [1.0, 0.0, 1.0])
    assert not [e for e in tr.events if e.kind == "leave"]


def test_explain_a_zero_from_a_rule_names_the_rule():
    e, g = explained(lambda x, c: x * c + 1.0, 3.0, 0.0)
    assert float(g) == 0.0  # d(x·c + 1)/dx = c = 0
    assert e.reason == "zero"
    assert e.sentences[0] == ("The gradient is 0 because the rule of Mul sent 0 to x, from an upstream gradient of "
                              "1.0: its partial derivative ∂(a · b)/∂a = b is 0 here.")
    assert [n.op for n in e.graph.model.nodes if n.broken] == ["Mul"]


def test_explain_a_float_detour_says_what_the_gradient_would_be():
    x = ad.constant(3.0)
    with ad.trace():
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x * float(x)
        g = tape.gradient(y, x)
    assert float(g) == 2 * 3.0 * 3.0  # d(x² · c)/dx = 2xc with c = 3 a constant: 18, not 3x² = 27
    e = ad.viz.explain(tape, y, x)
    assert e.reason == "detour"
    assert "left the package through float(), and its value 3.0 came back as a constant" in e.sentences[0]
    assert e.sentences[1] == "tape.gradient gave 18.0; through x itself it would be 27.0."
    marked = {n.label for n in e.graph.model.nodes if n.broken}
    assert marked == {"x", "const"}
    box = next(n for n in e.graph.model.nodes if n.kind == "numpy")
    assert box.op == "float()" and "float(): the tape stops here" in e.graph.source


def test_explain_a_numpy_detour_of_a_variable():
    v = ad.Variable(3.0, name="v")
    with ad.trace():
        with ad.GradientTape() as tape:
            y = ad.constant(v.numpy() ** 2)
        assert tape.gradient(y, v) is None
    e = ad.viz.explain(tape, y, v)
    assert e.reason == "left_numpy"
    assert e.sentences[0].startswith("The gradient is None because variable 'v' went around the tape: .numpy() "
                                     "turned it into a plain number (3.0)")
    assert {n.label for n in e.graph.model.nodes if n.broken} == {"v"}


def test_a_float_of_an_unwatched_tensor_leaves_no_trace():
    """Only tensors a tape follows (and trainable variables it would watch) are noted: printing a
    constant's float() changes no picture."""
    c = ad.constant(2.0)
    x = ad.constant(1.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * float(c)
        tape.gradient(y, x)
    assert not [e for e in tr.events if e.kind == "leave"]


def test_a_bare_tape_says_it_kept_no_numbers_instead_of_a_neutral_answer():
    """Without ad.trace() the tape keeps no values: a relu below 0 is not called plainly 'not None'."""
    x = ad.Variable(-2.0, name="x")
    with ad.GradientTape(persistent=True) as tape:
        y = ad.nn.relu(x)
    assert float(tape.gradient(y, x)) == 0.0          # relu's slope below 0
    e = ad.viz.explain(tape, y, x)
    assert e.reason == "connected" and "recorded without ad.trace()" in e.sentences[-1]
    assert "to hear why a gradient is 0" in e.message
    with ad.trace():
        with ad.GradientTape() as traced_tape:
            y2 = ad.nn.relu(x)
        traced_tape.gradient(y2, x)
    assert ad.viz.explain(traced_tape, y2, x).reason == "zero"
