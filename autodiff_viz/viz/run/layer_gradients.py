"""Gradient size per layer for one training step: vanishing and exploding gradients at a glance.

:func:`gradient_norms` reads a model's layers and the gradients ``tape.gradient(loss,
model.trainable_variables)`` returned; :func:`plot_gradient_norms` draws one bar per layer, input
side first, on a logarithmic axis (a chain of sigmoid layers shows its gradients shrinking by
orders of magnitude towards the input, where a linear axis shows only the last bar).

>>> import autodiff_viz as ad
>>> model = ad.keras.Sequential([ad.keras.layers.Dense(2, activation="sigmoid"), ad.keras.layers.Dense(1)])
>>> x = ad.constant([[1.0, 2.0]])
>>> with ad.GradientTape() as tape:
...     loss = ad.reduce_sum(model(x))
>>> grads = tape.gradient(loss, model.trainable_variables)
>>> [name for name, _ in gradient_norms(model, grads)] == [layer.name for layer in model.layers]
True
"""
from __future__ import annotations

import math

import numpy as np

from ..draw.look import CURVE_COLOURS, GREY
from ..text import labels as L
from ..text.numbers import fmt_number


def gradient_norms(model, grads) -> list:
    """``[(layer name, norm)]`` for each layer with trainable variables, input side first: the
    Euclidean norm of all its variables' gradients together (``None`` where none of them got a
    gradient: the layer is off the path to the loss).

    ``grads`` is what ``tape.gradient(loss, model.trainable_variables)`` returned, in that order.
    """
    variables = _trainable(model, "model.trainable_variables")
    grads = list(grads) if isinstance(grads, (list, tuple)) else None
    if grads is None or len(grads) != len(variables):
        raise ValueError(f"gradient_norms: grads must be the list tape.gradient(loss, model.trainable_variables) "
                         f"returned: {len(variables)} gradients for the model's {len(variables)} variables, got "
                         f"{'a ' + type(grads).__name__ if grads is None else len(grads)}")
    for k, g in enumerate(grads):  # a (gradient, variable) pair would be stacked into one array: a wrong norm
        if isinstance(g, (tuple, list)):
            raise ValueError(f"gradient_norms: grads[{k}] is a {type(g).__name__} of {len(g)}, not a gradient: pass "
                             "the list tape.gradient(loss, model.trainable_variables) returned, not (gradient, "
                             "variable) pairs")
    by_variable = {id(v): g for v, g in zip(variables, grads)}
    layers = getattr(model, "layers", None)
    if not layers:
        raise TypeError(f"gradient_norms: model must have layers (a keras Sequential or Model), got "
                        f"{type(model).__name__}")
    out = []
    for layer in layers:
        own = [by_variable[id(v)] for v in _trainable(layer, f"layer {layer.name!r}") if id(v) in by_variable]
        if not own:
            continue
        present = [np.asarray(g.numpy() if hasattr(g, "numpy") else g, dtype=np.float64) for g in own if g is not None]
        norm = math.sqrt(sum(float(np.sum(a * a)) for a in present)) if present else None
        out.append((str(layer.name), norm))
    return out


def _trainable(owner, what: str) -> list:
    variables = getattr(owner, "trainable_variables", None)
    if variables is None:
        raise TypeError(f"gradient_norms: {what} is missing: pass a keras model (got {type(owner).__name__})")
    return list(variables)


def plot_gradient_norms(model, grads, ax=None, title=None):
    """Plot each layer's gradient norm for one step (see :func:`gradient_norms`) as bars on a log axis,
    each with its value, input side on the left; a layer no gradient reached says ``None``.  Returns
    the matplotlib figure.  ``title`` is shown as typed.
    """
    import matplotlib.pyplot as plt

    norms = gradient_norms(model, grads)
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(norms) + 2.0), 4.5), dpi=100)
    else:
        fig = ax.figure
    names = [L.for_mpl(name, 24) for name, _ in norms]
    sizes = [n for _, n in norms]
    shown = [n if n is not None and n > 0 else np.nan for n in sizes]
    xs = np.arange(len(norms))
    ax.bar(xs, shown, color=CURVE_COLOURS[0], width=0.7)
    ax.set_yscale("log")
    for x, n in zip(xs, sizes):
        text = "None" if n is None else fmt_number(n, 2)
        y = n if n is not None and n > 0 else ax.get_ylim()[0]
        ax.text(x, y, text, ha="center", va="bottom", fontsize=10, color=GREY if n is None else "black",
                **L.MPL_TEXT)
    ax.set_xticks(xs, names, rotation=30 if len(norms) > 6 else 0, ha="right" if len(norms) > 6 else "center",
                  fontsize=11, **L.MPL_TEXT)
    ax.set_ylabel("‖gradient‖ (log scale)", fontsize=12)
    finite = [n for n in sizes if n is not None and n > 0]
    # on a second line: one line is wider than a figure of a few bars
    ratio = f"\nthe first is {fmt_number(finite[0] / finite[-1], 2)} × the last" if len(finite) > 1 else ""
    ax.set_title(L.for_mpl(title, L.TITLE_LIMIT, "end") if title else f"Gradient size per layer, input side first{ratio}",
                 fontsize=13, **L.MPL_TEXT)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig
