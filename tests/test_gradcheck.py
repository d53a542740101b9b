"""Every registered op's gradient rule, against finite differences in float64."""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _image_ops, _math_ops, _nn_ops, _ops, _registry
from gradcheck import check_gradients

rng = np.random.default_rng(1234)


def r(*shape):
    return rng.uniform(-2.0, 2.0, size=shape)


def pos(*shape):
    return rng.uniform(0.5, 2.0, size=shape)


def away_from_zero(*shape):
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.3, 2.0, size=shape)


def _distinct_singular(m, n):
    """A matrix with singular values 3, 2, 1... (well apart, as the SVD gradient needs)."""
    q1, _ = np.linalg.qr(rng.normal(size=(m, m)))
    q2, _ = np.linalg.qr(rng.normal(size=(n, n)))
    s = np.zeros((m, n))
    k = min(m, n)
    s[range(k), range(k)] = np.arange(k, 0, -1) + 0.5
    return q1 @ s @ q2.T


def _spread(*shape):
    """Distinct values far apart (a shuffled grid): no ties, and finite differences never change a window's maximum."""
    return rng.permutation(np.arange(int(np.prod(shape))) * 0.5).reshape(shape)


_POOLED = _spread(1, 3, 3, 1)


def _svd_sign_free(a):
    # Each singular pair's sign is arbitrary: check what does not depend on it.
    s, u, v = ad.linalg.svd(a)
    outer = ad.einsum("...ik,...jk->...ijk", u, v)
    return ad.concat([ad.reshape(s, [-1]), ad.reshape(u * u, [-1]), ad.reshape(v * v, [-1]),
                      ad.reshape(outer, [-1])], axis=0)


