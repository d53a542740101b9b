"""Gradient and tangent rules computed in TensorFlow's order, to the last bit.

Each case evaluates TF's own formula in NumPy (math_grad.py, nn_grad.py, the
fused kernels of cwise_ops_gradients.h and relu_op_functor.h) on many values
and asks for the same bytes; it also checks that the order the rule had
before gives other bytes somewhere, so the test fails on the old code.  A
tangent rule is TF's gradient rule transposed (TF's forward mode
differentiates the gradient rule with the tangent in the upstream's place),
so its order follows from the gradient rule's.  The forward values the rules
read (a sigmoid's or softmax's output, an inverse) are taken from the
forward pass itself: only the rules are under test.
"""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _math_ops, _ops

N = 4000
F32 = np.float32


def _uniform(seed, lo, hi, size=N, dtype=np.float32):
    return np.random.default_rng(seed).uniform(lo, hi, size=size).astype(dtype)


def _reverse(f, xs, g):
    ts = [ad.constant(x) for x in xs]
    with ad.GradientTape() as tape:
        tape.watch(ts)
        y = f(*ts)
    return y, [v.numpy() for v in tape.gradient(y, ts, output_gradients=ad.constant(g))]


def _tangent(f, xs, dxs):
    ts = [ad.constant(x) for x in xs]
    with ad.autodiff.ForwardAccumulator(ts, [ad.constant(d) for d in dxs]) as acc:
        y = f(*ts)
    return acc.jvp(y).numpy()


def _same_bytes(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), f"{np.sum(got != want)} of {got.size} values differ"


# --------------------------------------------------------------------------------------------------
# The fused gradient ops' own rules (second derivatives) and tangent rules
# --------------------------------------------------------------------------------------------------
def test_sigmoid_grad_rule_is_tfs_gb_minus_two_gb_a():
    # _SigmoidGradGrad: gb = grad · b; gb − 2·gb·a (a = σ(x), b: the upstream SigmoidGrad read)
    a, b, u = _uniform(1, 0.01, 0.99), _uniform(2, -3.0, 3.0), _uniform(3, -3.0, 3.0)
    _, (ga, gb) = _reverse(_ops._sigmoid_grad, [a, b], u)
    want = u * b - (F32(2) * (u * b)) * a
    _same_bytes(ga, want)
    assert np.any(u * b * (F32(1) - F32(2) * a) != want)  # the old order
    _same_bytes(gb, (u * a) * (F32(1) - a))  # SigmoidGrad's kernel, the upstream in g's place


def test_sigmoid_grad_tangent_is_tfs_rule_transposed():
    a, b, ta, tb = _uniform(4, 0.01, 0.99), _uniform(5, -3.0, 3.0), _uniform(6, -3.0, 3.0), _uniform(7, -3.0, 3.0)
    got = _tangent(_ops._sigmoid_grad, [a, b], [ta, tb])
    kernel = (tb * a) * (F32(1) - a)
    want = kernel + (ta - F32(2) * (ta * a)) * b
    _same_bytes(got, want)
    assert np.any(kernel + b * (F32(1) - F32(2) * a) * ta != want)


