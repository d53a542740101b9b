"""A printable handout of an animation: a PDF with one step (or ``per_page`` steps) on each A4 or Letter page.

Each step shows its number and title, the graph at that step (drawn by
:class:`.frames.FrameRenderer`, the renderer of the GIF and MP4 frames, as a
picture), the rule's lines and the table of gradients (:mod:`.panel`'s
words, as text a reader can select and search); each page ends with the
colour key (:mod:`.key`), whose boxes also differ by border width and dashes,
so the page reads in black and white.  matplotlib's ``PdfPages`` writes the
file, with TrueType fonts (``pdf.fonttype`` 42), so the text is Unicode text.

>>> import autodiff_viz as ad, tempfile, os
>>> anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
>>> path = save_handout(anim.data, os.path.join(tempfile.mkdtemp(), "steps.pdf"), per_page=2)
>>> open(path, "rb").read(5)
b'%PDF-'
>>> len(pages(len(anim), 2)) == (len(anim) + 1) // 2
True
"""
from __future__ import annotations

import math

import numpy as np

from ..model import story as _story
from ..text import labels as _labels
from . import key as K
from . import panel as P
from .frames import FrameRenderer
from .look import GREY, INK

PAPER = {"a4": (8.27, 11.69), "letter": (8.5, 11.0)}  # portrait, inches
GRIDS = {1: (1, 1), 2: (2, 1), 3: (3, 1), 4: (2, 2), 6: (3, 2)}  # steps a page: rows, columns
RASTER_DPI = 200       # the graph's picture: sharp when printed
MARGIN, GAP = 0.5, 0.25  # inches: around the page, between steps
GRAPH_SHARE = 0.4      # of a step's height, at least, for the graph (the text takes what it needs of the rest)
GROW = 1.3             # the graph at most this much larger than in a frame (a page's one step)
TEXT_PT, MIN_PT, LEADING = 10.0, 5.0, 1.3  # the step's text: its largest and smallest size, line pitch
MONO_EM = 0.61         # a monospace cell's width, in ems (DejaVu Sans Mono)
TEXT = _labels.MPL_TEXT


def pages(n_steps: int, per_page: int) -> list:
    """The steps on each page: ``[[0, 1], [2, 3], [4]]`` for 5 steps, 2 a page."""
    return [list(range(i, min(i + per_page, n_steps))) for i in range(0, n_steps, per_page)]


def check(per_page, paper) -> tuple:
    """``(rows, columns, (width, height))`` of a page, or a ``ValueError`` naming the bad argument."""
    if isinstance(per_page, bool) or not isinstance(per_page, int) or per_page not in GRIDS:
        raise ValueError(f"Animation.save: per_page={per_page!r}: give one of {sorted(GRIDS)} steps a page")
    key = paper.lower() if isinstance(paper, str) else paper
    if key not in PAPER:
        raise ValueError(f"Animation.save: paper={paper!r}: give one of {sorted(PAPER)}")
    return (*GRIDS[per_page], PAPER[key])


def save_handout(data: dict, path: str, per_page: int = 1, paper: str = "a4", background: str = "white") -> str:
    """Write the storyboard ``data`` as a PDF handout to ``path`` (``per_page`` steps on each ``paper`` page)."""
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    check(per_page, paper)
    r = FrameRenderer(data, dpi=RASTER_DPI, background=background)
    try:
        with matplotlib.rc_context({"pdf.fonttype": 42}), PdfPages(path) as pdf:
            meta = pdf.infodict()
            meta["Title"] = _labels.clean(data["title"])
            meta["Subject"] = "A step-by-step handout of automatic differentiation"
            for k in range(len(pages(len(data["steps"]), per_page))):
                fig = _page_figure(r, k, per_page, paper, background)
                try:
                    pdf.savefig(fig, facecolor=background)
                finally:
                    plt.close(fig)
    finally:
        plt.close(r.fig)
    return path


def page_figure(data: dict, page: int, per_page: int = 1, paper: str = "a4", background: str = "white"):
    """Page ``page`` (from 0) of the handout as a matplotlib figure, to look at or save as a picture."""
    import matplotlib.pyplot as plt

    check(per_page, paper)
    r = FrameRenderer(data, dpi=RASTER_DPI, background=background)
    try:
        return _page_figure(r, page, per_page, paper, background)
    finally:
        plt.close(r.fig)


def _page_figure(r: FrameRenderer, page: int, per_page: int, paper: str, background: str):
    import matplotlib.pyplot as plt

    rows, cols, size = check(per_page, paper)
    states = list(_story.states(r.data))
    book = pages(len(states), per_page)
    fig = plt.figure(figsize=size, dpi=72, facecolor=background)
    _page(fig, r, r.data, states, book[page], rows, cols, f"page {page + 1} / {len(book)}")
    return fig


