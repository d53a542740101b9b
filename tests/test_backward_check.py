"""classroom.check_backward: a hand-written backward pass of a small MLP, checked tensor by tensor.

The right answers here are written in NumPy from the closed-form rules and checked against central
finite differences of a NumPy forward pass, independently of the tape.
"""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import classroom

N, D, H, C = 4, 3, 5, 3


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return dict(X=rng.normal(size=(N, D)), y=rng.integers(0, C, size=N), W1=rng.normal(size=(D, H)) * 0.7,
                b1=rng.normal(size=H) * 0.3, W2=rng.normal(size=(H, C)) * 0.7, b2=rng.normal(size=C) * 0.3)


def forward(X, y, W1, b1, W2, b2):
    z1 = ad.matmul(X, W1) + b1
    h = ad.nn.relu(z1)
    logits = ad.matmul(h, W2) + b2
    loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return dict(z1=z1, h=h, logits=logits, loss=loss)


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _np_loss(X, y, W1, b1, W2, b2):
    logits = np.maximum(X @ W1 + b1, 0) @ W2 + b2
    return -np.mean(np.log(_softmax(logits))[np.arange(len(y)), y])


def backward(v):
    dlogits = (_softmax(v.logits) - np.eye(C)[v.y]) / len(v.y)
    dh = dlogits @ v.W2.T
    dz1 = dh * (v.z1 > 0)
    return dict(logits=dlogits, W2=v.h.T @ dlogits, b2=dlogits.sum(axis=0), h=dh, z1=dz1, W1=v.X.T @ dz1,
                b1=dz1.sum(axis=0))


def test_the_numpy_answers_are_the_finite_differences_of_the_loss():
    """The reference itself, against the definition: central differences of the NumPy loss."""
    data = _data()
    z1 = data["X"] @ data["W1"] + data["b1"]
    h = np.maximum(z1, 0)
    import types
    v = types.SimpleNamespace(**data, z1=z1, h=h, logits=h @ data["W2"] + data["b2"])
    grads = backward(v)
    for name in ("W1", "b1", "W2", "b2"):
        numeric = np.zeros_like(data[name])
        for k in np.ndindex(data[name].shape):
            for sign in (1, -1):
                moved = {**data, name: data[name].copy()}
                moved[name][k] += sign * 1e-6
                numeric[k] += sign * _np_loss(**moved) / 2e-6
        np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("seed", range(5))
def test_a_right_backward_pass_passes_in_the_tapes_order(seed):
    r = classroom.check_backward(forward, _data(seed), backward)
    assert r.passed, r.message
    assert r.message == "Right: dlogits, db2, dh, dW2, dz1, db1, dW1, each as the tape computes it."


def _with(slip):
    def wrong(v):
        g = backward(v)
        g.update(slip(v, g))
        return g
    return wrong


SLIPS = [
    ("no 1/n", lambda v, g: {"logits": g["logits"] * N}, "logits",
     "you forgot the 1/n of a mean (n = 4)"),
    ("transpose", lambda v, g: {"W2": g["logits"].T @ v.h}, "W2", "Missing transpose: your dW2 has shape (3, 5)"),
    ("no batch sum", lambda v, g: {"b2": g["logits"]}, "b2", "No sum over the batch: your db2 has shape (4, 3)"),
    ("wrong axis", lambda v, g: {"b1": g["z1"].sum(axis=1)}, "b1",
     "Wrong axis: your db1 sums the upstream gradient over axis 1; b1 is broadcast over axis 0"),
    ("sign", lambda v, g: {"h": -g["h"]}, "h", "right size but the wrong sign"),
    ("relu of the output", lambda v, g: {"z1": g["h"] * (v.h >= 0)}, "z1",
     "Your dz1 is the upstream gradient unchanged: the local factor of the op that uses z1 is missing"),
    ("keepdims", lambda v, g: {"b2": g["logits"].sum(axis=0, keepdims=True)}, "b2",
     "Right numbers, wrong shape: your db2 has shape (1, 3), b2 has shape (3,)"),
]


@pytest.mark.parametrize("what, slip, name, words", SLIPS, ids=[s[0] for s in SLIPS])
def test_a_slip_is_named_and_marked_on_the_students_graph(what, slip, name, words):
    r = classroom.check_backward(forward, _data(), _with(slip))
    assert not r.passed
    assert words in r.message, r.message
    assert r.divergence.name == name and r.marked_label == name
    g = r.graph()
    assert "✗" in g.source and "where your backward pass first differs from the tape" in g.source
    assert f"d{name}: expected" in g.source
    assert "Upstream × local:" in r.message


def test_a_wrong_axis_is_named_when_the_shapes_agree():
    """A square batch (3 examples, 3 classes): db2 summed over axis 1 has b2's shape, and is still named."""
    rng = np.random.default_rng(3)
    data = dict(X=rng.normal(size=(3, D)), y=np.array([0, 2, 1]), W1=rng.normal(size=(D, H)) * 0.7,
                b1=rng.normal(size=H) * 0.3, W2=rng.normal(size=(H, 3)) * 0.7, b2=rng.normal(size=3) * 0.3)
    r = classroom.check_backward(forward, data, _with(lambda v, g: {"b2": g["logits"].sum(axis=1)}))
    assert not r.passed and r.divergence.name == "b2"
    assert "Wrong axis: your db2 sums the upstream gradient over axis 1; b2 is broadcast over axis 0" in r.message


