"""How every view writes a number, a shape and a tensor's value.

The browser widgets write the numbers they compute themselves (a plot's
ticks, an explorer's readout) with the same rules: ``common.js``'s ``fmt``
follows :func:`fmt_number` and receives :data:`DIGITS` from
:func:`js_constants`; the browser tests hold the two to the same strings.

>>> fmt_number(12.0), fmt_number(3), fmt_number(0.123456), fmt_number(1.5e-7)
('12.0', '3', '0.1235', '1.5e-7')
>>> from autodiff_viz.events import summarize
>>> import numpy as np
>>> fmt_value(summarize(np.array([1.0, 2.0]))), fmt_box(summarize(np.zeros((4, 4))))
('[1.0, 2.0]', '4×4 values, mean 0.0')
"""
from __future__ import annotations

import math
import re

from ...events import HEAD

FULL_ITEMS = 12  # a tensor of up to this many values is shown whole in a graph's box
DIGITS = 4       # significant digits of a number written on its own


def fmt_number(x, digits: int = DIGITS) -> str:
    """A number as every view writes it: integers as integers, floats keep a ``.0`` (as TF prints them)."""
    if x is None:
        return "?"
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    s = f"{x:.{digits}g}"
    if "e" in s:
        mant, exp = s.split("e")
        return f"{mant}e{int(exp)}"
    if s in ("-0", "0"):
        return "0.0"
    return s if "." in s else s + ".0"


def _nested(v, digits, dtype):
    if isinstance(v, list):
        return "[" + ", ".join(_nested(x, digits, dtype) for x in v) + "]"
    if dtype.startswith(("int", "uint")):
        return str(int(v))
    if dtype == "bool":
        return "True" if v else "False"
    return fmt_number(v, digits)


def fmt_shape(shape, dtype="") -> str:
    """``(2, 3) float32``; ``(3,)`` for a vector."""
    dims = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    return f"{dims} {dtype}" if dtype else dims


def fmt_value(s, digits: int = 4, max_items: int = 4, spread: bool = False) -> str:
    """A value summary on one line: ``6.0``, ``[2.0, 6.0]``, ``2×3 values, mean 0.5``.

    ``spread``: a large array as ``2×3: min -1.0 · max 3.0 · mean 0.5``.
    """
    if s is None:
        return ""
    if s.size == 0:
        return "[]"
    if s.complete and s.size == 1:
        return _nested(s.head[0], digits, s.dtype)
    if s.complete and s.size <= max_items:
        text = _nested(s.array().tolist(), digits, s.dtype)
        if len(text) <= 32:
            return text
    dims = "×".join(str(d) for d in s.shape)
    if spread:
        return f"{dims}: min {fmt_number(s.min, 3)} · max {fmt_number(s.max, 3)} · mean {fmt_number(s.mean, 3)}"
    return f"{dims} values, mean {fmt_number(s.mean, 3)}"


def fmt_full(s, digits: int = 6) -> str:
    """Every value a summary keeps, nested as NumPy prints them: ``[[1.0, 2.0], [3.0, 4.0]]``.

    A tensor larger than the summary (more than ``events.HEAD`` values) shows
    its first values in row-major order, then ``…``.

    >>> from autodiff_viz.events import summarize
    >>> import numpy as np
    >>> fmt_full(summarize(np.array([[1.0, 2.0], [3.0, 4.0]]))), fmt_full(summarize(np.arange(40)))[-12:]
    ('[[1.0, 2.0], [3.0, 4.0]]', '13, 14, 15 …')
    """
    if s is None:
        return ""
    if s.size == 0:
        return "[]"
    if s.complete and s.size <= HEAD:
        return _nested(s.array().tolist(), digits, s.dtype)
    return ", ".join(_nested(v, digits, s.dtype) for v in s.head[:HEAD]) + " …"  # (a window op's head is longer)


