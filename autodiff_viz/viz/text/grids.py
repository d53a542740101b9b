"""Small grids of numbers as lines of monospace text, side by side when they fit.

What a convolution's details draw with: a patch of the input beside its
kernel, a gradient's share beside another.  Cells are written by
:func:`..text.numbers.fmt_number` (3 significant digits); a cell may be text
instead of a number (``·`` for padding, ``[0.9]`` for a marked cell).

>>> print("\\n".join(side_by_side([("patch", grid([[1.0, 2.0], [3.0, 4.0]])), ("kernel", grid([[0.5, -1.0]]))])))
patch      kernel
1.0 2.0     0.5 -1.0
3.0 4.0
"""
from __future__ import annotations

from .numbers import fmt_number

WIDTH = 56   # the widest line two grids side by side may make (the player's panel wraps at 58)
GAP = 4      # spaces between two grids


def cell(v) -> str:
    """A number as a grid writes it (3 significant digits); text stays as it is."""
    return v if isinstance(v, str) else fmt_number(v, 3)


def grid(rows) -> list:
    """``rows`` (a list of lists of numbers or texts) as right-aligned columns, one line per row."""
    texts = [[cell(v) for v in row] for row in rows]
    width = max((len(t) for row in texts for t in row), default=1)
    return [" ".join(t.rjust(width) for t in row) for row in texts]


def side_by_side(blocks) -> list:
    """``[(title, lines), ...]`` next to each other, each under its title; one under another when too wide."""
    widths = [max([len(title)] + [len(t) for t in lines]) for title, lines in blocks]
    if sum(widths) + GAP * (len(blocks) - 1) > WIDTH:
        out = []
        for title, lines in blocks:
            out += [title] + list(lines)
        return out
    height = max(len(lines) for _, lines in blocks)
    out = []
    for r in range(height + 1):
        parts = []
        for (title, lines), w in zip(blocks, widths):
            text = title if r == 0 else lines[r - 1] if r - 1 < len(lines) else ""
            parts.append(text.ljust(w))
        out.append((" " * GAP).join(parts).rstrip())
    return out
