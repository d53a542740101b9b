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
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import ClassVar, Optional, Union

import numpy as np

FORMAT = "autodiff_viz.trace"
VERSION = 2  # 2: op events carry the op's display formula and partial derivatives
HEAD = 16  # how many leading values a summary keeps (a tensor of up to 16 elements is shown in full)
# Trace.from_json/load refuse longer documents unread: about the JSON of a million events (the
# recorder's default cap), while parsing it still fits in the memory of an ordinary machine.
MAX_JSON_CHARS = 2 ** 30


# ---------------------------------------------------------------------------
# Value summaries
# ---------------------------------------------------------------------------
class Summary(typing.NamedTuple):
    """What a view needs to know about an array: never the whole array.

    ``head`` holds the first values in row-major order (all of them when the
    array has at most ``HEAD`` elements, see :attr:`complete`).  ``min``,
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
        self._events: list[Event] = list(events or [])
        self.tensors: dict = {}  # filled only by trace(keep_tensors=True)
        self.dropped = 0         # events left out once the trace was full (trace(max_events=...))
        self._recorder = None    # a live recording with announcements not yet turned into events

    @property
    def events(self) -> list:
        """The events, in order (a recording still turning announcements into events finishes first)."""
        if self._recorder is not None:
            self._recorder.flush()
        return self._events

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
        """A trace from its plain form (what :meth:`to_dict` gives); every field is checked."""
        if not isinstance(data, dict):
            raise TraceFormatError(f"a trace is a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise TraceFormatError(f"not an autodiff_viz trace: 'format' is {_short(data.get('format'))}, "
                                   f"expected {FORMAT!r}")
        version = data.get("version")
        if type(version) is not int or version != VERSION:
            raise TraceFormatError(f"unsupported trace version {_short(version)} (this version reads {VERSION})")
        extra = set(data) - {"format", "version", "events"}
        if extra:
            raise TraceFormatError(f"unknown top-level keys {_names(extra)}")
        events = data.get("events")
        if not isinstance(events, list):
            raise TraceFormatError("'events' must be a list")
        return cls([event_from_dict(e, f"events[{i}]") for i, e in enumerate(events)])

    @classmethod
    def from_json(cls, text: str | bytes, max_chars: int | None = MAX_JSON_CHARS) -> "Trace":
        """Load and validate a trace; anything that is not exactly the schema raises :class:`TraceFormatError`.

        Only JSON is parsed: nothing is executed or unpickled.  The work is
        bounded: a document longer than ``max_chars`` characters (bytes for
        ``bytes``; ``None``: no limit) is refused before it is parsed, nesting
        deeper than Python's recursion limit, integers beyond 64 bits where
        ids, shapes and sizes are expected, shapes of more than 64 dimensions
        or of more elements than a 64-bit size can count, and numbers beyond
        the range of a 64-bit float (``1e400``) are format errors too, never
        ``RecursionError`` or ``OverflowError``.
        """
        if not isinstance(text, (str, bytes, bytearray)):
            raise TraceFormatError(f"expected JSON text (str or bytes), got {type(text).__name__}")
        if max_chars is not None and len(text) > max_chars:
            unit = "characters" if isinstance(text, str) else "bytes"
            raise TraceFormatError(f"the document has {len(text):,} {unit}, more than the limit of {max_chars:,} "
                                   f"(max_chars=...)")
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise TraceFormatError("not a trace: the JSON is nested too deeply (a trace nests a few levels)") from None
        except (ValueError, TypeError) as e:  # UnicodeDecodeError is a ValueError
            raise TraceFormatError(f"not valid JSON: {_one_line(e)}") from None
        return cls.from_dict(data)

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @classmethod
    def load(cls, path, max_chars: int | None = MAX_JSON_CHARS) -> "Trace":
        """Read a trace saved by :meth:`save` (UTF-8 JSON); see :meth:`from_json` for the limits.

        A missing file raises ``FileNotFoundError``; a file that is not UTF-8
        text, or longer than ``max_chars`` bytes, raises :class:`TraceFormatError`
        (the file is never read past the limit).
        """
        with open(path, "rb") as f:
            raw = f.read() if max_chars is None else f.read(max_chars + 1)
        if max_chars is not None and len(raw) > max_chars:
            raise TraceFormatError(f"{path}: the file is longer than the limit of {max_chars:,} bytes "
                                   f"(max_chars=...)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TraceFormatError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        return cls.from_json(text, max_chars=None)


class TraceFormatError(ValueError):
    """A JSON document that is not a valid autodiff_viz trace."""


# -- loading: one checking function per field, built once per event class ----
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
MAX_RANK = 64  # NumPy's limit on dimensions


class _Bad(Exception):
    """A value that breaks the schema; ``path`` grows (``[3].head``) as it travels up to the field."""

    def __init__(self, message, path=""):
        super().__init__(message)
        self.message, self.path = message, path

    def at(self, segment):
        return _Bad(self.message, segment + self.path)


def _short(v, limit=60):
    """``repr(v)`` cut to ``limit`` characters (a hostile document may hold a huge string)."""
    if isinstance(v, (str, bytes)) and len(v) > limit:
        v = v[:limit]
    text = repr(v) if not isinstance(v, (list, dict)) or len(v) <= 8 else f"<{type(v).__name__} of {len(v)}>"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _names(keys, most=5):
    shown = sorted(_short(k, 40) for k in list(keys)[:1000])
    return "[" + ", ".join(shown[:most]) + (f", … {len(keys) - most} more" if len(keys) > most else "") + "]"


def _one_line(e, limit=200):
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _reject_constant(name):
    raise ValueError(f"{name} is not allowed (write non-finite numbers as strings)")


_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_FLOAT_MAX = sys.float_info.max


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


def _int(v):
    if type(v) is int or (isinstance(v, int) and not isinstance(v, bool)):
        if INT64_MIN <= v <= INT64_MAX:
            return v
        raise _Bad(f"integer {_short(v)} is out of range (ids, shapes and sizes are 64-bit integers)")
    raise _Bad(f"expected an integer, got {_short(v)}")


def _float(v):
    t = type(v)
    if t is float or (isinstance(v, float)):
        if math.isfinite(v):
            return v
        raise _Bad(f"number {_short(v)} is out of range of a 64-bit float "
                   "(non-finite numbers are written as the strings \"nan\", \"inf\", \"-inf\")")
    if t is str and v in _SPECIAL:
        return _SPECIAL[v]
    if isinstance(v, int) and not isinstance(v, bool):
        if -_FLOAT_MAX <= v <= _FLOAT_MAX:  # an integer value (of an integer array) is kept as it is
            return v
        raise _Bad(f"number {_short(v)} is out of range of a 64-bit float")
    raise _Bad(f"expected a number, got {_short(v)}")


def _str(v):
    if isinstance(v, str):
        return v
    raise _Bad(f"expected a string, got {_short(v)}")


def _bool(v):
    if isinstance(v, bool):
        return v
    raise _Bad(f"expected true/false, got {_short(v)}")


def _plain_value(x, depth=0):
    """Check one attribute value: numbers, strings, booleans, null, or lists of them (4 levels at most)."""
    if x is None or isinstance(x, (bool, int, str)):
        return
    if isinstance(x, float):
        if not math.isfinite(x):
            raise _Bad(f"number {_short(x)} is out of range of a 64-bit float")
        return
    if isinstance(x, list):
        if depth >= 4:
            raise _Bad("nested too deeply")
        for i, y in enumerate(x):
            try:
                _plain_value(y, depth + 1)
            except _Bad as b:
                raise b.at(f"[{i}]") from None
        return
    raise _Bad(f"attributes hold numbers, strings, booleans or lists, got {type(x).__name__}")


def _attrs(v):
    if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
        raise _Bad("expected an object with string keys")
    for k, x in v.items():
        try:
            _plain_value(x)
        except _Bad as b:
            raise b.at(f".{k}") from None
    return dict(v)


def _shape(v):
    """A shape: at most 64 non-negative 64-bit dimensions whose product (of the non-zero ones) fits in 64 bits."""
    if type(v) is not list:
        raise _Bad(f"expected a list, got {type(v).__name__}")
    if len(v) > MAX_RANK:
        raise _Bad(f"a shape has at most {MAX_RANK} dimensions, got {len(v)}")
    n = 1
    for i, d in enumerate(v):
        try:
            d = _int(d)
        except _Bad as b:
            raise b.at(f"[{i}]") from None
        if d < 0:
            raise _Bad(f"dimension {d} is negative", f"[{i}]")
        if d:
            n *= d
            if n > INT64_MAX:
                raise _Bad(f"shape {_short(v)} has more elements than a 64-bit size can count")
    return tuple(v)


def _size_of(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _tuple_of(item):
    def load(v):
        if type(v) is not list:
            raise _Bad(f"expected a list, got {type(v).__name__}")
        try:
            return tuple(map(item, v))
        except _Bad:  # find which element, for the message
            for i, x in enumerate(v):
                try:
                    item(x)
                except _Bad as b:
                    raise b.at(f"[{i}]") from None
            raise  # pragma: no cover - the loaders are pure
    return load


def _optional(item):
    def load(v):
        return None if v is None else item(v)
    return load


_SUMMARY_KEYS = {"shape", "dtype", "size", "min", "max", "mean", "head"}
_heads = _tuple_of(_float)
_opt_float = _optional(_float)


def _summary(v):
    if not isinstance(v, dict):
        raise _Bad(f"a value summary is an object, got {type(v).__name__}")
    if v.keys() != _SUMMARY_KEYS:
        raise _Bad(f"a value summary has exactly the keys {sorted(_SUMMARY_KEYS)}, got {_names(v)}")
    values = {}
    for name, load in (("shape", _shape), ("size", _int), ("head", _heads), ("dtype", _str),
                       ("min", _opt_float), ("max", _opt_float), ("mean", _opt_float)):
        try:
            values[name] = load(v[name])
        except _Bad as b:
            raise b.at(f".{name}") from None
    shape, size, head = values["shape"], values["size"], values["head"]
    if size != _size_of(shape):
        raise _Bad(f"size {size} does not match shape {shape}")
    if len(head) != min(size, HEAD):
        raise _Bad(f"head has {len(head)} values, expected {min(size, HEAD)}")
    return Summary(**values)


_LOADERS: dict = {}


def _loader(tp):
    """The checking function for a field's type (built once per type)."""
    fn = _LOADERS.get(tp)
    if fn is not None:
        return fn
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        choices = [_loader(a) for a in args if a is not type(None)]
        if len(choices) == 1:
            fn = _optional(choices[0]) if type(None) in args else choices[0]
        else:  # pragma: no cover - the schema only has Optional[X]
            def fn(v, choices=choices, nullable=type(None) in args):
                if v is None and nullable:
                    return None
                for c in choices:
                    with contextlib.suppress(_Bad):
                        return c(v)
                raise _Bad(f"{_short(v)} matches none of {tp}")
    elif origin is tuple:
        fn = _tuple_of(_loader(typing.get_args(tp)[0]))
    elif origin is dict or tp is dict:
        fn = _attrs
    else:
        fn = {Summary: _summary, bool: _bool, int: _int, float: _float, str: _str}.get(tp)
        if fn is None:  # pragma: no cover
            raise TypeError(f"unsupported field type {tp}")
    _LOADERS[tp] = fn
    return fn