@pytest.mark.parametrize("wrong, name, words", [
    (lambda v, g: {"W2": g["logits"] @ v.h.T}, "W2", "Your dW2 is Ḡ·Aᵀ, the product in the wrong order"),
    (lambda v, g: {"h": g["logits"] @ v.W2}, "h", "Your dh is Ḡ·B without transposing B"),
])
def test_a_matmul_factor_untransposed_is_named_when_the_shapes_agree(wrong, name, words):
    """All square (3 examples, 3 features, 3 hidden units, 3 classes): only the numbers can tell these slips."""
    rng = np.random.default_rng(5)
    data = dict(X=rng.normal(size=(3, 3)), y=np.array([0, 2, 1]), W1=rng.normal(size=(3, 3)) * 0.7,
                b1=rng.normal(size=3) * 0.3, W2=rng.normal(size=(3, 3)) * 0.7, b2=rng.normal(size=3) * 0.3)
    r = classroom.check_backward(forward, data, _with(wrong))
    assert not r.passed and r.divergence.name == name
    assert words in r.message, r.message


def test_upstream_times_local_names_the_matmul_rule_and_its_operands():
    r = classroom.check_backward(forward, _data(), _with(lambda v, g: {"W1": g["W1"] * 2}))
    assert "MatMul (A @ B, A = X, B = W1)" in r.message and "Aᵀ @ upstream" in r.message
    assert "dL/d(MatMul output)" in r.message and "factor" in r.message and "broadcasting" not in r.message


def test_the_first_wrong_tensor_in_backward_order_is_the_one_marked():
    """Two wrong answers: the one the tape reaches first (nearest the loss) is reported."""
    r = classroom.check_backward(forward, _data(), _with(lambda v, g: {"W1": g["W1"] * 2, "h": g["h"] + 1}))
    assert r.divergence.name == "h" and "Right so far: dlogits, db2." in r.message


@pytest.mark.parametrize("seed", range(42))
def test_no_wrong_answer_passes(seed):
    """Generated wrong answers (scaled, shifted, transposed, unsummed, one entry off, swapped) all fail."""
    rng = np.random.default_rng(seed)
    data = _data(seed)
    name = ["logits", "W2", "b2", "h", "z1", "W1", "b1"][seed % 7]
    kind = seed // 7 % 6

    def spoil(v, g):
        t = np.array(g[name], dtype=np.float64)
        if kind == 0:
            t = t * rng.choice([0.5, 2.0, -1.0, 1.01])
        elif kind == 1:
            t = t.T if t.ndim == 2 else t[::-1].copy()
        elif kind == 2:
            t = np.broadcast_to(t, (N,) + t.shape).copy() if t.ndim == 1 else t.sum(axis=0)
        elif kind == 3:
            t.reshape(-1)[rng.integers(t.size)] += 0.05 + abs(t).max()
        elif kind == 4:
            t = t + 0.01
        else:
            t = np.zeros_like(t) if np.any(t) else t + 1
        return {name: t}
    r = classroom.check_backward(forward, data, _with(spoil))
    assert not r.passed and r.divergence.name == name, (name, kind, r.message)


def test_required_names_must_be_answered():
    r = classroom.check_backward(forward, _data(), lambda v: {"logits": backward(v)["logits"]},
                                 required=("logits", "W2"))
    assert not r.passed and "You gave no dW2." in r.message


def test_a_gradient_given_where_the_tape_gives_none():
    def fwd(x, w):
        unused = w * 2.0
        return dict(unused=unused, loss=ad.reduce_sum(x * x))
    r = classroom.check_backward(fwd, {"x": np.array([1.0, 2.0]), "w": np.array([3.0])},
                                 {"x": np.array([2.0, 4.0]), "w": np.array([2.0])})
    assert not r.passed and "no gradient reaches w (the tape gives None)" in r.message
    ok = classroom.check_backward(fwd, {"x": np.array([1.0, 2.0]), "w": np.array([3.0])},
                                  {"x": np.array([2.0, 4.0]), "w": None})
    assert ok.passed, ok.message


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="forward must return a dict"):
        classroom.check_backward(lambda x: x * 2.0, {"x": 1.0}, {})
    with pytest.raises(KeyError, match=r"backward gives \['W3'\]"):
        classroom.check_backward(forward, _data(), {"W3": np.zeros(3)})
    with pytest.raises(KeyError, match="returned no 'loss'"):
        classroom.check_backward(lambda x: {"y": x * 2.0}, {"x": 1.0}, {})
    with pytest.raises(TypeError, match="inputs must be a dict"):
        classroom.check_backward(forward, [1.0], {})
    with pytest.raises(TypeError, match="your dW2 must be numbers .* got str 'abc'"):
        classroom.check_backward(forward, _data(), {"W2": "abc"})
    with pytest.raises(AttributeError, match=r"the forward values have no 'nope': they are \['W1', 'W2', 'X'"):
        classroom.check_backward(forward, _data(), lambda v: {"logits": v.nope})
    with pytest.raises(TypeError, match="input 'x' must be numbers"):
        classroom.check_backward(forward, {"x": "abc"}, {})
