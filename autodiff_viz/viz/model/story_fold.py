"""What the storyboard needs to step through a folded model (``animate(collapse=...)``): which box each
folded op belongs to, and where a box's run of forward ops or backward rules ends, so that a folded
name scope is one forward step and one backward step per run of its rules.
"""
from __future__ import annotations

import contextlib

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


@contextlib.contextmanager
def aside(board, run):
    """Write the board's changes into ``run`` (a folded box's run of rules), not into the step being written.

    An outer tape records a rule's ops as they run, and each recording is a step of its own: without this,
    the first of those steps would show the ``+=`` that the box's earlier rules sent, before the box's one
    backward step.  :func:`release` puts them into that step.  ``run`` ``None``: the step's own changes.
    """
    if run is None:
        yield
        return
    held = run.setdefault("held", {"delta": board._empty(), "added": {}, "settle": {}})
    outside = board.delta, board.added, board.settle
    board.delta, board.added, board.settle = held["delta"], held["added"], held["settle"]
    try:
        yield
    finally:
        board.delta, board.added, board.settle = outside


def release(board, run) -> None:
    """Put what :func:`aside` kept for ``run`` into the board's next step, before that step's own changes."""
    held = run.pop("held", None)
    if held is None:
        return
    for key, items in held["delta"].items():
        if isinstance(items, list) and items:
            board.delta[key][:0] = items
    board.settle = {**held["settle"], **board.settle}


def folded_title(box, shown: str) -> str:
    """``dense (3 ops folded: MatMul, Add, Tanh)``."""
    types = ", ".join(box.op_types[:4]) + (", …" if len(box.op_types) > 4 else "")
    return f"{shown} ({len(box.members)} ops folded: {types})"
