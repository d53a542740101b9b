"""What a graph's boxes say: a node's label (its name, shape, value, gradients, notes) as a Graphviz
HTML-like table, and its tooltip; the writer of :mod:`.dot` asks for them.

Every piece of text goes through :mod:`..text.labels` (:func:`esc`): cleaned,
shortened and escaped, so a name such as ``<script>`` stays text.  A label
keeps within :data:`NODE_LABEL_BUDGET` characters (Graphviz reads at most
16,384), with a row that says how many rows were left out.

>>> esc("<b>")
'&lt;b&gt;'
"""
from __future__ import annotations

from ..model import graph as M
from ..model.nonfinite import finite
from ..text import labels as L
from ..text.numbers import fmt_lines, fmt_shape
from ..text.numbers import fmt_value as _fmt_value
from ..text.words import leave_caption, tape_name
from . import look as _look
from .look import DIM, GREY, PALETTE

VERMILLION = PALETTE["vermillion"]
NONFINITE = _look.NONFINITE_TEXT  # NaN and inf, wherever a box writes them
NODE_LABEL_BUDGET = 12_000  # escaped characters in a node's label; rows past it are left out
NOTE_LINES = 3  # a note wraps over at most this many lines
LEFT = '<br align="left"/>'
NBSP = "\u00a0"  # a space that starts a run of text (SVG drops a plain one there)
_TABLE = '<table border="0" cellborder="0" cellspacing="0" cellpadding="0">'
_LINES = ' balign="left"'  # a cell whose lines (a matrix, a wrapped note) start at one left edge


def esc(text, limit: int = L.LINE_LIMIT, where: str = "middle") -> str:
    """Text for an HTML-like Graphviz label (and thus for the SVG it becomes): cleaned, shortened, escaped."""
    return L.for_dot_html(text, limit, where=where)


def esc_name(text) -> str:
    """A name in bold or italics (a box's title, a scope's label): :func:`esc`, and never empty.

    Graphviz refuses an empty ``<b></b>`` or ``<i></i>``; a name that cleans
    to nothing (``""``, a lone surrogate, the empty part of ``"a//b"`` in a
    loaded trace's scope) is drawn as ``(no name)``.

    >>> esc_name("<x>"), esc_name(chr(0xDFFF))
    ('&lt;x&gt;', '(no name)')
    """
    return esc(text) or "(no name)"


def within(rows: list, budget: int, more) -> list:
    """The first rows whose total length stays within ``budget``, then ``more(n_left_out)``."""
    out, used = [], 0
    for i, row in enumerate(rows):
        used += len(row) if isinstance(row, str) else sum(len(part) for part in row)
        if used > budget and out:
            return out + [more(len(rows) - i)]
        out.append(row)
    return out


def fmt_value(s, digits: int = 4, max_items: int = 4) -> str:
    """A value in a graph's box: as every view writes it, with the spread of a large array."""
    return _fmt_value(s, digits, max_items, spread=True)


