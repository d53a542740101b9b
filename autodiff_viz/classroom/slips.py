"""The usual slips of a backward pass written by hand, named from the numbers: a sentence, or "" when none fits.

A slip is recognised only when it explains the wrong tensor exactly (to the
checker's tolerance): a transpose that makes it right, a sum over one axis that
makes it right, a ratio that is one of the computation's sizes.

>>> import numpy as np
>>> g = np.arange(6.0).reshape(2, 3)
>>> name_slip("W", g.T, g, upstream=None, sizes={2, 3})
'Missing transpose: your dW has shape (3, 2), the transpose of W (2, 3). Check which factor of the MatMul rule is transposed (∂L/∂W = Xᵀ·Ḡ, ∂L/∂X = Ḡ·Wᵀ).'
>>> name_slip("b", g, g.sum(axis=0), upstream=g, sizes={2, 3})
'No sum over the batch: your db has shape (2, 3), b has shape (3,). b is used once per example (broadcast over axis 0), so its gradient adds up the examples: sum over axis 0.'
"""
from __future__ import annotations

import numpy as np


def _close(a, b, rtol, atol) -> bool:
    return np.shape(a) == np.shape(b) and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _ratio(got, exp, rtol):
    """The one number ``r`` with ``got = r · exp`` everywhere, or ``None``."""
    big = np.abs(exp) > 1e-6 * max(1.0, float(np.max(np.abs(exp), initial=0.0)))
    if not np.any(big) or np.any(np.abs(got[~big]) > 1e-6 * max(1.0, float(np.max(np.abs(got))))):
        return None
    r = got[big] / exp[big]
    if np.allclose(r, r[0], rtol=rtol, atol=0):
        return float(r[0])
    return None


def name_slip(name: str, got: np.ndarray, exp: np.ndarray, *, upstream, sizes, rtol: float = 1e-3,
              atol: float = 1e-6) -> str:
    """Which usual slip turns ``exp`` (the tape's gradient of ``name``) into ``got``; "" when none fits.

    ``upstream``: the gradient that reached the op using ``name`` (all its values, or ``None``);
    ``sizes``: the sizes in the computation (a batch size, a row length...), for a forgotten ``1/n``.
    """
    d = f"d{name}"
    if got.shape != exp.shape and got.size == exp.size and _close(got.reshape(exp.shape), exp, rtol, atol):
        return (f"Right numbers, wrong shape: your {d} has shape {got.shape}, {name} has shape {exp.shape} "
                "(keepdims, or a reshape too many).")
    wrong_axis = _wrong_axis(d, name, got, exp, upstream, rtol, atol)
    if wrong_axis:
        return wrong_axis
    if got.shape != exp.shape:
        if got.ndim == 2 and got.shape == exp.shape[::-1] and _close(got.T, exp, rtol, atol):
            return (f"Missing transpose: your {d} has shape {got.shape}, the transpose of {name} {exp.shape}. "
                    "Check which factor of the MatMul rule is transposed (∂L/∂W = Xᵀ·Ḡ, ∂L/∂X = Ḡ·Wᵀ).")
        for axis in range(got.ndim):
            if _close(got.sum(axis=axis), exp, rtol, atol) or _close(got.sum(axis=axis, keepdims=True), exp, rtol,
                                                                       atol):
                return (f"No sum over the batch: your {d} has shape {got.shape}, {name} has shape {exp.shape}. "
                        f"{name} is used once per example (broadcast over axis {axis}), so its gradient adds up "
                        f"the examples: sum over axis {axis}.")
        return (f"Your {d} has shape {got.shape}, but {name} has shape {exp.shape}: a gradient has the shape of "
                "the tensor it belongs to.")
    if got.ndim == 2 and got.shape[0] == got.shape[1] and not _close(exp, exp.T, rtol, atol) and \
            _close(got.T, exp, rtol, atol):
        return (f"Missing transpose: your {d} is the transpose of the right one ({name} is square, so the shapes "
                "could not tell). Check which factor of the MatMul rule is transposed.")
    if upstream is not None and _close(got, np.asarray(upstream, dtype=np.float64), rtol, atol):
        return (f"Your {d} is the upstream gradient unchanged: the local factor of the op that uses {name} is "
                "missing (upstream × local).")
    r = _ratio(got, exp, rtol)
    if r is None:
        return ""
    for n in sorted(sizes):
        if n > 1 and abs(r - n) < 1e-3 * n:
            return (f"Your {d} is {n} times the right one: you forgot the 1/n of a mean (n = {n}). "
                    "A mean over n values sends each of them upstream/n.")
        if n > 1 and abs(r - 1 / n) < 1e-3 / n:
            return f"Your {d} is 1/{n} of the right one: the 1/n of the mean is applied twice."
    if abs(r + 1) < 1e-3:
        return f"Your {d} has the right size but the wrong sign."
    for q in (1, 2, 3, 4):   # a simple ratio (2, 1/2, 3/2...) is a slip; 1.161 is just a wrong number
        if abs(r - 1) > 1e-3 and abs(r * q - round(r * q)) < 1e-3 * q and abs(round(r * q)) <= 8:
            return f"Your {d} is the right one times {_fraction(round(r * q), q)}: a constant factor is off."
    return ""


def _wrong_axis(d, name, got, exp, upstream, rtol, atol) -> str:
    """The upstream summed over one axis where the right answer sums it over another (the shapes may agree)."""
    if upstream is None:
        return ""
    up = np.asarray(upstream, dtype=np.float64)
    right = [k for k in range(up.ndim) if _close(up.sum(axis=k), exp, rtol, atol)]
    wrong = [k for k in range(up.ndim) if k not in right and _close(up.sum(axis=k), got, rtol, atol)]
    if not (right and wrong):
        return ""
    return (f"Wrong axis: your {d} sums the upstream gradient over axis {wrong[0]}; {name} is broadcast over "
            f"axis {right[0]}, so sum over axis={right[0]} (shape {exp.shape}).")


def _fraction(p, q) -> str:
    from math import gcd
    k = gcd(p, q)
    p, q = p // k, q // k
    return str(p) if q == 1 else f"{p}/{q}"
