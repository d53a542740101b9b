"""``explore(f)``: a slider moves a point along f; its tangent line and f'(x) follow.

For a function of two variables: contours, gradient arrows, and a
gradient-descent path whose learning rate and start point are sliders.

Why precompute instead of ``ipywidgets.interact``: every value the widget
can show (f, f' on a grid; every descent path for every learning rate and
start point on the slider grids) is computed with the tape here, once, and
shipped as widget state.  Moving a slider then costs the browser a lookup,
needs no kernel, and keeps working in a saved notebook or an exported page.
"""
from __future__ import annotations

import inspect
import json

import numpy as np

from ..text import arguments as A
from .plots import derivatives


# Points of a curve, and the grids of the 2-D view (each is squared: 400 x 400 points are 160,000
# evaluations of f and its gradient, and the page carries every contour).
MAX_POINTS = 20_001
GRID_LIMITS = {"resolution": (2, 400), "arrows": (2, 60), "starts": (1, 40), "iterations": (1, 1000)}


def _arity(f) -> int:
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return len(params)
    except (TypeError, ValueError):
        return 1


def _clean(values, digits=6):
    out = []
    for v in np.asarray(values, dtype=np.float64).ravel():
        out.append(float(f"{v:.{digits}g}") if np.isfinite(v) else None)
    return out


