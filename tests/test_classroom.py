"""The exercise checkers: right answers pass (at ties and kinks too), wrong ones fail and say where and why.

Right values come from closed-form derivatives (cos, tanh' = 1 - tanh², the norm's x/‖x‖), from
TensorFlow's documented conventions (``tf.maximum`` sends ties to its first input, ``relu'(0) = 0``),
or from finite differences; messages are pinned for each mistake the checker names.
"""
import html
import inspect

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import classroom

X = np.array([0.3, 1.2, -0.7])
A = np.array([0.5, -1.0, 2.0])
B = np.array([1.0, -2.0, 0.0])


def sin_rule(op, grad):
    return grad * ad.cos(op.inputs[0])


def sin_rule_wrong(op, grad):
    return grad * ad.sin(op.inputs[0])   # the classic slip: sin instead of cos


def contrast_rule(op, grad):
    images, factor = op.inputs
    mean = ad.reduce_mean(images, axis=[-3, -2], keepdims=True)
    g_mean = ad.reduce_mean(grad, axis=[-3, -2], keepdims=True)
    return grad * factor + g_mean * (1.0 - factor), ad.reduce_sum(grad * (images - mean))


def maximum_ties_to_a(op, grad):
    a, b = op.inputs
    a_wins = ad.greater_equal(a, b)
    zeros = ad.zeros_like(grad)
    return ad.where(a_wins, grad, zeros), ad.where(a_wins, zeros, grad)


def maximum_split_ties(op, grad):
    a, b = op.inputs
    share = ad.cast(ad.greater(a, b), grad.dtype) + 0.5 * ad.cast(ad.equal(a, b), grad.dtype)
    return grad * share, grad * (1.0 - share)


def tanh_twice(x):
    return ad.tanh(ad.tanh(x)) * x


def test_right_rule_passes_at_every_point():
    r = classroom.check_rule("Sin", sin_rule, lambda x: ad.sin(x) * x, X)
    assert r.passed and bool(r)
    assert r.divergence is None
    assert r.message.startswith("The rule for Sin matches finite differences at 3 points (the given inputs; "
                                "x = 0; a random point)")
    np.testing.assert_allclose(r.theoretical[0], r.numerical[0], atol=1e-6)
    # d/dx (x sin x) = sin x + x cos x, per element (the Jacobian is diagonal)
    np.testing.assert_allclose(np.diag(r.theoretical[0]), np.sin(X) + X * np.cos(X), rtol=1e-6)


def test_wrong_rule_fails_naming_the_node_where_numbers_diverge():
    # sin(sin(x)) * x: two Sin nodes; backward reaches the outer one first (step 2, after Mul).
    r = classroom.check_rule("Sin", sin_rule_wrong, lambda x: ad.sin(ad.sin(x)) * x, X)
    assert not r.passed and not bool(r)
    d = r.divergence
    assert (d.op_type, d.step, d.input_index, d.input_name) == ("Sin", 2, 0, "a")  # an intermediate: the formula's name
    # The upstream gradient it got is right (Mul's rule is built in): the rule's output is what differs.
    inner = np.sin(X)
    np.testing.assert_allclose(d.expected, d.upstream * np.cos(inner), rtol=1e-6)
    np.testing.assert_allclose(d.got, d.upstream * np.sin(inner), rtol=1e-6)
    assert "node 'Sin' (backward step 2)" in r.message


def test_wrong_rule_graph_marks_only_the_diverging_node_in_its_own_style():
    r = classroom.check_rule("Sin", sin_rule_wrong, lambda x: ad.sin(ad.sin(x)) * x, X)
    g = r.graph()
    broken = [n for n in g.model.nodes if n.broken]
    assert [n.label for n in broken] == ["Sin"]
    assert sum(n.label == "Sin" for n in g.model.nodes) == 2      # the other Sin is not marked
    assert broken[0]._raw == r.divergence.tensor
    assert broken[0].notes[-1].startswith("Rule sent [")
    assert "✗ Sin" in g.source and html.escape(classroom.RULE_MARK) in g.source   # a cross, and a legend entry saying why
    assert r.marked_label == "Sin"


def test_the_marked_picture_keeps_the_options_asked_for():
    r = classroom.check_rule("Sin", sin_rule_wrong, lambda x: ad.sin(ad.sin(x)) * x, X)
    g = r.graph(detail="full", rankdir="TB")
    assert "rankdir=TB" in g.source and "source · tape.watch" in g.source   # full detail: how x is watched
    assert "✗ Sin" in g.source and html.escape(classroom.RULE_MARK) in g.source


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


