"""Public op functions: argument handling, then one call into the op table (``_tensor.execute``).

>>> import autodiff_viz as ad
>>> reduce_sum(ad.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0).numpy().tolist()
[4.0, 6.0]
"""
from __future__ import annotations

import builtins
import math as _math
import sys as _sys

import numpy as _np

from . import _backend, _dtypes, _registry
from ._context import name_scope
from ._tensor import (  # noqa: F401  (matmul, truediv and InvalidArgumentError are public here too)
    TRANSPOSED as _TRANSPOSED, InvalidArgumentError, Tensor, _cast, _int_arg, _shape_arg, _wrap, as_tensor, binary,
    convert_to_tensor, execute, getitem, matmul, numeric, truediv, unary,
)
from .errors import DTypeMismatchError, ResourceExhaustedError

_P = _registry.PRIMITIVES
_namespace_of = _backend.namespace_of
_binary, _unary, _execute = binary, unary, execute


# -- arithmetic -------------------------------------------------------------
# The op core (``binary``/``unary``) refuses bool arithmetic, as TF's kernels do;
# ops defined only for floats (sqrt of an integer...) check with ``numeric``,
# which names the op, the dtype and the shape.


def add(x, y, name=None): return _binary("Add", x, y)
def subtract(x, y, name=None): return _binary("Sub", x, y)
def multiply(x, y, name=None): return _binary("Mul", x, y)
def divide(x, y, name=None): return truediv(x, y)
def maximum(x, y, name=None): return _binary("Maximum", x, y)
def minimum(x, y, name=None): return _binary("Minimum", x, y)
def squared_difference(x, y, name=None): return _binary("SquaredDifference", x, y)
def floordiv(x, y, name=None): return _binary("FloorDiv", x, y)


def divide_no_nan(x, y, name=None):
    """TF's ``tf.math.divide_no_nan``: ``x / y``, and 0 where ``y`` is 0 (floating and complex dtypes, as TF)."""
    if isinstance(x, Tensor):
        x = numeric(x, "DivNoNan", "float")
    elif isinstance(y, Tensor):
        y = numeric(y, "DivNoNan", "float")
    else:
        x = numeric(x, "DivNoNan", "float")
    return _binary("DivNoNan", x, y)
def floormod(x, y, name=None): return _binary("FloorMod", x, y)
def negative(x, name=None): return _unary("Neg", x)
def square(x, name=None): return _unary("Square", x)
def sqrt(x, name=None): return _execute(_P["Sqrt"], (numeric(x, "Sqrt", "float"),))
def exp(x, name=None): return _execute(_P["Exp"], (numeric(x, "Exp", "float"),))
def log(x, name=None): return _execute(_P["Log"], (numeric(x, "Log", "float"),))
def log1p(x, name=None): return _execute(_P["Log1p"], (numeric(x, "Log1p", "float"),))
def sin(x, name=None): return _execute(_P["Sin"], (numeric(x, "Sin", "float"),))
def cos(x, name=None): return _execute(_P["Cos"], (numeric(x, "Cos", "float"),))
def tan(x, name=None): return _execute(_P["Tan"], (numeric(x, "Tan", "float"),))
def tanh(x, name=None): return _execute(_P["Tanh"], (numeric(x, "Tanh", "float"),))
def sigmoid(x, name=None): return _execute(_P["Sigmoid"], (numeric(x, "Sigmoid", "float"),))
def erf(x, name=None): return _execute(_P["Erf"], (numeric(x, "Erf", "real"),))
def abs(x, name=None): return _unary("Abs", x)  # TF's name
def sign(x, name=None): return _unary("Sign", x)
def round(x, name=None): return _unary("Round", x)
def floor(x, name=None): return _execute(_P["Floor"], (numeric(x, "Floor", "real"),))
def ceil(x, name=None): return _execute(_P["Ceil"], (numeric(x, "Ceil", "real"),))
def identity(x, name=None): return _unary("Identity", x)
def stop_gradient(x, name=None): return _unary("StopGradient", x)
def relu(x, name=None): return _unary("Relu", x)
def softplus(x, name=None): return _execute(_P["Softplus"], (numeric(x, "Softplus", "real"),))


# For gradient and tangent rules, whose operands are always two tensors of one
# dtype: straight into the op table, without the public argument checks.
def _mul(x, y): return _execute(_P["Mul"], (x, y))
def _sub(x, y): return _execute(_P["Sub"], (x, y))
def _pow(x, y): return _execute(_P["Pow"], (x, y))
def _div(x, y): return _execute(_P["RealDiv"], (x, y))
def _neg(x): return _execute(_P["Neg"], (x,))
def _const(c, like): return as_tensor(c, like)  # a Python number in ``like``'s dtype (cached on NumPy)
def _tanh_grad(y, g): return _execute(_P["TanhGrad"], (y, g))
def _sigmoid_grad(y, g): return _execute(_P["SigmoidGrad"], (y, g))
def _sqrt_grad(y, g): return _execute(_P["SqrtGrad"], (y, g))
def _reciprocal_grad(y, g): return _execute(_P["ReciprocalGrad"], (y, g))
def _softplus_grad(g, x): return _execute(_P["SoftplusGrad"], (g, x))
def _relu_grad(g, y): return _execute(_P["ReluGrad"], (g, y))
def _relu6_grad(g, y): return _execute(_P["Relu6Grad"], (g, y))
def _reshape(x, shape): return _execute(_P["Reshape"], (x,), {"shape": tuple(shape)})
def _sum(x, axis, keepdims=False): return _execute(_P["Sum"], (x,), {"axis": axis, "keepdims": keepdims})  # axis: tuple or None