# (op type, description, function, arguments); one op may appear many times.
CASES = [
    ("Add", "broadcast row", lambda x, y: x + y, [r(2, 3), r(3)]),
    ("Add", "broadcast both", lambda x, y: x + y, [r(2, 1), r(1, 3)]),
    ("AddN", "three terms", lambda x, y: ad.add_n([x, y, x]), [r(2, 2), r(2, 2)]),
    ("Sub", "broadcast column", lambda x, y: x - y, [r(2, 3), r(2, 1)]),
    ("Mul", "broadcast", lambda x, y: x * y, [r(3), r(2, 3)]),
    ("Mul", "scalar operand", lambda x, y: x * y, [r(), r(4)]),
    ("Mul", "x*x two edges", lambda x: x * x, [r(3)]),
    ("RealDiv", "broadcast", lambda x, y: x / y, [r(2, 3), pos(3)]),
    ("Neg", "", lambda x: -x, [r(3)]),
    ("Square", "", ad.square, [r(2, 2)]),
    ("Sqrt", "", ad.sqrt, [pos(3)]),
    ("Pow", "both operands", lambda x, p: x ** p, [pos(3), r(3)]),
    ("Pow", "broadcast exponent", lambda x, p: ad.pow(x, p), [pos(2, 3), r(1)]),
    ("SquaredDifference", "broadcast", ad.squared_difference, [r(2, 3), r(3)]),
    ("Maximum", "no ties", ad.maximum, [np.array([1.0, -1.0, 0.5]), np.array([0.0, 0.0, 2.0])]),
    ("Minimum", "broadcast", ad.minimum, [np.array([[1.0, -1.0], [3.0, -2.0]]), np.array([0.25, 0.5])]),
    ("Abs", "", ad.abs, [away_from_zero(4)]),
    ("Sign", "zero gradient", lambda x: ad.sign(x) * x, [away_from_zero(3)]),
    ("Exp", "", ad.exp, [r(3)]),
    ("Log", "", ad.log, [pos(3)]),
    ("Log1p", "", ad.log1p, [pos(3)]),
    ("Sin", "", ad.sin, [r(3)]),
    ("Cos", "", ad.cos, [r(3)]),
    ("Tan", "", ad.tan, [rng.uniform(-1.0, 1.0, size=3)]),
    ("Tanh", "", ad.tanh, [r(3)]),
    ("Sigmoid", "", ad.sigmoid, [r(3)]),
    ("TanhGrad", "fused rule", _ops._tanh_grad, [rng.uniform(-0.9, 0.9, size=3), r(3)]),
    ("SigmoidGrad", "fused rule", _ops._sigmoid_grad, [rng.uniform(0.1, 0.9, size=3), r(3)]),
    ("SqrtGrad", "fused rule", _ops._sqrt_grad, [pos(3), r(3)]),
    ("Reciprocal", "", ad.math.reciprocal, [away_from_zero(2, 3)]),
    ("DivNoNan", "broadcast", ad.math.divide_no_nan, [r(2, 3), away_from_zero(3)]),
    ("ReciprocalGrad", "fused rule", _ops._reciprocal_grad, [away_from_zero(3), r(3)]),
    ("Relu", "", ad.nn.relu, [away_from_zero(5)]),
    ("Softplus", "", ad.nn.softplus, [r(4)]),
    ("Softmax", "last axis", ad.nn.softmax, [r(2, 3)]),
    ("Softmax", "axis 0", lambda x: ad.nn.softmax(x, axis=0), [r(3, 2)]),
    ("LogSoftmax", "", ad.nn.log_softmax, [r(2, 4)]),
    ("Sum", "all", ad.reduce_sum, [r(2, 3)]),
    ("Sum", "axis 1", lambda x: ad.reduce_sum(x, axis=1), [r(2, 3)]),
    ("Sum", "axes (0, 2) keepdims", lambda x: ad.reduce_sum(x, axis=[0, 2], keepdims=True), [r(2, 3, 2)]),
    ("Sum", "negative axis", lambda x: ad.reduce_sum(x, axis=-1), [r(2, 3)]),
    ("Mean", "axis 0", lambda x: ad.reduce_mean(x, axis=0), [r(3, 2)]),
    ("Mean", "all keepdims", lambda x: ad.reduce_mean(x, keepdims=True), [r(2, 2)]),
    ("Max", "axis 1", lambda x: ad.reduce_max(x, axis=1), [r(3, 4)]),
    ("Max", "all keepdims", lambda x: ad.reduce_max(x, keepdims=True), [r(2, 3)]),
    ("Min", "axis 0", lambda x: ad.reduce_min(x, axis=0), [r(3, 2)]),
    ("Prod", "axis 1", lambda x: ad.reduce_prod(x, axis=1), [pos(2, 3)]),
    ("Prod", "one zero", ad.reduce_prod, [np.array([0.0, 2.0, 3.0])]),
    ("Prod", "two zeros", lambda x: ad.reduce_prod(x, axis=1), [np.array([[0.0, 0.0, 3.0], [1.0, 2.0, 3.0]])]),
    ("MatMul", "2-D", ad.matmul, [r(2, 3), r(3, 4)]),
    ("MatMul", "transpose_a", lambda a, b: ad.matmul(a, b, transpose_a=True), [r(3, 2), r(3, 4)]),
    ("MatMul", "transpose_b", lambda a, b: ad.matmul(a, b, transpose_b=True), [r(2, 3), r(4, 3)]),
    ("MatMul", "both transposed", lambda a, b: ad.matmul(a, b, transpose_a=True, transpose_b=True), [r(3, 2), r(4, 3)]),
    ("MatMul", "batched, broadcast b", ad.matmul, [r(2, 2, 3), r(3, 2)]),
    ("Transpose", "perm", lambda x: ad.transpose(x, perm=[1, 2, 0]), [r(2, 3, 4)]),
    ("Reshape", "-1", lambda x: ad.reshape(x, [3, -1]), [r(2, 3)]),
    ("Squeeze", "", lambda x: ad.squeeze(x, axis=1), [r(3, 1, 2)]),
    ("ExpandDims", "", lambda x: ad.expand_dims(x, -1), [r(3)]),
    ("BroadcastTo", "", lambda x: ad.broadcast_to(x, [3, 2, 4]), [r(2, 1)]),
    ("ConcatV2", "axis 1", lambda x, y: ad.concat([x, y, x], axis=1), [r(2, 1), r(2, 3)]),
    ("Pack", "axis 1", lambda x, y: ad.stack([x, y], axis=1), [r(3), r(3)]),
    ("StridedSlice", "basic slice", lambda x: x[1:, ::2], [r(3, 4)]),
    ("StridedSlice", "int index and negative step", lambda x: x[-1, ::-1], [r(3, 4)]),
    ("StridedSlice", "repeated fancy index", lambda x: x[[0, 2, 0]], [r(3, 2)]),
    ("StridedSliceGrad", "as a function of g", lambda g: _ops._slice_grad(g, (slice(1, 3),), (4, 2)), [r(2, 2)]),
    ("SelectV2", "broadcast branches",
     lambda x, y: ad.where(ad.constant([[True, False, True]]), x, y), [r(2, 3), r(3)]),
    ("ClipByValue", "tensor bounds", lambda x, lo, hi: ad.clip_by_value(x, lo, hi),
     [np.array([-3.0, 0.2, 3.0, -0.4]), np.array([-1.0, -1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0, 1.0])]),
    ("Identity", "", ad.identity, [r(3)]),
    ("Cast", "float64 to float32 and back", lambda x: ad.cast(ad.cast(x, ad.float32), ad.float64) * x, [r(3)]),
    # Activations, with points away from their kinks.
    ("Erf", "", ad.math.erf, [np.array([-2.5, -0.7, 0.0, 0.4, 1.9, 4.0])]),
    ("Erf", "gelu", ad.nn.gelu, [r(4)]),
    ("Tanh", "gelu, tanh approximation", lambda x: ad.nn.gelu(x, approximate=True), [r(4)]),
    ("ReluGrad", "fused rule", _ops._relu_grad, [r(4), away_from_zero(4)]),
    ("Relu6", "", ad.nn.relu6, [np.array([-1.0, 0.5, 3.0, 5.5, 7.0])]),
    ("SoftplusGrad", "fused rule", _ops._softplus_grad, [r(4), r(4)]),
    ("Relu6Grad", "fused rule", _ops._relu6_grad, [r(4), np.array([-1.0, 0.5, 5.5, 7.0])]),
    ("LeakyRelu", "alpha 0.3", lambda x: ad.nn.leaky_relu(x, 0.3), [away_from_zero(5)]),
    ("LeakyReluGrad", "fused rule", lambda g, x: _ops._leaky_relu_grad(g, x, 0.3), [r(4), away_from_zero(4)]),
    ("Elu", "", ad.nn.elu, [away_from_zero(5)]),
    ("Selu", "", ad.nn.selu, [away_from_zero(5)]),
    ("Softsign", "", ad.nn.softsign, [away_from_zero(5)]),
    ("Sigmoid", "swish", ad.nn.swish, [r(4)]),
    # Integer-division family (float operands away from the jumps of floor).
    ("FloorMod", "", ad.math.floormod, [np.array([0.3, 1.4, -0.45]), np.array([1.0, 0.8, 0.7])]),
    # Losses and statistics built from rows above.
    ("SparseSoftmaxCrossEntropyWithLogits", "",
     lambda x: ad.nn.sparse_softmax_cross_entropy_with_logits(ad.constant([2, 0]), x), [r(2, 3)]),
    ("SoftmaxCrossEntropyWithLogits", "labels summing to 1",
     lambda x, y: ad.nn.softmax_cross_entropy_with_logits(ad.nn.softmax(y), x), [r(2, 3), r(2, 3)]),
    ("SoftmaxCrossEntropyWithLogits", "axis 0",
     lambda x, y: ad.nn.softmax_cross_entropy_with_logits(ad.nn.softmax(y, axis=0), x, axis=0), [r(3, 2), r(3, 2)]),
    ("Mean", "reduce_variance", lambda x: ad.math.reduce_variance(x, axis=0), [r(3, 2)]),
    ("Sqrt", "reduce_std", lambda x: ad.math.reduce_std(x, axis=1), [r(2, 3)]),
    ("Sqrt", "norm, euclidean", ad.norm, [r(2, 3)]),
    ("Max", "norm, matrix 1-norm", lambda x: ad.norm(x, ord=1, axis=[0, 1]), [np.array([[1.0, -2.0], [0.5, 3.0]])]),
    # Shapes and linear algebra.
    ("PadV2", "", lambda x: ad.pad(x, [[1, 0], [2, 1]], constant_values=0.5), [r(2, 3)]),
    ("StridedSlice", "reflect and symmetric padding",
     lambda x: ad.pad(x, [[1, 1], [0, 2]], "REFLECT") + ad.pad(x, [[1, 1], [0, 2]], "SYMMETRIC"), [r(3, 3)]),
    ("Einsum", "matrix product", lambda a, b: ad.einsum("ij,jk->ik", a, b), [r(2, 3), r(3, 4)]),
    ("Einsum", "batched, ellipsis", lambda a, b: ad.einsum("...ij,...jk->...ik", a, b), [r(2, 2, 3), r(3, 2)]),
    ("Einsum", "a letter of one operand only", lambda a, b: ad.einsum("ij,jk->i", a, b), [r(2, 3), r(3, 2)]),
    ("Einsum", "implicit output, outer product", lambda a, b: ad.einsum("i,j", a, b), [r(2), r(3)]),
    ("Einsum", "one operand", lambda a: ad.einsum("ijk->kj", a), [r(2, 3, 2)]),
    ("MatrixDiagPartV3", "tall", ad.linalg.diag_part, [r(3, 2)]),
    ("MatrixDiagPartV3", "wide, batched", ad.linalg.diag_part, [r(2, 2, 3)]),
    ("MatrixDiagPartV3", "trace", ad.linalg.trace, [r(3, 3)]),
    ("MatrixDiagPartV3", "einsum with a letter twice, 'bxby->bxy'", lambda j: ad.einsum("bxby->bxy", j), [r(2, 3, 2, 2)]),
    ("MatrixInverse", "", ad.linalg.inv, [3.0 * np.eye(3) + 0.5 * r(3, 3)]),
    ("MatrixDeterminant", "batched", ad.linalg.det, [3.0 * np.eye(3) + 0.5 * r(2, 3, 3)]),
    ("MatrixSolve", "", ad.linalg.solve, [3.0 * np.eye(3) + 0.5 * r(3, 3), r(3, 2)]),
    # Beyond the guides: the Core and customization tutorials' ops.
    ("Sinh", "", ad.sinh, [r(3)]),
    ("Cosh", "", ad.math.cosh, [r(3)]),
    ("Cumsum", "axis 1", lambda x: ad.cumsum(x, axis=1), [r(2, 4)]),
    ("Cumsum", "exclusive, reverse", lambda x: ad.math.cumsum(x, axis=0, exclusive=True, reverse=True), [r(3, 2)]),
    ("Cumprod", "axis 1 (reduce_prod's gradient)", lambda x: _math_ops._cumprod(x, 1, False, False), [r(2, 4)]),
    ("Cumprod", "exclusive, reverse", lambda x: _math_ops._cumprod(x, 0, True, True), [r(3, 2)]),
    ("Svd", "singular values", lambda a: ad.linalg.svd(a, compute_uv=False), [_distinct_singular(3, 2)]),
    ("Svd", "u and v, sign-free (squares and u_k v_kᵀ)", _svd_sign_free, [_distinct_singular(2, 3)]),
    ("Svd", "square, batched", lambda a: _svd_sign_free(a), [np.stack([_distinct_singular(3, 3)] * 2)]),
    ("Einsum", "tensordot, axes 1", lambda a, b: ad.tensordot(a, b, 1), [r(2, 3), r(3, 2)]),
    ("Einsum", "tensordot, axis pairs", lambda a, b: ad.tensordot(a, b, [[0, 2], [1, 0]]), [r(2, 3, 4), r(4, 2)]),
    ("StridedSlice", "boolean_mask", lambda x: ad.boolean_mask(x, [[True, False, True], [False, True, True]]),
     [r(2, 3, 2)]),
    ("BroadcastTo", "meshgrid", lambda x, y: ad.meshgrid(x, y)[0] * ad.meshgrid(x, y)[1], [r(3), r(2)]),
    ("Mul", "linalg.diag", lambda d: ad.linalg.diag(d), [r(2, 3)]),
    ("MatMul", "linalg.matvec", lambda a, b: ad.linalg.matvec(a, b), [r(2, 3), r(3)]),
    ("Mul", "map_fn through the ops it runs", lambda x: ad.map_fn(lambda row: row * ad.sin(row), x), [r(3, 2)]),
    ("StridedSlice", "bilinear resize (resize_with_pad's interpolation)",
     lambda x: _image_ops._resize_bilinear(x, 3, 5), [r(1, 2, 3, 2)]),
    # Convolution and pooling (NHWC).
    ("Conv2D", "VALID", lambda x, w: ad.nn.conv2d(x, w, 1, "VALID"), [r(2, 4, 4, 2), r(3, 2, 2, 3)]),
    ("Conv2D", "SAME, strides 2", lambda x, w: ad.nn.conv2d(x, w, 2, "SAME"), [r(1, 5, 4, 2), r(3, 3, 2, 2)]),
    ("Conv2D", "dilations 2, explicit padding", lambda x, w: ad.nn.conv2d(
        x, w, [1, 1], [[0, 0], [1, 0], [2, 1], [0, 0]], dilations=2), [r(1, 5, 5, 1), r(2, 2, 1, 2)]),
    ("Conv2DBackpropInput", "as a function of filter and upstream", lambda w, g: _nn_ops._conv2d_backprop_input(
        w, g, (1, 4, 5, 2), (2, 1), ((1, 1), (0, 1)), (1, 1)), [r(3, 2, 2, 3), r(1, 2, 5, 3)]),
    ("Conv2DBackpropFilter", "as a function of input and upstream", lambda x, g: _nn_ops._conv2d_backprop_filter(
        x, g, (2, 3, 2, 2), (1, 2), ((0, 1), (1, 1)), (1, 1)), [r(1, 4, 5, 2), r(1, 4, 3, 2)]),
    ("MaxPool", "VALID 2x2", lambda x: ad.nn.max_pool2d(x, 2, 2, "VALID"), [_spread(2, 4, 4, 2)]),
    ("MaxPool", "SAME, overlapping 3x3 windows", lambda x: ad.nn.max_pool2d(x, 3, 1, "SAME"), [_spread(1, 4, 3, 1)]),
    ("MaxPoolGrad", "as a function of upstream", lambda g: _nn_ops._max_pool_grad(
        ad.constant(_POOLED), ad.nn.max_pool2d(ad.constant(_POOLED), 2, 1, "SAME"), g,
        {"ksize": (2, 2), "strides": (1, 1), "pads": ((0, 1), (0, 1))}), [r(1, 3, 3, 1)]),
    ("MaxPoolGradGrad", "as a function of the tangent", lambda u: _nn_ops._max_pool_grad_grad(
        ad.constant(_POOLED), ad.nn.max_pool2d(ad.constant(_POOLED), 2, 1, "SAME"), u,
        {"ksize": (2, 2), "strides": (1, 1), "pads": ((0, 1), (0, 1))}), [r(1, 3, 3, 1)]),
    ("AvgPool", "SAME, strides 2", lambda x: ad.nn.avg_pool2d(x, 3, 2, "SAME"), [r(2, 5, 4, 2)]),
    ("AvgPoolGrad", "as a function of upstream", lambda g: _nn_ops._avg_pool_grad(
        g, (1, 5, 4, 1), {"ksize": (3, 3), "strides": (2, 2), "pads": ((1, 1), (1, 1))}), [r(1, 3, 2, 1)]),
]

