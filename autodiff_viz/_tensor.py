"""Tensors and variables, and how one op runs on them.

A tensor is an array plus a unique integer id.  Tapes record ids, never the
tensors themselves, so a tape keeps alive only the values a gradient rule
asked to save.

Following ``x * y`` in this module: ``Tensor.__mul__`` calls
:func:`binary` (convert the other operand, check dtypes), which calls
:func:`execute` (run the primitive's forward on the arrays, wrap the result),
which hands the op to :func:`autodiff_viz._record.record` when a tape or an
accumulator is active.  ``_ops`` builds the rest of the public op functions
on :func:`execute`.

>>> import autodiff_viz as ad
>>> from autodiff_viz._registry import PRIMITIVES
>>> float(execute(PRIMITIVES["Mul"], (ad.constant(2.0), ad.constant(3.0))))
6.0
"""
from __future__ import annotations

import builtins
import itertools
import operator
import sys as _sys
import threading

import numpy as _np

from . import _backend, _dtypes, _registry
from ._context import ACTIVE, current_scope
from ._record import note_leave, note_state, record, remember
from ._registry import PRIMITIVES
from ._shape import TensorShape
from .errors import DTypeMismatchError, InvalidArgumentError

_tuple_new = tuple.__new__
_BY_CLASS = _dtypes._by_class  # NumPy's dtype class -> our DType: the hot path's dtype lookup
_next_id = itertools.count(1).__next__


def _numpy_shown(value) -> str:
    """A value as TF's repr writes it after ``numpy=``: a scalar bare, an array as NumPy prints it."""
    v = _backend.to_numpy(value)
    shown = str(v[()]) if v.ndim == 0 else repr(v)
    return "\n" + shown if "\n" in shown else shown  # as TF: a value over several lines starts on its own line


class Tensor:
    """An immutable array that gradient tapes can follow.

    >>> import autodiff_viz as ad
    >>> print(ad.constant([1.0, 2.0]) * 3.0)
    ad.Tensor([3. 6.], shape=(2,), dtype=float32)
    """

    __slots__ = ("_value", "_id", "__weakref__")
    __array_priority__ = 1000  # NumPy defers to our operators: ndarray * Tensor -> Tensor
    _is_variable = False       # read on every recorded op: a class attribute, no isinstance

    # -- basic properties -------------------------------------------------
    @property
    def dtype(self) -> _dtypes.DType:
        return _dtypes.of_array(self._value)

    @property
    def shape(self) -> TensorShape:
        """The size of each axis, as TensorFlow's ``TensorShape`` (a tuple of ints underneath)."""
        return _tuple_new(TensorShape, self._value.shape)  # an array's own shape needs no checks

    @property
    def device(self) -> str:
        """Where the value lives, in TensorFlow's spelling (``.../device:CPU:0``; CuPy arrays: ``GPU``)."""
        kind = "GPU" if type(self._value).__module__.startswith("cupy") else "CPU"
        return f"/job:localhost/replica:0/task:0/device:{kind}:0"

    @property
    def ndim(self) -> int:
        return len(self._value.shape)

    @property
    def name(self):
        return None

    def numpy(self):
        """The value as a host NumPy array (a scalar for 0-d tensors, as in TF)."""
        if ACTIVE[0] and _from_user():  # (with no tape or accumulator anywhere, no tape has a note to take)
            note_leave(self, "numpy()")
        v = self._value
        if type(v) is not _np.ndarray:  # (a NumPy array is its own host array: to_numpy would return it)
            v = _backend.to_numpy(v)
        return v[()] if v.ndim == 0 else v

    def get_shape(self):
        return self.shape

    # -- leaving the package ---------------------------------------------
    def __array__(self, dtype=None, copy=None):
        note_leave(self, "numpy")
        v = _np.asarray(_backend.to_numpy(self._value))
        return v.astype(dtype) if dtype is not None else v

    def __float__(self):
        if _from_user():
            note_leave(self, "float()")
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

    def __format__(self, spec):
        # As TF: the value's own formatting, so f"{loss:.3f}" works on a scalar.
        value = self.numpy()
        if not spec:
            return str(value)  # NumPy's own text: 0.123456 for a float32, [1. 2.] for an array
        try:
            return format(value, spec)
        except (TypeError, ValueError) as e:
            raise TypeError(f"format: a tensor of shape {self.shape} and dtype {self.dtype.name} cannot be "
                            f"formatted with {spec!r}" + (" (a format spec needs a scalar: index the tensor or "
                                                          "call .numpy() first)" if self._value.shape else f": {e}")
                            ) from None

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
        return f"<ad.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={_numpy_shown(self._value)}>"

    # -- operators (all go through the op table) ---------------------------
    def __add__(self, o): return binary("Add", self, o)
    def __radd__(self, o): return binary("Add", o, self)
    def __sub__(self, o): return binary("Sub", self, o)
    def __rsub__(self, o): return binary("Sub", o, self)
    def __mul__(self, o): return binary("Mul", self, o)
    def __rmul__(self, o): return binary("Mul", o, self)
    def __truediv__(self, o):
        return binary("RealDiv", self, o) if _dtypes.of_array(self._value).is_floating else truediv(self, o)

    def __rtruediv__(self, o):
        return binary("RealDiv", o, self) if _dtypes.of_array(self._value).is_floating else truediv(o, self)

    def __floordiv__(self, o): return binary("FloorDiv", self, o)
    def __rfloordiv__(self, o): return binary("FloorDiv", o, self)
    def __mod__(self, o): return binary("FloorMod", self, o)
    def __rmod__(self, o): return binary("FloorMod", o, self)
    def __pow__(self, o): return binary("Pow", self, o)
    def __rpow__(self, o): return binary("Pow", o, self)
    def __matmul__(self, o): return matmul(self, o)
    def __rmatmul__(self, o): return matmul(o, self)
    def __neg__(self): return unary("Neg", self)
    def __pos__(self): return self
    def __abs__(self): return unary("Abs", self)
    def __getitem__(self, index): return getitem(self, index)
    def __lt__(self, o): return binary("Less", self, o)
    def __le__(self, o): return binary("LessEqual", self, o)
    def __gt__(self, o): return binary("Greater", self, o)
    def __ge__(self, o): return binary("GreaterEqual", self, o)
    def __eq__(self, o): return False if o is None else binary("Equal", self, o)  # as TF: t == None is False
    def __ne__(self, o): return True if o is None else binary("NotEqual", self, o)
    __hash__ = object.__hash__  # identity hashing, as TF does for eager tensors in sets