def _broadcast_to(x, shape):
    shape = tuple(shape)
    return x if x._value.shape == shape else _execute(_P["BroadcastTo"], (x,), {"shape": shape})


def _matmul(a, b, transpose_a=False, transpose_b=False):
    return _execute(_P["MatMul"], (a, b), _TRANSPOSED[transpose_a, transpose_b])


def _leaky_relu_grad(g, x, alpha):
    return _execute(_P["LeakyReluGrad"], (g, x), {"alpha": alpha})


def pow(x, y, name=None):
    return _binary("Pow", x, y)


def add_n(inputs, name=None):
    """Sum of a list of tensors of one shape and dtype (no broadcasting, as in TF)."""
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)):
        raise TypeError(f"AddN: inputs must be a list of tensors, got {type(inputs).__name__}")
    if not inputs:
        raise InvalidArgumentError("AddN: needs at least one tensor, got an empty list")
    inputs = _same_dtype(list(inputs), "AddN")
    shapes = {t.shape for t in inputs}
    if len(shapes) > 1:
        raise InvalidArgumentError(f"AddN: all tensors need one shape, got {[tuple(t.shape) for t in inputs]}")
    numeric(inputs[0], "AddN")
    return _execute(_P["AddN"], tuple(inputs))


def reciprocal(x, name=None):
    """TF's Reciprocal, ``1/x`` as one op (its gradient is TF's −y²·g, not a division's)."""
    return _execute(_P["Reciprocal"], (numeric(x, "Reciprocal"),))


# -- comparisons (boolean, not differentiable) ---------------------------
def less(x, y, name=None): return _binary("Less", x, y)
def less_equal(x, y, name=None): return _binary("LessEqual", x, y)
def greater(x, y, name=None): return _binary("Greater", x, y)
def greater_equal(x, y, name=None): return _binary("GreaterEqual", x, y)
def equal(x, y, name=None): return _binary("Equal", x, y)
def not_equal(x, y, name=None): return _binary("NotEqual", x, y)
def logical_and(x, y, name=None): return _binary("LogicalAnd", *_bools("LogicalAnd", x, y))
def logical_or(x, y, name=None): return _binary("LogicalOr", *_bools("LogicalOr", x, y))
def logical_not(x, name=None): return _unary("LogicalNot", *_bools("LogicalNot", x))


def _bools(op, *xs):
    """The operands of a logical op as tensors; as TF's kernels, only bool ones (no truthiness of numbers)."""
    out = []
    for i, x in enumerate(xs):
        t = as_tensor(x, None, op)
        if not t.dtype.is_bool:
            raise InvalidArgumentError(f"{op}: input {i} must be a bool tensor, got dtype {t.dtype.name} (shape "
                                       f"{t.shape}); compare first (x > 0) or use ad.cast(x, ad.bool)")
        out.append(t)
    return out


# -- reductions ------------------------------------------------------------
def _axis(axis, ndim, op, repeats=False):
    """``axis`` (an int, a list of ints or an integer tensor) as sorted non-negative axes.

    An axis named twice (``[0, 0]``, or ``[0, -2]`` of a matrix) is refused as
    TF's reductions refuse it, unless ``repeats`` (squeeze, where TF allows it).
    """
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        if not axis.dtype.is_integer:
            raise TypeError(f"{op}: axis must be an integer or a list of integers, got a tensor of dtype {axis.dtype.name}")
        axis = axis.numpy().tolist()
    if isinstance(axis, (list, tuple)):
        axes = list(axis)
    else:
        axes = [axis]
    out = []
    for a in axes:
        a = _int_arg(a, op, "axis")
        if not -ndim <= a < builtins.max(ndim, 1):
            raise InvalidArgumentError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
        out.append(a % builtins.max(ndim, 1))
    if not repeats and len(set(out)) != len(out):
        twice = sorted({a for a in out if out.count(a) > 1})
        raise InvalidArgumentError(f"{op}: axis {axis!r} names dimension {twice[0]} more than once (a tensor of rank "
                                   f"{ndim}); give each axis once")
    return tuple(sorted(set(out)))