def explore_1d(f, x=(-3.0, 3.0), points=201, name="f"):
    lo, hi = float(x[0]), float(x[1])
    xs = np.linspace(lo, hi, int(points))
    fx, dfx = derivatives(f, xs, order=1)
    return {"mode": "1d", "name": name, "x": _clean(xs), "f": _clean(fx), "df": _clean(dfx), "start": int(points) // 3}


def _grad2(f, X, Y):
    import autodiff_viz as ad

    x = ad.constant(np.asarray(X, dtype=np.float64))
    y = ad.constant(np.asarray(Y, dtype=np.float64))
    with ad.GradientTape() as tape:
        tape.watch([x, y])
        z = f(x, y)
    gx, gy = tape.gradient(z, [x, y], unconnected_gradients="zero")
    return np.asarray(z.numpy(), np.float64), np.asarray(gx.numpy(), np.float64), np.asarray(gy.numpy(), np.float64)


def input_names(f, n: int) -> list:
    """The names of ``f``'s first ``n`` parameters (``x``, ``y`` where it has none): the plot's axis labels."""
    try:
        names = [p.name for p in inspect.signature(f).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:n]
    except (TypeError, ValueError):
        names = []
    return names if len(names) == n else ["x", "y", "z"][:n]


def explore_2d(f, x=(-2.0, 2.0), y=(-2.0, 2.0), resolution=60, arrows=13, starts=9, rates=None, iterations=40,
               name="f"):
    """Contours (contourpy), gradient arrows and descent paths, all from the tape, vectorized over points."""
    import contourpy

    xs = np.linspace(float(x[0]), float(x[1]), int(resolution))
    ys = np.linspace(float(y[0]), float(y[1]), int(resolution))
    X, Y = np.meshgrid(xs, ys)
    Z, _, _ = _grad2(f, X, Y)
    finite = Z[np.isfinite(Z)]
    levels = np.quantile(finite, np.linspace(0.02, 0.98, 14)) if finite.size else []
    gen = contourpy.contour_generator(X, Y, Z)
    contours = []
    for lev in np.unique(levels):
        lines = gen.lines(float(lev))
        contours.append({"level": float(f"{lev:.4g}"), "lines": [_clean(seg.ravel(), 5) for seg in lines if len(seg) > 1]})
    ax = np.linspace(float(x[0]), float(x[1]), int(arrows))
    ay = np.linspace(float(y[0]), float(y[1]), int(arrows))
    AX, AY = np.meshgrid(ax, ay)
    _, GX, GY = _grad2(f, AX, AY)
    rates = list(rates) if rates is not None else [float(r) for r in np.round(np.geomspace(0.01, 1.0, 9), 4)]
    sx = np.linspace(float(x[0]), float(x[1]), int(starts))
    sy = np.linspace(float(y[0]), float(y[1]), int(starts))
    # All descent paths at once: one batch entry per (rate, start y, start x).
    R, SY, SX = np.meshgrid(np.asarray(rates), sy, sx, indexing="ij")
    px, py = SX.ravel().copy(), SY.ravel().copy()
    lr = R.ravel()
    trail_x, trail_y, trail_f = [px.copy()], [py.copy()], []
    span = max(float(x[1]) - float(x[0]), float(y[1]) - float(y[0]))
    for _ in range(int(iterations)):
        fz, gx, gy = _grad2(f, px, py)
        trail_f.append(fz)
        with np.errstate(all="ignore"):
            px = px - lr * gx
            py = py - lr * gy
        far = ~np.isfinite(px) | ~np.isfinite(py) | (np.abs(px) > 50 * span) | (np.abs(py) > 50 * span)
        px[far], py[far] = np.nan, np.nan
        trail_x.append(px.copy())
        trail_y.append(py.copy())
    trail_f.append(_grad2(f, np.nan_to_num(px), np.nan_to_num(py))[0])
    TX, TY, TF = np.stack(trail_x, 1), np.stack(trail_y, 1), np.stack(trail_f, 1)
    paths = [{"x": _clean(TX[i], 5), "y": _clean(TY[i], 5), "f": _clean(np.where(np.isfinite(TX[i]), TF[i], np.nan), 5)}
             for i in range(TX.shape[0])]
    return {"mode": "2d", "name": name, "inputs": input_names(f, 2), "xlim": [float(x[0]), float(x[1])], "ylim": [float(y[0]), float(y[1])],
            "contours": contours, "arrows": {"x": _clean(AX), "y": _clean(AY), "gx": _clean(GX), "gy": _clean(GY)},
            "rates": rates, "sx": _clean(sx), "sy": _clean(sy), "paths": paths,
            "start": [int(starts) // 4, int(starts) - 1 - int(starts) // 4], "rate": len(rates) // 2}


class Explorer:
    """The interactive explorer: a widget in Jupyter, self-contained HTML elsewhere."""

    def __init__(self, data: dict):
        self.data = data

    def __repr__(self):
        return f"<Explorer {self.data['mode']} of {self.data['name']}>"

    def widget(self):
        from ..draw.widget import make_widget

        return make_widget("explore", self.data)

    def to_html(self, standalone: bool = True, fallback_png: str | None = None) -> str:
        from ..draw.html import widget_html

        what = "tangent line of" if self.data["mode"] == "1d" else "contours, gradients and descent paths of"
        return widget_html("explore", self.data, title=f"explore {self.data['name']}", standalone=standalone,
                           alt=f"Interactive plot: {what} {self.data['name']}", fallback_png=fallback_png)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from ..draw.widget import mimebundle

        return mimebundle("explore", self.data, lambda png: self.to_html(False, png), repr(self), exclude)

    def save(self, path) -> str:
        import os

        path = os.fspath(path)
        if not path.lower().endswith((".html", ".htm")):
            raise ValueError("Explorer.save writes .html (a self-contained page)")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_html())
        return path

    def to_json(self) -> str:
        return json.dumps(self.data)


def explore(f, x=None, y=None, points=201, name=None, **kwargs) -> Explorer:
    """An interactive view of ``f`` whose every number comes from the tape.

    One argument: a slider moves a point along f; the tangent line, f(x) and
    f'(x) follow.  Two arguments: contours, gradient arrows, and a
    gradient-descent path with sliders for the learning rate and start point.

    >>> import autodiff_viz as ad
    >>> e = ad.viz.explore(lambda x: x ** 2, x=(-2, 2), points=5)
    >>> e.data["df"]
    [-4.0, -2.0, 0.0, 2.0, 4.0]
    """
    A.function("explore", "f", f)
    points = A.whole("explore", "points", points, low=2, high=MAX_POINTS)
    for key, (low, high) in GRID_LIMITS.items():
        if key in kwargs:
            kwargs[key] = A.whole("explore", key, kwargs[key], low=low, high=high)
    name = name or getattr(f, "__name__", "f")
    if name == "<lambda>":
        name = "f"
    if _arity(f) >= 2:
        return Explorer(explore_2d(f, x=x or (-2.0, 2.0), y=y or (-2.0, 2.0), name=name, **kwargs))
    return Explorer(explore_1d(f, x=x or (-3.0, 3.0), points=points, name=name))
