"""Ops of the Core and customization tutorials, against the examples printed in TF's API docs and closed forms."""
import numpy as np
import pytest

import autodiff_viz as tf


def test_meshgrid_as_in_tf_docs():
    # tf.meshgrid docs: x = [1, 2, 3], y = [4, 5, 6].
    X, Y = tf.meshgrid([1, 2, 3], [4, 5, 6])
    assert X.numpy().tolist() == [[1, 2, 3]] * 3
    assert Y.numpy().tolist() == [[4, 4, 4], [5, 5, 5], [6, 6, 6]]
    rows, cols = tf.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    assert rows.shape == (3, 2) and cols.numpy().tolist() == [[4, 5]] * 3


def test_tensordot_matches_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 3, 5))
    np.testing.assert_allclose(tf.tensordot(a, b, [[1, 2], [1, 0]]).numpy(), np.tensordot(a, b, [[1, 2], [1, 0]]))
    np.testing.assert_allclose(tf.linalg.tensordot(a[0], b[:, 0], 1).numpy(), a[0] @ b[:, 0])
    assert tf.tensordot(np.ones(3), np.ones(2), 0).shape == (3, 2)  # an outer product
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tensordot"):
        tf.tensordot(a, b, [[0], [0]])


def test_boolean_mask_as_in_tf_docs():
    assert tf.boolean_mask([0, 1, 2, 3], np.array([True, False, True, False])).numpy().tolist() == [0, 2]
    assert tf.boolean_mask([[1, 2], [3, 4], [5, 6]], [True, False, True]).numpy().tolist() == [[1, 2], [5, 6]]
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.boolean_mask(x, [[True, False], [False, True]]) * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[3.0, 0.0], [0.0, 3.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="boolean_mask"):
        tf.boolean_mask([1, 2], [True])


def test_cumsum_as_in_tf_docs():
    x = tf.constant([2, 4, 6, 8])
    assert tf.cumsum(x).numpy().tolist() == [2, 6, 12, 20]
    assert tf.math.cumsum(x, exclusive=True).numpy().tolist() == [0, 2, 6, 12]
    assert tf.math.cumsum(x, reverse=True).numpy().tolist() == [20, 18, 14, 8]
    assert tf.math.cumsum(x, exclusive=True, reverse=True).numpy().tolist() == [18, 14, 8, 0]
    y = tf.constant([[2, 4, 6, 8], [1, 3, 5, 7]])
    assert tf.cumsum(y, axis=0).numpy().tolist() == [[2, 4, 6, 8], [3, 7, 11, 15]]
    assert tf.cumsum(y, axis=1).numpy().tolist() == [[2, 6, 12, 20], [1, 4, 9, 16]]
    assert tf.cumsum(x).dtype == tf.int32


def test_sinh_cosh_as_in_tf_docs():
    x = tf.constant([-float("inf"), -9, -0.5, 1, 1.2, 2, 10, float("inf")])
    np.testing.assert_allclose(tf.math.sinh(x).numpy(), [-np.inf, -4.0515420e+03, -5.2109528e-01, 1.1752012e+00,
                                                         1.5094614e+00, 3.6268604e+00, 1.1013232e+04, np.inf], rtol=1e-6)
    np.testing.assert_allclose(tf.math.cosh(x).numpy(), [np.inf, 4.0515420e+03, 1.1276259e+00, 1.5430807e+00,
                                                         1.8106556e+00, 3.7621956e+00, 1.1013233e+04, np.inf], rtol=1e-6)


def test_nan_and_infinity_tests_as_in_tf_docs():
    assert tf.math.is_nan([5.0, np.nan, 6.8, np.nan, np.inf]).numpy().tolist() == [False, True, False, True, False]
    assert tf.math.is_inf(tf.constant([5.0, np.inf, 6.8, -np.inf])).numpy().tolist() == [False, True, False, True]
    assert tf.math.is_finite([5.0, 4.8, 6.8, np.inf, np.nan]).numpy().tolist() == [True, True, True, False, False]
    with pytest.raises(TypeError, match="IsNan"):
        tf.math.is_nan(tf.constant([1, 2]))


