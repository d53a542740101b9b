"""``TensorShape``: what ``tensor.shape`` returns, as in TensorFlow.

A tuple of ints underneath, so code that compares a shape with ``(2, 3)``,
indexes it or hashes it keeps working; on top, TensorFlow's ``as_list()``,
``rank`` and printing.

>>> s = TensorShape([7, 10])
>>> s
TensorShape([7, 10])
>>> print(s), s.as_list(), s.rank, s == [7, 10], s[1:]
(7, 10)
(None, [7, 10], 2, True, TensorShape([10]))

It also holds :func:`broadcast_axes`, the one rule for which axes a
gradient is summed over when its input was broadcast.  This module imports
nothing from the package, so the engine (``_tape``), the exercise checker
(``classroom``) and the views (the storyboard's broadcast sentence) all use
it without a view reaching into the engine's machinery.
"""
from __future__ import annotations

import numbers


class TensorShape(tuple):
    """The shape of a tensor: a tuple of dimension sizes with TensorFlow's methods."""

    __slots__ = ()

    def __new__(cls, dims=()):
        if isinstance(dims, TensorShape):
            return dims
        if dims is None:
            raise ValueError("TensorShape: every shape here is fully known; got None (an unknown rank)")
        if isinstance(dims, numbers.Integral):
            dims = (dims,)
        out = []
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral):
                if hasattr(d, "__index__") and not isinstance(d, bool):
                    d = d.__index__()
                else:
                    raise TypeError(f"TensorShape: dimensions must be integers, got {d!r} in {dims!r}")
            if d < 0:
                raise ValueError(f"TensorShape: dimensions must be >= 0, got {d} in {tuple(dims)!r}")
            out.append(int(d))
        return tuple.__new__(cls, out)

    # -- TensorFlow's methods -------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self)

    ndims = rank

    @property
    def dims(self) -> list:
        return list(self)

    def as_list(self) -> list:
        return list(self)

    def num_elements(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def is_fully_defined(self) -> bool:
        return True

    def is_compatible_with(self, other) -> bool:
        return tuple(self) == tuple(TensorShape(other))

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {TensorShape(other)} are incompatible")

    def concatenate(self, other) -> "TensorShape":
        return TensorShape(tuple(self) + tuple(TensorShape(other)))

    # -- a tuple that stays a TensorShape -------------------------------------
    def __getitem__(self, key):
        got = tuple.__getitem__(self, key)
        return TensorShape(got) if isinstance(key, slice) else got

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return TensorShape(other).concatenate(self)

    def __eq__(self, other):
        if isinstance(other, (list, tuple)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def __repr__(self):
        return f"TensorShape({list(self)})"

    def __str__(self):
        return tuple.__repr__(self)

    def __reduce__(self):
        return TensorShape, (tuple(self),)


def broadcast_axes(shape, target) -> tuple | None:
    """The axes of ``target`` to sum a gradient over to give it ``shape`` (``shape`` broadcast to ``target``).

    Leading axes that broadcasting added, then the axes where ``shape`` has 1;
    ``None`` when ``shape`` does not broadcast to ``target``.

    >>> broadcast_axes((3,), (2, 3)), broadcast_axes((2, 1), (2, 4)), broadcast_axes((2, 3), (3,))
    ((0,), (1,), None)
    >>> broadcast_axes((3,), (1, 3)), broadcast_axes((2,), (3,))
    ((0,), None)
    """
    extra = len(target) - len(shape)
    if extra < 0:
        return None
    axes = list(range(extra))
    for i, s in enumerate(shape):
        t = target[i + extra]
        if s != t:
            if s != 1:
                return None
            axes.append(i + extra)
    return tuple(axes)
