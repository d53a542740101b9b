"""Cells of TensorFlow's core guides beyond the five seed guides, run with ``import autodiff_viz as tf``.

Expected text is what TensorFlow printed in the guides as published on
tensorflow.org (TensorFlow basics, Introduction to tensors, Introduction to
variables, Modules layers and models, Basic training loops, Advanced
automatic differentiation), with our prefix ``ad.`` in place of ``tf.``.
A cell whose value the notebook shows without ``print`` is printed with
``repr`` (marked ``# shown``).  Cells drawing random numbers are checked for
what does not depend on them (shapes, names, closed forms).
"""
import numpy as np
import pytest

import autodiff_viz as ad
from _guide import expected, run


# --------------------------------------------------------------------------
# TensorFlow basics
# --------------------------------------------------------------------------
def test_basics_tensors_print_as_tf():
    out, _, ns = run("""
        x = tf.constant([[1., 2., 3.],
                         [4., 5., 6.]])
        print(x)
        print(x.shape)
        print(x.dtype)
        print(repr(x + x))  # shown
        print(repr(5 * x))  # shown
        print(repr(x @ tf.transpose(x)))  # shown
        print(repr(tf.reduce_sum(x)))  # shown
        print(repr(tf.convert_to_tensor([1,2,3])))  # shown
        print(repr(tf.reduce_sum([1,2,3])))  # shown
        s = tf.nn.softmax(x, axis=-1)
    """)
    assert out == expected("""
        tf.Tensor(
        [[1. 2. 3.]
         [4. 5. 6.]], shape=(2, 3), dtype=float32)
        (2, 3)
        <dtype: 'float32'>
        <ad.Tensor: shape=(2, 3), dtype=float32, numpy=
        array([[ 2.,  4.,  6.],
               [ 8., 10., 12.]], dtype=float32)>
        <ad.Tensor: shape=(2, 3), dtype=float32, numpy=
        array([[ 5., 10., 15.],
               [20., 25., 30.]], dtype=float32)>
        <ad.Tensor: shape=(2, 2), dtype=float32, numpy=
        array([[14., 32.],
               [32., 77.]], dtype=float32)>
        <ad.Tensor: shape=(), dtype=float32, numpy=21.0>
        <ad.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 3], dtype=int32)>
        <ad.Tensor: shape=(), dtype=int32, numpy=6>
    """)
    # The last digit of a float32 exp depends on the kernel: TF's printed numbers, to float32 tolerance.
    assert ns["s"].dtype == ad.float32
    np.testing.assert_allclose(ns["s"].numpy(), [[0.09003057, 0.24472848, 0.66524094]] * 2, rtol=2e-7)


def test_basics_concat():
    _, _, ns = run("""
        x = tf.constant([[1., 2., 3.], [4., 5., 6.]])
        y = tf.concat([x, x, x], axis=0)
    """)
    assert ns["y"].shape == (6, 3)
    np.testing.assert_array_equal(ns["y"].numpy(), [[1, 2, 3], [4, 5, 6]] * 3)


def test_basics_gpu_question_takes_the_cpu_branch_without_a_gpu():
    if ad.config._gpu_count():
        pytest.skip("this machine has a GPU that CuPy sees")
    out, _, _ = run("""
        if tf.config.list_physical_devices('GPU'):
          print("TensorFlow **IS** using the GPU")
        else:
          print("TensorFlow **IS NOT** using the GPU")
    """)
    assert out == "TensorFlow **IS NOT** using the GPU\n"


def test_basics_variables_and_gradient():
    out, _, ns = run("""
        var = tf.Variable([0.0, 0.0, 0.0])
        var.assign([1, 2, 3])
        print(var.numpy())
        var.assign_add([1, 1, 1])
        print(var.numpy())
        x = tf.Variable(1.0)
        def f(x):
          y = x**2 + 2*x - 5
          return y
        print(repr(f(x)))  # shown
        with tf.GradientTape() as tape:
          y = f(x)
        g_x = tape.gradient(y, x)  # g(x) = dy/dx
        print(repr(g_x))  # shown
    """)
    # The guide shows the assigned variables as [1., 2., 3.] and [2., 3., 4.].
    assert out == expected("""
        [1. 2. 3.]
        [2. 3. 4.]
        <ad.Tensor: shape=(), dtype=float32, numpy=-2.0>
        <ad.Tensor: shape=(), dtype=float32, numpy=4.0>
    """)


def test_basics_training_data_linspace_of_ints_is_float64_then_cast():
    _, _, ns = run("""
        x = tf.linspace(-2, 2, 201)
        dtype_before = x.dtype
        x = tf.cast(x, tf.float32)
        def f(x):
          y = x**2 + 2*x - 5
          return y
        y = f(x) + tf.random.normal(shape=[201])
    """)
    assert ns["dtype_before"] == ad.float64  # TF: integer ends give float64 (so the guide casts)
    assert ns["x"].dtype == ad.float32 and ns["y"].shape == (201,)
    np.testing.assert_allclose(ns["x"].numpy()[[0, 100, 200]], [-2.0, 0.0, 2.0])


