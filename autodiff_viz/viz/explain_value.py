"""``explain`` beyond ``None``: why a gradient that exists is NaN, inf, zero, tiny, or missing after a failed call.

:func:`diagnose` is asked by :mod:`._explain` once the source is known to
reach the target.  It reads the view model and the recorded values only
(the trace's events), marks the node that explains the number, and returns
``(reason, sentences)`` or ``None`` when the number needs no explaining.  In
order: a second ``gradient()`` on a spent tape (``"spent"``); a gradient
holding NaN or inf, with the op where it first appeared and its cause
(``"not_finite"``, see :mod:`.model.nonfinite`); a gradient of exactly 0
(``"zero"``: a relu below 0, the branch a ``where`` did not choose, a
saturated sigmoid or tanh, or the first rule that sent 0); a tiny one (``"tiny"``: saturation, or a product
of many slopes below 1); a value of the source that came back as a constant through ``float()`` or
``.numpy()`` (``"detour"``: the gradient is smaller than the math says); a
target that is not one number (``"sums"``).  :func:`variable_detour` names
``ad.constant(v.numpy() ** 2)`` on a variable as the NumPy detour it is.

>>> import autodiff_viz as ad
>>> x = ad.constant(-2.0)
>>> with ad.trace():
...     with ad.GradientTape() as t:
...         t.watch(x)
...         y = ad.nn.relu(x)
...     g = t.gradient(y, x)
>>> e = ad.viz.explain(t, y, x)
>>> e.reason, e.sentences[1]
('zero', 'relu passes a gradient only where its input is above 0, and its input here is -2.0 (Relu).')
"""
from __future__ import annotations

import math

import numpy as np

from .. import events as ev
from .model import graph as M
from .model import nonfinite as _nf
from .text.numbers import fmt_number, fmt_value
from .text.words import leave_caption, partial_name

TINY = 1e-4        # a gradient whose largest magnitude is below this is called tiny
SATURATED = 1e-2   # a sigmoid or tanh whose slope is below this is on its flat part
# What to do about a NaN or an inf, by the op where it first appeared.
_ADVICE = {
    "Log": "Keep log's argument away from 0 (ad.math.log(p + 1e-7), or ad.clip_by_value(p, 1e-7, 1.0)), or compute "
           "the loss from logits with a stable formula (ad.nn.softmax_cross_entropy_with_logits).",
    "Log1p": "Keep log1p's argument above -1.",
    "Sqrt": "sqrt's slope is infinite at 0: take ad.sqrt(x + 1e-12), or choose a safe input with ad.where before "
            "the sqrt (a where after it still sends NaN back).",
    "RealDiv": "Guard the divisor (b + 1e-7), or ad.math.divide_no_nan(a, b) (0 where b is 0).",
    "Reciprocal": "Keep the argument away from 0 (x + 1e-7), or ad.math.divide_no_nan(1.0, x) (0 where x is 0).",
    "Exp": "exp overflows above about 88 in float32: subtract the largest value first (the log-sum-exp trick), "
           "or use ad.nn.softplus / ad.math.reduce_logsumexp.",
}


def _values(s: ev.Summary | None):
    return None if s is None or not s.complete else s.array()


def diagnose(d, value, path) -> tuple | None:
    """``(reason, sentences)`` for the gradient ``value`` (a summary, or ``None`` when unknown) along
    ``path`` (node ids on the gradient's path), for the ``explain`` diagnosis ``d``; ``None``: nothing to say."""
    for ask in (_spent, _not_finite, _zero, _tiny, _detour, _sums):
        answer = ask(d, value, path)
        if answer is not None:
            return answer
    return None


def _spent(d, value, path):
    tape = next((t for t in d.m.tapes if t.raw == d.tape_id), None)
    if tape is None or not tape.spent or tape.persistent:
        return None
    asked = [g for g in d.m.gradients if g.tape == tape.index]
    if any(d.t["id"] in g.targets and d.s["id"] in g.sources for g in asked):
        return None
    if not asked:  # a bare tape keeps no calls: it may have answered exactly this one
        return None
    d.no_path()
    d.tnode.mark("Asked of a spent tape.")
    return "spent", [
        "There is no gradient because the tape was spent: a non-persistent tape answers one gradient() call, "
        "and an earlier call (for another target or source) had already used it, so this call raised "
        "RuntimeError instead of giving a value.",
        f"The target does depend on {d.s_name}, so one tape can give both: create it with "
        "ad.GradientTape(persistent=True), or ask for every target in the first call, "
        "tape.gradient([y, z], x)."]


