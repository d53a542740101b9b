"""tf.function as TensorFlow runs it with run_functions_eagerly(True): the Python function, called, its ops seen."""
import numpy as np
import pytest

import autodiff_viz as tf


def test_the_decorator_with_and_without_arguments_calls_the_function():
    @tf.function
    def plain(x):
        return x * x

    @tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)], reduce_retracing=True,
                 jit_compile=True)
    def signed(x):
        return tf.reduce_sum(x) + 1.0

    assert float(plain(tf.constant(3.0))) == 9.0
    assert float(signed(tf.constant([1.0, 2.0]))) == 4.0
    assert signed.input_signature[0].shape == (None,)
    assert plain.python_function(2) == 4 and plain.__name__ == "plain"


def test_a_tape_sees_the_ops_inside():
    @tf.function
    def f(x):
        if x > 0:  # Python control flow stays Python
            return tf.sin(x) * x
        return -x

    x = tf.constant(0.5)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(float(tape.gradient(y, x)), np.cos(0.5) * 0.5 + np.sin(0.5), rtol=1e-6)


def test_a_trace_records_each_op_of_the_function():
    @tf.function
    def f(x):
        return tf.exp(x) + x

    with tf.trace() as tr, tf.GradientTape() as tape:
        x = tf.constant(1.0)
        tape.watch(x)
        f(x)
    types = [e.op_type for e in tr.events if e.kind == "op"]
    assert types == ["Exp", "Add"]


def test_a_module_with_a_decorated_call_as_in_the_core_quickstart():
    class Linear(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(2.0)
            self.b = tf.Variable(1.0)

        @tf.function
        def __call__(self, x):
            return self.w * x + self.b

    model = Linear()
    with tf.GradientTape() as tape:
        y = model(tf.constant(3.0))
    gw, gb = tape.gradient(y, [model.w, model.b])
    assert float(y) == 7.0 and float(gw) == 3.0 and float(gb) == 1.0
    assert isinstance(Linear.__call__, tf.Function)


def test_a_keras_model_call_decorated():
    class Model(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1, kernel_initializer="ones")

        @tf.function
        def call(self, x):
            return self.dense(x)

    assert Model()(tf.ones((2, 3))).numpy().tolist() == [[3.0], [3.0]]


def test_run_functions_eagerly_exists():
    tf.config.run_functions_eagerly(True)
    assert tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(False)  # accepted; functions still run eagerly here
    with pytest.raises(TypeError, match="run_functions_eagerly"):
        tf.config.run_functions_eagerly("yes")


def test_what_needs_a_graph_says_so():
    f = tf.function(lambda x: x)
    with pytest.raises(NotImplementedError, match="get_concrete_function.*no graphs"):
        f.get_concrete_function(tf.TensorSpec([None]))
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    with pytest.raises(NotImplementedError, match="saving.*no graphs"):
        model.save("model.keras")
    with pytest.raises(AttributeError, match="tf.saved_model is not part of autodiff_viz"):
        tf.saved_model


def test_a_bad_signature_is_refused():
    with pytest.raises(TypeError, match="input_signature"):
        tf.function(lambda x: x, input_signature=[(None,)])
    with pytest.raises(TypeError, match="TensorSpec"):
        tf.TensorSpec(shape=[-1])
