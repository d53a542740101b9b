"""DType objects named as in TensorFlow (``ad.float32``...).

>>> print(float32, repr(float32), float32.is_floating, complex64.is_complex, uint8.max)
<dtype: 'float32'> ad.float32 True True 255
"""
from __future__ import annotations

import numpy as _np


class DType:
    """A tensor element type: ``ad.float32 == "float32" == np.float32`` all hold."""

    __slots__ = ("name", "as_numpy_dtype", "is_floating", "is_integer", "is_bool", "is_complex", "is_unsigned")

    def __init__(self, name: str):
        self.name = name
        self.as_numpy_dtype = _np.dtype(name).type
        kind = _np.dtype(name).kind
        self.is_floating = kind == "f"
        self.is_integer = kind in "iu"
        self.is_bool = kind == "b"
        self.is_complex = kind == "c"
        self.is_unsigned = kind in "ub"

    @property
    def min(self):
        """The smallest value of the type (TF's ``dtype.min``)."""
        return _limits(self)[0]

    @property
    def max(self):
        """The largest value of the type."""
        return _limits(self)[1]

    @property
    def real_dtype(self) -> "DType":
        """``float32`` for ``complex64``, ``float64`` for ``complex128``, the type itself otherwise."""
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def __repr__(self):
        return f"ad.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"  # as TF prints a dtype

    def __eq__(self, other):
        if isinstance(other, DType):
            return other.name == self.name
        try:
            return as_dtype(other).name == self.name
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16")
float32 = DType("float32")
float64 = DType("float64")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
bool_ = DType("bool")
complex64 = DType("complex64")
complex128 = DType("complex128")

_BY_NAME = {d.name: d for d in (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                bool_, complex64, complex128)}


def _limits(d: DType):
    if d.is_bool:
        return False, True
    if d.is_complex:
        raise TypeError(f"{d.name} has no min or max (complex numbers are not ordered)")
    info = _np.finfo(d.as_numpy_dtype) if d.is_floating else _np.iinfo(d.as_numpy_dtype)
    return info.min.item() if hasattr(info.min, "item") else info.min, info.max.item() if hasattr(info.max, "item") else info.max


def as_dtype(x) -> DType:
    """``DType`` for a DType, a name, a NumPy dtype or any array dtype object."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        name = x
    elif x is bool:
        name = "bool"
    elif x is float:
        name = "float32"
    elif x is int:
        name = "int32"
    elif x is complex:
        name = "complex128"
    else:
        try:
            name = _np.dtype(x).name
        except TypeError:
            name = str(x).rsplit(".", 1)[-1]  # Array-API dtype objects print their name
    d = _BY_NAME.get(name)
    if d is None:
        raise TypeError(f"unsupported dtype {x!r}; supported: {', '.join(_BY_NAME)}")
    return d


# NumPy has one dtype class per dtype (Float32DType...), so the class is the
# key; other libraries may share one class for all dtypes, and some (the
# strict Array-API one) warn when their dtypes meet NumPy's in one dict.
_by_class: dict = {}
_by_object: dict = {}


def of_array(value) -> DType:
    """DType of an array, cached (hot path)."""
    dt = value.dtype
    d = _by_class.get(type(dt))
    if d is None:
        d = _of_dtype_object(dt)
    return d


def of_dtype(dt) -> DType:
    """DType of an array library's dtype object, cached."""
    d = _by_class.get(type(dt))
    return d if d is not None else _of_dtype_object(dt)


def _of_dtype_object(dt) -> DType:
    if isinstance(dt, _np.dtype):
        d = _by_class[type(dt)] = as_dtype(dt)
        return d
    per_class = _by_object.setdefault(type(dt), {})
    d = per_class.get(dt)
    if d is None:
        d = per_class[dt] = as_dtype(dt)
    return d
