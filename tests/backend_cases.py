"""Programs every backend must differentiate alike: shared by the backend tests (strict Array-API and CuPy)."""
import numpy as np

import autodiff_viz as ad


def grads_on(backend, f, *values):
    """Value and gradients of ``f`` at ``values`` (float64), computed on ``backend``, as host arrays."""
    with ad.backend(backend):
        xs = [ad.constant(np.asarray(v, dtype=np.float64)) for v in values]
        with ad.GradientTape() as tape:
            tape.watch(xs)
            y = f(*xs)
        grads = tape.gradient(y, xs)
    return y.numpy(), [None if g is None else g.numpy() for g in grads]


rng = np.random.default_rng(0)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 2))
P = rng.uniform(0.5, 2.0, size=(3, 4))

# (name, function, inputs): every kind of op the engine has, a few composed.
CASES = [
    ("sin_cos_tan", lambda x: ad.sin(x) * ad.cos(x) + ad.tan(x * 0.3), [A]),
    ("exp_log_log1p", lambda x: ad.exp(x * 0.1) + ad.log(x) + ad.log1p(x), [P]),
    ("sqrt_square_pow", lambda x: ad.sqrt(x) + ad.square(x) + x ** 3.0 + 2.0 ** x, [P]),
    ("pow_both", lambda x, y: ad.pow(x, y), [P, P[::-1]]),
    ("tanh_sigmoid_softplus_relu", lambda x: ad.tanh(x) + ad.sigmoid(x) + ad.nn.softplus(x) + ad.nn.relu(x), [A]),
    ("abs_neg_sign", lambda x: ad.abs(x) - x + ad.sign(x) * x, [A]),
    ("arith_broadcast", lambda x, y: (x - y) / (y * y + 1.0) + x * 2.0, [A, A[:1]]),
    ("maximum_minimum", lambda x, y: ad.maximum(x, y) * ad.minimum(x, 0.0), [A, A[::-1]]),
    ("squared_difference", lambda x, y: ad.squared_difference(x, y), [A, A * 0.5]),
    ("reductions", lambda x: ad.reduce_sum(x, axis=0) + ad.reduce_mean(x, axis=0) + ad.reduce_max(x, axis=0)
     + ad.reduce_min(x, axis=0) + ad.reduce_prod(x, axis=0), [P]),
    ("reduce_keepdims", lambda x: x * ad.reduce_sum(x, axis=1, keepdims=True), [A]),
    ("matmul", lambda a, b: ad.matmul(a, b), [A, B]),
    ("matmul_transposed", lambda a, b: ad.matmul(a, b, transpose_a=True, transpose_b=True), [A.T, B.T]),
    ("transpose_reshape", lambda x: ad.reshape(ad.transpose(x), (2, 6)) * 3.0, [A]),
    ("squeeze_expand", lambda x: ad.squeeze(ad.expand_dims(x, 0)) * x, [A]),
    ("concat_stack", lambda x, y: ad.concat([x, y], axis=0) * ad.reshape(ad.stack([x, y]), (6, 4)), [A, P]),
    ("basic_slices", lambda x: x[1:, ::2] * x[0, 1] + ad.reduce_sum(x[..., -1:]) + x[-1, None, :2], [A]),
    ("repeated_index", lambda x: x[[0, 0, 2]] * 2.0, [A]),
    ("index_on_axis_1", lambda x: x[:, [3, 1, 3]], [A]),
    ("where_clip", lambda x: ad.where(x > 0.0, x * x, -x) + ad.clip_by_value(x, -0.5, 0.5), [A]),
    ("softmax_family", lambda x: ad.nn.softmax(x) * 2.0 + ad.nn.log_softmax(x), [A]),
    ("cast", lambda x: ad.cast(ad.cast(x, ad.float32) * 2.0, ad.float64), [A]),
    ("add_n_identity", lambda x: ad.add_n([x, ad.identity(x), x * x]), [A]),
    ("clip_by_norm", lambda x: ad.clip_by_norm(x, 1.0), [A]),
]

