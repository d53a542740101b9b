"""Initial values for layer weights: ``Dense(kernel_initializer=...)``.

An initializer is called as ``init(shape, dtype)`` and returns a tensor.
Random ones draw from ``ad.random``, so ``ad.random.set_seed`` makes them
repeatable.
"""
from __future__ import annotations

import math

from .. import _ops, random
from .._missing import missing_api as _missing_api
from .._tensor import convert_to_tensor


class Initializer:
    """Base class: ``init(shape, dtype)`` returns the initial tensor."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return _ops.zeros(shape, dtype=dtype)


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return _ops.ones(shape, dtype=dtype)


class Constant(Initializer):
    """Every weight the given value, or exactly the given array.

    >>> import autodiff_viz as ad
    >>> ad.keras.initializers.Constant(0.5)((2,), "float32").numpy().tolist()
    [0.5, 0.5]
    """

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        value = convert_to_tensor(self.value, dtype=dtype)
        if value.shape == tuple(shape):
            return value
        return _ops.broadcast_to(value, tuple(shape))


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None):
        return random.normal(shape, self.mean, self.stddev, dtype=dtype or "float32", seed=self.seed)


class GlorotUniform(Initializer):
    """Uniform in ``[-l, l]`` with ``l = sqrt(6 / (fan_in + fan_out))`` (Keras's default for kernels)."""

    def __init__(self, seed=None):
        self.seed = seed

    def __call__(self, shape, dtype=None):
        shape = tuple(shape)
        fan_in = shape[-2] if len(shape) >= 2 else (shape[0] if shape else 1)
        fan_out = shape[-1] if shape else 1
        receptive = math.prod(shape[:-2]) if len(shape) > 2 else 1
        limit = math.sqrt(6.0 / ((fan_in + fan_out) * receptive))
        return random.uniform(shape, -limit, limit, dtype=dtype or "float32", seed=self.seed)


_BY_NAME = {
    "zeros": Zeros, "ones": Ones, "random_normal": RandomNormal, "glorot_uniform": GlorotUniform,
}


def get(identifier):
    """An initializer from a name (``"glorot_uniform"``, ``"zeros"``...) or a callable."""
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]()
        except KeyError:
            raise ValueError(f"unknown initializer {identifier!r}; choose one of {sorted(_BY_NAME)}") from None
    if callable(identifier):
        return identifier
    raise ValueError(f"an initializer must be a name or a callable, got {identifier!r}")


__getattr__ = _missing_api(__name__)