def test_svd_reconstructs_and_matches_numpy_singular_values():
    a = np.random.default_rng(3).normal(size=(4, 3))
    s, u, v = tf.linalg.svd(a)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False))
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, a, atol=1e-12)
    assert u.shape == (4, 3) and v.shape == (3, 3)
    np.testing.assert_allclose(tf.linalg.svd(a, compute_uv=False).numpy(), s.numpy())


def test_svd_gradient_of_the_largest_singular_value_is_its_outer_product():
    # d s_1 / dA = u_1 v_1ᵀ (closed form).
    a = tf.constant([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(a)
        s, u, v = tf.linalg.svd(a)
        top = s[0]
    np.testing.assert_allclose(tape.gradient(top, a).numpy(), np.outer(u.numpy()[:, 0], v.numpy()[:, 0]), atol=1e-12)


def test_diag_and_matvec_as_in_tf_docs():
    d = tf.linalg.diag([[1, 2, 3, 4], [5, 6, 7, 8]])
    assert d.numpy().tolist() == [np.diag([1, 2, 3, 4]).tolist(), np.diag([5, 6, 7, 8]).tolist()]
    a = tf.constant([[1, 2, 3], [4, 5, 6]])
    assert tf.linalg.matvec(a, tf.constant([7, 9, 11])).numpy().tolist() == [58, 139]
    assert tf.linalg.matvec(a, tf.constant([1, 1]), transpose_a=True).numpy().tolist() == [5, 7, 9]


def test_map_fn_as_in_tf_docs():
    out = tf.map_fn(fn=lambda t: tf.range(t, t + 3), elems=tf.constant([3, 5, 2]))
    assert out.numpy().tolist() == [[3, 4, 5], [5, 6, 7], [2, 3, 4]]
    elems = (np.array([1, 2, 3]), np.array([-1, 1, -1]))
    assert tf.map_fn(lambda x: x[0] * x[1], elems, fn_output_signature=tf.int64).numpy().tolist() == [-1, 2, -3]
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.map_fn(lambda t: t * t, x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 4.0])


def test_resize_bilinear_half_pixel_values():
    # TF2's bilinear resize of [[1, 2], [3, 4]] to 4x4 (half-pixel centers): 1, 1.25, 1.75, 2 along a row.
    img = tf.reshape(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [2, 2, 1])
    out = tf.image.resize_with_pad(img, 4, 4)
    assert out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy()[..., 0], [[1.0, 1.25, 1.75, 2.0], [1.5, 1.75, 2.25, 2.5],
                                                   [2.5, 2.75, 3.25, 3.5], [3.0, 3.25, 3.75, 4.0]])


def test_resize_with_pad_pads_the_rest_with_zeros():
    img = tf.reshape(tf.range(4.0), [2, 2, 1])
    np.testing.assert_array_equal(tf.image.resize_with_pad(img, 2, 4).numpy()[..., 0],
                                  [[0.0, 0.0, 1.0, 0.0], [0.0, 2.0, 3.0, 0.0]])
    # 3x5 into 4x4: ratio 1.25, resized to 2.4 -> 2 rows of 4; padding floor(0.8) = 0 on top, the rest below.
    out = tf.image.resize_with_pad(tf.ones((1, 3, 5, 2)), 4, 4)
    assert out.shape == (1, 4, 4, 2)
    np.testing.assert_allclose(out.numpy()[0, :2], 1.0)
    np.testing.assert_array_equal(out.numpy()[0, 2:], 0.0)


def test_resize_gradient_spreads_each_output_over_its_four_inputs():
    # Upscaling 2 -> 4 along an axis, each input pixel's weights sum to 1 + .75 + .25 = 2: 4 over both axes.
    img = tf.Variable(tf.zeros((2, 2, 1)))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.image.resize_with_pad(img, 4, 4))
    np.testing.assert_allclose(tape.gradient(y, img).numpy(), np.full((2, 2, 1), 4.0))


