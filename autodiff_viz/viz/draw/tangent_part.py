"""Forward mode in the movie frames: the ``ẋ …`` part of a box's value line in the tangent's colour.

The storyboard writes a value and its tangent on one line (``6.0  ẋ 2.0``, see
:data:`..model.forward.TANGENT_MARK`); the browser's player puts the tangent in a tspan of its own,
and the frames in one more matplotlib text per box, placed right after the value's part, so both
show what the graph shows: the value in ink, the tangent in blue (NaN and inf in their own look).

>>> value_part("= 6.0  ẋ 2.0"), value_part("= 6.0")
('= 6.0', '= 6.0')
"""
from __future__ import annotations

from ..model.forward import TANGENT_MARK
from ..text import labels as _labels
from ..text.numbers import shows_nonfinite
from . import look as _look


def value_part(text: str) -> str:
    """A value line without its tangent."""
    return text.split(TANGENT_MARK)[0]


def text_of(fr, j: int):
    """Box ``j``'s text for its tangent, in the frame renderer ``fr`` (made the first time a value has one)."""
    if j not in fr._tangents:
        fr._tangents[j] = fr.ax.text(0, 0, "", ha="left", va="baseline", color=_look.TANGENT, zorder=4,
                                     clip_on=True, visible=False, **_labels.MPL_TEXT)
    return fr._tangents[j]


def place(fr, j: int, val, x: float):
    """Split box ``j``'s fitted value text ``val`` (centred at ``x``) into its value and its tangent."""
    text = val.get_text()
    value, mark, tangent = text.partition(TANGENT_MARK)
    if not mark or "\n" in text:
        val.set(ha="center", x=x)
        if j in fr._tangents:
            fr._tangents[j].set_visible(False)
        return
    tan = text_of(fr, j)
    prop = val.get_fontproperties()

    def width(s):
        return fr._renderer.get_text_width_height_descent(s, prop, ismath=False)[0] / fr.ppu

    left = x - width(text) / 2
    val.set(text=value, ha="left", x=left)
    odd = shows_nonfinite(tangent)  # NaN and inf in their own look, as the value's
    tan.set(text=mark.lstrip() + tangent, x=left + width(value + TANGENT_MARK[:2]), y=val.get_position()[1],
            color=_look.NONFINITE_TEXT if odd else _look.TANGENT, fontweight="bold" if odd else "normal",
            fontsize=val.get_fontsize(), alpha=val.get_alpha(), visible=val.get_visible())
