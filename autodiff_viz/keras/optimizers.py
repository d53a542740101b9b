"""Optimizers: turn gradients into variable updates.

Updates are state changes, not ops: they run on the arrays directly and are
never recorded on a tape, as in TensorFlow.
"""
from __future__ import annotations

import numbers
import warnings

from .. import _backend
from .._missing import missing_api as _missing_api
from .._tensor import ResourceVariable, Tensor, Variable, convert_to_tensor


class Optimizer:
    """Base class: ``apply_gradients(zip(grads, vars))`` updates each variable in place.

    Pairs whose gradient is ``None`` are skipped (with a warning naming the
    variables); if every gradient is ``None`` nothing could be learned and a
    ``ValueError`` says so.
    """

    def __init__(self, learning_rate, name):
        self.learning_rate = _number(learning_rate, name, "learning_rate")
        self.name = name
        self.iterations = Variable(0, name="iteration", trainable=False, dtype="int64")

    def apply_gradients(self, grads_and_vars):
        pairs = list(grads_and_vars)
        for g, v in pairs:
            if not isinstance(v, ResourceVariable):
                raise TypeError(f"{self.name}.apply_gradients: expected (gradient, variable) pairs, "
                                f"got a {type(v).__name__} where a variable belongs")
        missing = [v.name for g, v in pairs if g is None]
        kept = [(g, v) for g, v in pairs if g is not None]
        if pairs and not kept:
            raise ValueError(f"No gradients provided for any variable: {missing}")
        if missing:
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the loss", stacklevel=2)
        for g, v in kept:
            g = g if isinstance(g, Tensor) else convert_to_tensor(g, dtype=v.dtype)
            if g.shape != v.shape:
                raise ValueError(f"{self.name}: gradient of shape {g.shape} for variable {v.name!r} of shape {v.shape}")
            if not v.dtype.is_floating or not g.dtype.is_floating:
                raise TypeError(f"{self.name}: cannot update variable {v.name!r} of dtype {v.dtype.name} with a "
                                f"gradient of dtype {g.dtype.name}: optimizers work on floating variables only "
                                "(an integer step would be truncated)")
            xp = _backend.namespace_of(v._value)
            grad = g._value if g._value.dtype == v._value.dtype else xp.astype(g._value, v._value.dtype)
            v.assign(self._update(xp, v, grad))
        self.iterations.assign_add(1)
        return self.iterations

    def _update(self, xp, var, grad):
        """The variable's new value from its gradient (raw arrays)."""
        raise NotImplementedError


class SGD(Optimizer):
    """Gradient descent: ``w -= learning_rate * g`` (with ``momentum``: a running velocity).

    >>> import autodiff_viz as ad
    >>> w = ad.Variable(1.0)
    >>> _ = ad.keras.optimizers.SGD(0.1).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w), 6)
    0.8
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD"):
        super().__init__(learning_rate, name)
        self.momentum = _number(momentum, name, "momentum")
        self.nesterov = bool(nesterov)
        self._velocity: dict = {}

    def _update(self, xp, var, grad):
        lr = self.learning_rate
        if self.momentum == 0.0:
            return var._value - lr * grad
        v = self._velocity.get(var._id)
        v = (-lr * grad) if v is None else (self.momentum * v - lr * grad)
        self._velocity[var._id] = v
        if self.nesterov:
            return var._value + self.momentum * v - lr * grad
        return var._value + v


class Adam(Optimizer):
    """Adam: steps scaled by running averages of the gradient and its square.

    ``m += (1 - beta_1) (g - m)``, ``v += (1 - beta_2) (g^2 - v)``,
    ``w -= lr sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)``.

    >>> import autodiff_viz as ad
    >>> w = ad.Variable(1.0)
    >>> _ = ad.keras.optimizers.Adam(0.1).apply_gradients([(ad.constant(2.0), w)])
    >>> round(float(w), 4)  # the first step moves by about learning_rate
    0.9
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Adam"):
        super().__init__(learning_rate, name)
        self.beta_1, self.beta_2, self.epsilon = (_number(v, name, w) for v, w in
                                                  ((beta_1, "beta_1"), (beta_2, "beta_2"), (epsilon, "epsilon")))
        self._m: dict = {}
        self._v: dict = {}

    def _update(self, xp, var, grad):
        t = int(self.iterations.numpy()) + 1
        m = self._m.get(var._id)
        v = self._v.get(var._id)
        if m is None:
            m = xp.zeros_like(grad)
            v = xp.zeros_like(grad)
        m = m + (grad - m) * (1.0 - self.beta_1)
        v = v + (grad * grad - v) * (1.0 - self.beta_2)
        self._m[var._id], self._v[var._id] = m, v
        alpha = self.learning_rate * (1.0 - self.beta_2 ** t) ** 0.5 / (1.0 - self.beta_1 ** t)
        return var._value - alpha * m / (xp.sqrt(v) + self.epsilon)


def _number(value, who, what) -> float:
    """A hyperparameter as a float: a number or a scalar tensor; anything else is a TypeError naming it."""
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.is_floating:
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{who}: {what} must be a number, got {value!r:.60} ({type(value).__name__})")
    return float(value)


__getattr__ = _missing_api(__name__)
