"""The listener that ``extend.announcements`` puts in front of a plain callable ``(kind, payload)``.

The engine announces ops and backward steps to listener objects (see
``_context``'s hooks); this one turns each announcement into a payload dict
of its own, with the engine's objects in it (tensors, the tape, the op view).
State: its own counts of each tensor's gradients (``_gradient_counts``).
"""
from __future__ import annotations

from ._gradient_counts import GradientCounts
from ._op_view import Op
from ._record import INPUTS, IN_IDS, OUTPUT
from ._tensor import _wrap


class Payloads:
    """A listener that is a plain callable ``(kind, payload)``, as ``extend.announcements`` takes one.

    It hears ops and backward steps as payload dicts too (see
    ``_context.emit`` for the kinds and keys), each announcement a dict of its own.

    >>> seen = []
    >>> Payloads(lambda kind, p: seen.append((kind, sorted(p))))("tape_end", {"tape": None})
    >>> seen
    [('tape_end', ['tape'])]
    """

    __slots__ = ("listener", "counts")

    def __init__(self, listener):
        self.listener = listener
        self.counts = GradientCounts()

    def __call__(self, kind, payload) -> None:
        self.counts.heard(kind, payload)
        self.listener(kind, payload)

    def op(self, tape, rec, output, inputs) -> None:
        node = _new_op(Op)  # (Op(rec) without the call: its inputs and outputs fill in when read)
        node._r = rec
        self.listener("op", {"tape": tape, "node": node, "output": output, "inputs": inputs})

    def step(self, tape, rec, step, upstream, sent) -> None:
        in_ids = rec[IN_IDS]
        n = len(in_ids)
        grads, totals, counts = [None] * n, [None] * n, [0] * n
        for j in range(0, len(sent), 3):  # (see _context: position, gradient, total)
            i = sent[j]
            g, t = sent[j + 1], sent[j + 2]
            grads[i] = _wrap(g)  # (the engine hands values; a payload holds tensors, as the public API's)
            totals[i] = grads[i] if t is g else _wrap(t)
            counts[i] = self.counts.add(tape._id, in_ids[i])
        upstream = _wrap(upstream)
        node = Op(rec, rec[INPUTS] or (None,) * n, (rec[OUTPUT],))  # (the values the rule read)
        self.listener("backward_step", {"tape": tape, "node": node, "upstream": upstream, "input_grads": tuple(grads),
                                        "step": step, "totals": tuple(totals), "counts": tuple(counts)})


_new_op = object.__new__
