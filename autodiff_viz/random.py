"""Random tensors, seeded with ``ad.random.set_seed`` for repeatable runs."""
from __future__ import annotations

import numpy as _np

from . import _backend, _dtypes
from ._missing import missing_api as _missing_api
from ._ops import _allocated
from ._tensor import _shape_arg, _wrap
from ._tensor import convert_to_tensor as _convert

_rng = _np.random.default_rng()


def set_seed(seed: int) -> None:
    """Make every later random op repeatable; ``None`` makes them unrepeatable again.

    Process-wide, as TensorFlow's global seed is: it sets the one generator
    that random ops without a ``seed=`` of their own draw from, in every thread.
    """
    global _rng
    _rng = _np.random.default_rng(_seed_arg(seed, "random.set_seed"))


def _seed_arg(seed, who):
    """A seed as NumPy takes it: an integer (a negative one as its 64-bit pattern) or None."""
    if seed is None:
        return None
    if isinstance(seed, (bool, _np.bool_)) or not isinstance(seed, (int, _np.integer)):
        raise TypeError(f"{who}: seed must be an integer or None, got {seed!r:.60} ({type(seed).__name__})")
    return int(seed) % 2**64


def _generator(seed, who):
    return _np.random.default_rng(_seed_arg(seed, who)) if seed is not None else _rng


def _to_backend(arr, dtype):
    dt = _dtypes.as_dtype(dtype)
    arr = arr.astype(dt.as_numpy_dtype)
    xp = _backend.current()
    return _wrap(arr if xp is _np else xp.asarray(arr))


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Samples from N(mean, stddev^2)."""
    dims = _shape_arg(shape, "random.normal")
    g = _generator(seed, "random.normal")
    return _to_backend(_allocated("random.normal", dims, _np.float64, lambda: g.normal(mean, stddev, size=dims)), dtype)


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    """Samples from [minval, maxval) (maxval defaults to 1 for floats)."""
    dt = _dtypes.as_dtype(dtype)
    shape = _shape_arg(shape, "random.uniform")
    if maxval is None:
        if not dt.is_floating:
            raise ValueError("random.uniform: maxval is required for integer dtypes")
        maxval = 1.0
    g = _generator(seed, "random.uniform")
    draw = g.uniform if dt.is_floating else g.integers
    return _to_backend(_allocated("random.uniform", shape, _np.float64, lambda: draw(minval, maxval, size=shape)), dt)


def shuffle(value, seed=None, name=None):
    """``value`` with its first axis in a random order (a new tensor; as TF, not differentiable)."""
    t = _convert(value)
    if t.ndim == 0:
        raise ValueError(f"random.shuffle: value needs at least one axis to shuffle, got shape {t.shape}")
    order = _generator(seed, "random.shuffle").permutation(t.shape[0])
    xp = _backend.namespace_of(t._value)
    return _wrap(xp.take(t._value, xp.asarray(order) if xp is not _np else order, axis=0))


class random_normal_initializer:  # TF's name
    """An initializer drawing from N(mean, stddev²): ``init(shape, dtype=float32)`` returns a tensor.

    >>> import autodiff_viz as ad
    >>> ad.random_normal_initializer(stddev=0.0)(shape=(2,)).numpy().tolist()
    [0.0, 0.0]
    """

    def __init__(self, mean=0.0, stddev=1.0, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        return normal(shape, self.mean, self.stddev, dtype=dtype, seed=self.seed)


__getattr__ = _missing_api(__name__)
