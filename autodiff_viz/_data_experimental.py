"""``ad.data.experimental``: what ``tf.data.experimental`` offers here (the number of elements).

>>> import autodiff_viz as ad
>>> int(ad.data.experimental.cardinality(ad.data.Dataset.from_tensor_slices([1, 2, 3]).batch(2)))
2
"""
from __future__ import annotations

from . import _ops
from ._missing import missing_api as _missing_api

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def cardinality(dataset):
    """The number of elements as a scalar int64 tensor; ``UNKNOWN_CARDINALITY`` (-2) when not known without iterating."""
    count = getattr(dataset, "_cardinality", None)
    if count is None:
        raise TypeError(f"data.experimental.cardinality: expected an ad.data.Dataset, got {type(dataset).__name__}")
    n = count()
    return _ops.cast(_ops.convert_to_tensor(UNKNOWN_CARDINALITY if n is None else n), "int64")


__getattr__ = _missing_api("autodiff_viz.data.experimental")
