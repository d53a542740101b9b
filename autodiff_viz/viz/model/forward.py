"""Forward mode in the storyboard: the tangent rule's text of one step and the evaluation-trace table.

A ``ForwardAccumulator`` carries a tangent ``ẋ`` beside every value: for an
op ``y = f(a, b)`` it computes ``ẏ = ∂f/∂a · ȧ + ∂f/∂b · ḃ``.  The
``tangent`` events (:mod:`autodiff_viz.events`) hold each followed input's
term of that sum as the engine computed it, so the numbers written here are
the engine's own, and the sum a step writes adds up to the tangent it shows.
The panel is the textbook's evaluation trace: one row per value, its
expression, its primal and its tangent.

>>> from autodiff_viz import events as ev
>>> s = ev.summarize
>>> op = ev.Op(0, 1, node=5, op_type="Mul", inputs=(1, 1), output=2, in_values=(s(2.0), s(2.0)), value=s(4.0),
...            formula="a · b", partials=("b", "a"))
>>> t = ev.Tangent(1, 1, tensor=2, op_type="Mul", inputs=(1, 1), in_tangents=(s(1.0), s(1.0)),
...                terms=(s(2.0), s(2.0)), partials=(s(2.0), s(2.0)), tangent=s(4.0))
>>> for line in tangent_lines(op, t, {1: "x", 2: "y"}.get)[2:]:
...     print(line)
ẏ = ∂(a · b)/∂a · ȧ + ∂(a · b)/∂b · ḃ
  = b · ȧ + a · ḃ
  = 2.0 · 1.0 + 2.0 · 1.0 = 4.0
>>> trace_row("n1", "y", op, t, {1: "x"}.get)["expr"]
'x · x'
"""
from __future__ import annotations

import math
import re
import unicodedata

from ..text import words as W
from ..text.numbers import fmt_number, fmt_value, scalar
from . import nonfinite as _nonfinite

DOT = "\u0307"  # a combining dot above: ȧ is "a" + DOT, the textbook's tangent of a
_SLOT = re.compile(r"\b([a-h])\b")


def dotted(name: str) -> str:
    """The tangent's name of a value called ``name``: ``ẋ`` (one character, precomposed where Unicode has
    it); a longer name as ``(name)̇``."""
    return unicodedata.normalize("NFC", name + DOT) if len(name) == 1 else f"({name}){DOT}"


def tangent_lines(op, t, label_of) -> list:
    """The rule text of one forward step: the operands and their tangents, then ``ẏ = …`` three times,
    in symbols, in partial derivatives and in numbers (``op``: the op event, ``t``: its ``tangent`` event)."""
    n = len(t.inputs)
    expr = op.formula
    where = ", ".join(W.operand(i, label_of(tid) or f"tensor {tid}", _num(v))
                      for i, (tid, v) in enumerate(zip(t.inputs, op.in_values)))
    lines = [W.formula(op.op_type, f"y = {expr}" if expr else "") + (f"   with {where}" if where else "")]
    given = []
    for i in range(n):
        tan = t.in_tangents[i] if i < len(t.in_tangents) else None
        name = label_of(t.inputs[i]) or f"tensor {t.inputs[i]}"
        given.append(f"{dotted(W.slot(i))} = {fmt_value(tan)}" if tan is not None
                     else f"{dotted(W.slot(i))} = 0 ({name} is not followed)")
    lines.append(", ".join(given))
    followed = [i for i in range(n) if i < len(t.in_tangents) and t.in_tangents[i] is not None]
    if t.tangent is None:
        lines.append("no tangent: the output is not a floating-point value, or the op has no derivative")
        return lines
    # A tangent that is not finite: an input that is not followed still enters the sum with its zero tangent,
    # and where its slope is infinite (−a/b² at b = 0) that term is inf · 0, NaN: it is written out too.
    slopes = None if _nonfinite.finite(t.tangent) else _scalar_slopes(op)
    zeros = [j for j in range(n) if j not in followed and slopes and j < len(slopes) and not math.isfinite(slopes[j])]
    shown = sorted(followed + zeros)
    # a formula in words ("conv2d(x, W): each output Σ patch · W") is not written inside ∂(…)
    parts = [f"{W.partial_name(expr, op.op_type, i) if ': ' not in (expr or '') else '∂y/∂' + W.slot(i)} · "
             f"{dotted(W.slot(i))}" for i in shown]
    lines.append("ẏ = " + " + ".join(parts))
    # a rule written as the backward pass computes it ("… ⊗ upstream") is no partial to multiply by a tangent
    if op.partials and all(i < len(op.partials) and op.partials[i] and "upstream" not in op.partials[i]
                           for i in shown):
        lines.append("  = " + " + ".join(f"{_paren(op.partials[i])} · {dotted(W.slot(i))}" for i in shown))
    numbers = []
    for i in shown:
        if i in zeros:
            numbers.append(f"{fmt_number(slopes[i])} · 0")
            continue
        term = t.terms[i] if i < len(t.terms) else None
        tan = scalar(t.in_tangents[i])
        local = scalar(t.partials[i]) if i < len(t.partials) and t.partials[i] is not None else None
        if local is not None and math.isnan(local) and slopes and i < len(slopes) and not math.isnan(slopes[i]):
            # (the engine's partial pushes a unit tangent beside the zero ones: the inf · 0 above made it NaN)
            local = slopes[i]
        numbers.append(f"{fmt_number(local)} · {_factor(tan)}" if local is not None
                       else fmt_value(term) if term is not None else None)
    total = fmt_value(t.tangent)
    if numbers and None not in numbers:
        lines.append("  = " + " + ".join(numbers) + (f" = {total}" if len(numbers) > 1 or " · " in numbers[0]
                                                     else ""))
    else:
        lines.append(f"  = {total}")
    return lines


