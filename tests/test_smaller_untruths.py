"""Pictures that say only what is true: legend examples from the picture, one precision on boxes and
arrows, the backward seed explained, layers' own names kept."""
import math
import re

import numpy as np
from test_player_values import logistic_trace

import autodiff_viz as ad
from autodiff_viz import tour


def _legend_text(source: str) -> str:
    """The words of a graph's DOT text (labels only, tags dropped), on one line."""
    return " ".join(re.sub(r"<[^>]*>", " ", source).replace("\u00a0", " ").split())


def test_legend_example_is_a_gradient_the_picture_shows():
    x = ad.Variable(3.5, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = ad.sin(x) * x
        t.gradient(y, x)
    g = ad.viz.graph(tr, style="default", detail="classroom")
    text = _legend_text(g.source)
    want = math.cos(3.5) * 3.5 + math.sin(3.5)         # d(x·sin x)/dx, closed form
    m = re.search(r"in a box: the gradient of the target y with respect to that tensor \(here ∂ (\S+) at x\)", text)
    if m is None:  # a small graph: the compact legend's one gradient box
        m = re.search(r"∂ (\S+) gradient", text)
    assert m is not None, text
    assert float(m.group(1)) == float(f"{want:.4g}")
    assert f"∂ {m.group(1)}" in text.replace(m.group(0), "")   # the same number in x's box
    assert "∂ 6.0" not in text and "∂ 3.0 on an arrow" not in text


def test_no_legend_number_when_the_picture_shows_no_single_number():
    x = ad.Variable([1.0, 2.0, 3.0], name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = x * x
        t.gradient(y, x)
    text = _legend_text(ad.viz.graph(tr).source)
    assert "(here" not in text and "∂ 6.0" not in text


def test_arrows_use_the_boxes_precision():
    # y = x·x + x at x = 1/3 (float64): the arrow into Add carries ∂ 1.0, the two into Mul carry x = 0.333...
    x = ad.Variable(np.float64(1 / 3), name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = x * x + x
        t.gradient(y, x)
    src = ad.viz.graph(tr, digits=6).source
    arrows = re.findall(r'-> n\d+ \[label=<<font color="[^"]+">∂ ([^<]+)</font>>', src)
    assert "0.333333" in arrows                      # 6 digits, as the boxes are asked to show
    assert f"∂ {2 / 3 + 1:.6g}" in src               # x's box: 2x + 1 at 6 digits


def _two_dense_layers_in_a_loop():
    x = ad.constant([[1.0, 2.0, 3.0]])
    hidden, output = ad.keras.layers.Dense(2), ad.keras.layers.Dense(2, name="output")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            h = x
            for layer in [hidden, output]:
                h = layer(h)
        t.gradient(h, hidden.trainable_variables + output.trainable_variables)
    return tr, hidden, output


def test_variables_are_named_with_their_layer_in_graph_and_player():
    tr, hidden, output = _two_dense_layers_in_a_loop()
    for labels in ([n.label for n in ad.viz.graph(tr).model.nodes], [n["label"] for n in ad.viz.animate(tr).nodes]):
        leaves = [lab for lab in labels if lab.endswith(("kernel", "bias"))]
        assert sorted(leaves) == sorted([f"{hidden.name}/kernel", f"{hidden.name}/bias", "output/kernel",
                                         "output/bias"])


def test_a_loop_variable_never_names_a_layers_op():
    tr, hidden, output = _two_dense_layers_in_a_loop()
    nodes = ad.viz.graph(tr).model.nodes
    assert "h" not in [n.label for n in nodes]
    last = [n for n in nodes if n.scope == "output" and n.op == "Add"]
    assert [n.label for n in last] == ["Add"]
    # a name outside any layer is still the caller's
    x = ad.Variable(2.0, name="x")
    with ad.trace() as tr2:
        with ad.GradientTape() as t:
            loss = x * x
        t.gradient(loss, x)
    assert [n.label for n in ad.viz.graph(tr2).model.nodes] == ["x", "loss"]


def test_the_backward_seed_is_drawn_and_explained_as_d_target_d_target():
    tr, names = tour.second_derivative_trace()
    assert float(names["dy_dx"]) == 27.0                         # 3x² at 3
    d2 = [e for e in tr.events if e.kind == "gradient_end"][-1].results[0]
    assert d2.head[0] == 18.0                                     # 6x at 3
    g = ad.viz.graph(tr, names=names)
    seeds = [n for n in g.model.nodes if n.seed_of is not None]
    assert [(n.label, n.seed_of) for n in seeds] == [("∂y/∂y", "y")]
    assert seeds[0].value.array().tolist() == 1.0
    assert "const" not in [n.label for n in g.model.nodes]
    text = _legend_text(g.source)
    assert "∂y/∂y = 1: the seed, the gradient of y with respect to itself, where the backward pass starts" in text
    anim = ad.viz.animate(tr, names=names)
    k = [n["label"] for n in anim.nodes].index("∂y/∂y")
    what = dict(anim.data["details"]["nodes"][k])["what"][0]
    assert what.startswith("the seed of a backward pass: ∂y/∂y = 1")


def test_the_seed_event_names_the_seed_tensor():
    tr, _ = tour.second_derivative_trace()
    seeds = [e for e in tr.events if e.kind == "accumulate" and e.node is None]
    assert seeds and all(e.seed is not None for e in seeds)
    used = {i for e in tr.events if e.kind == "op" for i in e.inputs}
    assert seeds[0].seed in used          # the outer tape recorded an op reading it


def test_a_custom_gradient_box_is_named_after_its_function():
    @ad.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return ad.clip_by_norm(dy, 0.5)
        return y, backward

    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            z = clip_gradients(x * x)
        g = t.gradient(z, x)
    assert float(g) == 2 * 3.0 * 0.5     # d(x²)/dx · the clipped upstream 0.5
    graph_nodes = ad.viz.graph(tr).model.nodes
    assert [n.op for n in graph_nodes if n.kind == "op"] == ["Mul", "clip_gradients"]
    anim = ad.viz.animate(tr, names={"z": z})
    assert "IdentityN" not in anim.to_json()
    rule = next(s for s in anim.steps if s["title"] == "Backward step 1: z")["lines"]
    assert rule[0].startswith("clip_gradients: ") and "custom gradient" in rule[0]
    assert anim.steps[-1]["lines"] == ["∂target/∂x = 3.0"]


def test_an_op_no_gradient_can_reach_is_off_the_path():
    # sigmoid_cross_entropy_with_logits compares logits >= 0 (a bool) to pick its stable branch
    tr, names = logistic_trace()
    g = [e for e in tr.events if e.kind == "gradient_end"][-1].results[0]
    sigmoid = 1.0 / (1.0 + np.exp(-np.array([0.5, -1.0])))
    np.testing.assert_allclose(g.array(), sigmoid - np.array([1.0, 0.0]), rtol=1e-6)   # σ(x) - labels
    graph = ad.viz.graph(tr, names=names)
    compare = [n for n in graph.model.nodes if n.dtype == "bool"]
    assert [n.op for n in compare] == ["GreaterEqual"]
    assert not compare[0].on_path and compare[0].dimmed and not compare[0].grads
    assert "not computed yet" not in graph.source
    assert all(n.on_path for n in graph.model.nodes if n.kind == "op" and n.dtype == "float32")