def test_custom_gradient_right_and_wrong_named_by_the_function():
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
    assert r.divergence.op_type == "IdentityN" and r.divergence.name == "log1pexp_wrong"
    np.testing.assert_allclose(r.divergence.got, r.divergence.upstream * np.exp(2 * xs), rtol=1e-6)
    assert "custom gradient of log1pexp_wrong" in r.message and "node 'log1pexp_wrong'" in r.message
    assert r.marked_label == "log1pexp_wrong"            # the picture names it too, not IdentityN
    assert "log1pexp_wrong" in {n.label for n in r.graph().model.nodes}


def test_the_textbook_norm_gradient_fails_at_the_origin_in_words():
    """Exercise 2's trap: x/‖x‖ is right at (3, -4) and nan at 0; the checker tries the origin and says so."""
    @ad.custom_gradient
    def safe_norm(x):
        n = ad.sqrt(ad.reduce_sum(x * x))

        def grad(upstream):
            return upstream * x / n
        return n, grad

    r = classroom.check_rule(safe_norm, np.array([3.0, -4.0]))
    assert not r.passed
    assert r.message.startswith("The custom gradient of safe_norm is right at the given inputs, but not at x = 0.")
    assert "Your rule returns nan at x = 0" in r.message
    assert np.all(np.isnan(r.divergence.got)) and r.divergence.point == "x = 0"
    assert r.marked_label == "safe_norm"


def test_a_guarded_norm_passes_at_the_origin():
    @ad.custom_gradient
    def safe_norm(x):
        n = ad.sqrt(ad.reduce_sum(x * x))

        def grad(upstream):
            safe = ad.where(ad.greater(n, 0.0), n, ad.ones_like(n))
            return ad.where(ad.greater(n, 0.0), upstream * x / safe, ad.zeros_like(x))
        return n, grad

    r = classroom.check_rule(safe_norm, np.array([3.0, -4.0]))
    assert r.passed and "x = 0" in r.message
    # x/‖x‖ at (3, -4): (0.6, -0.8)
    np.testing.assert_allclose(r.theoretical[0].ravel(), [0.6, -0.8], rtol=1e-6)


def test_maximum_with_ties_to_a_passes_at_ties_as_tensorflow_does():
    f = lambda a, b: ad.maximum(a, b) * a  # noqa: E731
    r = classroom.check_rule("Maximum", maximum_ties_to_a, f, [A, B])
    assert r.passed and "a = b (a tie)" in r.message
    tied = classroom.check_rule("Maximum", maximum_ties_to_a, f, [A, A.copy()])
    assert tied.passed and "documented convention" in tied.message
    # TF: d/da [max(a, b) * a] at a == b is max + a·1 = 2a (the tie goes to a); d/db = 0.
    np.testing.assert_allclose(np.diag(tied.theoretical[0]), 2 * A, rtol=1e-6)
    np.testing.assert_allclose(tied.theoretical[1], 0.0, atol=1e-12)


def test_maximum_that_splits_ties_fails_at_the_tie_with_the_convention_named():
    f = lambda a, b: ad.maximum(a, b) * a  # noqa: E731
    r = classroom.check_rule("Maximum", maximum_split_ties, f, [A, B])
    assert not r.passed
    assert r.message.startswith("The rule for Maximum is right at the given inputs, but not at "
                                "a = b = [0.5, -1.0, 2.0] (a tie).")
    assert "TensorFlow's" in r.message and "splits the gradient in half" in r.message
    np.testing.assert_allclose(r.divergence.got, r.divergence.expected / 2, rtol=1e-6)


@pytest.mark.parametrize("op_type, f, x", [
    ("Maximum", lambda a, b: ad.maximum(a, b), [np.array([1.0, 0.0]), np.array([1.0, 2.0])]),
    ("Relu", ad.nn.relu, np.array([-1.0, 0.0, 2.0])),
    ("Abs", ad.abs, np.array([-1.0, 0.0, 2.0])),
])
def test_built_in_rules_pass_at_their_kinks(op_type, f, x):
    r = classroom.check_rule(op_type, None, f, x)
    assert r.passed, r.message


