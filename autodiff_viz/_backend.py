"""The array namespace seam.

Every array computation in the engine goes through a namespace object ``xp``
(NumPy by default).  Tensors remember nothing about their backend: the
namespace is found from the array type, so an op on CuPy arrays runs on CuPy
whatever the current default is, and mixing devices in one op is an error.
"""
from __future__ import annotations

import contextlib
import sys as _sys
import threading

import numpy as _np

from ._dtypes import as_dtype

_NUMPY_TYPES = {_np.ndarray: _np}
for _t in (_np.float16, _np.float32, _np.float64, _np.int8, _np.int16, _np.int32, _np.int64, _np.uint8,
           _np.uint16, _np.uint32, _np.uint64, _np.bool_, _np.complex64, _np.complex128):
    _NUMPY_TYPES[_t] = _np

class _ThreadState(threading.local):
    xp = None    # set inside a ``with backend(...)`` block; class defaults keep
    name = None  # reads of an unset attribute cheap (``current()`` is on the op path)


_state = _ThreadState()
_known: dict[str, object] = {"numpy": _np}

_INSTALL_HINT = {
    "cupy": 'CuPy is not installed: pip install "autodiff_viz[gpu]"',
    "array_api_strict": "array_api_strict is not installed: pip install array_api_strict",
}


def _load(name: str):
    if name in _known:
        return _known[name]
    if name == "cupy":
        try:
            import cupy  # noqa: PLC0415  (an optional backend, loaded only when chosen)
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError(_INSTALL_HINT["cupy"]) from e
        ns = cupy
        _NUMPY_TYPES[cupy.ndarray] = cupy
    elif name == "array_api_strict":
        try:
            import array_api_strict as ns  # noqa: PLC0415  (loaded only when chosen)
        except ImportError as e:
            raise ImportError(_INSTALL_HINT["array_api_strict"]) from e
    else:
        raise ValueError(f"unknown backend {name!r}: choose 'numpy', 'cupy' or 'array_api_strict'")
    _known[name] = ns
    return ns


# The default is process-wide (threads a program starts share it); a
# ``with backend(...)`` block overrides it for its own thread only.
_default = [_np, "numpy"]


def current():
    """The namespace new tensors are created with (NumPy unless set)."""
    return getattr(_state, "xp", None) or _default[0]


def set_backend(name: str) -> None:
    """Make ``name`` ("numpy", "cupy", "array_api_strict") the default for new tensors, in every thread.

    >>> import autodiff_viz as ad
    >>> ad.set_backend("numpy")
    """
    xp = _load(name)
    _default[:] = [xp, name]
    if getattr(_state, "xp", None) is not None:  # inside a backend block: takes effect now too
        _state.xp, _state.name = xp, name


@contextlib.contextmanager
def backend(name: str):
    """``with ad.backend("cupy"):`` creates new tensors with that backend inside the block (this thread)."""
    xp = _load(name)
    old = getattr(_state, "xp", None), getattr(_state, "name", None)
    _state.xp, _state.name = xp, name
    try:
        yield xp
    finally:
        _state.xp, _state.name = old


def array_namespace(value):
    """The namespace of a NumPy, CuPy or Array-API array; None for anything else
    (Python numbers and lists)."""
    ns = _NUMPY_TYPES.get(type(value))
    if ns is not None:
        return ns
    # CuPy arrays have no ``__array_namespace__``: recognised by type, and only
    # when CuPy is already imported (no CuPy array can exist otherwise).
    cupy = _sys.modules.get("cupy")
    if cupy is not None and isinstance(value, cupy.ndarray):
        ns = _load("cupy")
    else:
        get = getattr(value, "__array_namespace__", None)
        if get is None:
            return None
        ns = get()
    _NUMPY_TYPES[type(value)] = ns
    return ns


def namespace_of(value):
    """The array namespace an array belongs to (NumPy for Python values)."""
    ns = _NUMPY_TYPES.get(type(value))
    if ns is not None:
        return ns
    return array_namespace(value) or _np


def to_numpy(value):
    """A host NumPy array for any backend's array."""
    if isinstance(value, (_np.ndarray, _np.generic)):
        return _np.asarray(value)
    get = getattr(value, "get", None)  # CuPy arrays copy to the host with .get()
    if get is not None and type(value).__module__.startswith("cupy"):
        return get()
    try:
        return _np.asarray(value)
    except Exception:  # noqa: BLE001  (any array library's refusal)
        # Strict Array-API arrays refuse __array__; go through DLPack or lists.
        try:
            return _np.from_dlpack(value)
        except Exception:  # noqa: BLE001  (as above)
            ns = namespace_of(value)
            return _np.asarray(ns.reshape(value, (-1,)).tolist() if hasattr(value, "tolist") else value).reshape(value.shape)


