"""Every code example of the five seed guides, run with ``import autodiff_viz as tf``.

Printed output must match the guides line for line (our prefix ``ad.`` in
place of ``tf.``).  Lines the extracted text lost (a ``watch`` call, a
decorator, a ``reset()``) are restored as the prose describes and marked
``# restored``.  Where a guide is wrong about TensorFlow (guide 001's tape
used without ``with``), the test asserts what TensorFlow does instead.  Examples that need Dense, Module or Dataset live in
test_models.py.
"""
import numpy as np
import pytest

import autodiff_viz as ad
from _guide import expected, run


# --------------------------------------------------------------------------
# Guide 000: "Introduction to Gradients and Automatic Differentiation" (TF 2.0)
# --------------------------------------------------------------------------
def test_000_scalars():
    _, _, ns = run("""
        x = tf.constant(3.0)
        with tf.GradientTape() as t:
          t.watch(x)  # restored
          y = x * x
        dy_dx = t.gradient(y, x)
    """)
    assert float(ns["dy_dx"]) == 6.0


def test_000_matrices():
    out, _, _ = run("""
        x = tf.constant([3.0, 3.0])
        with tf.GradientTape() as t:
          t.watch(x)  # restored
          z = tf.multiply(x, x)
        print(z)  # restored: the guide shows z's value
        print(t.gradient(z, x))
    """)
    assert out == expected("""
        tf.Tensor([9. 9.], shape=(2,), dtype=float32)
        tf.Tensor([6. 6.], shape=(2,), dtype=float32)
    """)


def test_000_intermediate_results():
    out, _, _ = run("""
        x = tf.constant([3.0, 3.0])
        with tf.GradientTape() as t:
          t.watch(x)  # restored
          y = tf.multiply(x, x)
          z = tf.multiply(y, y)
        print(t.gradient(z, y))
    """)
    assert out == expected("tf.Tensor([18. 18.], shape=(2,), dtype=float32)")


def test_000_watched_variables_in_creation_order():
    out, _, _ = run("""
        x = tf.Variable(2.0)
        y = tf.Variable(3.0)
        with tf.GradientTape() as t:
          y_sq = y * y
          z = x + y_sq
        print(t.watched_variables())
    """)
    assert out == expected("""
        (<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=2.0>, <tf.Variable 'Variable:0' shape=() dtype=float32, numpy=3.0>)
    """)


def test_000_persistent():
    out, _, _ = run("""
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as t:
          t.watch(x)  # restored
          y = x * x
          z = y * y
        print(t.gradient(z, x))  # 108.0 (4*x^3 at x = 3)
        print(t.gradient(y, x))  # 6.0 (2 * x)
        del t  # Drop the reference to the tape
    """)
    assert out == expected("""
        tf.Tensor(108.0, shape=(), dtype=float32)
        tf.Tensor(6.0, shape=(), dtype=float32)
    """)


def test_000_control_flow():
    out, _, _ = run("""
        def f(x, y):
          output = 1.0
          for i in range(y):
            if i > 1 and i < 5:
              output = tf.multiply(output, x)
          return output

        def grad(x, y):
          with tf.GradientTape() as t:
            t.watch(x)  # restored
            out = f(x, y)
          return t.gradient(out, x)

        x = tf.constant(2.0)
        print(grad(x, 6).numpy())  # 12.0
        print(grad(x, 5).numpy())  # 12.0
        print(grad(x, 4).numpy())  # 4.0
    """)
    assert out == "12.0\n12.0\n4.0\n"


def test_000_integer_variable_gives_none_with_warnings():
    out, warns, _ = run("""
        with tf.GradientTape() as tape:
          x = tf.Variable([[2, 2], [2, 2]], dtype=tf.int8)
          y = x * x
        print(tape.gradient(y, x))
    """)
    assert out == "None\n"
    assert ("The dtype of the target tensor must be floating (e.g. ad.float32) when calling "
            "GradientTape.gradient, got ad.int8") in warns
    assert ("The dtype of the source tensor must be floating (e.g. ad.float32) when calling "
            "GradientTape.gradient, got ad.int8") in warns


