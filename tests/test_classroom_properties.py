"""The checkers never pass a wrong answer: hundreds of generated wrong rules and predictions all fail, right ones pass.

Right rules are written here from closed forms (sin' = cos, tanh' = 1 - y², (a/b)' = (1/b, -a/b²), the matrix
product's grad·bᵀ and aᵀ·grad) with TensorFlow's conventions at kinks and ties (relu'(0) = 0, sign(0) = 0,
``maximum`` sends a tie to its first input).  Each wrong rule is a right one with one slip: scaled, negated,
the upstream factor dropped, its gradients swapped, its operands swapped, the input read for the output (or
back), transposed, left unsummed over a broadcast axis, or right only at the first point it sees.  A wrong
one is kept only where it really differs from the right one at the given inputs (the checker always looks
there), so "it must fail" is a fact, not a hope.
"""
import numpy as np
import pytest
from hypothesis import assume, example, given, settings, strategies as st

import autodiff_viz as ad
from autodiff_viz import classroom

GRID = st.integers(-20, 20).map(lambda k: k / 10)          # exact kinks (0) and ties come up often
AWAY = st.integers(3, 20).map(lambda k: k / 10) | st.integers(-20, -3).map(lambda k: k / 10)


def vec(elements=GRID, n=3):
    return st.lists(elements, min_size=n, max_size=n).map(np.array)


def sum_to(g, shape):
    while len(g.shape) > len(shape):
        g = ad.reduce_sum(g, axis=0)
    return g


RIGHT = {
    "Sin": lambda op, g: g * ad.cos(op.inputs[0]),
    "Tanh": lambda op, g: g * (1.0 - op.outputs[0] ** 2),
    "Exp": lambda op, g: g * op.outputs[0],
    "Square": lambda op, g: g * 2.0 * op.inputs[0],
    "Relu": lambda op, g: g * ad.cast(ad.greater(op.inputs[0], 0.0), g.dtype),
    "Abs": lambda op, g: g * ad.sign(op.inputs[0]),
    "Mul": lambda op, g: (sum_to(g * op.inputs[1], op.inputs[0].shape), sum_to(g * op.inputs[0], op.inputs[1].shape)),
    "Maximum": lambda op, g: (ad.where(ad.greater_equal(*op.inputs), g, ad.zeros_like(g)),
                              ad.where(ad.greater_equal(*op.inputs), ad.zeros_like(g), g)),
    "RealDiv": lambda op, g: (g / op.inputs[1], -g * op.inputs[0] / op.inputs[1] ** 2),
    "MatMul": lambda op, g: (ad.matmul(g, ad.transpose(op.inputs[1])), ad.matmul(ad.transpose(op.inputs[0]), g)),
}
FORWARD = {"Sin": ad.sin, "Tanh": ad.tanh, "Exp": ad.exp, "Square": ad.square, "Relu": ad.nn.relu, "Abs": ad.abs,
           "Mul": ad.multiply, "Maximum": ad.maximum, "RealDiv": ad.divide, "MatMul": ad.matmul}
UNARY = ["Sin", "Tanh", "Exp", "Square", "Relu", "Abs"]
WEIGHTS = np.array([1.3, -0.6, 0.9])


def target(op_type):
    """A computation that uses the op once, with an upstream gradient that is nowhere 0 or 1."""
    fwd = FORWARD[op_type]
    if op_type in UNARY:
        return lambda x: ad.reduce_sum(fwd(x) * WEIGHTS)
    if op_type == "MatMul":
        return lambda a, b: ad.reduce_sum(fwd(a, b) * np.array([[1.3, -0.6], [0.9, 0.7]]))
    return lambda a, b: ad.reduce_sum(fwd(a, b) * WEIGHTS)


