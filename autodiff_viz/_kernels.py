"""Forward functions on arrays that the primitives table and the direct (NumPy) gradient rules share.

Each takes the array namespace ``xp`` first, as every forward in the table
does.  NumPy's function wrappers (np.sum, np.mean, np.reshape) cost more than
the work on small arrays; for NumPy arrays these call the ufunc or method they
wrap.  State: none.

>>> import numpy as np
>>> reduce_sum(np, np.ones((2, 3), np.float32), (0,), False).tolist(), count_of((2, 3), None)
([2.0, 2.0, 2.0], 6)
"""
from __future__ import annotations

import math as _math

import numpy as _np


def count_of(shape, axis) -> int:
    """How many elements a reduction over ``axis`` (a tuple, or None for all) takes into each result."""
    if axis is None:  # (every element: the product in C, not a loop here)
        return _math.prod(shape)
    n = 1
    for i, d in enumerate(shape):
        if i in axis:
            n *= d
    return n


def reduce_sum(xp, x, axis, keepdims):
    if xp is _np:
        return _np.add.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    return xp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def reshape(xp, x, shape):
    return x.reshape(shape) if xp is _np else xp.reshape(x, shape)


def broadcast_to(xp, x, shape):
    if xp is _np and x.size == 1 and x.ndim <= len(shape) and 0 not in shape:
        # One value spread (a mean's or sum's gradient): a read-only view with zero strides, as
        # np.broadcast_to makes, at a fifth of its cost.
        out = _np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
        if out.flags.writeable:  # (a view of a NumPy scalar is read-only already)
            out.flags.writeable = False
        return out
    return xp.broadcast_to(x, shape)


def matmul(xp, a, b, transpose_a, transpose_b):
    if xp is _np:  # the .mT view costs a tenth of np.matrix_transpose's wrapper
        if transpose_a:
            a = a.mT
        if transpose_b:
            b = b.mT
        if a.ndim == 2 == b.ndim and a.dtype.char in "fd" and a.flags.forc and b.flags.forc:
            # np.dot makes the same BLAS call for contiguous (or transposed) float matrices, same bits, at
            # ~0.35 µs less than matmul's dispatch on small ones; strided operands can take another path.
            return _np.dot(a, b)
        return _np.matmul(a, b)
    if transpose_a:
        a = xp.matrix_transpose(a)
    if transpose_b:
        b = xp.matrix_transpose(b)
    return xp.matmul(a, b)


def power(xp, x, p):
    """``x ** p``; a whole-number exponent takes the power of ``|x|`` and gives it ``x``'s sign when odd.

    NumPy's float pow leaves its fast vector loop for negative bases (x**3 on
    1,000 mixed-sign float32 values took 40 µs, on positive ones 2 µs), and
    its two loops round differently, so ``(-x)**3`` was not always ``-(x**3)``.
    Through ``|x|`` every backend runs one loop and keeps that symmetry, as
    TF's (Eigen's) pow does; signed zeros, infinities and NaN come out as C's
    pow gives them (as TF's), also for ``x ** 0.5``.  ``x ** 2`` and ``x ** 1`` are ``x * x`` and ``x``,
    the bits NumPy's pow gives for them, at a third of its cost.
    """
    if xp is _np:
        real = x.dtype.kind == "f" and p.dtype.kind == "f"
    else:
        real = _real_floating(xp, x.dtype) and _real_floating(xp, p.dtype)
    if real and p.ndim == 0:
        e = float(p)
        if e == 2.0:
            return x * x
        if e == 1.0:
            # (A NumPy array's copy in its own memory order holds positive's bits at a third of its cost.)
            return x.copy("K") if type(x) is _np.ndarray and x.ndim else xp.positive(x)
        if e.is_integer():
            r = xp.abs(x)
            if type(r) is _np.ndarray:  # (a NumPy array is worked on in place: one allocation, not three)
                _np.pow(r, p, out=r)
                return _np.copysign(r, x, out=r) if e % 2 else r
            r = xp.pow(r, p)
            return xp.copysign(r, x) if e % 2 else r
        if e == 0.5:
            # NumPy's pow takes its square root for 0.5, so -0 and -inf gave -0 and NaN; TF's pow is C's:
            # +0 and +inf (``+ 0.0`` turns -0 into +0; -x is +inf where x is -inf).
            r = xp.where(x == -_math.inf, -x, xp.pow(x, p) + 0.0)
            return r if xp is not _np or type(x) is _np.ndarray else r[()]
    return xp.pow(x, p)


def _real_floating(xp, dtype) -> bool:
    return xp.isdtype(dtype, "real floating") if hasattr(xp, "isdtype") else dtype.kind == "f"



def tanh_grad(xp, y, g):
    """TanhGrad: the upstream ``g`` times tanh's slope ``1 - y²`` at its output ``y``."""
    return g * (1.0 - y * y)


def sigmoid_grad(xp, y, g):
    """SigmoidGrad: the upstream ``g`` times the sigmoid's slope ``y (1 - y)`` at its output ``y``."""
    return g * y * (1.0 - y)
