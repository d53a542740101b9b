"""Arguments TensorFlow's tutorials pass that used to be refused: dtype rules, range, sliced assign, Keras."""
import numpy as np
import pytest

import autodiff_viz as tf


# -- dtypes: a Python number follows the other operand ----------------------------
def test_multiply_numpy_float64_by_a_python_int_gives_float64():
    # TF: tf.math.multiply(np.ones([3, 3]), 42) is a float64 tensor of 42s.
    y = tf.math.multiply(np.ones([3, 3]), 42)
    assert y.dtype == tf.float64
    np.testing.assert_array_equal(y.numpy(), np.full((3, 3), 42.0))


def test_convert_to_tensor_keeps_float64_arrays():
    assert tf.convert_to_tensor(np.ones(2)).dtype == tf.float64
    assert tf.convert_to_tensor([1.0, 2.0]).dtype == tf.float32  # Python floats: float32


def test_add_numpy_int_array_and_python_int_keeps_int64():
    y = tf.add(np.array([1, 2], dtype=np.int64), 3)
    assert y.dtype == tf.int64 and y.numpy().tolist() == [4, 5]


def test_a_python_float_into_a_numpy_int_array_is_refused():
    with pytest.raises(TypeError, match="Mul"):
        tf.math.multiply(np.array([1, 2]), 0.5)


# -- range: start + i * delta in the result's dtype ------------------------------
def test_float_range_length_and_values_are_start_plus_i_delta_in_float32():
    r = tf.range(-3, 3, 0.01)
    assert r.dtype == tf.float32 and r.shape == (600,)
    i = np.arange(600, dtype=np.float32)
    expected = np.float32(-3) + i * np.float32(0.01)  # closed form, in float32 as TF's kernel
    np.testing.assert_array_equal(r.numpy(), expected)
    assert abs(float(r[-1]) - 2.99) < 1e-6


def test_range_examples_of_the_tf_docs():
    # TF's docs: tf.range(3, 18, 3) -> [3, 6, 9, 12, 15]; tf.range(3, 1, -0.5) -> [3, 2.5, 2, 1.5]; tf.range(5).
    assert tf.range(3, 18, 3).numpy().tolist() == [3, 6, 9, 12, 15]
    assert tf.range(3, 1, -0.5).numpy().tolist() == [3.0, 2.5, 2.0, 1.5]
    assert tf.range(5).numpy().tolist() == [0, 1, 2, 3, 4]
    assert tf.range(0.0, 1.0, 0.25, dtype=tf.float64).numpy().tolist() == [0.0, 0.25, 0.5, 0.75]


# -- a variable's slices assign into the variable ----------------------------------
def test_sliced_assign_writes_into_the_variable():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    out = v[:].assign(tf.zeros((2, 2)))
    assert out is v and v.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    v[1].assign([7.0, 8.0])
    v[0, 1].assign(9.0)
    assert v.numpy().tolist() == [[0.0, 9.0], [7.0, 8.0]]


def test_a_slice_read_is_still_differentiable():
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v[1:] * 2.0)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [0.0, 2.0, 2.0])


def test_sliced_assign_of_the_wrong_shape_names_both_shapes():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        v[0].assign([1.0, 2.0, 3.0])
    assert v.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]


# -- Keras arguments -----------------------------------------------------------------
def _walkthrough_model():
    # The custom training walkthrough's model: 4 features, two hidden layers of 10, 3 classes.
    return tf.keras.Sequential([
        tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),
        tf.keras.layers.Dense(10, activation=tf.nn.relu),
        tf.keras.layers.Dense(3)])


def test_input_shape_builds_the_sequential_at_once():
    model = _walkthrough_model()
    assert [tuple(v.shape) for v in model.trainable_variables] == [(4, 10), (10,), (10, 10), (10,), (10, 3), (3,)]
    assert model(np.ones((5, 4), dtype=np.float32)).shape == (5, 3)


