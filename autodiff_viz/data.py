"""``ad.data.Dataset``: slices of tensors to loop over, in batches, shuffled.

A dataset is a pipeline of plain Python iterators over elements; an element
is a tensor or a tuple/dict of tensors.  Datasets hold data, not
computations: nothing here is recorded on a tape.

>>> import autodiff_viz as ad
>>> ds = ad.data.Dataset.from_tensor_slices((ad.constant([[1.0, 2.0], [3.0, 4.0]]), ad.constant([0.5, 0.7])))
>>> for x, y in ds:
...     print(x.shape, y.shape)
(2,) ()
(2,) ()
"""
from __future__ import annotations

import numpy as _np

from . import _backend
from . import _data_experimental as experimental
from . import random as _random
from ._tensor import Tensor, _int_arg, _wrap, convert_to_tensor
from ._missing import missing_api as _missing_api


# Structure: tuples and dicts nest; anything else (a list included, as in TF) is one tensor.
def _flatten(structure) -> list:
    if isinstance(structure, tuple):
        return [leaf for s in structure for leaf in _flatten(s)]
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k])]
    return [structure]


def _pack(structure, leaves: list):
    it = iter(leaves)

    def build(s):
        if isinstance(s, tuple):
            return tuple(build(v) for v in s)
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return {k: built[k] for k in s}
        return next(it)

    return build(structure)


class Dataset:
    """Base of all datasets: iterable, chainable (``batch``, ``shuffle``, ``map``, ``take``)."""

    def _elements(self):
        """Yield each element as a flat list of tensors."""
        raise NotImplementedError

    def _cardinality(self):
        """Number of elements, or None when it cannot be known without iterating."""
        return None

    @property
    def _structure(self):
        return self._source._structure

    def __iter__(self):
        for leaves in self._elements():
            yield _pack(self._structure, leaves)

    def __len__(self):
        n = self._cardinality()
        if n is None:
            raise TypeError("The dataset length is unknown.")
        return n

    @staticmethod
    def from_tensor_slices(tensors) -> Dataset:
        """One element per index of the first axis of every tensor in ``tensors``.

        >>> import autodiff_viz as ad
        >>> [int(x) for x in ad.data.Dataset.from_tensor_slices([1, 2, 3])]
        [1, 2, 3]
        """
        return _Slices(tensors)

    def batch(self, batch_size, drop_remainder=False) -> Dataset:
        """Stack ``batch_size`` consecutive elements into one (the last may be smaller)."""
        return _Batch(self, batch_size, drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True) -> Dataset:
        """Randomly reorder elements through a buffer of ``buffer_size``, as ``tf.data`` does.

        Each element out is drawn uniformly from the buffer, which the next
        element in refills; a buffer as large as the dataset gives a full
        shuffle.  With ``seed`` the orders are repeatable; each new pass over
        the dataset gets a new order unless ``reshuffle_each_iteration=False``.
        """
        return _Shuffle(self, buffer_size, seed, reshuffle_each_iteration)

    def map(self, map_func) -> Dataset:
        """Apply ``map_func`` to each element (a tuple element is passed as separate arguments)."""
        return _Map(self, map_func)

    def cardinality(self):
        """The number of elements (an int64 scalar tensor; -2 when unknown), as ``tf.data.Dataset.cardinality``."""
        return experimental.cardinality(self)

    def take(self, count) -> Dataset:
        """The first ``count`` elements (all of them if ``count`` is -1)."""
        return _Take(self, count)


class _Slices(Dataset):
    _structure = None

    def __init__(self, tensors):
        self._structure = tensors
        leaves = [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in _flatten(tensors)]
        if not leaves:
            raise ValueError("from_tensor_slices: nothing to slice")
        for t in leaves:
            if t.ndim == 0:
                raise ValueError("from_tensor_slices: every tensor needs at least one axis to slice along, "
                                 f"got a scalar {t!r}")
        sizes = {t.shape[0] for t in leaves}
        if len(sizes) != 1:
            raise ValueError(f"from_tensor_slices: tensors have different first dimensions {[t.shape for t in leaves]}")
        self._arrays = [t._value for t in leaves]
        self._n = sizes.pop()

    def _cardinality(self):
        return self._n

    def _elements(self):
        for i in range(self._n):
            yield [_wrap(a[i, ...]) for a in self._arrays]


class _Batch(Dataset):
    def __init__(self, source, batch_size, drop_remainder):
        size = _int_arg(batch_size, "Dataset.batch", "batch_size")  # as TF: 2.5 is a TypeError, never truncated
        if size <= 0:
            raise ValueError(f"Dataset.batch: batch_size must be positive, got {batch_size!r}")
        self._source, self._size, self._drop = source, size, bool(drop_remainder)

    def _cardinality(self):
        n = self._source._cardinality()
        if n is None:
            return None
        return n // self._size if self._drop else -(-n // self._size)

    def _elements(self):
        group = []
        for leaves in self._source._elements():
            group.append(leaves)
            if len(group) == self._size:
                yield _stack(group)
                group = []
        if group and not self._drop:
            yield _stack(group)


def _stack(group):
    out = []
    for parts in zip(*group):
        xp = _backend.namespace_of(parts[0]._value)
        out.append(_wrap(xp.stack([p._value for p in parts])))
    return out


class _Shuffle(Dataset):
    def __init__(self, source, buffer_size, seed, reshuffle):
        size = _int_arg(buffer_size, "Dataset.shuffle", "buffer_size")
        if size <= 0:
            raise ValueError(f"Dataset.shuffle: buffer_size must be positive, got {buffer_size!r}")
        self._source, self._buffer_size = source, size
        self._reshuffle = bool(reshuffle)
        self._seed = (_int_arg(seed, "Dataset.shuffle", "seed") if seed is not None
                      else int(_random._rng.integers(2**63)))
        # One generator for all passes: each pass continues its stream, so passes differ.
        self._rng = _np.random.default_rng(self._seed)

    def _cardinality(self):
        return self._source._cardinality()

    def _elements(self):
        rng = self._rng if self._reshuffle else _np.random.default_rng(self._seed)
        buffer = []
        for leaves in self._source._elements():
            buffer.append(leaves)
            if len(buffer) == self._buffer_size:
                yield _pop_random(buffer, rng)
        while buffer:
            yield _pop_random(buffer, rng)


def _pop_random(buffer, rng):
    # Swap the chosen element to the end so removal is O(1).
    i = int(rng.integers(len(buffer)))
    buffer[i], buffer[-1] = buffer[-1], buffer[i]
    return buffer.pop()


class _Map(Dataset):
    _structure = None  # what map_func returns; known once it has run

    def __init__(self, source, fn):
        self._source, self._fn = source, fn

    def _cardinality(self):
        return self._source._cardinality()

    def _elements(self):
        for element in self._source:
            out = self._fn(*element) if isinstance(element, tuple) else self._fn(element)
            self._structure = out
            yield [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in _flatten(out)]


class _Take(Dataset):
    def __init__(self, source, count):
        self._source, self._count = source, _int_arg(count, "Dataset.take", "count")

    def _cardinality(self):
        n = self._source._cardinality()
        if self._count < 0:
            return n
        return self._count if n is None else min(n, self._count)

    def _elements(self):
        for i, leaves in enumerate(self._source._elements()):
            if 0 <= self._count <= i:
                return
            yield leaves

__getattr__ = _missing_api(__name__)
