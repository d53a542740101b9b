"""The side panel of an animation's frames: a step's title, its rule and the table of gradients as
lines of text, each in its style, and where each line goes.

The words come from the storyboard (:mod:`..model.story`); this module only
fits them: wraps and shortens them (:mod:`..text.labels`), chooses which rows
of a long table to show, and stacks the lines.  Sizes are in points, places
in pixels (``px`` pixels per point).

>>> lines, rows = side_text({"lines": ["y = x · x"], "panel": [{"name": "x", "total": "6.0", "terms": ["3.0", "3.0"],
...                         "fresh": True}], "results": None})
>>> lines, rows[1]
(['y = x · x'], ('fresh', '▸ x               6.0   = 3.0 + 3.0'))
"""
from __future__ import annotations

import textwrap
import unicodedata

from ..text import labels as _labels
from .look import GRADIENT, GREY, INK, TANGENT

MONO = "DejaVu Sans Mono"
# Text sizes in points, and line pitch as a multiple of the size.
HEAD_PT, TITLE_PT, LINES_PT, PANEL_PT, KEY_PT, COUNTER_PT = 17.0, 15.0, 11.5, 12.0, 11.0, 12.0
TITLE_SPACING, LINES_SPACING, PANEL_SPACING = 1.25, 1.4, 1.45
# The side panel: at most this many title lines, rule lines and table rows (a longer table shows its fresh
# and latest rows); its width fits its longest line, between MIN_SIDE_CHARS and WRAP characters.
MAX_TITLE_LINES, MAX_LINES, MAX_ROWS, MAX_RESULTS, WRAP, MIN_SIDE_CHARS = 3, 18, 24, 6, 58, 36
# A word (a name, usually) longer than WORD_LIMIT characters is shortened before the rule's lines wrap,
# a name in the table to NAME_LIMIT, a row of the table to ROW_LIMIT.
WORD_LIMIT, NAME_LIMIT, ROW_LIMIT = 40, 20, 62
PROSE_MIN = 40  # a shorter line (a formula: "y = a · b") is never joined to the next

# The side panel's kinds of line: font size, family, weight, colour.
LINE_STYLE = {
    "title": (TITLE_PT, "sans-serif", "bold", INK),
    "rule": (LINES_PT, MONO, "normal", INK),
    "head": (PANEL_PT, "sans-serif", "bold", INK),
    "row": (PANEL_PT, MONO, "normal", INK),
    "fresh": (PANEL_PT, MONO, "bold", GRADIENT),  # a total that just changed: a gradient's colour
    "tangent": (PANEL_PT, MONO, "bold", TANGENT),  # a row of the evaluation trace that just came (forward mode)
    "note": (PANEL_PT, "sans-serif", "normal", GREY),
    "result": (PANEL_PT, MONO, "bold", INK),
    "counter": (COUNTER_PT, "sans-serif", "normal", GREY),
    "key": (KEY_PT, "sans-serif", "normal", INK),
}
PITCH = {"title": TITLE_PT * TITLE_SPACING, "rule": LINES_PT * LINES_SPACING}


def cells(text: str) -> int:
    """Width of ``text`` in monospace cells (East Asian wide characters take two)."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def side_text(st) -> tuple:
    """A step's side panel as text: the rule's lines (wrapped), and the table and results as
    ``(style, text)`` rows."""
    wrapped = []
    for part in paragraphs(st["lines"]):
        part = _labels.shorten_words(part, WORD_LIMIT)
        wrapped.extend(textwrap.wrap(part, WRAP, subsequent_indent="   ") or [""])
    if len(wrapped) > MAX_LINES:
        wrapped = wrapped[:MAX_LINES - 1] + ["…"]
    rows = []
    if st.get("trace"):
        rows.append(("head", "Evaluation trace (forward mode)"))
        for r in st["trace"][-MAX_ROWS // 2:]:
            name = _labels.for_mpl(r["name"], NAME_LIMIT)
            row = f"{'▸' if r['fresh'] else ' '} {name:<8} {_labels.clean(r['value']):>10}  ẋ {_labels.clean(r['tangent'])}"
            rows.append(("tangent" if r["fresh"] else "row", _labels.shorten(row, ROW_LIMIT, "end")))
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
    said = set(wrapped)
    if st["results"] and not all(r in said for r in st["results"]):  # the last step's lines may list them
        results = [_labels.shorten(_labels.shorten_words(r, WORD_LIMIT), ROW_LIMIT, "end") for r in st["results"]]
        if len(results) > MAX_RESULTS:
            results = results[:MAX_RESULTS - 1] + [f"… and {len(results) - MAX_RESULTS + 1} more"]
        rows.append(("row", ""))
        rows.extend(("result", r) for r in results)
    return wrapped, rows


def paragraphs(lines) -> list:
    """The storyboard's lines as paragraphs to wrap: a line of prose that runs on into the next (at least
    PROSE_MIN characters ending in a word or a comma, the next starting in lower case) is joined to it, so that one sentence split over two lines
    wraps as prose, not as two short lines each wrapped again.

    >>> paragraphs(["The tape runs its records: a rule runs only after every", "path has delivered.", "y = 2"])
    ['The tape runs its records: a rule runs only after every path has delivered.', 'y = 2']
    """
    out = []
    for line in lines:
        for part in _labels.clean(line, newlines=True).split("\n"):
            prev = out[-1] if out else ""
            if len(prev) >= PROSE_MIN and (prev[-1].isalpha() or prev[-1] == ",") and part[:1].islower():
                out[-1] = f"{out[-1]} {part}"
            else:
                out.append(part)
    return out


def wrap(text: str, measure, max_px: float) -> list:
    """``text`` as at most MAX_TITLE_LINES lines, each at most ``max_px`` wide by ``measure(line)``."""
    full = measure(text)
    if full <= max_px:
        return [text]
    chars = max(8, int(len(text) * max_px / full))
    while True:
        lines = textwrap.wrap(text, chars, break_on_hyphens=False) or [""]
        if chars <= 8 or all(measure(t) <= max_px for t in lines[:MAX_TITLE_LINES]):
            break
        chars -= max(1, chars // 10)
    if len(lines) > MAX_TITLE_LINES:
        lines = lines[:MAX_TITLE_LINES]
        lines[-1] = _labels.shorten(lines[-1] + " …", len(lines[-1]), "end")
    return lines


def pitch(style: str, px: float) -> int:
    """The distance in pixels from one line's baseline to the next, in ``style``."""
    return round(PITCH.get(style, PANEL_PT * PANEL_SPACING) * px)


def layout(side, px: float) -> tuple:
    """The side panel ``(titles, lines, rows)`` as ``[(slots, style, text, baseline)]``, baselines in
    pixels from its top, and its height in pixels."""
    titles, lines, rows = side
    out, y = [], 0

    def put(group, style, text, gap=0):
        nonlocal y
        y += (pitch(style, px) if out else round(LINE_STYLE[style][0] * px)) + gap
        out.append((group, style, text, y))

    for t in titles:
        put("title", "title", t)
    for n, t in enumerate(lines):
        put("rule", "rule", t, gap=round(0.4 * pitch("rule", px)) if n == 0 else 0)
    for n, (style, t) in enumerate(rows):
        put("rows", style, t, gap=round(0.6 * pitch("rule", px)) if n == 0 else 0)
    return out, y + round(0.35 * PANEL_PT * px)