# The round trip through float32 loses digits on purpose: a wider step and tolerance.
LOOSE = {"Cast": dict(atol=1e-3, rtol=1e-3, delta=1e-2)}

# Elementwise ops whose second derivatives are checked too.
SECOND_ORDER = {"Add", "Sub", "Mul", "RealDiv", "Neg", "Square", "Sqrt", "Pow", "SquaredDifference", "Maximum",
                "Minimum", "Abs", "Exp", "Log", "Log1p", "Sin", "Cos", "Tan", "Tanh", "Sigmoid", "TanhGrad", "SigmoidGrad", "SqrtGrad", "Reciprocal", "ReciprocalGrad",
                "DivNoNan", "Relu",
                "Softplus", "SoftplusGrad", "Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "Erf", "ReluGrad", "Relu6", "LeakyRelu", "Elu", "Selu", "Softsign",
                "PadV2", "Einsum", "MatrixDiagPartV3", "MatrixInverse", "MatrixDeterminant", "MatrixSolve", "Sinh",
                "Cosh", "Cumsum", "Cumprod", "Svd", "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool",
                "AvgPool", "AvgPoolGrad", "MaxPoolGrad", "MaxPoolGradGrad"}


@pytest.mark.parametrize("op_type, what, f, args", CASES, ids=[f"{c[0]}-{c[1]}" if c[1] else c[0] for c in CASES])
def test_first_derivative_matches_finite_differences(op_type, what, f, args):
    tol = LOOSE.get(op_type, {})
    check_gradients(f, *args, **tol)


