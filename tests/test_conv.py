"""Convolution and pooling: TensorFlow's own test numbers, a naive loop convolution, and the Keras layers."""
import numpy as np
import pytest

import autodiff_viz as tf
from autodiff_viz import _nn_ops


def fill(shape):
    """1, 2, 3, ... in ``shape``: how TF's conv and pooling kernel tests fill inputs and filters."""
    return tf.constant(np.arange(1, np.prod(shape) + 1, dtype=np.float32).reshape(shape))


# -- TF's conv_ops_test / pooling_ops_test expected values ----------------------------------
@pytest.mark.parametrize("filter_shape, strides, padding, expected", [
    ([1, 1, 3, 3], 1, "VALID", [30, 36, 42, 66, 81, 96, 102, 126, 150, 138, 171, 204, 174, 216, 258, 210, 261, 312]),
    ([2, 2, 3, 3], 1, "VALID", [2271, 2367, 2463, 2901, 3033, 3165]),
    ([1, 2, 3, 3], 1, "VALID", [231, 252, 273, 384, 423, 462, 690, 765, 840, 843, 936, 1029]),
    ([2, 2, 3, 3], 2, "VALID", [2271, 2367, 2463]),
    ([2, 2, 3, 3], [1, 2, 2, 1], "SAME", [2271, 2367, 2463, 1230, 1305, 1380]),
], ids=["1x1", "2x2", "1x2", "2x2-stride2", "2x2-stride2-same"])
def test_conv2d_matches_tf_kernel_tests(filter_shape, strides, padding, expected):
    out = tf.nn.conv2d(fill([1, 2, 3, 3]), fill(filter_shape), strides, padding)
    np.testing.assert_allclose(out.numpy().ravel(), expected)


def test_conv2d_backprops_match_tf_kernel_tests():
    # conv_ops_test: input [1, 2, 3, 1], filter [2, 2, 1, 1], output gradient [1, 1, 2, 1], all filled 1, 2, ...
    dx = _nn_ops._conv2d_backprop_input(fill([2, 2, 1, 1]), fill([1, 1, 2, 1]), (1, 2, 3, 1), (1, 1),
                                        ((0, 0), (0, 0)), (1, 1))
    np.testing.assert_allclose(dx.numpy().ravel(), [1, 4, 4, 3, 10, 8])
    dw = _nn_ops._conv2d_backprop_filter(fill([1, 2, 3, 1]), fill([1, 1, 2, 1]), (2, 2, 1, 1), (1, 1),
                                         ((0, 0), (0, 0)), (1, 1))
    np.testing.assert_allclose(dw.numpy().ravel(), [5, 8, 14, 17])


def test_pooling_matches_tf_kernel_tests():
    np.testing.assert_allclose(tf.nn.max_pool2d(fill([1, 3, 3, 3]), 2, 2, "VALID").numpy().ravel(), [13, 14, 15])
    np.testing.assert_allclose(tf.nn.max_pool2d(fill([1, 2, 3, 3]), 2, 2, "SAME").numpy().ravel(),
                               [13, 14, 15, 16, 17, 18])
    np.testing.assert_allclose(tf.nn.avg_pool2d(fill([1, 3, 3, 3]), 2, 2, "VALID").numpy().ravel(), [7, 8, 9])
    np.testing.assert_allclose(tf.nn.avg_pool2d(fill([1, 2, 4, 3]), [2, 2], [2, 2], "SAME").numpy().ravel(),
                               [8.5, 9.5, 10.5, 14.5, 15.5, 16.5])