def _reduce(type, x, axis, keepdims):
    x = numeric(x, type)
    if axis is None and keepdims is False:  # (a loss's mean: one attribute dict for all, as records never change one)
        return _execute(_P[type], (x,), _OVER_ALL)
    return _execute(_P[type], (x,), {"axis": _axis(axis, x.ndim, type), "keepdims": bool(keepdims)})


_OVER_ALL = {"axis": None, "keepdims": False}


def reduce_sum(x, axis=None, keepdims=False, name=None): return _reduce("Sum", x, axis, keepdims)
def reduce_mean(x, axis=None, keepdims=False, name=None): return _reduce("Mean", x, axis, keepdims)
def reduce_max(x, axis=None, keepdims=False, name=None): return _reduce("Max", x, axis, keepdims)
def reduce_min(x, axis=None, keepdims=False, name=None): return _reduce("Min", x, axis, keepdims)
def reduce_prod(x, axis=None, keepdims=False, name=None): return _reduce("Prod", x, axis, keepdims)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Mean squared deviation from the mean, as TF computes it: ``mean(|x - mean(x)|²)``.

    >>> float(reduce_variance(convert_to_tensor([1.0, 2.0, 3.0, 4.0])))
    1.25
    """
    x = numeric(input_tensor, "reduce_variance", "float")
    with name_scope("reduce_variance"):
        mean = reduce_mean(x, axis=axis, keepdims=True)
        return reduce_mean(square(abs(x - mean)), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Standard deviation: ``sqrt(reduce_variance(x))``.

    >>> float(reduce_std(convert_to_tensor([[1.0, 2.0], [3.0, 4.0]])))
    1.11803...
    """
    x = numeric(input_tensor, "reduce_std", "float")
    with name_scope("reduce_std"):
        return sqrt(reduce_variance(x, axis=axis, keepdims=keepdims))


def argmax(x, axis=None, output_type=None, name=None):
    x = as_tensor(x, None, "ArgMax")
    axis = 0 if axis is None else _axis(axis, x.ndim, "ArgMax")[0]
    out = _execute(_P["ArgMax"], (x,), {"axis": axis})
    return cast(out, output_type) if output_type is not None else out


def argmin(x, axis=None, output_type=None, name=None):
    x = as_tensor(x, None, "ArgMin")
    axis = 0 if axis is None else _axis(axis, x.ndim, "ArgMin")[0]
    out = _execute(_P["ArgMin"], (x,), {"axis": axis})
    return cast(out, output_type) if output_type is not None else out


# -- linear algebra and shapes -------------------------------------------
def transpose(a, perm=None, name=None):
    a = as_tensor(a)
    if perm is not None and isinstance(perm, Tensor):
        perm = perm.numpy().tolist() if perm.dtype.is_integer else [perm]
    if perm is not None and not isinstance(perm, (list, tuple)):
        raise TypeError(f"Transpose: perm must be a list of axes, got {perm!r:.60}")
    perm = tuple(reversed(range(a.ndim))) if perm is None else tuple(_int_arg(p, "Transpose", "perm") for p in perm)
    if sorted(perm) != list(range(a.ndim)):
        raise InvalidArgumentError(f"Transpose: perm {perm} is not a permutation of the {a.ndim} axes of shape {a.shape}")
    return _execute(_P["Transpose"], (a,), {"perm": perm})