class EagerTensor(Tensor):
    """The concrete type of every op result (named as in TensorFlow)."""

    __slots__ = ()


class _NamedConstant(EagerTensor):
    """A constant made with ``name=``: pictures label it with that name."""

    __slots__ = ("_label",)

    @property
    def name(self) -> str:
        return self._label


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


def _from_user() -> bool:
    """Whether the caller of the method that calls this is outside the package: the package's own ops read
    values (an axis, a mask) without the value leaving anything."""
    caller = _sys._getframe(2).f_globals.get("__name__", "")
    return not (caller == "autodiff_viz" or caller.startswith("autodiff_viz."))


class ResourceVariable(Tensor):
    """A mutable, named tensor; trainable variables are watched automatically.

    ``assign``, ``assign_add`` and ``assign_sub`` are atomic per call, as
    TF's resource variables are: each variable has its own lock, held only
    while the new value is computed and stored, so threads updating one
    variable lose no update.

    >>> import autodiff_viz as ad
    >>> v = ad.Variable(3.0, name="x0")
    >>> v.name
    'x0:0'
    """

    __slots__ = ("_name", "_trainable", "_lock")
    _is_variable = True

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
        self._lock = threading.Lock()

    def __getstate__(self):
        # A copy (copy.deepcopy, pickle) gets its own lock: a lock is neither copied nor shared.
        return {"_value": self._value, "_id": self._id, "_name": self._name, "_trainable": self._trainable}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def trainable(self) -> bool:
        return self._trainable

    def read_value(self) -> EagerTensor:
        return _wrap_with_id(self._value, self._id)

    def _snapshot(self) -> EagerTensor:
        # A record saves the value read now: the variable may be assigned before the backward pass.
        return _wrap_with_id(self._value, self._id)

    def value(self) -> EagerTensor:
        return self.read_value()

    def _converted(self, value, how):
        """``value`` as an array of the variable's dtype; errors name the method (``Variable.assign``...)."""
        if isinstance(value, Tensor) and not value._is_variable and value._value.dtype is self._value.dtype:
            # An update step's usual case, a tensor of the variable's dtype: nothing to convert.
            return value._value
        return _convert_for(value, f"Variable.{how} of {self._name!r}", self.dtype)._value

    def assign(self, value):
        new = self._converted(value, "assign")
        if new.shape != self._value.shape:
            raise ValueError(f"Variable.assign: shape {tuple(new.shape)} does not match the variable's shape {self.shape}")
        with self._lock:
            self._value = new
        note_state(self, "assign")
        return self

    def assign_add(self, delta):
        return self._update(delta, "assign_add", operator.add)

    def assign_sub(self, delta):
        return self._update(delta, "assign_sub", operator.sub)

    def _update(self, delta, how, combine):
        """``value = combine(value, delta)`` under the variable's lock; shapes must be equal, as TF's kernel asks."""
        if delta.__class__ is EagerTensor and delta._value.dtype is self._value.dtype:
            d = delta._value  # (an update step's usual delta, an op's result of the variable's dtype, as it is)
        else:
            d = self._converted(delta, how)
        if d.shape != self._value.shape:  # (every array library's shape is a tuple)
            raise InvalidArgumentError(f"Variable.{how} of {self._name!r}: cannot update a variable of shape {self.shape} "
                                       f"with a tensor of shape {tuple(d.shape)}; the shapes must be equal (no "
                                       "broadcasting, as in TensorFlow)")
        lock = self._lock
        lock.acquire()  # (called, not ``with``: a third of the cost of taking the lock on every training step)
        try:
            self._value = combine(self._value, d)
        finally:
            lock.release()
        if ACTIVE[0]:  # (no tape or accumulator in any thread: none to tell)
            note_state(self, how)
        return self

    def __getitem__(self, index):
        """``v[index]``: a read of the slice (recorded as any index) that can also be assigned, as in TF.

        >>> import autodiff_viz as ad
        >>> v = ad.Variable([1.0, 2.0, 3.0])
        >>> v[1:].assign([5.0, 6.0]).numpy().tolist()
        [1.0, 5.0, 6.0]
        """
        read = getitem(self, index)
        piece = _new(_VariableSlice)
        piece._value, piece._id, piece._var, piece._index = read._value, read._id, self, index
        return piece

    def _assign_slice(self, index, value):
        xp = _namespace_of(self._value)
        where = _backend.shim(xp).index(_normalize_index(index))
        new = self._converted(value, "assign")
        with self._lock:  # read, copy and store as one step, as every other update (see the class docstring)
            shape = tuple(_backend.shim(xp).getitem(self._value, where).shape)  # (read on the arrays: not recorded)
            if tuple(new.shape) != shape:
                raise ValueError(f"Variable.assign of {self._name!r}[{index!r}]: the value has shape "
                                 f"{tuple(new.shape)}, the slice has shape {shape}")
            updated = xp.asarray(self._value, copy=True)
            updated[where] = new
            self._value = updated
        note_state(self, "assign")
        return self

    def __repr__(self):
        return (f"<ad.Variable '{self._name}' shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={_numpy_shown(self._value)}>")

    __str__ = __repr__


