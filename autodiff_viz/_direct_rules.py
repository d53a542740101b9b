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

``DIRECT`` maps a primitive's gradient rule (the function object: a rule
replaced with ``RegisterGradient`` finds nothing) to its direct version,
``(record, g, reach) -> input gradients``, arrays for the op-built rule's
tensors (``g`` itself where the rule passes it on) with the same ``None``s,
or ``None`` to leave the case to the rule: it reads the record's fields (see
``_record``) without an op view.  ``reach`` holds the ids that need a
gradient: an input outside it may get ``None`` instead (TF's
``skip_input_indices``; the pass drops those gradients anyway).  ``_tape._backward``
uses one only for NumPy upstream gradients (``numpy_value``).  State: none
(a read-only table built at import).

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
from ._record import ATTRS, IN_IDS, IN_SHAPES, INPUTS, OUTPUT
from ._registry import PRIMITIVES
from ._primitives import _count_of


def _forward(op_type: str):
    return PRIMITIVES[op_type].forward


_TANH_GRAD, _SIGMOID_GRAD, _POW, _SUM, _BROADCAST, _RESHAPE, _MATMUL = (
    _forward(t) for t in ("TanhGrad", "SigmoidGrad", "Pow", "Sum", "BroadcastTo", "Reshape", "MatMul"))


def numpy_value(v) -> bool:
    """Whether ``v`` is a NumPy array or scalar (the values the direct rules are written for)."""
    return _NUMPY_TYPES.get(type(v)) is _np


def _mul(rec, g, reach):
    x, y = rec[INPUTS]
    return (None if y is None else g * y._value), (None if x is None else g * x._value)


def _add(rec, g, reach):  # (no op in the rule either: here it skips making the op view)
    return g, g


def _pass_on(rec, g, reach):
    return (g,)


def _sub(rec, g, reach):
    return g, (-g if rec[IN_IDS][1] in reach else None)


def _neg(rec, g, reach):
    return (-g,)


def _sin(rec, g, reach):
    return (g * _np.cos(rec[INPUTS][0]._value),)


def _cos(rec, g, reach):
    return (-g * _np.sin(rec[INPUTS][0]._value),)


def _tanh(rec, g, reach):
    return (_TANH_GRAD(_np, rec[OUTPUT]._value, g),)


def _sigmoid(rec, g, reach):
    return (_SIGMOID_GRAD(_np, rec[OUTPUT]._value, g),)


def _square(rec, g, reach):
    x = rec[INPUTS][0]._value
    if x.dtype.kind != "f":  # (2.0 in another dtype: the op-built rule converts it, or says why not)
        return None
    return (g * (x.dtype.type(2) * x),)


def _pow(rec, g, reach):
    x, p = rec[INPUTS]
    if rec[OUTPUT] is not None:  # the exponent needs a gradient too: the op-built rule says how
        return None
    xv, pv = x._value, p._value
    if xv.dtype.kind != "f":
        return None
    # (A Python 1 takes pv's floating dtype, as NumPy promotes it: the bits of pv.dtype.type(1), without making it.)
    return (g * pv) * _POW(_np, xv, pv - 1), None


def _reduce_back(gv, attrs, shape):
    """A reduction's upstream value spread back over the reduced axes (``_primitives._reduce_back``)."""
    axis = attrs["axis"]
    if not attrs["keepdims"] and axis is not None:
        gv = _RESHAPE(_np, gv, tuple(1 if i in axis else d for i, d in enumerate(shape)))
    return gv if gv.shape == shape else _BROADCAST(_np, gv, shape)


def _sum(rec, g, reach):
    return (_reduce_back(g, rec[ATTRS], rec[IN_SHAPES][0]),)


def _mean(rec, g, reach):
    if g.dtype.kind != "f":
        return None
    attrs, shape = rec[ATTRS], rec[IN_SHAPES][0]
    return (_reduce_back(g / g.dtype.type(float(_count_of(shape, attrs["axis"]))), attrs, shape),)


def _matmul(rec, g, reach):
    a, b = rec[INPUTS]
    attrs = rec[ATTRS]
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    ga = gb = None
    if b is not None:
        bv = b._value
        ga = _MATMUL(_np, bv, g, tb, True) if ta else _MATMUL(_np, g, bv, False, not tb)
    if a is not None:
        av = a._value
        gb = _MATMUL(_np, g, av, True, ta) if tb else _MATMUL(_np, av, g, not ta, False)
    return ga, gb


def sum_leading(gv, extra: int):
    """A gradient's NumPy value ``gv`` summed over its first ``extra`` axes (a bias's gradient), without an op."""
    return _SUM(_np, gv, _LEADING[extra] if extra < 4 else tuple(range(extra)), False)


_LEADING = ((), (0,), (0, 1), (0, 1, 2))  # the first axes, as Sum's axis


DIRECT = {PRIMITIVES[t].grad: rule for t, rule in (
    ("Add", _add), ("BroadcastTo", _pass_on), ("Mul", _mul), ("Sub", _sub), ("Neg", _neg), ("Sin", _sin),
    ("Cos", _cos), ("Tanh", _tanh), ("Sigmoid", _sigmoid), ("Square", _square), ("Pow", _pow), ("Sum", _sum),
    ("Mean", _mean), ("MatMul", _matmul))}
