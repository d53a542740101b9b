"""Animation frames with matplotlib: the same storyboard the browser player draws.

Artists are created once; each frame only changes colours and texts (as
matplotlib's animation guide recommends), and the layout comes from the one
Graphviz run stored in the storyboard.

Every text is built with :data:`._labels.MPL_TEXT` (shown as typed: a name
such as ``$\\foo$`` is never parsed as mathtext or TeX) from text cleaned by
:mod:`._labels`; names too wide for their node box or the side panel are
shortened with an ellipsis.
"""
from __future__ import annotations

import os
import textwrap

from matplotlib.patches import Circle, FancyBboxPatch, PathPatch, Polygon
from matplotlib.path import Path

from . import _labels, _story
from ._style import PALETTE as C

TEXT = _labels.MPL_TEXT

PAD = 16.0
SIDE_INCHES = 6.2
# Points of text per layout unit.  At 1.05 node text is a little larger than in the browser; a
# graph shrinks to fit GRAPH_FIT_INCHES, but never below K_MIN (node labels stay at 11 pt or more:
# the figure grows instead), until the figure would pass FIGURE_MAX_INCHES.
K_MAX, K_MIN = 1.05, 0.75
GRAPH_FIT_INCHES = (13.0, 10.0)
FIGURE_MAX_INCHES = (30.0, 24.0)
# The side panel's text, in points: the rule's lines, then the table of gradients.
TITLE_PT, LINES_PT, PANEL_PT = 15.0, 11.5, 12.0
LINES_SPACING, PANEL_SPACING = 1.4, 1.45
MAX_LINES, MAX_ROWS, WRAP = 14, 24, 58
# In the side panel: a word (a name, usually) longer than WORD_LIMIT characters is shortened
# before the rule's lines wrap, a name in the table to NAME_LIMIT, a row of the table to ROW_LIMIT.
WORD_LIMIT, NAME_LIMIT, ROW_LIMIT = 40, 20, 62

_FILL = {"source": "#D5ECF9", "const": "#EEEEEE", "backward": "#FBF7D0", "op": "#FFFFFF", "target": "#FFFFFF"}
_EDGE = {"source": C["blue"], "const": "#888888", "target": C["purple"], "backward": "#333333", "op": "#333333"}


def graph_scale(width: float, height: float) -> float:
    """Points per layout unit for a graph of this size (layout units are points at 100%)."""
    k = min(K_MAX, GRAPH_FIT_INCHES[0] * 72.0 / width, GRAPH_FIT_INCHES[1] * 72.0 / height)
    if k < K_MIN:
        k = min(K_MIN, (FIGURE_MAX_INCHES[0] - SIDE_INCHES) * 72.0 / width, (FIGURE_MAX_INCHES[1] - 1.0) * 72.0 / height)
    return k


def _side_text(st) -> tuple:
    """A step's side panel as text: the rule's lines (wrapped) and the rows of the gradient table."""
    wrapped = []
    for line in st["lines"]:
        for part in _labels.clean(line, newlines=True).split("\n"):
            part = _labels.shorten_words(part, WORD_LIMIT)
            wrapped.extend(textwrap.wrap(part, WRAP, subsequent_indent="   ") or [""])
    rows = []
    if st["panel"]:
        rows.append("Gradients accumulated so far")
        for r in st["panel"]:
            terms = " + ".join(_labels.clean(t) for t in r["terms"]) if len(r["terms"]) > 1 else ""
            mark = "▸" if r["fresh"] else " "
            name = _labels.for_mpl(r["name"], NAME_LIMIT)
            row = f"{mark} {name:<8} {_labels.clean(r['total']):>10}" + (f"   = {terms}" if terms else "")
            rows.append(_labels.shorten(row, ROW_LIMIT, "end"))
    if st["results"]:
        rows.append("")
        rows.extend(_labels.shorten(_labels.shorten_words(r, WORD_LIMIT), ROW_LIMIT, "end") for r in st["results"])
    return wrapped[:MAX_LINES], rows[:MAX_ROWS]


