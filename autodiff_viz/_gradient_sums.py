"""Adding a tensor's gradients up, and summing a broadcast operand's gradient back to its shape.

Shared by the backward passes (``_tape``'s and the written-out ones of
``_replay``) and forward mode's unbroadcast.  State: none.

>>> import numpy as np, autodiff_viz as ad
>>> unbroadcast(ad.constant(np.ones((2, 3), np.float32)), (3,), "Add").numpy().tolist()
[2.0, 2.0, 2.0]
"""
from __future__ import annotations

import numpy as _np

from . import _direct_rules, _ops, _registry
from . import _tensor as _t
from ._backend import _NUMPY_TYPES
from ._shape import broadcast_axes

_ADD = _registry.PRIMITIVES["Add"]


def add(a, b):
    # Two gradients of one tensor: never bool, and of one dtype unless a rule got it wrong (then the
    # public op says so), so the common case runs without the public checks.
    if a._value.dtype is not b._value.dtype:
        return _ops.add(a, b)
    return _t.execute(_ADD, (a, b))


def add_values(a, b):
    """:func:`add` on two gradients' values while no tape records: NumPy values of one dtype without an op."""
    if a.dtype is b.dtype and _NUMPY_TYPES.get(type(b)) is _np:  # (_direct_rules.numpy_value, without the call)
        return a + b
    return add(_t._wrap(a), _t._wrap(b))._value


def unbroadcast(g, shape, op_type):
    """Sum a gradient over the axes its input was broadcast along (with recorded ops)."""
    gshape = tuple(g._value.shape)
    extra = len(gshape) - len(shape)
    if extra < 0:
        raise ValueError(f"gradient of {op_type} has shape {gshape}, smaller than its input's {shape}")
    if extra and gshape[extra:] == tuple(shape):  # the common bias case: only leading axes were added
        return _ops._sum(g, tuple(range(extra)))
    axes = broadcast_axes(tuple(shape), gshape)
    if axes is None:
        raise ValueError(f"gradient of {op_type} has shape {gshape}, which does not broadcast to its input's {shape}")
    if axes:
        g = _ops._sum(g, tuple(axes))
    if tuple(g._value.shape) == tuple(shape):
        return g
    return _ops._reshape(g, shape)


def unbroadcast_value(g, shape, op_type):
    """:func:`unbroadcast` on a gradient's value (a pass on values): a NumPy bias's leading axes summed
    without an op, anything else through the ops."""
    extra = len(g.shape) - len(shape)
    if extra > 0 and g.shape[extra:] == shape and _NUMPY_TYPES.get(type(g)) is _np:
        return _direct_rules.sum_leading(g, extra)
    return unbroadcast(_t._wrap(g), shape, op_type)._value
