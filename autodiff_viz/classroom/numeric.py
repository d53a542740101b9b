"""The checker's numbers: one-sided finite differences, kinks, the whole computation's Jacobians.

Nothing here writes words; :mod:`.messages` does.

>>> import numpy as np
>>> _sums_down((2, 3), (3,)), _sums_down((3,), (2, 3))
(True, False)
"""
from __future__ import annotations

import numpy as np

from .. import Tensor, constant
from .._shape import broadcast_axes


def _sums_down(got, want) -> bool:
    """Whether ``want`` broadcasts to ``got`` (so summing over the copies gives ``want``)."""
    return broadcast_axes(tuple(want), tuple(got)) is not None


def _one_sided(forward, node, arrays, i, upstream, h=1e-6):
    """Per element of input ``i``: the upstream-weighted slope from the right, from the left, and central."""
    base = [np.asarray(a, dtype=np.float64) for a in arrays]
    x = base[i]
    with np.errstate(all="ignore"):
        f0 = forward(node, base)
        right, left = np.zeros(x.size), np.zeros(x.size)
        flat = x.reshape(-1)
        for k in range(flat.size):
            for step, out in ((h, right), (-h, left)):
                moved = flat.copy()
                moved[k] += step
                args = list(base)
                args[i] = moved.reshape(x.shape)
                out[k] = np.sum(upstream * (forward(node, args) - f0)) / step
        central = (right + left) / 2
    return right.reshape(x.shape), left.reshape(x.shape), central.reshape(x.shape)


def _is_kink(right, left):
    with np.errstate(all="ignore"):
        return ~np.isclose(right, left, rtol=1e-3, atol=1e-4)


def _unbroadcast(a, shape):
    a = np.asarray(a, dtype=np.float64)
    if a.shape == tuple(shape):
        return a
    axes = broadcast_axes(tuple(shape), a.shape)
    return np.sum(a, axis=axes).reshape(shape) if axes else a.reshape(shape)


def _finite_forward(f, arrays) -> bool:
    try:
        with np.errstate(all="ignore"):
            y = f(*[constant(a) for a in arrays])
        return isinstance(y, Tensor) and bool(np.all(np.isfinite(np.asarray(y.numpy(), dtype=np.float64))))
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001  (outside its domain: no check there)
        return False


def _whole_ok(f, xs, theoretical, numerical, rtol, atol):
    """The whole computation against finite differences; rows at a kink are left to the per-node checks.

    Returns ``(ok, rows)``: ``rows`` are the ``(input, element)`` pairs excused as kinks.
    """
    kink_rows = set()
    for i, (t, n) in enumerate(zip(theoretical, numerical)):
        if t.shape != n.shape:
            return False, kink_rows
        t, n = t.T, n.T  # compute_gradient's Jacobians have one column per input element: a row each here
        with np.errstate(all="ignore"):
            rows = ~np.all(np.isclose(t, n, rtol=rtol, atol=atol), axis=1)
        for k in np.flatnonzero(rows):
            if not np.all(np.isfinite(t[k])):
                return False, kink_rows
            right, left = _whole_slopes(f, xs, i, k)
            if np.all(np.isclose(right, left, rtol=1e-3, atol=1e-4)):
                return False, kink_rows
            kink_rows.add((i, k))
    return True, kink_rows


def _whole_slopes(f, xs, i, k, h=1e-6):
    base = np.asarray(xs[i].numpy(), dtype=np.float64)
    flat = base.reshape(-1)

    def value(step):
        moved = flat.copy()
        moved[k] += step
        args = list(xs)
        args[i] = constant(moved.reshape(base.shape))
        with np.errstate(all="ignore"):
            return np.asarray(f(*args).numpy(), dtype=np.float64).reshape(-1)
    f0 = value(0.0)
    return (value(h) - f0) / h, (f0 - value(-h)) / h


def _max_err(theoretical, numerical, skip=None) -> float:
    """The largest difference, leaving out the rows (input elements) at a kink: ``skip`` from :func:`_whole_ok`."""
    errs = []
    for i, (t, n) in enumerate(zip(theoretical, numerical)):
        if t.size and t.shape == n.shape:
            t, n = t.T, n.T  # one row per input element, as in _whole_ok
            rows = [k for k in range(t.shape[0]) if not skip or (i, k) not in skip]
            if rows:
                errs.append(float(np.nanmax(np.abs(t[rows] - n[rows]))))
    return max(errs) if errs else 0.0



def _steepest_slopes(forward, node, arrays, i, upstream, got, central, seed=0, eps=1e-4, h=1e-7):
    """At a kink of input ``i``: directions ``d`` and the steepest slope of φ along each near the point.

    φ(v) is Σ upstream · forward(..., v, ...), the function whose gradient the rule
    sends to input ``i``.  A gradient ``g`` is right at a kink exactly when it is a
    (generalized, Clarke) subgradient: ``g·d`` is at most the largest one-sided slope
    of φ along ``d`` at points close by, for every direction ``d``.  The directions
    tried are the axes both ways, random ones, and ``±got`` and ``±(got - central)``,
    the ones along which a wrong answer shows most.  Returns ``(directions, slopes)``.
    """
    base = [np.asarray(a, dtype=np.float64) for a in arrays]
    x = base[i].reshape(-1)
    n = x.size
    rng = np.random.default_rng(seed + 7)
    # The cost grows as the square of the number of directions: the axes only for a small input.
    dirs = [v for k in range(n) for v in (np.eye(n)[k], -np.eye(n)[k])] if n <= 12 else []
    dirs += list(rng.normal(size=(16 if n <= 12 else 32, n))) if n > 1 else []
    for v in (np.asarray(got, dtype=np.float64).reshape(-1) if got is not None else None,
              None if got is None else (np.asarray(got, dtype=np.float64) - central).reshape(-1)):
        if v is not None and v.shape == (n,) and np.all(np.isfinite(v)) and np.linalg.norm(v) > 0:
            dirs += [v, -v]
    dirs = [d / np.linalg.norm(d) for d in dirs]

    def phi(v):
        args = list(base)
        args[i] = v.reshape(base[i].shape)
        return float(np.sum(upstream * forward(node, args)))

    with np.errstate(all="ignore"):
        near = [x] + [x + eps * d for d in dirs]
        values = [phi(y) for y in near]
        slopes = np.array([max((phi(y + h * d) - f0) / h for y, f0 in zip(near, values)) for d in dirs])
    return np.array(dirs), slopes


def _subgradient_ok(dirs, slopes, got, rtol, atol):
    """Whether ``got`` is within every steepest slope; else the worst direction's index."""
    g = np.asarray(got, dtype=np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        dots = dirs @ g
        over = dots - slopes - (max(atol, 1e-6) + rtol * 10 * (np.abs(slopes) + np.linalg.norm(g)))
    if not np.all(np.isfinite(dots)):
        return False, int(np.argmax(~np.isfinite(dots))), dots
    worst = int(np.argmax(over))
    return bool(over[worst] <= 0), worst, dots
