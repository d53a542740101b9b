"""The short lanes of the forward path and the update step give what the general path gives.

A Python float beside a NumPy tensor goes to the op as a kept NumPy scalar;
one- and two-input ops are recorded by ``_record.record`` itself (others by
``make_record``); ``Variable.assign_sub``/``assign_add`` take an op's result of
the variable's dtype as it is.  Values are checked against NumPy computed by
hand, errors against their messages; speed is measured in ``benchmarks/``.
"""
import threading
import warnings

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _op_view, _record
from autodiff_viz.errors import InvalidArgumentError


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_a_python_float_beside_a_tensor_computes_in_the_tensors_dtype(dtype, shape, backend_name):
    if dtype is np.float16 and backend_name == "array_api_strict":
        pytest.skip("the Array API standard has no float16")
    a = (np.arange(1, 1 + int(np.prod(shape)), dtype=dtype) / 7).reshape(shape)
    x = ad.constant(a)
    by_hand = {"add": lambda c: (a + dtype(c), dtype(c) + a), "sub": lambda c: (a - dtype(c), dtype(c) - a),
               "mul": lambda c: (a * dtype(c), dtype(c) * a), "div": lambda c: (a / dtype(c), dtype(c) / a),
               "pow": lambda c: (a ** dtype(c), dtype(c) ** a)}
    ours = {"add": lambda c: (x + c, c + x), "sub": lambda c: (x - c, c - x), "mul": lambda c: (x * c, c * x),
            "div": lambda c: (x / c, c / x), "pow": lambda c: (x ** c, c ** x)}
    for c in (0.37, 0.37, 2.5, 0.0, -0.0, float("nan")):  # twice: the number is kept after its first use
        for name in by_hand:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # (0 ** negative, 0 / 0: NumPy warns, we compare)
                want = by_hand[name](c)
                got = ours[name](c)
            for w, g in zip(want, got):
                assert g.dtype == ad.as_dtype(dtype)
                assert g.shape == shape
                if backend_name == "numpy":  # the same NumPy loops: the same bits
                    np.testing.assert_array_equal(np.asarray(g.numpy()), np.asarray(w))
                else:  # (a GPU's pow may round the last bit otherwise)
                    np.testing.assert_allclose(np.asarray(g.numpy()), np.asarray(w), rtol=2 * np.finfo(dtype).eps,
                                               atol=0, equal_nan=True)
                assert np.array_equal(np.signbit(np.asarray(g.numpy())), np.signbit(np.asarray(w)))


def test_a_float_beside_an_integer_tensor_is_refused_as_before():
    with pytest.raises(TypeError, match=r"Mul: cannot combine a int32 tensor with the float value 0\.5"):
        ad.constant([1, 2]) * 0.5
    with pytest.raises(TypeError, match=r"Add: cannot combine a int32 tensor with the float value 0\.5"):
        0.5 + ad.constant([1, 2])


def test_a_float_operand_is_recorded_and_differentiated_as_a_constant():
    x = ad.constant(np.float32(3.0))
    for _ in range(2):  # first use converts the number, the second finds it kept
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = 0.25 * x * 0.5 - 1.5
        rec = tape._records
        assert [_op_view.Op(r).type for r in rec] == ["Mul", "Mul", "Sub"]
        assert rec[0][_record.IN_SHAPES] == ((), ()) and rec[0][_record.IN_DTYPES] == (x._value.dtype,) * 2  # (the backend's float32)
        kept = rec[0][_record.INPUTS]  # Mul keeps the constant (x's gradient reads it), never x
        assert kept[1] is None and float(kept[0]) == 0.25
        assert float(y) == 0.25 * 3.0 * 0.5 - 1.5
        assert float(tape.gradient(y, x)) == 0.125


def test_one_and_two_input_records_on_nested_tapes_are_one_record_kept_by_need():
    v = ad.Variable(np.array([1.0, 2.0], np.float32))
    c = ad.constant(np.array([3.0, 4.0], np.float32))
    with ad.GradientTape() as outer:
        with ad.GradientTape() as inner:
            y = v * c            # both tapes watch v on read: one record, shared
            z = ad.tanh(y)
        with outer.stop_recording():
            w = y * 2.0          # outer is paused: it notes the op it did not record
    assert outer._records[0] is inner._records[0] and outer._records[1] is inner._records[1]
    mul = outer._records[0]
    assert mul[_record.INPUTS][1] is c and mul[_record.INPUTS][0] is None  # v's gradient reads c; c needs none
    assert inner._records[1][_record.OUTPUT] is z  # Tanh keeps its output for its rule
    assert [kind for kind, _ in outer._notes] == ["op_skipped"]
    assert outer._notes[0][1]["op_type"] == "Mul" and outer._notes[0][1]["output"] is w
    np.testing.assert_array_equal(inner.gradient(z, v).numpy(), (1 - np.tanh(np.float32([3, 8])) ** 2) * [3, 4])


def test_an_op_of_three_inputs_is_recorded_by_the_general_builder():
    a, b, c = (ad.constant(np.float32(k)) for k in (1.0, 2.0, 3.0))
    with ad.GradientTape() as tape:
        tape.watch(b)
        s = ad.add_n([a, b, c])
    (rec,) = tape._records
    assert rec[_record.IN_IDS] == (a._id, b._id, c._id) and rec[_record.IN_SHAPES] == ((), (), ())
    assert float(s) == 6.0 and float(tape.gradient(s, b)) == 1.0