def test_linspace_of_ints_prints_as_tf():
    out, _, _ = run("""
        print(tf.linspace(0, 100, 5))
        print(repr(tf.linspace([0., 5.], [10., 40.], 5, axis=-1)))  # tf.linspace's docstring
    """)
    assert out == expected("""
        tf.Tensor([  0.  25.  50.  75. 100.], shape=(5,), dtype=float64)
        <ad.Tensor: shape=(2, 5), dtype=float32, numpy=
        array([[ 0.  ,  2.5 ,  5.  ,  7.5 , 10.  ],
               [ 5.  , 13.75, 22.5 , 31.25, 40.  ]], dtype=float32)>
    """)


# --------------------------------------------------------------------------
# Introduction to tensors
# --------------------------------------------------------------------------
def test_tensors_ranks_print_as_tf():
    out, _, ns = run("""
        rank_0_tensor = tf.constant(4)
        print(rank_0_tensor)
        rank_1_tensor = tf.constant([2.0, 3.0, 4.0])
        print(rank_1_tensor)
        rank_2_tensor = tf.constant([[1, 2],
                                     [3, 4],
                                     [5, 6]], dtype=tf.float16)
        print(rank_2_tensor)
        rank_3_tensor = tf.constant([
          [[0, 1, 2, 3, 4],
           [5, 6, 7, 8, 9]],
          [[10, 11, 12, 13, 14],
           [15, 16, 17, 18, 19]],
          [[20, 21, 22, 23, 24],
           [25, 26, 27, 28, 29]],])
        print(rank_3_tensor)
        print(repr(np.array(rank_2_tensor)))  # shown
    """)
    assert out == expected("""
        tf.Tensor(4, shape=(), dtype=int32)
        tf.Tensor([2. 3. 4.], shape=(3,), dtype=float32)
        tf.Tensor(
        [[1. 2.]
         [3. 4.]
         [5. 6.]], shape=(3, 2), dtype=float16)
        tf.Tensor(
        [[[ 0  1  2  3  4]
          [ 5  6  7  8  9]]

         [[10 11 12 13 14]
          [15 16 17 18 19]]

         [[20 21 22 23 24]
          [25 26 27 28 29]]], shape=(3, 2, 5), dtype=int32)
        array([[1., 2.],
               [3., 4.],
               [5., 6.]], dtype=float16)
    """)


def test_tensors_basic_math_on_ints():
    out, _, _ = run("""
        a = tf.constant([[1, 2],
                         [3, 4]])
        b = tf.constant([[1, 1],
                         [1, 1]])
        print(tf.add(a, b), "\\n")
        print(tf.multiply(a, b), "\\n")
        print(tf.matmul(a, b), "\\n")
        print(a @ b, "\\n")
    """)
    add = "ad.Tensor(\n[[2 3]\n [4 5]], shape=(2, 2), dtype=int32) \n\n"
    mul = "ad.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32) \n\n"
    matmul = "ad.Tensor(\n[[3 3]\n [7 7]], shape=(2, 2), dtype=int32) \n\n"
    assert out == add + mul + matmul + matmul


def test_tensors_ops_reduce_max_argmax_softmax():
    out, _, ns = run("""
        c = tf.constant([[4.0, 5.0], [10.0, 1.0]])
        print(tf.reduce_max(c))
        print(tf.math.argmax(c))
        print(repr(tf.reduce_max([1,2,3])))  # shown
        print(repr(tf.reduce_max(np.array([1,2,3]))))  # shown
        s = tf.nn.softmax(c)
    """)
    assert out == expected("""
        tf.Tensor(10.0, shape=(), dtype=float32)
        tf.Tensor([1 0], shape=(2,), dtype=int64)
        <ad.Tensor: shape=(), dtype=int32, numpy=3>
        <ad.Tensor: shape=(), dtype=int64, numpy=3>
    """)
    # TF printed [[2.6894143e-01 7.3105854e-01] [9.9987662e-01 1.2339458e-04]] (its GPU's exp).
    np.testing.assert_allclose(ns["s"].numpy(), [[2.6894143e-01, 7.3105854e-01], [9.9987662e-01, 1.2339458e-04]],
                               rtol=2e-7)


def test_tensors_about_shapes():
    out, _, _ = run("""
        rank_4_tensor = tf.zeros([3, 2, 4, 5])
        print("Type of every element:", rank_4_tensor.dtype)
        print("Number of axes:", rank_4_tensor.ndim)
        print("Shape of tensor:", rank_4_tensor.shape)
        print("Elements along axis 0 of tensor:", rank_4_tensor.shape[0])
        print("Elements along the last axis of tensor:", rank_4_tensor.shape[-1])
        print("Total number of elements (3*2*4*5): ", tf.size(rank_4_tensor).numpy())
        print(repr(tf.rank(rank_4_tensor)))  # shown
        print(repr(tf.shape(rank_4_tensor)))  # shown
    """)
    assert out == expected("""
        Type of every element: <dtype: 'float32'>
        Number of axes: 4
        Shape of tensor: (3, 2, 4, 5)
        Elements along axis 0 of tensor: 3
        Elements along the last axis of tensor: 5
        Total number of elements (3*2*4*5):  120
        <ad.Tensor: shape=(), dtype=int32, numpy=4>
        <ad.Tensor: shape=(4,), dtype=int32, numpy=array([3, 2, 4, 5], dtype=int32)>
    """)


