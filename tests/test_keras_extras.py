"""Keras losses, metrics and Flatten, against the values printed in the Keras API docs and closed forms."""
import numpy as np
import pytest

import autodiff_viz as tf

losses, metrics = tf.keras.losses, tf.keras.metrics


# -- losses: the Keras docs' standalone examples ----------------------------------------
def test_binary_crossentropy_as_in_keras_docs():
    bce = losses.BinaryCrossentropy()
    np.testing.assert_allclose(float(bce([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]])), 0.815, atol=5e-4)
    logits = losses.BinaryCrossentropy(from_logits=True)
    np.testing.assert_allclose(float(logits([0, 1, 0, 0], [-18.6, 0.51, 2.94, -12.8])), 0.865, atol=5e-4)


def test_categorical_crossentropies_as_in_keras_docs():
    y_pred = [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]
    cce = losses.CategoricalCrossentropy()
    np.testing.assert_allclose(float(cce([[0, 1, 0], [0, 0, 1]], y_pred)), 1.177, atol=5e-4)
    scce = losses.SparseCategoricalCrossentropy()
    np.testing.assert_allclose(float(scce([1, 2], y_pred)), 1.177, atol=5e-4)
    # sample_weight=[0.3, 0.7]: Keras's docs print 0.814.
    np.testing.assert_allclose(float(scce([1, 2], y_pred, sample_weight=tf.constant([0.3, 0.7]))), 0.814, atol=5e-4)


def test_mean_squared_error_as_in_keras_docs():
    mse = losses.MeanSquaredError()
    assert float(mse([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 0.0]])) == 0.5
    assert float(mse([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 0.0]], sample_weight=[0.7, 0.3])) == \
        pytest.approx(0.25)


def test_sparse_crossentropy_from_logits_is_the_log_softmax_loss_and_differentiable():
    logits = tf.Variable([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]])
    labels = tf.constant([0, 1])
    with tf.GradientTape() as tape:
        loss = losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    z = logits.numpy().astype(np.float64)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(float(loss), -np.log(p[[0, 1], [0, 1]]).mean(), rtol=1e-6)
    # d mean(-log p_y) / dz = (p - onehot(y)) / batch (closed form).
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), (p - np.eye(3)[[0, 1]]) / 2, rtol=1e-5, atol=1e-7)


def test_a_loss_refuses_mismatched_labels():
    with pytest.raises(tf.errors.InvalidArgumentError, match="SparseCategoricalCrossentropy"):
        losses.SparseCategoricalCrossentropy()([0, 1, 2], [[0.5, 0.5]])


# -- metrics: the Keras docs' standalone examples ------------------------------------------
def test_mean_metric_as_in_keras_docs():
    m = metrics.Mean()
    m.update_state([1, 3, 5, 7])
    assert float(m.result()) == 4.0
    m.reset_state()
    m.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
    assert float(m.result()) == 2.0
    m.reset_state()
    assert float(m.result()) == 0.0


def test_sparse_categorical_accuracy_as_in_keras_docs():
    m = metrics.SparseCategoricalAccuracy()
    m.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
    assert float(m.result()) == 0.5
    m.reset_state()
    m.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]], sample_weight=[0.7, 0.3])
    np.testing.assert_allclose(float(m.result()), 0.3, rtol=1e-6)


def test_accuracy_as_in_keras_docs():
    m = metrics.Accuracy()
    m.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]])
    assert float(m.result()) == 0.75
    m.reset_state()
    m.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]], sample_weight=[1, 1, 0, 0])
    assert float(m.result()) == 0.5


def test_metrics_accumulate_over_batches_as_the_training_walkthrough_uses_them():
    avg, acc = metrics.Mean(), metrics.SparseCategoricalAccuracy()
    for loss, y, logits in ((1.0, [0, 1], [[3.0, 0.0], [0.0, 3.0]]), (3.0, [1], [[2.0, 1.0]])):
        avg.update_state(loss)
        acc.update_state(y, logits)
    assert float(avg.result()) == 2.0
    np.testing.assert_allclose(float(acc.result()), 2 / 3, rtol=1e-6)
    assert [v.trainable for v in acc.variables] == [False, False]


# -- Flatten --------------------------------------------------------------------------------
def test_flatten_keeps_the_batch_axis():
    x = tf.reshape(tf.range(24.0), [2, 3, 4])
    y = tf.keras.layers.Flatten()(x)
    assert y.shape == (2, 12)
    np.testing.assert_array_equal(y.numpy(), np.arange(24.0).reshape(2, 12))
    assert tf.keras.layers.Flatten()(tf.ones(3)).shape == (3, 1)


def test_flatten_in_a_sequential_with_input_shape():
    model = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=(28, 28)), tf.keras.layers.Dense(128),
                                 tf.keras.layers.Dense(10)])
    lines = []
    model.summary(print_fn=lines.append)
    # 784*128 + 128 = 100480; 128*10 + 10 = 1290; the flattened shape is (None, 784).
    assert "(None, 784)" in lines[0] and "100,480" in lines[0] and "Total params: 101,770" in lines[0]


def test_a_sequential_built_by_its_first_call_shows_any_batch_size():
    model = tf.keras.Sequential([tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)])
    model(tf.ones((5, 2)))
    lines = []
    model.summary(print_fn=lines.append)
    # 2*3 + 3 = 9 and 3*1 + 1 = 4 weights.
    assert "(None, 3)" in lines[0] and "(None, 1)" in lines[0] and "Total params: 13 (52.00 B)" in lines[0]


@pytest.mark.parametrize("labels", [[1, 5], [1, -1], [1, 3]])
def test_sparse_crossentropy_of_probabilities_refuses_a_label_outside_the_classes(labels):
    # Keras on TF runs probabilities through the logits kernel too, which refuses such a label;
    # before, the bad sample counted as a loss of 0 and the mean was halved.
    logits = np.array([[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]], np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside the valid range of \\[0, 3\\)"):
        tf.keras.losses.SparseCategoricalCrossentropy()(np.array(labels), tf.nn.softmax(logits))