# ---------------------------------------------------------------------------
# Shims: the few things the Array API standard lacks or spells differently.
#
# The engine calls these instead of reaching for NumPy, so that one code path
# serves NumPy, CuPy and any Array-API library.  Each namespace gets a helper
# object (``shim(xp)``); NumPy's is the thinnest, generic Array-API libraries
# get portable (slower) versions built from standard functions only.
# ---------------------------------------------------------------------------
class _ArrayAPIShim:
    """Helpers written with standard Array-API functions only."""

    def __init__(self, xp):
        self.xp = xp

    def dtype(self, dtype):
        """The namespace's dtype object for a NumPy dtype, a name or an ``ad`` DType."""
        return getattr(self.xp, as_dtype(dtype).name)

    def astype(self, x, dtype):
        """``x`` converted to ``dtype`` (any dtype spelling ``dtype()`` accepts)."""
        return self.xp.astype(x, self.dtype(dtype))

    def asarray(self, value, dtype):
        """A host value (NumPy array or Python number) as an array of this
        namespace; ``dtype`` is one of the namespace's dtypes."""
        return self.xp.asarray(value, dtype=dtype)

    def index(self, index):
        """An index tuple the namespace accepts: host index arrays moved over,
        and a trailing ``...`` where NumPy would imply one (the standard
        requires every axis to be indexed)."""
        xp = self.xp
        if not isinstance(index, tuple):
            index = (index,)
        out = [xp.asarray(i) if isinstance(i, (_np.ndarray, list)) else i for i in index]
        if not any(i is Ellipsis for i in out) and not any(_is_array(i) for i in out):
            out.append(Ellipsis)
        return tuple(out)

    def getitem(self, x, index):
        """``x[index]``; one integer index array among full slices becomes ``take``."""
        xp = self.xp
        index = self.index(index)
        arrays = [k for k, i in enumerate(index) if _is_array(i)]
        if len(arrays) == 1 and index[arrays[0]].dtype != xp.bool:
            k = arrays[0]
            rest = index[:k] + index[k + 1:]
            if all(i == slice(None) for i in rest if i is not Ellipsis) and sum(i is Ellipsis for i in rest) <= 1:
                idx = index[k]
                axis = k if Ellipsis not in index[:k] else k - len(index) + x.ndim  # count from the end after `...`
                axis %= x.ndim
                picked = xp.take(x, xp.reshape(idx, (-1,)), axis=axis)
                shape = x.shape[:axis] + tuple(idx.shape) + x.shape[axis + 1:]
                return xp.reshape(picked, shape)
        return x[index]

    def scatter_add(self, g, index, shape):
        """Zeros of ``shape`` with ``g`` added at ``index``; repeated indices add up.

        The standard has no scatter-add (NumPy's ``add.at``).  Basic indices
        never repeat, so a plain assignment does; index arrays go through the
        flat positions they select, summed with a sort and a cumulative sum.
        """
        xp = self.xp
        index = self.index(index)
        out = xp.zeros(shape, dtype=g.dtype)
        if not any(_is_array(i) for i in index):
            # Assignment takes no ``None`` (new axes): drop them, and the size-1 axes they made in g.
            plain = tuple(i for i in index if i is not None)
            out[plain] = xp.reshape(g, out[plain].shape) if len(plain) < len(index) else g
            return out
        n = 1
        for d in shape:
            n *= d
        ids = xp.reshape(xp.arange(n, dtype=xp.int64), shape)
        where = xp.reshape(self.getitem(ids, index), (-1,))
        vals = xp.reshape(xp.broadcast_to(g, where.shape if g.ndim == 0 else g.shape), (-1,))
        if where.shape[0] == 0:
            return out
        order = xp.argsort(where)
        where, vals = xp.take(where, order), xp.take(vals, order)
        running = xp.cumulative_sum(vals)
        last = xp.concat([xp.not_equal(where[1:], where[:-1]), xp.ones((1,), dtype=xp.bool)])
        (ends,) = xp.nonzero(last)
        totals = xp.take(running, ends)
        totals = totals - xp.concat([xp.zeros((1,), dtype=totals.dtype), totals[:-1]])
        targets = xp.take(where, ends)  # sorted, unique flat positions
        slot = xp.searchsorted(targets, xp.arange(n, dtype=xp.int64))
        slot = xp.clip(slot, 0, targets.shape[0] - 1)
        hit = xp.equal(xp.take(targets, slot), xp.arange(n, dtype=xp.int64))
        flat = xp.where(hit, xp.take(totals, slot), xp.zeros((), dtype=g.dtype))
        return xp.reshape(flat, shape)


class _NumpyShim(_ArrayAPIShim):
    def dtype(self, dtype):
        return as_dtype(dtype).as_numpy_dtype

    def astype(self, x, dtype):
        return x.astype(self.dtype(dtype))

    def index(self, index):
        return index

    def getitem(self, x, index):
        return x[index]

    def scatter_add(self, g, index, shape):
        out = self.xp.zeros(shape, dtype=g.dtype)
        self.xp.add.at(out, index, g)
        return out


class _CupyShim(_NumpyShim):  # pragma: no cover - needs a GPU
    # cupy.asarray turns a 0-d host array or a Python -0.0 into +0.0 (CuPy 14.2);
    # a one-element array copied over keeps the sign bit.
    def asarray(self, value, dtype):
        host = _np.asarray(value, dtype=dtype)
        if host.ndim == 0:
            return self.xp.asarray(host.reshape(1)).reshape(())
        return self.xp.asarray(host)

    def index(self, index):
        return tuple(self.xp.asarray(i) if isinstance(i, (_np.ndarray, list)) else i for i in index)

    def scatter_add(self, g, index, shape):
        out = self.xp.zeros(shape, dtype=g.dtype)
        add_at = getattr(self.xp.add, "at", None)  # CuPy 14 deprecates cupyx.scatter_add for add.at
        if add_at is not None:
            add_at(out, index, g)
        else:
            import cupyx  # noqa: PLC0415  (the CuPy backend's own helper)

            cupyx.scatter_add(out, index, g)
        return out


def _is_array(i) -> bool:
    return hasattr(i, "shape") and hasattr(i, "dtype") and not isinstance(i, (int, bool))


_shims: dict = {}


def shim(xp) -> _ArrayAPIShim:
    """The helper object for namespace ``xp`` (see the section comment above)."""
    s = _shims.get(xp)
    if s is None:
        name = getattr(xp, "__name__", "")
        cls = _NumpyShim if xp is _np else _CupyShim if name.startswith("cupy") else _ArrayAPIShim
        s = _shims[xp] = cls(xp)
    return s
