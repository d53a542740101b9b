"""Gradient size as visual weight: each arrow on the gradient path drawn as wide as the gradient it
carries, on a log scale, so a gradient that vanishes (or explodes) along a chain is seen at a glance.

The size of a gradient is its largest magnitude (``max |∂|`` over its values, from the summary the
trace keeps).  Widths run from :data:`THIN` (the smallest size in the picture) to :data:`THICK`
(the largest) in proportion to ``log10(size)``, over at least :data:`AUTO_DECADES` powers of ten (sizes
closer than that get widths as close); a gradient of exactly 0 gets the thinnest line.

>>> from autodiff_viz.events import summarize
>>> import numpy as np
>>> sizes = [gradient_size(summarize(np.array(v))) for v in (1.0, [-0.01, 0.002], 1e-4)]
>>> sizes
[1.0, 0.01, 0.0001]
>>> [round(w, 2) for w in widths(sizes)]
[6.0, 3.5, 1.0]
"""
from __future__ import annotations

import math

from ..text.numbers import fmt_number

THIN, THICK = 1.0, 6.0  # points: the narrowest and widest arrow
AUTO_DECADES = 2.0      # ``gradient_size=None`` turns weights on when sizes span this many powers of ten


def gradient_size(s) -> float | None:
    """``max |∂|`` of a gradient's summary; ``None`` when unknown or not finite."""
    if s is None or s.size == 0 or s.min is None or s.max is None:
        return None
    size = max(abs(float(s.min)), abs(float(s.max)))
    return size if math.isfinite(size) else None


def widths(sizes: list) -> list:
    """One width per size (``None`` stays ``None``), log-scaled between :data:`THIN` and :data:`THICK`."""
    logs = [math.log10(v) for v in sizes if v]
    if not logs:
        return [None if v is None else THIN for v in sizes]
    lo, hi = min(logs), max(logs)
    # the scale spans at least AUTO_DECADES powers of ten, centred on the sizes: gradients within a few
    # percent of each other get about one width (stretched to THIN..THICK, 0.22 and 0.23 looked 6× apart)
    span = max(hi - lo, AUTO_DECADES)
    lo = (lo + hi - span) / 2
    return [None if v is None else THIN if v == 0 else THIN + (THICK - THIN) * (math.log10(v) - lo) / span
            for v in sizes]


def helps(sizes: list) -> bool:
    """Whether weights say something digits hide: the nonzero sizes span :data:`AUTO_DECADES` powers of ten."""
    logs = [math.log10(v) for v in sizes if v]
    return len(logs) > 1 and max(logs) - min(logs) >= AUTO_DECADES


def edge_weights(edges, on) -> list:
    """Per edge of a view model: its width by gradient size (``None``: drawn as usual), for the arrows
    on the gradient path; ``on=None`` weighs them where :func:`helps`, ``False`` never."""
    sizes = [gradient_size(e.grad) if e.on_path and e.kind == "data" else None for e in edges]
    if on is False or (on is None and not helps(sizes)) or all(v is None for v in sizes):
        return [None] * len(sizes)
    return widths(sizes)


def weigh_story(story: dict, model, on) -> None:
    """Give each storyboard edge on the gradient path its width (``"weight"``) when weights are on."""
    for edge, w in zip(story["edges"], edge_weights(model.edges, on)):
        if w is not None:
            edge["weight"] = round(w, 2)


def legend_text(sizes: list, digits: int) -> str:
    """The legend's sentence, with the picture's own extremes."""
    shown = [v for v in sizes if v is not None]
    return (f"arrow width: the size of its gradient (max |∂|), log scale: widest {fmt_number(max(shown), digits)}, "
            f"narrowest {fmt_number(min(shown), digits)}")