SECOND = [c for c in CASES if c[0] in SECOND_ORDER]


@pytest.mark.parametrize("op_type, what, f, args", SECOND, ids=[f"{c[0]}-{c[1]}" if c[1] else c[0] for c in SECOND])
def test_second_derivative_matches_finite_differences(op_type, what, f, args):
    check_gradients(f, *args, order=2, atol=1e-5, rtol=1e-4)


def test_every_differentiable_op_has_a_case():
    checked = {c[0] for c in CASES}
    differentiable = {name for name, p in _registry.PRIMITIVES.items()
                      if p.grad not in (_registry.NOT_DIFFERENTIABLE, _registry._MISSING)}
    differentiable.discard("IdentityN")  # custom_gradient: each record carries its own rule (test_engine.py)
    assert differentiable - checked == set()


def test_the_checker_rejects_a_wrong_rule():
    def _wrong(op, grad):  # sin' is cos, not sin
        return (grad * ad.sin(op.inputs[0]),)

    with ad.extend.gradient_override("Sin", _wrong):
        with pytest.raises(AssertionError, match="disagree"):
            check_gradients(ad.sin, r(3))
    check_gradients(ad.sin, r(3))  # the real rule passes again


def test_the_checker_rejects_a_wrong_second_derivative():
    def _first_order_only(op, grad):  # right value, but built from a constant: no second derivative
        y = ad.constant(op.outputs[0].numpy())
        return (grad * (1.0 - y * y),)

    with ad.extend.gradient_override("Tanh", _first_order_only):
        check_gradients(ad.tanh, r(3))
        with pytest.raises(AssertionError):
            check_gradients(ad.tanh, r(3), order=2)


