"""Trace events: the plain records every view reads (the schema; a ``Trace`` and its JSON are :mod:`.traces`).

This module is pure data: it imports nothing of the engine, so it is the one
file a renderer author reads.  :mod:`autodiff_viz._recording` turns what the
engine does into these records (``ad.trace()``).  Views (graphs, animations,
widgets) read only these records, so a hand-written list of events is as good
as a traced computation, and a trace saved as JSON can be replayed without the
engine.

Glossary: an *op* event is one recorded forward operation (a node of the
graph); a *backward_step* is that node's gradient rule running, with the
*upstream gradient* it received and the gradient it sent to each input; an
*accumulate* event adds one contribution to a tensor's gradient; a *gradient_row*
starts one of the backward passes of a ``jacobian`` (one per row of the result).  Forward mode
(``ForwardAccumulator``) gives *forward_begin*, a *tangent* event per tensor
whose tangent it computed, and *forward_end*.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = x * x
...     dy = tape.gradient(y, x)
>>> [e.kind for e in tr.events][:3]
['tape_begin', 'watch', 'op']
>>> ad.Trace.from_json(tr.to_json()).events == tr.events
True

Values are summarized (:class:`Summary`), never copied whole, so a trace of a
computation on a large array stays small.
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import ClassVar, Optional

import numpy as np

FORMAT = "autodiff_viz.trace"
VERSION = 3  # 2: op events carry the op's display formula and partial derivatives; 3: gradient_row and forward-mode events
HEAD = 16  # how many leading values a summary keeps (a tensor of up to 16 elements is shown in full)
# Convolution and pooling ops keep more: their details show one output position's window of the input
# and kernel, so their op and backward-step events keep up to WINDOW_HEAD leading values of each tensor
# (the whole of a batch of 16 8×8 images, or the first image of a larger batch) and never more.
WINDOW_OPS = frozenset({"Conv2D", "MaxPool", "AvgPool"})
WINDOW_HEAD = 1024
# Trace.from_json/load refuse longer documents unread: about the JSON of a million events (the
# recorder's default cap), while parsing it still fits in the memory of an ordinary machine.


# ---------------------------------------------------------------------------
# Value summaries
# ---------------------------------------------------------------------------
class Summary(typing.NamedTuple):
    """What a view needs to know about an array: never the whole array.

    ``head`` holds the first values in row-major order (all of them when the
    array has at most ``HEAD`` elements, see :attr:`complete`; the events of
    ``WINDOW_OPS`` keep up to ``WINDOW_HEAD``).  ``min``,
    ``max`` and ``mean`` are ``None`` for empty arrays; booleans count as 0/1.
    An immutable named tuple: a trace builds one per value it sees, so it must
    be cheap to make.
    """

    shape: tuple[int, ...]
    dtype: str
    size: int
    min: Optional[float]
    max: Optional[float]
    mean: Optional[float]
    head: tuple[float, ...]

    @property
    def complete(self) -> bool:
        """True when ``head`` holds every value (small tensors)."""
        return len(self.head) == self.size

    def array(self):
        """The values as a NumPy array when :attr:`complete`, else ``None``."""
        if not self.complete:
            return None
        return np.asarray(self.head, dtype=np.float64).reshape(self.shape)


_DTYPE_NAMES: dict = {}


def summarize(value, head: int = HEAD) -> Summary | None:
    """Summary of a NumPy array, a number, or anything with a NumPy ``_value`` (``None`` stays ``None``).

    ``head``: how many leading values to keep (``HEAD``; ``WINDOW_HEAD`` for a window op's tensors).
    """
    if value is None:
        return None
    raw = getattr(value, "_value", value)
    if type(raw) is np.ndarray or isinstance(raw, np.generic):
        arr = raw
        if arr.ndim == 0:  # fast path: scalars are most of what a teaching trace holds
            dt = arr.dtype
            dtype = _DTYPE_NAMES.get(dt)
            if dtype is None:  # NumPy builds dtype names in Python: name each dtype once
                dtype = _DTYPE_NAMES[dt] = dt.name
            v = int(arr) if dt.kind == "b" else arr.item()
            return Summary((), dtype, 1, v, v, v, (v,))
    else:
        arr = np.asarray(raw)  # the recorder hands device arrays over as NumPy already
    dtype = arr.dtype.name
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int8)
    size = int(arr.size)
    if size == 0:
        return Summary(tuple(int(d) for d in arr.shape), dtype, 0, None, None, None, ())
    flat = arr.reshape(-1)
    if size == 1:
        v = flat[0].item()
        return Summary(tuple(int(d) for d in arr.shape), dtype, 1, v, v, v, (v,))
    with np.errstate(all="ignore"):
        lo, hi = flat.min().item(), flat.max().item()
        mean = float(flat.mean(dtype=np.float64))
    return Summary(tuple(int(d) for d in arr.shape), dtype, size, lo, hi, mean, tuple(flat[:head].tolist()))


# ---------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """Base of all events: ``seq`` is the order within its trace, ``tape`` the tape id."""

    kind: ClassVar[str] = "event"
    seq: int
    tape: int


@dataclass(frozen=True)
class TapeBegin(Event):
    """A tape started recording (``with`` entered, or its first ``watch``)."""

    kind: ClassVar[str] = "tape_begin"
    parent: Optional[int] = None  # the tape that was recording around it, if any
    persistent: bool = False
    watch_accessed_variables: bool = True


@dataclass(frozen=True)
class TapeEnd(Event):
    """A tape stopped recording (``with`` block left)."""

    kind: ClassVar[str] = "tape_end"


@dataclass(frozen=True)
class TapeReset(Event):
    """``tape.reset()``: everything recorded so far was forgotten."""

    kind: ClassVar[str] = "tape_reset"


@dataclass(frozen=True)
class Watch(Event):
    """A tensor or variable became watched.  ``auto``: a trainable variable read inside the tape."""

    kind: ClassVar[str] = "watch"
    tensor: int = 0
    name: Optional[str] = None  # the variable's name ('x0:0'); None for a plain tensor
    variable: bool = False
    trainable: bool = False
    auto: bool = False
    value: Optional[Summary] = None
    label: Optional[str] = None  # a named constant's name= (``ad.constant(2.0, name="c")``)


@dataclass(frozen=True)
class Op(Event):
    """A forward op recorded on a tape.

    ``node`` identifies the record (the same op recorded on two nested tapes
    gives two events with the same ``node``).  ``inputs`` keeps duplicates and
    order (``x*x`` has two inputs).  ``in_names`` names the inputs that are
    variables.  ``during`` is the tape whose gradient was being computed when
    this op ran (an outer tape recording a backward pass), else ``None``.
    ``formula`` writes the op in its inputs ``a, b, c...`` (``"a · b"``) and
    ``partials`` gives each input's partial derivative (``("b", "a")``), as
    the table of primitives states them.
    """

    kind: ClassVar[str] = "op"
    node: int = 0
    op_type: str = ""
    name: str = ""
    scope: str = ""
    inputs: tuple[int, ...] = ()
    output: int = 0
    in_shapes: tuple[tuple[int, ...], ...] = ()
    in_dtypes: tuple[str, ...] = ()
    in_names: tuple[Optional[str], ...] = ()
    in_values: tuple[Optional[Summary], ...] = ()
    shape: tuple[int, ...] = ()
    dtype: str = ""
    value: Optional[Summary] = None
    attrs: dict = field(default_factory=dict)
    during: Optional[int] = None
    formula: str = ""
    partials: tuple[str, ...] = ()
    in_labels: tuple[Optional[str], ...] = ()  # the name= of inputs that are named constants


@dataclass(frozen=True)
class OpSkipped(Event):
    """An op on watched inputs that ran while the tape was not recording (``stop_recording``)."""

    kind: ClassVar[str] = "op_skipped"
    op_type: str = ""
    scope: str = ""
    inputs: tuple[int, ...] = ()
    output: int = 0
    shape: tuple[int, ...] = ()
    dtype: str = ""
    reason: str = "stop_recording"
    value: Optional[Summary] = None


@dataclass(frozen=True)
class Leave(Event):
    """A watched tensor left the package (turned into a NumPy array): gradients stop here."""

    kind: ClassVar[str] = "leave"
    tensor: int = 0
    how: str = "numpy"
    value: Optional[Summary] = None


@dataclass(frozen=True)
class State(Event):
    """A variable's value was changed in place (``assign_add``...): history before it is not on the tape."""

    kind: ClassVar[str] = "state"
    variable: int = 0
    name: Optional[str] = None
    how: str = "assign"
    value: Optional[Summary] = None


@dataclass(frozen=True)
class GradientBegin(Event):
    """``gradient``/``jacobian`` called: the backward pass starts.  ``call`` counts calls per tape."""

    kind: ClassVar[str] = "gradient_begin"
    call: int = 1
    method: str = "gradient"
    targets: tuple[int, ...] = ()
    sources: tuple[int, ...] = ()
    source_names: tuple[Optional[str], ...] = ()
    source_dtypes: tuple[str, ...] = ()
    target_dtypes: tuple[str, ...] = ()
    target_values: tuple[Optional[Summary], ...] = ()


@dataclass(frozen=True)
class GradientRow(Event):
    """A ``jacobian``/``batch_jacobian`` call starts its backward pass for row ``row`` of ``rows`` (from 1).

    Such a call runs one whole backward pass per element of the target (per
    element of one example's target for ``batch_jacobian``), seeded with 1 at
    ``index`` and 0 elsewhere; the pass's ``accumulate`` events sum only that
    pass's contributions, and what reaches a source is row ``row`` of its Jacobian.
    """

    kind: ClassVar[str] = "gradient_row"
    row: int = 1
    rows: int = 1
    index: tuple[int, ...] = ()  # the target element this pass differentiates (within one example: batch)


@dataclass(frozen=True)
class BackwardStep(Event):
    """One node's gradient rule ran: ``upstream`` came in, ``grads[i]`` went to ``inputs[i]`` (None: nothing)."""

    kind: ClassVar[str] = "backward_step"
    node: int = 0
    op_type: str = ""
    step: int = 0
    inputs: tuple[int, ...] = ()
    output: int = 0
    upstream: Optional[Summary] = None
    grads: tuple[Optional[Summary], ...] = ()


@dataclass(frozen=True)
class Accumulate(Event):
    """A contribution added to a tensor's gradient; ``total`` is the sum so far (``count`` terms).

    ``node`` is the op whose rule sent it, ``None`` for the seed of a target; ``seed`` is then the
    seed tensor's id (an outer tape that records the backward pass sees it as an input).
    """

    kind: ClassVar[str] = "accumulate"
    tensor: int = 0
    node: Optional[int] = None
    count: int = 1
    contribution: Optional[Summary] = None
    total: Optional[Summary] = None
    seed: Optional[int] = None


@dataclass(frozen=True)
class GradientEnd(Event):
    """The backward pass finished: one result per source (``None``: not connected).

    ``spent``: a non-persistent tape cannot be used again.
    """

    kind: ClassVar[str] = "gradient_end"
    sources: tuple[int, ...] = ()
    results: tuple[Optional[Summary], ...] = ()
    spent: bool = False


@dataclass(frozen=True)
class ForwardBegin(Event):
    """A ``ForwardAccumulator`` was entered (``tape`` is its id): forward mode follows ``primals``.

    A ``watch`` and a ``tangent`` event follow for each primal (its value, and the direction given).
    """

    kind: ClassVar[str] = "forward_begin"
    primals: tuple[int, ...] = ()


@dataclass(frozen=True)
class ForwardEnd(Event):
    """The ``ForwardAccumulator``'s ``with`` block was left."""

    kind: ClassVar[str] = "forward_end"


@dataclass(frozen=True)
class Tangent(Event):
    """Forward mode: ``tensor``'s tangent (its directional derivative ẋ) became known.

    For an op's output, ``inputs`` are the op's inputs, ``in_tangents``
    their tangents (``None``: not followed, a zero tangent) and ``terms`` each
    followed input's term of the sum ``ẏ = Σ ∂y/∂aᵢ · ȧᵢ`` (``None`` where
    not followed, or for a custom gradient's op); ``partials`` holds the
    values of ``∂y/∂aᵢ`` where the op and the followed inputs are scalars; the ``op`` event
    of the same output (from a tape, or from the accumulator itself) comes
    first.  For a primal of the accumulator, ``inputs`` is empty.
    """

    kind: ClassVar[str] = "tangent"
    tensor: int = 0
    op_type: str = ""
    inputs: tuple[int, ...] = ()
    in_tangents: tuple[Optional[Summary], ...] = ()
    terms: tuple[Optional[Summary], ...] = ()
    partials: tuple[Optional[Summary], ...] = ()
    tangent: Optional[Summary] = None


EVENT_TYPES: dict[str, type] = {cls.kind: cls for cls in (
    TapeBegin, TapeEnd, TapeReset, Watch, Op, OpSkipped, Leave, State,
    GradientBegin, GradientRow, BackwardStep, Accumulate, GradientEnd, ForwardBegin, ForwardEnd, Tangent)}


def _defaults(cls) -> dict:
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = None  # filled per event by make(): no shared mutable default
    return out


_DEFAULTS = {cls: _defaults(cls) for cls in EVENT_TYPES.values()}


def make(cls, seq: int, tape: int, **fields) -> Event:
    """An event built without the frozen dataclass's per-field checks: what a recorder calls per op.

    The same event as ``cls(seq, tape, **fields)`` (equal, same repr), for
    fields that are already the right types; about five times faster.
    """
    e = object.__new__(cls)
    d = e.__dict__
    d.update(_DEFAULTS[cls])
    d["seq"], d["tape"] = seq, tape
    d.update(fields)
    if cls is Op and d["attrs"] is None:
        d["attrs"] = {}
    return e


class TraceFormatError(ValueError):
    """A JSON document that is not a valid autodiff_viz trace."""


__all__ = [
    "Event", "TapeBegin", "TapeEnd", "TapeReset", "Watch", "Op", "OpSkipped", "Leave", "State",
    "GradientBegin", "GradientRow", "BackwardStep", "Accumulate", "GradientEnd", "ForwardBegin", "ForwardEnd",
    "Tangent", "Summary", "summarize", "TraceFormatError", "EVENT_TYPES", "FORMAT", "VERSION", "WINDOW_OPS",
    "WINDOW_HEAD",
]