def _scalar_slopes(op) -> list | None:
    """Each input's local derivative as a float, from the slope table (scalar ops of the table only)."""
    slopes = _nonfinite.local_values(op)
    if slopes is None or any(v.size != 1 for v in slopes):
        return None
    return [float(v.reshape(-1)[0]) for v in slopes]


def trace_row(key: str, name: str, op, t, label_of) -> dict:
    """One row of the evaluation-trace table: ``{key, name, expr, value, tangent}``; ``op`` is ``None``
    for a primal (``t.value`` then holds nothing: the caller passes the primal's value as ``op``'s stand-in)."""
    names = [label_of(i) or f"tensor {i}" for i in t.inputs]
    if op is None or not t.inputs:
        expr = "primal"
    elif op.formula:
        expr = _SLOT.sub(lambda m: names[W.LETTERS.index(m[1])] if W.LETTERS.index(m[1]) < len(names) else m[1],
                         op.formula)
    else:
        expr = f"{op.op_type}({', '.join(names)})"
    return {"key": key, "name": name, "expr": expr, "value": fmt_value(op.value) if op is not None else "",
            "tangent": fmt_value(t.tangent) if t.tangent is not None else "—"}


def _num(v) -> str:
    x = scalar(v)
    return fmt_number(x) if x is not None else (fmt_value(v) if v is not None else "")


def _paren(sym: str) -> str:
    """A partial derivative's formula as a factor: ``b`` stays, ``1 - y²`` becomes ``(1 - y²)``."""
    return sym if re.fullmatch(r"[\w.²³⁻¹]+|\w*\([^()]*\)", sym) else f"({sym})"


def _factor(x: float) -> str:
    """A number as a factor of a product: ``(-0.4161)`` in brackets when negative."""
    text = fmt_number(x)
    return f"({text})" if text.startswith("-") else text


TANGENT_MARK = "  ẋ "  # between a box's value and its tangent; renderers colour what follows it


def with_tangent(value: str, t, text) -> str:
    """A box's value text, with its tangent beside it in forward mode: ``4.0  ẋ 4.0``."""
    return f"{value}{TANGENT_MARK}{text(t.tangent)}" if t is not None and t.tangent is not None else value


def is_forward(model, raw) -> bool:
    """Whether the tape numbered ``raw`` in the events is a ForwardAccumulator."""
    return any(t.raw == raw and t.forward for t in model.tapes)
