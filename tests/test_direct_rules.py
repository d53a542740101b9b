"""The direct (plain NumPy) gradient rules a backward pass uses while no tape records.

Each op's gradient is checked against its closed form, and against the same
gradient computed while an unrelated tape records (then the op-built rules
run): the two must agree to the bit, since the direct rules call the same
forward functions in the same order.
"""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import _direct_rules, _ops, _registry

RNG = np.random.default_rng(7)
X = RNG.uniform(-1.5, 1.5, size=(4, 3)).astype(np.float32)
W = RNG.uniform(-1.0, 1.0, size=(3, 2)).astype(np.float32)


def _grads(f, *values):
    ts = [ad.constant(v) for v in values]
    with ad.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        y = f(*ts)
    return [g.numpy() for g in tape.gradient(y, ts)]


def _grads_rule_built(f, *values):
    # An outer tape that records (watching nothing of ours) makes the backward pass use the op-built rules.
    with ad.GradientTape():
        return _grads(f, *values)


CASES = {
    # name: (function, inputs, closed-form gradients of sum(f) for each input)
    "mul": (lambda x, y: ad.reduce_sum(x * y), (X, X[::-1].copy()), lambda x, y: (y, x)),
    "sub": (lambda x, y: ad.reduce_sum(x - y), (X, X * 2), lambda x, y: (np.ones_like(x), -np.ones_like(y))),
    "neg": (lambda x: ad.reduce_sum(-x), (X,), lambda x: (-np.ones_like(x),)),
    "sin": (lambda x: ad.reduce_sum(ad.sin(x)), (X,), lambda x: (np.cos(x),)),
    "cos": (lambda x: ad.reduce_sum(ad.cos(x)), (X,), lambda x: (-np.sin(x),)),
    "tanh": (lambda x: ad.reduce_sum(ad.tanh(x)), (X,), lambda x: (1 - np.tanh(x) ** 2,)),
    "sigmoid": (lambda x: ad.reduce_sum(ad.sigmoid(x)), (X,),
                lambda x: (np.exp(-x) / (1 + np.exp(-x)) ** 2,)),
    "square": (lambda x: ad.reduce_sum(ad.square(x)), (X,), lambda x: (2 * x,)),
    "pow3": (lambda x: ad.reduce_sum(x ** 3.0), (X,), lambda x: (3 * x ** 2,)),
    "mean_axis": (lambda x: ad.reduce_sum(ad.reduce_mean(x, axis=0) * np.float32([1, 2, 3])), (X,),
                  lambda x: (np.broadcast_to(np.float32([1, 2, 3]) / 4, x.shape),)),
    "sum_axis": (lambda x: ad.reduce_sum(ad.reduce_sum(x, axis=1) * np.float32([1, 2, 3, 4])), (X,),
                 lambda x: (np.broadcast_to(np.float32([[1], [2], [3], [4]]), x.shape),)),
    "matmul_bias": (lambda x, w, b: ad.reduce_sum(ad.matmul(x, w) + b), (X, W, np.zeros(2, np.float32)),
                    lambda x, w, b: (np.ones((4, 2), np.float32) @ w.T, x.T @ np.ones((4, 2), np.float32),
                                     np.full(2, 4, np.float32))),
    "twice_used": (lambda x: ad.reduce_sum(ad.sin(x) * x), (X,), lambda x: (np.cos(x) * x + np.sin(x),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_direct_rules_give_the_closed_form_and_the_op_built_rules_bits(name):
    f, values, closed = CASES[name]
    direct = _grads(f, *values)
    built = _grads_rule_built(f, *values)
    for d, b, c in zip(direct, built, closed(*values)):
        np.testing.assert_allclose(d, c, rtol=1e-5, atol=1e-6)
        assert d.dtype == b.dtype == np.float32 and d.shape == b.shape
        np.testing.assert_array_equal(d, b)


def test_no_op_runs_in_a_backward_pass_of_direct_rules(monkeypatch):
    with ad.backend("numpy"):  # (the direct rules are NumPy's: other backends take the op-built ones)
        x = ad.constant(X)
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.reduce_sum(ad.tanh(x) * 1.01 + x * 0.5)
        ran = []
        real = _ops._execute
        monkeypatch.setattr(_ops, "_execute", lambda prim, *a, **k: ran.append(prim.type) or real(prim, *a, **k))
        g = tape.gradient(y, x)
    assert ran == []
    np.testing.assert_allclose(g.numpy(), 1.01 * (1 - np.tanh(X) ** 2) + 0.5, rtol=1e-5)


def test_a_replaced_gradient_is_used_not_the_direct_rule():
    @ad.custom_gradient
    def f(x):
        return ad.sin(x), lambda g: g * 10.0

    x = ad.constant(np.float32(0.3))
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert float(tape.gradient(y, x)) == pytest.approx(10.0)


def test_second_order_still_records_the_rules_ops():
    # Under an outer tape the inner gradient's rules must be recorded: d²/dx² sin(x)·x³.
    x = ad.constant(X)
    with ad.GradientTape() as outer:
        outer.watch(x)
        with ad.GradientTape() as inner:
            inner.watch(x)
            s = ad.reduce_sum(ad.sin(x) * x ** 3.0)
        g = inner.gradient(s, x)
    gg = outer.gradient(g, x).numpy()
    expected = -np.sin(X) * X ** 3 + 6 * np.cos(X) * X ** 2 + 6 * np.sin(X) * X
    np.testing.assert_allclose(gg, expected, rtol=1e-4, atol=1e-4)


def test_a_pow_whose_exponent_needs_a_gradient_takes_the_op_built_rule():
    x, p = ad.constant(np.float32([1.5, 2.0])), ad.constant(np.float32(3.0))
    with ad.GradientTape() as tape:
        tape.watch([x, p])
        y = ad.reduce_sum(x ** p)
    gx, gp = tape.gradient(y, [x, p])
    np.testing.assert_allclose(gx.numpy(), 3 * np.float32([1.5, 2.0]) ** 2, rtol=1e-6)
    np.testing.assert_allclose(float(gp), float(np.sum(np.float32([1.5, 2.0]) ** 3 * np.log([1.5, 2.0]))), rtol=1e-5)


def test_numpy_value_tells_numpy_values_apart():
    assert _direct_rules.numpy_value(np.float32(1)) and _direct_rules.numpy_value(np.zeros(2))
    assert not _direct_rules.numpy_value(1.0) and not _direct_rules.numpy_value([1.0])


def test_sub_leaves_out_the_gradient_of_an_input_no_source_reaches():
    # TF's skip_input_indices: in x - c with c a constant, the direct rule makes no -g for c.
    x, c = ad.constant(X), ad.constant(X * 2)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        tape.watch(c)
        y = x - c
        s = ad.reduce_sum(y)
    rec = tape._records[0]
    g = np.full_like(X, 0.5)  # (direct rules take and give values)
    sub = _registry.DIRECT[ad.extend.PRIMITIVES["Sub"].grad]
    gx, gc = sub(rec, g, {x._id, y._id})
    assert gc is None
    np.testing.assert_array_equal(gx, np.full_like(X, 0.5))
    gx, gc = sub(rec, g, {x._id, c._id, y._id})
    np.testing.assert_array_equal(gc, np.full_like(X, -0.5))
    # Through a whole backward pass: d(x - c)/dx = 1 when only x is asked for.
    np.testing.assert_array_equal(tape.gradient(s, x).numpy(), np.ones_like(X))


def _mlp_grads(params_values, x, y, *, traced):
    """One MLP step's gradients (bias broadcasts, a mean, a rule built of ops: Exp), with or without a trace open."""
    params = [ad.Variable(v) for v in params_values]
    w1, b1, w2, b2 = params

    def step():
        with ad.GradientTape() as tape:
            h = ad.tanh(ad.matmul(x, w1) + b1)
            out = ad.matmul(h, w2) + b2
            loss = ad.reduce_mean(ad.square(out - y)) + ad.reduce_sum(ad.exp(out)) * 1e-3
        return tape.gradient(loss, params)

    if traced:  # a listener hears every step: the pass then hands tensors from step to step
        with ad.trace():
            return step()
    return step()


def test_the_pass_on_values_gives_the_bits_of_the_pass_on_tensors_and_the_closed_form():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(6, 4)).astype(np.float32)
    y = rng.normal(size=(6, 3)).astype(np.float32)
    values = [rng.normal(size=s).astype(np.float32) * 0.5 for s in ((4, 5), (5,), (5, 3), (3,))]
    plain = _mlp_grads(values, ad.constant(x), ad.constant(y), traced=False)
    traced = _mlp_grads(values, ad.constant(x), ad.constant(y), traced=True)
    for p, t in zip(plain, traced):
        assert type(p) is type(t) and p.dtype == t.dtype and p.shape == t.shape
        np.testing.assert_array_equal(p.numpy(), t.numpy())
    # Closed form, in float64.
    w1, b1, w2, b2 = (v.astype(np.float64) for v in values)
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    d_out = 2 * (out - y) / out.size + np.exp(out) * 1e-3
    d_pre = (d_out @ w2.T) * (1 - h * h)
    expected = (x.T @ d_pre, d_pre.sum(0), h.T @ d_out, d_out.sum(0))
    for g, e in zip(plain, expected):
        np.testing.assert_allclose(g.numpy(), e, rtol=2e-5, atol=2e-6)


def test_the_pass_on_values_converts_what_a_rule_built_of_ops_gives_and_keeps_each_source_once():
    # A custom rule returning a plain NumPy array of another dtype (converted to the input's dtype, as TF does),
    # the same source asked twice (one gradient each), a target that is also a source, and output_gradients.
    @ad.custom_gradient
    def f(x):
        return ad.sin(x), lambda g: np.float64(3.0) * np.ones(2)

    x = ad.constant(np.float32([0.3, 0.4]))
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x) * x + x
    gx, gx2 = tape.gradient(y, [x, x], output_gradients=ad.constant(np.float32([1.0, 2.0])))
    assert gx.dtype == ad.float32
    # d/dx (f(x)·x + x) with upstream g: f's rule gives 3 whatever its upstream, then sin(x)·g + g.
    expected = 3.0 + np.sin(np.float32([0.3, 0.4])) * [1, 2] + [1, 2]
    np.testing.assert_allclose(gx.numpy(), expected, rtol=1e-6)
    np.testing.assert_array_equal(gx.numpy(), gx2.numpy())
    np.testing.assert_array_equal(tape.gradient(x, x).numpy(), np.ones(2, np.float32))


def test_a_gradient_for_an_input_no_source_reaches_leaves_the_direct_rules_on(monkeypatch):
    # The custom rule gives a tensor for the constant c too; the pass drops it, and the Tanh before it
    # still takes its direct rule (no TanhGrad op runs), with tanh's closed-form derivative.
    @ad.custom_gradient
    def f(z, c):
        return z * c, lambda g: (g * c, g * z)

    with ad.backend("numpy"):
        x, c = ad.constant(X), ad.constant(X * 2)
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.reduce_sum(f(ad.tanh(x), c))
        ran = []
        real = _ops._execute
        monkeypatch.setattr(_ops, "_execute", lambda prim, *a, **k: ran.append(prim.type) or real(prim, *a, **k))
        g = tape.gradient(y, x)
    assert "TanhGrad" not in ran
    np.testing.assert_allclose(g.numpy(), (1 - np.tanh(X) ** 2) * X * 2, rtol=1e-5)
