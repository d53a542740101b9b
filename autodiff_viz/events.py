"""Trace events: the plain records every view reads (the schema, ``Trace`` and JSON).

This module is pure data: it imports nothing of the engine, so it is the one
file a renderer author reads.  :mod:`autodiff_viz._recording` turns what the
engine does into these records (``ad.trace()``).  Views (graphs, animations,
widgets) read only these records, so a hand-written list of events is as good
as a traced computation, and a trace saved as JSON can be replayed without the
engine.

Glossary: an *op* event is one recorded forward operation (a node of the
graph); a *backward_step* is that node's gradient rule running, with the
*upstream gradient* it received and the gradient it sent to each input; an
*accumulate* event adds one contribution to a tensor's gradient.

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

import contextlib
import dataclasses
import json
import math
import types
import typing
from dataclasses import dataclass, field
from typing import ClassVar, Optional, Union

import numpy as np

FORMAT = "autodiff_viz.trace"
VERSION = 2  # 2: op events carry the op's display formula and partial derivatives
HEAD = 8  # how many leading values a summary keeps


# ---------------------------------------------------------------------------
# Value summaries
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Summary:
    """What a view needs to know about an array: never the whole array.

    ``head`` holds the first values in row-major order (all of them when the
    array has at most ``HEAD`` elements, see :attr:`complete`).  ``min``,
    ``max`` and ``mean`` are ``None`` for empty arrays; booleans count as 0/1.
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


def summarize(value) -> Summary | None:
    """Summary of a NumPy array, a number, or anything with a NumPy ``_value`` (``None`` stays ``None``)."""
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
    return Summary(tuple(int(d) for d in arr.shape), dtype, size, lo, hi, mean,
                   tuple(x.item() for x in flat[:HEAD]))


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

    ``node`` is the op whose rule sent it, ``None`` for the seed of a target.
    """

    kind: ClassVar[str] = "accumulate"
    tensor: int = 0
    node: Optional[int] = None
    count: int = 1
    contribution: Optional[Summary] = None
    total: Optional[Summary] = None


@dataclass(frozen=True)
class GradientEnd(Event):
    """The backward pass finished: one result per source (``None``: not connected).

    ``spent``: a non-persistent tape cannot be used again.
    """

    kind: ClassVar[str] = "gradient_end"
    sources: tuple[int, ...] = ()
    results: tuple[Optional[Summary], ...] = ()
    spent: bool = False


EVENT_TYPES: dict[str, type] = {cls.kind: cls for cls in (
    TapeBegin, TapeEnd, TapeReset, Watch, Op, OpSkipped, Leave, State,
    GradientBegin, BackwardStep, Accumulate, GradientEnd)}


# ---------------------------------------------------------------------------
# The trace
# ---------------------------------------------------------------------------
class Trace:
    """An ordered list of events, from ``with ad.trace() as tr:`` or loaded from JSON.

    Tensors and tapes are named by plain integer ids; ``seq`` is an event's
    position in its trace.

    ``events`` is a plain list; ``to_json``/``from_json`` round-trip it.
    """

    def __init__(self, events=None):
        self.events: list[Event] = list(events or [])
        self.tensors: dict = {}  # filled only by trace(keep_tensors=True)
        self.dropped = 0         # events left out once the trace was full (trace(max_events=...))

    def __repr__(self):
        tapes = sorted({e.tape for e in self.events})
        return f"<Trace: {len(self.events)} events, tapes {tapes}>"

    def __len__(self):
        return len(self.events)

    def __iter__(self):
        return iter(self.events)

    def tapes(self) -> list[int]:
        """Tape ids in order of first appearance."""
        seen: dict[int, None] = {}
        for e in self.events:
            seen.setdefault(e.tape, None)
        return list(seen)

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    # -- JSON ---------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "events": [event_to_dict(e) for e in self.events]}

    def to_json(self, indent=None) -> str:
        """Plain JSON (non-finite numbers are written as the strings "nan", "inf", "-inf")."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, separators=(",", ":") if indent is None
                          else None)

    @classmethod
    def from_dict(cls, data) -> "Trace":
        if not isinstance(data, dict):
            raise TraceFormatError(f"a trace is a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise TraceFormatError(f"not an autodiff_viz trace: 'format' is {data.get('format')!r}, expected {FORMAT!r}")
        if data.get("version") != VERSION:
            raise TraceFormatError(f"unsupported trace version {data.get('version')!r} (this version reads {VERSION})")
        extra = set(data) - {"format", "version", "events"}
        if extra:
            raise TraceFormatError(f"unknown top-level keys {sorted(extra)}")
        events = data.get("events")
        if not isinstance(events, list):
            raise TraceFormatError("'events' must be a list")
        return cls([event_from_dict(e, f"events[{i}]") for i, e in enumerate(events)])

    @classmethod
    def from_json(cls, text: str | bytes) -> "Trace":
        """Load and validate a trace; anything that is not exactly the schema raises :class:`TraceFormatError`.

        Only JSON is parsed: nothing is executed or unpickled.
        """
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, TypeError) as e:
            raise TraceFormatError(f"not valid JSON: {e}") from None
        return cls.from_dict(data)

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @classmethod
    def load(cls, path) -> "Trace":
        with open(path, encoding="utf-8") as f:
            return cls.from_json(f.read())


class TraceFormatError(ValueError):
    """A JSON document that is not a valid autodiff_viz trace."""