def test_tensors_indexing():
    out, _, _ = run("""
        rank_1_tensor = tf.constant([0, 1, 1, 2, 3, 5, 8, 13, 21, 34])
        print("First:", rank_1_tensor[0].numpy())
        print("Last:", rank_1_tensor[-1].numpy())
        print("Before 4:", rank_1_tensor[:4].numpy())
        print("Every other item:", rank_1_tensor[::2].numpy())
        print("Reversed:", rank_1_tensor[::-1].numpy())
        rank_2_tensor = tf.constant([[1, 2], [3, 4], [5, 6]], dtype=tf.float16)
        print(rank_2_tensor[1, 1].numpy())
        print("Second column:", rank_2_tensor[:, 1].numpy())
        print("First item in last column:", rank_2_tensor[0, -1].numpy())
        rank_3_tensor = tf.reshape(tf.range(30), [3, 2, 5])
        print(rank_3_tensor[:, :, 4])
    """)
    assert out == expected("""
        First: 0
        Last: 34
        Before 4: [0 1 1 2]
        Every other item: [ 0  1  3  8 21]
        Reversed: [34 21 13  8  5  3  2  1  1  0]
        4.0
        Second column: [2. 4. 6.]
        First item in last column: 2.0
        tf.Tensor(
        [[ 4  9]
         [14 19]
         [24 29]], shape=(3, 2), dtype=int32)
    """)


def test_tensors_manipulating_shapes():
    out, _, _ = run("""
        x = tf.constant([[1], [2], [3]])
        print(x.shape)
        print(x.shape.as_list())
        reshaped = tf.reshape(x, [1, 3])
        print(reshaped.shape)
        rank_3_tensor = tf.reshape(tf.range(30), [3, 2, 5])
        print(tf.reshape(rank_3_tensor, [-1]))
        print(tf.reshape(rank_3_tensor, [3, -1]))
        try:
          tf.reshape(rank_3_tensor, [7, -1])
        except Exception as e:
          print(f"{type(e).__name__}: {e}")
    """)
    lines = out.splitlines()
    assert lines[:3] == ["(3, 1)", "[3, 1]", "(1, 3)"]
    assert "\n".join(lines[3:10]) == expected("""
        tf.Tensor(
        [ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
         24 25 26 27 28 29], shape=(30,), dtype=int32)
        tf.Tensor(
        [[ 0  1  2  3  4  5  6  7  8  9]
         [10 11 12 13 14 15 16 17 18 19]
         [20 21 22 23 24 25 26 27 28 29]], shape=(3, 10), dtype=int32)
    """).rstrip("\n")
    # TF: "InvalidArgumentError: ... Input to reshape is a tensor with 30 values, but the requested
    # shape requires a multiple of 7 [Op:Reshape]"
    assert lines[10].startswith("InvalidArgumentError: Reshape: input to reshape is a tensor with 30 values")
    assert "requires a multiple of 7" in lines[10]


def test_tensors_dtypes_broadcasting_and_ragged_refusal():
    out, _, _ = run("""
        the_f64_tensor = tf.constant([2.2, 3.3, 4.4], dtype=tf.float64)
        the_f16_tensor = tf.cast(the_f64_tensor, dtype=tf.float16)
        the_u8_tensor = tf.cast(the_f16_tensor, dtype=tf.uint8)
        print(the_u8_tensor)
        x = tf.constant([1, 2, 3])
        y = tf.constant(2)
        z = tf.constant([2, 2, 2])
        print(tf.multiply(x, 2))
        print(x * y)
        print(x * z)
        x = tf.reshape(x,[3,1])
        y = tf.range(1, 5)
        print(tf.multiply(x, y))
        print(tf.broadcast_to(tf.constant([1, 2, 3]), [3, 3]))
        try:
          tensor = tf.constant([[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]])
        except Exception as e:
          print(f"{type(e).__name__}")
    """)
    assert out == expected("""
        tf.Tensor([2 3 4], shape=(3,), dtype=uint8)
        tf.Tensor([2 4 6], shape=(3,), dtype=int32)
        tf.Tensor([2 4 6], shape=(3,), dtype=int32)
        tf.Tensor([2 4 6], shape=(3,), dtype=int32)
        tf.Tensor(
        [[ 1  2  3  4]
         [ 2  4  6  8]
         [ 3  6  9 12]], shape=(3, 4), dtype=int32)
        tf.Tensor(
        [[1 2 3]
         [1 2 3]
         [1 2 3]], shape=(3, 3), dtype=int32)
        ValueError
    """)