Variable = ResourceVariable


class _VariableSlice(EagerTensor):
    """What ``v[index]`` gives: a tensor, plus ``assign`` writing into that slice of ``v`` (TF's sliced assign)."""

    __slots__ = ("_var", "_index")

    def assign(self, value):
        return self._var._assign_slice(self._index, value)


def _variable_name(name):
    if name is None:
        return "Variable:0"
    name = str(name)
    if ":" in name:
        return name
    scope = _scope_prefix()
    return f"{scope}{name}:0"


def _scope_prefix() -> str:
    s = current_scope()
    return f"{s}/" if s else ""


# ---------------------------------------------------------------------------
# Conversion
# ---------------------------------------------------------------------------
def _default_dtype(value):
    """TF's rule: Python floats -> float32, ints -> int32, bools -> bool; a NumPy scalar keeps its dtype."""
    if isinstance(value, _np.generic):  # np.float64 is also a Python float, but TF keeps float64
        return None
    if isinstance(value, bool):
        return _np.bool_
    if isinstance(value, int):
        return _np.int32
    if isinstance(value, float):
        return _np.float32
    if isinstance(value, complex):
        return _np.complex128
    if isinstance(value, (list, tuple)):
        flat = _flatten_py(value)
        if any(isinstance(v, Tensor) for v in flat):
            return None
        if any(isinstance(v, (complex, _np.complexfloating)) for v in flat):
            return _np.complex128
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
        if value._is_variable:
            # As TF, a variable converts to a tensor holding its value now: a recorded read
            # (Identity), so a tape watching the variable follows it.
            return execute(PRIMITIVES["Identity"], (value,))
        return value
    xp = _backend.current()
    if value is None or (isinstance(value, (list, tuple)) and any(v is None for v in _flatten_py(value))):
        # As TF; NumPy would make None a NaN when a float dtype is asked for.
        raise ValueError(f"convert_to_tensor: cannot convert {value!r:.80} to a tensor: None is not a value (a "
                         "missing gradient or an unset argument?)")
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in _flatten_py(value)):
        items = tuple(convert_to_tensor(v, dtype=dtype) for v in value)
        if len({t.dtype for t in items}) > 1:
            raise TypeError(f"convert_to_tensor: a list mixes dtypes {sorted({t.dtype.name for t in items})}")
        return execute(PRIMITIVES["Pack"], items, {"axis": 0})
    if dtype is not None:
        np_dtype = _dtypes.as_dtype(dtype).as_numpy_dtype
        if isinstance(value, (float, complex, list, tuple)) and not _dtypes.as_dtype(dtype).is_floating:
            _refuse_lossy(value, _dtypes.as_dtype(dtype))
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
    except OverflowError as e:
        raise TypeError(f"convert_to_tensor: cannot convert {value!r:.80} to a tensor of dtype "
                        f"{_dtypes.as_dtype(np_dtype).name}: {e}") from None
    except (TypeError, ValueError) as e:
        raise type(e)(f"convert_to_tensor: cannot make a tensor of numbers from {value!r:.80}: {e}") from None
    arr = host if xp is _np else _backend.shim(xp).asarray(host, _backend.shim(xp).dtype(host.dtype))
    if (dtype is None and isinstance(value, (list, tuple, float)) and not isinstance(value, _np.generic)
            and _dtypes.of_array(arr) is _dtypes.float64):
        arr = _backend.shim(xp).astype(arr, _dtypes.float32)
    return _wrap(arr)


