"""``ad.math``: the elementwise, reduction and comparison ops (as ``tf.math``)."""
from ._missing import missing_api as _missing_api
from ._ops import (  # noqa: F401
    abs, add, add_n, argmax, argmin, ceil, cos, divide, divide_no_nan, equal, erf, exp, floor, floordiv, floormod, greater,
    greater_equal, less, less_equal, log, log1p, logical_and, logical_not, logical_or, maximum, minimum, multiply,
    negative, not_equal, pow, reciprocal, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_std, reduce_sum,
    reduce_variance, round, sigmoid, sign, sin, sqrt, square, squared_difference, subtract, tan, tanh, truediv,
)
from ._ops import softplus  # noqa: F401
from ._math_ops import cosh, cumsum, is_finite, is_inf, is_nan, sinh  # noqa: F401

mod = floormod

__getattr__ = _missing_api(__name__)