def _ops_on(d, path):
    """The op events of the nodes on ``path``, in recorded order."""
    by_output = {}
    for e in d.mine:
        if isinstance(e, ev.Op) and e.during is None:
            by_output.setdefault(e.output, e)
    out = []
    for n in d.m.nodes:
        if n.id in path and n.kind == M.OP and n._raw in by_output:
            out.append((n, by_output[n._raw]))
    return out


def _not_finite(d, value, path):
    if value is None or _nf.finite(value):
        return None
    kind = _nf.what(value)
    found = _nf.origins(d.mine)
    sentences = [f"The gradient is {kind}: tape.gradient gave {fmt_value(value)}, and {'an' if kind == 'inf' else 'a'} {kind} spreads to "
                 "everything computed from it (an optimizer step would write it into the variables)."]
    by_phase = {o.phase: o for o in reversed(found)}  # the first origin of each pass
    advice = None
    for phase in ("forward", "backward", "sum"):
        o = by_phase.get(phase)
        n = d.m.node_for(o.output) if o is not None else None
        if n is None:
            continue
        n.nonfinite = True
        what = {"backward": "the gradient first became non-finite in its rule",
                "sum": "the gradients it received first added up to a non-finite total"}.get(
                    phase, "the forward pass made the first non-finite value")
        at = n.label if n.label == o.op_type or not o.op_type else f"{n.label} ({o.op_type})"
        sentences.append(f"At {at} {what}: {o.cause}.")
        advice = advice or _ADVICE.get(o.op_type)
    if len(sentences) == 1:  # the values were not kept whole: say where it ends up at least
        d.tnode.mark(f"The gradient of this target is {kind}.")
        sentences.append("The values along the path were not kept whole, so the op where it started is not known: "
                         "trace a smaller example (or print the values) to find it.")
    if advice:
        sentences.append(advice)
    return "not_finite", sentences


def _zero(d, value, path):
    v = _values(value)
    if v is None or np.any(v != 0):
        return None
    for n, op in _ops_on(d, path):
        a = [_values(s) for s in op.in_values]
        if op.op_type == "Relu" and a[0] is not None and np.all(a[0] <= 0):
            n.mark("relu's input is not above 0: its slope is 0.")
            return "zero", [
                f"The gradient is 0 because {d.s_name} reaches the target through {n.label}, a relu whose input is "
                "not above 0.",
                f"relu passes a gradient only where its input is above 0, and its input here is "
                f"{fmt_value(op.in_values[0])} ({op.op_type}).",
                "A unit that stays below 0 for every input learns nothing (a 'dead relu'): start its bias a little "
                "above 0, or use ad.nn.leaky_relu."]
        if op.op_type == "SelectV2" and a[0] is not None:
            chosen = _branch_not_chosen(d, n, a[0], path)
            if chosen is not None:
                n.mark(f"where chose the {chosen} branch: the other one gets gradient 0.")
                _unmark_condition(d, n)
                return "zero", [
                    f"The gradient is 0 because {d.s_name} reaches the target only through the branch of "
                    f"{n.label} (where) that was not chosen: the condition was {fmt_value(op.in_values[0])}, so "
                    f"where took its {chosen} branch.",
                    "where sends the upstream gradient to the chosen branch and 0 to the other; the condition "
                    "itself passes no gradient (a comparison is flat).",
                    "That is the right derivative of what was computed: the value does not change when the source "
                    "moves a little."]
    sat = _saturated(d, path)
    if sat:
        return "zero", sat
    return _zero_rule(d, path)