def test_sequential_summary_counts_weights_and_output_shapes():
    model = _walkthrough_model()
    lines = []
    model.summary(print_fn=lines.append)
    text = lines[0]
    # 4*10+10 = 50, 10*10+10 = 110, 10*3+3 = 33; 193 float32 weights are 772 bytes.
    for row in ("(None, 10)", "50 │", "110 │", "(None, 3)", "33 │", "Total params: 193 (772.00 B)",
                "Trainable params: 193 (772.00 B)", "Non-trainable params: 0 (0.00 B)"):
        assert row in text
    assert text.startswith(f'Model: "{model.name}"')


def test_training_reaches_only_the_layers_that_take_it():
    bn = tf.keras.layers.BatchNormalization()
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, kernel_initializer="ones"), bn])
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    y = model(x, training=True)
    # Batch statistics: each column of x @ ones is [3, 7], normalized to -+1 (variance 4, epsilon 1e-3).
    np.testing.assert_allclose(y.numpy(), [[-2 / np.sqrt(4.001)] * 2, [2 / np.sqrt(4.001)] * 2], rtol=1e-6)
    # Inference uses the moving statistics, moved once by 1 - momentum = 0.01: mean 0.05, variance 1.03.
    expected = (np.array([[3.0, 3.0], [7.0, 7.0]]) - 0.05) / np.sqrt(0.99 + 0.01 * 4.0 + 0.001)
    np.testing.assert_allclose(model(x, training=False).numpy(), expected, rtol=1e-5)


def test_a_model_may_be_named_empty_as_in_the_custom_layers_tutorial():
    class Block(tf.keras.Model):
        def __init__(self):
            super().__init__(name="")
            self.dense = tf.keras.layers.Dense(2)

        def call(self, x, training=False):
            return self.dense(x)

    block = Block()
    assert block.name == ""
    assert block(tf.ones((1, 3)), training=True).shape == (1, 2)
    assert len(block.variables) == 2


def test_bad_input_shape_is_refused():
    with pytest.raises(ValueError, match="input_shape"):
        tf.keras.layers.Dense(2, input_shape=(0,))


def test_the_customization_basics_tutorials_numpy_cells():
    # "Customization basics: tensors and operations": TF prints a float64 tensor of 42s, then 43s through NumPy.
    ndarray = np.ones([3, 3])
    tensor = tf.math.multiply(ndarray, 42)
    assert str(tensor) == ("ad.Tensor(\n[[42. 42. 42.]\n [42. 42. 42.]\n [42. 42. 42.]], shape=(3, 3), "
                           "dtype=float64)")
    np.testing.assert_array_equal(np.add(tensor, 1), np.full((3, 3), 43.0))
    assert tensor.numpy().dtype == np.float64
    x = tf.linalg.matmul([[1]], [[2, 3]])
    assert x.shape == (1, 2) and x.dtype == tf.int32


def test_a_numpy_scalar_keeps_its_dtype_as_in_tensorflow():
    # tf.constant(np.float64(2.0)).dtype is float64 in TF 2.x: a NumPy scalar is not a Python float there,
    # though np.float64 subclasses float; a Python float still gives float32, and an operand of a
    # float32 tensor still follows that tensor.
    assert tf.constant(np.float64(2.0)).dtype == tf.float64
    assert tf.convert_to_tensor(np.float64(2.0)).dtype == tf.float64
    assert tf.Variable(np.float64(1.5)).dtype == tf.float64
    assert tf.constant(np.complex128(1j)).dtype == tf.complex128
    assert tf.constant(2.0).dtype == tf.float32
    assert tf.constant(np.float64(2.0), dtype=tf.float32).dtype == tf.float32
    assert (tf.constant(1.0) * np.float64(2.0)).dtype == tf.float32
    x = tf.constant(np.float64(3.0))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x * x
    g = tape.gradient(y, x)
    assert g.dtype == tf.float64 and float(g) == 27.0  # 3x² at 3, exactly, in float64
