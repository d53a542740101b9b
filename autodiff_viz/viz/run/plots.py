"""Derivative plots computed with the tape: f and its derivatives, finite-difference error.

Everything here uses the public API only (``ad.GradientTape``, ``ad.constant``):
the curves are what a student's own code would compute.
"""
from __future__ import annotations

import numpy as np

from ..draw.look import CURVE_COLOURS, PALETTE

from ..text import arguments as A
from ..text import labels as L

MAX_ORDER = 12  # nested tapes: each order differentiates the one before

# Okabe-Ito: distinguishable with the common forms of colour blindness.
OKABE_ITO = PALETTE
CURVE_STYLES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 1))]


def derivative_label(order: int, var: str = "x") -> str:
    """``f(x)``, ``f'(x)``, ``f''(x)``, ``f'''(x)``, then ``f⁽⁴⁾(x)``..."""
    if order <= 3:
        return "f" + "'" * order + f"({var})"
    sup = str(order).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"f⁽{sup}⁾({var})"


def _as_numpy(t, like):
    if t is None:  # unconnected: the derivative is identically zero
        return np.zeros_like(like)
    return np.asarray(t.numpy(), dtype=np.float64)


def derivatives(f, x, order: int = 1) -> list:
    """``[f(x), f'(x), ..., f^(order)(x)]`` as float64 arrays, by nested tapes.

    ``f`` is applied to a 1-D tensor of all points at once when it is
    elementwise (the usual case: ``ad.sin(x) * x``); otherwise point by point.
    Tape ``k`` (counting from the inside) differentiates the result of tape
    ``k - 1``, exactly as in the guide's second-derivative example.

    >>> import autodiff_viz as ad
    >>> [float(v[0]) for v in derivatives(ad.sin, [0.0], order=2)]
    [0.0, 1.0, -0.0]
    """
    import autodiff_viz as ad

    if order < 0:
        raise ValueError(f"order must be >= 0, got {order}")
    xs = np.atleast_1d(np.asarray(x, dtype=np.float64))
    out = _nested(f, xs, order, ad)
    if out is None:  # not elementwise: one point at a time
        per_point = [_nested(f, xs[i], order, ad) for i in range(xs.size)]
        if any(p is None for p in per_point):
            raise ValueError("f must map a scalar tensor to a scalar tensor")
        out = [np.array([p[k] for p in per_point]) for k in range(order + 1)]
    return [o.reshape(xs.shape) for o in out]


def _nested(f, xs, order, ad):
    xs = np.asarray(xs)
    x = ad.constant(xs, dtype=ad.float64)
    tapes = [ad.GradientTape() for _ in range(order)]
    entered = []
    try:
        for t in tapes:  # tapes[0] outermost
            t.__enter__()
            entered.append(t)
            t.watch(x)
        y = f(x)
        if not isinstance(y, ad.Tensor):
            y = ad.constant(np.broadcast_to(np.asarray(y, dtype=np.float64), xs.shape))
        if tuple(y.shape) != xs.shape:
            return None
        results = [_as_numpy(y, xs)]
        current = y
        # Close the innermost tape, differentiate with it while the outer ones
        # still record, then the next one out differentiates that result.
        for t in reversed(tapes):
            t.__exit__(None, None, None)
            entered.remove(t)
            if current is None:
                results.append(np.zeros_like(xs))
                continue
            current = t.gradient(current, x)
            results.append(_as_numpy(current, xs))
        return results
    finally:
        for t in reversed(entered):
            t.__exit__(None, None, None)


def _grid(x, n=400):
    if isinstance(x, tuple) and len(x) == 2 and np.ndim(x[0]) == 0:
        return np.linspace(float(x[0]), float(x[1]), n)
    return np.asarray(x, dtype=np.float64).ravel()