def slips(op_type):
    """Wrong rules: (name, rule).  Each is the right rule with one mistake."""
    right = RIGHT[op_type]

    def each(fn):
        return lambda op, g: tuple(fn(r) for r in _tuple(right(op, g))) if len(op.inputs) > 1 else fn(right(op, g))

    out = [(f"scaled by {k}", each(lambda r, k=k: k * r)) for k in (2.0, 0.5, -1.0, 3.0, 1.01)]
    out.append(("upstream dropped", lambda op, g: right(op, ad.ones_like(g))))
    out.append(("upstream squared", lambda op, g: right(op, g * g)))
    if op_type in UNARY:
        out.append(("input for output", lambda op, g: right(_View(op, [op.outputs[0]], op.outputs), g)))
        out.append(("output for input", lambda op, g: right(_View(op, op.inputs, [op.inputs[0]]), g)))
    else:
        out.append(("gradients swapped", lambda op, g: _tuple(right(op, g))[::-1]))
        out.append(("operands swapped", lambda op, g: right(_View(op, op.inputs[::-1], op.outputs), g)))
        out.append(("first only", lambda op, g: (_tuple(right(op, g))[0], ad.zeros_like(op.inputs[1]))))
    if op_type == "MatMul":
        out.append(("transposed", lambda op, g: tuple(ad.transpose(r) for r in right(op, g))))
        out.append(("b not transposed", lambda op, g: (ad.matmul(g, op.inputs[1]), right(op, g)[1])))
    return out


class _View:
    def __init__(self, op, inputs, outputs):
        self._op, self.inputs, self.outputs = op, list(inputs), list(outputs)

    def __getattr__(self, name):
        return getattr(self._op, name)


def _tuple(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def local(rule, op_type, xs, upstream):
    """What a rule sends at ``xs`` for ``upstream``: run on a stand-in op built from the forward alone."""
    ins = [ad.constant(x) for x in xs]
    view = _View(None, ins, [FORWARD[op_type](*ins)])
    return [np.asarray(r.numpy()) for r in _tuple(rule(view, ad.constant(upstream)))]


def differs(op_type, wrong, xs):
    up = np.asarray(FORWARD[op_type](*[ad.constant(x) for x in xs]).numpy()) * 0 + 0.77
    try:
        bad = local(wrong, op_type, xs, up)
    except Exception:  # noqa: BLE001  (a slip that cannot even run is wrong for sure)
        return True
    good = local(RIGHT[op_type], op_type, xs, up)
    return any(b.shape != r.shape or not np.allclose(b, r, rtol=1e-3, atol=1e-6) for b, r in zip(bad, good))


@st.composite
def inputs_for(draw, op_type):
    if op_type in UNARY:
        return [draw(vec())]
    if op_type == "MatMul":
        return [np.array(draw(st.lists(GRID, min_size=4, max_size=4))).reshape(2, 2) for _ in range(2)]
    a = draw(vec())
    if op_type == "RealDiv":
        return [a, draw(vec(AWAY))]
    b = a.copy() if draw(st.booleans()) else draw(vec())     # ties, and partial ties, half of the time
    return [a, b]


CASES = [(op, name) for op in RIGHT for name, _ in slips(op)]


def check(op_type, rule, xs):
    return classroom.check_rule(op_type, rule, target(op_type), xs if len(xs) > 1 else xs[0])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), case=st.sampled_from(CASES))
def test_every_generated_wrong_rule_fails(data, case):
    op_type, name = case
    wrong = dict(slips(op_type))[name]
    xs = data.draw(inputs_for(op_type))
    assume(differs(op_type, wrong, xs))
    r = check(op_type, wrong, xs)
    assert not r.passed, f"{op_type} rule with the slip '{name}' passed at {xs}: {r.message}"


