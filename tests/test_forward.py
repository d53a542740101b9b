"""Forward mode: ForwardAccumulator against finite differences, reverse mode and closed forms."""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _registry
from test_gradcheck import CASES, LOOSE

ForwardAccumulator = ad.autodiff.ForwardAccumulator


def f64(a):
    return ad.constant(np.asarray(a, dtype=np.float64))


def forward_jacobians(f, xs):
    """One jvp per input element, laid out as compute_gradient's: (y_size, x_size) per argument."""
    jacobians = []
    for i, x in enumerate(xs):
        rows = []
        for k in range(int(np.prod(x.shape))):
            basis = np.zeros(int(np.prod(x.shape)))
            basis[k] = 1.0
            with ForwardAccumulator(x, f64(basis.reshape(x.shape))) as acc:
                y = f(*xs)
            rows.append(acc.jvp(y, unconnected_gradients="zero").numpy().reshape(-1))
        jacobians.append(np.array(rows).T)
    return jacobians


# -- every tangent rule against finite differences ---------------------------
@pytest.mark.parametrize("op_type, what, f, args", CASES, ids=[f"{c[0]}-{c[1]}" if c[1] else c[0] for c in CASES])
def test_tangent_rule_matches_finite_differences(op_type, what, f, args):
    xs = [f64(a) for a in args]
    tol = LOOSE.get(op_type, {})
    _, numerical = ad.test.compute_gradient(f, xs, delta=tol.get("delta"))
    for i, (fwd, num) in enumerate(zip(forward_jacobians(f, xs), numerical)):
        np.testing.assert_allclose(fwd, num, atol=tol.get("atol", 1e-6), rtol=tol.get("rtol", 1e-5),
                                   err_msg=f"{op_type}: argument {i}")


def test_every_op_with_a_gradient_rule_has_a_tangent_rule():
    missing = {name for name, p in _registry.PRIMITIVES.items()
               if p.grad not in (_registry.NOT_DIFFERENTIABLE, _registry._MISSING) and p.jvp is None}
    missing.discard("IdentityN")  # custom_gradient: tangents come from its own gradient function
    assert missing == set()


def test_an_op_without_a_tangent_rule_raises_lookup_error_naming_it(monkeypatch):
    x = f64([1.0, 2.0])
    monkeypatch.setattr(_registry.PRIMITIVES["Sin"], "jvp", None)
    with ForwardAccumulator(x, f64([1.0, 0.0])):
        with pytest.raises(LookupError, match="Sin"):
            ad.sin(x)
    images = f64(np.ones((2, 2, 1)))
    with ForwardAccumulator(images, f64(np.ones((2, 2, 1)))):
        with pytest.raises(LookupError, match="AdjustContrastv2"):
            ad.image.adjust_contrast(images, 2.0)


def test_ops_without_a_tangent_rule_run_normally_when_no_tangent_reaches_them():
    images = f64(np.ones((2, 2, 1)))
    with ForwardAccumulator(f64(1.0), f64(1.0)):
        out = ad.image.adjust_contrast(images, 2.0)
    np.testing.assert_allclose(out.numpy(), np.ones((2, 2, 1)))


@pytest.mark.parametrize("f", [ad.round, ad.stop_gradient, lambda x: ad.cast(x, ad.int32),
                               lambda x: ad.argmax(x), lambda x: ad.cast(ad.greater(x, 0.0), ad.float64)],
                         ids=["round", "stop_gradient", "cast-to-int", "argmax", "comparison"])
def test_non_differentiable_ops_have_no_tangent(f):
    x = f64([0.3, -1.2])
    with ForwardAccumulator(x, f64([1.0, 1.0])) as acc:
        y = f(x)
    assert acc.jvp(y) is None
    np.testing.assert_array_equal(acc.jvp(y, unconnected_gradients="zero").numpy(), np.zeros(y.shape))


# -- the accumulator's own behaviour ----------------------------------------------
def test_jvp_closed_form_and_primal_tangent():
    x = ad.constant(2.0)
    v = ad.constant(0.5)
    with ForwardAccumulator(x, v) as acc:
        y = ad.sin(x) * x ** 2
    expected = (np.cos(2.0) * 4.0 + np.sin(2.0) * 4.0) * 0.5
    assert float(acc.jvp(y)) == pytest.approx(expected, rel=1e-6)
    assert acc.jvp(x) is v


def test_jvp_follows_structure_and_reports_unconnected():
    x, c = f64([1.0, 2.0]), f64([3.0, 4.0])
    with ForwardAccumulator(x, f64([1.0, 1.0])) as acc:
        y = x * c
        z = c * 2.0
    out = acc.jvp({"y": y, "z": z})
    np.testing.assert_allclose(out["y"].numpy(), [3.0, 4.0])
    assert out["z"] is None
    zeros = acc.jvp([y, z], unconnected_gradients=ad.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zeros[1].numpy(), [0.0, 0.0])