# -- against a naive loop -----------------------------------------------------------------------
def naive_conv2d(x, w, strides, pads, dilations):
    """Cross-correlation written as the definition: out[n, i, j, o] = Σ x_pad[n, i·s + a·d, j·s + b·d, c] w[a, b, c, o]."""
    (top, bottom), (left, right) = pads
    x = np.pad(x, [(0, 0), (top, bottom), (left, right), (0, 0)])
    kh, kw, cin, cout = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh = (x.shape[1] - (kh - 1) * dh - 1) // sh + 1
    ow = (x.shape[2] - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((x.shape[0], oh, ow, cout))
    for n in range(x.shape[0]):
        for i in range(oh):
            for j in range(ow):
                for o in range(cout):
                    total = 0.0
                    for a in range(kh):
                        for b in range(kw):
                            for c in range(cin):
                                total += x[n, i * sh + a * dh, j * sw + b * dw, c] * w[a, b, c, o]
                    out[n, i, j, o] = total
    return out


@pytest.mark.parametrize("x_shape, w_shape, strides, padding, dilations, pads", [
    ((2, 6, 5, 3), (3, 3, 3, 4), 1, "SAME", 1, ((1, 1), (1, 1))),
    ((1, 7, 6, 2), (3, 2, 2, 2), (2, 3), "SAME", 1, ((1, 1), (0, 1))),
    ((1, 7, 7, 1), (2, 3, 1, 2), 1, "VALID", (2, 1), ((0, 0), (0, 0))),
    ((1, 5, 5, 2), (2, 2, 2, 1), 2, [[0, 0], [1, 2], [0, 1], [0, 0]], 1, ((1, 2), (0, 1))),
], ids=["same", "same-strides-2x3", "valid-dilations-2x1", "explicit-padding"])
def test_conv2d_matches_a_naive_loop(x_shape, w_shape, strides, padding, dilations, pads):
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=x_shape), rng.normal(size=w_shape)
    s = (strides, strides) if isinstance(strides, int) else strides
    d = (dilations, dilations) if isinstance(dilations, int) else dilations
    out = tf.nn.conv2d(tf.constant(x), tf.constant(w), strides, padding, dilations=dilations)
    np.testing.assert_allclose(out.numpy(), naive_conv2d(x, w, s, pads, d), atol=1e-12)


def test_conv2d_gradients_are_the_naive_convolutions_transposes():
    # sum(conv(x, w) * g) is linear: its gradient in x is the transposed convolution of g (by the naive loop's
    # definition, each x_pad element collects g times the filter taps that touch it).
    rng = np.random.default_rng(1)
    x, w = tf.constant(rng.normal(size=(1, 4, 4, 2))), tf.constant(rng.normal(size=(3, 3, 2, 2)))
    g = rng.normal(size=(1, 2, 2, 2))
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = tf.reduce_sum(tf.nn.conv2d(x, w, 2, "SAME") * g)
    gx, gw = tape.gradient(y, [x, w])
    expected_x = np.zeros((1, 5, 5, 2))  # SAME, stride 2, 3x3 on 4: padding 0 before, 1 after
    for i in range(2):
        for j in range(2):
            expected_x[0, 2 * i:2 * i + 3, 2 * j:2 * j + 3, :] += np.einsum("abco,o->abc", w.numpy(), g[0, i, j])
    np.testing.assert_allclose(gx.numpy(), expected_x[:, :4, :4], atol=1e-12)
    xp = np.pad(x.numpy(), [(0, 0), (0, 1), (0, 1), (0, 0)])
    expected_w = sum(np.einsum("abc,o->abco", xp[0, 2 * i:2 * i + 3, 2 * j:2 * j + 3], g[0, i, j])
                     for i in range(2) for j in range(2))
    np.testing.assert_allclose(gw.numpy(), expected_w, atol=1e-12)


def test_max_pool_gradient_goes_to_the_first_maximum_of_each_window():
    x = tf.constant([[1.0, 5.0, 5.0, 2.0], [0.0, 3.0, 4.0, 5.0]])[tf.newaxis, ..., tf.newaxis]
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.nn.max_pool2d(x, 2, 2, "VALID") * tf.constant([10.0, 20.0])[tf.newaxis, tf.newaxis, :,
                                                                                        tf.newaxis])
    # Window 1 max 5 at (0, 1); window 2 has 5 at (0, 2) and (1, 3): the first, in row-major order, gets it.
    np.testing.assert_array_equal(tape.gradient(y, x).numpy()[0, ..., 0], [[0, 10, 20, 0], [0, 0, 0, 0]])