def _side_points(n_lines: int, n_rows: int) -> float:
    """Height in points of the side panel's title, lines and table (as _build_side places them)."""
    return (TITLE_PT * 2.0 + (n_lines + 1) * LINES_PT * LINES_SPACING + n_rows * PANEL_PT * PANEL_SPACING
            + 24.0)


class FrameRenderer:
    """Draws step ``i`` of a storyboard into one reusable figure.

    The graph uses the storyboard's layout as it stands (the one the browser
    player draws, left to right or top to bottom); its scale is chosen so node
    text stays readable, and the figure is tall enough for the longest side panel.
    """

    def __init__(self, data: dict, dpi: int = 100):
        import matplotlib.pyplot as plt

        self.data = data
        self._cursor = None
        L = data["layout"]
        W, H = L["width"] + 2 * PAD, L["height"] + 2 * PAD
        self.k = k = graph_scale(W, H)  # points of text per layout unit, so node text fits its box
        graph_w, graph_h = W * k / 72.0, H * k / 72.0
        side = [_side_text(st) for st in _story.states(data)]
        side_h = _side_points(max(len(a) for a, _ in side), max(len(b) for _, b in side)) / 72.0
        fig_h = max(graph_h + 1.0, side_h + 0.8, 6.0)
        fw = graph_w + SIDE_INCHES
        self.fig = plt.figure(figsize=(fw, fig_h), dpi=dpi)
        self.ax = self.fig.add_axes([0.01, (fig_h - 0.7 - graph_h) / fig_h, graph_w / fw - 0.01, graph_h / fig_h])
        self.side = self.fig.add_axes([graph_w / fw + 0.01, 0.02, SIDE_INCHES / fw - 0.03, (fig_h - 0.8) / fig_h])
        self.side_inches = fig_h - 0.8
        for a in (self.ax, self.side):
            a.set_axis_off()
        self.ax.set_xlim(-PAD, W - PAD)
        self.ax.set_ylim(H - PAD, -PAD)
        self.heading = self.fig.text(0.01, 1 - 0.35 / fig_h, "", fontsize=17, fontweight="bold", va="center", **TEXT)
        self._fit(self.heading, _labels.for_mpl(data["title"], _labels.TITLE_LIMIT, "end"), 0.98 * fw * dpi, "end")
        self._build_graph()
        self._build_side()

    def _build_graph(self):
        L, k = self.data["layout"], self.k
        self.edges = []
        for e in self.data["edges"]:
            p = L["edges"][e["id"]]
            pts = p["points"]
            codes = [Path.MOVETO] + [Path.CURVE4] * (len(pts) - 1)
            line = PathPatch(Path(pts, codes), facecolor="none", edgecolor="#777777", linewidth=1.4, zorder=1)
            self.ax.add_patch(line)
            head = Polygon(p["head"], closed=True, facecolor="#777777", edgecolor="none", zorder=1) if p["head"] else None
            if head is not None:
                self.ax.add_patch(head)
            if e["label"]:
                mid = pts[len(pts) // 2]
                self.ax.text(mid[0], mid[1] - 6, _labels.for_mpl(e["label"], 8), fontsize=13 * k, style="italic",
                             color="#555555", ha="center", va="bottom", zorder=2, **TEXT)
            self.edges.append((line, head))
        self.nodes = []
        for n in self.data["nodes"]:
            p = L["nodes"][n["id"]]
            x0, y0 = p["x"] - p["w"] / 2, p["y"] - p["h"] / 2
            rad = 24 if n["kind"] == "leaf" else 8
            box = FancyBboxPatch((x0 + rad, y0 + rad), p["w"] - 2 * rad, p["h"] - 2 * rad,
                                 boxstyle=f"round,pad={rad}", linewidth=1.5, zorder=3)
            self.ax.add_patch(box)
            lab = self.ax.text(p["x"], y0 + 22, "", fontsize=15 * k, fontweight="bold", ha="center",
                               va="baseline", zorder=4, **TEXT)
            # the name fits inside its box (less the rounded corners), shortened in the middle if need be
            self._fit(lab, _labels.for_mpl(n["label"]), self._width_px(p["w"] - 16), "middle", p["w"] / 15.0)
            val = self.ax.text(p["x"], y0 + 45, "", fontsize=14 * k, ha="center", va="baseline", color="#333333",
                               zorder=4, **TEXT)
            grad = self.ax.text(p["x"], y0 + 67, "", fontsize=14 * k, ha="center", va="baseline",
                                fontweight="bold", color=C["blue"], zorder=4, **TEXT)
            badge = Circle((x0 + p["w"] - 4, y0 + 4), 13, facecolor=C["vermillion"], edgecolor="white", linewidth=1.5,
                           zorder=5)
            self.ax.add_patch(badge)
            bt = self.ax.text(x0 + p["w"] - 4, y0 + 4, "", fontsize=13 * k, fontweight="bold", color="white",
                              ha="center", va="center", zorder=6, **TEXT)
            self.nodes.append((n, box, lab, val, grad, badge, bt))

    def _width_px(self, units: float) -> float:
        """A width in layout units, in display pixels."""
        (x0, _), (x1, _) = self.ax.transData.transform([(0.0, 0.0), (units, 0.0)])
        return abs(x1 - x0)

    def _fit(self, artist, text: str, max_px: float, where: str, sure_chars: float = 0.0):
        """Set ``text``, shortened (at ``where``) until it is at most ``max_px`` wide.

        Text of at most ``sure_chars`` characters is taken to fit unmeasured.
        """
        artist.set_text(text)
        if len(text) <= sure_chars:
            return
        try:
            renderer = self.fig.canvas.get_renderer()
        except AttributeError:  # a canvas that cannot measure: a conservative guess by characters
            artist.set_text(_labels.shorten(text, max(4, int(max_px / artist.get_fontsize() / 0.7)), where))
            return
        if artist.get_window_extent(renderer).width <= max_px:
            return
        lo, hi = 1, len(text) - 1  # the longest cut that fits lies in [lo, hi]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            artist.set_text(_labels.shorten(text, mid, where))
            if artist.get_window_extent(renderer).width <= max_px:
                lo = mid
            else:
                hi = mid - 1
        artist.set_text(_labels.shorten(text, lo, where))

    def _state(self, i: int) -> dict:
        """Step ``i`` in full; frames are drawn in order, so each costs one step's changes."""
        if self._cursor is None or self._cursor[0] > i:
            self._cursor = (-1, None, _story.states(self.data))
        k, st, it = self._cursor
        while k < i:
            st, k = next(it), k + 1
        self._cursor = (k, st, it)
        return st

    def _down(self, points: float) -> float:
        """``points`` below the top of the side panel, in its axes fraction."""
        return 1.0 - points / 72.0 / self.side_inches

    def _build_side(self):
        kw = {"va": "top", "transform": self.side.transAxes, **TEXT}
        self.title = self.side.text(0, 1, "", fontsize=TITLE_PT, fontweight="bold", **kw)
        self.lines = self.side.text(0, self._down(TITLE_PT * 2.0), "", fontsize=LINES_PT, family="DejaVu Sans Mono",
                                    linespacing=LINES_SPACING, **kw)
        self.panel = self.side.text(0, 0.42, "", fontsize=PANEL_PT, family="DejaVu Sans Mono",
                                    linespacing=PANEL_SPACING, color="#111111", **kw)
        self.step_no = self.side.text(1, 0.0, "", fontsize=12, ha="right", va="bottom", color="#555555",
                                      transform=self.side.transAxes, **TEXT)
        self.side_px = self.side.get_position().width * self.fig.get_figwidth() * self.fig.dpi

    def draw(self, i: int):
        steps = self.data["steps"]
        st = self._state(i)
        phase = st["phase"]
        recv = set(st["recv"])
        active = set(st["edges"])
        hot = C["orange"] if phase == "forward" else C["vermillion"]
        for j, (line, head) in enumerate(self.edges):
            on = j in active
            colour = hot if on else "#777777"
            line.set_edgecolor(colour)
            line.set_linewidth(4.0 * self.k if on else 1.4 * self.k)
            line.set_linestyle((0, (4, 2)) if on and phase == "backward" else "-")
            if head is not None:
                head.set_facecolor(colour)
        for idx, (n, box, lab, val, grad, badge, bt) in enumerate(self.nodes):
            role = n["role"]
            face, edge, width, style = _FILL.get(role, "#FFFFFF"), _EDGE.get(role, "#333333"), 1.5, "-"
            if role == "target":
                width = 3.5
            if role == "backward":
                style = (0, (5, 3))
            if st["node"] == n["id"]:
                edge, width = hot, 5.5
                face = "#FCE8C3" if phase == "forward" else "#F9DCCB"
            elif n["id"] in recv:
                edge, width, face = C["green"], 4.5, "#CDEBE3"
            alpha = 1.0 if st["alive"][idx] else 0.25
            box.set_facecolor(face)
            box.set_edgecolor(edge)
            box.set_linewidth(width * self.k)
            box.set_linestyle(style if st["alive"][idx] else (0, (3, 3)))
            box.set_alpha(alpha)
            for t in (lab, val, grad):
                t.set_alpha(alpha)
            val.set_text("= " + _labels.for_mpl(st["vals"][idx]) if st["vals"][idx] else "")
            grad.set_text("∂ " + _labels.for_mpl(st["grads"][idx]) if st["grads"][idx] else "")
            order = _labels.for_mpl(st["order"][idx], 8)
            badge.set_visible(bool(order))
            bt.set_text(order)
            bt.set_visible(bool(order))
        self._fit(self.title, _labels.for_mpl(st["title"], _labels.TITLE_LIMIT, "end"), self.side_px, "end", 30)
        wrapped, rows = _side_text(st)
        self.lines.set_text("\n".join(wrapped))
        # The table starts one line below the rule's last line, wherever that is this step.
        self.panel.set_y(self._down(TITLE_PT * 2.0 + (len(wrapped) + 1) * LINES_PT * LINES_SPACING))
        self.panel.set_text("\n".join(rows))
        self.step_no.set_text(f"step {i + 1} / {len(steps)}")
        return self.fig


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


def save_movie(data: dict, path: str, fps: float = 1.0, dpi: int = 100) -> str:
    """One frame per step: ``.gif`` with Pillow, ``.mp4`` with ffmpeg (imageio-ffmpeg ships one)."""
    import matplotlib.pyplot as plt
    from matplotlib.animation import FFMpegWriter, FuncAnimation, PillowWriter

    ext = os.path.splitext(path)[1].lower()
    if ext == ".mp4":
        if not _ffmpeg_path():
            raise RuntimeError("saving .mp4 needs ffmpeg: pip install imageio-ffmpeg (it ships one), or install "
                               "ffmpeg with your system's package manager; .gif and .html need neither")
        writer = FFMpegWriter(fps=fps, codec="libx264", extra_args=["-pix_fmt", "yuv420p"])
    else:
        writer = PillowWriter(fps=fps)
    r = FrameRenderer(data, dpi=dpi)
    if ext == ".mp4":
        # yuv420p needs even pixel sizes
        w, h = r.fig.get_size_inches() * dpi
        r.fig.set_size_inches((int(w) // 2 * 2) / dpi, (int(h) // 2 * 2) / dpi)
    anim = FuncAnimation(r.fig, r.draw, frames=len(data["steps"]), blit=False, repeat=False)
    try:
        anim.save(path, writer=writer, dpi=dpi)
    finally:
        plt.close(r.fig)
    return path
