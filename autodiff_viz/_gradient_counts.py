"""How many gradients each tensor has had in a backward pass: counted by the listeners, not the engine.

A trace's ``backward_step`` and ``accumulate`` events, and the payloads
``extend.announcements`` hands out, say how many terms a gradient's total
sums so far.  The engine hands each backward step only what it sent (see
``_context``); a listener follows the passes it hears with a
:class:`GradientCounts`.  Plain data, no imports: one per listener, used in
the thread that listener hears.
"""
from __future__ import annotations


class GradientCounts:
    """How many gradients each tensor has had in the backward pass of each tape, as a listener hears it.

    The engine hands a backward step's gradients and totals (``state.audience.step``) and a
    listener that shows how many terms a total sums counts them here: a pass starts afresh at
    ``gradient_begin`` and at each ``gradient_row`` (a Jacobian's passes) of its tape, a target's
    seed (``accumulate``) comes with its count, each gradient a step sends adds one, and
    ``gradient_end`` lets the pass's counts go.

    >>> counts = GradientCounts()
    >>> counts.start(1); counts.seed(1, 7, 1)
    >>> counts.add(1, 7), counts.add(1, 8)
    (2, 1)
    """

    __slots__ = ("of_tape",)

    def __init__(self):
        self.of_tape: dict = {}  # tape id -> {tensor id: gradients so far}, for the pass running on it

    def start(self, tape_id) -> None:
        self.of_tape[tape_id] = {}

    def end(self, tape_id) -> None:
        self.of_tape.pop(tape_id, None)

    def seed(self, tape_id, tensor_id, count) -> None:
        self.of_tape.setdefault(tape_id, {})[tensor_id] = count

    def now(self, tape_id) -> dict:
        """``{tensor id: gradients so far}`` in the pass running on the tape (a step adds one for each it sends)."""
        counts = self.of_tape.get(tape_id)
        if counts is None:
            counts = self.of_tape[tape_id] = {}
        return counts

    def add(self, tape_id, tensor_id) -> int:
        """One more gradient for ``tensor_id``: how many it has had in this pass."""
        counts = self.now(tape_id)
        c = counts[tensor_id] = counts.get(tensor_id, 0) + 1
        return c

    def heard(self, kind, payload) -> None:
        """Follow an announcement (``_context.emit``'s kinds) that starts or ends a pass, or seeds a target."""
        if kind == "gradient_begin" or kind == "gradient_row":
            self.start(payload["tape"]._id)
        elif kind == "accumulate":
            self.seed(payload["tape"]._id, payload["tensor_id"], payload["count"])
        elif kind == "gradient_end":
            self.end(payload["tape"]._id)