def test_avg_pool_same_divides_by_the_real_inputs():
    x = tf.ones((1, 3, 3, 1))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.nn.avg_pool2d(x, 2, 2, "SAME"))
    # Windows: 2x2, 2x1, 1x2, 1x1 real inputs; each input gets 1/n of its (one) window.
    np.testing.assert_allclose(tape.gradient(y, x).numpy()[0, ..., 0],
                               [[0.25, 0.25, 0.5], [0.25, 0.25, 0.5], [0.5, 0.5, 1.0]])
    np.testing.assert_allclose(y.numpy(), 4.0)


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, match", [
    (lambda: tf.nn.conv2d(tf.ones((4, 4, 1)), tf.ones((2, 2, 1, 1)), 1, "VALID"), "Conv2D: input must be 4-D"),
    (lambda: tf.nn.conv2d(tf.ones((1, 4, 4, 2)), tf.ones((2, 2, 1, 1)), 1, "VALID"), "2 channels"),
    (lambda: tf.nn.conv2d(tf.ones((1, 4, 4, 1)), tf.ones((2, 2, 1, 1)), 0, "VALID"), "strides must be >= 1"),
    (lambda: tf.nn.conv2d(tf.ones((1, 4, 4, 1)), tf.ones((2, 2, 1, 1)), 1, "FULL"), "padding must be"),
    (lambda: tf.nn.conv2d(tf.ones((1, 1, 4, 1)), tf.ones((2, 2, 1, 1)), 1, "VALID"), "larger than the padded"),
    (lambda: tf.nn.conv2d(tf.ones((1, 4, 4, 1)), tf.ones((2, 2, 1, 1)), 1, "VALID", data_format="NCHW"),
     "NHWC"),
    (lambda: tf.nn.max_pool2d(tf.ones((1, 4, 4, 1)), 2, [2, 2, 2, 1], "VALID"), "batch and channel"),
    (lambda: tf.nn.avg_pool2d(tf.ones((1, 4, 4, 1), dtype=tf.int32), 2, 2, "VALID"), "AvgPool"),
])
def test_bad_arguments_name_the_op(call, match):
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError), match=match):
        call()


# -- Keras layers ------------------------------------------------------------------------------
def test_conv_layers_shapes_weights_and_summary():
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(8, 3, activation="relu", input_shape=(8, 8, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(4, (3, 3), padding="same"),
        tf.keras.layers.AveragePooling2D(pool_size=2),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(2)])
    assert model(tf.ones((3, 8, 8, 1))).shape == (3, 2)
    lines = []
    model.summary(print_fn=lines.append)
    # 3·3·1·8 + 8 = 80; 3·3·8·4 + 4 = 292; 4·2 + 2 = 10.
    for row in ("(None, 6, 6, 8)", "(None, 3, 3, 8)", "(None, 3, 3, 4)", "(None, 1, 1, 4)", "(None, 4)",
                "Total params: 382 (1.49 KB)"):
        assert row in lines[0]
    conv, pool = model.layers[:2]
    assert conv.name.startswith("conv2d") and pool.name.startswith("max_pooling2d")  # Keras's spelling
    assert f"{conv.name} (Conv2D)" in lines[0] and f"{pool.name} (MaxPooling2D)" in lines[0]
    assert [tuple(v.shape) for v in model.trainable_variables] == [(3, 3, 1, 8), (8,), (3, 3, 8, 4), (4,), (4, 2),
                                                                   (2,)]


def test_conv_layer_computes_conv2d_plus_bias():
    layer = tf.keras.layers.Conv2D(1, 2, strides=2, kernel_initializer="ones", bias_initializer="ones")
    x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    np.testing.assert_allclose(layer(x).numpy()[0, ..., 0], [[11.0, 19.0], [43.0, 51.0]])