def test_hint_missing_upstream_factor():
    def tanh_local(op, grad):
        y = op.outputs[0]
        return 1.0 - y * y

    r = classroom.check_rule("Tanh", tanh_local, tanh_twice, X)
    assert not r.passed and "multiply by the upstream gradient `grad`" in r.message
    assert r.message.count("The upstream gradient is not 1 here") == 1   # said once, with the hint
    d = r.divergence
    np.testing.assert_allclose(d.got * d.upstream, d.expected, rtol=1e-6)


def test_hint_missing_upstream_factor_with_a_scalar_upstream():
    @ad.custom_gradient
    def norm(x):
        n = ad.sqrt(ad.reduce_sum(x * x))

        def grad(upstream):
            return x / n
        return n, grad

    r = classroom.check_rule(norm, np.array([3.0, -4.0]))
    assert not r.passed and "multiply by the upstream gradient `grad`" in r.message
    np.testing.assert_allclose(r.divergence.got, [0.6, -0.8], rtol=1e-6)   # x/‖x‖ alone


def test_ties_sent_to_the_second_input_are_named_as_such():
    def ties_to_b(op, grad):
        a, b = op.inputs
        a_wins = ad.greater(a, b)
        zeros = ad.zeros_like(grad)
        return ad.where(a_wins, grad, zeros), ad.where(a_wins, zeros, grad)

    r = classroom.check_rule("Maximum", ties_to_b, lambda a, b: ad.maximum(a, b) * a, [A, B])
    assert not r.passed and "(a tie)" in r.message
    assert "On this tie your rule sends the gradient to b; the convention sends all of it to a" in r.message
    assert "swapped" not in r.message


def test_hint_sign_flip():
    def tanh_flipped(op, grad):
        y = op.outputs[0]
        return grad * (y * y - 1.0)

    r = classroom.check_rule("Tanh", tanh_flipped, tanh_twice, X)
    assert not r.passed and "the wrong sign" in r.message


def test_hint_swapped_inputs():
    def swapped(op, grad):
        to_a, to_b = maximum_ties_to_a(op, grad)
        return to_b, to_a

    r = classroom.check_rule("Maximum", swapped, lambda a, b: ad.maximum(a, b) * a, [A, B])
    assert not r.passed and "The gradients of a and b are swapped" in r.message


def test_wrong_count_and_wrong_shape_are_named():
    f = lambda a, b: ad.maximum(a, b) * a  # noqa: E731
    one = classroom.check_rule("Maximum", lambda op, grad: grad, f, [A, B])
    assert one.message == ("The rule for Maximum returned 1 gradient, but Maximum has 2 inputs (a, b): return one "
                           "gradient per input, in the order of op.inputs.")
    column = classroom.check_rule("Maximum", lambda op, grad: (grad[:, None], grad[:, None]), f, [A, B])
    assert column.message == ("The rule for Maximum sent a gradient of shape (3, 1) to a, whose shape is (3,): a "
                              "gradient has the shape of its input.")
    assert one.marked_label == column.marked_label == "Maximum"


def test_a_rule_that_raises_keeps_its_line_but_a_todo_stops():
    def broken(op, grad):
        return grad * op.output[0]

    line = inspect.getsourcelines(broken)[1] + 1
    r = classroom.check_rule("Sin", broken, ad.sin, X)
    assert not r.passed
    assert r.message == (f"Running the rule for Sin raised AttributeError: no attribute 'output', in broken, "
                         f"line {line}: return grad * op.output[0]. A rule's op has .inputs and .outputs (lists "
                         "of tensors) and .type.")
    assert r.marked_label == "Sin"

    def todo(op, grad):
        raise NotImplementedError("write the rule")

    with pytest.raises(NotImplementedError):
        classroom.check_rule("Sin", todo, ad.sin, X)


def test_f_must_use_the_op():
    r = classroom.check_rule("Cos", sin_rule, ad.sin, X)
    assert not r.passed and "never used an op of type Cos" in r.message
    with pytest.raises(LookupError, match="no op type named 'Sine'"):
        classroom.check_rule("Sine", sin_rule, ad.sin, X)


