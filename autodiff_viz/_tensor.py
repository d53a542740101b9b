"""Tensors and variables: immutable values with an identity the tape can follow.

A tensor is an array plus a unique integer id.  Tapes record ids, never the
tensors themselves, so a tape keeps alive only the values a gradient rule
asked to save.
"""
from __future__ import annotations

import itertools

import numpy as _np

from . import _backend, _dtypes

_next_id = itertools.count(1).__next__


class Tensor:
    """An immutable array that gradient tapes can follow.

    >>> import autodiff_viz as ad
    >>> print(ad.constant([1.0, 2.0]) * 3.0)
    ad.Tensor([3. 6.], shape=(2,), dtype=float32)
    """

    __slots__ = ("_value", "_id", "__weakref__")
    __array_priority__ = 1000  # NumPy defers to our operators: ndarray * Tensor -> Tensor

    # -- basic properties -------------------------------------------------
    @property
    def dtype(self) -> _dtypes.DType:
        return _dtypes.of_array(self._value)

    @property
    def shape(self) -> tuple:
        return tuple(self._value.shape)

    @property
    def ndim(self) -> int:
        return len(self._value.shape)

    @property
    def name(self):
        return None

    def numpy(self):
        """The value as a host NumPy array (a scalar for 0-d tensors, as in TF)."""
        v = _backend.to_numpy(self._value)
        return v[()] if v.ndim == 0 else v

    def get_shape(self):
        return self.shape

    # -- leaving the package ---------------------------------------------
    def __array__(self, dtype=None, copy=None):
        _leave(self, "numpy")
        v = _np.asarray(_backend.to_numpy(self._value))
        return v.astype(dtype) if dtype is not None else v

    def __float__(self):
        return float(self._scalar("float()"))

    def __int__(self):
        return int(self._scalar("int()"))

    def __index__(self):
        return int(self._scalar("index"))

    def __bool__(self):
        return bool(self._scalar("bool()"))

    def _scalar(self, what):
        if self._value.shape != () and _np.prod(self._value.shape) != 1:
            raise ValueError(f"{what} needs a tensor with one element, got shape {self.shape}")
        return _backend.to_numpy(self._value).reshape(())[()]

    def __len__(self):
        if not self._value.shape:
            raise TypeError("len() of a scalar tensor")
        return self._value.shape[0]

    def __iter__(self):
        if not self._value.shape:
            raise TypeError("iteration over a scalar tensor")
        for i in range(self._value.shape[0]):
            yield self[i]

    # -- printing ------------------------------------------------------------
    def _value_str(self):
        v = _backend.to_numpy(self._value)
        return str(v[()]) if v.ndim == 0 else str(v)

    def __str__(self):
        body = self._value_str()
        if "\n" in body:
            body = "\n" + body
        return f"ad.Tensor({body}, shape={self.shape}, dtype={self.dtype.name})"

    def __repr__(self):
        v = _backend.to_numpy(self._value)
        shown = str(v[()]) if v.ndim == 0 else repr(v)
        return f"<ad.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={shown}>"

    # -- operators (all go through the op table) ---------------------------
    def __add__(self, o): return _ops.add(self, o)
    def __radd__(self, o): return _ops.add(o, self)
    def __sub__(self, o): return _ops.subtract(self, o)
    def __rsub__(self, o): return _ops.subtract(o, self)
    def __mul__(self, o): return _ops.multiply(self, o)
    def __rmul__(self, o): return _ops.multiply(o, self)
    def __truediv__(self, o): return _ops.divide(self, o)
    def __rtruediv__(self, o): return _ops.divide(o, self)
    def __pow__(self, o): return _ops.pow(self, o)
    def __rpow__(self, o): return _ops.pow(o, self)
    def __matmul__(self, o): return _ops.matmul(self, o)
    def __rmatmul__(self, o): return _ops.matmul(o, self)
    def __neg__(self): return _ops.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)
    def __getitem__(self, index): return _ops._getitem(self, index)
    def __lt__(self, o): return _ops.less(self, o)
    def __le__(self, o): return _ops.less_equal(self, o)
    def __gt__(self, o): return _ops.greater(self, o)
    def __ge__(self, o): return _ops.greater_equal(self, o)
    def __eq__(self, o): return _ops.equal(self, o)
    def __ne__(self, o): return _ops.not_equal(self, o)
    __hash__ = object.__hash__  # identity hashing, as TF does for eager tensors in sets


