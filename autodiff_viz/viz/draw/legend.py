"""A graph's legend: a box drawn in each look the picture uses, with its words from the look table
(:mod:`.look`), then the rows that explain the ``∂`` numbers; the writer of :mod:`.dot` lays it out.

>>> from autodiff_viz.viz.draw.look import LOOKS
>>> swatch(LOOKS["target"], "target")
'<td border="3" color="#D55E00" bgcolor="#FFFFFF" cellpadding="3"><font point-size="10">target</font></td>'
"""
from __future__ import annotations

from ..text import labels as L
from ..text.numbers import fmt_lines
from . import look as _look
from . import weight as _weight
from .boxes import NBSP, esc
from .look import GREY, LOOKS

# How a graph shows a mark that a border tells apart: the legend says it.
MARK_CUES = {"source": "double border", "target": "thick border"}


ORDER = ("variable", "variable_unwatched", "watched", "constant", "op", "rule_op", "skipped", "numpy", "scope",
         "source", "target", "path", "dimmed", "backward_pass", "broken", "nonfinite")


def entries(w, compact: bool = False) -> list:
    """For the DOT writer ``w``: ``(cell, text, wide)`` for the looks the picture uses (each a box drawn in that style with its
    meaning inside), then the rows that explain the ``∂`` numbers (``wide``: across the legend).

    ``compact``: each box holds only its look's word (``"target"``, ``"path"``), and one box in the
    gradient's colour stands for the ``∂`` rows: a legend for a small graph or a slide.
    """
    present = w.present
    if compact:
        return compact_entries(w)
    target = [n.label for n in w.m.nodes if n.role == "target"]
    of = f"the target {L.shorten(L.clean(target[0]), 24)}" if len(target) == 1 else "the target"
    says = {"broken": f"✗ {w.mark_legend}", **{k: f"{LOOKS[k].says} ({cue})" for k, cue in MARK_CUES.items()}}
    if w.full:
        says["variable"] = "variable, watched on read"
    if w.m.forward_only({t for n in w.m.nodes if n.kind == "op" for t in n.tapes}):  # no tape: forward mode only
        says["op"] = "op the ForwardAccumulator carried a tangent through"
    rules = {t for n in w.m.nodes if n.backward_of is not None for t in n.tapes}
    if w.m.forward_only(rules):  # forward over backward: the accumulator carries the rules' ops
        says["rule_op"] = "op of a rule, run inside the ForwardAccumulator"
        says["backward_pass"] = "backward pass run inside the ForwardAccumulator"
    primal = _primals(w)
    if primal:  # forward mode follows its primals as a tape follows what it watches
        says["watched"] = "primal of a ForwardAccumulator" + (" or tensor passed to tape.watch" if primal == "some"
                                                               else "")
    out = []
    for key in ORDER:
        if key in present:
            lk = LOOKS[key]
            text = esc(says.get(key, lk.says), L.TITLE_LIMIT, "end")
            out.append((swatch(lk, text), text, False))
    grad = f'<font color="{_look.GRADIENT}">'
    if "grad" in present:
        text = f"in a box: the gradient of {of} with respect to that tensor" + _here(*box_example(w))
        out.append((f"{grad}∂</font>{NBSP}{_wrapped(text)}", f"∂ {text}", True))
    if _jacobian(w) and ("grad" in present or w.edge_labels):
        text = JACOBIAN_ROWS.format(of=of)
        out.append((f"{grad}∂ [[…], […]]</font>{NBSP}{_wrapped(text)}", f"∂ [[…], […]] {text}", True))
    if w.edge_labels:
        text = ("on an arrow: the gradient the backward pass sent back along it"
                + _here(w.edge_example if len(w.edge_example) <= EXAMPLE_CHARS else ""))
        out.append((f"{grad}∂</font>{NBSP}{_wrapped(text)}", f"∂ {text}", True))
    if w.weights:
        text = _weight.legend_text([v for k, v in enumerate(w.sizes) if k in w.weights], w.digits)
        out.append((_wrapped(text), text, True))
    seeds = sorted({n.seed_of for n in w.m.nodes if n.seed_of is not None}) if "seed" in present else []
    for t in seeds:
        t = L.shorten(L.clean(t), 24)
        text = f"∂{t}/∂{t} = 1: the seed, the gradient of {t} with respect to itself, where the backward pass starts"
        out.append((esc(text, L.TITLE_LIMIT), text, True))
    if w.many_grads:
        tag, text = (("T1#2", "computed by tape T1's 2nd gradient() call") if w.many_calls
                     else ("T2", "computed by the gradient() call of tape T2"))
        out.append((f"{grad}∂ {tag}</font>: {text}", f"∂ {tag}: {text}", True))
    if "tangent" in present:
        out.append(_tangent_entry(w, wide=True))
    if "nograd" in present:
        text = "no gradient() call has reached this tensor yet (a gradient of 0 shows ∂ 0.0)"
        out.append((f'<font color="{GREY}"><i>∂ not computed yet</i></font>: {text}', f"∂ not computed yet: {text}",
                    True))
    return out