def test_000_unconnected_none_and_zero():
    out, _, _ = run("""
        x = tf.Variable(2.)
        y = tf.Variable(3.)
        with tf.GradientTape() as tape:
          z = y * y
        print(tape.gradient(x, y))
        with tf.GradientTape() as tape:
          z = y * y
        print(tape.gradient(x, y, unconnected_gradients=tf.UnconnectedGradients.ZERO))
    """)
    assert out == expected("""
        None
        tf.Tensor(0.0, shape=(), dtype=float32)
    """)


def test_000_custom_gradient_clips():
    out, _, _ = run("""
        @tf.custom_gradient  # restored
        def clip_gradients(y):
          def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
          return y, backward

        v = tf.Variable(2.0)
        with tf.GradientTape() as t:
          output = clip_gradients(v * v)
        print(t.gradient(output, v))  # calls "backward", which clips 4 to 2
    """)
    assert out == expected("tf.Tensor(2.0, shape=(), dtype=float32)")


def test_000_higher_order():
    out, _, _ = run("""
        x = tf.Variable(1.0)
        with tf.GradientTape() as t:
          with tf.GradientTape() as t2:
            y = x * x * x
          dy_dx = t2.gradient(y, x)
        d2y_dx2 = t.gradient(dy_dx, x)
        print("dy_dx:", dy_dx.numpy())  # 3.0
        print("d2y_dx2:", d2y_dx2.numpy())  # 6.0
    """)
    assert out == "dy_dx: 3.0\nd2y_dx2: 6.0\n"


def test_000_watch_accessed_variables_false():
    out, _, _ = run("""
        x = tf.Variable(2.0)
        y = tf.Variable(3.0)
        with tf.GradientTape(watch_accessed_variables=False, persistent=True) as t:
          t.watch(y)  # restored: "Only watch y"
          y_sq = y * y
          z = x + y_sq
        print("Gradient with respect to x:", t.gradient(z, x))
        print("Gradient with respect to y:", t.gradient(z, y))
        del t
    """)
    assert out == expected("""
        Gradient with respect to x: None
        Gradient with respect to y: tf.Tensor(6.0, shape=(), dtype=float32)
    """)


def test_000_stop_recording_and_reset():
    out, _, _ = run("""
        x = tf.Variable(2.0)
        y = tf.Variable(3.0)
        with tf.GradientTape(persistent=True) as t:
          y_sq = y * y
          with t.stop_recording():
            print("y with respect to y_sq:", t.gradient(y_sq, y))  # Will be 1
          t.reset()  # restored: the output says "after reset"
          z = x + y_sq
        print("z with respect to y after reset:", t.gradient(z, y))  # None
    """)
    assert out == expected("""
        y with respect to y_sq: tf.Tensor(6.0, shape=(), dtype=float32)
        z with respect to y after reset: None
    """)


# --------------------------------------------------------------------------
# Guide 001: "TensorFlow GradientTape: a guide to automatic differentiation"
# --------------------------------------------------------------------------
def test_001_tape_without_with_block_raises_as_in_tensorflow():
    # Guide 001 shows a tape used without `with` and says it prints 2.0.  TensorFlow 2.21 raises at
    # tape.watch instead (AttributeError: 'NoneType' object has no attribute '_tape'): its tape is
    # made by `with`.  The same error type here, with a message that shows the fix.
    with pytest.raises(AttributeError, match=r"GradientTape\.watch: .*with tf\.GradientTape\(\) as tape:"):
        run("""
            x = tf.constant(3.0)
            y = tf.constant(2.0)
            tape = tf.GradientTape()
            tape.watch(x)
            z = x * y
            gradient = tape.gradient(z, x)
            print(gradient.numpy())
        """)


def test_001_variable_watched_without_with_block_raises_as_in_tensorflow():
    with pytest.raises(AttributeError, match="never entered"):
        run("""
            w = tf.Variable(5.0)
            tape = tf.GradientTape()
            tape.watch(w)
        """)


def test_001_the_same_code_inside_with_gives_the_guides_numbers():
    out, _, _ = run("""
        x = tf.constant(3.0)
        y = tf.constant(2.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            z = x * y
        print(tape.gradient(z, x).numpy())
        w = tf.Variable(5.0)
        with tf.GradientTape() as tape:
            y = w * w
        print(tape.gradient(y, w).numpy())
    """)
    assert out == "2.0\n10.0\n"