# fields that hold shapes get the shape check (dimensions >= 0, the product fits in 64 bits)
_SHAPE_FIELDS = {"shape": _shape, "in_shapes": _tuple_of(_shape)}
_EVENT_LOADERS: dict[type, tuple] = {}


def _event_loader(cls):
    found = _EVENT_LOADERS.get(cls)
    if found is None:
        names = {f.name for f in dataclasses.fields(cls)}
        hints = {k: v for k, v in typing.get_type_hints(cls).items() if k in names}
        fields = tuple((name, _SHAPE_FIELDS.get(name) or _loader(tp)) for name, tp in hints.items())
        found = _EVENT_LOADERS[cls] = (fields, frozenset(hints) | {"kind"})
    return found


def event_from_dict(d, where="event") -> Event:
    """One event from its JSON form, checking every field's type and range."""
    if not isinstance(d, dict):
        raise TraceFormatError(f"{where}: an event is an object, got {type(d).__name__}")
    kind = d.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise TraceFormatError(f"{where}: unknown event kind {_short(kind)} (known: {', '.join(EVENT_TYPES)})")
    fields, keys = _event_loader(cls)
    if d.keys() != keys:
        extra = set(d) - keys
        if extra:
            raise TraceFormatError(f"{where} ({kind}): unknown fields {_names(extra)}")
        raise TraceFormatError(f"{where} ({kind}): missing fields {_names(keys - set(d))}")
    values = {}
    for name, load in fields:
        try:
            values[name] = load(d[name])
        except _Bad as b:
            raise TraceFormatError(f"{where}.{name}{b.path}: {b.message}") from None
    return cls(**values)


def _load(tp, v, where):
    """``v`` checked against the field type ``tp``; :class:`TraceFormatError` naming ``where`` if it does not fit."""
    try:
        return _loader(tp)(v)
    except _Bad as b:
        raise TraceFormatError(f"{where}{b.path}: {b.message}") from None


__all__ = [
    "Event", "TapeBegin", "TapeEnd", "TapeReset", "Watch", "Op", "OpSkipped", "Leave", "State",
    "GradientBegin", "BackwardStep", "Accumulate", "GradientEnd", "Summary", "summarize",
    "Trace", "TraceFormatError", "EVENT_TYPES", "FORMAT", "VERSION",
]