def sum_to_shape(g, shape):
    while len(g.shape) > len(shape):
        g = ad.reduce_sum(g, axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = ad.reduce_sum(g, axis=axis, keepdims=True)
    return g


def test_a_rule_sums_over_broadcast_dimensions_itself_as_in_tensorflow():
    x = np.arange(6.0).reshape(2, 3) / 5
    w = np.array([0.5, -1.0, 2.0])
    f = lambda x, w: ad.reduce_sum(ad.multiply(x, w) ** 2)  # noqa: E731

    def mul_unsummed(op, grad):
        a, b = op.inputs
        return grad * b, grad * a

    def mul_summed(op, grad):
        a, b = op.inputs
        return sum_to_shape(grad * b, a.shape), sum_to_shape(grad * a, b.shape)

    # TensorFlow's way by default: a rule sums over broadcast dimensions itself (TF's own Mul rule does,
    # with BroadcastGradientArgs); only when told otherwise does this package's tape sum for it.
    assert classroom.check_rule("Mul", mul_unsummed, f, [x, w], exact_shapes=False).passed
    assert classroom.check_rule("Mul", None, f, [x, w]).passed   # the built-in rule leaves the sum to this tape
    r = classroom.check_rule("Mul", mul_unsummed, f, [x, w])
    assert not r.passed and r.marked_label == "Mul"
    assert r.message == ("The rule for Mul sent a gradient of shape (2, 3) to w, whose shape is (3,). w was "
                         "broadcast (copied) along axis 0 to make the output (one copy per example of the batch: a "
                         "missing sum over the batch), so its gradient is the sum over the copies: "
                         "ad.reduce_sum(g, axis=0). In TensorFlow a gradient rule does this sum itself: the "
                         "tape does not sum for you.")
    assert r.message == classroom.check_rule("Mul", mul_unsummed, f, [x, w], exact_shapes=True).message
    ok = classroom.check_rule("Mul", mul_summed, f, [x, w])
    assert ok.passed, ok.message
    # d/dw sum((x w)^2) = sum over rows of 2 x² w
    np.testing.assert_allclose(ok.theoretical[1].ravel(), (2 * x**2 * w).sum(axis=0), rtol=1e-6)


def test_prediction_right_and_wrong():
    cube = lambda x: x * x * x  # noqa: E731
    assert classroom.check_prediction(cube, 2.0, 12.0).passed
    r = classroom.check_prediction(cube, 2.0, 6.0)
    assert not r.passed
    assert r.message == "For x you predicted 6.0; the tape gives 12.0."   # one number: no ratio to name
    assert r.marked_label == "x" and html.escape(classroom.PREDICTION_MARK) in r.graph().source


def test_prediction_names_inputs_by_the_function_s_parameters():
    r = classroom.check_prediction(lambda a, b: a * b + ad.sin(a), [0.0, 5.0], [5.0, 1.0])
    assert r.message.startswith("For a you predicted 5.0; the tape gives 6.0.")   # b + cos(0) = 6
    assert "Also check: b." in r.message and r.marked_label == "a"
    zero = classroom.check_prediction(lambda a, b: a * b + ad.sin(a), [0.0, 5.0], [6.0, None])
    assert zero.message == ("For b you predicted None; the tape gives 0.0. A path of recorded ops joins the target to "
                            "this input, so a gradient flows. Here it happens to be 0: None means no path at all, 0 "
                            "means a path whose slope is 0 at this point.")   # ∂(ab)/∂b = a = 0


def test_prediction_of_the_wrong_length_or_shape():
    f = lambda x: ad.reduce_sum(x * x)  # noqa: E731
    x = np.array([1.0, 2.0, 3.0], np.float32)
    short = classroom.check_prediction(f, x, [2.0, 4.0])
    assert short.message == ("For x you predicted 2 numbers, but x has 3 elements (shape (3,)): a gradient has one "
                             "number per element of its input.")
    column = classroom.check_prediction(f, x, np.array([[2.0], [4.0], [6.0]]))
    assert column.message == "Your prediction for x has shape (3, 1); a gradient has the shape of its input, (3,)."
    assert classroom.check_prediction(f, x, [2.0, 4.0, 6.0]).passed      # 2x
    one = classroom.check_prediction(f, x, 12.0)
    assert one.message == ("For x you predicted one number, 12.0, but x has 3 elements (shape (3,)): the tape gives "
                           "[2.0, 4.0, 6.0], one number per element.")
    # The shape is part of the answer: one number for a vector is wrong even when every element is that number.
    same = classroom.check_prediction(lambda x: ad.reduce_sum(2.0 * x), x, 2.0)
    assert not same.passed and same.message == (
        "For x you predicted one number, 2.0, but x has 3 elements (shape (3,)): the tape gives [2.0, 2.0, 2.0], "
        "one number per element.")
    assert classroom.check_prediction(lambda x: ad.reduce_sum(2.0 * x), x, [2.0, 2.0, 2.0]).passed
    wrapped = classroom.check_prediction(lambda x: x * x, 3.0, [6.0])
    assert not wrapped.passed and "shape (1,)" in wrapped.message and "()" in wrapped.message


def exercise_3(a, b, c):
    via_numpy = ad.constant(np.square(c.numpy()))
    return a * b + via_numpy


def test_prediction_of_none_uses_explain():
    x0 = ad.Variable(3.0, name="x0")
    x1 = ad.Variable(3.0, name="x1", trainable=False)
    f = lambda a, b: a ** 2 + b ** 2  # noqa: E731
    assert classroom.check_prediction(f, [x0, x1], [6.0, None]).passed
    r = classroom.check_prediction(f, [x0, x1], [6.0, 6.0])
    assert not r.passed
    assert r.explanation is not None and r.explanation.reason == "not_trainable"
    assert "trainable=False" in r.message and "depends on" not in r.message
    html = r._repr_html_()
    assert "Not yet" in html and "<svg" in html


def test_exercise_3_wrong_answers_name_the_mistake():
    a = ad.Variable(2.0, name="a")
    b = ad.Variable(3.0, name="b", trainable=False)
    c = ad.Variable(4.0, name="c")
    assert classroom.check_prediction(exercise_3, [a, b, c], [3.0, None, None]).passed
    for_b = classroom.check_prediction(exercise_3, [a, b, c], [3.0, 2.0, None])
    assert for_b.message.startswith("For b you predicted 2.0; the tape gives None. The gradient is None because "
                                    "variable 'b' was created with trainable=False.")
    assert for_b.marked_label == "b"
    for_c = classroom.check_prediction(exercise_3, [a, b, c], [3.0, None, 8.0])
    assert for_c.message.startswith("For c you predicted 8.0; the tape gives None. The gradient is None because "
                                    "variable 'c' went around the tape: .numpy() turned it into a plain number")
    assert ".numpy()" in for_c.message and "the constant marked on the graph moves with it" in for_c.message
    marked = {n.label for n in for_c.explanation.graph.model.nodes if n.broken}
    assert marked == {"c", "const"}
    const = next(n for n in for_c.explanation.graph.model.nodes if n.label == "const")
    assert const.value.head == (16.0,)       # c² = 16: where c's value came back


def test_an_error_inside_a_custom_gradient_marks_its_node():
    @ad.custom_gradient
    def scaled(x):
        def grad(upstream):
            return upstream * x.no_such_thing
        return 3.0 * x, grad

    r = classroom.check_rule(scaled, lambda x: ad.sin(scaled(x)), X)
    assert not r.passed and r.message.startswith("Running the custom gradient of scaled raised AttributeError")
    assert r.marked_label == "scaled"
    marked = [n for n in r.graph().model.nodes if n.broken]
    assert [n.label for n in marked] == ["scaled"]

    @ad.custom_gradient
    def fails_forward(x):
        raise ValueError("no value")

    r = classroom.check_rule(fails_forward, X)   # the forward pass failed: no node's rule to blame
    assert not r.passed and "raised ValueError: no value" in r.message and r.marked_label is None


def test_one_name_per_input_in_every_message():
    # Mul's second input is the parameter w of f: every message calls it w, never the formula's b.
    x = np.arange(6.0).reshape(2, 3) / 5
    w = np.array([0.5, -1.0, 2.0])
    f = lambda x, w: ad.reduce_sum(ad.multiply(x, w) ** 2)  # noqa: E731
    to_x = lambda op, grad: grad * op.inputs[1]  # noqa: E731
    shape = classroom.check_rule("Mul", lambda op, grad: (to_x(op, grad), grad[:, :1]), f, [x, w])
    unsummed = classroom.check_rule("Mul", lambda op, grad: (to_x(op, grad), grad * op.inputs[0]), f, [x, w])
    doubled = classroom.check_rule(
        "Mul", lambda op, grad: (to_x(op, grad), 2.0 * sum_to_shape(grad * op.inputs[0], (3,))), f, [x, w])
    assert "sent a gradient of shape (2, 1) to w, whose shape is (3,)" in shape.message
    assert "sent a gradient of shape (2, 3) to w, whose shape is (3,)" in unsummed.message
    assert doubled.divergence.input_name == "w" and "to w;" in doubled.message
    for r in (shape, unsummed, doubled):
        assert " b " not in r.message and " b," not in r.message and " b:" not in r.message, r.message
    # A formula's slot that is also a parameter's name is called by its place: a is f's a, Mul's first input sin(a).
    g = lambda a, b: ad.multiply(ad.sin(a), b)  # noqa: E731
    r = classroom.check_rule("Mul", lambda op, grad: (grad, grad * op.inputs[0]), g, [A, B])
    assert r.divergence.input_name == "Mul's first input" and "the rule sent" in r.message
    np.testing.assert_allclose(r.divergence.expected, r.divergence.upstream * B, rtol=1e-6)   # ∂(u·b)/∂u = b


# -- mistakes named, not only numbered (each right value is the closed form: tanh' = 1 - y², (a/b)' ...) ----
def tanh_right(op, grad):
    return grad * (1.0 - op.outputs[0] ** 2)


MATS = [np.array([[0.0, 1.0], [2.0, 3.0]]) / 3, np.array([[1.0, -2.0], [0.5, 1.5]])]
RECT = [np.arange(6.0).reshape(2, 3) / 3, np.arange(12.0).reshape(3, 4) / 7]
XB = [np.arange(12.0).reshape(4, 3) / 5, np.array([0.5, -1.0, 2.0])]
bias_loss = lambda x, b: ad.reduce_sum((x + b) ** 2)  # noqa: E731
matmul_loss = lambda a, b: ad.reduce_sum(ad.matmul(a, b) ** 2)  # noqa: E731


@pytest.mark.parametrize("op_type, rule, f, x, words", [
    ("Tanh", lambda op, g: 2.0 * tanh_right(op, g), tanh_twice, X, "exactly twice the right ones: a factor 2"),
    ("Tanh", lambda op, g: 0.5 * tanh_right(op, g), tanh_twice, X, "exactly half the right ones"),
    ("Tanh", lambda op, g: 3.0 * tanh_right(op, g), tanh_twice, X, "exactly 3.0 times the right ones: a constant"),
    ("Tanh", lambda op, g: g * (1.0 - op.inputs[0] ** 2), tanh_twice, X,
     "reads the input op.inputs[0] where its formula needs the output op.outputs[0]"),
    ("Sin", lambda op, g: g * ad.cos(op.outputs[0]), lambda x: ad.sin(x) * x, X,
     "reads the output op.outputs[0] where its formula needs the input op.inputs[0]"),
    ("Tanh", lambda op, g: g * (1.0 - op.outputs[0]), tanh_twice, X, "needs y² (a missing square)"),
    ("RealDiv", lambda op, g: (g / op.inputs[0], -g * op.inputs[1] / op.inputs[0] ** 2),
     lambda a, b: ad.divide(a, b + 3.0) * a, [A, B], "operands swapped: it uses a where it needs RealDiv's second input"),
    ("Mean", lambda op, g: g * ad.ones_like(op.inputs[0]), lambda x: ad.reduce_mean(x * x) * 2.0, np.arange(4.0),
     "exactly 4 times the right ones: a sum where the formula has a mean"),
    ("Sum", lambda op, g: g * ad.ones_like(op.inputs[0]) / 4.0, lambda x: ad.reduce_sum(x * x) * 2.0,
     np.arange(4.0), "exactly 1/4 of the right ones: a mean where the formula has a sum"),
    ("MatMul", lambda op, g: (ad.matmul(g, op.inputs[1]), ad.matmul(ad.transpose(op.inputs[0]), g)), matmul_loss,
     MATS, "uses b where it needs its transpose bᵀ (a missing transpose)"),
    ("MatMul", lambda op, g: (ad.matmul(g, op.inputs[1]), ad.matmul(ad.transpose(op.inputs[0]), g)), matmul_loss,
     RECT, "needs transposes whose shapes fit: grad·bᵀ for a and aᵀ·grad for b"),
    ("MatMul", lambda op, g: (ad.matmul(g, ad.transpose(op.inputs[1])), ad.transpose(ad.matmul(
        ad.transpose(op.inputs[0]), g))), matmul_loss, RECT, "It has the transposed shape: a missing transpose"),
    ("Add", lambda op, g: (g, g), bias_loss, XB, "a missing sum over the batch"),
    ("Add", lambda op, g: (g, ad.reduce_sum(g, axis=1)), bias_loss, XB,
     "It looks summed over axis 1, but the input was copied along axis 0: sum over axis 0 instead"),
    ("Add", lambda op, g: (g, ad.reduce_sum(g, axis=1)), bias_loss, [np.arange(9.0).reshape(3, 3) / 5, XB[1]],
     "Your rule sums over the wrong axis: b was copied along axis 0 of the result"),   # square: same shape
    ("Mul", lambda op, g: (g * op.inputs[1], ad.reduce_sum(g * op.inputs[0], axis=1)),
     lambda x, w: ad.reduce_sum(ad.sin(x * w)), [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -2.0])],
     "sums over the wrong axis: w was copied along axis 0 of the result, so its gradient is the sum over axis 0 "
     "(ad.reduce_sum(g, axis=0)), not over axis 1"),   # square, and the local factor is x: not the upstream's sum
    ("Mul", lambda op, g: (g * op.inputs[0], g * op.inputs[1]), lambda a, b: a * b * a,
     [np.array([1.0, 2.0]), np.array([3.0, -1.0])],
     "The gradients of Mul's first input and a are swapped"),   # a·b is unnamed: called by its place, not "a"
    ("Maximum", lambda op, g: (g * ad.cast(op.inputs[0] >= op.inputs[1], g.dtype),
                               g * ad.cast(op.inputs[1] >= op.inputs[0], g.dtype)),
     lambda a, b: ad.maximum(a, b) * a, [np.array([1.0, 2.0, -1.0]), np.array([0.5, 3.0, -1.0])],
     "On this tie your rule sends the whole gradient to every input, so it is counted twice"),   # a = b = -1
    ("Maximum", lambda op, g: (g * ad.cast(op.inputs[0] < op.inputs[1], g.dtype),
                               g * ad.cast(op.inputs[0] >= op.inputs[1], g.dtype)),
     lambda a, b: ad.maximum(a, b) * a, [np.array([1.0, 2.0, -1.0]), np.array([0.5, 3.0, -1.0])],
     "The gradients of a and b are swapped"),   # wrong away from the tie too: not a tie's convention
])
def test_a_mistake_is_named_not_only_numbered(op_type, rule, f, x, words):
    r = classroom.check_rule(op_type, rule, f, x)
    assert not r.passed and words in r.message, r.message
    assert r.marked_label is not None


