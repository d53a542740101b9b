"""Public op functions: argument handling, then one call into the op table (``_tensor.execute``).

>>> import autodiff_viz as ad
>>> reduce_sum(ad.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0).numpy().tolist()
[4.0, 6.0]
"""
from __future__ import annotations

import builtins
import math as _math

import numpy as _np

from . import _backend, _dtypes, _registry
from ._context import name_scope
from ._tensor import (  # noqa: F401  (matmul and InvalidArgumentError are public here too)
    InvalidArgumentError, Tensor, _wrap, as_tensor, binary, convert_to_tensor, execute, getitem, matmul, unary,
)

_P = _registry.PRIMITIVES
_namespace_of = _backend.namespace_of
_binary, _unary, _execute = binary, unary, execute


# -- arithmetic -------------------------------------------------------------
def add(x, y, name=None): return _binary("Add", x, y)
def subtract(x, y, name=None): return _binary("Sub", x, y)
def multiply(x, y, name=None): return _binary("Mul", x, y)
def divide(x, y, name=None): return _binary("RealDiv", x, y)
def maximum(x, y, name=None): return _binary("Maximum", x, y)
def minimum(x, y, name=None): return _binary("Minimum", x, y)
def squared_difference(x, y, name=None): return _binary("SquaredDifference", x, y)
def negative(x, name=None): return _unary("Neg", x)
def square(x, name=None): return _unary("Square", x)
def sqrt(x, name=None): return _unary("Sqrt", x)
def exp(x, name=None): return _unary("Exp", x)
def log(x, name=None): return _unary("Log", x)
def log1p(x, name=None): return _unary("Log1p", x)
def sin(x, name=None): return _unary("Sin", x)
def cos(x, name=None): return _unary("Cos", x)
def tan(x, name=None): return _unary("Tan", x)
def tanh(x, name=None): return _unary("Tanh", x)
def sigmoid(x, name=None): return _unary("Sigmoid", x)
def abs(x, name=None): return _unary("Abs", x)  # noqa: A001  (TF's name)
def sign(x, name=None): return _unary("Sign", x)
def round(x, name=None): return _unary("Round", x)  # noqa: A001
def identity(x, name=None): return _unary("Identity", x)
def stop_gradient(x, name=None): return _unary("StopGradient", x)
def relu(x, name=None): return _unary("Relu", x)
def softplus(x, name=None): return _unary("Softplus", x)


def _tanh_grad(y, g): return _binary("TanhGrad", y, g)
def _sigmoid_grad(y, g): return _binary("SigmoidGrad", y, g)
def _sqrt_grad(y, g): return _binary("SqrtGrad", y, g)


def pow(x, y, name=None):  # noqa: A001
    return _binary("Pow", x, y)


def add_n(inputs, name=None):
    inputs = [as_tensor(t) for t in inputs]
    return _execute(_P["AddN"], tuple(inputs))


def reciprocal(x, name=None):
    return divide(1.0, x)


# -- comparisons (boolean, not differentiable) ---------------------------
def less(x, y, name=None): return _binary("Less", x, y)
def less_equal(x, y, name=None): return _binary("LessEqual", x, y)
def greater(x, y, name=None): return _binary("Greater", x, y)
def greater_equal(x, y, name=None): return _binary("GreaterEqual", x, y)
def equal(x, y, name=None): return _binary("Equal", x, y)
def not_equal(x, y, name=None): return _binary("NotEqual", x, y)
def logical_and(x, y, name=None): return _binary("LogicalAnd", x, y)
def logical_or(x, y, name=None): return _binary("LogicalOr", x, y)
def logical_not(x, name=None): return _unary("LogicalNot", x)