def plot_derivatives(f, x=(-3.0, 3.0), order: int = 1, ax=None, title=None, logy: bool = False):
    """Plot f and its derivatives up to ``order``, all computed with the tape.

    ``x`` is an array of points or a ``(low, high)`` pair. Returns the
    matplotlib figure; each curve is labelled (``f(x)``, ``f'(x)``...).
    ``title`` is shown as typed (no mathtext).  ``logy=True`` plots the
    sizes ``|f(x)|``, ``|f'(x)|``... on a logarithmic axis, so a derivative
    that vanishes (1e-11 beside 0.02) is seen, not a flat line at 0; a zero
    leaves a gap.

    >>> import autodiff_viz as ad
    >>> fig = plot_derivatives(lambda x: ad.sin(x) * x, (-4, 4), order=2)
    >>> fig.axes[0].get_legend_handles_labels()[1]
    ['f(x)', "f'(x)", "f''(x)"]
    """
    import matplotlib.pyplot as plt

    A.function("plot_derivatives", "f", f)
    order = A.whole("plot_derivatives", "order", order, low=0, high=MAX_ORDER)
    logy = A.flag("plot_derivatives", "logy", logy)
    xs = _grid(x)
    values = derivatives(f, xs, order)
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    else:
        fig = ax.figure
    for k, v in enumerate(values):
        label = derivative_label(k)
        if logy:  # sizes: a zero has no logarithm, so it is a gap in the curve
            size = np.abs(np.asarray(v, dtype=np.float64))
            v, label = np.where(size > 0, size, np.nan), f"|{label}|"
        ax.plot(xs, v, color=CURVE_COLOURS[k % len(CURVE_COLOURS)], linestyle=CURVE_STYLES[k % len(CURVE_STYLES)],
                linewidth=2.5, label=label)
    if logy:
        ax.set_yscale("log")
    else:
        ax.axhline(0.0, color="#999999", linewidth=0.8, zorder=0)
    ax.set_xlabel("x", fontsize=14)
    # A title is shown as typed (never parsed as mathtext): a "$" in it cannot make drawing fail.
    ax.set_title(L.for_mpl(title, L.TITLE_LIMIT, "end") if title
                 else f"f and its derivatives up to order {order} (nested GradientTapes)"
                 + ("\n(sizes on a log scale)" if logy else ""), fontsize=14, **L.MPL_TEXT)
    ax.tick_params(labelsize=12)
    if ax is fig.axes[0] and len(fig.axes) == 1:  # our own figure: the legend beside the axes, never on a curve
        ax.legend(fontsize=13, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.legend(fontsize=13, frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def fd_errors(f, x: float, hs=None):
    """Finite-difference errors at ``x`` against the tape's exact derivative.

    Returns ``(hs, forward_errors, central_errors, exact)``; all in float64.
    Forward differences have truncation error ~h, central ~h²; both have
    rounding error ~eps/h, which is why the curves form a V.
    """
    import autodiff_viz as ad

    if hs is None:
        hs = np.logspace(-16, 0, 65)
    hs = np.asarray(hs, dtype=np.float64)
    x = float(x)
    exact = float(derivatives(f, [x], order=1)[1][0])

    def value(at):
        y = f(ad.constant(at, dtype=ad.float64))
        return float(np.asarray(y.numpy() if isinstance(y, ad.Tensor) else y, dtype=np.float64).sum())

    fx = value(x)
    forward = np.array([abs((value(x + h) - fx) / h - exact) for h in hs])
    central = np.array([abs((value(x + h) - value(x - h)) / (2 * h) - exact) for h in hs])
    return hs, forward, central, float(exact)


def plot_fd_error(f, x: float = 1.0, hs=None, ax=None):
    """Log-log plot of finite-difference error against step size h.

    The tape's gradient is the reference. Small h loses to rounding, large h
    to truncation: the classic V, with the best h marked for each formula.
    """
    import matplotlib.pyplot as plt

    A.function("plot_fd_error", "f", f)
    hs, forward, central, exact = fd_errors(f, x, hs)
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    else:
        fig = ax.figure
    tiny = np.finfo(np.float64).tiny  # an exact hit (error 0) would vanish from a log axis
    for errs, name, colour, marker in ((forward, "forward (f(x+h) − f(x)) / h", OKABE_ITO["vermillion"], "o"),
                                       (central, "central (f(x+h) − f(x−h)) / 2h", OKABE_ITO["blue"], "s")):
        shown = np.maximum(errs, tiny)
        ax.loglog(hs, shown, marker=marker, markersize=4, linewidth=2, color=colour, label=name)
        best = int(np.argmin(errs))
        ax.plot([hs[best]], [shown[best]], marker="*", markersize=16, color=colour, markeredgecolor="black")
        ax.annotate(f"best h ≈ {hs[best]:.0e}", (hs[best], shown[best]), textcoords="offset points", xytext=(0, -30),
                    ha="center", fontsize=12, color=colour, arrowprops={"arrowstyle": "-", "color": colour},
                    bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": colour})
    eps = np.finfo(np.float64).eps
    ax.loglog(hs, eps / hs, color="#777777", linestyle=":", linewidth=1.5, label="rounding ~ ε/h")
    ax.set_xlabel("step size h", fontsize=14)
    ax.set_ylabel("|finite difference − tape gradient|", fontsize=14)
    ax.set_title(f"Finite-difference error at x = {x:g} (tape gradient {exact:.6g})", fontsize=14)
    ax.tick_params(labelsize=12)
    floor = min(forward[forward > 0].min(initial=1.0), central[central > 0].min(initial=1.0))
    ax.set_ylim(floor / 1e3, max(forward.max(), central.max()) * 10)
    ax.legend(fontsize=12, frameon=False, loc="upper center")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig
