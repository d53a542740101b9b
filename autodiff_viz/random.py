"""Random tensors, seeded with ``ad.random.set_seed`` for repeatable runs."""
from __future__ import annotations

import numpy as _np

from . import _backend, _dtypes
from ._missing import missing_api as _missing_api
from ._tensor import _shape_arg, _wrap

_rng = _np.random.default_rng()


def set_seed(seed: int) -> None:
    """Make every later random op repeatable.

    Process-wide, as TensorFlow's global seed is: it sets the one generator
    that random ops without a ``seed=`` of their own draw from, in every thread.
    """
    global _rng
    _rng = _np.random.default_rng(seed)


def _generator(seed):
    return _np.random.default_rng(seed) if seed is not None else _rng


def _to_backend(arr, dtype):
    dt = _dtypes.as_dtype(dtype)
    arr = arr.astype(dt.as_numpy_dtype)
    xp = _backend.current()
    return _wrap(arr if xp is _np else xp.asarray(arr))


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Samples from N(mean, stddev^2)."""
    return _to_backend(_generator(seed).normal(mean, stddev, size=_shape_arg(shape, "random.normal")), dtype)


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    """Samples from [minval, maxval) (maxval defaults to 1 for floats)."""
    dt = _dtypes.as_dtype(dtype)
    shape = _shape_arg(shape, "random.uniform")
    if maxval is None:
        if not dt.is_floating:
            raise ValueError("random.uniform: maxval is required for integer dtypes")
        maxval = 1.0
    g = _generator(seed)
    if dt.is_floating:
        arr = g.uniform(minval, maxval, size=tuple(shape))
    else:
        arr = g.integers(minval, maxval, size=tuple(shape))
    return _to_backend(arr, dt)


__getattr__ = _missing_api(__name__)
