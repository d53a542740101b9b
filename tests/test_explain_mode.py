"""``explain`` on a trace with no gradient in it (viz/explain_mode.py): an empty trace, forward mode alone.

Each case checks the engine's own number first (closed form), then that ``explain`` says something true:
no "the tape never watched" for a trace that saw nothing, no "the gradient is not None" where no tape ran.
"""
import math

import numpy as np
import pytest

import autodiff_viz as ad

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0)


def test_an_empty_trace_says_it_recorded_nothing():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        pass
    y = x * x
    e = ad.viz.explain(tr, y, x)
    assert e.reason == "nothing_recorded"
    assert "never watched" not in e.message and "recorded no op" in e.sentences[0]
    assert "with ad.trace() as tr:" in e.message  # what to do instead
    assert "the source 'x'" in e.sentences[0]


def test_forward_mode_only_gives_the_tangent_not_a_gradient():
    x = ad.constant([1.0, 2.0])
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant([1.0, 0.0])) as acc:
            y = x * x
    jvp = acc.jvp(y).numpy()
    np.testing.assert_allclose(jvp, 2 * np.array([1.0, 2.0]) * np.array([1.0, 0.0]))  # d(x²) = 2x·ẋ
    e = ad.viz.explain(tr, y, x)
    assert e.reason == "forward_mode"
    assert "not None" not in e.message and "tape.gradient gave" not in e.message
    assert "ForwardAccumulator" in e.sentences[0]
    assert e.sentences[1].startswith("acc.jvp(target) gave [2.0, 0.0]") and "tangent [1.0, 0.0]" in e.sentences[1]
    assert "n0 " in e.graph.source  # drawn, not blank


def test_forward_mode_with_an_inf_tangent_names_the_op_and_is_not_neutral():
    from autodiff_viz.viz.draw.look import PALETTE

    x = ad.constant([1.0, 2.0])
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant([1.0, 0.0])) as acc:
            y = ad.math.log(x - 1.0)
    jvp = acc.jvp(y).numpy()
    assert jvp[0] == math.inf and jvp[1] == 0.0  # ẋ/(x-1): 1/0 and 0/1
    e = ad.viz.explain(tr, y, x)
    assert e.reason == "forward_mode"
    assert any(s == "That tangent is inf." for s in e.sentences)
    assert any(s.startswith("At y (Log) the tangent first became non-finite") and "log of 0" in s
               for s in e.sentences)
    assert f'color="{PALETTE["vermillion"]}"' in e.graph.source.split("\n  n0 ")[0]


def test_forward_over_backward_still_explains_the_tape():
    x = ad.constant(2.0)
    with ad.trace():
        with ad.autodiff.ForwardAccumulator(x, ad.constant(1.0)):
            with ad.GradientTape() as t:
                t.watch(x)
                y = x * x * x
            g = t.gradient(y, x)
    assert float(g) == 12.0  # 3x²
    e = ad.viz.explain(t, y, x)
    assert e.reason == "connected" and "gave 12.0" in e.message


def test_forward_mode_draws_no_gradient_path():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant(1.0)) as acc:
            y = ad.sin(x)
    assert float(acc.jvp(y)) == pytest.approx(math.cos(3.0))
    e = ad.viz.explain(tr, y, x)
    assert "not computed yet" not in e.graph.source  # no backward pass exists to be waited for
    assert f"gave {float(acc.jvp(y)):.4g}" in e.sentences[1]
