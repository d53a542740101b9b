"""How a classroom sees the checks: projector-sized plots and the verdict's colour, from the one palette."""
from __future__ import annotations

from .. import viz

# Okabe-Ito colours (the views' own): told apart with the common forms of colour blindness.
PALETTE = [*viz.CURVE_COLOURS, viz.PALETTE["black"]]


def projector_style(font_size: int = 15) -> None:
    """Matplotlib settings for a classroom: large fonts, thick lines, a colour-blind-safe cycle.

    Colours come with line styles too, so curves stay apart on a washed-out
    projector or a greyscale print.
    """
    import matplotlib as mpl  # only the notebooks draw
    from cycler import cycler

    styles = ["-", "--", "-.", ":", "-", "--", "-."]
    mpl.rcParams.update({
        "font.size": font_size, "axes.titlesize": font_size + 2, "axes.labelsize": font_size + 1,
        "xtick.labelsize": font_size - 1, "ytick.labelsize": font_size - 1, "legend.fontsize": font_size - 1,
        "lines.linewidth": 2.5, "lines.markersize": 8, "figure.figsize": (8, 4.5), "figure.dpi": 100,
        "axes.grid": True, "grid.alpha": 0.3, "image.cmap": "cividis",
        "axes.prop_cycle": cycler(color=PALETTE) + cycler(linestyle=styles),
    })



def verdict_colour(passed: bool) -> str:
    """Blue for "Right", vermillion (the colour of a mark) for "Not yet"."""
    return viz.PALETTE["blue"] if passed else viz.PALETTE["vermillion"]