def test_tanh_grad_tangent_is_tfs_rule_transposed():
    # _TanhGradGrad: grad · −2 · b · a, left to right; transposed: ((ȧ·a)·b)·−2
    a, b, ta, tb = _uniform(8, -0.99, 0.99), _uniform(9, -3.0, 3.0), _uniform(10, -3.0, 3.0), _uniform(11, -3.0, 3.0)
    got = _tangent(_ops._tanh_grad, [a, b], [ta, tb])
    kernel = tb * (F32(1) - a * a)
    want = kernel + ((ta * a) * b) * F32(-2)
    _same_bytes(got, want)
    assert np.any(kernel - F32(2) * b * a * ta != want)
    _, (ga, _gb) = _reverse(_ops._tanh_grad, [a, b], ta)  # (the gradient rule was TF's already)
    _same_bytes(ga, ((ta * F32(-2)) * b) * a)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_sqrt_grad_rule_halves_the_quotient_as_tf():
    # _SqrtGradGrad: ga = grad / a; 0.5 · ga.  (0.5 · grad) / a rounds the same unless grad / a
    # overflows, where TF's is inf: so the upstreams here are near float32's largest.
    a = _uniform(12, 0.3, 1.4)
    b, u = _uniform(13, -3.0, 3.0), _uniform(14, 1e38, 3.4e38) * np.where(_uniform(15, -1, 1) < 0, F32(-1), F32(1))
    _, (ga, gb) = _reverse(_ops._sqrt_grad, [a, b], u)
    want = F32(0.5) * (u / a)
    _same_bytes(gb, want)
    assert np.isinf(want).any() and np.any((F32(0.5) * u) / a != want)
    y = (F32(0.5) * b) / a  # SqrtGrad's own output
    _same_bytes(ga, -(u / a) * y)


# --------------------------------------------------------------------------------------------------
# Activations, reductions, losses
# --------------------------------------------------------------------------------------------------
def test_selu_gradient_uses_tfs_scale_alpha_constant_in_float64():
    # SeluGrad's kernel: g · (y + 1.7580993408473768599...) below 0, g · scale above; in float64
    # that constant is one unit in the last place above scale · alpha as Python rounds the product.
    x = np.concatenate([_uniform(16, -4.0, -0.01, dtype=np.float64), _uniform(17, 0.01, 2.0, size=50, dtype=np.float64)])
    g = _uniform(18, -3.0, 3.0, size=x.size, dtype=np.float64)
    y, (got,) = _reverse(ad.nn.selu, [x], g)
    y = y.numpy()
    scale, scale_alpha = 1.0507009873554804934193349852946, 1.7580993408473768599402175208123
    want = np.where(y < 0, g * (y + scale_alpha), g * scale)
    _same_bytes(got, want)
    assert np.any(np.where(y < 0, g * (y + scale * 1.6732632423543772848170429916717), g * scale) != want)
    _same_bytes(_tangent(ad.nn.selu, [x], [g]), want)  # SeluGradGrad: selu_grad(ẋ, y)


def test_softmax_tangent_is_tfs_rule_transposed():
    # _SoftmaxGrad: (g − Σ(g·s))·s; transposed: ṫ·s − Σ(ṫ·s)·s
    x = _uniform(19, -4.0, 4.0, size=(500, 8))
    t = _uniform(20, -3.0, 3.0, size=(500, 8))
    s = ad.nn.softmax(ad.constant(x)).numpy()
    got = _tangent(ad.nn.softmax, [x], [t])
    ts = t * s
    want = ts - np.add.reduce(ts, axis=1, keepdims=True) * s
    _same_bytes(got, want)
    assert np.any((t - np.add.reduce(ts, axis=1, keepdims=True)) * s != want)
    _, (g,) = _reverse(ad.nn.softmax, [x], t)  # (the gradient rule was TF's already)
    _same_bytes(g, (t - np.add.reduce(t * s, axis=1, keepdims=True)) * s)