def _page(fig, r, data, states, steps, rows, cols, folio):
    """One page: the animation's title, its steps in a grid, the colour key and the page number."""
    W, H = (v * 72.0 for v in fig.get_size_inches())  # points; the figure's dpi is 72
    m, gap = MARGIN * 72, GAP * 72
    title = _labels.for_mpl(data["title"], _labels.TITLE_LIMIT, "end")
    fig.text(m / W, 1 - m / H, title, fontsize=12, fontweight="bold", va="top", color=INK, **_text())
    fig.text(1 - m / W, m / 2 / H, folio, fontsize=8, ha="right", va="center", color=GREY, **TEXT)
    key = [(K.swatch(name), words) for name, words in K.entries(data, pending=True)]
    items, key_h = K.flow(key, W - 2 * m, 72, lambda t: len(t) * P.KEY_PT * 0.55)
    K.draw(fig, items, (m, H - m - key_h), H, 72)
    top, bottom = m + 24, m + key_h + gap  # points from the top, from the bottom
    cell_w = (W - 2 * m - gap * (cols - 1)) / cols
    cell_h = (H - top - bottom - gap * (rows - 1)) / rows
    texts = [_text_lines(states[i], i, len(states), cell_w) for i in steps]
    # one text size and one graph height on a page: the room the longest text leaves
    text_pt = min(_text_size(t, cell_w, cell_h * (1 - GRAPH_SHARE)) for t in texts)
    graph_h = cell_h - max(sum(1 + before for _, _, before in t) for t in texts) * text_pt * LEADING - 6
    for k, (i, text) in enumerate(zip(steps, texts)):
        row, col = divmod(k, cols)
        x, y = m + col * (cell_w + gap), top + row * (cell_h + gap)
        _step(fig, r, i, text, text_pt, (x, y, cell_w, graph_h), (W, H))


def _text_lines(st, i: int, n: int, width_pt: float) -> list:
    """Step ``i``'s text as ``(style, text, space before it in lines)``: heading, the rule's lines, the table."""
    heading = _labels.for_mpl(f"Step {i + 1} / {n}: {st['title']}", _labels.TITLE_LIMIT, "end")
    lines, rows = P.side_text(st)
    return ([("title", t, 0.0) for t in _wrap(heading, width_pt, 11)] + [("rule", t, 0.0) for t in lines]
            + [(style, t, 0.5 if k == 0 else 0.0) for k, (style, t) in enumerate(rows)])


def _step(fig, r, i, text, text_pt, box, page):
    """Step ``i``: its graph in the box ``(x, y, w, h)`` (points from the page's top-left), its text below."""
    x, y, w, h = box
    W, H = page
    picture = _graph_picture(r, i)
    ph, pw = picture.shape[:2]
    gw = min(w, h * pw / ph, GROW * pw * 72.0 / RASTER_DPI)
    gh = gw * ph / pw
    ax = fig.add_axes([x / W, 1 - (y + gh) / H, gw / W, gh / H])
    ax.imshow(picture, interpolation="antialiased")
    ax.set_axis_off()
    baseline = y + gh + 6
    for style, t, before in text:
        baseline += text_pt * LEADING * (1 + before)
        size, family, weight, ink = P.LINE_STYLE["title" if style == "title" else style]
        fig.text(x / W, 1 - baseline / H, t, fontsize=text_pt * (1.1 if style == "title" else 1.0),
                 family=family, fontweight=weight, color=ink, va="baseline", **_text())


def _text():
    """matplotlib's text keywords: shown as typed, and no ligatures (a reader's search for "ff" finds it)."""
    from matplotlib.text import Text

    return dict(TEXT, **({"fontfeatures": ("-liga",)} if hasattr(Text, "set_fontfeatures") else {}))


def _wrap(text: str, width_pt: float, size: float) -> list:
    """A heading in lines that fit ``width_pt`` at ``size`` points (measured as sans-serif, about half an em)."""
    import textwrap

    return textwrap.wrap(text, max(12, int(width_pt / (size * 0.55)))) or [""]


def _text_size(text: list, width_pt: float, height_pt: float) -> float:
    """The largest size (at most ``TEXT_PT``) at which every line fits the width, and all fit the height."""
    cells = max([P.cells(t) for _, t, _ in text] + [1])
    lines = sum(1 + before for _, _, before in text)
    return max(MIN_PT, min(TEXT_PT, width_pt / (cells * MONO_EM), height_pt / (lines * LEADING)))


def _graph_picture(r: FrameRenderer, i: int):
    """The frame of step ``i``, cut to its graph (and the overview of a large one), as an RGB array.

    Drawn whole (not composed from sprites, as a movie's frames are): a handout's few pictures are
    worth the time, and its pages may come in any order."""
    from matplotlib.transforms import Bbox

    r.draw(i)  # the figure itself, as ``Animation.frame`` draws it
    r.fig.canvas.draw()
    frame = np.asarray(r.fig.canvas.buffer_rgba())[..., :3]
    axes = [r.ax] + ([r.overview.axes] if r.overview is not None else [])
    bb = Bbox.union([a.get_window_extent() for a in axes])
    x0, x1 = max(0, math.floor(bb.x0)), min(r.width, math.ceil(bb.x1))
    y0, y1 = max(0, math.floor(r.height - bb.y1)), min(r.height, math.ceil(r.height - bb.y0))
    return frame[y0:y1, x0:x1]