def _convert_for(value, op, dtype=None) -> Tensor:
    """:func:`convert_to_tensor` for an argument of ``op``: its errors name the op (``Exp: cannot make...``)."""
    try:
        return convert_to_tensor(value, dtype=dtype)
    except (TypeError, ValueError) as e:
        if op == "op":  # (as_tensor's default: no op to name)
            raise
        raise type(e)(f"{op}: {str(e).removeprefix('convert_to_tensor: ')}") from None


def _refuse_lossy(value, dt):
    """As TF: a Python float (or complex) is never silently truncated into an integer or bool tensor."""
    for v in (_flatten_py(value) if isinstance(value, (list, tuple)) else (value,)):
        if isinstance(v, Tensor) or dt.is_complex:
            continue
        if isinstance(v, complex) or (isinstance(v, float) and (dt.is_bool or not v.is_integer())):
            raise TypeError(f"convert_to_tensor: cannot convert {value!r:.80} to a tensor of dtype {dt.name}: "
                            f"{v!r} is not {'a bool' if dt.is_bool else 'an integer'} (TensorFlow does not "
                            "truncate silently; round or cast first)")


def constant(value, dtype=None, shape=None, name=None) -> Tensor:
    """A constant tensor: ``ad.constant(3.0)`` is float32, ``ad.constant(3)`` int32.

    ``shape`` fills that shape with a single value, or reshapes a value with
    exactly as many elements (as TF; anything else is a ``TypeError``).

    >>> print(constant(0.5, shape=(2,)))
    ad.Tensor([0.5 0.5], shape=(2,), dtype=float32)
    >>> constant(2.0, name="c").name   # pictures label the constant "c"
    'c'
    """
    t = _convert_for(value, "constant", dtype)
    if shape is not None:
        shape = _shape_arg(shape, "constant")
        xp = _backend.namespace_of(t._value)
        size = 1
        for d in shape:
            size *= d
        if t._value.size == 1:
            t = _wrap(xp.broadcast_to(xp.reshape(t._value, ()), shape))
        elif t._value.size == size:
            t = _wrap(xp.reshape(t._value, shape))
        else:
            raise TypeError(f"constant: the value has {t._value.size} elements (shape {t.shape}), but shape "
                            f"{shape} has {size}: only a single value or the same number of elements can fill it")
    if name is not None and not t._is_variable:
        named = _new(_NamedConstant)
        named._value, named._id, named._label = t._value, t._id, str(name)
        return named
    return t


def _int_arg(v, op, what):
    """An integer argument (an axis, a dimension...): Python and NumPy ints and integer scalar tensors only.

    A float such as 2.9 or ``True`` is refused, never truncated.
    """
    if isinstance(v, Tensor):
        if not v.dtype.is_integer or v.ndim != 0:
            raise TypeError(f"{op}: {what} must be an integer, got a tensor of shape {v.shape} and dtype {v.dtype.name}")
        return int(v.numpy())
    if isinstance(v, (bool, _np.bool_)) or not isinstance(v, (int, _np.integer)):
        raise TypeError(f"{op}: {what} must be an integer, got {v!r} ({type(v).__name__})")
    return int(v)


