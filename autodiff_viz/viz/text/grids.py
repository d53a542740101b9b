"""Small grids of numbers as lines of monospace text, side by side when they fit.

What a convolution's details draw with: a patch of the input beside its
kernel, a gradient's share beside another.  The numbers of one grid share
their decimals (3 significant digits for the largest); a cell may be text
instead of a number (``·`` for padding).

>>> print("\\n".join(side_by_side([("patch", grid([[1.0, 2.0], [3.0, 4.0]])), ("kernel", grid([[0.5, -1.0]]))])))
patch        kernel
1.00 2.00     0.50 -1.00
3.00 4.00
"""
from __future__ import annotations

import math

from .numbers import fmt_number

WIDTH = 56   # the widest line two grids side by side may make (the player's panel wraps at 58)
GAP = 4      # spaces between two grids


def _decimals(numbers) -> int | None:
    """Decimals that give the grid's largest value 3 significant digits (``None``: too large or small for that)."""
    big = max((abs(v) for v in numbers if math.isfinite(v)), default=0.0)
    if big == 0.0:
        return 1
    if not 1e-4 <= big < 1e5:
        return None
    return min(6, max(1, 2 - math.floor(math.log10(big))))


def grid(rows, mark=None) -> list:
    """``rows`` (lists of numbers, or texts such as ``·``) as right-aligned columns, one line per row.

    Every number of a grid has the same decimals, so that its columns line up and a glance compares them;
    ``mark``: ``(row, column)`` of a cell written in brackets.

    >>> grid([[0.0123, -0.5], [1.0, -0.0001]], mark=(1, 0))
    ['  0.01  -0.50', '[1.00]   0.00']
    """
    numbers = [float(v) for row in rows for v in row if not isinstance(v, str)]
    places = _decimals(numbers)
    texts = []
    for i, row in enumerate(rows):
        out = []
        for j, v in enumerate(row):
            text = v if isinstance(v, str) else fmt_number(v, 3) if places is None else f"{float(v):.{places}f}"
            if text.startswith("-") and not text.strip("-0."):
                text = text[1:]  # a tiny negative value rounds to 0, not -0
            out.append(f"[{text}]" if mark == (i, j) else text)
        texts.append(out)
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
