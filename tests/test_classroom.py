"""The exercise checkers: right answers pass, wrong ones fail and say where."""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import classroom

X = np.array([0.3, 1.2, -0.7])


def sin_rule(op, grad):
    return grad * ad.cos(op.inputs[0])


def sin_rule_wrong(op, grad):
    return grad * ad.sin(op.inputs[0])   # the classic slip: sin instead of cos


def contrast_rule(op, grad):
    images, factor = op.inputs
    mean = ad.reduce_mean(images, axis=[-3, -2], keepdims=True)
    g_mean = ad.reduce_mean(grad, axis=[-3, -2], keepdims=True)
    return grad * factor + g_mean * (1.0 - factor), ad.reduce_sum(grad * (images - mean))


def test_right_rule_passes():
    r = classroom.check_rule("Sin", sin_rule, lambda x: ad.sin(x) * x, X)
    assert r.passed and bool(r)
    assert r.divergence is None
    assert "matches finite differences" in r.message
    np.testing.assert_allclose(r.theoretical[0], r.numerical[0], atol=1e-6)


def test_wrong_rule_fails_naming_the_node_where_numbers_diverge():
    # sin(sin(x)) * x: two Sin nodes; backward reaches the outer one first (step 2, after Mul).
    r = classroom.check_rule("Sin", sin_rule_wrong, lambda x: ad.sin(ad.sin(x)) * x, X)
    assert not r.passed and not bool(r)
    d = r.divergence
    assert (d.op_type, d.step, d.input_index) == ("Sin", 2, 0)
    # The upstream gradient it got is right (Mul's rule is built in): the rule's output is what differs.
    inner = np.sin(X)
    np.testing.assert_allclose(d.expected, d.upstream * np.cos(inner), rtol=1e-6)
    np.testing.assert_allclose(d.got, d.upstream * np.sin(inner), rtol=1e-6)
    assert "node 'Sin'" in r.message and "backward step 2" in r.message


def test_wrong_rule_graph_marks_only_the_diverging_node():
    r = classroom.check_rule("Sin", sin_rule_wrong, lambda x: ad.sin(ad.sin(x)) * x, X)
    g = r.graph()
    broken = [n for n in g.model.nodes if n.broken]
    assert [n.label for n in broken] == ["Sin"]
    assert sum(n.label == "Sin" for n in g.model.nodes) == 2      # the other Sin is not marked
    assert broken[0]._raw == r.divergence.tensor
    assert "rule sent" in broken[0].notes[-1]
    assert "penwidth=3.2" in g.source
    assert r.marked_label == "Sin"


def test_the_registry_is_left_as_it_was():
    classroom.check_rule("Sin", sin_rule_wrong, ad.sin, X)
    x = ad.constant(X)
    with ad.GradientTape() as t:
        t.watch(x)
        y = ad.sin(x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), np.cos(X), rtol=1e-6)
    # An op with no rule stays without one: the guide's LookupError still happens.
    classroom.check_rule("AdjustContrastv2", contrast_rule, lambda im, d: ad.image.adjust_contrast(im, d),
                         [np.ones((2, 2, 3)), 0.5])
    img = ad.Variable(np.ones((1, 1, 3), dtype=np.float32))
    with ad.GradientTape() as t:
        out = ad.image.adjust_contrast(img, 0.1)
    with pytest.raises(LookupError, match="AdjustContrastv2"):
        t.gradient(out, img)


def test_rule_for_an_op_without_one():
    rng = np.random.default_rng(0)
    images = rng.uniform(size=(2, 2, 3))
    f = lambda im, d: ad.reduce_sum(ad.image.adjust_contrast(im, d) ** 2)  # noqa: E731
    assert classroom.check_rule("AdjustContrastv2", contrast_rule, f, [images, 0.4]).passed

    def forgot_the_mean(op, grad):
        images, factor = op.inputs
        return grad * factor, ad.reduce_sum(grad * images)

    r = classroom.check_rule("AdjustContrastv2", forgot_the_mean, f, [images, 0.4])
    assert not r.passed
    assert (r.divergence.op_type, r.divergence.input_index) == ("AdjustContrastv2", 0)


def test_custom_gradient_right_and_wrong():
    @ad.custom_gradient
    def log1pexp(x):
        e = ad.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return ad.math.log(1 + e), grad

    @ad.custom_gradient
    def log1pexp_wrong(x):
        e = ad.exp(x)

        def grad(upstream):
            return upstream * e
        return ad.math.log(1 + e), grad

    xs = np.array([0.0, 2.0])
    assert classroom.check_rule(log1pexp, xs).passed
    r = classroom.check_rule(log1pexp_wrong, lambda x: log1pexp_wrong(2.0 * x) + x, xs)
    assert not r.passed
    assert r.divergence.op_type == "IdentityN"
    np.testing.assert_allclose(r.divergence.got, r.divergence.upstream * np.exp(2 * xs), rtol=1e-6)
    assert "custom gradient of log1pexp_wrong" in r.message


def test_a_rule_that_raises_is_reported_but_a_todo_stops():
    def broken(op, grad):
        return grad * op.inputs[5]

    r = classroom.check_rule("Sin", broken, ad.sin, X)
    assert not r.passed and "raised IndexError" in r.message

    def todo(op, grad):
        raise NotImplementedError("write the rule")

    with pytest.raises(NotImplementedError):
        classroom.check_rule("Sin", todo, ad.sin, X)


def test_f_must_use_the_op():
    r = classroom.check_rule("Cos", sin_rule, ad.sin, X)
    assert not r.passed and "never used an op of type Cos" in r.message
    with pytest.raises(LookupError, match="no op type named 'Sine'"):
        classroom.check_rule("Sine", sin_rule, ad.sin, X)


def test_prediction_right_and_wrong():
    cube = lambda x: x * x * x  # noqa: E731
    assert classroom.check_prediction(cube, 2.0, 12.0).passed
    r = classroom.check_prediction(cube, 2.0, 6.0)
    assert not r.passed
    assert "you predicted 6, the tape gives 12" in r.message
    assert r.marked_label == "x"


def test_prediction_of_none_uses_explain():
    x0 = ad.Variable(3.0, name="x0")
    x1 = ad.Variable(3.0, name="x1", trainable=False)
    f = lambda a, b: a ** 2 + b ** 2  # noqa: E731
    assert classroom.check_prediction(f, [x0, x1], [6.0, None]).passed
    r = classroom.check_prediction(f, [x0, x1], [6.0, 6.0])
    assert not r.passed
    assert r.explanation is not None and r.explanation.reason == "not_trainable"
    assert "trainable=False" in r.message
    html = r._repr_html_()
    assert "Not yet" in html and "<svg" in html
