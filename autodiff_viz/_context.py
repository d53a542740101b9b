"""The engine's state, in one place: what is recording in this thread, and who is listening.

Per thread (a ``threading.local``): the stack of recording tapes, the stack
of forward-mode accumulators, the name scopes, the hook listeners that
``ad.trace()`` adds and the traces it keeps track of.  Two tapes in two threads never see each other's ops.

Process-wide, and only because every op reads them first: ``ACTIVE[0]``
counts the tapes and accumulators active in any thread, ``LISTENING[0]`` the
hook listeners in any thread.  With both at zero an op costs one list read
for recording and one for tracing.  ``ACCUMULATING[0]`` and ``SCOPED[0]``
count the accumulators and name scopes open in any thread: a recorded op
reads this thread's lists of them only when these are not zero (a read of a
``threading.local`` costs as much as a tenth of a record).

Every engine module with state to read imports this one; it imports none of them.  Two context
managers say what the engine does when it hides work from the tapes:
:func:`hidden_from_tapes` (a ``custom_gradient`` function's own ops) and
:func:`outer_only` (the ops that compute forward-mode tangents).

>>> with name_scope("layer"):
...     current_scope()
'layer'
"""
from __future__ import annotations

import contextlib
import threading


class _Nobody:
    """The audience of a thread with no listener (while another thread has one): it hears nothing."""

    __slots__ = ()

    def op(self, tape, rec, output, inputs) -> None:
        pass

    def step(self, tape, rec, step, upstream, sent) -> None:
        pass


NOBODY = _Nobody()


class _Everyone:
    """The audience of a thread with several listeners: each hears every op and step."""

    __slots__ = ("listeners",)

    def __init__(self, listeners):
        self.listeners = tuple(listeners)

    def op(self, tape, rec, output, inputs) -> None:
        for listener in self.listeners:
            listener.op(tape, rec, output, inputs)

    def step(self, tape, rec, step, upstream, sent) -> None:
        for listener in self.listeners:
            listener.step(tape, rec, step, upstream, sent)


class _State(threading.local):
    """This thread's part: read with ``state.tapes`` and so on."""

    def __init__(self):
        self.tapes: list = []          # recording GradientTapes, outermost first
        self.set_aside: list = []      # tape stacks that hidden_from_tapes/outer_only put aside, innermost last
        self.accumulators: list = []   # ForwardAccumulators, outermost first
        self.scopes: list = []         # name_scope names, outermost first
        self.listeners: list = []      # listeners (see listen), added by ad.trace() and extend.announcements
        self.audience = NOBODY         # who hears ops and backward steps: see _choose_audience
        self.open_traces: list = []    # ad.trace() blocks running, innermost last
        self.closed_traces: list = []  # weak references to the last traces closed, newest last


state = _State()
ACTIVE = [0]      # tapes + accumulators active in any thread
ACCUMULATING = [0]  # accumulators active in any thread (a recorded op reads this thread's list only then)
SCOPED = [0]      # name scopes open in any thread (a record reads this thread's scopes only then)
LISTENING = [0]   # hook listeners in any thread
_lock = threading.Lock()


# ---------------------------------------------------------------------------
# Tapes and accumulators entering and leaving
# ---------------------------------------------------------------------------
def push_tape(tape) -> int | None:
    """Put ``tape`` on this thread's stack; returns the id of the tape it is nested in, if any."""
    tapes = state.tapes
    parent = tapes[-1]._id if tapes else None
    tapes.append(tape)
    _lock.acquire()  # (_count written out: a tape is entered and left on every training step)
    ACTIVE[0] += 1
    _lock.release()
    return parent


def pop_tape(tape) -> None:
    """Take ``tape`` off this thread's stack, or off a stack put aside while it runs.

    (A tape entered outside a ``custom_gradient`` function can be left inside it.)
    """
    tapes = state.tapes
    if tapes and tapes[-1] is tape and not state.set_aside:  # (the common case: the innermost tape leaves)
        tapes.pop()
        _lock.acquire()
        ACTIVE[0] -= 1
        _lock.release()
        return
    found = False
    for stack in [tapes, *state.set_aside]:  # (outer_only's stack and the one it put aside share tapes)
        if tape in stack:
            stack.remove(tape)
            found = True
    if found:
        _count(ACTIVE, -1)


def push_accumulator(acc) -> tuple:
    """Put a forward accumulator on the stack; returns the tapes recording around it."""
    state.accumulators.append(acc)
    _count(ACTIVE, 1)
    _count(ACCUMULATING, 1)
    return tuple(state.tapes)


def pop_accumulator(acc) -> None:
    accs = state.accumulators
    if acc in accs:
        accs.remove(acc)
    _count(ACTIVE, -1)
    _count(ACCUMULATING, -1)


def _count(counter, delta):
    with _lock:
        counter[0] += delta


@contextlib.contextmanager
def hidden_from_tapes(collector):
    """Run the block with ``collector`` as this thread's only tape and no accumulators.

    ``custom_gradient`` runs the user's function this way: its ops reach no
    real tape (one record stands for the whole function), while the collector
    sees which variables it reads.
    """
    saved_tapes, saved_accs = state.tapes, state.accumulators
    state.tapes, state.accumulators = [collector], []
    state.set_aside.append(saved_tapes)
    _count(ACTIVE, 1)
    try:
        yield
    finally:
        state.set_aside.pop()
        state.tapes, state.accumulators = saved_tapes, saved_accs
        _count(ACTIVE, -1)


