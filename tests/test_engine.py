"""GradientTape semantics beyond the guides: errors, memory, threads, extension points."""
import contextlib
import gc
import math
import subprocess
import sys
import textwrap
import threading
import tracemalloc
import weakref

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _backend
from autodiff_viz import _registry


# -- tensors ---------------------------------------------------------------------
def test_default_dtypes_follow_tensorflow():
    assert ad.constant(1.0).dtype == ad.float32
    assert ad.constant(1).dtype == ad.int32
    assert ad.constant([1, 3.0]).dtype == ad.float32
    assert ad.constant(np.array([1.0])).dtype == ad.float64
    assert ad.constant(True).dtype == ad.bool
    assert ad.constant([1, 2], dtype=ad.float64).dtype == ad.float64


def test_str_and_repr_follow_tensorflow_layout():
    t = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    assert str(ad.constant(6.0)) == "ad.Tensor(6.0, shape=(), dtype=float32)"
    assert str(t) == "ad.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"
    assert repr(ad.constant([1.5])) == "<ad.Tensor: shape=(1,), dtype=float32, numpy=array([1.5], dtype=float32)>"
    v = ad.Variable(3.0, name="x0")
    assert repr(v) == "<ad.Variable 'x0:0' shape=() dtype=float32, numpy=3.0>"