def test_001_nested_tapes():
    out, _, _ = run("""
        x = tf.Variable(3.0)
        with tf.GradientTape() as t1:
            with tf.GradientTape() as t2:
                y = x * x * x
            dy_dx = t2.gradient(y, x)
            d2y_dx2 = t1.gradient(dy_dx, x)
        print(dy_dx.numpy())   # Output should be 27.0
        print(d2y_dx2.numpy()) # Output should be 18.0
    """)
    assert out == "27.0\n18.0\n"


# --------------------------------------------------------------------------
# Guide 002: "Gradient Tape with Tensorflow" (blog)
# --------------------------------------------------------------------------
def test_002_toy_graph_forward():
    _, _, ns = run("""
        input = tf.constant([[1.0,2.0]])
        weights = tf.Variable([[0.25],[0.15]])
        output = tf.linalg.matmul(input, weights)
        y_true = tf.constant(0.75)
        loss = tf.math.sqrt(tf.math.subtract(tf.math.square(y_true), tf.math.square(output)))
    """)
    np.testing.assert_allclose(ns["output"].numpy(), [[0.55]], rtol=1e-6)
    np.testing.assert_allclose(ns["loss"].numpy(), [[np.sqrt(0.75**2 - 0.55**2)]], rtol=1e-6)


def test_002_matmul_gradient_has_its_minus_sign():
    # The blog prints [[0.4], [0.8]]; d/dw (0.75 - x@w)^2 = -2 (0.75 - 0.55) x^T = [[-0.4], [-0.8]].
    _, _, ns = run("""
        input = tf.constant([[1.0,2.0]])
        weights = tf.Variable([[0.25],[0.15]])
        y_true = tf.constant(0.75)
        with tf.GradientTape() as tape:  #1
            output = tf.linalg.matmul(input, weights)
            loss = tf.math.squared_difference(y_true, output)
        gradients = tape.gradient(loss, weights)  #2
    """)
    g = ns["gradients"]
    assert g.shape == (2, 1) and g.dtype == ad.float32
    np.testing.assert_allclose(g.numpy(), [[-0.4], [-0.8]], rtol=1e-6)
    # TF's layout: a value over several lines starts on the line after "numpy=".
    assert repr(g) == ("<ad.Tensor: shape=(2, 1), dtype=float32, numpy=\narray([[-0.39999998],\n"
                       "       [-0.79999995]], dtype=float32)>")


def test_002_constant_weights_watched_persistent():
    _, _, ns = run("""
        input = tf.constant([[1.0,2.0]])
        weights = tf.constant([[0.25],[0.15]]) #1
        y_true = tf.constant(0.75)
        with tf.GradientTape(persistent=True) as tape:  #2 #3
            tape.watch(weights)  # restored: "#3 - Put the weights under tape.watch()"
            output = tf.linalg.matmul(input, weights)
            loss = tf.math.squared_difference(y_true, output)
        gradients = tape.gradient(loss, weights)
        gradients_copy = tape.gradient(loss, weights) #4
    """)
    np.testing.assert_allclose(ns["gradients"].numpy(), [[-0.4], [-0.8]], rtol=1e-6)
    np.testing.assert_array_equal(ns["gradients"].numpy(), ns["gradients_copy"].numpy())


def test_002_constant_weights_unwatched_give_none():
    _, _, ns = run("""
        input = tf.constant([[1.0,2.0]])
        weights = tf.constant([[0.25],[0.15]])
        y_true = tf.constant(0.75)
        with tf.GradientTape(persistent=True) as tape:
            output = tf.linalg.matmul(input, weights)
            loss = tf.math.squared_difference(y_true, output)
        gradients = tape.gradient(loss, weights)
    """)
    assert ns["gradients"] is None


# --------------------------------------------------------------------------
# Guide 003: "Introduction to gradients and automatic differentiation" (TF 2.x)
# --------------------------------------------------------------------------
def test_003_simple_example():
    out, _, _ = run("""
        x = tf.Variable(3.0)
        with tf.GradientTape() as tape:
          y = x**2
        dy_dx = tape.gradient(y, x)
        print(dy_dx.numpy())
    """)
    assert out == "6.0\n"