@pytest.mark.parametrize("axis", [1, None])
def test_mean_tangent_divides_each_element_then_sums_as_tf(axis):
    # _MeanGrad: the upstream spread, then divided by n; transposed: Σ(ṫ / n), not Σṫ / n
    x = _uniform(21, -3.0, 3.0, size=(40, 100))
    t = _uniform(22, -3.0, 3.0, size=(40, 100))
    n = F32(100 if axis == 1 else 4000)
    got = _tangent(lambda v: ad.reduce_mean(v, axis=axis), [x], [t])
    want = np.add.reduce(t / n, axis=axis, dtype=np.float32)
    _same_bytes(np.asarray(got), np.asarray(want))
    assert np.any(np.add.reduce(t, axis=axis, dtype=np.float32) / n != want)
    _, (g,) = _reverse(lambda v: ad.reduce_mean(v, axis=axis), [x], np.ones(want.shape, np.float32) * F32(0.7))
    _same_bytes(g, np.broadcast_to(F32(0.7) / n, x.shape).copy())


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_squared_difference_rules_double_as_tf():
    # _SquaredDifferenceGrad: (2·g)·(x − y), and its negation; transposed: 2·((ẋ − ẏ)·(x − y)).
    # Doubling first or last rounds the same unless a product overflows: values near float32's largest.
    x = _uniform(23, -1.5e38, 1.5e38)
    y = _uniform(24, -1.5e38, 1.5e38)
    tx, ty = _uniform(25, -1.0, 1.0), _uniform(26, -1.0, 1.0)
    got = _tangent(ad.math.squared_difference, [x, y], [tx, ty])
    want = F32(2) * ((tx - ty) * (x - y))
    _same_bytes(got, want)
    assert np.any((F32(2) * (x - y)) * (tx - ty) != want)
    _, (gx, gy) = _reverse(ad.math.squared_difference, [x, y], tx)
    _same_bytes(gx, (F32(2) * tx) * (x - y))
    _same_bytes(gy, -((F32(2) * tx) * (x - y)))


def test_matrix_inverse_tangent_is_tfs_rule_transposed():
    # _MatrixInverseGrad: −A⁻ᵀ·(g·A⁻ᵀ); transposed: −(A⁻¹·ȧ)·A⁻¹, not −A⁻¹·(ȧ·A⁻¹)
    rng = np.random.default_rng(27)
    a = (rng.uniform(-1.0, 1.0, size=(300, 4, 4)) + 4.0 * np.eye(4)).astype(np.float32)
    t = rng.uniform(-1.0, 1.0, size=(300, 4, 4)).astype(np.float32)
    inv = ad.linalg.inv(ad.constant(a)).numpy()
    got = _tangent(ad.linalg.inv, [a], [t])
    want = -np.matmul(np.matmul(inv, t), inv)
    _same_bytes(got, want)
    assert np.any(-np.matmul(inv, np.matmul(t, inv)) != want)


def _xent_case(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4.0, 4.0, size=(1000, 10)).astype(np.float32)
    g = rng.uniform(-3.0, 3.0, size=1000).astype(np.float32)
    s, ls = ad.nn.softmax(ad.constant(x)).numpy(), ad.nn.log_softmax(ad.constant(x)).numpy()
    shifted = x - x.max(axis=1, keepdims=True)
    log_total = np.log(np.add.reduce(np.exp(shifted), axis=1, keepdims=True))
    return rng, x, g[:, None], s, ls, log_total - shifted


def _old_chain_rule(u, ls):
    # the gradient through −Σ labels · log_softmax: LogSoftmax's rule on the upstream −g · labels
    return u - np.exp(ls) * np.add.reduce(u, axis=1, keepdims=True)


def test_softmax_cross_entropy_is_tfs_fused_kernel_and_rule():
    # TF's kernel: loss Σ labels·(log Σ exp(s) − s); _SoftmaxCrossEntropyWithLogitsGrad: g·(softmax − labels) for the
    # logits (even where the labels do not sum to 1, as here), g·−log_softmax for the labels
    rng, x, g, s, ls, picked = _xent_case(28)
    labels = rng.uniform(0.0, 0.3, size=x.shape).astype(np.float32)
    loss, (gx, gl) = _reverse(lambda a, b: ad.nn.softmax_cross_entropy_with_logits(b, a), [x, labels], g[:, 0])
    _same_bytes(loss.numpy(), np.add.reduce(labels * picked, axis=1))
    want = g * (s - labels)
    _same_bytes(gx, want)
    _same_bytes(gl, g * -ls)
    assert np.any(_old_chain_rule(-g * labels, ls) != want)
    dx, dl = rng.uniform(-1.0, 1.0, size=x.shape).astype(np.float32), rng.uniform(-1.0, 1.0, size=x.shape).astype(np.float32)
    got = _tangent(lambda a, b: ad.nn.softmax_cross_entropy_with_logits(b, a), [x, labels], [dx, dl])
    _same_bytes(got, np.add.reduce(dx * (s - labels), axis=1) + np.add.reduce(dl * -ls, axis=1))