def test_tensor_protocols():
    t = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    assert t.shape == (2, 2) and t.ndim == 2 and len(t) == 2
    assert float(ad.constant(2.5)) == 2.5 and int(ad.constant(3)) == 3
    assert bool(ad.constant(1.0) > 0.0)
    np.testing.assert_array_equal(np.asarray(t), [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal([row.numpy().tolist() for row in t], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal((abs(-t)).numpy(), t.numpy())
    assert (t == t).numpy().all() and not (t != t).numpy().any()
    with pytest.raises(ValueError, match="one element"):
        bool(t)


def test_variable_behaviour():
    v = ad.Variable([1.0, 2.0], name="w")
    assert v.name == "w:0" and v.trainable
    assert isinstance(v + 1.0, ad.Tensor) and not isinstance(v + 1.0, ad.Variable)
    v.assign([3.0, 4.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub(ad.constant([0.5, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    with pytest.raises(ValueError, match=r"shape \(3,\) does not match"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="declared shape"):
        ad.Variable([1.0, 2.0], shape=[3])
    assert ad.Variable(1.0, trainable=False).trainable is False


def test_creation_functions():
    np.testing.assert_array_equal(ad.zeros([2, 3]).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(ad.ones(2, dtype=ad.int32).numpy(), [1, 1])
    np.testing.assert_array_equal(ad.fill([2], 7.0).numpy(), [7.0, 7.0])
    np.testing.assert_allclose(ad.linspace(0.0, 1.0, 5).numpy(), [0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(ad.range(5).numpy(), np.arange(5))
    assert ad.range(0.0, 1.0, 0.5).dtype == ad.float32
    np.testing.assert_array_equal(ad.eye(2).numpy(), np.eye(2))
    np.testing.assert_array_equal(ad.zeros_like(ad.constant([1, 2])).numpy(), [0, 0])
    ad.random.set_seed(3)
    a = ad.random.normal([3]).numpy()
    ad.random.set_seed(3)
    np.testing.assert_array_equal(a, ad.random.normal([3]).numpy())
    u = ad.random.uniform([1000], minval=2.0, maxval=3.0).numpy()
    assert u.min() >= 2.0 and u.max() < 3.0


# -- tape semantics ----------------------------------------------------------
def test_nested_structures_keep_the_shape_of_sources():
    a, b = ad.Variable(1.0), ad.Variable(2.0)
    with ad.GradientTape() as tape:
        y = a * b
    g = tape.gradient(y, {"p": [a, (b,)], "q": a})
    assert float(g["p"][0]) == 2.0 and float(g["p"][1][0]) == 1.0 and float(g["q"]) == 2.0
    assert isinstance(g["p"][1], tuple)


def test_output_gradients_weight_the_targets():
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=ad.constant([10.0, 100.0]))
    np.testing.assert_array_equal(g.numpy(), [20.0, 400.0])


def test_output_gradients_of_the_wrong_shape_or_count():
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"shape \(3,\) for a target of shape \(2,\)"):
        tape.gradient(y, x, output_gradients=ad.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="2 gradients for 1 targets"):
        tape.gradient(y, x, output_gradients=[ad.constant([1.0, 1.0]), ad.constant([1.0, 1.0])])


def test_non_persistent_tape_allows_one_call():
    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can only be used"):
        tape.gradient(y, x)


def test_watch_rejects_non_tensors():
    with ad.GradientTape() as tape:
        with pytest.raises(ValueError, match="expected a Tensor or Variable, got str"):
            tape.watch("x")
        with pytest.raises(ValueError, match="got float"):
            tape.watch([ad.constant(1.0), 3.0])


def test_stop_recording_needs_a_recording_tape():
    tape = ad.GradientTape()
    with pytest.raises(RuntimeError, match="not currently recording"):
        with tape.stop_recording():
            pass


def test_unconnected_gradients_accepts_strings_and_rejects_others():
    x, y = ad.Variable([1.0, 2.0]), ad.Variable(3.0)
    with ad.GradientTape(persistent=True) as tape:
        z = y * y
    np.testing.assert_array_equal(tape.gradient(z, x, unconnected_gradients="zero").numpy(), [0.0, 0.0])
    assert tape.gradient(z, x, unconnected_gradients="none") is None
    with pytest.raises(ValueError, match="'none' or 'zero'"):
        tape.gradient(z, x, unconnected_gradients="zeros")


def test_non_trainable_variable_is_watched_only_explicitly():
    v = ad.Variable(2.0, trainable=False)
    with ad.GradientTape(persistent=True) as tape:
        y = v * v
    assert tape.gradient(y, v) is None and tape.watched_variables() == ()
    with ad.GradientTape() as tape:
        tape.watch(v)
        y = v * v
    assert float(tape.gradient(y, v)) == 4.0


def test_ops_without_watched_inputs_are_not_recorded():
    a, b = ad.constant(1.0), ad.constant(2.0)
    with ad.GradientTape() as tape:
        a * b + a
    assert tape._records == []
    with ad.GradientTape() as tape:
        tape.watch(a)
        a * b + b  # Mul has a watched input, Add then has the Mul's output
    assert [n.type for n in tape._ops()] == ["Mul", "Add"]


def test_x_times_x_records_two_edges():
    x = ad.constant(3.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    (node,) = tape._ops()
    assert node.in_ids == (x._id, x._id)
    assert float(tape.gradient(y, x)) == 6.0


def test_name_scope_labels_recorded_ops():
    x = ad.Variable(1.0)
    with ad.GradientTape() as tape:
        with ad.name_scope("layer1"):
            with ad.name_scope("inner"):
                y = ad.sin(x)
        y * 2.0
    assert [(n.scope, n.name) for n in tape._ops()] == [("layer1/inner", "layer1/inner/Sin"), ("", "Mul")]
    with ad.name_scope("block"):
        assert ad.Variable(1.0, name="w").name == "block/w:0"


def test_gradient_with_respect_to_a_target_itself():
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        pass
    np.testing.assert_array_equal(tape.gradient(x, x).numpy(), [1.0, 1.0])


def test_pow_with_a_whole_exponent_is_symmetric_in_the_sign_of_the_base_and_within_an_ulp():
    # Closed form: (-x)^n = (-1)^n x^n exactly, and x^n is the exact power rounded (to 1 ulp, as
    # NumPy's and TF's float pow); signed zeros, infinities, NaN and 1/0 as C's pow (TF's) gives them:
    # the backend's own pow for whole exponents, Python's math.pow for 0.5 (NumPy's pow(-inf, 0.5) is
    # its square root's NaN, C's and TF's is inf).
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        x = rng.uniform(0.01, 2.0, size=500).astype(dtype)
        for n in (-3, -2, -1, 0, 1, 2, 3, 4, 5, 7):
            up, down = (ad.constant(x) ** float(n)).numpy(), (ad.constant(-x) ** float(n)).numpy()
            np.testing.assert_array_equal(down, up * (-1.0) ** n)
            exact = np.array([float(np.longdouble(v) ** n) for v in x.astype(np.float64)])
            np.testing.assert_array_max_ulp(up, exact.astype(dtype), maxulp=1)
    special = np.array([-0.0, 0.0, -np.inf, np.inf, np.nan, -2.0], np.float32)
    with np.errstate(all="ignore"):
        for n in (-3.0, -2.0, 0.0, 2.0, 3.0, 0.5):
            base = ad.constant(special)
            xp = _backend.namespace_of(base._value)
            power = getattr(xp, "pow", None) or xp.power  # (the Array API's name; older CuPy has only power)
            if n == 0.5:
                want = np.array([math.pow(v, n) if v >= 0 or v == -np.inf else np.nan for v in special.tolist()],
                                np.float32)
            else:
                want = _backend.to_numpy(power(base._value, xp.asarray(n, dtype=base._value.dtype)))
            got = (base ** n).numpy()
            np.testing.assert_array_equal(got, want)
            signed = ~np.isnan(want)  # (a NaN's sign bit is no part of pow's answer)
            np.testing.assert_array_equal(np.signbit(got)[signed], np.signbit(want)[signed])


# -- higher order ---------------------------------------------------------------
def test_third_derivative_through_three_tapes():
    x = ad.Variable(2.0)
    with ad.GradientTape() as t3:
        with ad.GradientTape() as t2:
            with ad.GradientTape() as t1:
                y = x ** 4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert (float(d1), float(d2), float(d3)) == (32.0, 48.0, 48.0)  # 4x^3, 12x^2, 24x at 2


def test_hessian_as_jacobian_of_a_gradient():
    x = ad.constant([1.0, 2.0], dtype=ad.float64)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = x[0] ** 2 * x[1] + ad.sin(x[1])
        g = inner.gradient(y, x)
    h = outer.jacobian(g, x)
    a, b = 1.0, 2.0
    np.testing.assert_allclose(h.numpy(), [[2 * b, 2 * a], [2 * a, -np.sin(b)]])


def test_persistent_tape_records_its_own_gradient_inside_its_context():
    x = ad.constant(3.0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x ** 3
        dy = tape.gradient(y, x)
    assert float(dy) == 27.0
    assert float(tape.gradient(dy, x)) == 18.0


def test_jacobian_shapes_and_unconnected():
    x = ad.constant([[1.0, 2.0, 3.0]])
    w = ad.constant([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    other = ad.constant([5.0])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, other])
        y = x @ w
    j = tape.jacobian(y, x)
    assert j.shape == (1, 2, 1, 3)
    np.testing.assert_array_equal(j.numpy()[0, :, 0, :], w.numpy().T)
    assert tape.jacobian(y, other) is None
    np.testing.assert_array_equal(tape.jacobian(y, other, unconnected_gradients="zero").numpy(), np.zeros((1, 2, 1)))


def test_batch_jacobian_of_a_dense_layer(backend_name):
    x = ad.constant(np.arange(6.0).reshape(3, 2), dtype=ad.float64)
    w = ad.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=ad.float64)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.tanh(x @ w)
    j = tape.batch_jacobian(y, x)
    assert j.shape == (3, 3, 2)
    pre = x.numpy() @ w.numpy()
    expected = (1 - np.tanh(pre) ** 2)[:, :, None] * w.numpy().T[None]
    # tanh(19.0) is exactly 1.0 in the C library but one ulp below it on CUDA,
    # so an entry that is 0 here is a few ulps (< 1e-15) on a GPU.
    np.testing.assert_allclose(j.numpy(), expected, atol=0.0 if backend_name != "cupy" else 1e-14)


# -- extending ------------------------------------------------------------------------
def test_custom_gradient_with_variables():
    w = ad.Variable(3.0)

    @ad.custom_gradient
    def scaled(x):
        y = x * w

        def grad_fn(dy, variables=None):
            assert len(variables) == 1 and variables[0] is w
            return dy * w * 10.0, [dy * x * 100.0]

        return y, grad_fn

    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    gx, gw = tape.gradient(y, [x, w])
    assert float(y) == 6.0 and float(gx) == 30.0 and float(gw) == 200.0


def test_custom_gradient_finds_a_variable_read_by_a_one_input_op():
    w = ad.Variable(3.0)

    @ad.custom_gradient
    def scaled(x):
        s = ad.sin(w)  # (the only read of w: a one-input op)

        def grad_fn(dy, variables=None):
            assert len(variables) == 1 and variables[0] is w
            return dy * s * 10.0, [dy * x * 100.0]

        return s * x, grad_fn

    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    gx, gw = tape.gradient(y, [x, w])
    assert float(y) == float(np.float32(np.sin(np.float32(3.0))) * np.float32(2.0))
    assert float(gx) == float(np.float32(np.sin(np.float32(3.0))) * np.float32(10.0)) and float(gw) == 200.0


def test_custom_gradient_under_nested_tapes():
    @ad.custom_gradient
    def cube(x):
        def grad_fn(dy):
            return dy * 3.0 * x * x
        return x * x * x, grad_fn

    x = ad.constant(2.0)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    assert float(dy) == 12.0
    assert float(outer.gradient(dy, x)) == 12.0  # 6x at 2


def test_a_replaced_rule_reads_inputs_outputs_type_and_attributes():
    seen = {}

    def _rule(op, grad):
        seen.update(type=op.type, axis=op.get_attr("axis"), keepdims=op.keepdims,
                    x=op.inputs[0].numpy().tolist(), y=op.outputs[0].numpy().tolist())
        return (ad.ones_like(op.inputs[0]) * 5.0,)

    with ad.extend.gradient_override("Sum", _rule):
        x = ad.constant([[1.0, 2.0], [3.0, 4.0]])
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.reduce_sum(x, axis=1)
        g = tape.gradient(y, x)
    assert seen == {"type": "Sum", "axis": (1,), "keepdims": False, "x": [[1.0, 2.0], [3.0, 4.0]], "y": [3.0, 7.0]}
    np.testing.assert_array_equal(g.numpy(), np.full((2, 2), 5.0))


def test_no_gradient_marks_an_op_not_differentiable():
    prim = _registry.PRIMITIVES["AdjustContrastv2"]
    saved = (prim.grad, prim.save_inputs, prim.save_output)
    try:
        ad.no_gradient("AdjustContrastv2")
        image = ad.Variable([[[0.5, 0.0, 0.0]]])
        with ad.GradientTape() as tape:
            y = ad.image.adjust_contrast(image, 0.1)
        assert tape.gradient(y, image) is None
    finally:
        prim.grad = saved[0]
        prim.saves(*saved[1:])
    with pytest.raises(LookupError, match="NoSuchOp"):
        ad.no_gradient("NoSuchOp")


def test_every_op_has_a_tensorflow_type_name():
    x = ad.Variable([[1.0, 2.0]])
    with ad.GradientTape() as tape:
        a = ad.matmul(x, ad.transpose(x))
        b = ad.sin(a) * ad.exp(a) / ad.sqrt(a)
        ad.reduce_sum(ad.nn.relu(b - 1.0))
    assert [n.type for n in tape._ops()] == ["Transpose", "MatMul", "Sin", "Exp", "Mul", "Sqrt", "RealDiv",
                                               "Sub", "Relu", "Sum"]


# -- errors: clear, naming the op, shapes or dtypes ---------------------------------
def test_matmul_shape_error_names_the_op_and_shapes():
    with pytest.raises(ad.InvalidArgumentError, match=r"MatMul: cannot multiply shapes \(1, 2\) and \(3, 1\)"):
        ad.matmul(ad.ones([1, 2]), ad.ones([3, 1]))
    with pytest.raises(ad.InvalidArgumentError, match="rank >= 2"):
        ad.matmul(ad.ones([2]), ad.ones([2, 1]))


def test_broadcast_error_names_the_op_and_shapes():
    with pytest.raises(ad.InvalidArgumentError, match=r"Add: .*\(2,\) float32, \(3,\) float32"):
        ad.constant([1.0, 2.0]) + ad.constant([1.0, 2.0, 3.0])


def test_dtype_mismatch_is_an_error_not_a_silent_cast():
    with pytest.raises(TypeError, match="Mul: operands have different dtypes, float32 and int32"):
        ad.constant(1.0) * ad.constant(2)
    with pytest.raises(TypeError, match="cannot combine a int32 tensor with the float value 1.5"):
        ad.constant(2) * 1.5


def test_reshape_and_axis_errors():
    with pytest.raises(ad.InvalidArgumentError, match=r"Reshape: input to reshape is a tensor with 6 values "
                                                      r"\(shape \(2, 3\)\), but the requested shape \(4, 2\) requires 8"):
        ad.reshape(ad.zeros([2, 3]), [4, 2])
    with pytest.raises(ad.InvalidArgumentError, match="Sum: axis 2 is out of range for a tensor of rank 2"):
        ad.reduce_sum(ad.zeros([2, 3]), axis=2)
    with pytest.raises(ad.InvalidArgumentError, match="StridedSlice: index"):
        ad.zeros([2])[5]


def test_unsupported_dtype_is_named():
    with pytest.raises(TypeError, match="unsupported dtype"):
        ad.constant(["a", "b"])


def test_wrong_number_of_gradients_from_a_rule_is_named():
    @ad.custom_gradient
    def f(x, y):
        return x * y, lambda dy: dy  # one gradient for two inputs

    x, y = ad.constant(1.0), ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch([x, y])
        z = f(x, y)
    with pytest.raises(ValueError, match="returned 1 input and 0 variable gradients for 2 inputs"):
        tape.gradient(z, [x, y])


# -- iterative backward, memory, threads ------------------------------------------
def test_a_chain_of_100k_ops_differentiates_without_recursion():
    x = ad.constant(1.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(100_000):
            y = y + 0.0
    assert float(tape.gradient(y, x)) == 1.0


def test_intermediates_die_once_the_tape_does_not_need_them():
    x = ad.constant(np.ones(10))
    with ad.GradientTape() as tape:
        tape.watch(x)
        a = x + 1.0          # Add saves nothing: a is free once the user drops it
        b = ad.exp(a)        # Exp saves its output b
        y = ad.reduce_sum(b)
    ref_a, ref_b = weakref.ref(a), weakref.ref(b)
    del a, b
    gc.collect()
    assert ref_a() is None          # nothing on the tape holds a
    assert ref_b() is not None      # Exp's rule needs b
    tape.gradient(y, x)
    gc.collect()
    assert ref_b() is None          # freed by the backward pass of a non-persistent tape


@contextlib.contextmanager
def _peak_mib_where(x):
    """Peak memory allocated inside the block (``out[0]``, MiB) where ``x``'s
    backend keeps arrays: the host's, or the GPU memory CuPy hands out."""
    out = [0.0]
    if type(x._value).__module__.startswith("cupy"):
        import cupy

        pool = cupy.get_default_memory_pool()
        base = pool.used_bytes()

        def alloc(size):
            mem = pool.malloc(size)
            out[0] = max(out[0], (pool.used_bytes() - base) / 2**20)
            return mem

        with cupy.cuda.using_allocator(alloc):
            yield out
        return
    tracemalloc.start()
    try:
        yield out
        out[0] = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _peak_mib(persistent):
    x = ad.constant(np.ones(250_000))
    with _peak_mib_where(x) as peak:
        with ad.GradientTape(persistent=persistent) as tape:
            tape.watch(x)
            y = x
            for _ in range(20):
                y = y + 1.0  # Add keeps nothing
            loss = ad.reduce_sum(y)
        g = tape.gradient(loss, x)
    assert float(g.numpy()[0]) == 1.0
    return peak[0]


def test_add_chain_keeps_no_intermediates():
    # 20 intermediates of 2 MB each would cost 40 MB if kept; the chain should need a handful.
    assert _peak_mib(persistent=False) < 12


def test_tapes_are_per_thread():
    x = ad.constant(2.0)
    other_thread_ops = []

    def worker():
        a = ad.constant(5.0)
        for _ in range(200):
            other_thread_ops.append(a * x)  # x is watched in the main thread only

    with ad.GradientTape() as tape:
        tape.watch(x)
        t = threading.Thread(target=worker)
        t.start()
        y = x * x
        t.join()
    assert len(tape._records) == 1
    assert float(tape.gradient(y, x)) == 4.0
    assert len(other_thread_ops) == 200


def test_engine_imports_without_visualization_libraries():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {"matplotlib", "graphviz", "ipywidgets", "anywidget", "PIL"}:
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import autodiff_viz as ad
        x = ad.Variable(3.0)
        with ad.GradientTape() as t:
            y = x * x
        print(float(t.gradient(y, x)))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "6.0"


def test_custom_gradient_hides_its_inner_ops_from_forward_mode():
    @ad.custom_gradient
    def contrast(img):
        def grad_fn(dy):
            return dy * 2.0
        return ad.image.adjust_contrast(img, 2.0), grad_fn  # AdjustContrastv2 has no tangent rule

    img = ad.constant([[[0.5, 0.0, 1.0]]])
    with ad.autodiff.ForwardAccumulator(img, ad.ones_like(img)) as acc:
        y = contrast(img)
    np.testing.assert_allclose(acc.jvp(y).numpy(), np.full((1, 1, 3), 2.0))


def test_custom_gradient_variable_argument_is_an_input_not_captured_state():
    @ad.custom_gradient
    def round_straight_through(x):
        return ad.round(x), lambda dy: dy

    v = ad.Variable([0.4, 1.6])
    with ad.GradientTape() as tape:
        y = round_straight_through(v) * 3.0
    np.testing.assert_array_equal(y.numpy(), [0.0, 6.0])
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [3.0, 3.0])


def test_a_product_with_a_constant_saves_only_the_constant():
    x = ad.constant(np.ones((4, 3)))
    c = ad.constant(2.0, dtype=ad.float64)
    w = ad.constant(np.ones((3, 2)))
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = c * x
        z = ad.matmul(y, w)
        q = y / c
    mul, matmul, div = tape._ops()
    assert mul.inputs[0] is c and mul.inputs[1] is None
    assert matmul.inputs[0] is None and matmul.inputs[1] is w
    assert div.inputs[0] is None and div.inputs[1] is c
    gx = tape.gradient([z, q], x)
    np.testing.assert_allclose(gx.numpy(), np.full((4, 3), 2.0 * 2.0 + 1.0))


def _peak_mib_of(step, n=20):
    x = ad.constant(np.ones(250_000))
    with _peak_mib_where(x) as peak:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n):
                y = step(y)
            loss = ad.reduce_sum(y)
        g = tape.gradient(loss, x)
    return g, peak[0]


def test_scaling_chain_keeps_no_intermediates():
    # y * 1.01 needs only the constant: 20 intermediates of 2 MB are not kept.
    g, peak = _peak_mib_of(lambda y: y * 1.01)
    np.testing.assert_allclose(g.numpy()[:3], [1.01 ** 20] * 3)
    assert peak < 12


def test_sin_chain_keeps_one_input_per_op():
    # sin needs its input: 20 saved arrays of 2 MB, plus a few in flight.
    g, peak = _peak_mib_of(ad.sin, n=20)
    assert 38 < peak < 52


def test_spent_tape_keeps_the_facts_but_not_the_values():
    x = ad.constant([1.0, 2.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.exp(x)
    tape.gradient(y, x)
    (node,) = tape._ops()
    assert node.type == "Exp" and node.out_shape == (2,)
    assert node.outputs == (None,) and node.inputs == (None,)
    assert "Exp" in ad.viz.graph(tape).source


def test_failed_gradient_spends_a_non_persistent_tape():
    image = ad.Variable([[[0.5, 0.0, 0.0]]])
    with ad.GradientTape() as tape:
        y = ad.image.adjust_contrast(image, 0.5)
    with pytest.raises(LookupError):
        tape.gradient(y, image)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, image)


@pytest.mark.parametrize("bad, match", [([[1.0, 2.0], [3.0]], "cannot make a tensor of numbers from"),
                                         ("x", "unsupported dtype")])
def test_conversion_errors_name_the_value(bad, match):
    with pytest.raises((TypeError, ValueError), match=match):
        ad.constant(bad)
    with pytest.raises((TypeError, ValueError), match=r"^Variable\.assign of 'Variable:0': cannot make a tensor of numbers from "):
        ad.Variable(1.0).assign(bad)  # the method is named, not the conversion inside it


def test_softmax_axis_out_of_range_is_an_error_not_a_wrap():
    with pytest.raises(ad.InvalidArgumentError, match="Softmax: axis 5 is out of range for a tensor of rank 2"):
        ad.nn.softmax(ad.zeros([2, 3]), axis=5)


def test_argmax_and_unstack_validate_their_axis():
    x = ad.constant([[1.0, 5.0], [3.0, 2.0]])
    np.testing.assert_array_equal(ad.argmax(x, axis=-1).numpy(), [1, 0])
    np.testing.assert_array_equal(ad.argmin(x).numpy(), [0, 1])
    assert [t.numpy().tolist() for t in ad.unstack(x, axis=-1)] == [[1.0, 3.0], [5.0, 2.0]]
    for f in (lambda: ad.argmax(x, axis=2), lambda: ad.unstack(x, axis=-3)):
        with pytest.raises(ad.InvalidArgumentError, match="out of range"):
            f()


def test_stop_gradient_hides_downstream_ops():
    # As TF's backprop_test: an op that depends on a source only through stop_gradient is not on any
    # path to the source, so its gradient rule never runs (this one would raise).
    ran = []

    @ad.custom_gradient
    def downstream(a):
        def grad_fn(upstream):
            ran.append(upstream)
            raise AssertionError("this rule is downstream of stop_gradient and must not run")
        return a * 1.0, grad_fn

    x = ad.constant(2.0)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x + downstream(ad.stop_gradient(x))
    assert float(tape.gradient(y, x)) == 4.0 and ran == []


def test_one_value_broadcast_is_numpys_read_only_view():
    # One value spread over a shape (a mean's gradient) takes a short path on NumPy: same values,
    # shape and dtype as np.broadcast_to, read-only like it, and the same refusals.
    with ad.backend("numpy"):
        cases = [(ad.constant(2.5), (3, 4)), (ad.constant([[7]]), (2, 1, 3)),
                 (ad.constant([1.5], dtype=ad.float16), (5,)), (ad.constant(4.0), ())]
        for value, shape in cases:
            got = ad.broadcast_to(value, shape).numpy()
            want = np.broadcast_to(value.numpy(), shape)
            assert np.shape(got) == want.shape and got.dtype == want.dtype and np.all(got == want)
            if shape:
                assert not got.flags.writeable
        with pytest.raises(ad.errors.InvalidArgumentError, match="BroadcastTo"):
            ad.broadcast_to(ad.constant([[7.0]]), [3])
        x = ad.Variable(np.arange(6.0, dtype=np.float32).reshape(2, 3))
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean(ad.square(x))
        g = tape.gradient(loss, x).numpy()
    np.testing.assert_array_equal(g, np.float32(2.0) * x.numpy() * (np.float32(1.0) / np.float32(6.0)))


# --------------------------------------------------------------------------
# Variables across threads: assign, assign_add and assign_sub are atomic per call (TF's resource
# variables update under the variable's mutex)
# --------------------------------------------------------------------------
def _in_threads(n, work):
    import sys
    import threading
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: a lost update would show
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)


def test_assign_add_from_eight_threads_loses_no_update():
    v = ad.Variable(0.0)

    def work(_):
        for _ in range(5000):
            v.assign_add(1.0)

    _in_threads(8, work)
    assert float(v) == 40000.0  # exact in float32 (below 2**24)


def test_assign_add_and_sub_from_threads_cancel_exactly():
    v = ad.Variable([0.0, 100.0])
    one = ad.constant([1.0, 1.0])

    def work(i):
        for _ in range(3000):
            if i % 2:
                v.assign_sub(one)
            else:
                v.assign_add(one)

    _in_threads(6, work)
    assert v.numpy().tolist() == [0.0, 100.0]


def test_a_refused_update_leaves_the_variable_as_it_was_and_copies_get_their_own_lock():
    import copy
    v = ad.Variable([1.0, 2.0], name="w")
    with pytest.raises(ad.errors.InvalidArgumentError, match="shapes must be equal"):
        v.assign_add([1.0])
    assert v.numpy().tolist() == [1.0, 2.0]
    w = copy.deepcopy(v)
    assert w._lock is not v._lock and w.name == "w:0"
    w.assign_add([1.0, 1.0])
    assert w.numpy().tolist() == [2.0, 3.0] and v.numpy().tolist() == [1.0, 2.0]