# --------------------------------------------------------------------------
# Introduction to variables
# --------------------------------------------------------------------------
def test_variables_print_as_tf():
    out, _, ns = run("""
        my_tensor = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        my_variable = tf.Variable(my_tensor)
        bool_variable = tf.Variable([False, False, False, True])
        complex_variable = tf.Variable([5 + 4j, 6 + 1j])
        print("Shape: ", my_variable.shape)
        print("DType: ", my_variable.dtype)
        print("As NumPy: ", my_variable.numpy())
        print("A variable:", my_variable)
        print("\\nViewed as a tensor:", tf.convert_to_tensor(my_variable))
        print("\\nIndex of highest value:", tf.math.argmax(my_variable))
        print("\\nCopying and reshaping: ", tf.reshape(my_variable, [1,4]))
    """)
    assert out == expected("""
        Shape:  (2, 2)
        DType:  <dtype: 'float32'>
        As NumPy:  [[1. 2.]
         [3. 4.]]
        A variable: <tf.Variable 'Variable:0' shape=(2, 2) dtype=float32, numpy=
        array([[1., 2.],
               [3., 4.]], dtype=float32)>

        Viewed as a tensor: tf.Tensor(
        [[1. 2.]
         [3. 4.]], shape=(2, 2), dtype=float32)

        Index of highest value: tf.Tensor([1 1], shape=(2,), dtype=int64)

        Copying and reshaping:  tf.Tensor([[1. 2. 3. 4.]], shape=(1, 4), dtype=float32)
    """).replace("<tf.Variable", "<ad.Variable")
    assert ns["complex_variable"].dtype == ad.complex128 and ns["bool_variable"].dtype == ad.bool


def test_variables_assign_copies_and_shape_error():
    out, _, _ = run("""
        a = tf.Variable([2.0, 3.0])
        a.assign([1, 2])
        try:
          a.assign([1.0, 2.0, 3.0])
        except Exception as e:
          print(f"{type(e).__name__}")
        a = tf.Variable([2.0, 3.0])
        b = tf.Variable(a)
        a.assign([5, 6])
        print(a.numpy())
        print(b.numpy())
        print(a.assign_add([2,3]).numpy())  # [7. 9.]
        print(a.assign_sub([7,9]).numpy())  # [0. 0.]
        step_counter = tf.Variable(1, trainable=False)
        print(step_counter.trainable)
    """)
    assert out == "ValueError\n[5. 6.]\n[2. 3.]\n[7. 9.]\n[0. 0.]\nFalse\n"


def test_variables_device_placement_block_runs():
    out, _, _ = run("""
        with tf.device('CPU:0'):
          a = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
          b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
          c = tf.matmul(a, b)
        print(c)
    """)
    assert out == expected("""
        tf.Tensor(
        [[22. 28.]
         [49. 64.]], shape=(2, 2), dtype=float32)
    """)


# --------------------------------------------------------------------------
# Introduction to modules, layers, and models
# --------------------------------------------------------------------------
def test_modules_simple_module():
    out, _, _ = run("""
        class SimpleModule(tf.Module):
          def __init__(self, name=None):
            super().__init__(name=name)
            self.a_variable = tf.Variable(5.0, name="train_me")
            self.non_trainable_variable = tf.Variable(5.0, trainable=False, name="do_not_train_me")
          def __call__(self, x):
            return self.a_variable * x + self.non_trainable_variable

        simple_module = SimpleModule(name="simple")
        print(repr(simple_module(tf.constant(5.0))))  # shown
        print("trainable variables:", simple_module.trainable_variables)
        print("all variables:", simple_module.variables)
    """)
    assert out == expected("""
        <ad.Tensor: shape=(), dtype=float32, numpy=30.0>
        trainable variables: (<tf.Variable 'train_me:0' shape=() dtype=float32, numpy=5.0>,)
        all variables: (<tf.Variable 'train_me:0' shape=() dtype=float32, numpy=5.0>, <tf.Variable 'do_not_train_me:0' shape=() dtype=float32, numpy=5.0>)
    """).replace("<tf.Variable", "<ad.Variable")


def test_modules_keras_layer_with_build_step():
    out, _, ns = run("""
        class FlexibleDense(tf.keras.layers.Layer):
          def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

          def build(self, input_shape):
            self.w = tf.Variable(
              tf.random.normal([input_shape[-1], self.out_features]), name='w')
            self.b = tf.Variable(tf.zeros([self.out_features]), name='b')

          def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

        flexible_dense = FlexibleDense(out_features=3)
        print(flexible_dense.variables)
        y = flexible_dense(tf.constant([[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]))
        try:
          print("Model results:", flexible_dense(tf.constant([[2.0, 2.0, 2.0, 2.0]])))
        except tf.errors.InvalidArgumentError as e:
          print("Failed:", type(e).__name__)
    """)
    assert out == "[]\nFailed: InvalidArgumentError\n"
    layer = ns["flexible_dense"]
    # The guide lists 'flexible_dense/w:0' (3, 3), then 'flexible_dense/b:0' (3,) with zeros: assignment order.
    assert [(v.name, v.shape) for v in layer.variables] == [(f"{layer.name}/w:0", (3, 3)), (f"{layer.name}/b:0", (3,))]
    assert str(layer.variables[1]).endswith("numpy=array([0., 0., 0.], dtype=float32)>")
    w = layer.variables[0].numpy()
    np.testing.assert_allclose(ns["y"].numpy(), [[2.0] * 3, [3.0] * 3] @ w, rtol=1e-6)


