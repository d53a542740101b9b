"""Backward passes written out for tapes that repeat (``_replay``): the same bits as the general pass, every step.

The reference is the general pass itself, run on a persistent tape of the
same program and values (a persistent tape is never written out), and,
for the property test, central differences.
"""
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autodiff_viz as ad
from autodiff_viz import _replay

F32 = np.float32


def _mlp(seed=0, n=16, d=8, h=12, k=3):
    r = np.random.default_rng(seed)
    x = ad.constant(r.normal(size=(n, d)).astype(F32))
    y = ad.constant(r.normal(size=(n, k)).astype(F32))
    params = [ad.Variable((r.normal(size=s) * 0.3).astype(F32)) for s in ((d, h), (h,), (h, k), (k,))]

    def loss():
        w1, b1, w2, b2 = params
        hid = ad.tanh(ad.matmul(x, w1) + b1)
        return ad.reduce_mean(ad.square(ad.matmul(hid, w2) + b2 - y))
    return params, loss


def _grads(loss, sources, persistent):
    with ad.GradientTape(persistent=persistent) as tape:
        value = loss()
    return tape, tape.gradient(value, sources)


def _key(tape):
    last = tape._records[-1]
    return (len(tape._records), last[0], last[4])


def _same_bits(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert (u is None) == (v is None)
        if u is not None:
            assert u.dtype == v.dtype and u.numpy().tobytes() == v.numpy().tobytes()


def test_a_training_loop_gets_the_general_pass_bits_on_every_step():
    params, loss = _mlp()
    for step in range(6):
        _, want = _grads(loss, params, persistent=True)  # the general pass on the same values
        tape, got = _grads(loss, params, persistent=False)
        _same_bits(got, want)
        for p, g in zip(params, got):
            p.assign_sub(0.1 * g)
    assert _key(tape) in _replay._PASSES  # (written on the second step, run from then on)
    assert all(r[10] is None and r[11] is None for r in tape._records)  # each record let go of its values
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can only be used to compute one set"):
        tape.gradient(loss(), params)


def test_the_pass_is_plain_python_that_says_what_it_does():
    params, loss = _mlp(1, n=5, d=3, h=4, k=2)
    for _ in range(3):
        tape, _ = _grads(loss, params, persistent=False)
    (run,) = _replay._PASSES[_key(tape)]
    assert "def run(records, reach, target_id, asked, seed):" in run.source
    assert run.source.count("o = R") == 8  # one rule call per record, no loop


def test_a_different_flow_with_the_same_ops_and_shapes_is_not_taken_for_the_written_one():
    a, b = ad.Variable(F32([1.0, 2.0])), ad.Variable(F32([3.0, 5.0]))
    c = ad.constant(F32([7.0, 11.0]))
    programs = [lambda: ad.reduce_sum((a * b) * c), lambda: ad.reduce_sum((a * c) * b),
                lambda: ad.reduce_sum((b * a) * b), lambda: ad.reduce_sum((a * b) * b)]
    for _ in range(3):
        for f in programs:  # one key, four tapes: each pass checks where every input came from
            _, want = _grads(f, [a, b], persistent=True)
            _, got = _grads(f, [a, b], persistent=False)
            _same_bits(got, want)
    # closed forms: d/da sum(a b c) = b c, d/db = a c; d/da sum(b a b) = b², d/db = 2 a b
    _, (ga, gb) = _grads(programs[2], [a, b], persistent=False)
    assert ga.numpy().tolist() == [9.0, 25.0] and gb.numpy().tolist() == [6.0, 20.0]


def test_the_same_records_wired_the_other_way_round_are_not_taken_for_the_written_ones():
    a = ad.Variable(F32([0.3, 1.2]))

    def sin_times_cos():
        s, c = ad.sin(a), ad.cos(a)
        return ad.reduce_sum(s * c)

    def cos_times_sin():  # the same records (Sin, Cos, Mul, Sum); only the product's inputs are swapped
        s, c = ad.sin(a), ad.cos(a)
        return ad.reduce_sum(c * s)
    for _ in range(3):
        for f in (sin_times_cos, cos_times_sin):
            _, want = _grads(f, [a], persistent=True)
            _, (got,) = _grads(f, [a], persistent=False)
            _same_bits([got], want)
            x = a.numpy().astype(np.float64)
            np.testing.assert_allclose(got.numpy(), np.cos(x) ** 2 - np.sin(x) ** 2, rtol=1e-6)


def test_sources_asked_in_another_order_or_twice_get_their_own_gradients():
    params, loss = _mlp(2, n=4, d=3, h=5, k=2)
    for _ in range(3):
        _grads(loss, params, persistent=False)
    _, want = _grads(loss, params, persistent=True)
    _, got = _grads(loss, params[::-1], persistent=False)
    _same_bits(got, want[::-1])
    _, twice = _grads(loss, [params[0], params[0]], persistent=False)
    _same_bits(twice, [want[0], want[0]])
    _, fewer = _grads(loss, params[:2], persistent=False)  # w2 and b2 watched but not asked: the general pass
    _same_bits(fewer, want[:2])


def test_a_gradient_rule_replaced_for_a_while_is_used_and_the_built_in_one_comes_back():
    w = ad.Variable(F32([0.5, 1.0]))

    def loss():
        return ad.reduce_sum(ad.sin(w))
    for _ in range(3):
        _, (g,) = _grads(loss, [w], persistent=False)
    np.testing.assert_array_equal(g.numpy(), np.cos(F32([0.5, 1.0])))
    with ad.extend.gradient_override("Sin", lambda op, up: (up * 100.0,)):
        _, (g,) = _grads(loss, [w], persistent=False)
    assert g.numpy().tolist() == [100.0, 100.0]
    _, (g,) = _grads(loss, [w], persistent=False)
    np.testing.assert_array_equal(g.numpy(), np.cos(F32([0.5, 1.0])))


def test_float64_and_float32_tapes_of_one_shape_keep_their_dtypes():
    for dt in (np.float32, np.float64, np.float32, np.float64, np.float32, np.float64):
        v = ad.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], dt))
        m = ad.constant(np.array([[0.5, -1.0], [2.0, 0.25]], dt))
        _, (g,) = _grads(lambda: ad.reduce_sum(ad.matmul(v, m) * v), [v], persistent=False)
        assert g.dtype.as_numpy_dtype == dt
        # d/dv sum((v m) ∘ v) = (v m) + v mᵀ... written out: G = V M + (V ∘ 1) Mᵀ
        vv, mm = v.numpy(), m.numpy()
        np.testing.assert_allclose(g.numpy(), vv @ mm + vv @ mm.T, rtol=1e-6)


