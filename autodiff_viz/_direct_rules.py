"""Gradient rules of the commonest ops in plain NumPy, for a backward pass that no tape records.

A gradient rule is written with the package's ops, so that a gradient
computed under an outer tape is itself recorded (higher orders).  When no
tape or forward accumulator is active in any thread (``_context.ACTIVE[0]``
is 0), nothing would record those ops: each one's trip through ``execute``
(namespace lookup, checks, the primitive's forward, a new tensor) is then
pure overhead, about as long as the NumPy work of a small op.  The rules
here compute the same values with the primitives' own forward functions (so
the bits are those the op-built rule gives), on the values themselves: they
take the upstream gradient's array and return arrays, and the pass wraps
only what it hands back (or what a listener or an op-built rule reads).

Each rule is given to its primitive in the table (``defop(..., direct=...)``
in ``_primitives``), which files it in ``_registry.DIRECT`` under the
op-built rule (the function object: a rule replaced for a while finds
nothing).  A rule is ``(record, g, reach) -> input gradients``, arrays for
the op-built rule's tensors (``g`` itself where the rule passes it on) with
the same ``None``s, or ``None`` to leave the case to the op-built rule: it
reads the record's fields (see ``_record``) without an op view.  ``reach``
holds the ids that need a gradient: an input outside it may get ``None``
instead (TF's ``skip_input_indices``; the pass drops those gradients
anyway).  ``_tape._backward`` uses them only for NumPy upstream gradients
(``numpy_value``).  State: none.

>>> import numpy as np, autodiff_viz as ad
>>> x = ad.constant(np.float32(0.5))
>>> with ad.GradientTape() as tape:
...     tape.watch(x)
...     y = ad.sin(x) * x
>>> print(tape.gradient(y, x))  # sin(x) + x cos(x), through the direct rules of Mul and Sin
ad.Tensor(0.9182168, shape=(), dtype=float32)
"""
from __future__ import annotations

import numpy as _np

from ._backend import _NUMPY_TYPES
from ._kernels import broadcast_to as _broadcast_to, count_of as _count_of, matmul as _matmul, power as _power, \
    reduce_sum as _reduce_sum, reshape as _reshape, sigmoid_grad as _sigmoid_grad, tanh_grad as _tanh_grad
from ._record import ATTRS, IN_IDS, IN_SHAPES, INPUTS, OUTPUT


def numpy_value(v) -> bool:
    """Whether ``v`` is a NumPy array or scalar (the values the direct rules are written for)."""
    return _NUMPY_TYPES.get(type(v)) is _np


def mul(rec, g, reach):
    x, y = rec[INPUTS]
    return (None if y is None else g * y._value), (None if x is None else g * x._value)


def add(rec, g, reach):  # (no op in the rule either: here it skips making the op view)
    return g, g


def pass_on(rec, g, reach):
    return (g,)


def sub(rec, g, reach):
    return g, (-g if rec[IN_IDS][1] in reach else None)


def neg(rec, g, reach):
    return (-g,)


def sin(rec, g, reach):
    return (g * _np.cos(rec[INPUTS][0]._value),)


def cos(rec, g, reach):
    return (-g * _np.sin(rec[INPUTS][0]._value),)


def tanh(rec, g, reach):
    return (_tanh_grad(_np, rec[OUTPUT]._value, g),)


def sigmoid(rec, g, reach):
    return (_sigmoid_grad(_np, rec[OUTPUT]._value, g),)


def square(rec, g, reach):
    x = rec[INPUTS][0]._value
    if x.dtype.kind != "f":  # (2.0 in another dtype: the op-built rule converts it, or says why not)
        return None
    return (g * (x + x),)  # (2a, as the op-built rule's 2.0 · a: doubling is exact, so the bits are the same)


def power(rec, g, reach):
    x, p = rec[INPUTS]
    if rec[OUTPUT] is not None:  # the exponent needs a gradient too: the op-built rule says how
        return None
    xv, pv = x._value, p._value
    if xv.dtype.kind != "f":
        return None
    # (A Python 1 takes pv's floating dtype, as NumPy promotes it: the bits of pv.dtype.type(1), without making it.)
    return (g * pv) * _power(_np, xv, pv - 1), None


def _reduce_back(gv, attrs, shape):
    """A reduction's upstream value spread back over the reduced axes (``_primitives._reduce_back``)."""
    axis = attrs["axis"]
    if not attrs["keepdims"] and axis is not None:
        gv = _reshape(_np, gv, tuple(1 if i in axis else d for i, d in enumerate(shape)))
    return gv if gv.shape == shape else _broadcast_to(_np, gv, shape)


def reduce_sum(rec, g, reach):
    return (_reduce_back(g, rec[ATTRS], rec[IN_SHAPES][0]),)


def reduce_mean(rec, g, reach):
    if g.dtype.kind != "f":
        return None
    attrs, shape = rec[ATTRS], rec[IN_SHAPES][0]
    return (_reduce_back(g / g.dtype.type(float(_count_of(shape, attrs["axis"]))), attrs, shape),)


def matmul(rec, g, reach):
    a, b = rec[INPUTS]
    attrs = rec[ATTRS]
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    ga = gb = None
    if b is not None:
        bv = b._value
        ga = _matmul(_np, bv, g, tb, True) if ta else _matmul(_np, g, bv, False, not tb)
    if a is not None:
        av = a._value
        gb = _matmul(_np, g, av, True, ta) if tb else _matmul(_np, av, g, not ta, False)
    return ga, gb


def sum_leading(gv, extra: int):
    """A gradient's NumPy value ``gv`` summed over its first ``extra`` axes (a bias's gradient), without an op."""
    return _reduce_sum(_np, gv, _LEADING[extra] if extra < 4 else tuple(range(extra)), False)


_LEADING = ((), (0,), (0, 1), (0, 1, 2))  # the first axes, as Sum's axis


# The rules that always give their gradients (never ``None`` to leave the case to the op-built rule) for
# floating values: a written-out pass (``_replay``) calls only these, and those that do whenever their
# record keeps no output (Power's: it keeps one when the exponent needs a gradient).
ALWAYS = frozenset({mul, add, pass_on, sub, neg, sin, cos, tanh, sigmoid, square, reduce_sum, reduce_mean, matmul})
UNLESS_OUTPUT_KEPT = frozenset({power})
