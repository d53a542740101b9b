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
from . import _primitives  # noqa: F401  (the op table)
from ._backend import backend, set_backend
from ._custom import custom_gradient
from ._dtypes import DType, as_dtype, bool_ as bool, float16, float32, float64, int8, int16, int32, int64, uint8  # noqa: A004
from ._ops import (
    InvalidArgumentError, abs, add, add_n, argmax, argmin, broadcast_to, cast, clip_by_norm, clip_by_value, concat,
    cos, divide, equal, exp, expand_dims, eye, fill, greater, greater_equal, identity, less, less_equal, linspace,
    log, log1p, logical_and, logical_not, logical_or, matmul, maximum, minimum, multiply, negative, not_equal, ones,
    ones_like, pow, range, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, reshape, round, sigmoid,
    sign, sin, sqrt, square, squared_difference, squeeze, stack, stop_gradient, subtract, tan, tanh, transpose,
    unstack, where, zeros, zeros_like,
)
from ._registry import NotDifferentiable, RegisterGradient, no_gradient
from ._tape import GradientTape, UnconnectedGradients, name_scope
from ._tensor import EagerTensor, ResourceVariable, Tensor, Variable, constant, convert_to_tensor
from . import image, linalg, math, nn, random, test  # noqa: E402
from ._module import Module  # noqa: E402
from . import autodiff, data, keras  # noqa: E402
from .events import Trace  # noqa: E402
from ._recording import trace  # noqa: E402


def __getattr__(name):
    # ``ad.viz`` and ``ad.classroom`` are imported on first use: the engine never pulls in drawing code.
    if name in ("viz", "classroom"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'autodiff_viz' has no attribute {name!r}")

__version__ = "0.1.0"

__all__ = [
    "GradientTape", "UnconnectedGradients", "Tensor", "Variable", "constant", "convert_to_tensor",
    "custom_gradient", "RegisterGradient", "no_gradient", "name_scope", "set_backend", "backend",
]