def test_random_shuffle_permutes_the_first_axis():
    x = tf.reshape(tf.range(10), [5, 2])
    y = tf.random.shuffle(x, seed=3)
    assert sorted(map(tuple, y.numpy().tolist())) == [tuple(r) for r in x.numpy().tolist()]
    assert tf.random.shuffle(x, seed=3).numpy().tolist() == y.numpy().tolist()


def test_random_normal_initializer_draws_normal_values():
    init = tf.random_normal_initializer(mean=1.0, stddev=2.0, seed=5)
    w = init(shape=(200, 100), dtype=tf.float32)
    assert w.shape == (200, 100) and w.dtype == tf.float32
    assert abs(float(tf.reduce_mean(w)) - 1.0) < 0.05 and abs(float(tf.math.reduce_std(w)) - 2.0) < 0.05
    v = tf.Variable(initial_value=init(shape=(3, 2)))
    assert v.shape == (3, 2)


def test_cardinality_counts_elements():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(42))
    assert int(tf.data.experimental.cardinality(ds)) == 42
    assert int(tf.data.experimental.cardinality(ds.batch(5))) == 9
    assert int(ds.batch(5, drop_remainder=True).cardinality()) == 8
    assert tf.data.experimental.cardinality(ds).dtype == tf.int64
    assert tf.data.experimental.UNKNOWN_CARDINALITY == -2


def test_what_is_still_missing_says_so():
    for missing in (lambda: tf.data.experimental.AUTOTUNE, lambda: tf.linalg.qr, lambda: tf.math.cumprod):
        with pytest.raises(AttributeError, match="is not part of autodiff_viz"):
            missing()


def test_the_matrix_approximation_tutorials_svd_cells():
    # TF Core's "Matrix approximation with SVD": reconstruct A from s, U, V, then the rank-r approximation,
    # whose error in the Frobenius norm is sqrt(s_{r+1}² + ...) (Eckart–Young, closed form).
    A = tf.constant(np.random.default_rng(4).uniform(size=(40, 30)), dtype=tf.float32)
    s, U, V = tf.linalg.svd(A)
    A_svd = tf.einsum("s,us,vs -> uv", s, U, V)
    np.testing.assert_allclose(A_svd.numpy(), A.numpy(), atol=1e-5)
    A_mat = tf.linalg.matmul(U, tf.linalg.matmul(tf.linalg.diag(s), V, adjoint_b=True))
    np.testing.assert_allclose(A_mat.numpy(), A.numpy(), atol=1e-5)

    def rank_r_approx(s, U, V, r):
        s_r, U_r, V_r = s[..., :r], U[..., :, :r], V[..., :, :r]
        return tf.einsum("...s,...ps,...qs->...pq", s_r, U_r, V_r)

    for r in (1, 5, 20):
        error = float(tf.norm(A - rank_r_approx(s, U, V, r)))
        np.testing.assert_allclose(error, np.sqrt(np.sum(s.numpy()[r:] ** 2)), rtol=1e-4)


def test_the_textbooks_softmax_cross_entropy_cell():
    # Dive into Deep Learning, softmax regression from scratch (TensorFlow): picks with a one-hot float mask,
    # printed [0.1, 0.5], then the cross entropy [2.3025851, 0.6931472].
    y = tf.constant([0, 2])
    y_hat = tf.constant([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    np.testing.assert_allclose(tf.boolean_mask(y_hat, tf.one_hot(y, depth=y_hat.shape[-1])).numpy(), [0.1, 0.5])

    def cross_entropy(y_hat, y):
        return -tf.math.log(tf.boolean_mask(y_hat, tf.one_hot(y, depth=y_hat.shape[-1])))

    np.testing.assert_allclose(cross_entropy(y_hat, y).numpy(), [2.3025851, 0.6931472], rtol=1e-6)