# -- ties, where the derivative has a kink: TF's conventions, in closed form ----
def _grads(f, *values):
    xs = [ad.constant(np.asarray(v, dtype=np.float64)) for v in values]
    with ad.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return [g.numpy() if g is not None else None for g in tape.gradient(y, xs)]


def test_maximum_tie_goes_to_the_first_operand():
    gx, gy = _grads(ad.maximum, [1.0, 2.0, 3.0], [1.0, 5.0, 0.0])
    np.testing.assert_array_equal(gx, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 0.0])


def test_minimum_tie_goes_to_the_first_operand():
    gx, gy = _grads(ad.minimum, [1.0, 2.0, 3.0], [1.0, 5.0, 0.0])
    np.testing.assert_array_equal(gx, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 0.0, 1.0])


def test_reduce_max_ties_share_the_gradient():
    (g,) = _grads(lambda x: ad.reduce_max(x, axis=1), [[3.0, 1.0, 3.0], [0.0, 2.0, 1.0]])
    np.testing.assert_array_equal(g, [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])


def test_where_sends_gradient_only_to_the_chosen_branch():
    gx, gy = _grads(lambda x, y: ad.where(ad.constant([True, False]), x, y), [1.0, 1.0], [1.0, 1.0])
    np.testing.assert_array_equal(gx, [1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0])