def test_variables_are_primals_through_every_read():
    w = ad.Variable([1.0, -2.0])
    with ForwardAccumulator(w, ad.constant([1.0, 0.0])) as acc:
        y = ad.reduce_sum(w * w) + ad.reduce_sum(w.read_value())
    assert float(acc.jvp(y)) == pytest.approx(2.0 * 1.0 + 1.0)


def test_several_primals_give_the_directional_derivative():
    x, y = f64(1.5), f64(-0.5)
    with ForwardAccumulator([x, y], [f64(2.0), f64(3.0)]) as acc:
        z = x * y + ad.exp(y)
    assert float(acc.jvp(z)) == pytest.approx(2.0 * -0.5 + 3.0 * (1.5 + np.exp(-0.5)))


def test_ops_after_the_block_are_not_followed_even_after_an_exception():
    x = f64(1.0)
    acc = ForwardAccumulator(x, f64(1.0))
    with pytest.raises(ZeroDivisionError):
        with acc:
            1 / 0
    with acc:
        inside = x * 3.0
    outside = x * 3.0
    assert float(acc.jvp(inside)) == 3.0
    assert acc.jvp(outside) is None


# -- an input that is not followed: its tangent is 0, as in TF ------------------------
# TF's ForwardAccumulator::Accumulate (tensorflow/c/eager/tape.h) gives every floating input it does not
# follow a tangent of zeros ("defaults to zeros for unwatched Tensors"); forwardprop.py's _jvp_helper then
# transposes the op's gradient function with those tangents as its output gradients (only Identity and
# ReadVariableOp have their own tangent rules there).  So an infinite slope times that 0 is NaN in TF, and the
# expected values below are TF's gradient functions (math_grad.py) transposed, in IEEE arithmetic:
#   RealDiv: ȧ/b + ḃ·((−a/b)/b)    Pow: (ȧ·a^(p−1))·p + (ṗ·log a)·a^p, log a taken as 0 where a <= 0
#   Mul: ȧ·b + a·ḃ                 Sqrt: 0.5·(ȧ/√a)  (SqrtGrad's gradient; its kernel's "0 upstream gives 0"
#                                  is reverse mode only)
NAN, INF = float("nan"), float("inf")


def f32(a):
    return ad.constant(np.asarray(a, dtype=np.float32))


_NOT_FOLLOWED = [
    ("a/b at b = 0, a followed", lambda a, b: a / b, (1.0, 0.0), (0,), (1.0,), NAN),      # 1/0 · 1 + −inf · 0
    ("a/b at b = 0, b followed", lambda a, b: a / b, (1.0, 0.0), (1,), (1.0,), NAN),      # 0/0 + 1 · −inf
    ("a/b at b = 0, both followed", lambda a, b: a / b, (1.0, 0.0), (0, 1), (1.0, 1.0), NAN),  # inf + −inf
    ("a/b finite, both followed", lambda a, b: a / b, (3.0, 2.0), (0, 1), (1.0, 1.0), -0.25),  # 1/2 − 3/4
    ("1/x at x = 0", lambda a, b: 1.0 / b, (0.0, 0.0), (1,), (1.0,), NAN),                 # 0/0 + 1 · −inf
    ("a**p at a = 0, a followed", lambda a, p: a ** p, (0.0, 0.5), (0,), (1.0,), INF),    # (1 · inf) · ½ + 0
    ("a**p at a = 0, p followed", lambda a, p: a ** p, (0.0, 0.5), (1,), (1.0,), NAN),    # (0 · inf) · ½
    ("a**p at a = 0, p = 2 followed", lambda a, p: a ** p, (0.0, 2.0), (1,), (1.0,), 0.0),  # (0 · 0) · 2 + 0
    ("a*b, a = inf not followed", lambda a, b: a * b, (INF, 2.0), (1,), (1.0,), INF),     # 0 · 2 + inf · 1
    ("a*b, a = b = inf, b followed", lambda a, b: a * b, (INF, INF), (1,), (1.0,), NAN),  # 0 · inf + inf · 1
    ("sqrt at 0", lambda a, b: ad.sqrt(a), (0.0, 1.0), (0,), (1.0,), INF),                # 0.5 · (1/0)
    ("sqrt at 0, tangent 0", lambda a, b: ad.sqrt(a), (0.0, 1.0), (0,), (0.0,), NAN),     # 0.5 · (0/0)
]


@pytest.mark.parametrize("what, f, values, followed, tangents, expected", _NOT_FOLLOWED,
                         ids=[case[0] for case in _NOT_FOLLOWED])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy warns on 1/0 and 0 · inf
