"""Softmax cross-entropy as TF computes it: one fused op per loss, with TF's kernel and gradient rule.

TF's ``SoftmaxCrossEntropyWithLogits`` and ``SparseSoftmaxCrossEntropyWithLogits``
compute the loss ``Σ labels · (log Σ exp(s) − s)`` with ``s = logits − max``,
and their gradient is the kernel's ``softmax(logits) − labels`` times the
upstream (``nn_grad.py``), not the chain rule through ``log_softmax``: so the
bits are TF's, and labels that do not sum to 1 give TF's gradient too.  The
labels' gradient (dense op only) is ``upstream · −log_softmax(logits)``.
The rules are built from ops, so a second derivative goes through Softmax's
own rule.  The primitives are in ``_primitives``' table.  State: none.

>>> import autodiff_viz as ad
>>> z = ad.constant([[2.0, 1.0, 0.1]])
>>> with ad.GradientTape() as tape:
...     tape.watch(z)
...     loss = ad.nn.sparse_softmax_cross_entropy_with_logits(ad.constant([0]), z)
>>> print(tape.gradient(loss, z).numpy().round(4))  # softmax(z) − onehot(0)
[[-0.341   0.2424  0.0986]]
"""
from __future__ import annotations

from . import _ops as o
from ._registry import PRIMITIVES as _P
from ._tensor import execute


def softmax_xent(logits, labels, axis):
    """The dense loss along ``axis`` (an int in range): ``labels`` has ``logits``' shape and dtype."""
    return execute(_P["SoftmaxCrossEntropyWithLogits"], (logits, labels), {"axis": axis})


def sparse_softmax_xent(logits, labels):
    """The loss along the last axis, ``labels`` class indices of shape ``logits.shape[:-1]`` (checked by the caller)."""
    return execute(_P["SparseSoftmaxCrossEntropyWithLogits"], (logits, labels))


# -- forward, on arrays ------------------------------------------------------------------------------
def _shifted_and_log_total(xp, x, axis):
    s = x - xp.max(x, axis=axis, keepdims=True)
    return s, xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))


def loss(xp, x, labels, axis):
    """TF's kernel: ``Σ labels · (log Σ exp(s) − s)``, ``s = x − max x`` along ``axis``."""
    s, log_total = _shifted_and_log_total(xp, x, axis)
    return xp.sum(labels * (log_total - s), axis=axis)


def _hits(xp, labels, n):
    return xp.expand_dims(labels, axis=-1) == xp.arange(n, dtype=labels.dtype)


def sparse_loss(xp, x, labels):
    """TF's sparse kernel: ``log Σ exp(s) − s[label]`` (the other classes add exact zeros)."""
    s, log_total = _shifted_and_log_total(xp, x, -1)
    picked = log_total - s
    return xp.sum(xp.where(_hits(xp, labels, x.shape[-1]), picked, xp.zeros_like(picked)), axis=-1)


# -- gradient and tangent rules ------------------------------------------------------------------------
def _softmax(x, axis):
    return execute(_P["Softmax"], (x,), {"axis": axis})


def _backprop(op):
    """The kernel's second output, ``softmax(logits) − labels`` (labels one-hot for the sparse op)."""
    x, labels = op.inputs
    if op.type == "SparseSoftmaxCrossEntropyWithLogits":
        return _softmax(x, x.ndim - 1) - o.one_hot(labels, x.shape[-1], dtype=x.dtype), x.ndim - 1
    return _softmax(x, op.attrs["axis"]) - labels, op.attrs["axis"]


def grad(op, g):
    # TF's _SoftmaxCrossEntropyWithLogitsGrad: _BroadcastMul(g, backprop), and g · −log_softmax for the labels
    backprop, axis = _backprop(op)
    g = o.expand_dims(g, axis)
    if op.type == "SparseSoftmaxCrossEntropyWithLogits":
        return g * backprop, None
    return g * backprop, g * -execute(_P["LogSoftmax"], (op.inputs[0],), {"axis": axis})


def jvp(op, t):
    # The rule transposed (TF's forward mode): Σ ẋ · backprop, plus Σ l̇ · −log_softmax for dense labels
    backprop, axis = _backprop(op)
    out = o.reduce_sum(t[0] * backprop, axis=axis)
    if op.type == "SparseSoftmaxCrossEntropyWithLogits":
        return out
    return out + o.reduce_sum(t[1] * -execute(_P["LogSoftmax"], (op.inputs[0],), {"axis": axis}), axis=axis)