@settings(max_examples=60, deadline=None)
@given(data=st.data(), op_type=st.sampled_from(sorted(RIGHT)))
def test_a_rule_right_only_at_the_first_point_fails(data, op_type):
    xs = data.draw(inputs_for(op_type))
    assume(any(np.any(x != 0) for x in xs))
    seen = []

    def memorised(op, g):
        if not seen:
            seen.append([ad.constant(r.numpy()) for r in _tuple(RIGHT[op_type](op, g))])
        return seen[0] if len(seen[0]) > 1 else seen[0][0]

    r = check(op_type, memorised, xs)
    assert not r.passed, f"{op_type}: a rule right only at {xs} passed: {r.message}"


@settings(max_examples=120, deadline=None)
@given(data=st.data(), op_type=st.sampled_from(sorted(RIGHT)))
def test_every_right_rule_passes_including_kinks_and_ties(data, op_type):
    xs = data.draw(inputs_for(op_type))
    r = check(op_type, RIGHT[op_type], xs)
    assert r.passed, f"{op_type} right rule failed at {xs}: {r.message}"


def test_broadcast_left_unsummed_fails_and_summed_passes():
    x, w = np.arange(6.0).reshape(2, 3) / 5, np.array([0.5, -1.0, 2.0])
    f = lambda x, w: ad.reduce_sum(ad.multiply(x, w) * np.array([1.3, -0.6, 0.9]))  # noqa: E731
    unsummed = classroom.check_rule("Mul", lambda op, g: (g * op.inputs[1], g * op.inputs[0]), f, [x, w])
    assert not unsummed.passed and "sum over the batch" in unsummed.message
    assert classroom.check_rule("Mul", RIGHT["Mul"], f, [x, w]).passed


# -- a custom gradient at a kink of several variables: exactly the subgradients pass -------------------------
def norm_with(at_origin):
    @ad.custom_gradient
    def norm(x):
        n = ad.sqrt(ad.reduce_sum(x * x))

        def grad(upstream):
            safe = ad.where(ad.greater(n, 0.0), n, ad.ones_like(n))
            return ad.where(ad.greater(n, 0.0), upstream * x / safe, upstream * ad.constant(at_origin))
        return n, grad
    return norm


@pytest.mark.parametrize("at_origin, right", [
    ([0.0, 0.0], True), ([0.6, 0.8], True), ([1.0, 0.0], True), ([0.5, -0.5], True), ([-0.7, 0.7], True),
    ([1.0, 1.0], False), ([0.72, 0.72], False), ([1.5, 0.0], False), ([0.0, -1.01], False),
])
def test_the_norm_at_the_origin_fails_outside_the_unit_ball_in_words(at_origin, right):
    # [1, 1] lies inside the elementwise range [-1, 1] × [-1, 1] but has length √2: not a gradient there.
    assert (np.linalg.norm(at_origin) <= 1.0) == right
    r = classroom.check_rule(norm_with(np.array(at_origin)), np.array([3.0, -4.0]))
    assert r.passed == right, r.message
    if not right:
        assert r.divergence.point == "x = 0" and "subgradient" in r.message and "steepest slope" in r.message
        assert "one right value is [0.0, 0.0]" in r.message


@settings(max_examples=150, deadline=None)
@given(angle=st.integers(0, 71).map(lambda k: k * np.pi / 36), length=st.sampled_from([0.0, 0.3, 0.7, 0.97, 1.03,
       1.1, 1.2, 1.3, 1.41, 1.8]), n=st.integers(2, 4), tilt=st.sampled_from([-0.8, 0.0, 0.5]))
@example(angle=np.pi / 4, length=np.sqrt(2), n=2, tilt=0.0)       # the issue's [1, 1]: each element in [-1, 1]
@example(angle=np.pi / 4, length=1.1, n=2, tilt=0.0)
def test_the_norm_at_the_origin_passes_exactly_the_subgradients(angle, length, n, tilt):
    # ∂‖x‖ at 0 is the unit ball {g : ‖g‖ ≤ 1}: a direction in n dimensions, scaled to the length drawn.
    d = np.zeros(n)
    d[0], d[1] = np.cos(angle), np.sin(angle)
    d[-1] += tilt if n > 2 else 0.0
    g = length * d / np.linalg.norm(d)
    r = classroom.check_rule(norm_with(g), np.arange(1.0, n + 1))
    assert r.passed == (length <= 1.0), f"‖g‖ = {np.linalg.norm(g):.3f}: {r.message}"


# -- predictions: the shape is part of the answer, and every scaled, swapped, transposed one fails -----------
PREDICTED = {   # f, its gradient in closed form
    "sum of squares": (lambda x: ad.reduce_sum(x * x), lambda x: 2 * x),
    "sum of 2x": (lambda x: ad.reduce_sum(2.0 * x), lambda x: np.full_like(x, 2.0)),
    "tanh": (lambda x: ad.reduce_sum(ad.tanh(x)), lambda x: 1 - np.tanh(x) ** 2),
    "sum of sin": (lambda x: ad.reduce_sum(ad.sin(x)), lambda x: np.cos(x)),
    "a vanishing gradient": (lambda x: ad.reduce_sum(ad.sin(x) * 1e-6), lambda x: np.cos(x) * 1e-6),   # tiny, not 0
}
WRONG_PREDICTIONS = {
    "scaled": lambda g, x: 2.0 * g,
    "halved": lambda g, x: 0.5 * g,
    "negated": lambda g, x: -g,
    "one number": lambda g, x: float(g.reshape(-1)[0]),
    "summed": lambda g, x: float(np.sum(g)),
    "a column": lambda g, x: g.reshape(-1, 1),
    "input for output": lambda g, x: 1 - x ** 2,
    "reversed": lambda g, x: g[::-1],
    "zeros": lambda g, x: np.zeros_like(g),
}


@settings(max_examples=200, deadline=None)
@given(x=vec(GRID, 3), f_name=st.sampled_from(sorted(PREDICTED)), slip=st.sampled_from(sorted(WRONG_PREDICTIONS)))
def test_every_generated_wrong_prediction_fails_and_the_right_one_passes(x, f_name, slip):
    f, grad = PREDICTED[f_name]
    right = grad(x)
    wrong = WRONG_PREDICTIONS[slip](right, x)
    w = np.asarray(wrong, dtype=np.float64)
    assume(w.shape != right.shape or not np.allclose(w, right, rtol=1e-3, atol=1e-4 * np.max(np.abs(right))))
    xf = x.astype(np.float32)
    assert classroom.check_prediction(f, xf, right.astype(np.float32)).passed
    assert not classroom.check_prediction(f, xf, wrong).passed, (f_name, slip, x, wrong)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(GRID, min_size=4, max_size=4).map(lambda v: np.array(v).reshape(2, 2)),
       b=st.lists(GRID, min_size=4, max_size=4).map(lambda v: np.array(v).reshape(2, 2)))
def test_swapped_and_transposed_predictions_of_a_matrix_product_fail(a, b):
    f = lambda a, b: ad.reduce_sum(ad.matmul(a, b))  # noqa: E731
    ones = np.ones((2, 2))
    da, db = ones @ b.T, a.T @ ones          # closed form: grad·bᵀ and aᵀ·grad with grad all ones
    af, bf = a.astype(np.float32), b.astype(np.float32)
    assert classroom.check_prediction(f, [af, bf], [da, db]).passed
    for wrong in ([db, da], [da.T, db], [da, db.T]):
        assume_differs = any(not np.allclose(w, r, atol=1e-4) for w, r in zip(wrong, (da, db)))
        if assume_differs:
            assert not classroom.check_prediction(f, [af, bf], wrong).passed


@pytest.mark.parametrize("predicted", [2.0, [2.0], [[2.0, 2.0, 2.0]]])
def test_a_prediction_in_the_wrong_shape_fails_even_with_the_right_numbers(predicted):
    x = np.array([1.0, -2.0, 3.0], np.float32)
    assert not classroom.check_prediction(lambda x: ad.reduce_sum(2.0 * x), x, predicted).passed
