"""Jacobians row by row: one backward pass per element of the target, stacked into the matrix a view shows.

A ``jacobian`` call runs one whole backward pass per element of its target
(a ``gradient_row`` event starts each), and a pass's sums never include
another pass's contributions.  :class:`Rows` keeps, per tensor (or edge),
what each pass left there, and :func:`stack` puts the rows together as the
engine does (rows first; per example for ``batch_jacobian``), from the
summaries alone, so a view shows the Jacobian instead of the last row.

>>> from autodiff_viz import events as ev
>>> r = Rows(2, (2,))
>>> r.put("x", 1, ev.summarize([2.0, 0.0])); r.put("x", 2, ev.summarize([0.0, 4.0]))
>>> j = stack(r.parts["x"], (2,), "float32", r.row_shape)
>>> j.shape, j.head
((2, 2), (2.0, 0.0, 0.0, 4.0))
"""
from __future__ import annotations

import numpy as np

from ... import events as ev


class Rows:
    """What each of a call's ``count`` passes left per key (a node or an edge): the last total of that pass.

    ``row_shape``: the target's shape (one example's for ``batch_jacobian``), whose elements the passes count.
    """

    def __init__(self, count: int, row_shape: tuple = ()):
        self.count, self.row_shape = count, tuple(row_shape)
        self.row = 0                      # the pass under way (from 1); 0 before the first
        self.parts: dict = {}             # key -> [Summary | None] * count

    def put(self, key, row: int, s: ev.Summary | None) -> None:
        parts = self.parts.get(key)
        if parts is None:
            parts = self.parts[key] = [None] * self.count
        parts[row - 1] = s


def stack(parts, shape, dtype, row_shape=None, batch: bool = False) -> ev.Summary:
    """The summary of ``parts`` stacked as the engine stacks a Jacobian's rows (``None``: a row of zeros).

    ``shape``/``dtype``: one row's (the tensor's own).  Rows first, shaped as
    ``row_shape`` (the target's, by default one axis); with ``batch`` they go
    after the batch axis (``[b] + row_shape + shape[1:]``).
    A tensor too large for its summary to hold every value still gets an exact
    shape, minimum, maximum and mean; its leading values are known for rows first only.
    """
    shape = tuple(shape)
    size = int(np.prod(shape, dtype=np.int64))
    if all(p is None or p.complete for p in parts):
        rows = [np.zeros(shape) if p is None else p.array() for p in parts]
        arr = np.stack(rows, axis=1 if batch and shape else 0)
        return ev.summarize(arr.reshape(_shape(len(parts), shape, row_shape, batch)).astype(_np_dtype(dtype)))
    known = [p for p in parts if p is not None and p.size]
    lows = [p.min for p in known] + ([0.0] if len(known) < len(parts) else [])
    highs = [p.max for p in known] + ([0.0] if len(known) < len(parts) else [])
    mean = sum(p.mean for p in known) / len(parts) if parts else None
    head: list = []
    if not batch:
        for p in parts:
            head.extend(p.head if p is not None else (0.0,) * min(size, ev.HEAD))
            if len(head) >= ev.HEAD or (p is not None and not p.complete):
                break
    full = _shape(len(parts), shape, row_shape, batch)
    return ev.Summary(full, dtype, size * len(parts), min(lows) if lows else None, max(highs) if highs else None,
                      mean, tuple(head[:ev.HEAD]))


def _shape(count, shape, row_shape, batch) -> tuple:
    rows = (count,) if row_shape is None else tuple(row_shape)
    return (shape[:1] + rows + shape[1:]) if batch and shape else rows + shape


def _np_dtype(name: str):
    try:
        return np.dtype(name)
    except TypeError:  # a dtype NumPy does not name (bfloat16): its values as float64
        return np.dtype(np.float64)
