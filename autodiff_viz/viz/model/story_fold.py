"""What the storyboard needs to step through a folded model (``animate(collapse=...)``): which box each
folded op belongs to, and where a box's run of forward ops or backward rules ends, so that a folded
name scope is one forward step and one backward step per run of its rules.
"""
from __future__ import annotations

from . import graph as M


def folded_outputs(nodes) -> dict:
    """``{event tensor id: folded box}`` for the outputs of the ops a box folds."""
    return {raw: n for n in nodes if n.kind == M.SCOPE for raw in n.folds}


def last_forward(events, inside: dict) -> dict:
    """``{box id: event tensor id}``: the output of each box's last forward op (its step comes there)."""
    last = {}
    for e in events:
        if e.kind == "op" and e.during is None and e.output in inside:
            last[inside[e.output].id] = e.output
    return last


def run_continues(events, i: int, box, inside: dict) -> bool:
    """Whether the next rule the tape of ``events[i]`` runs after it belongs to the same folded ``box``."""
    tape = events[i].tape
    for e in events[i + 1:]:
        if e.tape != tape:
            continue
        if e.kind == "backward_step":
            return inside.get(e.output) is box
        if e.kind in ("gradient_end", "gradient_begin", "gradient_row"):  # a Jacobian's next row: a new pass
            return False
    return False


def folded_title(box, shown: str) -> str:
    """``dense (3 ops folded: MatMul, Add, Tanh)``."""
    types = ", ".join(box.op_types[:4]) + (", …" if len(box.op_types) > 4 else "")
    return f"{shown} ({len(box.members)} ops folded: {types})"