class EagerTensor(Tensor):
    """The concrete type of every op result (named as in TensorFlow)."""

    __slots__ = ()


def _wrap(value) -> EagerTensor:
    t = _new(EagerTensor)
    t._value = value
    t._id = _next_id()
    return t


_new = object.__new__


def _wrap_with_id(value, ident) -> EagerTensor:
    """A read of a variable: a tensor carrying the variable's id, so tapes link it."""
    t = _new(EagerTensor)
    t._value = value
    t._id = ident
    return t


class ResourceVariable(Tensor):
    """A mutable, named tensor; trainable variables are watched automatically.

    >>> import autodiff_viz as ad
    >>> v = ad.Variable(3.0, name="x0")
    >>> v.name
    'x0:0'
    """

    __slots__ = ("_name", "_trainable")

    def __init__(self, initial_value=None, name=None, trainable=True, dtype=None, shape=None):
        if initial_value is None:
            raise ValueError("Variable: initial_value is required")
        if callable(initial_value):
            initial_value = initial_value()
        value = convert_to_tensor(initial_value, dtype=dtype)._value
        if shape is not None:
            want = tuple(-1 if s is None else int(s) for s in shape)
            have = tuple(value.shape)
            if len(want) != len(have) or any(w not in (-1, h) for w, h in zip(want, have)):
                raise ValueError(f"Variable: initial value has shape {have}, not the declared shape {tuple(shape)}")
        self._value = value
        self._id = _next_id()
        self._name = _variable_name(name)
        self._trainable = bool(trainable)

    @property
    def name(self) -> str:
        return self._name

    @property
    def trainable(self) -> bool:
        return self._trainable

    def read_value(self) -> EagerTensor:
        return _wrap_with_id(self._value, self._id)

    def value(self) -> EagerTensor:
        return self.read_value()

    def _assign(self, new_value, how):
        new = convert_to_tensor(new_value, dtype=self.dtype)._value
        if tuple(new.shape) != tuple(self._value.shape):
            raise ValueError(f"Variable.{how}: shape {tuple(new.shape)} does not match the variable's shape {self.shape}")
        self._value = new
        _state_change(self, how)
        return self

    def assign(self, value):
        return self._assign(value, "assign")

    def assign_add(self, delta):
        delta = convert_to_tensor(delta, dtype=self.dtype)._value
        return self._assign(self._value + delta, "assign_add")

    def assign_sub(self, delta):
        delta = convert_to_tensor(delta, dtype=self.dtype)._value
        return self._assign(self._value - delta, "assign_sub")

    def __repr__(self):
        v = _backend.to_numpy(self._value)
        shown = str(v[()]) if v.ndim == 0 else repr(v)
        return f"<ad.Variable '{self._name}' shape={self.shape} dtype={self.dtype.name}, numpy={shown}>"

    __str__ = __repr__


Variable = ResourceVariable


def _variable_name(name):
    if name is None:
        return "Variable:0"
    name = str(name)
    if ":" in name:
        return name
    scope = _scope_prefix()
    return f"{scope}{name}:0"


def _scope_prefix() -> str:
    from ._tape import current_scope

    s = current_scope()
    return f"{s}/" if s else ""


