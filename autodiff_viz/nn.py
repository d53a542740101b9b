"""``ad.nn``: activations and losses."""
from __future__ import annotations

from . import _ops as o
from ._ops import relu, sigmoid, softplus, tanh  # noqa: F401
from .extend import InvalidArgumentError, as_tensor, execute  # noqa: F401
from .extend import PRIMITIVES as _P
from ._context import name_scope


def _one_axis(axis, x, op):
    if not -x.ndim <= axis < x.ndim:
        raise InvalidArgumentError(f"{op}: axis {axis} is out of range for a tensor of rank {x.ndim} (shape {x.shape})")
    return axis % x.ndim


def softmax(logits, axis=-1, name=None):
    logits = as_tensor(logits)
    return execute(_P["Softmax"], (logits,), {"axis": _one_axis(axis, logits, "Softmax")})


def log_softmax(logits, axis=-1, name=None):
    logits = as_tensor(logits)
    return execute(_P["LogSoftmax"], (logits,), {"axis": _one_axis(axis, logits, "LogSoftmax")})


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """``-sum(labels * log_softmax(logits))`` along ``axis``."""
    logits = as_tensor(logits)
    labels = as_tensor(labels, logits, "softmax_cross_entropy_with_logits")
    if labels.shape != logits.shape:
        raise ValueError(f"softmax_cross_entropy_with_logits: labels {labels.shape} and logits {logits.shape} differ")
    with name_scope("softmax_cross_entropy"):
        return -o.reduce_sum(labels * log_softmax(logits, axis=axis), axis=axis)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Stable ``max(x, 0) - x * z + log(1 + exp(-|x|))``."""
    logits = as_tensor(logits)
    labels = as_tensor(labels, logits, "sigmoid_cross_entropy_with_logits")
    if labels.shape != logits.shape:
        raise ValueError(f"sigmoid_cross_entropy_with_logits: labels {labels.shape} and logits {logits.shape} differ")
    with name_scope("logistic_loss"):
        # As TF: selects rather than relu/abs, so x = 0 gets sigmoid(0) - z, not -z.
        cond = o.greater_equal(logits, 0.0)
        relu_logits = o.where(cond, logits, o.zeros_like(logits))
        neg_abs_logits = o.where(cond, -logits, logits)
        return relu_logits - logits * labels + o.log1p(o.exp(neg_abs_logits))
