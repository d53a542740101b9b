"""PNG stills of the widgets, for notebook viewers that show no SVG (GitHub's preview, some converters).

:func:`still_png` draws what the SVG still (:mod:`.still`) shows, with
matplotlib: an animation's last step through :class:`.frames.FrameRenderer`
(the renderer of the GIF and MP4 frames), an explorer as it opens, and a
storyboard too large to picture as a card with its title and size.  Each is
at most ``MAX_PX`` pixels on its longer side, at ``DPI`` or less, so a
notebook stays small.  Drawn only when a notebook asks for the picture
(``_repr_mimebundle_``), never for ``.source`` or ``.data``.

>>> import autodiff_viz as ad
>>> png = still_png("animate", ad.viz.animate(lambda x: x * x, 3.0, linked=False).data)
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""
from __future__ import annotations

import io

from ..text import labels as _labels
from ..text.numbers import fmt_number
from .look import CURVE_COLOURS, GREY, INK, PALETTE

DPI = 80          # pixels per inch of a still: a frame's text about its size on screen
MAX_PX = 1600     # the longer side, at most; a larger frame is drawn at a lower dpi
MIN_DPI = 24
MAX_NODES = 300   # as the SVG still: a larger storyboard gets a card
TEXT = _labels.MPL_TEXT


def still_png(kind: str, data: dict) -> bytes | None:
    """The PNG still of a widget's ``data`` (``kind`` ``"animate"`` or ``"explore"``), or ``None``."""
    if kind == "animate" and "layout" in data:
        if len(data["nodes"]) > MAX_NODES:
            return _card(data)
        return _last_frame(data)
    if kind == "explore":
        return _explorer(data)
    return None


def _png(rgb) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(rgb).save(out, format="PNG", optimize=True)
    return out.getvalue()


def _last_frame(data: dict) -> bytes:
    """The animation's last step, as its GIF's last frame, at most ``MAX_PX`` on its longer side."""
    import matplotlib.pyplot as plt

    from .frames import FrameRenderer

    r = FrameRenderer(data, dpi=DPI)
    try:
        longer = max(r.width, r.height)
        if longer > MAX_PX:  # the frame's size in inches does not depend on its dpi
            plt.close(r.fig)
            r = FrameRenderer(data, dpi=max(MIN_DPI, int(DPI * MAX_PX / longer)))
        return _png(r.render(-1))
    finally:
        plt.close(r.fig)


def _figure_png(fig) -> bytes:
    import matplotlib.pyplot as plt

    out = io.BytesIO()
    try:
        fig.savefig(out, format="png", dpi=DPI, facecolor="white")
    finally:
        plt.close(fig)
    return out.getvalue()


def _card(data: dict) -> bytes:
    """A storyboard too large to picture: its title, its size, and how to see it."""
    import matplotlib.pyplot as plt

    lines = [f"{len(data['nodes']):,} nodes, {len(data['steps']):,} steps: too many for a still picture.",
             "Run the notebook, or open its HTML export, to step through them."]
    fig = plt.figure(figsize=(8.6, 1.4))
    fig.text(0.02, 0.75, _labels.for_mpl(data["title"], _labels.TITLE_LIMIT, "end"), fontsize=15,
             fontweight="bold", color=INK, **TEXT)
    for k, line in enumerate(lines):
        fig.text(0.02, 0.45 - 0.25 * k, line, fontsize=12, color=GREY, **TEXT)
    return _figure_png(fig)


def _explorer(data: dict) -> bytes:
    """An explorer as it opens: f and f' of one input, or the contours of two and a descent path."""
    import matplotlib.pyplot as plt

    name = _labels.for_mpl(data["name"], _labels.LINE_LIMIT)
    fig, ax = plt.subplots(figsize=(8.0, 5.0) if data["mode"] == "1d" else (6.5, 6.5))
    if data["mode"] == "1d":
        xs = data["x"]
        ax.plot(xs, [_nan(v) for v in data["f"]], color=CURVE_COLOURS[0], lw=2.2, label=f"{name}(x)")
        ax.plot(xs, [_nan(v) for v in data["df"]], color=CURVE_COLOURS[1], lw=2.2, ls=(0, (6, 3)),
                label=f"{name}'(x), from the tape")
        ax.set_title(f"{name}(x) and its derivative", loc="left", **TEXT)
        ax.set_xlabel("x")
    else:
        k = len(data["contours"])
        for j, c in enumerate(data["contours"]):
            col = CURVE_COLOURS[j * len(CURVE_COLOURS) // max(k, 1) % len(CURVE_COLOURS)]
            for seg in c["lines"]:
                ax.plot([_nan(v) for v in seg[0::2]], [_nan(v) for v in seg[1::2]], color=col, lw=1.2)
        i, j = data["start"]
        path = data["paths"][(data["rate"] * len(data["sy"]) + j) * len(data["sx"]) + i]
        rate = fmt_number(data["rates"][data["rate"]])
        ax.plot([_nan(v) for v in path["x"]], [_nan(v) for v in path["y"]], color=INK, lw=2.0, marker=".",
                label=f"descent path, learning rate {rate}")
        if path["x"] and path["x"][0] is not None:
            ax.plot(path["x"][0], path["y"][0], "o", ms=9, color=PALETTE["orange"], mec=INK)
        ax.set_xlim(*data["xlim"])
        ax.set_ylim(*data["ylim"])
        ax.set_aspect("equal")
        ax.set_title(f"contours of {name}(x, y) and a gradient-descent path", loc="left", **TEXT)
        ax.set_xlabel("x")
        ax.set_ylabel("y")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.1), frameon=False, prop={"size": 10})
    for t in ax.get_legend().get_texts():
        t.set_parse_math(False)
    ax.grid(alpha=0.25)
    fig.tight_layout()
    return _figure_png(fig)


def _nan(v):
    return float("nan") if v is None else v
