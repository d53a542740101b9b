"""Animation frames with matplotlib: the storyboard the browser player draws, as pictures, GIF and MP4.

A frame holds a heading, the graph (the storyboard's layout, the one the
player draws), the side panel (the step's title, its rule, the table of
gradients) and a colour key, in a figure sized to that content.  A graph that
would not be readable whole on a slide (node text under ``K_MIN`` points) is
shown through a window that follows the current step, as the player's box
scrolls at 100%, with an overview of the whole graph and where the window is.

Most of a frame repeats from step to step, so frames are composed: each node
in each look it takes, and each line of the side panel, is drawn once by
matplotlib into a small picture (a *sprite*), and a frame is the picture of
what never changes (one per window position) with the sprites laid over it.
:meth:`FrameRenderer.render` does that; :meth:`FrameRenderer.draw` instead sets
every artist of the figure for the step, so the figure itself shows it
(``Animation.frame``).  Both give the same pixels.

Every text is built with :data:`._labels.MPL_TEXT` (shown as typed: a name
such as ``$\\foo$`` is never parsed as mathtext or TeX) from text cleaned by
:mod:`._labels`; colours come from :mod:`.look`.

>>> import autodiff_viz as ad
>>> anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
>>> r = FrameRenderer(anim.data, dpi=40)
>>> r.render(2).shape == (r.height, r.width, 3)
True
>>> [label for _, label in r.key]
['op running (forward)', 'rule running (backward)', 'just received a gradient', 'source', 'target', 'tensor passed to tape.watch', 'not computed yet']
"""
from __future__ import annotations

import math
import os
import subprocess
import textwrap
import unicodedata
from collections import OrderedDict

import numpy as np

from ..text import labels as _labels
from ..model import story as _story
from . import look as _look
from .look import DIM, FADED, GREY, LIGHT_GREY, LOOKS, PALETTE, TINT, colour, player_width, tint

TEXT = _labels.MPL_TEXT
INK = PALETTE["black"]

PAD = 16.0  # layout units around the graph
# Points of text per layout unit (node labels are 15 units).  A graph is shown whole at up to K_MAX when it
# fits FIT_INCHES at K_MIN or more (labels of 11 pt); a larger one is shown at K_MIN through a window of
# VIEW_INCHES (taller when the side panel is), with an overview OVERVIEW_INCHES wide beside it.
K_MAX, K_MIN = 1.05, 0.75
FIT_INCHES = (13.0, 11.0)
VIEW_INCHES = (10.0, 8.5)
OVERVIEW_INCHES = 1.1
MARGIN, GAP = 0.15, 0.3  # inches: around the frame, between its parts
SWATCH, SWATCH_GAP, KEY_GAP = (0.34, 0.2), 0.08, 0.2  # inches: a key entry's box, then its label, then the next
# Text sizes in points, and line pitch as a multiple of the size.
HEAD_PT, TITLE_PT, LINES_PT, PANEL_PT, KEY_PT, COUNTER_PT = 17.0, 15.0, 11.5, 12.0, 11.0, 12.0
TITLE_SPACING, LINES_SPACING, PANEL_SPACING = 1.25, 1.4, 1.45
# The side panel: at most this many title lines, rule lines and table rows (a longer table shows its fresh
# and latest rows); its width fits its longest line, between MIN_SIDE_CHARS and WRAP characters.
MAX_TITLE_LINES, MAX_LINES, MAX_ROWS, MAX_RESULTS, WRAP, MIN_SIDE_CHARS = 3, 14, 24, 6, 58, 36
# A word (a name, usually) longer than WORD_LIMIT characters is shortened before the rule's lines wrap,
# a name in the table to NAME_LIMIT, a row of the table to ROW_LIMIT.
WORD_LIMIT, NAME_LIMIT, ROW_LIMIT = 40, 20, 62
DASHED, PENDING_DASHES = (0, (5, 3)), (0, (3, 3))
SPRITES, BASES = 1500, 6  # pictures kept for reuse (each sprite is a few tens of kB, each base a frame)
MONO = "DejaVu Sans Mono"

def node_look(box: str, role: str | None = None, state: str = "alive", phase: str = "forward") -> tuple:
    """``(face, border, width, style, alpha)`` of a node box, from the look table: what the box is and
    its mark (:func:`.look.node_look`), unless it is the node running now (``state="current"``), just
    received a gradient (``"recv"``) or is not computed yet (``"pending"``).

    >>> node_look("watched", "source") == (tint("watched"), colour("source"), player_width(LOOKS["source"]), "-", 1.0)
    True
    >>> node_look("op", None, "current", "backward")[1] == colour("backward")
    True
    """
    lk, alpha = _look.node_look(box, role), 1.0
    if state in ("current", "recv"):
        lk = LOOKS["received" if state == "recv" else "forward" if phase == "forward" else "backward"]
    style = DASHED if lk.dash else "-"
    if state == "pending":
        style, alpha = PENDING_DASHES, FADED
    return lk.fill, lk.border, player_width(lk), style, alpha


def _swatch(name: str) -> tuple:
    """A colour key's swatch: a box in the look ``name``, or a moment of a step on an op."""
    if name in _look.MOMENTS:
        return node_look("op", None, {"received": "recv", "pending": "pending"}.get(name, "current"), name)
    lk = LOOKS[name]
    return lk.fill, lk.border, player_width(lk), DASHED if lk.dash else "-", 1.0


# The colour key's entries, in order; a frame lists those its animation shows, each with its look's words.
KEY = ("forward", "backward", "received", "source", "target", "variable", "variable_unwatched", "watched",
       "constant", "rule_op", "skipped", "numpy", "pending")