def test_a_tiny_cnn_trains_on_synthetic_images():
    # Bright-top versus bright-bottom 8x8 images: a few SGD steps bring the loss down.
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    images = rng.uniform(0.0, 0.2, size=(16, 8, 8, 1)).astype(np.float32)
    labels = np.arange(16) % 2
    images[labels == 0, :4] += 0.8
    images[labels == 1, 4:] += 0.8
    model = tf.keras.Sequential([tf.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
                                 tf.keras.layers.MaxPooling2D(), tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = tf.keras.optimizers.SGD(0.5)
    losses = []
    for _ in range(15):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    accuracy.update_state(labels, model(images))
    assert float(accuracy.result()) == 1.0


def test_the_custom_layers_tutorials_resnet_identity_block():
    # TF's "Custom layers" tutorial: a block named '' of three convolutions and batch norms; the tutorial prints
    # 6 layers, 18 variables, 41 parameters (29 trainable, 12 non-trainable).
    class ResnetIdentityBlock(tf.keras.Model):
        def __init__(self, kernel_size, filters):
            super(ResnetIdentityBlock, self).__init__(name="")
            filters1, filters2, filters3 = filters
            self.conv2a = tf.keras.layers.Conv2D(filters1, (1, 1))
            self.bn2a = tf.keras.layers.BatchNormalization()
            self.conv2b = tf.keras.layers.Conv2D(filters2, kernel_size, padding="same")
            self.bn2b = tf.keras.layers.BatchNormalization()
            self.conv2c = tf.keras.layers.Conv2D(filters3, (1, 1))
            self.bn2c = tf.keras.layers.BatchNormalization()

        def call(self, input_tensor, training=False):
            x = self.conv2a(input_tensor)
            x = self.bn2a(x, training=training)
            x = tf.nn.relu(x)
            x = self.conv2b(x)
            x = self.bn2b(x, training=training)
            x = tf.nn.relu(x)
            x = self.conv2c(x)
            x = self.bn2c(x, training=training)
            x += input_tensor
            return tf.nn.relu(x)

    block = ResnetIdentityBlock(1, [1, 2, 3])
    out = block(tf.zeros([1, 2, 3, 3]))
    assert out.shape == (1, 2, 3, 3)
    assert [type(layer).__name__ for layer in block.layers] == ["Conv2D", "BatchNormalization"] * 3
    assert len(block.variables) == 18
    lines = []
    block.summary(print_fn=lines.append)
    assert lines[0].startswith('Model: ""')
    for row in ("Total params: 41", "Trainable params: 29", "Non-trainable params: 12"):
        assert row in lines[0]


@pytest.mark.parametrize("make, match", [
    (lambda: tf.keras.layers.Conv2D(2, [1, 2, 3]), "Conv2D: kernel_size must be an int or a list of 1 or 2"),
    (lambda: tf.keras.layers.Conv2D(0, 3), "filters must be a positive integer"),
    (lambda: tf.keras.layers.Flatten(data_format="channels_first"), "channels_last"),
    (lambda: tf.keras.layers.MaxPooling2D(padding="full"), "MaxPooling2D: padding must be 'valid' or 'same'"),
])
def test_bad_layer_arguments_say_which(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# -- Dive into Deep Learning's convolution chapters (TensorFlow), with their printed values --------------
def corr2d(X, K):
    """The textbook's cross-correlation from scratch: a variable filled by sliced assigns."""
    h, w = K.shape
    Y = tf.Variable(tf.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1)))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j].assign(tf.reduce_sum(X[i: i + h, j: j + w] * K))
    return Y