def test_reductions_over_every_axis_share_one_attribute_dict_and_compute_as_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    x = ad.constant(a)
    with ad.GradientTape() as tape:
        tape.watch(x)
        m, s = ad.reduce_mean(x), ad.reduce_sum(x)
        k = ad.reduce_mean(x, axis=1, keepdims=True)
    rm, rs, rk = tape._records
    assert rm[_record.ATTRS] is rs[_record.ATTRS] == {"axis": None, "keepdims": False}
    assert rk[_record.ATTRS] == {"axis": (1,), "keepdims": True}
    total = np.add.reduce(a, axis=None)
    assert float(m) == total / np.float32(12) and float(s) == total
    np.testing.assert_array_equal(k.numpy(), np.add.reduce(a, axis=1, keepdims=True) / np.float32(4))


def test_assign_sub_and_add_of_an_op_result_compute_as_numpy_and_refuse_what_they_refused():
    start = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    g = ad.constant(np.array([[0.5, -1.0], [2.0, 0.25]], np.float32))
    v = ad.Variable(start)
    v.assign_sub(0.01 * g)
    want = start - np.float32(0.01) * g.numpy()
    np.testing.assert_array_equal(v.numpy(), want)
    v.assign_add(g * 2.0)
    np.testing.assert_array_equal(v.numpy(), want + g.numpy() * np.float32(2))
    with pytest.raises(InvalidArgumentError, match=r"Variable\.assign_sub of 'Variable:0': cannot update a "
                                                   r"variable of shape \(2, 2\) with a tensor of shape \(2,\)"):
        v.assign_sub(ad.constant(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match=r"Variable\.assign_add of 'Variable:0': .*float64.*float32"):
        v.assign_add(ad.constant(np.ones((2, 2), np.float64)))
    v.assign_sub([[1.0, 1.0], [1.0, 1.0]])  # a list still converts
    np.testing.assert_array_equal(v.numpy(), want + g.numpy() * np.float32(2) - 1)


def test_an_update_inside_a_tape_is_noted_and_one_outside_touches_no_tape():
    v = ad.Variable(np.float32(1.0))
    before = ad.GradientTape()
    with before:
        pass
    v.assign_sub(ad.constant(np.float32(0.5)))
    assert before._notes == []
    with ad.GradientTape() as tape:
        y = v * 2.0
        v.assign_sub(ad.constant(np.float32(0.25)))
    assert [kind for kind, _ in tape._notes] == ["state"] and tape._notes[0][1]["how"] == "assign_sub"
    assert float(v) == 0.25 and float(tape.gradient(y, v)) == 2.0


def test_tape_options_take_true_false_and_numpy_bools_and_refuse_the_rest():
    with ad.GradientTape(persistent=np.bool_(True), watch_accessed_variables=False) as tape:
        pass
    assert tape._persistent is True and tape._auto is False
    with pytest.raises(TypeError, match=r"GradientTape: persistent must be True or False, got 'no' \(str\)"):
        ad.GradientTape(persistent="no")
    with pytest.raises(TypeError, match=r"GradientTape: watch_accessed_variables must be True or False, got 1 \(int\)"):
        ad.GradientTape(watch_accessed_variables=1)
    with pytest.raises(RuntimeError, match="already recording"):
        with tape:
            tape.__enter__()


def test_a_scope_or_accumulator_open_in_another_thread_reaches_only_that_threads_records():
    opened, done = threading.Event(), threading.Event()
    seen = {}

    def other():
        x = ad.constant(2.0)
        with ad.name_scope("elsewhere"), ad.autodiff.ForwardAccumulator(x, ad.constant(1.0)) as acc:
            with ad.GradientTape() as tape:
                tape.watch(x)
                y = x * x
            opened.set()
            done.wait(10)
            seen["scope"], seen["tangent"] = tape._records[0][_record.SCOPE], float(acc.jvp(y))

    thread = threading.Thread(target=other)
    thread.start()
    assert opened.wait(10)
    x = ad.constant(3.0)
    with ad.name_scope("here"):
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * 3.0
    with ad.GradientTape() as bare:
        bare.watch(x)
        z = ad.sin(x)
    done.set()
    thread.join()
    assert tape._records[0][_record.SCOPE] == "here" and bare._records[0][_record.SCOPE] == ""
    assert seen == {"scope": "elsewhere", "tangent": 4.0}  # d(x*x) at 2, pushed in its own thread only
    assert float(tape.gradient(y, x)) == 3.0 and float(bare.gradient(z, x)) == float(np.cos(np.float32(3.0)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_of_2d_floats_gives_numpys_matmul_bits_for_every_layout(dtype, backend_name):
    # Contiguous and transposed 2-D operands take np.dot (same BLAS call); strided ones np.matmul.
    if backend_name != "numpy":
        pytest.skip("NumPy's own products are the reference")
    r = np.random.default_rng(7)
    for m, k, p in [(64, 32, 64), (64, 10, 64), (1, 5, 1), (3, 1, 4), (0, 3, 2), (33, 17, 1)]:
        a = r.normal(size=(m, k)).astype(dtype)
        b = r.normal(size=(k, p)).astype(dtype)
        layouts_a = [a, np.ascontiguousarray(a.T).T, np.repeat(a, 2, axis=1)[:, ::2]]
        layouts_b = [b, np.ascontiguousarray(b.T).T, np.repeat(b, 2, axis=0)[::2]]
        for x in layouts_a:
            for y in layouts_b:
                for ta, tb in [(False, False), (True, False), (False, True), (True, True)]:
                    xa = np.ascontiguousarray(x.T) if ta else x
                    yb = np.ascontiguousarray(y.T) if tb else y
                    got = ad.matmul(ad.constant(xa), ad.constant(yb), transpose_a=ta, transpose_b=tb).numpy()
                    want = np.matmul(xa.T if ta else xa, yb.T if tb else yb)
                    assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (m, k, p, ta, tb)