def _zero_rule(d, path):
    """The first rule on the path (in the backward pass) that sent exactly 0 from an upstream that was not."""
    ops = {}
    for e in d.mine:
        if isinstance(e, ev.Op):
            ops.setdefault(e.node, e)
    for e in d.mine:
        if not isinstance(e, ev.BackwardStep):
            continue
        n = d.m.node_for(e.output)
        up = _values(e.upstream)
        if n is None or n.id not in path or up is None or not np.any(up != 0):
            continue
        for edge in d.m.inputs_of(n.id):
            g = _values(e.grads[edge.index]) if edge.index < len(e.grads) else None
            if edge.src in path and g is not None and not np.any(g != 0):
                op = ops.get(e.node)
                to = d.m.node(edge.src).label
                n.mark(f"Its rule sent 0 to {to}.")
                partial = op.partials[edge.index] if op is not None and edge.index < len(op.partials) else ""
                why = (f"its partial derivative {partial_name(op.formula, op.op_type, edge.index)} = {partial} is "
                       "0 here" if partial else "its local slope is 0 here")
                who = n.label if n.label == e.op_type else f"{n.label} ({e.op_type})"
                return "zero", [
                    f"The gradient is 0 because the rule of {who} sent 0 to {to}, from an upstream gradient of "
                    f"{fmt_value(e.upstream)}: {why}.",
                    "Every gradient that reaches the source through it is multiplied by that 0."]
    return None


def _branch_not_chosen(d, node, cond, path):
    """``"true"``/``"false"``: the branch ``where`` chose when every path from the source enters the other."""
    ins = {e.index for e in d.m.inputs_of(node.id) if e.src in path}
    if ins == {1} and not np.any(cond):
        return "false"
    if ins == {2} and np.all(cond):
        return "true"
    return None


def _unmark_condition(d, select):
    """The comparison feeding ``where`` is not the cause: the branch is (drawn on the where, not on Greater)."""
    cond = [e.src for e in d.m.inputs_of(select.id) if e.index == 0]
    for n in d.m.nodes:
        if n.id in cond and n.broken:
            n.broken = False
            n.notes = tuple(t for t in n.notes if t != "This op passes no gradient back.")


def _slopes_on(d, path):
    """``(node, op, slope)`` for the elementwise ops on the path whose local slope the values give."""
    out = []
    for n, op in _ops_on(d, path):
        local = _nf.local_values(op)
        if local is None:
            continue
        ins = [e.index for e in d.m.inputs_of(n.id) if e.src in path and e.index < len(local)]
        if not ins:
            continue
        slope = max(float(np.max(np.abs(local[i]))) for i in ins)
        out.append((n, op, slope))
    return out


def _saturated(d, path):
    flat = [(n, op, s) for n, op, s in _slopes_on(d, path) if op.op_type in ("Sigmoid", "Tanh") and s < SATURATED]
    if not flat:
        return None
    n, op, s = flat[0]
    name = op.op_type.lower()
    for m, _, _ in flat:
        m.mark(f"Saturated: its slope here is {fmt_number(_slope_of(d, m))}.")
    return [f"The gradient is {'0' if s == 0 else 'tiny'} because {n.label} ({name}) is saturated: its input "
            f"{fmt_value(op.in_values[0])} is far out on its flat part, where its slope is {fmt_number(s)}.",
            f"{name}'s slope is at most {'0.25' if name == 'sigmoid' else '1'} (at 0) and falls towards 0 as the "
            "input grows: every gradient through it is multiplied by that slope.",
            "Keep the inputs small (scale the data, initialise the weights smaller, normalise the layer), or use "
            "a loss computed from logits."]


def _slope_of(d, node):
    return next((s for n, _, s in _slopes_on(d, {node.id} | {e.src for e in d.m.inputs_of(node.id)}) if n is node), 0)


def _tiny(d, value, path):
    v = _values(value)
    if v is None or v.size == 0 or not np.all(np.isfinite(v)):
        return None
    big = float(np.max(np.abs(v)))
    if big == 0 or big >= TINY:
        return None
    sat = _saturated(d, path)
    if sat:
        return "tiny", sat
    small = [(n, op, s) for n, op, s in _slopes_on(d, path) if s < 1]
    if len(small) < 2:
        return None
    product = math.prod(s for _, _, s in small)
    for n, _, s in small:
        n.mark()
    slopes = ", ".join(fmt_number(s, 2) for _, _, s in small[:6]) + (", …" if len(small) > 6 else "")
    return "tiny", [
        f"The gradient is tiny ({fmt_value(value)}) because it is a product of {len(small)} local slopes below 1 "
        f"along the path ({slopes}): they multiply to about {fmt_number(product, 2)}.",
        "This is the vanishing gradient of a deep chain: each layer multiplies the gradient by its slope, so many "
        "slopes below 1 shrink it exponentially (sigmoid's slope is at most 0.25).",
        "Use activations whose slope is 1 where they are active (relu), fewer layers, residual connections, or "
        "normalisation."]