def test_modules_keras_model_subclass():
    out, _, ns = run("""
        class FlexibleDense(tf.keras.layers.Layer):
          def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features
          def build(self, input_shape):
            self.w = tf.Variable(tf.random.normal([input_shape[-1], self.out_features]), name='w')
            self.b = tf.Variable(tf.zeros([self.out_features]), name='b')
          def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

        class MySequentialModel(tf.keras.Model):
          def __init__(self, name=None, **kwargs):
            super().__init__(**kwargs)
            self.dense_1 = FlexibleDense(out_features=3)
            self.dense_2 = FlexibleDense(out_features=2)
          def call(self, x):
            x = self.dense_1(x)
            return self.dense_2(x)

        my_sequential_model = MySequentialModel(name="the_model")
        result = my_sequential_model(tf.constant([[2.0, 2.0, 2.0]]))
        print(result.shape)
        print([v.shape.as_list() for v in my_sequential_model.variables])
        print(len(my_sequential_model.submodules), my_sequential_model.layers == [my_sequential_model.dense_1, my_sequential_model.dense_2])
    """)
    assert out == "(1, 2)\n[[3, 3], [3], [3, 2], [2]]\n2 True\n"


# --------------------------------------------------------------------------
# Basic training loops: the report line formats tensors with a spec
# --------------------------------------------------------------------------
def test_training_loop_report_formats_tensors_and_variables():
    out, _, ns = run("""
        TRUE_W = 3.0
        TRUE_B = 2.0
        NUM_EXAMPLES = 201
        x = tf.linspace(-2,2, NUM_EXAMPLES)
        x = tf.cast(x, tf.float32)
        def f(x):
          return x * TRUE_W + TRUE_B
        y = f(x)  # the guide adds noise; without it the loss falls to zero

        class MyModel(tf.Module):
          def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)
          def __call__(self, x):
            return self.w * x + self.b

        model = MyModel()
        print("Variables:", model.variables)
        assert model(3.0).numpy() == 15.0

        def loss(target_y, predicted_y):
          return tf.reduce_mean(tf.square(target_y - predicted_y))

        def train(model, x, y, learning_rate):
          with tf.GradientTape() as t:
            current_loss = loss(y, model(x))
          dw, db = t.gradient(current_loss, [model.w, model.b])
          model.w.assign_sub(learning_rate * dw)
          model.b.assign_sub(learning_rate * db)

        def report(model, loss):
          return f"W = {model.w.numpy():1.2f}, b = {model.b.numpy():1.2f}, loss={loss:2.5f}"

        current_loss = loss(y, model(x))
        print(f"Starting:")
        print("    ", report(model, current_loss))
        for epoch in range(10):
          train(model, x, y, learning_rate=0.1)
        print(f"W = {model.w:1.2f}, b = {model.b:1.2f}")
    """)
    lines = out.splitlines()
    assert lines[0] == ("Variables: (<ad.Variable 'Variable:0' shape=() dtype=float32, numpy=0.0>, "
                        "<ad.Variable 'Variable:0' shape=() dtype=float32, numpy=5.0>)")
    # Closed form: the mean of (2x + -2)^2 over the grid; x^2 averages 1.34 on 201 points from -2 to 2.
    xs = np.linspace(-2, 2, 201)
    start = np.mean((5 * xs - (3 * xs + 2)) ** 2)
    assert lines[1:3] == ["Starting:", f"     W = 5.00, b = 0.00, loss={start:2.5f}"]
    w, b = 5.0, 0.0
    for _ in range(10):  # the same ten steps of gradient descent, in float64
        r = w * xs + b - (3 * xs + 2)
        w, b = w - 0.1 * np.mean(2 * r * xs), b - 0.1 * np.mean(2 * r)
    assert lines[3] == f"W = {w:1.2f}, b = {b:1.2f}"


# --------------------------------------------------------------------------
# Advanced automatic differentiation
# --------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["stop_recording", "reset", "stop_gradient"])
def test_advanced_controlling_recording(how):
    body = {
        "stop_recording": """
            x_sq = x * x
            with t.stop_recording():
              y_sq = y * y
            z = x_sq + y_sq""",
        "reset": """
            y_sq = y * y
            t.reset()
            z = x * x + y_sq""",
        "stop_gradient": """
            y_sq = y**2
            z = x**2 + tf.stop_gradient(y_sq)""",
    }[how]
    out, _, _ = run("""
        x = tf.Variable(2.0)
        y = tf.Variable(3.0)
        with tf.GradientTape() as t:""" + body.replace("\n            ", "\n          ") + """
        grad = t.gradient(z, {'x': x, 'y': y})
        print('dz/dx:', grad['x'])  # 2*x => 4
        print('dz/dy:', grad['y'])
    """)
    assert out == expected("""
        dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)
        dz/dy: None
    """)