def _shape_arg(shape, op, allow_unknown=False) -> tuple:
    """A shape argument as a tuple of ints: a list, tuple, ``TensorShape``, int or 1-D integer tensor.

    Every dimension is checked by :func:`_int_arg`; negative sizes are refused
    (``-1``, "infer this one", only where ``allow_unknown``).
    """
    if isinstance(shape, Tensor):
        if not shape.dtype.is_integer or shape.ndim > 1:
            raise TypeError(f"{op}: shape must be a 1-D integer tensor or a list of ints, got a tensor of shape "
                            f"{shape.shape} and dtype {shape.dtype.name}")
        shape = shape.numpy().tolist()
        shape = [shape] if isinstance(shape, int) else shape
    elif isinstance(shape, (int, _np.integer)) and not isinstance(shape, (bool, _np.bool_)):
        shape = [shape]
    elif isinstance(shape, _np.ndarray):
        shape = shape.tolist()
    elif not isinstance(shape, (list, tuple)):
        raise TypeError(f"{op}: shape must be a list or tuple of ints, got {shape!r:.60} ({type(shape).__name__})")
    dims = tuple(_int_arg(d, op, f"every dimension of shape {tuple(shape)!r}") for d in shape)
    for d in dims:
        if d < 0 and not (allow_unknown and d == -1):
            raise InvalidArgumentError(f"{op}: dimension {d} in shape {dims} is negative"
                                       + (" (only -1, for one unknown dimension, is allowed)" if allow_unknown else ""))
    return dims


# ---------------------------------------------------------------------------
# How one op runs
# ---------------------------------------------------------------------------
_EMPTY: dict = {}
_NAMESPACES = _backend._NUMPY_TYPES  # array type -> namespace, filled as types are seen
_namespace_of = _backend.namespace_of


def _check_one_backend(prim, inputs, xp):
    first = type(inputs[0]._value)
    for t in inputs:
        if type(t._value) is not first and _namespace_of(t._value) is not xp:
            raise InvalidArgumentError(
                f"{prim.type}: inputs live on different backends ({xp.__name__} and "
                f"{_namespace_of(t._value).__name__}); move them with ad.convert_to_tensor(t.numpy()) "
                "inside the same ad.backend(...) block")


def _describe(inputs):
    return ", ".join(f"{t.shape} {t.dtype.name}" for t in inputs)


def execute(prim, inputs, attrs=_EMPTY, rule=None) -> Tensor:
    """Run primitive ``prim`` on tensors ``inputs``; record it where a tape or accumulator is active.

    ``attrs`` are the forward's keyword arguments (kept in the record for the
    rule); ``rule`` replaces the primitive's gradient rule for this one record
    (``custom_gradient``).
    """
    try:  # (reading the inputs' values is the check that they are tensors: a clear error, no extra work)
        first = inputs[0]._value
        xp = _NAMESPACES.get(type(first)) or _namespace_of(first)
        n = len(inputs)
        if n == 2:
            second = inputs[1]._value
            if type(second) is not type(first) and _NAMESPACES.get(type(second)) is not xp:
                _check_one_backend(prim, inputs, xp)
        elif n > 2:
            _check_one_backend(prim, inputs, xp)
    except (AttributeError, IndexError, TypeError):
        _check_primitive(prim)
        raise TypeError(f"{prim.type}: execute takes a tuple of tensors (ad.extend.as_tensor converts numbers and "
                        f"arrays), got {type(inputs).__name__} {inputs!r:.80}") from None
    try:
        # One and two inputs (nearly every op) call the forward without building an argument list.
        if n == 1:
            value = prim.forward(xp, first, **attrs) if attrs else prim.forward(xp, first)
        elif n == 2:
            value = prim.forward(xp, first, second, **attrs) if attrs else prim.forward(xp, first, second)
        else:
            value = prim.forward(xp, *[t._value for t in inputs], **attrs)
    except Exception as e:  # noqa: BLE001  (any error of an op's forward: said with the op's name)
        _check_primitive(prim)
        raise InvalidArgumentError(f"{prim.type}: {e} (inputs: {_describe(inputs)})") from None
    out = _new(EagerTensor)
    out._value = value
    out._id = _next_id()
    if ACTIVE[0]:
        record(prim, inputs, attrs, out, rule)
    return out


def execute_checked(prim, inputs, attrs=_EMPTY, rule=None) -> Tensor:
    """:func:`execute` for code outside the package (``ad.extend.execute``): ``inputs`` must be a tuple or list.

    A lone tensor indexes too, so :func:`execute` would take its rows for the inputs; the package's own
    ops always pass a tuple, so only this door pays for the check.
    """
    if type(inputs) is not tuple and not isinstance(inputs, (tuple, list)):
        _check_primitive(prim)
        raise TypeError(f"{getattr(prim, 'type', prim)}: execute takes a tuple of tensors (ad.extend.as_tensor "
                        f"converts numbers and arrays), got {type(inputs).__name__} {inputs!r:.80}")
    return execute(prim, inputs, attrs, rule)