def test_a_source_that_is_an_ops_result_and_a_bias_broadcast_in_the_middle():
    w = ad.Variable(F32([[1.0, -2.0], [0.5, 3.0]]))
    b = ad.Variable(F32([0.25, -0.5]))
    for _ in range(3):
        with ad.GradientTape(persistent=False) as tape:
            h = ad.matmul(w, w) + b
            loss = ad.reduce_sum(ad.tanh(h))
        gh, gw, gb = tape.gradient(loss, [h, w, b])
        with ad.GradientTape(persistent=True) as ref:
            h2 = ad.matmul(w, w) + b
            loss2 = ad.reduce_sum(ad.tanh(h2))
        _same_bits([gh, gw, gb], ref.gradient(loss2, [h2, w, b]))
    slope = 1.0 - np.tanh(h.numpy()) ** 2
    np.testing.assert_allclose(gb.numpy(), slope.sum(axis=0), rtol=1e-6)


def test_loops_in_two_threads_each_get_their_own_bits():
    results, errors = {}, []

    def loop(name, seed):
        try:
            params, loss = _mlp(seed, n=6 + seed, d=4, h=5, k=2)
            for _ in range(30):
                _, want = _grads(loss, params, persistent=True)
                _, got = _grads(loss, params, persistent=False)
                _same_bits(got, want)
                for p, g in zip(params, got):
                    p.assign_sub(0.05 * g)
            results[name] = True
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)
    threads = [threading.Thread(target=loop, args=(f"t{i}", i)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == {"t0": True, "t1": True}


# --------------------------------------------------------------------------
# property: random programs of the ops a pass is written for, run as a loop
# --------------------------------------------------------------------------
_UNARY = [ad.sin, ad.cos, ad.tanh, ad.sigmoid, ad.square, lambda t: -t, lambda t: t ** 3.0]
_BINARY = [lambda s, t: s * t, lambda s, t: s + t, lambda s, t: s - t]


@st.composite
def programs(draw):
    steps = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 6), st.integers(0, 9)), min_size=1,
                          max_size=7))
    end = draw(st.sampled_from(["sum", "mean", "matmul"]))
    x = draw(st.lists(st.floats(-1.5, 1.5), min_size=6, max_size=6))
    return steps, end, np.array(x, np.float64).reshape(2, 3)


def _program(steps, end, v, row, const):
    """A program of v (2, 3) and row (3,): unary ops, products and sums with earlier values (a row broadcast)."""
    values = [v, row]
    for kind, op, pick in steps:
        a = values[-1]
        if kind == 0:
            values.append(_UNARY[op](a))
        elif kind == 1:
            values.append(_BINARY[op % 3](a, values[pick % len(values)]))
        else:
            values.append(a * const)
    last = values[-1] + v * 0.0  # (always (2, 3), whatever was broadcast)
    if end == "sum":
        return ad.reduce_sum(last)
    if end == "mean":
        return ad.reduce_sum(ad.reduce_mean(last, axis=0) * ad.constant([1.0, -2.0, 0.5], dtype=ad.float64))
    return ad.reduce_sum(ad.matmul(last, v, transpose_b=True))