def test_sparse_softmax_cross_entropy_is_tfs_fused_kernel_and_rule():
    # TF's sparse kernel: loss log Σ exp(s) − s[label]; gradient g·(softmax − onehot(label)), none for the labels
    rng, x, g, s, _ls, picked = _xent_case(29)
    labels = rng.integers(0, 10, size=1000)
    onehot = np.eye(10, dtype=np.float32)[labels]
    lt = ad.constant(labels)
    loss, (gx,) = _reverse(lambda a: ad.nn.sparse_softmax_cross_entropy_with_logits(lt, a), [x], g[:, 0])
    _same_bytes(loss.numpy(), picked[np.arange(1000), labels])
    want = g * (s - onehot)
    _same_bytes(gx, want)
    assert np.any(_old_chain_rule(-g * onehot, _ls) != want)
    dx = rng.uniform(-1.0, 1.0, size=x.shape).astype(np.float32)
    got = _tangent(lambda a: ad.nn.sparse_softmax_cross_entropy_with_logits(lt, a), [x], [dx])
    _same_bytes(got, np.add.reduce(dx * (s - onehot), axis=1))


def test_keras_categorical_crossentropy_from_logits_is_the_fused_op():
    # Keras on TF calls tf.nn.softmax_cross_entropy_with_logits for logits: the gradient is
    # (1/n)·(softmax − labels) for a batch mean, the smoothed labels included
    rng = np.random.default_rng(30)
    x = rng.uniform(-4.0, 4.0, size=(64, 5)).astype(np.float32)
    y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, size=64)]
    loss_fn = ad.keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    _, (gx,) = _reverse(lambda a: loss_fn(ad.constant(y), a), [x], np.float32(1))
    s = ad.nn.softmax(ad.constant(x)).numpy()
    smoothed = y * F32(1.0 - 0.1) + F32(0.1 / 5)
    want = (F32(1) / F32(64)) * (s - smoothed)
    _same_bytes(gx, want)
    u = -(F32(1) / F32(64)) * smoothed
    assert np.any(_old_chain_rule(u, ad.nn.log_softmax(ad.constant(x)).numpy()) != want)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_is_tfs_formula_op_for_op(approximate):
    # nn_ops.gelu: 0.5·x·(1 + erf(x / 1.4142135623730951)), or 0.5·x·(1 + tanh(0.79788456...·(x + 0.044715·pow(x, 3))));
    # the gradient follows each op's rule: RealDiv's g / c (not g · (1/c)), Pow's (g·3)·x² (not a chain of Mul)
    x, g = _uniform(31, -3.0, 3.0), _uniform(32, -3.0, 3.0)
    y, (got,) = _reverse(lambda v: ad.nn.gelu(v, approximate=approximate), [x], g)
    h = F32(0.5) * x
    if approximate:
        c, k = F32(0.7978845608028654), F32(0.044715)
        cube = ad.pow(ad.constant(x), 3.0).numpy()  # (Pow's forward, as the op computed it)
        t = ad.tanh(ad.constant(c * (x + k * cube))).numpy()
        want_y = h * (F32(1) + t)
        w = ((g * h) * (F32(1) - t * t)) * c  # into tanh's input (TanhGrad's kernel), then c·(x + k·x³)'s rules
        # three terms reach x: 0.5·x's, the sum's and Pow's (g·3)·x²; the order they are added in is the tape's
        want = g * (F32(1) + t) * F32(0.5) + (w + ((w * k) * F32(3)) * (x * x))
        old = g * (F32(1) + t) * F32(0.5) + (w + ((w * k) * (x * x) + ((w * k) * x) * x + ((w * k) * x) * x))
    else:
        r = F32(1.4142135623730951)
        e = ad.math.erf(ad.constant(x / r)).numpy()
        want_y = h * (F32(1) + e)
        v = ((g * h) * F32(2 / np.sqrt(np.pi))) * np.exp(-np.square(x / r))  # into erf's input
        want = g * (F32(1) + e) * F32(0.5) + v / r
        old = g * (F32(1) + e) * F32(0.5) + v * F32(1 / np.sqrt(2.0))
    _same_bytes(y.numpy(), want_y)
    _same_bytes(got, want)
    assert np.any(old != want)