def _check_primitive(prim):
    """Raise a clear TypeError when ``execute`` was given something other than a primitive (checked once it failed)."""
    if not isinstance(prim, _registry.Primitive):
        how = f"ad.extend.lookup({prim!r})" if isinstance(prim, str) else "ad.extend.lookup('Sin')"
        raise TypeError(f"execute: the first argument must be a primitive made by ad.extend.defop, or a built-in "
                        f"one taken with {how}; got {type(prim).__name__} {prim!r:.60}")


def as_tensor(x, like=None, op="op") -> Tensor:
    """``x`` as a tensor; a Python number or list takes the dtype (and backend) of ``like``."""
    if isinstance(x, Tensor):
        return x
    if (type(x) is float or type(x) is int) and like is not None and _NAMESPACES.get(type(like._value)) is _np:
        # The common ``y * 0.5`` on NumPy: a NumPy scalar of the tensor's dtype, cached for floating dtypes.
        arr = _SCALARS.get((x, like._value.dtype)) if x else None
        if arr is None:
            dt = _BY_CLASS.get(like._value.dtype.__class__) or _dtypes.of_array(like._value)
            if dt.is_floating or (type(x) is int and dt.is_integer):
                try:
                    arr = _scalar_array(x, dt)
                except OverflowError:
                    raise TypeError(f"{op}: cannot convert {x!r} to a tensor of dtype {dt.name}: it is out of range "
                                    f"for {dt.name}") from None
        if arr is not None:
            t = _new(EagerTensor)
            t._value = arr
            t._id = _next_id()
            return t
    if x is None:
        raise TypeError(f"{op}: an operand is None; expected a tensor or a number"
                        + (f" (the other operand has dtype {like.dtype.name}, shape {like.shape})" if like is not None else ""))
    if like is not None and isinstance(x, (int, float, list, tuple, _np.ndarray, _np.generic)) and not isinstance(x, bool):
        dt = like.dtype
        if isinstance(x, (_np.ndarray, _np.generic)):
            if _np.asarray(x).dtype.kind == "f" and dt.is_floating:
                return convert_to_tensor(_np.asarray(x, dtype=dt.as_numpy_dtype))
            return _convert_for(x, op)
        if not dt.is_floating and _has_float(x):
            raise TypeError(f"{op}: cannot combine a {dt.name} tensor with the float value {x!r}; cast first "
                            "(ad.cast) as TensorFlow does not convert between types silently")
        xp = _namespace_of(like._value)
        if xp is not _backend.current() and not isinstance(x, (_np.ndarray, _np.generic)):
            # A Python number has no device: it joins the tensor's backend, not the default one.
            return _wrap(_backend.shim(xp).asarray(x, like._value.dtype))
        return _convert_for(x, op, dt)
    return _convert_for(x, op)


_SCALARS: dict = {}


def _scalar_array(x, dt):
    """A Python number as a NumPy scalar of ``dt`` (``np.float32(0.5)``); floating ones are kept in ``_SCALARS``.

    Numbers like the ``0.5`` in ``y * 0.5`` or the ``2.0`` in the Square rule
    come back on every op; converting each time was a large share of a
    scalar op's cost, so :func:`as_tensor` looks them up by ``(number, NumPy
    dtype)`` first.  A NumPy scalar (immutable, unlike a 0-d array) is what
    NumPy's own ops return for 0-d inputs, and its operators skip the ufunc
    machinery.  Only floating dtypes are kept (a float must never find an
    integer dtype's entry: ``1.0 == 1``); zeros and NaN are never kept (-0.0
    would find 0.0's entry, NaN nothing); the cache is emptied when it grows
    large.  Shared by all threads: it holds immutable values only.
    """
    arr = dt.as_numpy_dtype(x)
    if x and x == x and dt.is_floating:
        remember(_SCALARS, (x, arr.dtype), arr, 1024)
    return arr


def _has_float(x):
    if isinstance(x, float):
        return not float(x).is_integer()
    if isinstance(x, (list, tuple)):
        return builtins.any(_has_float(v) for v in x)
    return False