def reshape(tensor, shape, name=None):
    tensor = as_tensor(tensor)
    shape = _shape_arg(shape, "Reshape", allow_unknown=True)
    size = 1
    for d in tensor.shape:
        size *= d
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if (shape.count(-1) == 0 and known != size) or shape.count(-1) > 1 or (shape.count(-1) == 1 and (known == 0 or size % known)):
        need = (f"a multiple of {known}" if shape.count(-1) == 1 else f"{known}") if shape.count(-1) < 2 else "one -1 at most"
        raise InvalidArgumentError(f"Reshape: input to reshape is a tensor with {size} values (shape {tensor.shape}), "
                                   f"but the requested shape {shape} requires {need}")
    if -1 in shape:
        shape = tuple(size // known if s == -1 else s for s in shape)
    return _execute(_P["Reshape"], (tensor,), {"shape": shape})


def squeeze(input, axis=None, name=None):
    input = as_tensor(input)
    axes = _axis(axis, input.ndim, "Squeeze", repeats=True)
    if axes is not None:
        for a in axes:
            if input.shape[a] != 1:
                raise InvalidArgumentError(f"Squeeze: axis {a} of shape {input.shape} has size {input.shape[a]}, not 1")
    return _execute(_P["Squeeze"], (input,), {"axis": axes})


def expand_dims(input, axis, name=None):
    input = as_tensor(input)
    axis = _int_arg(axis, "ExpandDims", "axis")
    if not -input.ndim - 1 <= axis <= input.ndim:
        raise InvalidArgumentError(f"ExpandDims: axis {axis} is out of range for shape {input.shape}")
    return _execute(_P["ExpandDims"], (input,), {"axis": axis % (input.ndim + 1)})


def broadcast_to(input, shape, name=None):
    input = as_tensor(input)
    shape = _shape_arg(shape, "BroadcastTo")
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
    axis = _int_arg(axis, "ConcatV2", "axis")
    if nd == 0:
        raise InvalidArgumentError(f"ConcatV2: cannot concatenate scalars (shapes {[tuple(v.shape) for v in values]}); "
                                   "use ad.stack")
    if not -nd <= axis < nd:
        raise InvalidArgumentError(f"ConcatV2: axis {axis} is out of range for rank {nd}")
    axis %= nd
    for v in values:
        if v.ndim != nd or any(a != b for i, (a, b) in enumerate(zip(v.shape, values[0].shape)) if i != axis):
            raise InvalidArgumentError(f"ConcatV2: shapes {[tuple(v.shape) for v in values]} differ outside axis {axis}")
    return _execute(_P["ConcatV2"], tuple(values), {"axis": axis})


def stack(values, axis=0, name=None):
    values = _same_dtype(list(values), "Pack")
    if not values:
        raise InvalidArgumentError("Pack: needs at least one tensor")
    shapes = {v.shape for v in values}
    if len(shapes) > 1:
        raise InvalidArgumentError(f"Pack: all tensors need one shape, got {sorted(shapes)}")
    nd = values[0].ndim + 1
    axis = _int_arg(axis, "Pack", "axis")
    if not -nd <= axis < nd:
        raise InvalidArgumentError(f"Pack: axis {axis} is out of range for rank {nd}")
    return _execute(_P["Pack"], tuple(values), {"axis": axis % nd})


def unstack(value, num=None, axis=0, name=None):
    value = as_tensor(value)
    if value.ndim == 0:
        raise InvalidArgumentError(f"unstack: cannot unstack a scalar (shape {value.shape}): it has no axis to split")
    (axis,) = _axis(axis, value.ndim, "unstack")
    if num is not None and _int_arg(num, "unstack", "num") != value.shape[axis]:
        raise InvalidArgumentError(f"unstack: num={num} but axis {axis} of shape {value.shape} has {value.shape[axis]}")
    return [getitem(value, (slice(None),) * axis + (i,)) for i in range(value.shape[axis])]


def where(condition, x=None, y=None, name=None):
    condition = as_tensor(condition)
    if x is None and y is None:
        xp = _namespace_of(condition._value)
        idx = xp.stack(xp.nonzero(condition._value), axis=-1) if condition.ndim else xp.zeros((int(bool(condition)), 0), dtype=xp.int64)
        return _wrap(xp.astype(idx, xp.int64))
    if not condition.dtype.is_bool:
        raise TypeError(f"SelectV2: condition must be bool, got {condition.dtype.name}")
    if x is None or y is None:
        raise ValueError("SelectV2: give both x and y, or neither (then where returns the indices of True values)")
    if isinstance(x, Tensor):
        y = as_tensor(y, x, "SelectV2")
    else:
        y = as_tensor(y)
        x = as_tensor(x, y, "SelectV2")
    if x._value.dtype is not y._value.dtype and x.dtype is not y.dtype:
        raise DTypeMismatchError(f"SelectV2: x and y have different dtypes, {x.dtype.name} and {y.dtype.name}")
    try:
        _np.broadcast_shapes(condition.shape, x.shape, y.shape)
    except ValueError:
        raise InvalidArgumentError(f"SelectV2: condition {condition.shape}, x {x.shape} and y {y.shape} do not "
                                   "broadcast to one shape") from None
    return _execute(_P["SelectV2"], (condition, x, y))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    t = numeric(t, "ClipByValue")
    lo = as_tensor(clip_value_min, t, "ClipByValue")
    hi = as_tensor(clip_value_max, t, "ClipByValue")
    return _execute(_P["ClipByValue"], (t, lo, hi))


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Scale ``t`` so its L2 norm (over ``axes``) is at most ``clip_norm``."""
    t = numeric(t, "clip_by_norm", "float")
    with name_scope("clip_by_norm"):
        l2sum = reduce_sum(t * t, axis=axes, keepdims=True)
        # As TF: sqrt never sees a zero sum, so an all-zero t gets a finite gradient.
        positive = greater(l2sum, 0.0)
        l2 = where(positive, sqrt(where(positive, l2sum, ones_like(l2sum))), l2sum)
        clip = as_tensor(clip_norm, t, "clip_by_norm")
        return t * clip / maximum(l2, clip)


def cast(x, dtype, name=None):
    x = as_tensor(x, None, "Cast")
    try:
        dtype = _dtypes.as_dtype(dtype)
    except TypeError as e:
        raise TypeError(f"Cast: {e}") from None
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


def zeros(shape, dtype=None, name=None): return _new_filled("zeros", shape, dtype, lambda xp: xp.zeros)
def ones(shape, dtype=None, name=None): return _new_filled("ones", shape, dtype, lambda xp: xp.ones)


def _new_filled(op, shape, dtype, fn):
    dims = _shape_arg(shape, op)
    return _allocated(op, dims, _np_dtype(dtype), lambda: _make(fn, dims, dtype=dtype))


def _allocated(op, dims, np_dtype, make):
    """``make()``, a new array of shape ``dims``; one too large to allocate is TF's ``ResourceExhaustedError``."""
    nbytes = _math.prod(dims) * _np.dtype(np_dtype).itemsize
    try:
        if nbytes > _sys.maxsize:  # past what any array can index (NumPy says so with a ValueError)
            raise MemoryError
        return make()
    except MemoryError:
        raise ResourceExhaustedError(f"{op}: OOM when allocating a tensor of shape {dims} and dtype "
                                     f"{_dtypes.as_dtype(np_dtype).name}: {nbytes:,} bytes") from None


def eye(num_rows, num_columns=None, batch_shape=None, dtype=None, name=None):
    n = _int_arg(num_rows, "eye", "num_rows")
    m = n if num_columns is None else _int_arg(num_columns, "eye", "num_columns")
    if n < 0 or m < 0:
        raise InvalidArgumentError(f"eye: num_rows and num_columns must be >= 0, got {n} and {m}")
    out = _make(lambda xp: xp.eye, n, m, dtype=dtype)
    if batch_shape is not None:
        out = broadcast_to(out, _shape_arg(batch_shape, "eye") + (n, m))
    return out


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
    if v.ndim != 0:
        raise InvalidArgumentError(f"Fill: value must be a scalar, got shape {v.shape}")
    xp = _namespace_of(v._value)
    shape = _shape_arg(dims, "Fill")
    # (the standard's full takes a Python scalar)
    return _allocated("Fill", shape, v.dtype.as_numpy_dtype,
                      lambda: _wrap(xp.full(shape, v.numpy().item(), dtype=v._value.dtype)))


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``; integer ends give float64, as in TF.

    ``start`` and ``stop`` may be tensors of one shape: the values run along ``axis``.

    >>> print(linspace(0, 100, 5))
    ad.Tensor([  0.  25.  50.  75. 100.], shape=(5,), dtype=float64)
    """
    s = convert_to_tensor(start)
    e = as_tensor(stop, s, "LinSpace")
    if s.dtype != e.dtype:
        raise DTypeMismatchError(f"LinSpace: start and stop have different dtypes, {s.dtype.name} and {e.dtype.name}")
    if s.shape != e.shape:
        raise InvalidArgumentError(f"LinSpace: start {s.shape} and stop {e.shape} need one shape")
    n = _int_arg(num, "LinSpace", "num")
    if n <= 0:
        raise InvalidArgumentError(f"LinSpace: num must be positive, got {n}")
    if not s.dtype.is_floating:
        numeric(s, "LinSpace")
        to = "float32" if s.dtype.name in ("int8", "uint8", "int16", "uint16") else "float64"
        s, e = cast(s, to), cast(e, to)
    nd = s.ndim + 1
    ax = _int_arg(axis, "LinSpace", "axis")
    if not -nd <= ax < nd:
        raise InvalidArgumentError(f"LinSpace: axis {ax} is out of range for rank {nd}")
    ax %= nd
    s, e = expand_dims(s, ax), expand_dims(e, ax)
    if n == 1:
        return s
    # As TF: start, start + i * delta for i = 1 .. num-2, then exactly stop.
    xp = _namespace_of(s._value)
    delta = (e - s) / _wrap(xp.asarray(n - 1, dtype=s._value.dtype))
    steps = _wrap(xp.astype(xp.arange(1, n - 1), s._value.dtype))
    steps = reshape(steps, tuple(n - 2 if i == ax else 1 for i in builtins.range(nd)))
    return concat([s, s + steps * delta, e], axis=ax)


def range(start, limit=None, delta=1, dtype=None, name=None):  # TF's name
    if limit is None:
        start, limit = 0, start
    vals = [v.numpy().item() if isinstance(v, Tensor) else v for v in (start, limit, delta)]
    for what, v in zip(("start", "limit", "delta"), vals):
        if isinstance(v, bool) or not isinstance(v, (int, float, _np.integer, _np.floating)):
            raise TypeError(f"Range: {what} must be a number, got {v!r:.60} ({type(v).__name__})")
    start, limit, delta = vals
    if delta == 0:
        raise InvalidArgumentError(f"Range: requires delta != 0, got start={start}, limit={limit}, delta={delta}")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        raise InvalidArgumentError(f"Range: requires start {'<=' if delta > 0 else '>='} limit when delta "
                                   f"{'>' if delta > 0 else '<'} 0, got start={start}, limit={limit}, delta={delta}")
    if dtype is None:
        dtype = _np.float32 if builtins.any(isinstance(v, (float, _np.floating)) for v in vals) else _np.int32
    np_dtype = _np.dtype(_np_dtype(dtype))
    if np_dtype.kind != "f":
        return _make(lambda xp: xp.arange, start, limit, delta, dtype=dtype)
    # As TF's kernel: the three numbers in the result's dtype, ceil(|(limit - start) / delta|) values,
    # each start + i * delta (NumPy's arange steps by a delta rounded otherwise, and drifts).
    start, limit, delta = (np_dtype.type(v) for v in (start, limit, delta))
    n = int(_np.ceil(_np.abs((limit - start) / delta)))
    host = start + _np.arange(n).astype(np_dtype) * delta
    xp = _backend.current()
    return _wrap(host if xp is _np else _backend.shim(xp).asarray(host, _backend.shim(xp).dtype(np_dtype)))


# -- more TensorFlow ops: padding, einsum, linear algebra, norms, shapes ---
def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pad each axis with ``paddings[i] = [before, after]`` values.

    ``mode``: ``"CONSTANT"`` (``constant_values``), ``"REFLECT"`` (mirror
    without the edge) or ``"SYMMETRIC"`` (mirror with the edge), as in TF.

    >>> pad(convert_to_tensor([[1, 2]]), [[1, 0], [0, 1]]).numpy().tolist()
    [[0, 0, 0], [1, 2, 0]]
    """
    tensor = as_tensor(tensor)
    if isinstance(paddings, Tensor):
        paddings = paddings.numpy().tolist()
    try:
        rows = [tuple(r) for r in paddings]
    except TypeError:
        rows = None
    if rows is None or len(rows) != tensor.ndim or builtins.any(len(r) != 2 for r in rows):
        raise InvalidArgumentError(f"Pad: paddings must be [[before, after]] for each of the {tensor.ndim} axes of "
                                   f"shape {tensor.shape}, got {paddings!r:.80}")
    rows = tuple((_int_arg(b, "Pad", "a padding"), _int_arg(a, "Pad", "a padding")) for b, a in rows)
    if builtins.any(b < 0 or a < 0 for b, a in rows):
        raise InvalidArgumentError(f"Pad: paddings must be >= 0, got {[list(r) for r in rows]}")
    mode = mode.upper() if isinstance(mode, str) else mode
    if mode == "CONSTANT":
        value = as_tensor(constant_values, tensor, "Pad")
        if value.ndim != 0:
            raise InvalidArgumentError(f"Pad: constant_values must be a scalar, got shape {value.shape}")
        return _execute(_P["PadV2"], (tensor,), {"paddings": rows, "constant_values": value.numpy().item()})
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise InvalidArgumentError(f"Pad: mode must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', got {mode!r}")
    # Mirror padding gathers along each axis (differentiable through the gather).
    edge = 0 if mode == "SYMMETRIC" else 1
    out = tensor
    for axis, (before, after) in enumerate(rows):
        n = tensor.shape[axis]
        if before + edge > n or after + edge > n:
            raise InvalidArgumentError(f"Pad: {mode} padding of {max(before, after)} is too large for axis {axis} "
                                       f"of size {n} (at most {n - edge})")
        if before == after == 0:
            continue
        idx = ([before - i - 1 + edge for i in builtins.range(before)] + list(builtins.range(n))
               + [n - 1 - edge - i for i in builtins.range(after)])
        out = getitem(out, (slice(None),) * axis + (_np.asarray(idx, dtype=_np.int64),))
    return out


def _einsum_parse(equation, shapes):
    """``equation`` made explicit: (operand letter strings, output letters), with ``...`` spelled out."""
    if not isinstance(equation, str):
        raise TypeError(f"Einsum: the equation must be a string, got {equation!r:.60}")
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise InvalidArgumentError(f"Einsum: equation {equation!r} has {len(ins)} operands, got {len(shapes)} tensors")
    used = set(c for c in eq if c.isalpha())
    for c in eq:
        if not (c.isalpha() and c.isascii()) and c not in ",.->":
            raise InvalidArgumentError(f"Einsum: equation {equation!r} has the character {c!r}; use letters, ',', "
                                       "'->' and '...'")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    ell = 0
    for s, shape in zip(ins, shapes):
        if "..." in s:
            ell = builtins.max(ell, len(shape) - len(s.replace("...", "")))
    ell_letters = "".join(spare[:ell])
    full = []
    for s, shape in zip(ins, shapes):
        if "..." in s:
            k = len(shape) - len(s.replace("...", ""))
            if k < 0:
                raise InvalidArgumentError(f"Einsum: operand {s!r} of {equation!r} has more letters than the "
                                           f"{len(shape)} axes of its shape {shape}")
            s = s.replace("...", ell_letters[ell - k:] if k else "")
        if "." in s or len(s) != len(shape):
            raise InvalidArgumentError(f"Einsum: operand {s!r} of {equation!r} names {len(s)} axes, but its tensor "
                                       f"has shape {shape}")
        full.append(s)
    if arrow:
        out = out.replace("...", ell_letters)
    else:
        counts = {}
        for s in full:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell_letters + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell_letters))
    if len(set(out)) != len(out) or builtins.any(c not in "".join(full) for c in out):
        raise InvalidArgumentError(f"Einsum: the output {out!r} of {equation!r} must name each letter once, and only "
                                   "letters of the operands")
    sizes = {}
    for s, shape in zip(full, shapes):
        for c, d in zip(s, shape):
            if sizes.get(c, d) != d and not (c in ell_letters and 1 in (d, sizes[c])):
                raise InvalidArgumentError(f"Einsum: letter {c!r} of {equation!r} has size {sizes[c]} in one operand "
                                           f"and {d} in another (shapes {[tuple(s) for s in shapes]})")
            sizes[c] = builtins.max(sizes.get(c, d), d) if c in ell_letters else d
    return full, out


