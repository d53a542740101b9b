"""Activation functions by name, as ``Dense(activation="relu")`` takes them."""
from __future__ import annotations

from .. import nn
from .._missing import missing_api as _missing_api

_BY_NAME = {
    "relu": nn.relu,
    "sigmoid": nn.sigmoid,
    "tanh": nn.tanh,
    "softmax": nn.softmax,
    "softplus": nn.softplus,
    "softsign": nn.softsign,
    "elu": nn.elu,
    "selu": nn.selu,
    "gelu": nn.gelu,
    "relu6": nn.relu6,
    "leaky_relu": nn.leaky_relu,
    "swish": nn.swish,
    "silu": nn.swish,
}
relu, sigmoid, tanh, softmax, softplus, softsign = nn.relu, nn.sigmoid, nn.tanh, nn.softmax, nn.softplus, nn.softsign
elu, selu, gelu, relu6, leaky_relu, swish, silu = nn.elu, nn.selu, nn.gelu, nn.relu6, nn.leaky_relu, nn.swish, nn.swish


def get(identifier):
    """The activation function for a name, a callable, or ``None`` / ``"linear"`` (no activation).

    >>> import autodiff_viz as ad
    >>> ad.keras.activations.get("relu") is ad.nn.relu
    True
    """
    if identifier is None or identifier == "linear":
        return None
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError(f"unknown activation {identifier!r}; choose one of {sorted(_BY_NAME) + ['linear']} "
                     "or pass a function")


__getattr__ = _missing_api(__name__)