# -- reductions ------------------------------------------------------------
def _axis(axis, ndim, op):
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis.numpy().tolist()
    axes = [axis] if isinstance(axis, (int, _np.integer)) else list(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < builtins.max(ndim, 1):
            raise InvalidArgumentError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
        out.append(a % builtins.max(ndim, 1))
    return tuple(sorted(set(out)))


def _reduce(type, x, axis, keepdims):
    x = as_tensor(x)
    return _execute(_P[type], (x,), {"axis": _axis(axis, x.ndim, type), "keepdims": bool(keepdims)})


def reduce_sum(x, axis=None, keepdims=False, name=None): return _reduce("Sum", x, axis, keepdims)
def reduce_mean(x, axis=None, keepdims=False, name=None): return _reduce("Mean", x, axis, keepdims)
def reduce_max(x, axis=None, keepdims=False, name=None): return _reduce("Max", x, axis, keepdims)
def reduce_min(x, axis=None, keepdims=False, name=None): return _reduce("Min", x, axis, keepdims)
def reduce_prod(x, axis=None, keepdims=False, name=None): return _reduce("Prod", x, axis, keepdims)


def argmax(x, axis=None, output_type=None, name=None):
    x = as_tensor(x)
    axis = 0 if axis is None else _axis(axis, x.ndim, "ArgMax")[0]
    out = _execute(_P["ArgMax"], (x,), {"axis": axis})
    return cast(out, output_type) if output_type is not None else out


def argmin(x, axis=None, output_type=None, name=None):
    x = as_tensor(x)
    axis = 0 if axis is None else _axis(axis, x.ndim, "ArgMin")[0]
    out = _execute(_P["ArgMin"], (x,), {"axis": axis})
    return cast(out, output_type) if output_type is not None else out


# -- linear algebra and shapes -------------------------------------------
def transpose(a, perm=None, name=None):
    a = as_tensor(a)
    perm = tuple(reversed(range(a.ndim))) if perm is None else tuple(int(p) for p in perm)
    if sorted(perm) != list(range(a.ndim)):
        raise InvalidArgumentError(f"Transpose: perm {perm} is not a permutation of the {a.ndim} axes of shape {a.shape}")
    return _execute(_P["Transpose"], (a,), {"perm": perm})


def reshape(tensor, shape, name=None):
    tensor = as_tensor(tensor)
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    shape = tuple(int(s) for s in shape)
    size = 1
    for d in tensor.shape:
        size *= d
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if (shape.count(-1) == 0 and known != size) or shape.count(-1) > 1 or (shape.count(-1) == 1 and (known == 0 or size % known)):
        raise InvalidArgumentError(f"Reshape: cannot reshape a tensor of shape {tensor.shape} ({size} values) into {shape}")
    if -1 in shape:
        shape = tuple(size // known if s == -1 else s for s in shape)
    return _execute(_P["Reshape"], (tensor,), {"shape": shape})


def squeeze(input, axis=None, name=None):
    input = as_tensor(input)
    axes = _axis(axis, input.ndim, "Squeeze")
    if axes is not None:
        for a in axes:
            if input.shape[a] != 1:
                raise InvalidArgumentError(f"Squeeze: axis {a} of shape {input.shape} has size {input.shape[a]}, not 1")
    return _execute(_P["Squeeze"], (input,), {"axis": axes})


def expand_dims(input, axis, name=None):
    input = as_tensor(input)
    axis = int(axis)
    if not -input.ndim - 1 <= axis <= input.ndim:
        raise InvalidArgumentError(f"ExpandDims: axis {axis} is out of range for shape {input.shape}")
    return _execute(_P["ExpandDims"], (input,), {"axis": axis % (input.ndim + 1)})


def broadcast_to(input, shape, name=None):
    input = as_tensor(input)
    shape = tuple(int(s) for s in shape)
    if tuple(input.shape) == shape:
        return input
    try:
        _np.broadcast_shapes(input.shape, shape)
    except ValueError:
        raise InvalidArgumentError(f"BroadcastTo: cannot broadcast shape {input.shape} to {shape}") from None
    return _execute(_P["BroadcastTo"], (input,), {"shape": shape})


def _same_dtype(values, op):
    tensors = [v for v in values if isinstance(v, Tensor)]
    like = tensors[0] if tensors else None
    values = [as_tensor(v, like, op) for v in values]
    dts = {v.dtype.name for v in values}
    if len(dts) > 1:
        raise TypeError(f"{op}: all values need one dtype, got {sorted(dts)}")
    return values


def concat(values, axis, name=None):
    values = _same_dtype(list(values), "ConcatV2")
    if not values:
        raise InvalidArgumentError("ConcatV2: needs at least one tensor")
    nd = values[0].ndim
    axis = int(axis)
    if not -nd <= axis < nd:
        raise InvalidArgumentError(f"ConcatV2: axis {axis} is out of range for rank {nd}")
    axis %= nd
    for v in values:
        if v.ndim != nd or any(a != b for i, (a, b) in enumerate(zip(v.shape, values[0].shape)) if i != axis):
            raise InvalidArgumentError(f"ConcatV2: shapes {[v.shape for v in values]} differ outside axis {axis}")
    return _execute(_P["ConcatV2"], tuple(values), {"axis": axis})


def stack(values, axis=0, name=None):
    values = _same_dtype(list(values), "Pack")
    if not values:
        raise InvalidArgumentError("Pack: needs at least one tensor")
    shapes = {v.shape for v in values}
    if len(shapes) > 1:
        raise InvalidArgumentError(f"Pack: all tensors need one shape, got {sorted(shapes)}")
    nd = values[0].ndim + 1
    axis = int(axis)
    if not -nd <= axis < nd:
        raise InvalidArgumentError(f"Pack: axis {axis} is out of range for rank {nd}")
    return _execute(_P["Pack"], tuple(values), {"axis": axis % nd})


def unstack(value, axis=0, name=None):
    value = as_tensor(value)
    (axis,) = _axis(axis, value.ndim, "unstack")
    return [getitem(value, (slice(None),) * axis + (i,)) for i in range(value.shape[axis])]


def where(condition, x=None, y=None, name=None):
    condition = as_tensor(condition)
    if x is None and y is None:
        xp = _namespace_of(condition._value)
        idx = xp.stack(xp.nonzero(condition._value), axis=-1) if condition.ndim else xp.zeros((int(bool(condition)), 0), dtype=xp.int64)
        return _wrap(xp.astype(idx, xp.int64))
    if not condition.dtype.is_bool:
        raise TypeError(f"SelectV2: condition must be bool, got {condition.dtype.name}")
    if isinstance(x, Tensor):
        y = as_tensor(y, x, "SelectV2")
    else:
        y = as_tensor(y)
        x = as_tensor(x, y, "SelectV2")
    if x._value.dtype is not y._value.dtype and x.dtype is not y.dtype:
        raise TypeError(f"SelectV2: x and y have different dtypes, {x.dtype.name} and {y.dtype.name}")
    return _execute(_P["SelectV2"], (condition, x, y))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    t = as_tensor(t)
    lo = as_tensor(clip_value_min, t, "ClipByValue")
    hi = as_tensor(clip_value_max, t, "ClipByValue")
    return _execute(_P["ClipByValue"], (t, lo, hi))


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Scale ``t`` so its L2 norm (over ``axes``) is at most ``clip_norm``."""
    t = as_tensor(t)
    with name_scope("clip_by_norm"):
        l2sum = reduce_sum(t * t, axis=axes, keepdims=True)
        # As TF: sqrt never sees a zero sum, so an all-zero t gets a finite gradient.
        positive = greater(l2sum, 0.0)
        l2 = where(positive, sqrt(where(positive, l2sum, ones_like(l2sum))), l2sum)
        clip = as_tensor(clip_norm, t, "clip_by_norm")
        return t * clip / maximum(l2, clip)


def cast(x, dtype, name=None):
    x = as_tensor(x)
    dtype = _dtypes.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    xp = _namespace_of(x._value)
    return _execute(_P["Cast"], (x,), {"dtype": _backend.shim(xp).dtype(dtype)})


def _slice_grad(g, index, shape):
    return _execute(_P["StridedSliceGrad"], (g,), {"index": index, "shape": tuple(shape)})


# -- creation (never recorded: no inputs to watch) -----------------------
def _np_dtype(dtype, default=_np.float32):
    return default if dtype is None else _dtypes.as_dtype(dtype).as_numpy_dtype


def _make(fn, *args, dtype=None, **kw):
    xp = _backend.current()
    return _wrap(fn(xp)(*args, dtype=_backend.shim(xp).dtype(_np_dtype(dtype)), **kw))


def _shape(shape):
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, _np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def zeros(shape, dtype=None, name=None): return _make(lambda xp: xp.zeros, _shape(shape), dtype=dtype)
def ones(shape, dtype=None, name=None): return _make(lambda xp: xp.ones, _shape(shape), dtype=dtype)
def eye(num_rows, num_columns=None, dtype=None, name=None): return _make(lambda xp: xp.eye, num_rows, num_columns, dtype=dtype)


def zeros_like(input, dtype=None, name=None):
    input = as_tensor(input)
    xp = _namespace_of(input._value)
    return _wrap(xp.zeros(input._value.shape, dtype=input._value.dtype if dtype is None else _backend.shim(xp).dtype(dtype)))


def ones_like(input, dtype=None, name=None):
    input = as_tensor(input)
    xp = _namespace_of(input._value)
    return _wrap(xp.ones(input._value.shape, dtype=input._value.dtype if dtype is None else _backend.shim(xp).dtype(dtype)))


def fill(dims, value, name=None):
    v = convert_to_tensor(value)
    xp = _namespace_of(v._value)
    return _wrap(xp.full(_shape(dims), v.numpy().item(), dtype=v._value.dtype))  # the standard takes a Python scalar


def linspace(start, stop, num, name=None, axis=0):
    s = convert_to_tensor(start)
    dt = s.dtype if s.dtype.is_floating else _np.float32
    return _make(lambda xp: xp.linspace, float(start), float(stop), int(num), dtype=dt)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001  (TF's name)
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        dtype = _np.float32 if builtins.any(isinstance(v, float) for v in (start, limit, delta)) else _np.int32
    return _make(lambda xp: xp.arange, start, limit, delta, dtype=dtype)