def _sums(d, value, path):
    shape = tuple(d.t["shape"])
    if int(np.prod(shape)) <= 1:
        return None
    d.tnode.mark(f"shape {shape}: tape.gradient sums it first.")
    total = f"; tape.gradient gave {fmt_value(value)}" if value is not None else ""
    return "sums", [
        f"The target has shape {shape}, not a single number: tape.gradient takes the gradient of its sum "
        f"(reduce_sum(target)){total}.",
        "Each element of the gradient adds up how every element of the target moves with that element of the "
        "source. For one gradient per element of the target, use tape.jacobian(target, source)."]


def _leaves(d):
    """The ``leave`` events of this tape, by the tensor that left."""
    out = {}
    for e in d.mine:
        if isinstance(e, ev.Leave):
            out.setdefault(e.tensor, e)
    return out


def _same(a: ev.Summary | None, b: ev.Summary | None) -> bool:
    return a is not None and b is not None and a.complete and b.complete and tuple(a.shape) == tuple(b.shape) \
        and a.head == b.head


def _detour(d, value, path):
    """A value computed from the source left through float()/.numpy() and came back as a constant."""
    leaves = _leaves(d)
    if not leaves:
        return None
    before = d.reach([d.snode.id])
    into_target = d.reach([d.tnode.id], forward=False)
    for n in d.m.nodes:
        if n._raw not in leaves or n.id not in before or n.kind == M.NUMPY:
            continue
        left = leaves[n._raw]
        copies = [c for c in d.m.nodes if c.kind == M.CONSTANT and c.id in into_target and _same(c.value, left.value)]
        if not copies:
            continue
        copy = copies[0]
        n.mark()
        copy.mark(f"A copy of {n.label} made by {leave_caption(left.how)}: a constant to the tape.")
        for e in d.m.edges:
            if e.kind == "leave" and e.src == n.id:
                e.broken = True
        expected = _replay_through(d, copy._raw, n._raw)
        said = [f"The gradient counts only part of how the target depends on {d.s_name}: {n.label} left the "
                f"package through {leave_caption(left.how)}, and its value {fmt_value(left.value)} came back as a constant "
                f"({copy.label}) that the tape cannot connect to {d.s_name}."]
        if expected is not None and value is not None and fmt_value(expected) != fmt_value(value):
            said.append(f"tape.gradient gave {fmt_value(value)}; through {n.label} itself it would be "
                        f"{fmt_value(expected)}.")
        said.append(f"Use {n.label} itself in the computation (x * x * x, not x * x * float(x)); take "
                    "float() or .numpy() only of what you print.")
        return "detour", said
    return None


def _replay_through(d, copy, original):
    """The gradient had the constant ``copy`` been the tensor ``original`` (the events, rewired)."""
    import dataclasses

    from .model import source as _source

    rewired = [dataclasses.replace(e, inputs=tuple(original if t == copy else t for t in e.inputs))
               if isinstance(e, ev.Op) else e for e in d.events]
    return _source.replay_gradient(rewired, d.t["id"], d.s["id"])


def variable_detour(d):
    """``(reason, sentences)`` when a variable no op read left through ``.numpy()``/``float()``; else ``None``."""
    left = _leaves(d).get(d.s["id"])
    if left is None:
        return None
    d.no_path()
    node = d.source_node()
    node.mark(f"Left through {leave_caption(left.how)}: the tape never saw it used.")
    for e in d.m.edges:
        if e.kind == "leave" and e.src == node.id:
            e.broken = True
    name = d.s_name
    short = name.split("'")[1] if name.count("'") >= 2 else "v"
    return "left_numpy", [
        f"The gradient is None because {name} went around the tape: {leave_caption(left.how)} turned it into a plain "
        f"number ({fmt_value(left.value)}), and what was computed from that number is a new constant to the tape.",
        "A trainable variable is watched when an op on the tape reads it; here no op did, only NumPy.",
        f"Compute with the package's ops on the variable itself: ad.square({short}), not "
        f"ad.constant({short}.numpy() ** 2)."]
