"""What a click on a node shows: its full value, each gradient with its call, its rule with the numbers.

:func:`node_details` reads the view model once and returns one entry per
node (never per step, so a player's data stays linear in the number of ops):
plain text, written with the formats of :mod:`..text.numbers`, user names cleaned
and shortened by :mod:`._labels`.  The browser puts the text in place with
``textContent``; it formats nothing itself.

Returns ``{"heads": HEADS, "nodes": [...]}``: node ``i``'s entry is a list of
sections ``[key, lines]``, and ``HEADS[key]`` is the section's heading.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = x * x
...     g = tape.gradient(y, x)
>>> from autodiff_viz.viz.model.build import build
>>> details = node_details(build(tr.events, subscripts=True))
>>> dict(details["nodes"][0])["grads"]
['T1#1 (gradient of Mul): 6.0']
>>> dict(details["nodes"][1])["calls"]
['T1#1: upstream 1.0', '∂(a · b)/∂a = b = 3.0: sent 1.0 × 3.0 = 3.0 → x', '∂(a · b)/∂b = a = 3.0: sent 1.0 × 3.0 = 3.0 → x']
"""
from __future__ import annotations

from ..text import labels as L
from ..text import words as W
from ..text.words import call_name
from . import graph as M
from . import window as _window
from .rule_text import local_derivative
from ..text.numbers import fmt_full, fmt_number, fmt_shape, fmt_value, scalar

HEADS = {
    "what": "what it is",
    "value": "value",
    "tangent": "tangent ẋ (forward mode): its derivative along the accumulator's direction",
    "grads": "gradient of the target with respect to it, per gradient call",
    "rule": "its rule",
    "calls": "backward: what it received and sent",
    "window": "forward: one output position's window",
    "spread": "backward: where that position's gradient went",
    "notes": "notes",
}

_WHAT = {
    M.OP: "op recorded on the tape",
    M.WATCHED: "tensor passed to tape.watch",
    M.CONSTANT: "tensor not watched: no gradient flows into it",
    M.SKIPPED: "op not recorded (it ran under stop_recording)",
    M.NUMPY: "where a tensor left the package: the tape cannot follow it",
    M.SCOPE: "a folded name scope",
}


def _name(text) -> str:
    return L.shorten(L.clean(text))


def _stats(s) -> str:
    if s is None or s.size <= 1 or s.mean is None:
        return ""
    return f"min {fmt_number(s.min)} · max {fmt_number(s.max)} · mean {fmt_number(s.mean)}"


def _what(n: M.Node) -> str:
    if n.kind == M.VARIABLE:
        how = {"auto": "watched when read", "explicit": "watched with tape.watch"}.get(n.watched, "not watched")
        return f"variable, {how}" + ("" if n.trainable else " (trainable=False)")
    if n.seed_of is not None:
        t = _name(n.seed_of)
        return (f"the seed of a backward pass: ∂{t}/∂{t} = 1 (as many ones as {t} has values), where the "
                "chain rule starts; an outer tape recorded it as a constant")
    text = _WHAT.get(n.kind, n.kind)
    if n.kind == M.OP:
        text = f"{_name(n.op)}: " + text.replace("the tape", "tape " + ", ".join(W.tape_name(t) for t in n.tapes)
                                                  if n.tapes else "the tape")
        if n.backward_of is not None:
            text += f", while tape {W.tape_name(n.backward_of)} computed gradients"
    if n.kind == M.SCOPE:
        text += f" of {len(n.members)} ops: " + ", ".join(_name(t) for t in n.op_types[:6]) + \
            (", …" if len(n.op_types) > 6 else "")
    if n.role:
        text += f" · the {n.role}"
    if n.scope:
        text += f" · scope {L.shorten(L.clean(n.scope), L.TITLE_LIMIT)}"
    return text