def einsum(equation, *inputs, name=None, **kwargs):
    """Sums of products named by an equation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    >>> einsum("ij,j->i", convert_to_tensor([[1.0, 2.0], [3.0, 4.0]]), convert_to_tensor([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0]
    """
    if kwargs:
        raise TypeError(f"Einsum: unexpected arguments {sorted(kwargs)}")
    if not inputs:
        raise InvalidArgumentError("Einsum: needs at least one tensor")
    xs = _same_dtype(list(inputs), "Einsum")
    numeric(xs[0], "Einsum")
    ins, out = _einsum_parse(equation, [x.shape for x in xs])
    for k, letters in enumerate(ins):
        # A letter twice in one operand ('bxby') takes that operand's diagonal over the two axes first.
        while len(set(letters)) != len(letters):
            c = next(ch for ch in letters if letters.count(ch) > 1)
            i, j = [pos for pos, ch in enumerate(letters) if ch == c][:2]
            perm = [pos for pos in builtins.range(len(letters)) if pos not in (i, j)] + [i, j]
            xs[k] = diag_part(transpose(xs[k], perm))
            letters = "".join(letters[pos] for pos in perm[:-2]) + c
        ins[k] = letters
    eq = ",".join(ins) + "->" + out
    return _execute(_P["Einsum"], tuple(xs), {"equation": eq, "inputs": tuple(ins), "output": out})


