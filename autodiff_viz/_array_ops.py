"""More array ops, each a composition of recorded ops: ``meshgrid``, ``tensordot``, ``boolean_mask``, ``map_fn``.

Built from existing primitives under a name scope, so their gradients and
tangents are those of the ops they run.

>>> import autodiff_viz as ad
>>> x, y = ad.meshgrid(ad.constant([1, 2, 3]), ad.constant([4, 5]))
>>> x.numpy().tolist(), y.numpy().tolist()
([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
"""
from __future__ import annotations

import numpy as _np

from . import _nest
from . import _ops as o
from ._context import name_scope
from ._tensor import InvalidArgumentError, Tensor, _int_arg, as_tensor, convert_to_tensor

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def meshgrid(*args, indexing="xy", name=None):
    """Coordinate grids from 1-D tensors, as ``tf.meshgrid`` (``indexing="xy"``: the first two axes swapped)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [o.reshape(as_tensor(a), [-1]) for a in args]
    if not xs:
        return []
    sizes = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    with name_scope("meshgrid"):
        for i, x in enumerate(xs):
            axis = (1 - i if i < 2 else i) if indexing == "xy" and len(xs) > 1 else i
            shape = [1] * len(xs)
            shape[axis] = x.shape[0]
            out.append(o.broadcast_to(o.reshape(x, shape), sizes))
    return out


def _axes_list(v, op):
    if isinstance(v, Tensor):
        v = v.numpy().tolist()
    return [_int_arg(a, op, "axes") for a in (v if isinstance(v, (list, tuple)) else [v])]


def tensordot(a, b, axes, name=None):
    """Sum of products over ``axes`` of ``a`` and ``b``, as ``tf.tensordot``.

    ``axes`` an int N: the last N axes of ``a`` with the first N of ``b``; a
    pair of lists: those axes of each.

    >>> import autodiff_viz as ad
    >>> float(ad.tensordot(ad.constant([1.0, 2.0]), ad.constant([3.0, 4.0]), 1))
    11.0
    """
    a = as_tensor(a)
    b = as_tensor(b, a, "Tensordot")
    if isinstance(axes, (int, _np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            raise InvalidArgumentError(f"Tensordot: axes={n} needs 0 <= axes <= the rank of both operands "
                                       f"(shapes {a.shape} and {b.shape})")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        ax_a, ax_b = _axes_list(axes[0], "Tensordot"), _axes_list(axes[1], "Tensordot")
    else:
        raise InvalidArgumentError(f"Tensordot: axes must be an int or a pair of axis lists, got {axes!r:.60}")
    if len(ax_a) != len(ax_b):
        raise InvalidArgumentError(f"Tensordot: axes {ax_a} of a and {ax_b} of b differ in number")
    for axs, t, which in ((ax_a, a, "a"), (ax_b, b, "b")):
        for ax in axs:
            if not -t.ndim <= ax < t.ndim:
                raise InvalidArgumentError(f"Tensordot: axis {ax} is out of range for {which} of shape {t.shape}")
    ax_a, ax_b = [x % a.ndim for x in ax_a], [x % b.ndim for x in ax_b]
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise InvalidArgumentError(f"Tensordot: axis {i} of a {a.shape} and axis {j} of b {b.shape} differ in size")
    if a.ndim + b.ndim > len(_LETTERS):
        raise InvalidArgumentError(f"Tensordot: operands of rank {a.ndim} and {b.ndim} have too many axes")
    la = _LETTERS[:a.ndim]
    lb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    lb = "".join(lb)
    out = "".join(c for k, c in enumerate(la) if k not in ax_a) + "".join(c for k, c in enumerate(lb) if k not in ax_b)
    with name_scope("Tensordot"):
        return o.einsum(f"{la},{lb}->{out}", a, b)


def boolean_mask(tensor, mask, axis=None, name=None):
    """The elements of ``tensor`` where ``mask`` is True, as ``tf.boolean_mask``.

    ``mask`` covers axes ``axis .. axis + mask.ndim - 1`` of ``tensor``; those
    axes become one, of the number of True values.  Differentiable in
    ``tensor`` (a gather).

    >>> import autodiff_viz as ad
    >>> ad.boolean_mask(ad.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True]).numpy().tolist()
    [[1, 2], [5, 6]]
    """
    tensor = as_tensor(tensor)
    mask = convert_to_tensor(mask)
    if not (mask.dtype.is_bool or mask.dtype.is_integer or mask.dtype.is_floating):
        raise TypeError(f"boolean_mask: mask must be bool (or numbers, nonzero meaning True, as TF's where reads "
                        f"them), got dtype {mask.dtype.name} (shape {mask.shape})")
    axis = 0 if axis is None else _int_arg(axis, "boolean_mask", "axis")
    if mask.ndim == 0:
        raise InvalidArgumentError("boolean_mask: mask cannot be a scalar")
    axis %= max(tensor.ndim, 1)
    k = mask.ndim
    if tensor.shape[axis:axis + k] != mask.shape:
        raise InvalidArgumentError(f"boolean_mask: mask of shape {mask.shape} does not match axes {axis}.."
                                   f"{axis + k - 1} of tensor shape {tensor.shape}")
    with name_scope("boolean_mask"):
        flat = o.reshape(tensor, tuple(tensor.shape[:axis]) + (-1,) + tuple(tensor.shape[axis + k:]))
        picked = _np.flatnonzero(mask.numpy().reshape(-1)).astype(_np.int64)  # nonzero: True
        return o.getitem(flat, (slice(None),) * axis + (picked,))


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    """``fn`` on each slice of ``elems`` along axis 0, results stacked, as ``tf.map_fn``.

    ``elems`` may be a tensor or a tuple/list of them (``fn`` then gets a
    tuple); the ops ``fn`` runs are recorded, so gradients flow through them.

    >>> import autodiff_viz as ad
    >>> ad.map_fn(lambda t: t * t, ad.constant([1.0, 2.0, 3.0])).numpy().tolist()
    [1.0, 4.0, 9.0]
    """
    if not callable(fn):
        raise TypeError(f"map_fn: fn must be callable, got {fn!r:.60}")
    leaves = [as_tensor(e) for e in _nest.flatten(elems)]
    if not leaves or any(t.ndim == 0 for t in leaves):
        raise InvalidArgumentError("map_fn: elems must be tensors with at least one axis to map over")
    n = leaves[0].shape[0]
    if any(t.shape[0] != n for t in leaves):
        raise InvalidArgumentError(f"map_fn: elems differ in their first dimension: {[tuple(t.shape) for t in leaves]}")
    results = []
    with name_scope("map"):
        for i in range(n):
            parts = [t[i] for t in leaves]
            item = parts[0] if isinstance(elems, Tensor) or not isinstance(elems, (list, tuple)) else type(elems)(parts)
            results.append(fn(item))
        if n == 0:
            raise InvalidArgumentError("map_fn: elems have no elements to map over")
        first = results[0]
        if isinstance(first, (list, tuple)):
            return type(first)(o.stack([as_tensor(r[j]) for r in results]) for j in range(len(first)))
        return o.stack([as_tensor(r) for r in results])