def test_003_any_tensor_and_nested_sources():
    out, _, ns = run("""
        tf.random.set_seed(0)
        w = tf.Variable(tf.random.normal((3, 2)), name='w')
        b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
        x = [[1., 2., 3.]]

        with tf.GradientTape(persistent=True) as tape:
          y = x @ w + b
          loss = tf.reduce_mean(y**2)

        [dl_dw, dl_db] = tape.gradient(loss, [w, b])
        print(w.shape)
        print(dl_dw.shape)

        my_vars = {
            'w': w,
            'b': b
        }
        grad = tape.gradient(loss, my_vars)
    """)
    assert out == "(3, 2)\n(3, 2)\n"
    # loss = mean(y^2) over 2 outputs: dl/db = y, dl/dw = x^T y.
    y = ns["y"].numpy()[0]
    np.testing.assert_allclose(ns["grad"]["b"].numpy(), y, rtol=1e-6)
    np.testing.assert_allclose(ns["dl_dw"].numpy(), np.outer([1.0, 2.0, 3.0], y), rtol=1e-6)
    assert set(ns["grad"]) == {"w", "b"}


def test_003_what_the_tape_watches():
    out, _, _ = run("""
        # A trainable variable
        x0 = tf.Variable(3.0, name='x0')
        # Not trainable
        x1 = tf.Variable(3.0, name='x1', trainable=False)
        # Not a Variable: A variable + tensor returns a tensor.
        x2 = tf.Variable(2.0, name='x2') + 1.0
        # Not a variable
        x3 = tf.constant(3.0, name='x3')

        with tf.GradientTape() as tape:
          y = (x0**2) + (x1**2) + (x2**2)

        grad = tape.gradient(y, [x0, x1, x2, x3])

        for g in grad:
          print(g)
        print([var.name for var in tape.watched_variables()])
    """)
    assert out == expected("""
        tf.Tensor(6.0, shape=(), dtype=float32)
        None
        None
        None
        ['x0:0']
    """)


def test_003_watch_a_tensor():
    out, _, _ = run("""
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
          tape.watch(x)
          y = x**2
        dy_dx = tape.gradient(y, x)
        print(dy_dx.numpy())
    """)
    assert out == "6.0\n"


def test_003_only_watched_variable_connects():
    out, _, _ = run("""
        x0 = tf.Variable(0.0)
        x1 = tf.Variable(10.0)

        with tf.GradientTape(watch_accessed_variables=False) as tape:
          tape.watch(x1)
          y0 = tf.math.sin(x0)
          y1 = tf.nn.softplus(x1)
          y = y0 + y1
          ys = tf.reduce_sum(y)

        grad = tape.gradient(ys, {'x0': x0, 'x1': x1})

        print('dy/dx0:', grad['x0'])
        print('dy/dx1:', grad['x1'].numpy())
    """)
    assert out == "dy/dx0: None\ndy/dx1: 0.9999546\n"


def test_003_intermediate_results():
    out, _, _ = run("""
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
          tape.watch(x)
          y = x * x
          z = y * y
        print(tape.gradient(z, y).numpy())
    """)
    assert out == "18.0\n"


def test_003_persistent_vector():
    out, _, _ = run("""
        x = tf.constant([1, 3.0])
        with tf.GradientTape(persistent=True) as tape:
          tape.watch(x)
          y = x * x
          z = y * y

        print(tape.gradient(z, x).numpy())  # [4.0, 108.0] (4 * x**3 at x = [1.0, 3.0])
        print(tape.gradient(y, x).numpy())  # [2.0, 6.0] (2 * x at x = [1.0, 3.0])
        del tape
    """)
    assert out == "[  4. 108.]\n[2. 6.]\n"


def test_003_non_scalar_targets():
    out, _, _ = run("""
        x = tf.Variable(2.0)
        with tf.GradientTape(persistent=True) as tape:
          y0 = x**2
          y1 = 1 / x
        print(tape.gradient(y0, x).numpy())
        print(tape.gradient(y1, x).numpy())

        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
          y0 = x**2
          y1 = 1 / x
        print(tape.gradient({'y0': y0, 'y1': y1}, x).numpy())

        x = tf.Variable(2.)
        with tf.GradientTape() as tape:
          y = x * [3., 4.]
        print(tape.gradient(y, x).numpy())
    """)
    assert out == "4.0\n-0.25\n3.75\n7.0\n"


