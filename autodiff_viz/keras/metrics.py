"""Keras metrics: running means kept in two float32 variables, ``total`` and ``count``.

``update_state`` adds a batch, ``result()`` is ``total / count`` (0 before
any update), ``reset_state()`` starts again.

>>> import autodiff_viz as ad
>>> m = ad.keras.metrics.Mean()
>>> m.update_state([1, 3, 5, 7])
>>> float(m.result())
4.0
"""
from __future__ import annotations

from .. import _ops as o
from .._missing import missing_api as _missing_api
from .._tensor import InvalidArgumentError, ResourceVariable, as_tensor
from .losses import class_indices


class Mean:
    """The weighted mean of every value given to ``update_state``."""

    def __init__(self, name="mean", dtype="float32"):
        self.name, self.dtype = name, dtype
        self.total = ResourceVariable(0.0, name="total", trainable=False, dtype=dtype)
        self.count = ResourceVariable(0.0, name="count", trainable=False, dtype=dtype)

    @property
    def variables(self) -> list:
        return [self.total, self.count]

    def update_state(self, values, sample_weight=None) -> None:
        values = o.cast(as_tensor(values), self.dtype)
        if sample_weight is None:
            self.total.assign_add(o.reduce_sum(values))
            self.count.assign_add(float(values.shape.num_elements()))
            return
        weight = o.cast(as_tensor(sample_weight), self.dtype)
        if weight.ndim < values.ndim and weight.shape == values.shape[:weight.ndim]:
            weight = o.reshape(weight, tuple(weight.shape) + (1,) * (values.ndim - weight.ndim))
        try:
            weight = o.broadcast_to(weight, values.shape)
        except InvalidArgumentError:
            raise InvalidArgumentError(f"{type(self).__name__}.update_state: sample_weight of shape {weight.shape} "
                                       f"does not fit values of shape {values.shape}") from None
        self.total.assign_add(o.reduce_sum(values * weight))
        self.count.assign_add(o.reduce_sum(weight))

    def result(self):
        # As Keras's divide_no_nan: 0 before any update.
        if float(self.count.numpy()) == 0.0:
            return o.zeros((), dtype=self.dtype)
        return o.identity(self.total.read_value() / self.count.read_value())

    def reset_state(self) -> None:
        self.total.assign(0.0)
        self.count.assign(0.0)

    reset_states = reset_state  # the Keras 2 spelling

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class _Matches(Mean):
    """A mean of per-example matches (1.0 or 0.0), computed by ``matches(y_true, y_pred)``."""

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        super().update_state(self.matches(as_tensor(y_true), as_tensor(y_pred)), sample_weight)


class Accuracy(_Matches):
    """How often ``y_pred`` equals ``y_true`` exactly."""

    def __init__(self, name="accuracy", dtype="float32"):
        super().__init__(name, dtype)

    def matches(self, y_true, y_pred):
        y_pred = o.cast(y_pred, y_true.dtype) if y_pred.dtype != y_true.dtype else y_pred
        if y_true.shape != y_pred.shape:
            raise InvalidArgumentError(f"Accuracy: y_true {y_true.shape} and y_pred {y_pred.shape} need one shape")
        return o.cast(o.equal(y_true, y_pred), self.dtype)


class SparseCategoricalAccuracy(_Matches):
    """How often the class with the largest ``y_pred`` is the label ``y_true`` (class indices)."""

    def __init__(self, name="sparse_categorical_accuracy", dtype="float32"):
        super().__init__(name, dtype)

    def matches(self, y_true, y_pred):
        y_true = class_indices(y_true, y_pred, "SparseCategoricalAccuracy")
        predicted = o.cast(o.argmax(y_pred, axis=-1), "float32")
        return o.cast(o.equal(o.cast(y_true, "float32"), predicted), self.dtype)


__getattr__ = _missing_api(__name__)