def test_a_square_rule_missing_its_input_is_not_called_a_constant_factor():
    # (x²)' = 2x; the rule 2·grad misses the x: not a constant ratio (x varies), and no slip above fits.
    r = classroom.check_rule("Square", lambda op, g: 2.0 * g, lambda x: ad.square(x) * x, X)
    assert not r.passed and "times the right ones" not in r.message
    np.testing.assert_allclose(r.divergence.expected, r.divergence.upstream * 2 * X, rtol=1e-6)


def test_the_upstream_note_only_where_the_upstream_is_not_1_nor_0():
    def tanh_local(op, grad):
        return 1.0 - op.outputs[0] ** 2

    wrong = classroom.check_rule("Sin", sin_rule_wrong, lambda x: ad.sin(ad.sin(x)) * x, X)
    assert wrong.message.count("The upstream gradient is not 1 here") == 1
    # Times 0 the upstream gradient of Tanh is 0: the note would not be true, and is left out.
    zero = classroom.check_rule("Tanh", tanh_local, lambda x: ad.tanh(x) * 0.0 + x, X)
    assert not zero.passed and "multiply by the upstream gradient `grad`" in zero.message
    np.testing.assert_array_equal(zero.divergence.upstream, 0.0)
    assert "not 1" not in zero.message


