"""Keras losses: ``loss(y_true, y_pred)`` gives the mean loss over the batch, built from recorded ops.

Each loss computes one value per example (over the last axis), weights it
by ``sample_weight``, and averages over all of them, as Keras's default
reduction ("sum_over_batch_size").  Probabilities are clipped to
``[1e-7, 1 - 1e-7]`` before a log, as Keras does.

>>> import autodiff_viz as ad
>>> loss = ad.keras.losses.MeanSquaredError()
>>> float(loss([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 0.0]]))
0.5
"""
from __future__ import annotations

from .. import _ops as o
from .. import nn
from .._context import name_scope
from .._missing import missing_api as _missing_api
from .._tensor import InvalidArgumentError, as_tensor, convert_to_tensor

EPSILON = 1e-7  # Keras's backend.epsilon()


class Loss:
    """Base class: subclasses define ``call(y_true, y_pred)``, one loss per example."""

    def __init__(self, reduction="sum_over_batch_size", name=None):
        if reduction not in ("sum_over_batch_size", "sum", "none", None):
            raise ValueError(f"{type(self).__name__}: reduction must be 'sum_over_batch_size', 'sum' or 'none', "
                             f"got {reduction!r}")
        self.reduction = reduction
        self.name = name or _snake(type(self).__name__)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = convert_to_tensor(y_pred)
        if not y_pred.dtype.is_floating:
            y_pred = o.cast(y_pred, "float32")
        y_true = as_tensor(y_true)
        with name_scope(self.name):
            losses = self.call(y_true, y_pred)
            if sample_weight is not None:
                weight = o.cast(as_tensor(sample_weight), losses.dtype)
                if weight.ndim > losses.ndim:
                    weight = o.reshape(weight, losses.shape)
                losses = losses * weight
            if self.reduction in ("none", None):
                return losses
            total = o.reduce_sum(losses)
            if self.reduction == "sum":
                return total
            return total / float(max(losses.shape.num_elements(), 1))


def _snake(name):
    out = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    return out.replace("cross_entropy", "crossentropy")


def _same_shape(y_true, y_pred, who):
    y_true = o.cast(y_true, y_pred.dtype)
    if y_true.shape != y_pred.shape:
        raise InvalidArgumentError(f"{who}: y_true {y_true.shape} and y_pred {y_pred.shape} need one shape")
    return y_true


class MeanSquaredError(Loss):
    """``mean((y_true − y_pred)²)`` over the last axis, per example."""

    def call(self, y_true, y_pred):
        return o.reduce_mean(o.square(y_pred - _same_shape(y_true, y_pred, "MeanSquaredError")), axis=-1)


def _log_probabilities(y_pred):
    # As Keras: rows rescaled to sum to 1, then clipped away from 0 and 1.
    p = y_pred / o.reduce_sum(y_pred, axis=-1, keepdims=True)
    return o.log(o.clip_by_value(p, EPSILON, 1.0 - EPSILON))


class CategoricalCrossentropy(Loss):
    """``−Σ y_true · log p`` over the classes, with one-hot (or soft) labels."""

    def __init__(self, from_logits=False, label_smoothing=0.0, reduction="sum_over_batch_size", name=None):
        super().__init__(reduction, name)
        self.from_logits, self.label_smoothing = bool(from_logits), float(label_smoothing)

    def call(self, y_true, y_pred):
        y_true = _same_shape(y_true, y_pred, "CategoricalCrossentropy")
        if self.label_smoothing:
            n = y_pred.shape[-1]
            y_true = y_true * (1.0 - self.label_smoothing) + self.label_smoothing / n
        if self.from_logits:  # as Keras on TF: the fused op, and so TF's gradient, softmax − labels
            return nn.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred)
        return -o.reduce_sum(y_true * _log_probabilities(y_pred), axis=-1)


class SparseCategoricalCrossentropy(Loss):
    """``−log p[label]``, labels as class indices (shape ``y_pred.shape[:-1]``, or with a trailing 1)."""

    def __init__(self, from_logits=False, reduction="sum_over_batch_size", name=None):
        super().__init__(reduction, name)
        self.from_logits = bool(from_logits)

    def call(self, y_true, y_pred):
        labels = class_indices(y_true, y_pred, "SparseCategoricalCrossentropy")
        if self.from_logits:
            return nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=y_pred)
        # As Keras on TF, probabilities go through the same kernel as logits: a label outside the
        # classes is an error, not a loss of 0 (one_hot would give a row of zeros).
        n, values = y_pred.shape[-1], labels.numpy()
        if values.size and (values.min() < 0 or values.max() >= n):
            bad = values[(values < 0) | (values >= n)].reshape(-1)[0]
            raise InvalidArgumentError(f"SparseCategoricalCrossentropy: received a label value of {bad} which is "
                                       f"outside the valid range of [0, {n})")
        picked = o.one_hot(labels, n, dtype=y_pred.dtype)
        return -o.reduce_sum(picked * _log_probabilities(y_pred), axis=-1)


def class_indices(y_true, y_pred, who):
    """Labels as class indices of ``y_pred``'s shape without its last axis (a trailing axis of 1 dropped)."""
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = o.squeeze(y_true, axis=-1)
    if y_true.shape != y_pred.shape[:-1]:
        raise InvalidArgumentError(f"{who}: labels of shape {y_true.shape} need y_pred's shape without its last "
                                   f"axis, {y_pred.shape[:-1]}")
    if not y_true.dtype.is_integer:
        y_true = o.cast(y_true, "int64")  # Keras casts float labels (e.g. 2.0) to class indices
    return y_true


class BinaryCrossentropy(Loss):
    """``−(y log p + (1 − y) log(1 − p))``, averaged over the last axis."""

    def __init__(self, from_logits=False, label_smoothing=0.0, reduction="sum_over_batch_size", name=None):
        super().__init__(reduction, name)
        self.from_logits, self.label_smoothing = bool(from_logits), float(label_smoothing)

    def call(self, y_true, y_pred):
        y_true = _same_shape(y_true, y_pred, "BinaryCrossentropy")
        if self.label_smoothing:
            y_true = y_true * (1.0 - self.label_smoothing) + 0.5 * self.label_smoothing
        if self.from_logits:
            each = nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
        else:
            p = o.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
            each = -(y_true * o.log(p) + (1.0 - y_true) * o.log(1.0 - p))
        return o.reduce_mean(each, axis=-1)


__getattr__ = _missing_api(__name__)