def test_003_elementwise_sigmoid_derivative():
    _, _, ns = run("""
        x = tf.linspace(-10.0, 10.0, 200+1)
        with tf.GradientTape() as tape:
          tape.watch(x)
          y = tf.nn.sigmoid(x)
        dy_dx = tape.gradient(y, x)
    """)
    xs = np.linspace(-10.0, 10.0, 201)
    s = 1 / (1 + np.exp(-xs))
    assert ns["x"].shape == (201,) and ns["x"].dtype == ad.float32
    np.testing.assert_allclose(ns["y"].numpy(), s, atol=1e-6)
    np.testing.assert_allclose(ns["dy_dx"].numpy(), s * (1 - s), atol=1e-6)
    # plt.plot(x, y) works because tensors convert to arrays:
    np.testing.assert_allclose(np.asarray(ns["dy_dx"]), s * (1 - s), atol=1e-6)


def test_003_control_flow():
    out, _, _ = run("""
        x = tf.constant(1.0)

        v0 = tf.Variable(2.0)
        v1 = tf.Variable(2.0)

        with tf.GradientTape(persistent=True) as tape:
          tape.watch(x)
          if x > 0.0:
            result = v0
          else:
            result = v1**2

        dv0, dv1 = tape.gradient(result, [v0, v1])

        print(dv0)
        print(dv1)
        dx = tape.gradient(result, x)
        print(dx)
    """)
    assert out == expected("""
        tf.Tensor(1.0, shape=(), dtype=float32)
        None
        None
    """)


def test_003_not_connected():
    out, _, _ = run("""
        x = tf.Variable(2.)
        y = tf.Variable(3.)

        with tf.GradientTape() as tape:
          z = y * y
        print(tape.gradient(z, x))
    """)
    assert out == "None\n"


def test_003_replaced_variable_with_tensor():
    out, _, _ = run("""
        x = tf.Variable(2.0)

        for epoch in range(2):
          with tf.GradientTape() as tape:
            y = x+1

          print(type(x).__name__, ":", tape.gradient(y, x))
          x = x + 1   # This should be `x.assign_add(1)`
    """)
    assert out == expected("""
        ResourceVariable : tf.Tensor(1.0, shape=(), dtype=float32)
        EagerTensor : None
    """)


def test_003_calculations_outside_the_package():
    out, _, _ = run("""
        x = tf.Variable([[1.0, 2.0],
                         [3.0, 4.0]], dtype=tf.float32)

        with tf.GradientTape() as tape:
          x2 = x**2

          # This step is calculated with NumPy
          y = np.mean(x2, axis=0)

          # Like most ops, reduce_mean will cast the NumPy array to a constant tensor
          # using `tf.convert_to_tensor`.
          y = tf.reduce_mean(y, axis=0)

        print(tape.gradient(y, x))
    """)
    assert out == "None\n"


def test_003_integers_are_not_differentiable():
    out, warns, _ = run("""
        x = tf.constant(10)

        with tf.GradientTape() as g:
          g.watch(x)
          y = x * x

        print(g.gradient(y, x))
    """)
    assert out == "None\n"
    assert "The dtype of the watched tensor must be floating (e.g. ad.float32), got ad.int32" in warns


def test_003_state_blocks_gradients():
    out, _, ns = run("""
        x0 = tf.Variable(3.0)
        x1 = tf.Variable(0.0)

        with tf.GradientTape() as tape:
          # Update x1 = x1 + x0.
          x1.assign_add(x0)
          # The tape starts recording from x1.
          y = x1**2   # y = (x1 + x0)**2

        # This doesn't work.
        print(tape.gradient(y, x0))   #dy/dx0 = 2*(x1 + x0)
    """)
    assert out == "None\n"
    assert float(ns["x1"]) == 3.0


def test_003_no_gradient_registered():
    out, _, _ = run("""
        image = tf.Variable([[[0.5, 0.0, 0.0]]])
        delta = tf.Variable(0.1)

        with tf.GradientTape() as tape:
          new_image = tf.image.adjust_contrast(image, delta)

        try:
          print(tape.gradient(new_image, [image, delta]))
          assert False   # This should not happen.
        except LookupError as e:
          print(f'{type(e).__name__}: {e}')
    """)
    assert out == "LookupError: gradient registry has no entry for: AdjustContrastv2\n"


def test_003_zeros_instead_of_none():
    out, _, _ = run("""
        x = tf.Variable([2., 2.])
        y = tf.Variable(3.)

        with tf.GradientTape() as tape:
          z = y**2
        print(tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))
    """)
    assert out == expected("tf.Tensor([0. 0.], shape=(2,), dtype=float32)")