def fmt_box(s, digits: int = DIGITS, max_items: int = FULL_ITEMS) -> str:
    """A value as a box shows it, in a graph and in the player alike: :func:`fmt_lines` joined by
    newlines (a tensor of up to ``max_items`` values whole, a larger one in words).

    >>> from autodiff_viz.events import summarize
    >>> import numpy as np
    >>> fmt_box(summarize(np.array([[1.0, 2.0], [3.0, 4.0]])))
    '[[1.0, 2.0],\\n [3.0, 4.0]]'
    >>> fmt_box(summarize(np.float32(1 / 3)), digits=2), fmt_box(summarize(np.arange(3.0)), max_items=2)
    ('0.33', '3 values, mean 1.0')
    """
    return "\n".join(fmt_lines(s, digits, max_items))


def fmt_lines(s, digits: int = 4, max_items: int = FULL_ITEMS, width: int = 40) -> list:
    """A value as a graph's box shows it, line by line: a small tensor whole (a matrix one row per
    line, as NumPy prints it; a column across, wrapped at ``width`` characters), a larger one in
    words (``2×8 values, mean 0.0116``).

    >>> from autodiff_viz.events import summarize
    >>> import numpy as np
    >>> fmt_lines(summarize(np.arange(6.0).reshape(2, 3)))
    ['[[0.0, 1.0, 2.0],', ' [3.0, 4.0, 5.0]]']
    >>> fmt_lines(summarize(np.ones((4, 4)))), fmt_lines(summarize(np.float32(2.5)))
    (['4×4 values, mean 1.0'], ['2.5'])
    >>> fmt_lines(summarize(np.arange(4.0).reshape(4, 1)))  # a column is written across
    ['[[0.0], [1.0], [2.0], [3.0]]']
    """
    if s is None:
        return []
    if s.size == 0 or s.size == 1 or not s.complete or s.size > max_items:
        return [fmt_value(s, digits, max_items=1)]
    values = s.array()
    if values.ndim == 1:
        return _wrapped("[", [_nested(v, digits, s.dtype) for v in values.tolist()], "]", width)
    if values.shape[-1] == 1 and values.ndim == 2:  # a column: its rows side by side, wrapped
        return _wrapped("[", [f"[{_nested(v, digits, s.dtype)}]" for v in values[:, 0].tolist()], "]", width)
    rows = values.reshape(-1, values.shape[-1])
    lead = values.shape[:-1]
    lines = []
    for r, row in enumerate(rows.tolist()):
        index = _unravel(r, lead)
        opens = 1 + _run(index, [0] * len(lead))
        closes = 1 + _run(index, [d - 1 for d in lead])
        text = " " * (values.ndim - opens) + "[" * opens + ", ".join(_nested(v, digits, s.dtype) for v in row)
        lines.append(text + "]" * closes + ("," if r < len(rows) - 1 else ""))
    return lines


def _unravel(r, shape):
    index = []
    for d in reversed(shape):
        index.append(r % d)
        r //= d
    return index[::-1]


def _run(index, edge):
    """How many trailing entries of ``index`` equal ``edge`` (the rows that open or close a bracket)."""
    k = 0
    while k < len(index) and index[-1 - k] == edge[-1 - k]:
        k += 1
    return k


def _wrapped(open_, items, close, width):
    lines, line = [], open_
    for i, item in enumerate(items):
        piece = item + (", " if i < len(items) - 1 else close)
        if len(line) + len(piece.rstrip()) > width and line.strip(open_ + " "):
            lines.append(line.rstrip())
            line = " " * len(open_)
        line += piece
    return lines + [line]


_NONFINITE = re.compile(r"(^|[^a-z])(nan|-?inf)([^a-z]|$)")


def shows_nonfinite(text: str) -> bool:
    """Whether a written value holds a NaN or an inf (views draw those in their own look).

    ``animate.js`` tests its texts with the same pattern (``NONFINITE``).

    >>> shows_nonfinite("[nan, -2.0]"), shows_nonfinite("-inf"), shows_nonfinite("2×3, mean 0.5")
    (True, True, False)
    """
    return bool(_NONFINITE.search(text))


def scalar(s):
    """The float a one-element summary holds, else ``None``."""
    return float(s.head[0]) if s is not None and s.size == 1 and s.head else None


def js_constants() -> str:
    """The number rules' one setting as a JavaScript constant for the widgets' module (``common.js``'s ``fmt``)."""
    return f"const NUMBER_DIGITS = {DIGITS};\n"