def test_swish_has_tfs_custom_gradient():
    # nn_impl.swish: dy · (s·(1 + (β·x)·(1 − s))) for x, Σ dy·x²·s·(1 − s) for β, s = σ(β·x)
    x, g = _uniform(33, -4.0, 4.0), _uniform(34, -3.0, 3.0)
    beta = np.float32(1.3)
    _, (gx, gb) = _reverse(ad.nn.swish, [x, beta], g)
    bx = beta * x
    s = ad.sigmoid(ad.constant(bx)).numpy()
    want = g * (s * (F32(1) + bx * (F32(1) - s)))
    _same_bytes(gx, want)
    _same_bytes(gb, np.add.reduce(((g * np.square(x)) * s) * (F32(1) - s)))
    chain = g * s + ((((g * x) * s) * (F32(1) - s)) * beta)  # the old chain rule through Mul and Sigmoid
    assert np.any(chain != want)
    _same_bytes(_tangent(lambda v: ad.nn.swish(v, beta), [x], [g]), want)  # TF's custom gradient, transposed


def _exclusive_cumprods(packed):
    ones = np.ones((1,) + packed.shape[1:], packed.dtype)
    left = np.concatenate([ones, np.cumprod(packed, axis=0, dtype=packed.dtype)[:-1]])
    right = np.concatenate([ones, np.cumprod(packed[::-1], axis=0, dtype=packed.dtype)[:-1]])[::-1]
    return left * right


@pytest.mark.parametrize("axis", [1, (0, 2)])
def test_prod_gradient_is_tfs_product_of_running_products(axis):
    # _ProdGrad: the reduced axes moved first and packed into one; the others' product is
    # cumprod(exclusive) · cumprod(exclusive, reverse) there, times the upstream (zeros included, no division)
    rng = np.random.default_rng(35)
    shape = (30, 8, 6) if axis == 1 else (4, 30, 3)  # (products of 8 and of 12 values)
    x = rng.uniform(0.5, 1.5, size=shape).astype(np.float32) * np.where(rng.uniform(size=shape) < 0.03, 0, 1)
    x = x.astype(np.float32)
    reduced = (1,) if axis == 1 else axis
    other = tuple(i for i in range(3) if i not in reduced)
    g = rng.uniform(-3.0, 3.0, size=tuple(x.shape[i] for i in other)).astype(np.float32)
    _, (got,) = _reverse(lambda v: ad.reduce_prod(v, axis=axis), [x], g)
    moved = np.transpose(x, reduced + other)
    packed = moved.reshape(int(np.prod([x.shape[i] for i in reduced])), -1)
    others = np.transpose(_exclusive_cumprods(packed).reshape(moved.shape), np.argsort(reduced + other))
    want = np.expand_dims(g, reduced) * others
    _same_bytes(got, want)
    p = np.prod(x, axis=reduced, keepdims=True, dtype=np.float32)
    assert np.any(np.where(x != 0, np.expand_dims(g, reduced) * (p / np.where(x != 0, x, 1)), want) != want)
    dx = rng.uniform(-1.0, 1.0, size=x.shape).astype(np.float32)
    got_t = _tangent(lambda v: ad.reduce_prod(v, axis=axis), [x], [dx])
    _same_bytes(got_t, np.add.reduce(dx * others, axis=reduced, dtype=np.float32))