def _floating(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat", "complex", "half", "double"))


def meta(w, n: M.Node) -> str:
    """The shape line: everything in full detail; else the shape of non-scalars, the dtype where it matters."""
    if w.full:
        return fmt_shape(n.shape, n.dtype)
    dtype = n.dtype if n.dtype and (len(w.dtypes) > 1 or not _floating(n.dtype)) else ""
    return " ".join(t for t in (fmt_shape(n.shape) if n.shape else "", dtype) if t)


def label(w, n: M.Node) -> str:
    rows = []
    dim = n.dimmed and not n.broken
    sub = DIM if dim else GREY
    small = f'<font point-size="9" color="{sub}">'
    if n.kind == M.SCOPE:
        rows.append(f"<b>{'⚠ ' if n.nonfinite else ''}{esc_name(n.label)}</b>")
        types = ", ".join(L.shorten(L.clean(t), 24) for t in n.op_types[:4])
        types = esc(types + (", …" if len(n.op_types) > 4 else ""), where="end")
        if n.members:  # a folded middle may hold only inputs
            rows.append(f"{small}{len(n.members)} ops: {types}</font>")
        shape = meta(w, n)
        if shape:
            rows.append(f"{small}out {esc(shape, L.TITLE_LIMIT)}</font>")
    elif n.kind == M.NUMPY:
        rows.append('<b>left the package</b>')
        rows.append(f'<font point-size="9">{esc(leave_caption(n.op or "numpy"))}: the tape stops here</font>')
    else:
        cue = "✗ " if n.broken else "⚠ " if n.nonfinite else ""  # a shape cue beside the colour
        title = f"<b>{cue}{esc_name(n.label)}</b>"
        if n.kind in (M.OP, M.SKIPPED) and n.op and n.op != n.label:  # the user's name, then the op
            title += f'<font color="{sub}">{NBSP}· {esc(n.op)}</font>'
        if n.kind == M.SKIPPED:
            title += f'<font point-size="9">{NBSP}(skipped)</font>'
        rows.append(title)
        shape = meta(w, n)
        if shape:
            rows.append(f"{small}{esc(shape, L.TITLE_LIMIT)}</font>")
    if n.seed_of is not None:
        w.present.add("seed")
    if w.values and n.value is not None and n.kind not in (M.NUMPY,):
        rows.append(_block("= ", value_lines(w, n.value), None if finite(n.value) else NONFINITE))
    if w.values and n.tangent is not None and n.kind not in (M.NUMPY,):  # forward mode: ẋ under the value
        w.present.add("tangent")
        rows.append(_block("ẋ ", value_lines(w, n.tangent), DIM if dim else _look.TANGENT if finite(n.tangent)
                           else NONFINITE))
    color = DIM if dim else NONFINITE if n.nonfinite and not n.broken else VERMILLION
    for key, g in n.grads.items():
        who = f" {w.call_tag(key)}" if w.many_grads else ""
        rows.append(_block(f"∂{who} ", value_lines(w, g), DIM if dim else _look.GRADIENT if finite(g) else NONFINITE))
    if not n.grads and n.on_path and w.m.traced and n.kind not in (M.NUMPY,):
        w.present.add("nograd")
        rows.append(f'<font color="{GREY}"><i>∂ not computed yet</i></font>')
    footer = tags(w, n)
    if footer:
        rows.append(f'<font point-size="8" color="{sub}">{esc(" · ".join(footer), L.TITLE_LIMIT, "end")}</font>')
    for note in n.notes:
        if n.kind == M.SCOPE:
            continue
        text = L.for_dot_html(note, L.LINE_LIMIT, max_lines=NOTE_LINES, wrap=True, where="end")
        rows.append(f'<font point-size="8" color="{color}">{text}</font>')
    rows = within(rows, NODE_LABEL_BUDGET,
                   lambda k: f'<font point-size="8" color="{sub}">… {k} more rows</font>')
    return _node_table(rows)


def value_lines(w, s) -> list:
    if w.full and not (s.complete and s.size <= w.max_items):  # the spread of a large array
        return [esc(fmt_value(s, w.digits), L.TITLE_LIMIT)]
    return [esc(line, L.TITLE_LIMIT) for line in fmt_lines(s, w.digits, w.max_items)]


def tags(w, n: M.Node) -> list:
    if not w.full:  # the border and the legend say how a leaf is watched
        return ["trainable=False"] if n.kind == M.VARIABLE and n.watched is None and not n.trainable else []
    tags = []
    if n.role:
        tags.append(n.role)
    if n.kind == M.VARIABLE:
        if n.watched == "auto":
            tags.append("variable, watched on read")
        elif n.watched == "explicit":
            tags.append("variable, tape.watch")
        else:
            tags.append("variable, not watched" + ("" if n.trainable else " (trainable=False)"))
    elif n.kind == M.WATCHED:
        tags.append("primal, forward mode" if n.watched == "primal" else "tape.watch")
    elif n.kind == M.CONSTANT:
        tags.append("not watched")
    if w.many_tapes and n.tapes:
        tags.append("on " + " ".join(tape_name(t) for t in n.tapes))
    return tags


def tooltip(w, n: M.Node) -> str:
    bits = [n.label]
    if n.op and n.op != n.label:
        bits.append(n.op)
    bits.append(fmt_shape(n.shape, n.dtype))
    if n.value is not None and n.value.size > 1:
        bits.append(fmt_value(n.value, w.digits))
    if n.scope:
        bits.append(f"scope {n.scope}")
    return " | ".join(bits)


def _block(prefix, lines, color=None):
    """``= 3.0`` as one row; a matrix as ``(prefix, rows)``: the prefix in a cell of its own, so every
    row of the matrix starts at one left edge (see :func:`_node_table`).  NaN and inf are bold."""
    font = (f'<font color="{color}">', "</font>") if color else ("", "")
    if color == NONFINITE:
        font = (font[0] + "<b>", "</b>" + font[1])
    if len(lines) == 1:
        return f"{font[0]}{prefix}{lines[0]}{font[1]}"
    body = "<br/>".join(line.replace(" ", NBSP, 1) if line.startswith(" ") else line for line in lines)
    return f"{font[0]}{prefix.strip()}{NBSP}{font[1]}", f"{font[0]}{body}{font[1]}"


def _node_table(rows) -> str:
    """A node's label: one row per line of text; matrices (``(prefix, rows)``) in two columns, the
    prefix right-aligned beside rows aligned on the left, so the block stays centred in the box."""
    two = any(isinstance(r, tuple) for r in rows)
    out = []
    for r in rows:
        if isinstance(r, tuple):
            out.append(f'<tr><td align="right" valign="top">{r[0]}</td><td align="left"{_LINES}>{r[1]}</td></tr>')
        else:
            span = ' colspan="2"' if two else ""
            out.append(f'<tr><td{span}{_LINES if "<br/>" in r else ""}>{r}</td></tr>')
    return _TABLE + "".join(out) + "</table>"
