"""How an animation's frames show the look table: each node box's look at a step, and the colour key.

A box's look is its role's (:func:`.look.node_look`: what it is, with a
source's or the target's border) unless the step is about it: the node
running now (forward or backward), one that just received a gradient, one
not computed yet.  The key lists the looks a storyboard shows, in the words
of the table, and flows them into rows under the frame.

>>> import autodiff_viz as ad
>>> entries(ad.viz.animate(lambda x: x * x, 3.0).data, pending=False)[3:]
[('source', 'source'), ('target', 'target'), ('watched', 'tensor passed to tape.watch')]
"""
from __future__ import annotations

import math

from ..text import labels as _labels
from . import look as _look
from . import panel as P
from .look import FADED, INK, LOOKS, player_width

DASHED, PENDING_DASHES = (0, (5, 3)), (0, (3, 3))  # matplotlib's dashes, in units of the line's width
SWATCH, SWATCH_GAP, KEY_GAP = (0.34, 0.2), 0.08, 0.2  # inches: a key entry's box, then its label, then the next
# The key's entries, in order (keys of the look table); a frame lists those its animation shows.
KEY = ("forward", "backward", "received", "source", "target", "nonfinite", "variable", "variable_unwatched",
       "watched", "constant", "rule_op", "skipped", "numpy", "pending")


def node_look(box: str, role: str | None = None, state: str = "alive", phase: str = "forward") -> tuple:
    """``(face, border, width, style, alpha)`` of a node box: what it is and its mark, unless it is the
    node running now (``state="current"``), just received a gradient (``"recv"``) or is not computed
    yet (``"pending"``).

    >>> node_look("watched", "source") == (LOOKS["watched"].fill, LOOKS["source"].border, 2.77, "-", 1.0)
    True
    >>> node_look("op", None, "current", "backward")[1] == LOOKS["backward"].border
    True
    """
    lk, alpha = _look.node_look(box, role), 1.0
    if state == "current":
        lk = LOOKS["forward" if phase == "forward" else "backward"]
    elif state == "recv":  # a border over the box's own fill
        recv = LOOKS["received"]
        lk = lk._replace(border=recv.border, width=recv.width, dash=recv.dash)
    style = DASHED if lk.dash else "-"
    if state == "pending":
        style, alpha = PENDING_DASHES, FADED
    return lk.fill, lk.border, player_width(lk), style, alpha


def swatch(name: str) -> tuple:
    """A key entry's box: in the look ``name``, or a moment of a step shown on an op."""
    if name in _look.MOMENTS:
        return node_look("op", None, {"received": "recv", "pending": "pending"}.get(name, "current"), name)
    lk = LOOKS[name]
    return lk.fill, lk.border, player_width(lk), DASHED if lk.dash else "-", 1.0


def shows(data: dict, name: str, pending: bool) -> bool:
    """Whether the storyboard ``data`` shows what key entry ``name`` stands for (``pending``: some node
    is not computed at some step)."""
    steps, nodes = data["steps"], data["nodes"]
    if name == "forward":
        return any(s["phase"] == "forward" and s["node"] for s in steps)
    if name == "backward":
        return any(s["phase"] in ("backward", "update") and s["node"] for s in steps)
    if name == "received":
        return any(s["recv"] for s in steps)
    if name == "pending":
        return pending
    if name in _look.MARKS:
        return any(nd["role"] == name for nd in nodes)
    return any(nd["box"] == name for nd in nodes)


def entries(data: dict, pending: bool) -> list:
    """``(look name, words)`` of the key entries a storyboard shows, in key order."""
    primal = {nd.get("primal", False) for nd in data["nodes"] if nd["box"] == "watched"}
    says = {"watched": "primal of a ForwardAccumulator"} if primal == {True} else {}  # forward mode's green boxes
    return [(name, says.get(name, LOOKS[name].says)) for name in KEY if shows(data, name, pending)]


def flow(key: list, width: int, dpi: float, measure) -> tuple:
    """The key ``[(swatch, label)]`` flowed into rows ``width`` pixels wide: ``[(x, y, swatch, label)]``
    and its height; ``measure(label)`` is a label's width in pixels."""
    items, x, y, row_h = [], 0, 0, row_height(dpi)
    for look, label in key:
        w = round((SWATCH[0] + SWATCH_GAP + KEY_GAP) * dpi) + math.ceil(measure(label))
        if x and x + w > width:
            x, y = 0, y + row_h
        items.append((x, y, look, label))
        x += w
    return items, (y + row_h if items else 0)


def row_height(dpi: float) -> int:
    return round(P.KEY_PT * 1.9 * dpi / 72.0)


def draw(fig, items: list, at: tuple, height: int, dpi: float):
    """Add the flowed key to ``fig`` (``height`` pixels tall) with its top-left corner at ``at``."""
    from matplotlib.patches import FancyBboxPatch

    tr = fig.dpi_scale_trans
    sw_w, sw_h = round(SWATCH[0] * dpi), round(SWATCH[1] * dpi)
    row_h = row_height(dpi)
    x0, top = at
    for x, y, (face, edge, width, style, alpha), label in items:
        cy = height - (top + y + row_h / 2)  # from the bottom, in pixels
        r = 0.04 * dpi
        sw = FancyBboxPatch(((x0 + x + r) / dpi, (cy - sw_h / 2 + r) / dpi), (sw_w - 2 * r) / dpi,
                            (sw_h - 2 * r) / dpi, boxstyle=f"round,pad={r / dpi}", facecolor=face, edgecolor=edge,
                            linewidth=min(width, 3.5) * 0.8, linestyle=style, alpha=alpha, transform=tr)
        fig.add_artist(sw)
        fig.text((x0 + x + sw_w + SWATCH_GAP * dpi) / dpi, cy / dpi, label, fontsize=P.KEY_PT, va="center",
                 family="sans-serif", color=INK, transform=tr, **_labels.MPL_TEXT)