def test_cumprod_rules_are_tfs():
    # _CumprodGrad: div_no_nan(cumsum(prod · g, reverse), x); transposed: prod · cumsum(div_no_nan(ẋ, x))
    x, g = _uniform(36, 0.5, 1.5, size=(200, 7)), _uniform(37, -3.0, 3.0, size=(200, 7))
    prod, (got,) = _reverse(lambda v: _math_ops._cumprod(v, 1, False, False), [x], g)
    prod = prod.numpy()
    _same_bytes(prod, np.cumprod(x, axis=1, dtype=np.float32))
    _same_bytes(got, np.cumsum((prod * g)[:, ::-1], axis=1, dtype=np.float32)[:, ::-1] / x)
    _same_bytes(_tangent(lambda v: _math_ops._cumprod(v, 1, False, False), [x], [g]),
                prod * np.cumsum(g / x, axis=1, dtype=np.float32))


def _tf_avg_pool_grad(g, input_shape, k, s, pads):
    # avgpooling_op.cc's CPU kernel, loop for loop: output positions row-major, each adding g · T(1.0 / count)
    # to the real inputs of its window
    dx = np.zeros(input_shape, g.dtype)
    for r in range(g.shape[1]):
        r0, r1 = max(r * s - pads[0], 0), min(r * s - pads[0] + k, input_shape[1])
        for c in range(g.shape[2]):
            c0, c1 = max(c * s - pads[1], 0), min(c * s - pads[1] + k, input_shape[2])
            coeff = g.dtype.type(1.0 / ((r1 - r0) * (c1 - c0)))
            for i in range(r0, r1):
                for j in range(c0, c1):
                    dx[:, i, j, :] += g[:, r, c, :] * coeff
    return dx


@pytest.mark.parametrize("shape, k, s, padding, pads", [((2, 7, 7, 3), 3, 1, "VALID", (0, 0)),
                                                       ((2, 6, 5, 3), 3, 2, "SAME", (0, 1))])  # (TF: the odd pad after)
def test_avg_pool_gradient_is_tfs_kernel_loop_for_loop(shape, k, s, padding, pads):
    x = _uniform(38, -1.0, 1.0, size=shape)
    y = ad.nn.avg_pool2d(ad.constant(x), k, s, padding)
    g = _uniform(39, -3.0, 3.0, size=tuple(y.shape))
    _, (got,) = _reverse(lambda v: ad.nn.avg_pool2d(v, k, s, padding), [x], g)
    want = _tf_avg_pool_grad(g, shape, k, s, pads)
    _same_bytes(got, want)


def test_softplus_second_derivative_is_tfs_softplus_grad_grad():
    # _SoftplusGradGrad: for x, grad·dy / (exp(−x) + 2 + exp(x)); for dy, SoftplusGrad's kernel again.
    # (Through the chain rule of g / (exp(−x) + 1) the rounding is another.)
    x, dy, u = _uniform(40, -3.0, 3.0), _uniform(41, -3.0, 3.0), _uniform(42, -3.0, 3.0)
    _, (gdy, gx) = _reverse(_ops._softplus_grad, [dy, x], u)
    d2 = (np.exp(-x) + F32(2)) + np.exp(x)
    want = (u * dy) / d2
    _same_bytes(gx, want)
    _same_bytes(gdy, u / (np.exp(-x) + F32(1)))
    e = np.exp(-x) + F32(1)
    assert np.any((u * ((-dy / e) / e)) * -np.exp(-x) != want)  # the chain rule through RealDiv, Add, Exp, Neg
    tdy, tx = _uniform(43, -3.0, 3.0), _uniform(44, -3.0, 3.0)
    got = _tangent(_ops._softplus_grad, [dy, x], [tdy, tx])
    _same_bytes(got, tdy / (np.exp(-x) + F32(1)) + (tx / d2) * dy)
    xt = ad.constant(x)  # and softplus's second derivative through nested tapes is that rule's
    with ad.GradientTape() as outer:
        outer.watch(xt)
        with ad.GradientTape() as inner:
            inner.watch(xt)
            y = ad.nn.softplus(xt)
        first = inner.gradient(y, xt, output_gradients=ad.constant(dy))
    _same_bytes(outer.gradient(first, xt, output_gradients=ad.constant(u)).numpy(), want)
