"""The player's text for one backward step: the op's rule with its numbers.

The formula and partial derivatives come from the op event (the table of primitives); every number is
read off the events, so the text says what the rule computed.

>>> import autodiff_viz as ad
>>> from autodiff_viz.viz.model.rule_text import local_derivative
>>> local_derivative(ad.events.summarize(2.0), ad.events.summarize(6.0))
3.0
"""
from __future__ import annotations

import math

import numpy as np

from ... import events as ev
from ..._shape import broadcast_axes
from ..text import words as W
from ..text.numbers import DIGITS, fmt_number, fmt_value, scalar
from . import nonfinite as _nonfinite


def local_derivative(upstream, sent):
    """What a rule multiplied the upstream gradient by, read off the step (sent ÷ upstream; finite scalars only:
    inf ÷ inf would write NaN for the slope 0.5)."""
    u, g = scalar(upstream), scalar(sent)
    return g / u if g is not None and u is not None and u != 0.0 and math.isfinite(u) else None



def rule_lines(op: ev.Op, step: ev.BackwardStep, label_of, text=fmt_value, digits: int = DIGITS):
    """The local rule with its numbers, one line per input that receives a gradient.

    The formula and partial derivatives come from the op event (the table of
    primitives); the local derivative's value is read off the step itself
    (what was sent divided by what came in), so it is what the rule computed.
    Returns (lines, numbers) where numbers holds upstream, local derivatives
    and sent gradients as floats (None where not a scalar) for tests and plots.
    """
    expr, partials = op.formula, op.partials
    up = step.upstream
    u = scalar(up)
    numbers = {"upstream": u, "local": [], "sent": []}
    vals = [scalar(v) for v in op.in_values]
    slopes = _nonfinite.local_values(op) if u is None or not math.isfinite(u) else None  # slopes, elementwise
    where = ", ".join(W.operand(i, label_of(tid), fmt_number(vals[i], digits) if vals[i] is not None else "")
                      for i, tid in enumerate(op.inputs))
    name = W.op_name(op.op_type, op.attrs)
    lines = [W.formula(name, expr) + (f"   with {where}" if where else ""),
             f"upstream gradient = {text(up)}"]
    for i, (tid, g) in enumerate(zip(op.inputs, step.grads)):
        sym = partials[i] if i < len(partials) else None
        local = local_derivative(up, g)
        numbers["local"].append(local)
        numbers["sent"].append(scalar(g))
        if g is None:
            lines.append(W.nothing_sent(label_of(tid)))
            continue
        local_text = _local_text(slopes, i, up, g, text) if local is None and sym else None
        head, tail = W.rule_sentence(W.partial_name(expr, name, i), sym, local, text(up), text(g),
                                     label_of(tid), local_text)
        lines += [head, "   " + tail] if head else [tail]
        shape = tuple(op.in_shapes[i]) if i < len(op.in_shapes) else None
        axes = stretched_axes(shape, tuple(up.shape)) if shape is not None and up is not None else ()
        if axes and tuple(g.shape) == shape:
            lines.append(W.broadcast_sentence(label_of(tid), shape, up.shape, axes))
    return lines, numbers


def _local_text(slopes, i, up, g, text=fmt_value):
    """Input ``i``'s local derivative written out (``[inf, 2.0]``), only where upstream × it is what the rule
    sent, element by element: a rule that treats a point apart (a where inside it) is never misquoted."""
    if slopes is None or i >= len(slopes) or up is None or not up.complete or not g.complete:
        return None
    local = slopes[i]
    if not tuple(up.shape) == tuple(g.shape) == local.shape:
        return None
    with np.errstate(all="ignore"):
        product = up.array() * local
    if not np.allclose(product, g.array(), rtol=1e-3, atol=1e-6, equal_nan=True):
        return None
    return text(ev.summarize(local.astype(g.dtype)))


def stretched_axes(shape: tuple, upstream: tuple) -> tuple:
    """The axes of ``upstream`` that broadcasting stretched ``shape`` along (summed back for its gradient).

    The tape's own rule (:func:`autodiff_viz._shape.broadcast_axes`), less the axes of length 1 (nothing
    was copied along them); empty when ``shape`` does not broadcast to ``upstream`` (a matmul, a reduction).

    >>> stretched_axes((3,), (2, 3)), stretched_axes((2, 1), (2, 4)), stretched_axes((2, 3), (3,))
    ((0,), (1,), ())
    >>> stretched_axes((3,), (1, 3))
    ()
    """
    return tuple(a for a in broadcast_axes(shape, upstream) or () if upstream[a] != 1)