def test_an_input_not_followed_has_tangent_zero_and_an_infinite_slope_times_it_is_nan_as_in_tf(
        what, f, values, followed, tangents, expected):
    xs = [f32(v) for v in values]
    with ForwardAccumulator([xs[i] for i in followed], [f32(t) for t in tangents]) as acc:
        y = f(*xs)
    np.testing.assert_equal(float(acc.jvp(y)), expected, err_msg=what)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_sqrt_tangent_is_nan_where_a_zero_direction_meets_0_elementwise():
    x = f32([0.0, 4.0])
    with ForwardAccumulator(x, f32([0.0, 1.0])) as acc:
        y = ad.sqrt(x)
    np.testing.assert_equal(acc.jvp(y).numpy(), np.array([NAN, 0.25], np.float32))  # 0.5 · 0/0; 0.5 · 1/2


def test_bad_tangents_are_rejected():
    with pytest.raises(ValueError, match="shape"):
        ForwardAccumulator(f64([1.0, 2.0]), f64([1.0]))
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        ForwardAccumulator([f64(1.0), f64(2.0)], [f64(1.0)])
    with pytest.raises(ValueError, match="not floating"):
        ForwardAccumulator(ad.constant(1), ad.constant(1))


def test_custom_gradient_is_used_for_forward_mode_too():
    @ad.custom_gradient
    def fake_square(x):
        def grad(upstream):
            return upstream * 3.0  # deliberately not 2x, so the test sees which rule ran
        return x * x, grad

    x = f64([1.0, 2.0])
    with ForwardAccumulator(x, f64([1.0, 2.0])) as acc:
        y = fake_square(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3.0, 6.0])


def test_tangent_computations_are_not_recorded_on_tapes_entered_inside():
    x = f64(0.7)
    with ad.trace() as tr:
        with ForwardAccumulator(x, f64(1.0)) as acc:
            with ad.GradientTape() as tape:
                tape.watch(x)
                y = ad.sin(x)
    assert [e.op_type for e in tr.events if e.kind == "op"] == ["Sin"]
    assert float(acc.jvp(y)) == pytest.approx(np.cos(0.7))
    assert float(tape.gradient(y, x)) == pytest.approx(np.cos(0.7))


# -- forward and reverse together ----------------------------------------------
def scalar_function(x):
    a = ad.constant(np.array([[1.0, -0.5, 2.0], [0.3, 0.8, -1.0]]))
    h = ad.tanh(ad.matmul(a, ad.reshape(x, [3, 1])))
    return ad.reduce_sum(ad.exp(h) * h) + ad.reduce_sum(x ** 3 * ad.sin(x))


def test_hessian_vector_product_forward_over_reverse():
    x = f64([0.4, -1.1, 0.9])
    v = f64([1.0, 0.5, -2.0])
    with ForwardAccumulator(x, v) as acc:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = scalar_function(x)
        g = tape.gradient(y, x)
    hvp = acc.jvp(g).numpy()

    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = scalar_function(x)
        g = inner.gradient(y, x)
    hessian = outer.jacobian(g, x).numpy()
    np.testing.assert_allclose(hvp, hessian @ v.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10, atol=1e-12)


def test_hessian_vector_product_reverse_over_forward():
    x = f64([0.4, -1.1, 0.9])
    v = f64([1.0, 0.5, -2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        with ForwardAccumulator(x, v) as acc:
            y = scalar_function(x)
        directional = acc.jvp(y)
    reverse_over_forward = tape.gradient(directional, x).numpy()
    with ForwardAccumulator(x, v) as acc:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = scalar_function(x)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(reverse_over_forward, acc.jvp(g).numpy(), rtol=1e-10, atol=1e-12)


def test_forward_over_forward_gives_the_second_derivative():
    x = f64(0.8)
    with ForwardAccumulator(x, f64(1.0)) as outer:
        with ForwardAccumulator(x, f64(1.0)) as inner:
            y = ad.sin(x) * x * x
        first = inner.jvp(y)
    second = outer.jvp(first)
    s, c = np.sin(0.8), np.cos(0.8)
    assert float(first) == pytest.approx(c * 0.64 + 2 * 0.8 * s, rel=1e-12)
    assert float(second) == pytest.approx(-s * 0.64 + 4 * 0.8 * c + 2 * s, rel=1e-12)


def vector_function(x):
    w = ad.constant(np.array([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]]))
    h = ad.matmul(ad.reshape(x, [1, 3]), w)
    return ad.reshape(ad.nn.softmax(ad.tanh(h)) * ad.reduce_max(x), [2])


def test_forward_and_reverse_mode_give_the_same_jacobian():
    x = f64([0.3, -0.8, 1.2])
    (forward,) = forward_jacobians(vector_function, [x])          # (2, 3): row j is d y_j / d x
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = vector_function(x)
    reverse = tape.jacobian(y, x).numpy()                          # (2, 3)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-14)
    theoretical, numerical = ad.test.compute_gradient(vector_function, [x])
    np.testing.assert_allclose(forward, theoretical[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(forward, numerical[0], rtol=1e-5, atol=1e-7)