# The compact legend's order: what a reader needs first comes first, so that a legend cut short to fit a
# small graph keeps it.
COMPACT_ORDER = ("broken", "nonfinite", "target", "source", "path", "grad", "tangent", "calls", "variable", "watched",
                 "constant", "op",
                 "variable_unwatched", "rule_op", "skipped", "numpy", "scope", "dimmed", "backward_pass")


def compact_entries(w) -> list:
    """The compact legend's boxes (see :func:`entries`): a look's word in a box drawn in that look, the
    ``∂`` numbers in one box, what a mark means in full; most needed first (:data:`COMPACT_ORDER`)."""
    out = []
    grad = f'<font color="{_look.GRADIENT}">'
    for key in COMPACT_ORDER:
        if key == "grad" and ("grad" in w.present or w.edge_labels):
            if _jacobian(w):
                ex, says = " [[…]]", "Jacobian"
            else:
                ex, says = box_example(w)[0], "gradient"
                ex = f" {esc(ex)}" if ex else ""
            text = f"{grad}∂{ex}</font>{NBSP}{says}"
            out.append((f'<td border="0" cellpadding="3"><font point-size="10">{text}</font></td>', f"∂{ex} {says}",
                        False))
        elif key == "tangent" and "tangent" in w.present:
            out.append(_tangent_entry(w, wide=False))
        elif key == "calls" and w.many_grads:
            tag, text = (("T1#2", "tape T1's 2nd gradient() call") if w.many_calls else ("T2", "tape T2's gradient()"))
            out.append((f'<td border="0" cellpadding="3"><font point-size="10">{grad}∂ {tag}</font>: {text}</font></td>',
                        f"∂ {tag}: {text}", False))
        elif key in w.present and key in LOOKS:
            word = (f"✗ {w.mark_legend}" if key == "broken" else "primal" if key == "watched" and _primals(w) == "all"
                    else LOOKS[key].word)
            text = esc(word, L.TITLE_LIMIT, "end")
            out.append((swatch(LOOKS[key], text), text, False))
    return out


def _wrapped(text: str) -> str:
    """A sentence across the legend, on more lines where long (never cut in its middle)."""
    return L.for_dot_html(text, L.TITLE_LIMIT, max_lines=3, wrap=True, where="end", br='<br align="left"/>')


# What a box or arrow shows after jacobian()/batch_jacobian(): one backward pass per element of the target.
JACOBIAN_ROWS = ("after jacobian(): the Jacobian of {of} with respect to that tensor, row i from the backward "
                 "pass of the target's element i")


def _jacobian(w) -> bool:
    """Whether the picture shows a Jacobian call's rows (see :mod:`..model.rows`)."""
    return any(g.rows for g in w.m.gradients)