@settings(max_examples=40, deadline=None)
@given(programs())
def test_random_programs_run_as_loops_match_the_general_pass_and_finite_differences(prog):
    steps, end, x0 = prog
    _replay._PASSES.clear()  # (each program its own pass: a key shared with an earlier example would hide it)
    _replay._SEEN.clear()
    v = ad.Variable(x0)
    row = ad.Variable(np.array([0.3, -0.7, 1.1]))
    const = ad.constant(np.array([[0.5, 2.0, -1.0], [1.5, -0.25, 0.75]]))
    for _ in range(3):
        _, want = _grads(lambda: _program(steps, end, v, row, const), [v, row], persistent=True)
        tape, got = _grads(lambda: _program(steps, end, v, row, const), [v, row], persistent=False)
        _same_bits(got, want)
    assert _key(tape) in _replay._PASSES or got[1] is None  # (written unless a source is not reached)
    # and against central differences (``ad.test.compute_gradient``'s numerical Jacobian: one row, the gradient)
    _, numerical = ad.test.compute_gradient(lambda a, b: _program(steps, end, a, b, const),
                                            [ad.constant(v.numpy()), ad.constant(row.numpy())])
    for g, n in zip(got, numerical):
        np.testing.assert_allclose(g.numpy().reshape(-1) if g is not None else 0.0, n.reshape(-1),
                                   rtol=1e-5, atol=1e-6)


def test_memory_falls_as_the_written_pass_goes_as_in_the_general_pass():
    import tracemalloc
    x = ad.Variable(np.linspace(-1.0, 1.0, 100_000))  # 0.8 MB per array
    ops = [ad.sin, lambda t: t * 1.01, ad.tanh, lambda t: t + 0.1, ad.square]

    def peak_of_gradient():
        with ad.GradientTape() as tape:
            y = x
            for i in range(30):
                y = ops[i % 5](y)
            s = ad.reduce_sum(y)
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        (g,) = tape.gradient(s, [x])
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        return peak, g, tape
    general, g1, _ = peak_of_gradient()  # (a tape of this shape seen once: the general pass)
    peak_of_gradient()                   # (seen twice: the pass is written and run)
    written, g3, tape = peak_of_gradient()
    assert _key(tape) in _replay._PASSES
    assert g1.numpy().tobytes() == g3.numpy().tobytes()
    # Each saved input and each gradient goes once its rule has run: the peak stays a few arrays above the start.
    assert written <= general + 2 * 800_000, (written, general)
    assert written < 6 * 800_000, written


def test_one_source_asked_alone_gets_its_tensor_not_a_list():
    w = ad.Variable(F32([[0.5, -1.0], [2.0, 0.25]]))
    x = ad.constant(F32([[1.0, 2.0], [3.0, 4.0]]))
    for _ in range(3):
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean(ad.sigmoid(ad.matmul(x, w)))
        g = tape.gradient(loss, w)
        with ad.GradientTape(persistent=True) as ref:
            loss2 = ad.reduce_mean(ad.sigmoid(ad.matmul(x, w)))
        _same_bits([g], [ref.gradient(loss2, w)])
    assert isinstance(g, ad.Tensor) and _key(tape) in _replay._PASSES
    s = 1.0 / (1.0 + np.exp(-(x.numpy() @ w.numpy()).astype(np.float64)))
    np.testing.assert_allclose(g.numpy(), x.numpy().T @ (s * (1 - s) / 4.0), rtol=2e-5)  # (float32 against float64)


def test_a_power_whose_exponent_needs_a_gradient_keeps_to_the_general_pass_and_a_second_derivative_does_not():
    x, p = ad.Variable(F32([0.5, 2.0])), ad.Variable(F32(3.0))
    for _ in range(3):
        _, want = _grads(lambda: ad.reduce_sum(x ** p), [x, p], persistent=True)
        tape, got = _grads(lambda: ad.reduce_sum(x ** p), [x, p], persistent=False)
        _same_bits(got, want)
    assert _key(tape) not in _replay._PASSES  # (Pow keeps its output for p's gradient: its direct rule declines)
    np.testing.assert_allclose(got[1].numpy(), np.sum(np.log([0.5, 2.0]) * np.array([0.5, 2.0]) ** 3), rtol=1e-6)
    v = ad.constant(F32([0.3, -1.2, 2.0]))
    for _ in range(3):  # the diagonal of a Hessian: the outer tape holds the inner pass's ops, Pow among them
        with ad.GradientTape() as outer:
            outer.watch(v)
            with ad.GradientTape() as inner:
                inner.watch(v)
                s = ad.reduce_sum(ad.sin(v) * v ** 3.0)
            g = inner.gradient(s, v)
        h = outer.gradient(g, v)
    assert _key(outer) in _replay._PASSES
    a = v.numpy().astype(np.float64)  # d²/dx² (sin x · x³) = −sin x · x³ + 6 cos x · x² + 6 sin x · x
    np.testing.assert_allclose(h.numpy(), -np.sin(a) * a ** 3 + 6 * np.cos(a) * a ** 2 + 6 * np.sin(a) * a, rtol=1e-5)