@pytest.mark.parametrize("f, x, predicted, words", [
    (lambda x: ad.reduce_sum(x * x), np.array([1.0, -2.0, 3.0], np.float32), [4.0, -8.0, 12.0],
     "exactly twice the right ones"),                                     # 2·2x: a factor 2
    (lambda x: ad.reduce_mean(x * x), np.array([1.0, -2.0, 3.0, 0.5], np.float32), [2.0, -4.0, 6.0, 1.0],
     "exactly 4 times the right ones: a sum where the formula has a mean"),   # 2x/4 is right
    (lambda x: ad.reduce_sum(x * x), np.array([1.0, -2.0, 3.0], np.float32), [-2.0, 4.0, -6.0], "the wrong sign"),
    (lambda a, b: ad.reduce_sum(a * b), [np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0], np.float32)],
     [[1.0, 2.0], [3.0, -1.0]], "Your predictions for a and b are swapped"),   # ∂/∂a = b, ∂/∂b = a
    (lambda m: ad.reduce_sum(ad.matmul(m, np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))),
     np.eye(2, dtype=np.float32), [[3.0, 3.0], [7.0, 7.0]], "the transpose of the tape's gradient"),   # 1·Bᵀ
])
def test_a_wrong_prediction_names_its_mistake(f, x, predicted, words):
    r = classroom.check_prediction(f, x, predicted)
    assert not r.passed and words in r.message, r.message