def test_advanced_custom_gradient_clip_and_multiple_tapes():
    out, _, _ = run("""
        @tf.custom_gradient
        def clip_gradients(y):
          def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
          return y, backward

        v = tf.Variable(2.0)
        with tf.GradientTape() as t:
          output = clip_gradients(v * v)
        print(t.gradient(output, v))  # calls "backward", which clips 4 to 2

        x0 = tf.constant(0.0)
        x1 = tf.constant(0.0)
        with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
          tape0.watch(x0)
          tape1.watch(x1)
          y0 = tf.math.sin(x0)
          y1 = tf.nn.sigmoid(x1)
          y = y0 + y1
          ys = tf.reduce_sum(y)
        print(tape0.gradient(ys, x0).numpy())
        print(tape1.gradient(ys, x1).numpy())

        x = tf.Variable(1.0)
        with tf.GradientTape() as t2:
          with tf.GradientTape() as t1:
            y = x * x * x
          dy_dx = t1.gradient(y, x)
        d2y_dx2 = t2.gradient(dy_dx, x)
        print('dy_dx:', dy_dx.numpy())
        print('d2y_dx2:', d2y_dx2.numpy())
    """)
    assert out == expected("""
        tf.Tensor(2.0, shape=(), dtype=float32)
        1.0
        0.25
        dy_dx: 3.0
        d2y_dx2: 6.0
    """)


def test_advanced_input_gradient_regularization_uses_norm():
    out, _, ns = run("""
        x = tf.random.normal([7, 5])
        layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
        with tf.GradientTape() as t2:
          with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x)**2)
          g1 = t1.gradient(out, x)
          g1_mag = tf.norm(g1)
        dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
        print([var.shape for var in dg1_mag])
    """)
    assert out == "[TensorShape([5, 10]), TensorShape([10])]\n"
    np.testing.assert_allclose(float(ns["g1_mag"]), np.sqrt(np.sum(ns["g1"].numpy() ** 2)), rtol=1e-6)


def test_advanced_jacobians_shapes():
    out, _, ns = run("""
        x = tf.linspace(-10.0, 10.0, 200+1)
        delta = tf.Variable(0.0)
        with tf.GradientTape() as tape:
          y = tf.nn.sigmoid(x+delta)
        dy_dx = tape.jacobian(y, delta)
        print(y.shape)
        print(dy_dx.shape)

        x = tf.random.normal([7, 5])
        layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
        with tf.GradientTape(persistent=True) as tape:
          y = layer(x)
        print(repr(y.shape))  # shown
        print(repr(layer.kernel.shape))  # shown
        j = tape.jacobian(y, layer.kernel)
        print(repr(j.shape))  # shown
        g = tape.gradient(y, layer.kernel)
        print('g.shape:', g.shape)
        j_sum = tf.reduce_sum(j, axis=[0, 1])
        delta = tf.reduce_max(abs(g - j_sum)).numpy()
        assert delta < 1e-3
    """)
    assert out == "(201,)\n(201,)\nTensorShape([7, 10])\nTensorShape([5, 10])\nTensorShape([7, 10, 5, 10])\ng.shape: (5, 10)\n"
    s = 1 / (1 + np.exp(-np.linspace(-10, 10, 201)))
    np.testing.assert_allclose(ns["dy_dx"].numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)


def test_advanced_hessian_and_newton_step():
    out, _, ns = run("""
        x = tf.random.normal([7, 5])
        layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
        layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
        with tf.GradientTape() as t2:
          with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)
          g = t1.gradient(loss, layer1.kernel)
        h = t2.jacobian(g, layer1.kernel)
        print(f'layer.kernel.shape: {layer1.kernel.shape}')
        print(f'h.shape: {h.shape}')
        n_params = tf.reduce_prod(layer1.kernel.shape)
        g_vec = tf.reshape(g, [n_params, 1])
        h_mat = tf.reshape(h, [n_params, n_params])
        eps = 1e-3
        eye_eps = tf.eye(h_mat.shape[0])*eps
        update = tf.linalg.solve(h_mat + eye_eps, g_vec)
        before = layer1.kernel.numpy()
        _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
    """)
    assert out == "layer.kernel.shape: (5, 8)\nh.shape: (5, 8, 5, 8)\n"
    h_mat = ns["h_mat"].numpy()
    np.testing.assert_allclose(h_mat, h_mat.T, atol=1e-5)  # "The Hessian matrix should be symmetric"
    assert int(ns["n_params"]) == 40 and ns["n_params"].dtype == ad.int32
    expected_update = np.linalg.solve(h_mat.astype(np.float64) + 1e-3 * np.eye(40), ns["g_vec"].numpy())
    np.testing.assert_allclose(ns["before"] - ns["layer1"].kernel.numpy(), expected_update.reshape(5, 8),
                               rtol=1e-3, atol=1e-5)


