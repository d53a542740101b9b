"""autodiff_viz: automatic differentiation you can see.

A NumPy tape engine with TensorFlow's ``GradientTape`` API: guide code runs
with ``import autodiff_viz as tf``.

>>> import autodiff_viz as ad
>>> x = ad.Variable(3.0)
>>> with ad.GradientTape() as tape:
...     y = x ** 2
>>> float(tape.gradient(y, x))
6.0
"""
from . import _primitives  # the op table
from ._backend import backend, set_backend
from ._custom import custom_gradient
from ._function import Function, TensorSpec, function
from ._dtypes import (
    DType, as_dtype, bool_ as bool, complex64, complex128, float16, float32, float64, int8, int16, int32, int64,
    uint8, uint16, uint32, uint64,
)
from ._ops import (
    InvalidArgumentError, abs, add, add_n, argmax, argmin, broadcast_to, cast, ceil, clip_by_norm, clip_by_value,
    concat, cos, divide, einsum, equal, exp, expand_dims, eye, fill, floor, greater, greater_equal, identity, less,
    less_equal, linspace, log, log1p, logical_and, logical_not, logical_or, matmul, maximum, minimum, multiply,
    negative, norm, not_equal, one_hot, ones, ones_like, pad, pow, range, rank, reduce_max, reduce_mean, reduce_min,
    reduce_prod, reduce_sum, reshape, round, shape, sigmoid, sign, sin, size, sqrt, square, squared_difference,
    squeeze, stack, stop_gradient, subtract, tan, tanh, transpose, truediv, unstack, where, zeros, zeros_like,
)
from ._array_ops import boolean_mask, map_fn, meshgrid, tensordot
from ._math_ops import cosh, cumsum, sinh
from ._registry import NotDifferentiable, RegisterGradient, no_gradient
from ._shape import TensorShape
from ._tape import GradientTape, UnconnectedGradients, name_scope
from ._tensor import EagerTensor, ResourceVariable, Tensor, Variable, constant, convert_to_tensor
from . import config, errors, image, linalg, math, nn, random, test
from .config import device
from .random import random_normal_initializer
from ._module import Module
from . import autodiff, data, extend, keras
from .traces import Trace
from ._recording import trace
from ._missing import missing_api as _missing_api

newaxis = None  # x[:, tf.newaxis], as NumPy's
_not_here = _missing_api(__name__)


def __getattr__(name):
    # ``ad.viz`` and ``ad.classroom`` are imported on first use: the engine never pulls in drawing code.
    if name in ("viz", "classroom"):
        import importlib  # noqa: PLC0415  (only when a view is first asked for)

        return importlib.import_module(f".{name}", __name__)
    # Any other missing name is a TensorFlow API this package does not have: say so in words.
    return _not_here(name)

__version__ = "0.1.0"

__all__ = [
    "GradientTape", "UnconnectedGradients", "Tensor", "Variable", "constant", "convert_to_tensor",
    "custom_gradient", "RegisterGradient", "no_gradient", "name_scope", "set_backend", "backend",
]