def test_a_wrong_number_for_none_names_the_input_as_f_does():
    """b is never used: the tape gives None, and every sentence calls the input b (never 'source')."""
    r = classroom.check_prediction(lambda a, b: a * 2.0, [2.0, 3.0], [2.0, 0.0])
    assert not r.passed and r.explanation is not None
    assert "For b you predicted 0.0; the tape gives None." in r.message
    assert "the source 'b'" in r.message and "'source'" not in r.message, r.message


@pytest.mark.parametrize("predicted", ["4", [[2.0], [2.0, 2.0]], {"x": 4.0}])
def test_a_prediction_that_is_not_numbers_is_refused_by_name(predicted):
    with pytest.raises(TypeError, match="check_prediction: the prediction for x must be None, a number or an array"):
        classroom.check_prediction(lambda x: ad.reduce_sum(x * x), np.array([1.0, 1.0, 1.0]), predicted)


def test_a_custom_gradient_missing_its_division_by_the_output_is_named():
    """‖x‖' = x/‖x‖; a rule that sends upstream·x is ‖x‖ = 5 times too large at (3, 4): named as the output."""
    @ad.custom_gradient
    def norm(x):
        y = ad.sqrt(ad.reduce_sum(x * x))

        def grad(upstream):
            return upstream * x
        return y, grad

    r = classroom.check_rule(norm, np.array([3.0, 4.0]))
    assert not r.passed and r.marked_label == "norm"
    np.testing.assert_allclose(r.divergence.expected, r.divergence.upstream * np.array([0.6, 0.8]), rtol=1e-6)
    assert "the right ones times the output y = 5.0: a division by the output is missing" in r.message, r.message