def _reject_constant(name):
    raise ValueError(f"{name} is not allowed (write non-finite numbers as strings)")


_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _num_out(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _to_plain(value):
    if isinstance(value, Summary):
        return {"shape": list(value.shape), "dtype": value.dtype, "size": value.size,
                "min": _num_out(value.min), "max": _num_out(value.max), "mean": _num_out(value.mean),
                "head": [_num_out(v) for v in value.head]}
    if isinstance(value, tuple):
        return [_to_plain(v) for v in value]
    if isinstance(value, float):
        return _num_out(value)
    return value


def event_to_dict(e: Event) -> dict:
    out = {"kind": e.kind}
    for f in dataclasses.fields(e):
        out[f.name] = _to_plain(getattr(e, f.name))
    return out


_HINTS: dict[type, dict] = {}


def _hints(cls) -> dict:
    h = _HINTS.get(cls)
    if h is None:
        h = _HINTS[cls] = {k: v for k, v in typing.get_type_hints(cls).items()
                           if k in {f.name for f in dataclasses.fields(cls)}}
    return h


def event_from_dict(d, where="event") -> Event:
    """One event from its JSON form, checking every field's type."""
    if not isinstance(d, dict):
        raise TraceFormatError(f"{where}: an event is an object, got {type(d).__name__}")
    kind = d.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise TraceFormatError(f"{where}: unknown event kind {kind!r} (known: {', '.join(EVENT_TYPES)})")
    hints = _hints(cls)
    extra = set(d) - set(hints) - {"kind"}
    if extra:
        raise TraceFormatError(f"{where} ({kind}): unknown fields {sorted(extra)}")
    missing = set(hints) - set(d)
    if missing:
        raise TraceFormatError(f"{where} ({kind}): missing fields {sorted(missing)}")
    values = {name: _load(tp, d[name], f"{where}.{name}") for name, tp in hints.items()}
    return cls(**values)


def _load(tp, v, where):
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if v is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _load(a, v, where)
            except TraceFormatError as e:
                errors.append(str(e))
        raise TraceFormatError(errors[0] if len(errors) == 1 else f"{where}: {v!r:.60} matches none of {tp}")
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(v, list):
            raise TraceFormatError(f"{where}: expected a list, got {type(v).__name__}")
        return tuple(_load(args[0], x, f"{where}[{i}]") for i, x in enumerate(v))
    if origin is dict or tp is dict:
        if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
            raise TraceFormatError(f"{where}: expected an object with string keys")
        for k, x in v.items():
            _check_plain(x, f"{where}.{k}")
        return dict(v)
    if tp is Summary:
        return _load_summary(v, where)
    if tp is bool:
        if not isinstance(v, bool):
            raise TraceFormatError(f"{where}: expected true/false, got {v!r:.60}")
        return v
    if tp is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TraceFormatError(f"{where}: expected an integer, got {v!r:.60}")
        return v
    if tp is float:
        if isinstance(v, str) and v in _SPECIAL:
            return _SPECIAL[v]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TraceFormatError(f"{where}: expected a number, got {v!r:.60}")
        return v
    if tp is str:
        if not isinstance(v, str):
            raise TraceFormatError(f"{where}: expected a string, got {v!r:.60}")
        return v
    raise TraceFormatError(f"{where}: unsupported field type {tp}")  # pragma: no cover


def _check_plain(x, where, depth=0):
    if depth > 4:
        raise TraceFormatError(f"{where}: nested too deeply")
    if x is None or isinstance(x, (bool, int, float, str)):
        return
    if isinstance(x, list):
        for i, y in enumerate(x):
            _check_plain(y, f"{where}[{i}]", depth + 1)
        return
    raise TraceFormatError(f"{where}: attributes hold numbers, strings, booleans or lists, got {type(x).__name__}")


_SUMMARY_KEYS = {"shape", "dtype", "size", "min", "max", "mean", "head"}


def _load_summary(v, where):
    if not isinstance(v, dict):
        raise TraceFormatError(f"{where}: a value summary is an object, got {type(v).__name__}")
    if set(v) != _SUMMARY_KEYS:
        raise TraceFormatError(f"{where}: a value summary has exactly the keys {sorted(_SUMMARY_KEYS)}, "
                               f"got {sorted(v)}")
    shape = _load(tuple[int, ...], v["shape"], where + ".shape")
    size = _load(int, v["size"], where + ".size")
    if size != int(np.prod(shape, dtype=np.int64)):
        raise TraceFormatError(f"{where}: size {size} does not match shape {shape}")
    head = _load(tuple[float, ...], v["head"], where + ".head")
    if len(head) > min(size, HEAD) or len(head) < min(size, HEAD):
        raise TraceFormatError(f"{where}: head has {len(head)} values, expected {min(size, HEAD)}")
    return Summary(shape=shape, dtype=_load(str, v["dtype"], where + ".dtype"), size=size,
                   min=_load(Optional[float], v["min"], where + ".min"),
                   max=_load(Optional[float], v["max"], where + ".max"),
                   mean=_load(Optional[float], v["mean"], where + ".mean"), head=head)


__all__ = [
    "Event", "TapeBegin", "TapeEnd", "TapeReset", "Watch", "Op", "OpSkipped", "Leave", "State",
    "GradientBegin", "BackwardStep", "Accumulate", "GradientEnd", "Summary", "summarize",
    "Trace", "TraceFormatError", "EVENT_TYPES", "FORMAT", "VERSION",
]