def test_advanced_batch_jacobian_with_einsum_diagonal_and_pad():
    out, _, ns = run("""
        x = tf.random.normal([7, 5])
        layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
        layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
          tape.watch(x)
          y = layer1(x)
          y = layer2(y)
        print(repr(y.shape))  # shown
        j = tape.jacobian(y, x)
        print(repr(j.shape))  # shown
        t = tf.transpose(j, [1, 0, 3, 2])
        lim = tf.reduce_max(abs(t))
        t = tf.pad(t, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
        s = t.shape
        patches = tf.reshape(t, [s[0]*s[1], s[2]*s[3]])
        j_sum = tf.reduce_sum(j, axis=2)
        print(j_sum.shape)
        j_select = tf.einsum('bxby->bxy', j)
        print(j_select.shape)
        jb = tape.batch_jacobian(y, x)
        print(repr(jb.shape))  # shown
        error = tf.reduce_max(abs(jb - j_sum))
        assert error < 1e-3
        print(error.numpy())
    """)
    assert out == "TensorShape([7, 6])\nTensorShape([7, 6, 7, 5])\n(7, 6, 5)\n(7, 6, 5)\nTensorShape([7, 6, 5])\n0.0\n"
    np.testing.assert_array_equal(ns["j_select"].numpy(), ns["jb"].numpy())
    assert ns["patches"].shape == (6 * 9, 5 * 9)  # (6, 7+2, 5, 7+2) after padding


def test_advanced_batch_jacobian_through_batch_normalization():
    out, _, _ = run("""
        x = tf.random.normal([7, 5])
        layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
        bn = tf.keras.layers.BatchNormalization()
        layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
          tape.watch(x)
          y = layer1(x)
          y = bn(y, training=True)
          y = layer2(y)
        j = tape.jacobian(y, x)
        print(f'j.shape: {j.shape}')
        jb = tape.batch_jacobian(y, x)
        print(f'jb.shape: {jb.shape}')
    """)
    assert out == "j.shape: (7, 6, 7, 5)\njb.shape: (7, 6, 5)\n"