def _primals(w) -> str:
    """Whether the picture's green boxes are a ForwardAccumulator's primals: ``"all"``, ``"some"`` or ``""``."""
    primal = {n.watched == "primal" for n in w.m.nodes if n.kind == "watched"}
    return "" if True not in primal else "some" if False in primal else "all"


def _tangent_entry(w, wide: bool) -> tuple:
    """The legend's ``ẋ`` entry, with a tangent taken from the picture itself."""
    example = next(n.tangent for n in w.m.nodes if n.tangent is not None)
    written = fmt_lines(example, w.digits)[0]
    shown = esc(written, 24)
    tangent = f'<font color="{_look.TANGENT}">ẋ {shown}</font>'
    if not wide:
        return (f'<td border="0" cellpadding="3"><font point-size="10">{tangent}{NBSP}tangent</font></td>',
                f"ẋ {written} tangent", False)
    text = ("in a box: the tangent of that tensor (forward mode): how fast it changes when the "
            "ForwardAccumulator's primals move along the tangents given")
    return f"{tangent}{NBSP}{text}", f"ẋ {written} {text}", True


EXAMPLE_CHARS = 12  # a legend's example number no longer than this; else the legend shows none


def box_example(w) -> tuple[str, str]:
    """A gradient the picture shows in a box, for the legend to point at: ``("6.0", "x")`` (its text
    and the box's name), a source's one-number gradient first, else any box's; ``("", "")`` when
    the picture has none (the legend then shows no number, never one that is not in the picture)."""
    nodes = w.m.nodes
    for n in [n for n in nodes if n.watched is not None] + list(nodes):
        for key, g in n.grads.items():
            if g is not None and g.size == 1 and g.complete and w.values and not n.dimmed:
                text = fmt_lines(g, w.digits)[0]
                if len(text) <= EXAMPLE_CHARS:  # written as the box writes it, with its call's tag
                    return (f"{w.call_tag(key)} " if w.many_grads else "") + text, n.label
    return "", ""


def _here(number: str, at: str = "") -> str:
    """`` (here ∂ 6.0 at x)``: where the picture shows such a number; nothing without one."""
    if not number:
        return ""
    return f" (here ∂ {number}{' at ' + L.shorten(L.clean(at), 24) if at else ''})"


def swatch(lk, text) -> str:
    """A legend cell: a box drawn as the nodes of one look are (fill, border, dashes, rounding, weight,
    a double border), with what the look means inside."""
    inner = f'<font point-size="10">{text}</font>'
    if lk.cue == "double":
        return (f'<td cellpadding="0"><table border="1" color="{lk.border}" cellborder="1" cellspacing="1" '
                f'cellpadding="2"><tr><td color="{lk.border}" bgcolor="{lk.fill}">{inner}</td></tr></table></td>')
    style = ",".join((["rounded"] if lk.cue == "rounded" else []) + (["dashed"] if lk.dash else []))
    st = f' style="{style}"' if style else ""
    return f'<td border="{max(1, int(lk.width))}" color="{lk.border}" bgcolor="{lk.fill}"{st} cellpadding="3">{inner}</td>'


def rows(entries, cols, spacer: int = 0) -> list:
    """The legend as rows of the picture's heading table (``cols`` columns wide); ``spacer``: points of
    empty cell after each row of boxes, which takes the room a wider title leaves (Graphviz would
    otherwise stretch the boxes to the title's width)."""
    boxes = [cell for cell, _, wide in entries if not wide]
    wide = [cell for cell, _, w in entries if w]
    end = f'<td width="{spacer}"></td>' if spacer else ""
    rows = ["<tr>" + "".join(boxes[i:i + cols]) + end + "</tr>" for i in range(0, len(boxes), cols)]
    rows += [f'<tr><td align="left" balign="left" colspan="{cols + bool(spacer)}"><font point-size="10">{cell}</font></td></tr>'
             for cell in wide]
    return rows