def test_the_textbooks_corr2d_and_edge_detection():
    X = tf.constant([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
    K = tf.constant([[0.0, 1.0], [2.0, 3.0]])
    assert corr2d(X, K).numpy().tolist() == [[19.0, 25.0], [37.0, 43.0]]
    np.testing.assert_array_equal(tf.nn.conv2d(tf.reshape(X, (1, 3, 3, 1)), tf.reshape(K, (2, 2, 1, 1)), 1,
                                               "VALID").numpy()[0, ..., 0], [[19.0, 25.0], [37.0, 43.0]])
    X = tf.Variable(tf.ones((6, 8)))
    X[:, 2:6].assign(tf.zeros(X[:, 2:6].shape))
    Y = corr2d(X, tf.constant([[1.0, -1.0]]))
    assert Y.numpy()[:, 1].tolist() == [1.0] * 6 and Y.numpy()[:, 5].tolist() == [-1.0] * 6
    assert np.count_nonzero(Y.numpy()) == 12


def test_the_textbooks_learned_edge_kernel():
    # The textbook learns K = [1, -1] with a Conv2D(1, (1, 2)) by get_weights / set_weights (from any start:
    # 30 seeds all came within 2e-4 in 40 steps).
    tf.random.set_seed(0)
    X = tf.Variable(tf.ones((6, 8)))
    X[:, 2:6].assign(tf.zeros(X[:, 2:6].shape))
    Y = corr2d(X, tf.constant([[1.0, -1.0]]))
    conv2d = tf.keras.layers.Conv2D(1, (1, 2), use_bias=False)
    X, Y = tf.reshape(X, (1, 6, 8, 1)), tf.reshape(Y, (1, 6, 7, 1))
    Y_hat = conv2d(X)
    for _ in range(40):
        with tf.GradientTape(watch_accessed_variables=False) as g:
            g.watch(conv2d.weights[0])
            Y_hat = conv2d(X)
            loss = (abs(Y_hat - Y)) ** 2
            update = tf.multiply(3e-2, g.gradient(loss, conv2d.weights[0]))
            weights = conv2d.get_weights()
            weights[0] = conv2d.weights[0] - update
            conv2d.set_weights(weights)
    np.testing.assert_allclose(tf.reshape(conv2d.get_weights()[0], (1, 2)).numpy(), [[1.0, -1.0]], atol=1e-3)


def test_the_textbooks_pooling_cells():
    X = tf.reshape(tf.range(16, dtype=tf.float32), (1, 4, 4, 1))
    assert tf.keras.layers.MaxPool2D(pool_size=[3, 3])(X).numpy().ravel().tolist() == [10.0]
    pool2d = tf.keras.layers.MaxPool2D(pool_size=[3, 3], padding="valid", strides=2)
    X_padded = tf.pad(X, tf.constant([[0, 0], [1, 0], [1, 0], [0, 0]]), "CONSTANT")
    assert pool2d(X_padded).numpy().ravel().tolist() == [5.0, 7.0, 13.0, 15.0]
    X_padded = tf.pad(X, tf.constant([[0, 0], [0, 0], [1, 1], [0, 0]]), "CONSTANT")
    pool2d = tf.keras.layers.MaxPool2D(pool_size=[2, 3], padding="valid", strides=(2, 3))
    assert pool2d(X_padded).numpy().ravel().tolist() == [5.0, 7.0, 13.0, 15.0]
    X = tf.concat([X, X + 1], 3)
    X_padded = tf.pad(X, tf.constant([[0, 0], [1, 0], [1, 0], [0, 0]]), "CONSTANT")
    out = tf.keras.layers.MaxPool2D(pool_size=[3, 3], padding="valid", strides=2)(X_padded)
    assert out.numpy().tolist() == [[[[5.0, 6.0], [7.0, 8.0]], [[13.0, 14.0], [15.0, 16.0]]]]


def test_set_weights_refuses_the_wrong_shapes():
    layer = tf.keras.layers.Conv2D(2, 3)
    layer(tf.ones((1, 4, 4, 1)))
    with pytest.raises(ValueError, match="kernel.*\\(3, 3, 1, 2\\)"):
        layer.set_weights([np.ones((3, 3, 2, 2)), np.zeros(2)])
    with pytest.raises(ValueError, match="expected 2 arrays"):
        layer.set_weights([np.ones((3, 3, 1, 2))])