# ---------------------------------------------------------------------------
# Conversion
# ---------------------------------------------------------------------------
def _default_dtype(value):
    """TF's rule: Python floats -> float32, ints -> int32, bools -> bool."""
    if isinstance(value, bool):
        return _np.bool_
    if isinstance(value, int):
        return _np.int32
    if isinstance(value, float):
        return _np.float32
    if isinstance(value, (list, tuple)):
        flat = _flatten_py(value)
        if any(isinstance(v, Tensor) for v in flat):
            return None
        if any(isinstance(v, float) or (isinstance(v, _np.floating)) for v in flat):
            return _np.float32
        if flat and all(isinstance(v, bool) for v in flat):
            return _np.bool_
        if any(isinstance(v, (int, _np.integer)) for v in flat):
            return _np.int32
        return _np.float32 if not flat else None  # strings and objects: rejected by dtype lookup
    return None


def _flatten_py(value):
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            out.append(v)
    return out


def convert_to_tensor(value, dtype=None, name=None, dtype_hint=None) -> Tensor:
    """Turn a Python number, list, NumPy array or tensor into a tensor.

    >>> import autodiff_viz as ad
    >>> ad.convert_to_tensor([1, 2]).dtype
    ad.int32
    """
    if isinstance(value, Tensor):
        if dtype is not None and _dtypes.as_dtype(dtype) != value.dtype:
            raise TypeError(f"convert_to_tensor: tensor has dtype {value.dtype.name}, asked for {_dtypes.as_dtype(dtype).name}")
        return value
    xp = _backend.current()
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in _flatten_py(value)):
        return _ops.stack([convert_to_tensor(v, dtype=dtype) for v in value])
    if dtype is not None:
        np_dtype = _dtypes.as_dtype(dtype).as_numpy_dtype
    elif isinstance(value, (bool, int, float, list, tuple)):
        np_dtype = _default_dtype(value)
        if dtype_hint is not None and np_dtype is not None and _np.dtype(np_dtype).kind != "b":
            hint = _dtypes.as_dtype(dtype_hint)
            if hint.is_floating or _np.dtype(np_dtype).kind == "i":
                np_dtype = hint.as_numpy_dtype
    else:
        np_dtype = None
    ns = None if isinstance(value, (_np.ndarray, _np.generic, bool, int, float, list, tuple)) else _backend.array_namespace(value)
    if ns is not None:
        # Another library's array (CuPy, a strict Array-API array) stays on its device.
        arr = value if dtype is None else _backend.shim(ns).astype(value, _dtypes.as_dtype(dtype))
        _dtypes.of_array(arr)
        return _wrap(arr)
    try:
        # Python and NumPy input is built on the host first, so its dtype is
        # checked (and named in errors) the same way for every backend.
        host = _np.asarray(value, dtype=np_dtype)
        _dtypes.of_array(host)
    except (TypeError, ValueError) as e:
        raise type(e)(f"convert_to_tensor: cannot make a tensor of numbers from {value!r:.80}: {e}") from None
    arr = host if xp is _np else _backend.shim(xp).asarray(host, _backend.shim(xp).dtype(host.dtype))
    if dtype is None and isinstance(value, (list, tuple, float)) and _dtypes.of_array(arr) is _dtypes.float64:
        arr = _backend.shim(xp).astype(arr, _dtypes.float32)
    return _wrap(arr)


def constant(value, dtype=None, shape=None, name=None) -> Tensor:
    """A constant tensor: ``ad.constant(3.0)`` is float32, ``ad.constant(3)`` int32."""
    t = convert_to_tensor(value, dtype=dtype)
    if shape is not None:
        xp = _backend.namespace_of(t._value)
        t = _wrap(xp.broadcast_to(t._value, tuple(shape)) if t._value.size == 1 or t.shape == () else xp.reshape(t._value, tuple(shape)))
    return t


# Hooks the tape module installs; kept here to avoid an import cycle.
def _leave(tensor, how):  # replaced by _tape
    pass


def _state_change(var, how):  # replaced by _tape
    pass


from . import _ops  # noqa: E402  (operators need the op functions)
