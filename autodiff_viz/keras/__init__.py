"""``ad.keras``: the small part of Keras the GradientTape guides use.

Layers, an initializer and activation lookup, ``Sequential``, and the SGD
and Adam optimizers, all built from the package's ops, so every layer call
is recorded on tapes like any other code.

>>> import autodiff_viz as ad
>>> model = ad.keras.Sequential([ad.keras.layers.Dense(4, activation="relu"), ad.keras.layers.Dense(1)])
>>> model(ad.ones((2, 3))).shape
TensorShape([2, 1])
"""
from .._missing import missing_api as _missing_api
from . import activations, initializers, layers, losses, metrics, optimizers
from .models import Model, Sequential

__all__ = ["Model", "Sequential", "activations", "initializers", "layers", "losses", "metrics", "optimizers"]

__getattr__ = _missing_api(__name__)
