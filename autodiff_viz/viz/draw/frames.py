"""Animation frames with matplotlib: the storyboard the browser player draws, as pictures, GIF and MP4.

A frame holds a heading, the graph (the storyboard's layout, the one the
player draws), the side panel (the step's title, its rule, the table of
gradients) and a colour key, in a figure sized to that content.  A graph that
would not be readable whole on a slide (node text under ``K_MIN`` points) is
shown through a window that follows the current step, as the player's box
scrolls at 100%, with an overview of the whole graph and where the window is.

:meth:`FrameRenderer.draw` sets every artist of the figure for a step, so the
figure itself shows it (``Animation.frame``); :meth:`FrameRenderer.render`
composes the same pixels from sprites (:mod:`.sprites`), fast, for the movie
writers (:mod:`.movie`).  The window's places come from :mod:`.camera`, the
side panel's lines from :mod:`.panel`, every box's look from :mod:`.look`.

Every text is built with :data:`..text.labels.MPL_TEXT` (shown as typed: a
name such as ``$\\foo$`` is never parsed as mathtext or TeX) from text cleaned
by :mod:`..text.labels`.

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

import numpy as np

from ..text import labels as _labels
from ..text.numbers import shows_nonfinite
from ..model import story as _story
from . import look as _look
from . import key as K
from . import panel as P
from . import tangent_part as _tangent
from .camera import plan_cameras
from .layout import LINE_H
from .sprites import Compositor
from .look import DIM, GREY, PALETTE, colour

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


FITS = ("auto", "graph", "follow")


class FrameRenderer:
    """Draws step ``i`` of a storyboard: :meth:`render` as an RGB array (fast, for movies),
    :meth:`draw` into the figure ``fig``.

    ``width`` and ``height`` are the frame's size in pixels (even, as video needs), ``k`` the
    points of text per layout unit, ``key`` the colour key's entries as ``(look, label)``.
    ``background`` is the figure's colour, ``None`` for none (a transparent PNG from ``fig.savefig``).
    """

    def __init__(self, data: dict, dpi: int = 100, fit: str = "auto", background: str | None = "white"):
        import matplotlib.pyplot as plt

        if fit not in FITS:
            raise ValueError(f"fit must be one of {', '.join(map(repr, FITS))}, not {_labels.shorten(repr(fit))}")

        self.data, self.dpi = data, dpi
        self._cursor = None
        self._compositor = Compositor(self)
        self._cam_now = None
        self.fig = plt.figure(figsize=(8, 6), dpi=dpi, facecolor=background or "none")
        self._renderer = self.fig.canvas.get_renderer()
        px = dpi / 72.0  # pixels per point
        self._px = px
        # -- what every step shows, and so how large the frame must be --------------------------------
        n = len(data["nodes"])
        self._index = {nd["id"]: j for j, nd in enumerate(data["nodes"])}
        sides, focus, pending = [], [], False
        heading = _labels.for_mpl(data["title"], _labels.TITLE_LIMIT, "end")
        for st in _story.states(data):
            title = _labels.for_mpl(st["title"], _labels.TITLE_LIMIT, "end")
            # the first step's title is the animation's (or a generic one): the frame's heading says it already
            sides.append(("" if st["phase"] == "start" or title == heading else title, *P.side_text(st)))
            focus.append(self._focus(st))
            pending = pending or not all(st["alive"][:n])
        self._steps = len(sides)
        rule_cell, row_cell = self._measure("M" * 10, "rule") / 10.0, self._measure("M" * 10, "row") / 10.0
        rule_cells = max([0] + [P.cells(t) for _, lines, _ in sides for t in lines])
        row_cells = max([P.MIN_SIDE_CHARS] + [P.cells(t) for _, _, rows in sides for _, t in rows])
        self.side_w = math.ceil(max(rule_cells * rule_cell, row_cells * row_cell)) + 4
        self._sides = [(P.wrap(title, lambda t: self._measure(t, "title"), self.side_w) if title else [], lines, rows)
                       for title, lines, rows in sides]
        side_h = max(self._side_layout(s)[1] for s in self._sides)
        # -- the graph: its scale, and the window onto it ----------------------------------------------
        L = data["layout"]
        W, H = L["width"] + 2 * PAD, L["height"] + 2 * PAD
        k = min(K_MAX, FIT_INCHES[0] * 72.0 / W, FIT_INCHES[1] * 72.0 / H)
        # "graph": the whole graph on every frame, however small its text; "follow": the window, at
        # readable text, whenever the whole would be smaller; "auto": whichever keeps the text readable.
        self.scrolls = k < K_MIN and fit != "graph"
        self.k = k = k if fit == "graph" else max(k, K_MIN)
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
        head_h = round(P.HEAD_PT * 1.7 * px)
        left = m + ww + gap + (ov[0] + gap if beside else 0)
        width = left + self.side_w + m
        self.key = [(K.swatch(name), words) for name, words in K.entries(data, pending)]
        items, key_h = K.flow(self.key, width - 2 * m, dpi, lambda t: self._measure(t, "key"))
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
        self.heading = self.fig.text(m / dpi, (self.height - m - head_h * 0.55) / dpi, "", fontsize=P.HEAD_PT,
                                     fontweight="bold", va="center", color=INK, transform=self.fig.dpi_scale_trans,
                                     **TEXT)
        self.counter = self._line("counter", ha="right")
        counter_w = self._measure(f"step {self._steps} / {self._steps}", "counter") + gap
        self._fit(self.heading, _labels.for_mpl(data["title"], _labels.TITLE_LIMIT, "end"),
                  self.width - 2 * m - counter_w, "end")
        K.draw(self.fig, items, (m, self.height - m - key_h), self.height, dpi)
        self._slots = {"title": [self._line("title") for _ in range(P.MAX_TITLE_LINES)],
                       "rule": [self._line("rule") for _ in range(P.MAX_LINES)],
                       "rows": [self._line("row") for _ in range(P.MAX_ROWS + P.MAX_RESULTS + 2)]}
        self.panel = self._slots["rows"][0]  # the table's first line (its heading)
        self._rect_array = np.array(self._rects, float).reshape(-1, 4)
        self._cams = self._cameras(focus)
        self._set_camera(self._cams[0])

    # -- sizes ------------------------------------------------------------------------------------------
    def _measure(self, text: str, style: str) -> float:
        """Width of ``text`` in pixels, in one of the side panel's styles (or the key's)."""
        from matplotlib.font_manager import FontProperties

        size, family, weight, _ = P.LINE_STYLE[style]
        prop = FontProperties(family=family, size=size, weight=weight)
        return self._renderer.get_text_width_height_descent(text, prop, ismath=False)[0]

    def _side_layout(self, side) -> tuple:
        return P.layout(side, self._px)

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
        size, family, weight, ink = P.LINE_STYLE[style]
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
            style = K.DASHED if e["kind"] in ("skipped", "leave") else "-"
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
        self.nodes, self._rects, self._box_px, self._fitted, self._tangents = [], [], [], {}, {}
        for nd in self.data["nodes"]:
            p = L["nodes"][nd["id"]]
            x0, y0 = p["x"] - p["w"] / 2, p["y"] - p["h"] / 2
            rad = 24 if nd["kind"] == "leaf" else 8
            box = FancyBboxPatch((x0 + rad, y0 + rad), p["w"] - 2 * rad, p["h"] - 2 * rad,
                                 boxstyle=f"round,pad={rad}", linewidth=1.5 * k, zorder=3)
            lab = self.ax.text(p["x"], y0 + 22, "", fontsize=15 * k, fontweight="bold", ha="center", va="baseline",
                               color=INK, zorder=4, clip_on=True, **TEXT)
            val = self.ax.text(p["x"], y0 + p["vy"], "", fontsize=14 * k, ha="center", va="baseline", color=INK,
                               zorder=4, clip_on=True, **TEXT)
            grad = self.ax.text(p["x"], y0 + p["gy"], "", fontsize=14 * k, ha="center", va="baseline", fontweight="bold",
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
        if st["phase"] == "done":  # the end shows what was differentiated: the target, then the sources
            targets = {nd["id"] for nd in self.data["nodes"] if nd.get("role") == "target"}
            return {(i, i in targets) for i in ids | targets if i in self._index}
        for j in st["edges"]:
            ids.update((self.data["edges"][j]["from"], self.data["edges"][j]["to"]))
        return {(i, i == st["node"]) for i in ids if i in self._index}

    def _cameras(self, focus) -> list:
        """The window's top-left corner at each step (:func:`.camera.plan_cameras`)."""
        if not self.scrolls:
            return [(0, 0)] * len(focus)
        ww, wh = self.window
        return plan_cameras(focus, lambda i: self._rects[self._index[i]], self._graph_px, self.window,
                            min(24 * self.ppu, ww / 10, wh / 10))

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
            raise IndexError(f"step {i} is not a step of this animation: it has {self._steps} (0 to {self._steps - 1}, "
                             f"or -{self._steps} to -1 from the end)")
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
            val = _prefixed("= ", st["vals"][j])
            grad = _prefixed("∂ ", st["grads"][j])
            out.append((K.node_look(nd["box"], nd["role"], state, phase), val, grad,
                        _labels.for_mpl(st["order"][j], 8)))
        return out

    def _apply_node(self, j: int, look):
        (face, edge, width, style, alpha), val_text, grad_text, order = look
        _, box, lab, val, grad, badge, bt = self.nodes[j]
        box.set(facecolor=face, edgecolor=edge, linewidth=width * self.k, linestyle=style, alpha=alpha)
        for t in (lab, val, grad):
            t.set_alpha(alpha)
            t.set_visible(True)
        box.set_visible(True)
        width = self._box_px[j]
        odd = shows_nonfinite(_tangent.value_part(val_text)), shows_nonfinite(grad_text)  # NaN, inf: their look
        val.set(color=_look.NONFINITE_TEXT if odd[0] else INK, fontweight="bold" if odd[0] else "normal")
        grad.set_color(_look.NONFINITE_TEXT if odd[1] else _look.GRADIENT)
        p = self.data["layout"]["nodes"][self.nodes[j][0]["id"]]
        top = p["y"] - p["h"] / 2
        for t, text, y in ((val, val_text, p["vy"]), (grad, grad_text, p["gy"])):
            self._fit_value(t, text, 14 * self.k, width)
            # a baseline-anchored text grows upwards from its last line: anchor that line
            t.set_y(top + y + LINE_H * text.count("\n"))
        _tangent.place(self, j, val, p["x"])
        bt.set_text(order)
        badge.set_visible(bool(order))
        bt.set_visible(bool(order))

    def _pitch(self, t) -> float:
        """Pixels from one line to the next of ``t``'s font at line spacing 1 (measured: matplotlib
        takes it from the font's own metrics)."""
        key = ("pitch", t.get_fontsize(), t.get_fontweight())
        if key not in self._fitted:
            probe = self.ax.text(0, 0, "x", fontproperties=t.get_fontproperties(), linespacing=1.0)
            one = probe.get_window_extent(self._renderer).height
            probe.set_text("x\nx")
            self._fitted[key] = probe.get_window_extent(self._renderer).height - one
            probe.remove()
        return self._fitted[key]

    def _fit_value(self, t, text: str, size: float, max_px: float):
        """Set a node's value or gradient: smaller (down to 80%) when wider than its box, then shortened."""
        key = (text, size, t.get_fontweight(), max_px)
        fitted = self._fitted.get(key)
        if fitted is None:
            prop = t.get_fontproperties().copy()
            prop.set_size(size)

            def width(s):
                return max(self._renderer.get_text_width_height_descent(line, prop, ismath=False)[0]
                           for line in s.split("\n"))

            w = width(text) if len(text) * size * 0.8 * self._px > max_px else 0.0  # else surely narrow enough
            fitted = (text, size)
            if w > max_px and "\n" in text:  # a matrix keeps every value: only smaller
                fitted = (text, size * max_px / w)
            elif w > max_px:
                small = max(0.8 * size, size * max_px / w)
                prop.set_size(small)
                cut = len(text)
                while cut > 4 and width(_labels.shorten(text, cut, "end")) > max_px:
                    cut -= 1
                fitted = (_labels.shorten(text, cut, "end"), small)
            self._fitted[key] = fitted
        t.set_text(fitted[0])
        t.set_fontsize(fitted[1])
        if "\n" in fitted[0]:  # lines one layout LINE_H apart, as in the browser's player
            t.set_linespacing(LINE_H * self.ppu / self._pitch(t))
        t.set_multialignment("left")  # a matrix's rows start at one edge, the block centred

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
                    m + round((P.HEAD_PT * 1.7 * 0.55 + P.COUNTER_PT * 0.35) * self._px)))
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
            weight = self.data["edges"][j].get("weight") if st["phase"] == "backward" else None
            line.set_linewidth((1.25 * weight if weight else 4.0) * self.k)  # as the browser's player
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

    def render(self, i: int) -> np.ndarray:
        """Step ``i`` as an RGB array, ``height`` by ``width`` pixels (the same pixels as :meth:`draw` and
        ``fig.savefig``; frames in order cost least): composed by :class:`.sprites.Compositor`."""
        return self._compositor.frame(i)


def _prefixed(prefix: str, text: str) -> str:
    """A box's value or gradient as matplotlib writes it: ``prefix`` on the first line, later lines
    indented by about its width (the browser's player does the same)."""
    if not text:
        return ""
    first, *rest = _labels.for_mpl(text, newlines=True).split("\n")
    return "\n".join([prefix + first] + ["\u2007\u2007" + line for line in rest])