def _matrix(x, op, square=False):
    x = numeric(x, op, "real")
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        raise InvalidArgumentError(f"{op}: needs {'square ' if square else ''}matrices [..., M, "
                                   f"{'M' if square else 'N'}], got shape {x.shape}")
    return x


def _matrix_t(x):
    """Each matrix of ``x`` transposed (the last two axes swapped)."""
    perm = list(builtins.range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


def matrix_transpose(a, name=None, conjugate=False):
    return _matrix_t(_matrix(a, "matrix_transpose"))


def diag_part(input, name=None, k=0, padding_value=0, align="RIGHT_LEFT"):
    """The main diagonal of each matrix: shape ``[..., min(M, N)]`` (``tf.linalg.diag_part``)."""
    if k != 0:
        raise InvalidArgumentError(f"MatrixDiagPartV3: only the main diagonal (k=0) is supported here, got k={k}")
    return _execute(_P["MatrixDiagPartV3"], (_matrix(input, "MatrixDiagPartV3"),))


def _matrix_diag(g, m, n):
    """Zeros of shape ``[..., m, n]`` with ``g`` (``[..., min(m, n)]``) on the diagonal: diag_part's gradient."""
    if n > g.shape[-1]:
        g = pad(g, [[0, 0]] * (g.ndim - 1) + [[0, n - g.shape[-1]]])
    xp = _namespace_of(g._value)
    return expand_dims(g, -2) * _wrap(xp.eye(m, n, dtype=g._value.dtype))


def trace(x, name=None):
    """Sum of each matrix's diagonal (``tf.linalg.trace``).

    >>> float(trace(convert_to_tensor([[1.0, 2.0], [3.0, 4.0]])))
    5.0
    """
    return reduce_sum(diag_part(x), axis=-1)


def inv(input, adjoint=False, name=None):
    """The inverse of each square matrix (``tf.linalg.inv``); a singular one is an InvalidArgumentError."""
    a = _matrix(input, "MatrixInverse", square=True)
    return _execute(_P["MatrixInverse"], (_matrix_t(a) if adjoint else a,))


def det(input, name=None):
    """The determinant of each square matrix (``tf.linalg.det``).

    >>> float(det(convert_to_tensor([[1.0, 2.0], [3.0, 4.0]])))
    -2.0
    """
    return _execute(_P["MatrixDeterminant"], (_matrix(input, "MatrixDeterminant", square=True),))


def solve(matrix, rhs, adjoint=False, name=None):
    """``X`` with ``matrix @ X = rhs`` (``tf.linalg.solve``): matrix ``[..., M, M]``, rhs ``[..., M, K]``."""
    a = _matrix(matrix, "MatrixSolve", square=True)
    b = _matrix(as_tensor(rhs, a, "MatrixSolve"), "MatrixSolve")
    if a.dtype != b.dtype:
        raise DTypeMismatchError(f"MatrixSolve: matrix and rhs have different dtypes, {a.dtype.name} and {b.dtype.name}")
    if b.shape[-2] != a.shape[-1] or a.shape[:-2] != b.shape[:-2]:
        raise InvalidArgumentError(f"MatrixSolve: matrix {a.shape} and rhs {b.shape} do not fit: rhs needs shape "
                                   f"{tuple(a.shape[:-2]) + (a.shape[-1], 'K')}")
    return _execute(_P["MatrixSolve"], (_matrix_t(a) if adjoint else a, b))


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """Vector and matrix norms, as ``tf.norm``: ``ord`` is ``"euclidean"``, ``"fro"``, 1, 2, ``np.inf`` or a p > 0.

    ``axis`` None: the tensor as one vector; an int: vector norms along it; a
    pair: matrix norms (``"fro"``/``"euclidean"``, 1 or ``np.inf``).

    >>> float(norm(convert_to_tensor([3.0, 4.0])))
    5.0
    """
    x = numeric(tensor, "norm", "float")
    axes = None if axis is None else (_axis(axis, x.ndim, "norm"))
    if axis is not None and not isinstance(axis, (list, tuple)):
        axes = axes  # one int: vector norms along it
    keep = bool(keepdims)
    matrix = axes is not None and len(axes) == 2
    if axes is not None and len(axes) > 2:
        raise InvalidArgumentError(f"norm: axis must be None, an int or a pair of ints, got {axis!r}")
    with name_scope("norm"):
        if matrix:
            if ord in ("euclidean", "fro"):
                return sqrt(reduce_sum(x * x, axis=axes, keepdims=keep))
            if ord in (1, _np.inf):
                sum_over, then = (axes[0], axes[1]) if ord == 1 else (axes[1], axes[0])
                col = reduce_sum(abs(x), axis=sum_over, keepdims=True)
                out = reduce_max(col, axis=then, keepdims=True)
                return out if keep else squeeze(out, axis=list(axes))
            raise InvalidArgumentError(f"norm: for a matrix, ord must be 'euclidean', 'fro', 1 or np.inf, got {ord!r}")
        if ord in ("euclidean", 2, 2.0):
            return sqrt(reduce_sum(x * x, axis=axes, keepdims=keep))
        if ord == _np.inf:
            return reduce_max(abs(x), axis=axes, keepdims=keep)
        if ord == 1:
            return reduce_sum(abs(x), axis=axes, keepdims=keep)
        if isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord > 0:
            return pow(reduce_sum(pow(abs(x), float(ord)), axis=axes, keepdims=keep), 1.0 / ord)
        raise InvalidArgumentError(f"norm: ord must be 'euclidean', 'fro', np.inf or a number > 0, got {ord!r}")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A one at each index along a new axis of size ``depth`` (``tf.one_hot``); out-of-range indices give zeros.

    >>> one_hot(convert_to_tensor([0, 2]), 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    indices = as_tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"OneHot: indices must be integers, got dtype {indices.dtype.name}")
    depth = _int_arg(depth, "OneHot", "depth")
    if depth < 0:
        raise InvalidArgumentError(f"OneHot: depth must be >= 0, got {depth}")
    dt = _dtypes.as_dtype(dtype) if dtype is not None else _dtypes.float32
    nd = indices.ndim + 1
    ax = nd - 1 if axis is None or axis == -1 else _int_arg(axis, "OneHot", "axis")
    if not 0 <= ax < nd:
        raise InvalidArgumentError(f"OneHot: axis {axis} is out of range for the result's rank {nd}")
    on = 1 if on_value is None else as_tensor(on_value).numpy().item()
    off = 0 if off_value is None else as_tensor(off_value).numpy().item()
    xp = _namespace_of(indices._value)
    return _execute(_P["OneHot"], (indices,), {"depth": depth, "on_value": on, "off_value": off, "axis": ax,
                                                "dtype": _backend.shim(xp).dtype(dt)})


def _int_tensor(values, dtype):
    xp = _backend.current()
    return _wrap(xp.asarray(values, dtype=_backend.shim(xp).dtype(dtype)))


def shape(input, out_type=None, name=None):
    """The shape as a 1-D int32 tensor (``tf.shape``); ``input.shape`` gives a ``TensorShape``.

    >>> print(shape(ones((2, 3))))
    ad.Tensor([2 3], shape=(2,), dtype=int32)
    """
    return _int_tensor(list(as_tensor(input).shape), out_type or "int32")


def size(input, out_type=None, name=None):
    """The number of elements, a scalar int32 tensor (``tf.size``)."""
    return _int_tensor(as_tensor(input).shape.num_elements(), out_type or "int32")


def rank(input, name=None):
    """The number of axes, a scalar int32 tensor (``tf.rank``)."""
    return _int_tensor(as_tensor(input).ndim, "int32")