def binary(op, x, y) -> Tensor:
    """An elementwise op of two operands (tensors or Python values), by its op type name ``op``."""
    # A Python float with a NumPy tensor (``y * 0.5``, ``0.01 * g``): its NumPy scalar of the tensor's
    # dtype is looked up at once, and goes straight to the op (a kept one is floating, as the tensor).
    if isinstance(x, Tensor):
        if not isinstance(y, Tensor):
            if type(y) is float and _NAMESPACES.get(type(x._value)) is _np:
                c = _SCALARS.get((y, x._value.dtype))
                if c is not None:
                    out = None if ACTIVE[0] else _untaped(PRIMITIVES[op], x._value, c)
                    return out if out is not None else execute(PRIMITIVES[op], (x, _wrap(c)))
            y = as_tensor(y, x, op)
    elif not isinstance(y, Tensor) and not _is_python_number(x):
        # Neither is a tensor (``multiply(np.ones(3), 42)``): as TF, the first operand's dtype rules.
        x = as_tensor(x, None, op)
        y = as_tensor(y, x, op)
    else:
        if not isinstance(y, Tensor):
            y = as_tensor(y, None, op)
        elif type(x) is float and _NAMESPACES.get(type(y._value)) is _np:
            c = _SCALARS.get((x, y._value.dtype))
            if c is not None:
                out = None if ACTIVE[0] else _untaped(PRIMITIVES[op], c, y._value)
                return out if out is not None else execute(PRIMITIVES[op], (_wrap(c), y))
        x = as_tensor(x, y, op)  # (``0.01 * g``: the number takes the tensor's dtype)
    # Same dtype objects is the common, fast case; comparing ad dtypes lets
    # two backends' float32 through to execute, which reports the mix.
    dtype = x._value.dtype
    if dtype is not y._value.dtype and x.dtype is not y.dtype:
        raise DTypeMismatchError(f"{op}: operands have different dtypes, {x.dtype.name} and {y.dtype.name} "
                                 f"(shapes {x.shape} and {y.shape}); use ad.cast to convert one of them")
    dt = _BY_CLASS.get(dtype.__class__) or _dtypes.of_array(x._value)
    if dt.is_bool and op not in _TAKES_BOOL:  # as TF's kernels: no bool arithmetic
        numeric(x, op)
    return execute(PRIMITIVES[op], (x, y))


def _untaped(prim, a, b):
    """Elementwise ``prim`` on two NumPy values while nothing records (no tape or accumulator in any thread).

    What :func:`execute` would give, without first making the number a tensor: an update step's
    ``0.01 * g`` runs it on every variable.  None where the forward fails: :func:`execute` then
    runs the op again, and says why in its words.
    """
    try:
        value = prim.forward(_np, a, b)
    except Exception:  # noqa: BLE001  (any error: execute reports it)
        return None
    out = _new(EagerTensor)
    out._value = value
    out._id = _next_id()
    return out


def _is_python_number(x) -> bool:
    return isinstance(x, (int, float, complex)) and not isinstance(x, (_np.generic, bool))