def node_details(model: M.GraphModel) -> dict:
    """``{"heads", "nodes"}``: one entry per node of ``model``, in node order, of sections ``[key, lines]``."""
    nodes = model.nodes
    index = {n.id: k for k, n in enumerate(nodes)}
    inputs: dict[int, list] = {}
    for e in model.edges:
        if e.kind in ("data", "skipped"):
            inputs.setdefault(e.dst, []).append(e)
    gradients = {(g.tape, g.call): g for g in model.gradients}
    labels = [_name(n.label) for n in nodes]
    by_raw: dict = {}   # as model.node_for, once for all nodes
    for n in nodes:
        if n.kind != M.NUMPY:
            by_raw.setdefault(n._raw, n)
    said: dict = {}   # one text per gradient call, however many nodes it reached

    def of_call(key):
        if key not in said:
            said[key] = _call_text(key, gradients.get(key), by_raw, index, labels)
        return said[key]

    out = []
    for n in nodes:
        sections = [["what", [_what(n)]]]
        if n.value is not None:
            value = [fmt_full(n.value), fmt_shape(n.value.shape, n.value.dtype)]
            if _stats(n.value):
                value.append(_stats(n.value))
            sections.append(["value", value])
        elif n.shape or n.dtype:
            sections.append(["value", [fmt_shape(n.shape, n.dtype)]])
        if n.tangent is not None:
            sections.append(["tangent", [fmt_full(n.tangent)]])
        if n.grads:
            grads = []
            for key, g in n.grads.items():
                grads.append(f"{of_call(key)}: {fmt_full(g)}")
                if _stats(g):
                    grads.append(f"   {_stats(g)}")
            sections.append(["grads", grads])
        if n.window is not None:  # (before the rule: the picture of it, with its numbers)
            sections.extend(_window_sections(n))
        ins = sorted(inputs.get(n.id, ()), key=lambda e: e.index)
        if n.kind in (M.OP, M.SKIPPED) and ins:
            sections.extend(_rule(n, ins, nodes, index, labels))
        if n.notes:
            sections.append(["notes", [L.shorten(L.clean(t), L.TITLE_LIMIT, "end") for t in n.notes]])
        out.append(sections)
    return {"heads": HEADS, "nodes": out}


def _call_text(key, g, by_raw, index, labels) -> str:
    if g is None:
        return call_name(key)
    targets = [labels[index[n.id]] for t in g.targets if (n := by_raw.get(t)) is not None]
    rows = f", one backward pass per row: {g.rows} rows" if g.rows else ""
    return f"{call_name(key)} ({g.method} of {', '.join(targets) or 'a tensor not shown'}{rows})"


def _rule(n: M.Node, ins: list, nodes: list, index: dict, labels: list) -> list:
    """The rule's formula with its inputs' values, then per gradient call what it received and sent."""
    expr = n.formula
    where = []
    for e in ins:
        src = nodes[index[e.src]]
        v = scalar(src.value)
        where.append(W.operand(e.index, labels[index[e.src]], fmt_number(v) if v is not None else fmt_value(src.value)))
    rule = [W.formula(_name(n.op), expr), "with " + ", ".join(where)]
    for i, sym in enumerate(n.partials):
        rule.append(f"{W.partial_name(expr, _name(n.op), i)} = {sym}")
    sections = [["rule", rule]]
    calls = []
    for key, up in n.grads.items():
        calls.append(f"{call_name(key)}: upstream {fmt_value(up)}")
        for e in ins:
            g = e.grads.get(key)
            to = labels[index[e.src]]
            if g is None:
                calls.append("   " + W.nothing_sent(to))
                continue
            sym = n.partials[e.index] if e.index < len(n.partials) else None
            head, tail = W.rule_sentence(W.partial_name(expr, _name(n.op), e.index), sym, local_derivative(up, g),
                                         fmt_value(up), fmt_value(g), to)
            calls.append(f"{head}: {tail}" if head else "   " + tail)
    if calls:
        sections.append(["calls", calls])
    return sections


def _window_sections(n: M.Node) -> list:
    """A convolution's or pooling's window at one output position, and where its gradient went per call."""
    sections = [["window", _window.forward_lines(n.window)]]
    spread = []
    for key, _, s in n.spreads:
        lines = _window.backward_lines(n.window, s)
        spread += [f"{call_name(key)}: {lines[0]}"] + lines[1:]
    if spread:
        sections.append(["spread", spread])
    return sections
