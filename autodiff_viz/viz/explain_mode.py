"""``explain`` for a trace that holds no gradient to explain: nothing recorded, or forward mode only.

:mod:`._explain` asks these before its ``None`` questions, because their
answers would be false here: an empty trace did not fail to *watch* the
source, it saw nothing at all; a target computed under a
``ForwardAccumulator`` alone has a tangent (``acc.jvp``), not a gradient,
so "the gradient is not None" would speak of a call nobody made.  Each
function returns ``(reason, sentences)`` or ``None``.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.autodiff.ForwardAccumulator(x, ad.constant(1.0)) as acc:
...         y = x * x
>>> e = ad.viz.explain(tr, y, x)
>>> e.reason, e.sentences[1]
('forward_mode', "acc.jvp(target) gave 6.0: how the target moves when the source 'x' moves along the tangent 1.0.")
"""
from __future__ import annotations

from .. import events as ev
from .model import nonfinite as _nf
from .text.numbers import fmt_value

_RECORDS = (ev.Op, ev.Watch, ev.TapeBegin, ev.ForwardBegin, ev.OpSkipped)


def nothing_recorded(d):
    """The trace (or tape) holds no op and no watch: it was open while nothing ran."""
    if any(isinstance(e, _RECORDS) for e in d.events):
        return None
    d.no_path()
    d.source_node().mark("The trace saw nothing.")
    d.target_node("Computed where no trace was open.")
    return "nothing_recorded", [
        "There is nothing to explain: the trace recorded no op and no watch, so neither the target nor "
        f"{d.s_name} is in it.",
        "The target was computed outside the trace's `with` block (or no tape or ForwardAccumulator was open "
        "inside it): compute it inside both, `with ad.trace() as tr:` around `with ad.GradientTape() as tape:`."]


def forward_only(d):
    """The target was recorded by a ``ForwardAccumulator`` and by no tape: say what forward mode gave."""
    begins = {e.tape for e in d.events if isinstance(e, ev.ForwardBegin)}
    if d.tape_id not in begins or d.tnode is None:
        return None
    tid, sid = d.t["id"], d.s["id"]
    d.no_path()  # the orange path is the gradient's: no gradient, no path (and no "∂ not computed yet")
    primal = next((e for e in d.mine if isinstance(e, ev.Tangent) and e.tensor == sid and not e.inputs), None)
    out = next((e for e in d.mine if isinstance(e, ev.Tangent) and e.tensor == tid), None)
    head = ("There is no gradient here, None or not: the target was computed under a ForwardAccumulator "
            "(forward mode) and no GradientTape recorded it, so the trace holds tangents, not a gradient.")
    if out is None or out.tangent is None:
        return "forward_mode", [head, f"The accumulator did not follow {d.s_name} to the target: "
                                      "acc.jvp(target) is None (or zeros with unconnected_gradients='zero')."]
    along = f" along the tangent {fmt_value(primal.tangent)}" if primal is not None and primal.tangent else ""
    sentences = [head, f"acc.jvp(target) gave {fmt_value(out.tangent)}: how the target moves when "
                       f"{d.s_name} moves{along}."]
    if not _nf.finite(out.tangent):
        kind = _nf.what(out.tangent)
        sentences.append(f"That tangent is {kind}.")
        first = next((e for e in d.mine if isinstance(e, ev.Tangent) and e.inputs and not _nf.finite(e.tangent)
                      and all(_nf.finite(t) for t in e.in_tangents if t is not None)), None)
        n = d.m.node_for(first.tensor) if first is not None else None
        if n is not None:
            causes = {o.output: o.cause for o in _nf.origins(d.mine) if o.phase == "forward"}
            why = causes.get(first.tensor, "its derivative is not finite at this input")
            n.nonfinite = True
            n.mark(f"First NaN/inf of the tangents: {why}.")
            sentences.append(f"At {n.label} ({first.op_type}) the tangent first became non-finite, from finite "
                             f"tangents: {why}.")
    sentences.append("For a gradient, record the same code on a GradientTape and call tape.gradient.")
    return "forward_mode", sentences