# --------------------------------------------------------------------------
# Logistic regression and multilayer perceptrons with Core APIs.  Their printed
# numbers come from datasets that are not here (UCI breast cancer, MNIST), so the
# guides' code runs on small data with known answers: the guides' own formulas.
# --------------------------------------------------------------------------
def test_logistic_regression_core_guide_code():
    out, _, ns = run("""
        rng = np.random.default_rng(0)
        y_np = rng.integers(0, 2, size=64).astype(np.float32)
        x_np = rng.normal(size=(64, 3)) * [1.0, 5.0, 0.2] + [0.0, 10.0, -1.0]
        x_np[:, 0] = (2 * y_np - 1) * (1.0 + np.abs(x_np[:, 0]))  # separable, with a margin
        x_train, y_train = tf.convert_to_tensor(x_np, dtype=tf.float32), tf.convert_to_tensor(y_np, dtype=tf.float32)

        class Normalize(tf.Module):
          def __init__(self, x):
            self.mean = tf.Variable(tf.math.reduce_mean(x, axis=0))
            self.std = tf.Variable(tf.math.reduce_std(x, axis=0))
          def norm(self, x):
            return (x - self.mean)/self.std
          def unnorm(self, x):
            return (x * self.std) + self.mean

        norm_x = Normalize(x_train)
        x_train_norm = norm_x.norm(x_train)

        def log_loss(y_pred, y):
          ce = tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=y_pred)
          return tf.reduce_mean(ce)

        class LogisticRegression(tf.Module):
          def __init__(self):
            self.built = False
          def __call__(self, x, train=True):
            if not self.built:
              rand_w = tf.random.uniform(shape=[x.shape[-1], 1], seed=22)
              rand_b = tf.random.uniform(shape=[], seed=22)
              self.w = tf.Variable(rand_w)
              self.b = tf.Variable(rand_b)
              self.built = True
            z = tf.add(tf.matmul(x, self.w), self.b)
            z = tf.squeeze(z, axis=1)
            if train:
              return z
            return tf.sigmoid(z)

        log_reg = LogisticRegression()
        y_pred = log_reg(x_train_norm[:5], train=False)

        def predict_class(y_pred, thresh=0.5):
          return tf.cast(y_pred > thresh, tf.float32)

        def accuracy(y_pred, y):
          y_pred = tf.math.sigmoid(y_pred)
          y_pred_class = predict_class(y_pred)
          check_equal = tf.cast(y_pred_class == y,tf.float32)
          acc_val = tf.reduce_mean(check_equal)
          return acc_val

        with tf.GradientTape() as tape:
          first_loss = log_loss(log_reg(x_train_norm), y_train)
        grads = tape.gradient(first_loss, log_reg.variables)
        w0, b0 = log_reg.w.numpy(), log_reg.b.numpy()

        train_dataset = tf.data.Dataset.from_tensor_slices((x_train_norm, y_train))
        train_dataset = train_dataset.shuffle(buffer_size=x_train.shape[0]).batch(16)
        learning_rate = 0.5
        for epoch in range(60):
          for x_batch, y_batch in train_dataset:
            with tf.GradientTape() as tape:
              batch_loss = log_loss(log_reg(x_batch), y_batch)
            grads_b = tape.gradient(batch_loss, log_reg.variables)
            for g, v in zip(grads_b, log_reg.variables):
              v.assign_sub(learning_rate * g)
        train_acc = accuracy(log_reg(x_train_norm), y_train)
        print(f"Training accuracy: {train_acc:.3f}")
    """)
    x_norm = ns["x_train_norm"].numpy()
    np.testing.assert_allclose(x_norm.mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(x_norm.std(axis=0), 1.0, rtol=1e-5)  # reduce_std: the population std, as NumPy's
    assert np.all((ns["y_pred"].numpy() > 0) & (ns["y_pred"].numpy() < 1))  # "values in the range of (0, 1)"
    # The guide's gradient: dL/dw = (sigma(Xw + b) - y) X / m and dL/db = mean(sigma(Xw + b) - y).
    residual = 1 / (1 + np.exp(-(x_norm @ ns["w0"] + ns["b0"]).ravel())) - ns["y_np"]
    db, dw = ns["grads"]  # variables in attribute order, as tf.Module: b, then w
    np.testing.assert_allclose(dw.numpy().ravel(), x_norm.T @ residual / 64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(db), residual.mean(), rtol=1e-5, atol=1e-6)
    assert out == "Training accuracy: 1.000\n"  # the classes are linearly separable


def test_mlp_core_guide_code():
    out, _, ns = run("""
        def preprocess(x, y):
          x = tf.reshape(x, shape=[-1, 784])
          x = x/255
          return x, y

        rng = np.random.default_rng(1)
        images = tf.constant(rng.integers(0, 256, size=(6, 28, 28)), dtype=tf.uint8)
        labels = tf.constant([0, 1, 2, 1, 0, 2], dtype=tf.int64)
        x, y = preprocess(images, labels)
        print(x.dtype, x.shape)

        def xavier_init(shape):
          in_dim, out_dim = shape
          xavier_lim = tf.sqrt(6.)/tf.sqrt(tf.cast(in_dim + out_dim, tf.float32))
          weight_vals = tf.random.uniform(shape=(in_dim, out_dim),
                                          minval=-xavier_lim, maxval=xavier_lim, seed=22)
          return weight_vals

        class DenseLayer(tf.Module):
          def __init__(self, out_dim, weight_init=xavier_init, activation=tf.identity):
            self.out_dim = out_dim
            self.weight_init = weight_init
            self.activation = activation
            self.built = False
          def __call__(self, x):
            if not self.built:
              self.in_dim = x.shape[1]
              self.w = tf.Variable(self.weight_init(shape=(self.in_dim, self.out_dim)))
              self.b = tf.Variable(tf.zeros(shape=(self.out_dim,)))
              self.built = True
            z = tf.add(tf.matmul(x, self.w), self.b)
            return self.activation(z)

        class MLP(tf.Module):
          def __init__(self, layers):
            self.layers = layers
          @tf.function
          def __call__(self, x, preds=False):
            for layer in self.layers:
              x = layer(x)
            return x

        mlp_model = MLP([DenseLayer(out_dim=16, activation=tf.nn.relu), DenseLayer(out_dim=3)])

        def cross_entropy_loss(y_pred, y):
          sparse_ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=y_pred)
          return tf.reduce_mean(sparse_ce)

        def accuracy(y_pred, y):
          class_preds = tf.argmax(tf.nn.softmax(y_pred), axis=1)
          is_equal = tf.equal(y, class_preds)
          return tf.reduce_mean(tf.cast(is_equal, tf.float32))

        with tf.GradientTape() as tape:
          logits = mlp_model(x)
          loss = cross_entropy_loss(logits, y)
        grads = tape.gradient(loss, logits)
        acc = accuracy(logits, y)
        print(len(mlp_model.trainable_variables), [v.shape.as_list() for v in mlp_model.trainable_variables])
    """)
    assert out == "<dtype: 'float32'> (6, 784)\n4 [[16], [784, 16], [3], [16, 3]]\n"
    lim = np.sqrt(6.0) / np.sqrt(784 + 16)
    w1 = ns["mlp_model"].layers[0].w.numpy()
    assert w1.dtype == np.float32 and np.all(np.abs(w1) <= lim)
    logits = ns["logits"].numpy().astype(np.float64)
    soft = np.exp(logits - logits.max(axis=1, keepdims=True))
    soft /= soft.sum(axis=1, keepdims=True)
    onehot = np.eye(3)[[0, 1, 2, 1, 0, 2]]
    np.testing.assert_allclose(float(ns["loss"]), -np.mean(np.log(np.sum(soft * onehot, axis=1))), rtol=1e-5)
    np.testing.assert_allclose(ns["grads"].numpy(), (soft - onehot) / 6, rtol=1e-4, atol=1e-7)  # softmax - onehot
    assert float(ns["acc"]) == pytest.approx(np.mean(np.argmax(logits, axis=1) == [0, 1, 2, 1, 0, 2]))
