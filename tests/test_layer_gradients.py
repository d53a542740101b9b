"""Gradient size per layer (viz.gradient_norms, viz.plot_gradient_norms) against the chain rule by hand."""
import math

import numpy as np
import pytest

import autodiff_viz as ad

pytest.importorskip("matplotlib")

WEIGHTS = [1.5, -2.0, 0.8, 1.2, -0.7]
BIASES = [0.1, -0.3, 0.2, 0.0, 0.4]


def _chain():
    """h_k = σ(w_k h_(k-1) + b_k) (float32 weights), five one-unit sigmoid layers on the input 0.5; the loss is h_5."""
    layers = [ad.keras.layers.Dense(1, activation="sigmoid", name=f"layer{k}") for k in range(len(WEIGHTS))]
    model = ad.keras.Sequential(layers)
    x = ad.constant([[0.5]], dtype=ad.float64)
    model(x)
    for layer, w, b in zip(layers, WEIGHTS, BIASES):
        layer.kernel.assign([[w]])
        layer.bias.assign([b])
    with ad.GradientTape() as tape:
        loss = ad.reduce_sum(model(x))
    return model, tape.gradient(loss, model.trainable_variables)


def _by_hand():
    """∂h_5/∂w_k = h_(k-1) σ'(z_k) Π_(j>k) w_j σ'(z_j), ∂h_5/∂b_k without the h_(k-1); per layer the norm of both."""
    h, ins, slopes = 0.5, [], []
    for w, b in zip(WEIGHTS, BIASES):
        s = 1.0 / (1.0 + math.exp(-(w * h + b)))
        ins.append(h)
        slopes.append(s * (1.0 - s))
        h = s
    norms = []
    for k in range(len(WEIGHTS)):
        after = math.prod(WEIGHTS[j] * slopes[j] for j in range(k + 1, len(WEIGHTS)))
        db = slopes[k] * after
        norms.append(math.hypot(ins[k] * db, db))
    return norms


def test_gradient_norms_match_the_chain_rule_by_hand():
    model, grads = _chain()
    got = ad.viz.gradient_norms(model, grads)
    assert [name for name, _ in got] == [f"layer{k}" for k in range(5)]
    np.testing.assert_allclose([n for _, n in got], _by_hand(), rtol=1e-6)  # the layers' variables are float32
    assert got[0][1] < got[-1][1] / 10      # vanishing towards the input


def test_plot_draws_one_bar_per_layer_on_a_log_axis_with_its_value():
    import matplotlib.pyplot as plt

    model, grads = _chain()
    fig = ad.viz.plot_gradient_norms(model, grads)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, _by_hand(), rtol=1e-6)  # the layers' variables are float32
    labels = [t.get_text() for t in ax.texts]
    assert len(labels) == 5
    for text, n in zip(labels, _by_hand()):
        assert float(text) == pytest.approx(n, rel=0.05)    # 2 significant digits
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"layer{k}" for k in range(5)]
    plt.close(fig)


def test_a_layer_no_gradient_reaches_says_none():
    import matplotlib.pyplot as plt

    model, grads = _chain()
    grads = [None, None] + list(grads[2:])
    assert ad.viz.gradient_norms(model, grads)[0] == ("layer0", None)
    fig = ad.viz.plot_gradient_norms(model, grads)
    assert fig.axes[0].texts[0].get_text() == "None"
    plt.close(fig)


def test_bad_arguments_are_named():
    model, grads = _chain()
    with pytest.raises(ValueError, match="gradient_norms: grads must be the list .* 10 gradients .* got 9"):
        ad.viz.gradient_norms(model, grads[:-1])
    with pytest.raises(TypeError, match="gradient_norms: .*trainable_variables is missing.*got int"):
        ad.viz.gradient_norms(3, grads)


def test_gradient_variable_pairs_are_refused_not_stacked_into_a_wrong_norm():
    model, grads = _chain()
    with pytest.raises(ValueError, match=r"grads\[0\] is a tuple of 2.*not \(gradient, variable\) pairs"):
        ad.viz.gradient_norms(model, list(zip(grads, model.trainable_variables)))


def test_the_plot_title_fits_its_figure():
    import matplotlib.pyplot as plt

    model, grads = _chain()
    fig = ad.viz.plot_gradient_norms(model, grads)
    title = fig.axes[0].title
    norms = _by_hand()
    assert title.get_text().splitlines()[1] == f"the first is {norms[0] / norms[-1]:.2g} × the last"
    fig.canvas.draw()
    box = title.get_window_extent(fig.canvas.get_renderer())
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width  # not cut at the figure's edge
    plt.close(fig)
