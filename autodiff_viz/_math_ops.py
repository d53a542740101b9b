"""More of ``tf.math``: hyperbolic functions, running sums, and the NaN/infinity tests.

>>> import autodiff_viz as ad
>>> ad.math.cumsum(ad.constant([1.0, 2.0, 3.0])).numpy().tolist()
[1.0, 3.0, 6.0]
"""
from __future__ import annotations

from ._registry import PRIMITIVES as _P
from ._tensor import InvalidArgumentError, _int_arg, as_tensor, execute, numeric


def sinh(x, name=None):
    """``(exp(x) − exp(−x)) / 2``."""
    return execute(_P["Sinh"], (numeric(x, "Sinh", "float"),))


def cosh(x, name=None):
    """``(exp(x) + exp(−x)) / 2``."""
    return execute(_P["Cosh"], (numeric(x, "Cosh", "float"),))


def _cumsum(x, axis, exclusive, reverse):
    return execute(_P["Cumsum"], (x,), {"axis": axis, "exclusive": exclusive, "reverse": reverse})


def _cumprod(x, axis, exclusive, reverse):
    """Running products along ``axis`` (an int in range), as TF's Cumprod; reduce_prod's gradient uses them."""
    return execute(_P["Cumprod"], (x,), {"axis": axis, "exclusive": exclusive, "reverse": reverse})


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along ``axis``, as ``tf.math.cumsum``.

    ``exclusive=True`` leaves each element out of its own sum (0 first);
    ``reverse=True`` sums from the end.

    >>> import autodiff_viz as ad
    >>> ad.math.cumsum(ad.constant([1, 2, 3]), exclusive=True, reverse=True).numpy().tolist()
    [5, 3, 0]
    """
    x = numeric(x, "Cumsum")
    axis = _int_arg(axis, "Cumsum", "axis")
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise InvalidArgumentError(f"Cumsum: axis {axis} is out of range for a tensor of shape {x.shape}")
    return _cumsum(x, axis % x.ndim, bool(exclusive), bool(reverse))


def _test(type, x):
    x = as_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"{type}: needs a floating tensor (float16/32/64), got dtype {x.dtype.name} (shape {x.shape})")
    return execute(_P[type], (x,))


def is_nan(x, name=None):
    """True where ``x`` is NaN (a bool tensor, not differentiable)."""
    return _test("IsNan", x)


def is_inf(x, name=None):
    """True where ``x`` is +∞ or −∞."""
    return _test("IsInf", x)


def is_finite(x, name=None):
    """True where ``x`` is neither NaN nor ±∞."""
    return _test("IsFinite", x)
