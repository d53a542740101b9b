"""Sentences of the course that TensorFlow's behaviour decides: each is checked against the behaviour it states
(the package's, which follows TensorFlow's kernels and gradient functions) or locked against the untrue version."""
import pathlib

import numpy as np

import autodiff_viz as ad

NB = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def _words(name: str) -> str:
    """A notebook's markdown and comments as one line of text (wrapping does not split a phrase)."""
    return " ".join((NB / name).read_text(encoding="utf-8").replace("#", " ").split())


def test_a_broadcast_input_is_summed_by_the_rule_not_by_the_tape():
    # In TensorFlow, _MulGrad reduces over the broadcast axes itself; the tape never sums after a rule.
    text = _words("02_intermediates_persistent_nonscalar.py")
    assert "the tape then sums" not in text
    assert "The rule of `Mul` does that sum itself" in text and "the tape does not" in text
    m, w = ad.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), ad.constant([0.5, -1.0, 2.0])
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(w)
            total = ad.reduce_sum(m * w)
        tape.gradient(total, w)
    step = next(e for e in tr.events if e.kind == "backward_step" and e.op_type == "Mul")
    assert tuple(step.grads[1].shape) == (3,)
    np.testing.assert_allclose(step.grads[1].array(), [5.0, 7.0, 9.0])    # column sums of m


def test_a_saturated_tanh_gives_exactly_zero_in_float32():
    text = _words("03_control_flow_and_none.py")
    assert "a `tanh` saturated so far that its slope rounds to 0 in float32" in text
    x = ad.constant(10.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.tanh(x)
    assert np.float32(np.tanh(np.float32(10.0))) == 1.0    # 1 - y² is exactly 0 in float32
    assert tape.gradient(y, x).numpy() == 0.0


def test_notebook_4_does_not_say_notebook_3_ended_with_the_lookup_error():
    three = _words("03_control_flow_and_none.py")
    assert three.index("LookupError") < three.index("NaN, zero and vanishing gradients")   # not its end
    four = _words("04_custom_gradients.py")
    assert "Notebook 3 ended with" not in four and "Notebook 3 met a `LookupError`" in four


def test_notebook_9_says_how_tensorflows_tape_orders_its_backward_pass():
    # TensorFlow's tape (tape.h, ComputeGradient) runs an op once the usage counts of its outputs reach 0.
    text = _words("09_backprop_by_hand.py")
    assert "This package walks its tape newest-first. TensorFlow's tape reaches a valid order another way" in text


def test_no_unnamed_source_is_cited():
    """A reference the student cannot look up ("a well-known write-up") is said plainly instead."""
    for script in sorted(NB.glob("[0-9][0-9]_*.py")) + sorted((NB / "solutions").glob("*.py")):
        assert "well-known write-up" not in _words(script.relative_to(NB).as_posix()), script.name