def test_relu_at_zero_has_zero_gradient():
    (g,) = _grads(ad.nn.relu, [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


# -- non-differentiable ops: what TF gives -----------------------------------
@pytest.mark.parametrize("f", [ad.round, ad.stop_gradient, lambda x: ad.cast(ad.cast(x, ad.int32), ad.float64)],
                         ids=["round", "stop_gradient", "cast-through-int"])
def test_non_differentiable_ops_give_none(f):
    x = ad.constant([1.2, -0.7], dtype=ad.float64)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert tape.gradient(y, x) is None


def test_sign_gives_zeros():
    x = ad.constant([1.5, -2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.sign(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 0.0])


def test_comparisons_and_argmax_are_not_differentiable():
    x = ad.constant([1.0, 3.0, 2.0])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        bigger = x > 2.0
        idx = ad.argmax(x)
    assert bigger.dtype == ad.bool and bigger.numpy().tolist() == [False, True, False]
    assert int(idx) == 1 and idx.dtype == ad.int64
    assert tape.gradient(ad.cast(bigger, ad.float32), x) is None
    assert tape.gradient(ad.cast(idx, ad.float32), x) is None


def test_float32_gradients_stay_float32():
    x = ad.constant([0.5, 1.5])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.reduce_sum(ad.exp(x) * ad.sin(x))
    g = tape.gradient(y, x)
    assert g.dtype == ad.float32
    xs = np.array([0.5, 1.5])
    np.testing.assert_allclose(g.numpy(), np.exp(xs) * (np.sin(xs) + np.cos(xs)), rtol=1e-6)
