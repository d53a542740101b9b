"""``ad.test.compute_gradient``: the tape's Jacobian next to a finite-difference one."""
from __future__ import annotations

import numpy as _np

from . import _backend, _nest
from ._tape import GradientTape
from ._tensor import Tensor, convert_to_tensor
from ._missing import missing_api as _missing_api


def _default_delta(dtype):
    return 1e-6 if dtype == _np.float64 else 1e-3


def compute_gradient(f, x, delta=None):
    """Return ``(theoretical, numerical)``: lists of 2-D Jacobians, one per argument.

    Each has ``y_size`` rows and ``x_size`` columns, as in ``tf.test.compute_gradient``
    (``gradient_checker_v2``): row ``j`` is the derivative of output element ``j``
    with respect to every element of the argument.  Numerical Jacobians use
    central differences; use float64 inputs to check rules.

    >>> import autodiff_viz as ad, numpy as np
    >>> th, nu = ad.test.compute_gradient(lambda x: x[:2] * x[2], [ad.constant([1.0, 2.0, 3.0], dtype=ad.float64)])
    >>> th[0]
    array([[3., 0., 1.],
           [0., 3., 2.]])
    >>> bool(np.allclose(th[0], nu[0]))
    True
    """
    xs = [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in (x if isinstance(x, (list, tuple)) else [x])]
    for i, xi in enumerate(xs):
        _differentiable(xi, f"argument {i}")
    with GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = f(*xs)
    y = _differentiable(_single_output(y), "y, the result of f,")
    y_size = int(_np.prod(y.shape))
    jac = tape.jacobian(y, xs, unconnected_gradients="zero")
    theoretical = []
    for j, xi in zip(jac, xs):
        x_size = int(_np.prod(xi.shape))
        theoretical.append(_backend.to_numpy(j._value).reshape(y_size, x_size).astype(_np.float64))
    numerical = [_numerical(f, xs, i, y_size, delta) for i in range(len(xs))]
    return theoretical, numerical


def _differentiable(t, what):
    # As TF's gradient checker (an AssertionError there too): an integer argument has no
    # derivative, and steps of ±delta truncated to integers give a meaningless quotient.
    if not (t.dtype.is_floating or t.dtype.is_complex):
        raise AssertionError(f"compute_gradient: cannot compute a gradient for {what} of dtype {t.dtype.name} "
                             f"(shape {t.shape}); use a floating dtype, e.g. ad.constant(2.0, dtype=ad.float64)")
    return t


def _single_output(y):
    flat = _nest.flatten(y)
    if len(flat) != 1 or not isinstance(flat[0], Tensor):
        raise TypeError("compute_gradient: f must return one tensor")
    return flat[0]


def _numerical(f, xs, i, y_size, delta):
    base = _backend.to_numpy(xs[i]._value).astype(_np.float64)
    dt = xs[i].dtype.as_numpy_dtype  # a NumPy dtype whatever the backend: the host copy is cast with it
    h = delta if delta is not None else _default_delta(dt)
    out = _np.zeros((base.size, y_size))
    flat = base.reshape(-1)
    for k in range(flat.size):
        ys = []
        for step in (h, -h):
            moved = flat.copy()
            moved[k] += step
            args = list(xs)
            args[i] = convert_to_tensor(moved.reshape(base.shape).astype(dt))
            ys.append(_backend.to_numpy(_single_output(f(*args))._value).astype(_np.float64).reshape(-1))
        out[k] = (ys[0] - ys[1]) / (2 * h)
    return out.T  # y_size rows, x_size columns


def max_error(theoretical, numerical) -> float:
    """Largest absolute difference between the Jacobians of ``compute_gradient``."""
    return max((float(_np.max(_np.abs(t - n))) if t.size else 0.0) for t, n in zip(theoretical, numerical))

__getattr__ = _missing_api(__name__)
