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