@contextlib.contextmanager
def outer_only(tapes, accumulators):
    """Run the block as if only ``tapes`` and ``accumulators`` were active.

    Forward mode computes an op's tangent this way: the tapes entered around
    the accumulator record the tangent's ops (forward-over-reverse), tapes and
    accumulators entered inside it do not.
    """
    saved_tapes, saved_accs = state.tapes, state.accumulators
    keep = {id(t) for t in tapes}
    state.tapes = [t for t in saved_tapes if id(t) in keep]
    state.accumulators = list(accumulators)
    state.set_aside.append(saved_tapes)
    try:
        yield
    finally:
        state.set_aside.pop()
        state.tapes, state.accumulators = saved_tapes, saved_accs


# ---------------------------------------------------------------------------
# Name scopes
# ---------------------------------------------------------------------------
def current_scope() -> str:
    """This thread's name scope path: ``"outer/inner"``, or ``""``."""
    s = state.scopes
    return "/".join(s) if s else ""


@contextlib.contextmanager
def name_scope(name: str):
    """Label the ops recorded inside (graphs fold each scope into one box).

    >>> import autodiff_viz as ad
    >>> with ad.name_scope("layer1"):
    ...     pass
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name_scope: expected a non-empty string, got {name!r}")
    scopes = state.scopes
    scopes.append(name.rstrip("/"))
    _count(SCOPED, 1)
    try:
        yield name
    finally:
        scopes.pop()
        _count(SCOPED, -1)


# ---------------------------------------------------------------------------
# Hooks: where the engine announces what it does (ad.trace() listens)
# ---------------------------------------------------------------------------
# The engine announces an op and a backward step one way, ``state.audience.op(tape,
# record, output, inputs)`` and ``state.audience.step(tape, record, step, upstream, sent)``
# (``upstream`` and the gradients are values, arrays, not tensors: ``sent`` is a flat tuple,
# three items per input the step gave a gradient to, in input order: its position, the
# gradient and that input's total so far; how many gradients each has had
# a listener counts itself, see ``_gradient_counts``), and everything else with
# ``emit(kind, **payload)``; both only while ``LISTENING[0]``.  A listener is an object with those two methods that is also called
# as ``listener(kind, payload)`` for the other kinds: a trace is one
# (``_recording._Converter``); ``extend.announcements`` wraps a plain callable in
# ``_payloads.Payloads``, which hands it every kind as a payload dict of its own.
# Payloads are engine objects; ``autodiff_viz._recording`` turns them into events.
# The kinds and their payload keys (``op`` and ``backward_step`` as ``Payloads`` writes them):
# - ``tape_begin``: tape, parent (the id of the tape it is nested in, or None), persistent,
#   watch_accessed_variables;  ``tape_end`` / ``tape_reset``: tape
# - ``watch``: tape, tensor, auto (True when a variable was watched on read)
# - ``op``: tape, node (the tape's record, as an op view), output, inputs
# - ``op_skipped``: tape, op_type, inputs, output, reason ("stop_recording")
# - ``leave``: tape, tensor, how ("numpy");  ``state``: tape, variable, how ("assign_add"...)
# - ``gradient_begin``: tape, targets, sources, method ("gradient"/"jacobian"/"batch_jacobian")
# - ``gradient_row``: tape, row, rows (from 1), index: a jacobian's next backward pass, for that target element
# - ``backward_step``: tape, node (the op view the rule got), upstream, input_grads (one tensor
#   or None per input), step, and per input what its gradient adds up to after this step:
#   totals (tensor or None), counts
# - ``accumulate``: tape, tensor_id, contribution, total, count, node (None: a target's seed)
# - ``gradient_end``: tape, sources, results, spent
def emit(kind: str, /, **payload) -> None:
    """Tell this thread's listeners what happened (each gets a payload dict of its own)."""
    listeners = state.listeners
    if len(listeners) == 1:  # (one trace open: the common case, without a copy of the list)
        listeners[0](kind, payload)
        return
    for listener in list(listeners):
        listener(kind, dict(payload))


def _choose_audience() -> None:
    """Keep ``state.audience``: the thread's one listener itself, all of them, or nobody.

    Chosen when a listener comes or goes, so an op's announcement is one
    method call on the hot path: a lone trace is called with the record as
    it is, no payload dict or op view made.
    """
    listeners = state.listeners
    state.audience = listeners[0] if len(listeners) == 1 else _Everyone(listeners) if listeners else NOBODY


def listen(listener) -> None:
    """Add a listener for this thread's announcements (see the comment above :func:`emit`)."""
    state.listeners.append(listener)
    _choose_audience()
    _count(LISTENING, 1)


def unlisten(listener) -> None:
    if listener in state.listeners:
        state.listeners.remove(listener)
        _choose_audience()
        _count(LISTENING, -1)


def listeners() -> list:
    """This thread's listeners (a copy)."""
    return list(state.listeners)