# --------------------------------------------------------------------------
# Guide 004: the tf.GradientTape reference page
# --------------------------------------------------------------------------
def test_004_watch_constant():
    _, _, ns = run("""
        x = tf.constant(3.0)
        with tf.GradientTape() as g:
          g.watch(x)
          y = x * x
        dy_dx = g.gradient(y, x) # Will compute to 6.0
    """)
    assert float(ns["dy_dx"]) == 6.0


def test_004_nested_second_derivative():
    _, _, ns = run("""
        x = tf.constant(3.0)
        with tf.GradientTape() as g:
          g.watch(x)
          with tf.GradientTape() as gg:
            gg.watch(x)
            y = x * x
          dy_dx = gg.gradient(y, x)     # Will compute to 6.0
        d2y_dx2 = g.gradient(dy_dx, x)  # Will compute to 2.0
    """)
    assert float(ns["dy_dx"]) == 6.0
    assert float(ns["d2y_dx2"]) == 2.0


def test_004_persistent():
    _, _, ns = run("""
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as g:
          g.watch(x)
          y = x * x
          z = y * y
        dz_dx = g.gradient(z, x)  # 108.0 (4*x^3 at x = 3)
        dy_dx = g.gradient(y, x)  # 6.0
        del g  # Drop the reference to the tape
    """)
    assert float(ns["dz_dx"]) == 108.0
    assert float(ns["dy_dx"]) == 6.0


def test_004_watch_accessed_variables_false():
    _, _, ns = run("""
        variable_a = tf.Variable(3.0)
        variable_b = tf.Variable(2.0)
        with tf.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
          tape.watch(variable_a)
          y = variable_a ** 2  # Gradients will be available for `variable_a`.
          z = variable_b ** 3  # No gradients will be available since `variable_b` is
                               # not being watched.
        ga = tape.gradient(y, variable_a)
        gb = tape.gradient(z, variable_b)
    """)
    assert float(ns["ga"]) == 6.0
    assert ns["gb"] is None


def test_004_batch_jacobian():
    _, _, ns = run("""
        with tf.GradientTape() as g:
          x = tf.constant([[1., 2.], [3., 4.]], dtype=tf.float32)
          g.watch(x)
          y = x * x
        batch_jacobian = g.batch_jacobian(y, x)
        # batch_jacobian is [[[2,  0], [0,  4]], [[6,  0], [0,  8]]]
    """)
    np.testing.assert_array_equal(ns["batch_jacobian"].numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])


def test_004_jacobian():
    _, _, ns = run("""
        with tf.GradientTape() as g:
          x  = tf.constant([1.0, 2.0])
          g.watch(x)
          y = x * x
        jacobian = g.jacobian(y, x)
        # jacobian value is [[2., 0.], [0., 4.]]
    """)
    np.testing.assert_array_equal(ns["jacobian"].numpy(), [[2.0, 0.0], [0.0, 4.0]])


def test_004_reset_is_like_a_new_tape():
    _, _, ns = run("""
        w = tf.Variable(2.0)
        def loss_fn():
          return w * 10.0
        def other_loss_fn():
          return w * w

        with tf.GradientTape() as t:
          loss = loss_fn()
        with tf.GradientTape() as t:
          loss += other_loss_fn()
        a = t.gradient(loss, w)  # Only differentiates other_loss_fn, not loss_fn

        # The following is equivalent to the above
        with tf.GradientTape() as t:
          loss = loss_fn()
          t.reset()
          loss += other_loss_fn()
        b = t.gradient(loss, w)  # Only differentiates other_loss_fn, not loss_fn

        k = 5.0
        with tf.GradientTape() as t:
          loss = loss_fn()
          if loss > k:
            t.reset()
        c = t.gradient(loss, w)
    """)
    assert float(ns["a"]) == 4.0 and float(ns["b"]) == 4.0
    assert ns["c"] is None


def test_004_stop_recording_gradient_inside():
    _, _, ns = run("""
        w = tf.Variable(3.0)
        def compute_loss(v):
          return v * v
        with tf.GradientTape(persistent=True) as t:
          loss = compute_loss(w)
          with t.stop_recording():
            # The gradient computation below is not traced, saving memory.
            grads = t.gradient(loss, [w])
        n_records = len(t._records)
    """)
    assert float(ns["grads"][0]) == 6.0
    assert ns["n_records"] == 1  # the gradient's own ops were not recorded