# The side panel's kinds of line: font size, family, weight, colour.
_LINE_STYLE = {
    "title": (TITLE_PT, "sans-serif", "bold", INK),
    "rule": (LINES_PT, MONO, "normal", INK),
    "head": (PANEL_PT, "sans-serif", "bold", INK),
    "row": (PANEL_PT, MONO, "normal", INK),
    "fresh": (PANEL_PT, MONO, "bold", _look.GRADIENT),  # a total that just changed: a gradient's colour
    "note": (PANEL_PT, "sans-serif", "normal", GREY),
    "result": (PANEL_PT, MONO, "bold", INK),
    "counter": (COUNTER_PT, "sans-serif", "normal", GREY),
}
_PITCH = {"title": TITLE_PT * TITLE_SPACING, "rule": LINES_PT * LINES_SPACING}


def _cells(text: str) -> int:
    """Width of ``text`` in monospace cells (East Asian wide characters take two)."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _side_text(st) -> tuple:
    """A step's side panel as text: the rule's lines (wrapped), and the table and results as
    ``(style, text)`` rows."""
    wrapped = []
    for line in st["lines"]:
        for part in _labels.clean(line, newlines=True).split("\n"):
            part = _labels.shorten_words(part, WORD_LIMIT)
            wrapped.extend(textwrap.wrap(part, WRAP, subsequent_indent="   ") or [""])
    if len(wrapped) > MAX_LINES:
        wrapped = wrapped[:MAX_LINES - 1] + ["…"]
    rows = []
    if st["panel"]:
        table = []
        for r in st["panel"]:
            terms = " + ".join(_labels.clean(t) for t in r["terms"]) if len(r["terms"]) > 1 else ""
            name = _labels.for_mpl(r["name"], NAME_LIMIT)
            row = f"{'▸' if r['fresh'] else ' '} {name:<8} {_labels.clean(r['total']):>10}"
            table.append(("fresh" if r["fresh"] else "row",
                          _labels.shorten(row + (f"   = {terms}" if terms else ""), ROW_LIMIT, "end")))
        if len(table) > MAX_ROWS:  # the rows that just changed, and the latest ones
            keep = {k for k, (style, _) in enumerate(table) if style == "fresh"}
            for k in range(len(table) - 1, -1, -1):
                if len(keep) >= MAX_ROWS - 1:
                    break
                keep.add(k)
            shown = [table[k] for k in sorted(keep)][-(MAX_ROWS - 1):]
            table = [("note", f"… {len(table) - len(shown)} more rows not shown")] + shown
        rows.append(("head", "Gradients accumulated so far"))
        rows.extend(table)
    if st["results"]:
        results = [_labels.shorten(_labels.shorten_words(r, WORD_LIMIT), ROW_LIMIT, "end") for r in st["results"]]
        if len(results) > MAX_RESULTS:
            results = results[:MAX_RESULTS - 1] + [f"… and {len(results) - MAX_RESULTS + 1} more"]
        rows.append(("row", ""))
        rows.extend(("result", r) for r in results)
    return wrapped, rows


class FrameRenderer:
    """Draws step ``i`` of a storyboard: :meth:`render` as an RGB array (fast, for movies),
    :meth:`draw` into the figure ``fig``.

    ``width`` and ``height`` are the frame's size in pixels (even, as video needs), ``k`` the
    points of text per layout unit, ``key`` the colour key's entries as ``(look, label)``.
    """

    def __init__(self, data: dict, dpi: int = 100):
        import matplotlib.pyplot as plt

        self.data, self.dpi = data, dpi
        self._cursor = None
        self._sprites: OrderedDict = OrderedDict()
        self._bases: OrderedDict = OrderedDict()
        self._static_region = None
        self._cam_now = None
        self.fig = plt.figure(figsize=(8, 6), dpi=dpi)
        self._renderer = self.fig.canvas.get_renderer()
        px = dpi / 72.0  # pixels per point
        self._px = px
        # -- what every step shows, and so how large the frame must be --------------------------------
        n = len(data["nodes"])
        self._index = {nd["id"]: j for j, nd in enumerate(data["nodes"])}
        sides, focus, pending = [], [], False
        for st in _story.states(data):
            sides.append((_labels.for_mpl(st["title"], _labels.TITLE_LIMIT, "end"), *_side_text(st)))
            focus.append(self._focus(st))
            pending = pending or not all(st["alive"][:n])
        self._steps = len(sides)
        rule_cell, row_cell = self._measure("M" * 10, "rule") / 10.0, self._measure("M" * 10, "row") / 10.0
        rule_cells = max([0] + [_cells(t) for _, lines, _ in sides for t in lines])
        row_cells = max([MIN_SIDE_CHARS] + [_cells(t) for _, _, rows in sides for _, t in rows])
        self.side_w = math.ceil(max(rule_cells * rule_cell, row_cells * row_cell)) + 4
        self._sides = [(self._wrap(title, "title", self.side_w), lines, rows) for title, lines, rows in sides]
        side_h = max(self._side_layout(s)[1] for s in self._sides)
        # -- the graph: its scale, and the window onto it ----------------------------------------------
        L = data["layout"]
        W, H = L["width"] + 2 * PAD, L["height"] + 2 * PAD
        k = min(K_MAX, FIT_INCHES[0] * 72.0 / W, FIT_INCHES[1] * 72.0 / H)
        self.scrolls = k < K_MIN
        self.k = k = max(k, K_MIN)
        self.ppu = ppu = k * px  # pixels per layout unit
        gw, gh = math.ceil(W * ppu), math.ceil(H * ppu)
        self._graph_px = (gw, gh)
        if self.scrolls:
            ww = min(gw, round(VIEW_INCHES[0] * dpi))
            wh = min(gh, max(round(VIEW_INCHES[1] * dpi), side_h))
        else:
            ww, wh = gw, gh
        self.window = (ww, wh)
        m, gap = round(MARGIN * dpi), round(GAP * dpi)
        ov = (0, 0)
        if self.scrolls:  # the overview: a column beside a tall graph, a row under a wide one
            if gh >= gw:
                ov = (round(OVERVIEW_INCHES * dpi), 0)
                ov = (ov[0], round(ov[0] * gh / gw))
                if ov[1] > max(wh, side_h):
                    ov = (max(8, round(max(wh, side_h) * gw / gh)), max(wh, side_h))
            else:
                ov = (0, round(OVERVIEW_INCHES * dpi))
                ov = (min(ww, round(ov[1] * gw / gh)), ov[1])
                ov = (ov[0], max(8, round(ov[0] * gh / gw)))
        beside = self.scrolls and gh >= gw
        graph_col_h = wh + (gap + ov[1] if self.scrolls and not beside else 0)
        body_h = max(graph_col_h, side_h, ov[1] if beside else 0)
        head_h = round(HEAD_PT * 1.7 * px)
        left = m + ww + gap + (ov[0] + gap if beside else 0)
        width = left + self.side_w + m
        self.key = [(_swatch(name), LOOKS[name].says) for name in KEY if self._shows(name, pending)]
        items, key_h = self._key_rows(width - 2 * m)
        height = m + head_h + body_h + (round(0.15 * dpi) + key_h if items else 0) + m
        self.width, self.height = width + width % 2, height + height % 2
        self.fig.set_size_inches(self.width / dpi, self.height / dpi)
        self._renderer = self.fig.canvas.get_renderer()
        self._graph_at = (m, m + head_h)  # the window's top-left corner, in pixels from the frame's top-left
        self._side_at = (left, m + head_h)
        # -- the artists -------------------------------------------------------------------------------
        self.ax = self._axes(m, m + head_h, ww, wh)
        self._build_graph()
        self.overview = None
        if self.scrolls:
            at = (m + ww + gap, m + head_h) if beside else (m, m + head_h + wh + gap)
            self._build_overview(at, ov)
        self.heading = self.fig.text(m / dpi, (self.height - m - head_h * 0.55) / dpi, "", fontsize=HEAD_PT,
                                     fontweight="bold", va="center", color=INK, transform=self.fig.dpi_scale_trans,
                                     **TEXT)
        self.counter = self._line("counter", ha="right")
        counter_w = self._measure(f"step {self._steps} / {self._steps}", "counter") + gap
        self._fit(self.heading, _labels.for_mpl(data["title"], _labels.TITLE_LIMIT, "end"),
                  self.width - 2 * m - counter_w, "end")
        self._build_key(items, (m, self.height - m - key_h))
        self._slots = {"title": [self._line("title") for _ in range(MAX_TITLE_LINES)],
                       "rule": [self._line("rule") for _ in range(MAX_LINES)],
                       "rows": [self._line("row") for _ in range(MAX_ROWS + MAX_RESULTS + 2)]}
        self.panel = self._slots["rows"][0]  # the table's first line (its heading)
        self._rect_array = np.array(self._rects, float).reshape(-1, 4)
        self._cams = self._cameras(focus)
        self._set_camera(self._cams[0])

    # -- sizes ------------------------------------------------------------------------------------------
    def _measure(self, text: str, style: str) -> float:
        """Width of ``text`` in pixels, in one of the side panel's styles (or the key's)."""
        from matplotlib.font_manager import FontProperties

        size, family, weight, _ = _LINE_STYLE.get(style, (KEY_PT, "sans-serif", "normal", INK))
        prop = FontProperties(family=family, size=size, weight=weight)
        return self._renderer.get_text_width_height_descent(text, prop, ismath=False)[0]

    def _wrap(self, text: str, style: str, max_px: float) -> list:
        """``text`` as at most MAX_TITLE_LINES lines, each at most ``max_px`` wide."""
        full = self._measure(text, style)
        if full <= max_px:
            return [text]
        chars = max(8, int(len(text) * max_px / full))
        while True:
            lines = textwrap.wrap(text, chars, break_on_hyphens=False) or [""]
            if chars <= 8 or all(self._measure(t, style) <= max_px for t in lines[:MAX_TITLE_LINES]):
                break
            chars -= max(1, chars // 10)
        if len(lines) > MAX_TITLE_LINES:
            lines = lines[:MAX_TITLE_LINES]
            lines[-1] = _labels.shorten(lines[-1] + " …", len(lines[-1]), "end")
        return lines

    def _key_rows(self, width: int) -> tuple:
        """The colour key flowed into rows ``width`` pixels wide: ``[(x, y, look, label)]`` and its height."""
        dpi = self.dpi
        items, x, y, row_h = [], 0, 0, round(KEY_PT * 1.9 * self._px)
        for look, label in self.key:
            w = round((SWATCH[0] + SWATCH_GAP + KEY_GAP) * dpi) + math.ceil(self._measure(label, "key"))
            if x and x + w > width:
                x, y = 0, y + row_h
            items.append((x, y, look, label))
            x += w
        return items, (y + row_h if items else 0)

    def _pitch(self, style: str) -> int:
        return round(_PITCH.get(style, PANEL_PT * PANEL_SPACING) * self._px)

    def _side_layout(self, side) -> tuple:
        """The side panel's lines as ``(slots, style, text, baseline)``, baselines in pixels from its top,
        and its height in pixels."""
        titles, lines, rows = side
        out, y = [], 0

        def put(group, style, text, gap=0):
            nonlocal y
            y += (self._pitch(style) if out else round(_LINE_STYLE[style][0] * self._px)) + gap
            out.append((group, style, text, y))

        for t in titles:
            put("title", "title", t)
        for n, t in enumerate(lines):
            put("rule", "rule", t, gap=round(0.4 * self._pitch("rule")) if n == 0 else 0)
        for n, (style, t) in enumerate(rows):
            put("rows", style, t, gap=round(0.6 * self._pitch("rule")) if n == 0 else 0)
        return out, y + round(0.35 * PANEL_PT * self._px)

    def _shows(self, name: str, pending: bool) -> bool:
        """Whether the animation shows what key entry ``name`` stands for."""
        steps, nodes = self.data["steps"], self.data["nodes"]
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

    # -- building -----------------------------------------------------------------------------------
    def _axes(self, x: int, y: int, w: int, h: int):
        """Axes at ``(x, y)`` pixels from the frame's top-left corner, ``w`` by ``h`` pixels."""
        W, H = self.width, self.height
        ax = self.fig.add_axes([x / W, (H - y - h) / H, w / W, h / H])
        ax.set_axis_off()
        return ax

    def _line(self, style: str, ha: str = "left"):
        """One line of text placed in pixels (the side panel, the step counter)."""
        t = self.fig.text(0, 0, "", va="baseline", ha=ha, transform=self.fig.dpi_scale_trans, **TEXT)
        self._style_line(t, style)
        return t

    @staticmethod
    def _style_line(t, style: str):
        size, family, weight, ink = _LINE_STYLE[style]
        t.set_fontsize(size)
        t.set_family(family)
        t.set_fontweight(weight)
        t.set_color(ink)

    def _build_graph(self):
        from matplotlib.patches import Circle, FancyBboxPatch, PathPatch, Polygon
        from matplotlib.path import Path

        L, k = self.data["layout"], self.k
        self.edges, self.hot_edges, self._edge_labels, rects = [], [], [], []
        for e in self.data["edges"]:
            p = L["edges"][e["id"]]
            pts = p["points"]
            path = Path(pts, [Path.MOVETO] + [Path.CURVE4] * (len(pts) - 1))
            style = DASHED if e["kind"] in ("skipped", "leave") else "-"
            line = PathPatch(path, facecolor="none", edgecolor=GREY, linewidth=1.4 * k, linestyle=style, zorder=1)
            head = Polygon(p["head"], closed=True, facecolor=GREY, edgecolor="none", zorder=1) if p["head"] else None
            # drawn over the grey edge while the edge carries a value (forward) or a gradient (backward)
            hot = PathPatch(path, facecolor="none", linewidth=4.0 * k, zorder=2.5, visible=False)
            hot_head = Polygon(p["head"], closed=True, edgecolor="none", zorder=2.5, visible=False) if p["head"] else None
            for a in (line, head, hot, hot_head):
                if a is not None:
                    self.ax.add_patch(a)
            label = None
            if e["label"]:
                mid = pts[len(pts) // 2]
                label = self.ax.text(mid[0], mid[1] - 6, _labels.for_mpl(e["label"], 8), fontsize=13 * k,
                                     style="italic", color=GREY, ha="center", va="bottom", zorder=2.6, clip_on=True,
                                     **TEXT)
            xs, ys = [q[0] for q in pts + (p["head"] or [])], [q[1] for q in pts + (p["head"] or [])]
            rects.append(((min(xs) + PAD - 30) * self.ppu, (min(ys) + PAD - 30) * self.ppu,
                          (max(xs) + PAD + 30) * self.ppu, (max(ys) + PAD + 30) * self.ppu))
            self._edge_labels.append(label)
            self.edges.append((line, head))
            self.hot_edges.append((hot, hot_head))
        self._edge_rects = np.array(rects, float).reshape(-1, 4)
        self.nodes, self._rects, self._box_px, self._fitted = [], [], [], {}
        for nd in self.data["nodes"]:
            p = L["nodes"][nd["id"]]
            x0, y0 = p["x"] - p["w"] / 2, p["y"] - p["h"] / 2
            rad = 24 if nd["kind"] == "leaf" else 8
            box = FancyBboxPatch((x0 + rad, y0 + rad), p["w"] - 2 * rad, p["h"] - 2 * rad,
                                 boxstyle=f"round,pad={rad}", linewidth=1.5 * k, zorder=3)
            lab = self.ax.text(p["x"], y0 + 22, "", fontsize=15 * k, fontweight="bold", ha="center", va="baseline",
                               color=INK, zorder=4, clip_on=True, **TEXT)
            val = self.ax.text(p["x"], y0 + 45, "", fontsize=14 * k, ha="center", va="baseline", color=INK,
                               zorder=4, clip_on=True, **TEXT)
            grad = self.ax.text(p["x"], y0 + 67, "", fontsize=14 * k, ha="center", va="baseline", fontweight="bold",
                                color=_look.GRADIENT, zorder=4, clip_on=True, **TEXT)
            badge = Circle((x0 + p["w"] - 4, y0 + 4), 13, facecolor=colour("backward"), edgecolor="white",
                           linewidth=1.5 * k, zorder=5)
            bt = self.ax.text(x0 + p["w"] - 4, y0 + 4, "", fontsize=13 * k, fontweight="bold", color="white",
                              ha="center", va="center", zorder=6, clip_on=True, **TEXT)
            self.ax.add_patch(box)
            self.ax.add_patch(badge)
            # the name fits inside its box (less the rounded corners), shortened in the middle if need be
            self._fit(lab, _labels.for_mpl(nd["label"]), (p["w"] - 16) * self.ppu, "middle", p["w"] / 15.0)
            self.nodes.append((nd, box, lab, val, grad, badge, bt))
            self._box_px.append((p["w"] - 10) * self.ppu)
            # the node's pixels in the whole graph (badge and borders included)
            self._rects.append(((x0 + PAD - 8) * self.ppu, (y0 + PAD - 18) * self.ppu,
                                (x0 + p["w"] + PAD + 18) * self.ppu, (y0 + p["h"] + PAD + 8) * self.ppu))

    def _build_overview(self, at, size):
        from matplotlib.collections import LineCollection, PatchCollection
        from matplotlib.patches import Rectangle

        L = self.data["layout"]
        ax = self._axes(*at, *size)
        ax.set_xlim(-PAD, L["width"] + PAD)
        ax.set_ylim(L["height"] + PAD, -PAD)
        ax.add_patch(Rectangle((-PAD, -PAD), L["width"] + 2 * PAD, L["height"] + 2 * PAD, facecolor="none",
                               edgecolor=DIM, linewidth=0.8, clip_on=False))
        ax.add_collection(LineCollection([L["edges"][e["id"]]["points"] for e in self.data["edges"]], colors=DIM,
                                         linewidths=0.6))
        boxes = [Rectangle((p["x"] - p["w"] / 2, p["y"] - p["h"] / 2), p["w"], p["h"])
                 for p in (L["nodes"][nd["id"]] for nd in self.data["nodes"])]
        self.overview = PatchCollection(boxes, linewidths=0.5, edgecolors=GREY, zorder=2)
        ax.add_collection(self.overview)
        self.viewport = Rectangle((0, 0), 1, 1, facecolor="none", edgecolor=INK, linewidth=1.5, zorder=3,
                                  clip_on=False)
        ax.add_patch(self.viewport)

    def _build_key(self, items, at):
        from matplotlib.patches import FancyBboxPatch

        dpi, tr = self.dpi, self.fig.dpi_scale_trans
        sw_w, sw_h = round(SWATCH[0] * dpi), round(SWATCH[1] * dpi)
        row_h = round(KEY_PT * 1.9 * self._px)
        x0, top = at
        for x, y, (face, edge, width, style, alpha), label in items:
            cy = self.height - (top + y + row_h / 2)  # from the bottom, in pixels
            r = 0.04 * dpi
            sw = FancyBboxPatch(((x0 + x + r) / dpi, (cy - sw_h / 2 + r) / dpi), (sw_w - 2 * r) / dpi,
                                (sw_h - 2 * r) / dpi, boxstyle=f"round,pad={r / dpi}", facecolor=face, edgecolor=edge,
                                linewidth=min(width, 3.5) * 0.8, linestyle=style, alpha=alpha, transform=tr)
            self.fig.add_artist(sw)
            self.fig.text((x0 + x + sw_w + SWATCH_GAP * dpi) / dpi, cy / dpi, label, fontsize=KEY_PT, va="center",
                          family="sans-serif", color=INK, transform=tr, **TEXT)

    def _fit(self, artist, text: str, max_px: float, where: str, sure_chars: float = 0.0):
        """Set ``text``, shortened (at ``where``) until it is at most ``max_px`` wide.

        Text of at most ``sure_chars`` characters is taken to fit unmeasured.
        """
        artist.set_text(text)
        if len(text) <= sure_chars or artist.get_window_extent(self._renderer).width <= max_px:
            return
        lo, hi = 1, len(text) - 1  # the longest cut that fits lies in [lo, hi]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            artist.set_text(_labels.shorten(text, mid, where))
            if artist.get_window_extent(self._renderer).width <= max_px:
                lo = mid
            else:
                hi = mid - 1
        artist.set_text(_labels.shorten(text, lo, where))

    # -- the window onto a large graph ----------------------------------------------------------------
    def _focus(self, st) -> set:
        """Ids of the nodes a step is about: the current node, those receiving, the ends of active edges."""
        ids = set(st["recv"])
        if st["node"]:
            ids.add(st["node"])
        for j in st["edges"]:
            ids.update((self.data["edges"][j]["from"], self.data["edges"][j]["to"]))
        return {(i, i == st["node"]) for i in ids if i in self._index}

    def _cameras(self, focus) -> list:
        """The window's top-left corner (whole pixels of the graph) at each step.

        The window moves only when what a step is about (or at least its current node) leaves it, and
        then to show as many of the following steps as it can, so it moves seldom and never mid-step.
        """
        (gw, gh), (ww, wh) = self._graph_px, self.window
        if not self.scrolls:
            return [(0, 0)] * len(focus)
        m = min(24 * self.ppu, ww / 10, wh / 10)

        def box(ids):
            rects = [self._rects[self._index[i]] for i, _ in ids]
            u = (min(r[0] for r in rects), min(r[1] for r in rects), max(r[2] for r in rects),
                 max(r[3] for r in rects))
            if u[2] - u[0] + 2 * m > ww or u[3] - u[1] + 2 * m > wh:  # too large: just the current node
                u = next((self._rects[self._index[i]] for i, cur in ids if cur), u)
            return u

        def fits(u):
            return u[2] - u[0] + 2 * m <= ww and u[3] - u[1] + 2 * m <= wh

        def shows(cam, u):
            return (u[0] >= cam[0] + m and u[2] <= cam[0] + ww - m and u[1] >= cam[1] + m
                    and u[3] <= cam[1] + wh - m)

        cams, cam = [], None
        for i, ids in enumerate(focus):
            if ids:
                u = box(ids)
                if cam is None or not shows(cam, u):
                    for later in focus[i + 1:]:  # take in the following steps while they fit
                        if later:
                            v = box(later)
                            v = (min(u[0], v[0]), min(u[1], v[1]), max(u[2], v[2]), max(u[3], v[3]))
                            if not fits(v):
                                break
                            u = v
                    cam = (int(max(0, min(gw - ww, round((u[0] + u[2] - ww) / 2)))),
                           int(max(0, min(gh - wh, round((u[1] + u[3] - wh) / 2)))))
            cams.append(cam)
        first = next((c for c in cams if c is not None), (0, 0))
        return [c if c is not None else first for c in cams]

    def _set_camera(self, cam):
        if cam == self._cam_now:
            return
        self._cam_now = cam
        (ww, wh), ppu = self.window, self.ppu
        self.ax.set_xlim(cam[0] / ppu - PAD, (cam[0] + ww) / ppu - PAD)
        self.ax.set_ylim((cam[1] + wh) / ppu - PAD, cam[1] / ppu - PAD)
        if self.overview is not None:
            self.viewport.set_bounds(cam[0] / ppu - PAD, cam[1] / ppu - PAD, ww / ppu, wh / ppu)

    # -- one step ----------------------------------------------------------------------------------
    def _step(self, i: int) -> int:
        """``i`` as a step number (negative counts from the end, as for a list)."""
        if not -self._steps <= i < self._steps:
            raise IndexError(f"step {i} of {self._steps}")
        return i % self._steps

    def _state(self, i: int) -> dict:
        """Step ``i`` in full; frames are drawn in order, so each costs one step's changes."""
        if self._cursor is None or self._cursor[0] > i:
            self._cursor = (-1, None, _story.states(self.data))
        k, st, it = self._cursor
        while k < i:
            st, k = next(it), k + 1
        self._cursor = (k, st, it)
        return st

    def _looks(self, st, which=None) -> list:
        """The look of every node (or those in ``which``) at this step: box style and the texts it shows."""
        phase, recv = st["phase"], set(st["recv"])
        out = []
        for j in range(len(self.nodes)) if which is None else which:
            nd = self.nodes[j][0]
            state = ("current" if st["node"] == nd["id"] else "recv" if nd["id"] in recv
                     else "alive" if st["alive"][j] else "pending")
            val = "= " + _labels.for_mpl(st["vals"][j]) if st["vals"][j] else ""
            grad = "∂ " + _labels.for_mpl(st["grads"][j]) if st["grads"][j] else ""
            out.append((node_look(nd["box"], nd["role"], state, phase), val, grad, _labels.for_mpl(st["order"][j], 8)))
        return out

    def _apply_node(self, j: int, look):
        (face, edge, width, style, alpha), val_text, grad_text, order = look
        _, box, lab, val, grad, badge, bt = self.nodes[j]
        box.set_facecolor(face)
        box.set_edgecolor(edge)
        box.set_linewidth(width * self.k)
        box.set_linestyle(style)
        box.set_alpha(alpha)
        for t in (lab, val, grad):
            t.set_alpha(alpha)
            t.set_visible(True)
        box.set_visible(True)
        width = self._box_px[j]
        self._fit_value(val, val_text, 14 * self.k, width)
        self._fit_value(grad, grad_text, 14 * self.k, width)
        bt.set_text(order)
        badge.set_visible(bool(order))
        bt.set_visible(bool(order))

    def _fit_value(self, t, text: str, size: float, max_px: float):
        """Set a node's value or gradient: smaller (down to 80%) when wider than its box, then shortened."""
        key = (text, size, t.get_fontweight(), max_px)
        fitted = self._fitted.get(key)
        if fitted is None:
            prop = t.get_fontproperties().copy()
            prop.set_size(size)

            def width(s):
                return self._renderer.get_text_width_height_descent(s, prop, ismath=False)[0]

            w = width(text) if len(text) * size * 0.8 * self._px > max_px else 0.0  # else surely narrow enough
            fitted = (text, size)
            if w > max_px:
                small = max(0.8 * size, size * max_px / w)
                prop.set_size(small)
                cut = len(text)
                while cut > 4 and width(_labels.shorten(text, cut, "end")) > max_px:
                    cut -= 1
                fitted = (_labels.shorten(text, cut, "end"), small)
            self._fitted[key] = fitted
        t.set_text(fitted[0])
        t.set_fontsize(fitted[1])

    def _plan(self, i: int) -> list:
        """The side panel and step counter at step ``i``: ``(slot, style, text, x, y)`` with ``(x, y)``
        the text's anchor in pixels from the frame's top-left corner."""
        x, top = self._side_at
        used = {group: 0 for group in self._slots}
        out = []
        for group, style, text, y in self._side_layout(self._sides[i])[0]:
            slot = self._slots[group][used[group]]
            used[group] += 1
            if text:
                out.append((slot, style, text, x, top + y))
        m = round(MARGIN * self.dpi)
        out.append((self.counter, "counter", f"step {i + 1} / {self._steps}", self.width - m,
                    m + round((HEAD_PT * 1.7 * 0.55 + COUNTER_PT * 0.35) * self._px)))
        return out

    def _place(self, slot, style, text, x, y):
        self._style_line(slot, style)
        slot.set_text(text)
        slot.set_position((x / self.dpi, (self.height - y) / self.dpi))
        slot.set_visible(True)

    def _hot(self, st) -> tuple:
        """The colour and line style of this step's active edges."""
        if st["phase"] == "forward":
            return colour("forward"), "-"
        return colour("backward"), (0, (4, 2))

    def draw(self, i: int):
        """Set every artist of the figure for step ``i``; returns the figure (``fig.savefig`` saves it)."""
        i = self._step(i)
        st = self._state(i)
        self._set_camera(self._cams[i])
        for j, look in enumerate(self._looks(st)):
            self._apply_node(j, look)
        self._draw_edges(st, show_only=False)
        for group in self._slots.values():
            for s in group:
                s.set_visible(False)
        for slot, style, text, x, y in self._plan(i):
            self._place(slot, style, text, x, y)
        self._colour_overview(st)
        return self.fig

    def _draw_edges(self, st, show_only: bool):
        """Show this step's active edges in the hot colour (and draw them now, with ``show_only``)."""
        hot, style = self._hot(st)
        active = set(st["edges"])
        for j, (line, head) in enumerate(self.hot_edges):
            on = j in active
            if show_only and not on:
                continue
            line.set_visible(on)
            line.set_edgecolor(hot)
            line.set_linestyle(style)
            if head is not None:
                head.set_visible(on)
                head.set_facecolor(hot)
            if show_only:
                for a in (line, head, self._edge_labels[j]):  # the edge's letter stays on top
                    if a is not None:
                        self.ax.draw_artist(a)

    def _colour_overview(self, st, draw_now: bool = False):
        if self.overview is None:
            return
        hot = self._hot(st)[0]
        recv = set(st["recv"])
        faces = [hot if nd["id"] == st["node"] else colour("received") if nd["id"] in recv
                 else DIM if st["alive"][j] else "white" for j, (nd, *_r) in enumerate(self.nodes)]
        self.overview.set_facecolors(faces)
        for a in (self.overview, self.viewport):
            a.set_visible(True)
            if draw_now:
                a.axes.draw_artist(a)

    # -- fast frames: a background per window position, sprites laid over it -------------------------
    def _agg(self):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        if not isinstance(self.fig.canvas, FigureCanvasAgg):
            FigureCanvasAgg(self.fig)
        return self.fig.canvas

    def _dynamic(self):
        """Every artist that changes from step to step (left out of the backgrounds)."""
        for _, box, lab, val, grad, badge, bt in self.nodes:
            yield from (box, lab, val, grad, badge, bt)
        for line, head in self.hot_edges:
            yield line
            if head is not None:
                yield head
        for group in self._slots.values():
            yield from group
        yield self.counter
        if self.overview is not None:
            yield from (self.overview, self.viewport)

    def _static(self):
        """The frame without the graph's window and anything that changes (drawn once)."""
        if self._static_region is None:
            canvas = self._agg()
            for a in self._dynamic():
                a.set_visible(False)
            self.ax.set_visible(False)
            canvas.draw()
            self.ax.set_visible(True)
            self._renderer = canvas.get_renderer()
            self._static_region = canvas.copy_from_bbox(self.fig.bbox)
        return self._static_region

    def _base(self, cam):
        """The frame without anything that changes, with the window at ``cam`` (kept for reuse)."""
        if cam in self._bases:
            self._bases.move_to_end(cam)
            return self._bases[cam]
        canvas = self._agg()
        canvas.restore_region(self._static())
        for a in self._dynamic():
            a.set_visible(False)
        self._set_camera(cam)
        (ww, wh), r = self.window, self._edge_rects
        outside = ((r[:, 2] < cam[0]) | (r[:, 0] > cam[0] + ww) | (r[:, 3] < cam[1]) | (r[:, 1] > cam[1] + wh)).tolist()
        hidden = [a for out, (line, head), label in zip(outside, self.edges, self._edge_labels) if out
                  for a in (line, head, label) if a is not None]
        for a in hidden:  # what the window does not show costs nothing
            a.set_visible(False)
        self.ax.draw(self._renderer)
        for a in hidden:
            a.set_visible(True)
        region = canvas.copy_from_bbox(self.fig.bbox)
        self._bases[cam] = region
        if len(self._bases) > BASES:
            self._bases.popitem(last=False)
        return region

    def _keep(self, key, sprite):
        self._sprites[key] = sprite
        if len(self._sprites) > SPRITES:
            self._sprites.popitem(last=False)

    @staticmethod
    def _cut(buf, r0, r1, c0, c1):
        """What was drawn (on a cleared canvas) inside rows ``r0:r1``, columns ``c0:c1``, cropped to its
        pixels: ``(rgba, col, row)``; the region is cleared again."""
        H, W = buf.shape[:2]
        r0, r1, c0, c1 = max(0, r0), min(H, r1), max(0, c0), min(W, c1)
        region = buf[r0:r1, c0:c1]
        alpha = region[:, :, 3]
        rows, cols = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
        if not rows.size:
            return np.zeros((0, 0, 4), np.uint8), c0, r0
        rgba = region[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].copy()
        region[...] = (255, 255, 255, 0)
        return rgba, c0 + int(cols[0]), r0 + int(rows[0])

    def _layers(self, j: int, look) -> list:
        """Node ``j``'s pictures in drawing order: ``(key, artists, alpha to lay it with)``: its box, its
        texts (drawn opaque once, faded when laid), its badge."""
        (face, edge, width, style, alpha), val, grad, order = look
        nd, box, lab, val_t, grad_t, badge, bt = self.nodes[j]
        out = [(("box", j, face, edge, width, style, alpha), [box], 1.0), (("lab", j), [lab], alpha)]
        if val:
            out.append((("val", j, val), [val_t], alpha))
        if grad:
            out.append((("grad", j, grad), [grad_t], alpha))
        if order:
            out.append((("badge", j, order), [badge, bt], 1.0))
        return out

    def _make_sprites(self, cam, looks, visible, plan, buf):
        """Draw, once each, the node pictures and text lines this frame needs that are not drawn yet."""
        renderer, (gx, gy), (ww, wh) = self._renderer, self._graph_at, self.window
        missing = {}
        for j in visible:
            for layer in self._layers(j, looks[j]):
                if layer[0] not in self._sprites:
                    missing.setdefault(j, []).append(layer)
        lines = [p for p in plan if ("t", p[1], p[2]) not in self._sprites]
        if not missing and not lines:
            return
        renderer.clear()
        for j, layers in missing.items():
            x0, y0, x1, y1 = self._rects[j]
            at = cam
            if not (x0 >= cam[0] and x1 <= cam[0] + ww and y0 >= cam[1] and y1 <= cam[1] + wh):
                at = (round((x0 + x1 - ww) / 2), round((y0 + y1 - wh) / 2))  # the node whole, mid-window
            self._set_camera(at)
            self._apply_node(j, looks[j])
            # where the node lies on the canvas, with room for a value wider than its box
            rows = (gy + math.floor(y0) - at[1], gy + math.ceil(y1) - at[1])
            cols = (gx + math.floor(2 * x0 - x1) - at[0], gx + math.ceil(2 * x1 - x0) - at[0])
            for key, artists, _ in layers:
                if key[0] in ("lab", "val", "grad"):
                    artists[0].set_alpha(1.0)
                for a in artists:
                    a.draw(renderer)
                rgba, c, r = self._cut(buf, *rows, *cols)
                self._keep(key, (rgba, c - gx + at[0], r - gy + at[1]))
        for slot, style, text, x, y in lines:
            self._place(slot, style, text, x, y)
            slot.draw(renderer)
            size = _LINE_STYLE[style][0] * self._px
            cols = (0, x + 4) if slot.get_horizontalalignment() == "right" else (x - 4, self.width)
            rgba, c, r = self._cut(buf, y - math.ceil(1.4 * size), y + math.ceil(0.6 * size), *cols)
            self._keep(("t", style, text), (rgba, c - x, r - y))

    def render(self, i: int) -> np.ndarray:
        """Step ``i`` as an RGB array, ``height`` by ``width`` pixels (the same pixels as :meth:`draw` and
        ``fig.savefig``; frames in order cost least)."""
        i = self._step(i)
        st = self._state(i)
        canvas = self._agg()
        cam = self._cams[i]
        (ww, wh), (gx, gy) = self.window, self._graph_at
        r = self._rect_array
        visible = np.flatnonzero((r[:, 2] > cam[0]) & (r[:, 0] < cam[0] + ww) & (r[:, 3] > cam[1])
                                 & (r[:, 1] < cam[1] + wh)).tolist()
        looks = dict(zip(visible, self._looks(st, visible)))
        plan = self._plan(i)
        base = self._base(cam)
        buf = np.asarray(canvas.buffer_rgba())
        self._make_sprites(cam, looks, visible, plan, buf)
        self._set_camera(cam)
        canvas.restore_region(base)
        self._draw_edges(st, show_only=True)
        self._colour_overview(st, draw_now=True)
        out = np.array(buf[:, :, :3])
        clip = (gx, gy, gx + ww, gy + wh)
        for j in visible:
            for key, _, alpha in self._layers(j, looks[j]):
                rgba, c, r = self._sprites[key]
                _over(out, rgba, c - cam[0] + gx, r - cam[1] + gy, clip, alpha)
        frame = (0, 0, self.width, self.height)
        for _slot, style, text, x, y in plan:
            rgba, c, r = self._sprites[("t", style, text)]
            _over(out, rgba, c + x, r + y, frame)
        return out


def _over(out: np.ndarray, rgba: np.ndarray, col: int, row: int, clip, alpha: float = 1.0):
    """Lay the picture ``rgba`` over ``out`` with its top-left corner at ``(col, row)``, inside ``clip``,
    its opacity times ``alpha``."""
    h, w = rgba.shape[:2]
    c0, r0 = max(col, clip[0]), max(row, clip[1])
    c1, r1 = min(col + w, clip[2]), min(row + h, clip[3])
    if c0 >= c1 or r0 >= r1:
        return
    src = rgba[r0 - row:r1 - row, c0 - col:c1 - col]
    a = src[:, :, 3:4].astype(np.uint16)
    if alpha != 1.0:
        a = (a * alpha + 0.5).astype(np.uint16)
    dst = out[r0:r1, c0:c1]
    dst[...] = (src[:, :, :3] * a + dst * (255 - a) + 127) // 255


def _ffmpeg_path():
    import shutil

    import matplotlib

    try:
        import imageio_ffmpeg

        exe = imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # noqa: BLE001  (not installed, or its binary missing)
        exe = shutil.which("ffmpeg")
    if exe:
        matplotlib.rcParams["animation.ffmpeg_path"] = exe
    return exe


def _gif_palette(frames):
    """One palette for every frame, so colours do not flicker: white and the style's colours exactly,
    the rest (antialiased edges, faded boxes) by median cut over a few frames."""
    from matplotlib.colors import to_rgb
    from PIL import Image

    exact = ["white", INK, GREY, DIM, LIGHT_GREY, *PALETTE.values(), *TINT.values()]
    exact = list(dict.fromkeys(tuple(round(255 * c) for c in to_rgb(x)) for x in exact))
    sample = np.concatenate([f[::2, ::2] for f in frames], axis=0)
    rest = Image.fromarray(sample).quantize(256 - len(exact), method=Image.Quantize.MEDIANCUT,
                                            dither=Image.Dither.NONE)
    found = np.array(rest.getpalette()[:3 * (256 - len(exact))]).reshape(-1, 3)
    # Pillow matches colours in small cubes: a near twin of white would take white's pixels.
    near = (np.abs(found[:, None, :] - np.array(exact)[None, :, :]).max(axis=2) < 12).any(axis=1)
    colours = [c for rgb in exact for c in rgb] + found[~near].ravel().tolist()
    palette = Image.new("P", (1, 1))
    palette.putpalette(colours + [0] * (768 - len(colours)))
    return palette


def save_movie(data: dict, path: str, fps: float = 1.0, dpi: int = 100) -> str:
    """One frame per step: ``.gif`` with Pillow, ``.mp4`` with ffmpeg (imageio-ffmpeg ships one).

    >>> import autodiff_viz as ad, tempfile, os
    >>> from PIL import Image
    >>> anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
    >>> path = save_movie(anim.data, os.path.join(tempfile.mkdtemp(), "a.gif"), dpi=40)
    >>> Image.open(path).n_frames == len(anim)
    True
    """
    import matplotlib.pyplot as plt
    from PIL import Image

    ext = os.path.splitext(path)[1].lower()
    exe = None
    if ext == ".mp4":
        exe = _ffmpeg_path()
        if not exe:
            raise RuntimeError("saving .mp4 needs ffmpeg: pip install imageio-ffmpeg (it ships one), or install "
                               "ffmpeg with your system's package manager; .gif and .html need neither")
    r = FrameRenderer(data, dpi=dpi)
    n = len(data["steps"])
    try:
        if ext == ".mp4":
            cmd = [exe, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
                   "-s", f"{r.width}x{r.height}", "-r", f"{fps:g}", "-i", "-", "-c:v", "libx264",
                   "-preset", "veryfast", "-tune", "stillimage", "-pix_fmt", "yuv420p", path]
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                for i in range(n):
                    proc.stdin.write(r.render(i).tobytes())
            except BrokenPipeError:
                pass
            finally:
                _, err = proc.communicate()
            if proc.returncode:
                raise RuntimeError(f"ffmpeg failed writing {path}: {err.decode(errors='replace').strip()[-500:]}")
        else:
            palette = _gif_palette([r.render(i) for i in sorted({0, n // 2, n - 1})])
            frames = [Image.fromarray(r.render(i)).quantize(palette=palette, dither=Image.Dither.NONE)
                      for i in range(n)]
            frames[0].save(path, save_all=True, append_images=frames[1:], duration=round(1000.0 / fps), loop=0)
    finally:
        plt.close(r.fig)
    return path