_TAKES_BOOL = frozenset({"Equal", "NotEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "Identity", "StopGradient"})


def unary(type, x) -> Tensor:
    """An elementwise op of one operand, by its op type name."""
    if not isinstance(x, Tensor):
        x = as_tensor(x, None, type)
    if (_BY_CLASS.get(x._value.dtype.__class__) or _dtypes.of_array(x._value)).is_bool and type not in _TAKES_BOOL:
        numeric(x, type)
    return execute(PRIMITIVES[type], (x,))


# TF's truediv: integer operands become floating first, 8- and 16-bit ones float32, wider ones float64.
_TRUEDIV = {"int8": "float32", "uint8": "float32", "int16": "float32", "uint16": "float32",
            "int32": "float64", "uint32": "float64", "int64": "float64", "uint64": "float64"}


def truediv(x, y, name=None) -> Tensor:
    """``x / y`` as TensorFlow divides: integers are cast to floating first (``uint8 / 255`` is float32).

    >>> print(truediv(constant([3, 4], dtype="uint8"), 2))
    ad.Tensor([1.5 2. ], shape=(2,), dtype=float32)
    >>> print(constant([3, 4]) / 2)
    ad.Tensor([1.5 2. ], shape=(2,), dtype=float64)
    """
    if isinstance(x, Tensor):
        y = as_tensor(y, x, "truediv")
    else:
        y = as_tensor(y, None, "truediv")
        x = as_tensor(x, y, "truediv")
    if x.dtype != y.dtype:
        raise DTypeMismatchError(f"truediv: x and y must have the same dtype, got {x.dtype.name} and {y.dtype.name} "
                                 f"(shapes {x.shape} and {y.shape}); use ad.cast to convert one of them")
    to = _TRUEDIV.get(x.dtype.name)
    if to is None and not (x.dtype.is_floating or x.dtype.is_complex):
        raise TypeError(f"truediv: cannot divide tensors of dtype {x.dtype.name} (shapes {x.shape} and {y.shape}): "
                        "division needs numbers")
    if to is not None:
        x, y = _cast(x, to), _cast(y, to)
    return binary("RealDiv", x, y)


def _cast(x, dtype) -> Tensor:
    """``x`` converted to ``dtype`` by the recorded Cast op (``ad.cast`` for users)."""
    dt = _dtypes.as_dtype(dtype)
    if x.dtype == dt:
        return x
    return execute(PRIMITIVES["Cast"], (x,), {"dtype": _backend.shim(_namespace_of(x._value)).dtype(dt)})


def numeric(x, op, kinds="number") -> Tensor:
    """``x`` as a tensor, refusing dtypes the op is not defined for, as TF's kernels do.

    ``kinds``: ``"number"`` (no bool), ``"float"`` (floating or complex: sqrt, log,
    softmax...), ``"real"`` (floating only).
    """
    if not isinstance(x, Tensor):
        x = as_tensor(x, None, op)
    dt = _BY_CLASS.get(x._value.dtype.__class__) or _dtypes.of_array(x._value)
    if dt.is_floating:  # every kind takes floats: the common case decides at once
        return x
    ok = not dt.is_bool if kinds == "number" else (dt.is_complex if kinds == "float" else False)
    if not ok:
        need = {"number": "a number type (not bool)", "float": "a floating type (float16/32/64, or complex)",
                "real": "a floating type (float16/32/64)"}[kinds]
        raise InvalidArgumentError(f"{op}: got a tensor of dtype {dt.name} (shape {x.shape}); {op} needs {need}"
                                   + ("; cast it first, e.g. ad.cast(x, ad.float32)" if kinds != "number" else ""))
    return x


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, name=None) -> Tensor:
    """Matrix product of the last two axes (batched over the others); ``adjoint_*`` of real matrices transposes."""
    if adjoint_a or adjoint_b:
        for t, adj, which in ((a, adjoint_a, "a"), (b, adjoint_b, "b")):
            if adj and isinstance(t, Tensor) and t.dtype.is_complex:
                raise TypeError(f"MatMul: adjoint_{which} of a complex matrix (a conjugate) is not part of "
                                "autodiff_viz; only real matrices")
        transpose_a, transpose_b = transpose_a or adjoint_a, transpose_b or adjoint_b
    if isinstance(a, Tensor):
        if not isinstance(b, Tensor):
            b = as_tensor(b, a, "MatMul")
    else:
        b = as_tensor(b)
        a = as_tensor(a, b, "MatMul")
    va, vb = a._value, b._value  # (read once: ``b`` is often a variable, and such reads are not specialized)
    dtype = va.dtype
    da = _BY_CLASS.get(dtype.__class__) or _dtypes.of_array(va)
    db = da if vb.dtype is dtype else _BY_CLASS.get(vb.dtype.__class__) or _dtypes.of_array(vb)
    if da.is_bool or db.is_bool:
        raise InvalidArgumentError(f"MatMul: cannot multiply bool tensors (shapes {a.shape} and {b.shape}); "
                                   "cast them to a number type first")
    sa, sb = va.shape, vb.shape
    if len(sa) < 2 or len(sb) < 2:
        raise InvalidArgumentError(f"MatMul: both operands need rank >= 2, got shapes {sa} and {sb}")
    ka = sa[-2] if transpose_a else sa[-1]
    kb = sb[-1] if transpose_b else sb[-2]
    if ka != kb:
        raise InvalidArgumentError(f"MatMul: cannot multiply shapes {sa} and {sb}"
                                   f"{' (transposed)' if transpose_a or transpose_b else ''}: "
                                   f"inner dimensions {ka} and {kb} differ")
    if da is not db:
        raise DTypeMismatchError(f"MatMul: operands have different dtypes, {a.dtype.name} and {b.dtype.name} "
                                 f"(shapes {sa} and {sb}); use ad.cast to convert one of them")
    if transpose_a is False and transpose_b is False:  # (the defaults: no key to build and hash)
        return execute(PRIMITIVES["MatMul"], (a, b), _PLAIN)
    return execute(PRIMITIVES["MatMul"], (a, b), TRANSPOSED[bool(transpose_a), bool(transpose_b)])


# The four attribute dicts of a matmul, made once (records share them; nothing changes them).
TRANSPOSED = {(ta, tb): {"transpose_a": ta, "transpose_b": tb} for ta in (False, True) for tb in (False, True)}
_PLAIN = TRANSPOSED[False, False]


def _normalize_index(index):
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for i in index:
        if isinstance(i, Tensor):
            i = i.numpy()
            i = i.item() if getattr(i, "ndim", 0) == 0 else i
        elif isinstance(i, list):
            i = _np.asarray(i)
        out.append(i)
    return tuple(out)


def getitem(x, index) -> Tensor:
    """``x[index]``: NumPy-style basic and advanced indexing, recorded as one StridedSlice."""
    index = _backend.shim(_namespace_of(x._value)).index(_normalize_index(index))
    try:
        _backend.shim(_namespace_of(x._value)).getitem(x._value, index)
    except (IndexError, TypeError, ValueError) as e:
        raise InvalidArgumentError(f"StridedSlice: index {index!r} is invalid for shape {x.shape}: {e}") from None
    return execute(PRIMITIVES["StridedSlice"], (x,), {"index": index})