def test_zero_is_not_right_for_a_vanishing_gradient():
    """Ten sigmoids at 0: the product of their slopes σ(a)(1 - σ(a)), about 3.9e-7, is small but not 0."""
    def chain(x):
        for _ in range(10):
            x = ad.sigmoid(x)
        return x

    a, want = 0.0, 1.0
    for _ in range(10):
        s = 1 / (1 + np.exp(-a))
        want, a = want * s * (1 - s), s
    assert 3e-7 < want < 5e-7
    assert classroom.check_prediction(chain, 0.0, want).passed
    r = classroom.check_prediction(chain, 0.0, 0.0)
    assert not r.passed and "small, but it is not 0" in r.message and "wrong sign" not in r.message, r.message
    assert not classroom.check_prediction(chain, 0.0, 2 * want).passed
    assert "small" not in classroom.check_prediction(lambda x: x * x, 2.0, 0.0).message


def test_zeros_are_not_a_right_backward_pass_for_tiny_gradients():
    def forward(x):
        h = x
        for _ in range(10):
            h = ad.sigmoid(h)
        return {"loss": ad.reduce_sum(h)}

    x = np.zeros(2)
    r = classroom.check_backward(forward, {"x": x}, {"x": np.zeros(2)})
    assert not r.passed and r.divergence.name == "x"


def test_a_custom_gradient_at_a_kink_is_not_said_to_follow_a_convention():
    """max(x1, x2) at a tie has no documented convention: (0.3, 0.7) is a subgradient, and the verdict says so."""
    @ad.custom_gradient
    def pick(x):
        y = ad.reduce_max(x)

        def grad(upstream):
            tie = ad.equal(x[0], x[1])
            return upstream * ad.where(tie, ad.constant([0.3, 0.7], dtype=x.dtype), ad.cast(ad.equal(x, y), x.dtype))
        return y, grad

    r = classroom.check_rule(pick, np.array([2.0, 2.0]))
    assert r.passed, r.message
    assert "subgradient" in r.message and "convention" not in r.message
    builtin = classroom.check_rule("Relu", None, ad.nn.relu, np.array([-1.0, 0.0, 2.0]))
    assert builtin.passed and "the documented convention was followed" in builtin.message
