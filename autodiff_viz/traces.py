"""A trace: the events of a recording in order, its JSON, and the invariants every trace keeps.

:mod:`autodiff_viz.events` is the schema; this module holds :class:`Trace`
(what ``ad.trace()`` fills) and reads and writes it: the one place that
refuses a broken trace.
Loading checks every field of every event against the schema's types and
ranges (a hostile or garbled document gets a :class:`TraceFormatError` naming
the field, never ``RecursionError``, ``OverflowError`` or a silently odd
value), then :func:`check` checks what holds between events (an op's output
is new, so there are no cycles; backward steps name recorded ops; shapes are
possible).  Views call :func:`check` on any list of events they are given, so
a hand-written list is held to the same rules as a loaded file.  All work is
linear in the size of the document.

>>> import autodiff_viz as ad
>>> from autodiff_viz import traces
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = x * x
>>> traces.from_json(traces.to_json(tr.events)) == tr.events
True
>>> traces.from_json('{"format": "autodiff_viz.trace", "version": 3, "events": [{"kind": "nope"}]}')
Traceback (most recent call last):
...
autodiff_viz.events.TraceFormatError: events[0]: unknown event kind 'nope' (known: tape_begin, tape_end, tape_reset, watch, op, op_skipped, leave, state, gradient_begin, gradient_row, backward_step, accumulate, gradient_end, forward_begin, forward_end, tangent)
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import sys
import types
import typing
from typing import Union

from .events import (EVENT_TYPES, FORMAT, HEAD, VERSION, WINDOW_HEAD, Accumulate, BackwardStep, Event,
                     GradientRow, Leave, Op, OpSkipped, Summary, TraceFormatError, Watch)


MAX_JSON_CHARS = 2 ** 30  # the longest document from_json reads unless told otherwise


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

    # -- JSON ------------------------------------------------------------------
    def to_dict(self) -> dict:
        return to_dict(self.events)

    def to_json(self, indent=None) -> str:
        """Plain JSON (non-finite numbers are written as the strings "nan", "inf", "-inf")."""
        return to_json(self.events, indent)

    @classmethod
    def from_dict(cls, data) -> "Trace":
        """A trace from its plain form (what :meth:`to_dict` gives); see :func:`autodiff_viz.from_dict`."""
        return cls(from_dict(data))

    @classmethod
    def from_json(cls, text: str | bytes, max_chars: int | None = MAX_JSON_CHARS) -> "Trace":
        """Load and validate a trace; see :func:`autodiff_viz.from_json` for what is refused."""
        return cls(from_json(text, max_chars))

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @classmethod
    def load(cls, path, max_chars: int | None = MAX_JSON_CHARS) -> "Trace":
        """Read a trace saved by :meth:`save`; see :func:`autodiff_viz.read` for the limits."""
        return cls(read(path, max_chars))


# ---------------------------------------------------------------------------
# Whole traces
# ---------------------------------------------------------------------------
def to_dict(events) -> dict:
    """The plain form of a list of events (what ``json.dumps`` writes)."""
    return {"format": FORMAT, "version": VERSION, "events": [event_to_dict(e) for e in events]}


def to_json(events, indent=None) -> str:
    """Plain JSON (non-finite numbers are written as the strings "nan", "inf", "-inf")."""
    return json.dumps(to_dict(events), indent=indent, allow_nan=False,
                      separators=(",", ":") if indent is None else None)


def from_dict(data) -> list:
    """The events of a trace's plain form; every field is checked, then the invariants (:func:`check`)."""
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
    out = [event_from_dict(e, f"events[{i}]") for i, e in enumerate(events)]
    check(out)
    return out


def from_json(text: str | bytes, max_chars: int | None = MAX_JSON_CHARS) -> list:
    """Load and validate a trace's events; anything that is not exactly the schema raises :class:`TraceFormatError`.

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
    return from_dict(data)


def read(path, max_chars: int | None = MAX_JSON_CHARS) -> list:
    """The events of a trace file (UTF-8 JSON); see :func:`from_json` for the limits.

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
    return from_json(text, max_chars=None)


# ---------------------------------------------------------------------------
# One event: one checking function per field, built once per event class
# ---------------------------------------------------------------------------
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
    if not min(size, HEAD) <= len(head) <= min(size, WINDOW_HEAD):  # (a window op's tensors keep more)
        raise _Bad(f"head has {len(head)} values, expected {min(size, HEAD)}"
                   + (f" to {min(size, WINDOW_HEAD)}" if size > HEAD else ""))
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


# ---------------------------------------------------------------------------
# Invariants between events (one event's fields are checked as it loads)
# ---------------------------------------------------------------------------
def _check_shape(shape, e, what):
    if len(shape) > MAX_RANK or any(d < 0 for d in shape):
        raise TraceFormatError(f"event {e.seq} ({e.kind}): {what} {tuple(shape)} is not a shape")
    n = 1
    for d in shape:
        n *= d
        if n > INT64_MAX:  # the loader's limit too: one rule for files and lists
            raise TraceFormatError(f"event {e.seq} ({e.kind}): {what} {tuple(shape)} has more elements "
                                   f"than any array can hold")


def check(events) -> None:
    """Raise ``TraceFormatError`` naming the first event that breaks the trace's invariants.

    An op's output must be new (not produced by another op, nor used before
    it), which also rules out cycles; backward steps and accumulations must
    name ops that were recorded; shapes must be possible.  Linear in the
    number of events, so it never hangs.
    """
    produced: dict[int, int] = {}   # tensor id -> node id of the op that made it
    used: set[int] = set()          # tensor ids seen as inputs or watched so far
    nodes: set[int] = set()
    for e in events:
        if not isinstance(e, Event):
            raise TraceFormatError(f"not an event: {type(e).__name__}")
        if isinstance(e, Op):
            owner = produced.get(e.output)
            if owner is not None and owner != e.node:
                raise TraceFormatError(f"event {e.seq} (op {e.op_type}): output {e.output} was already made by "
                                       f"op node {owner}")
            if owner is None:
                if e.output in used or e.output in e.inputs:
                    raise TraceFormatError(f"event {e.seq} (op {e.op_type}): output {e.output} is used before "
                                           f"the op makes it (a cycle)")
                if e.node in nodes:
                    raise TraceFormatError(f"event {e.seq} (op {e.op_type}): node {e.node} already made another "
                                           f"tensor")
            used.update(e.inputs)
            produced[e.output] = e.node
            nodes.add(e.node)
            _check_shape(e.shape, e, "shape")
            for s in e.in_shapes:
                _check_shape(s, e, "input shape")
        elif isinstance(e, OpSkipped):
            used.update(e.inputs)
            used.add(e.output)
            _check_shape(e.shape, e, "shape")
        elif isinstance(e, (Watch, Leave)):
            used.add(e.tensor)
        elif isinstance(e, BackwardStep):
            if e.node not in nodes:
                raise TraceFormatError(f"event {e.seq} (backward_step {e.op_type}): node {e.node} was never "
                                       f"recorded by an op event")
            if len(e.grads) > len(e.inputs):
                raise TraceFormatError(f"event {e.seq} (backward_step {e.op_type}): {len(e.grads)} gradients "
                                       f"for {len(e.inputs)} inputs")
        elif isinstance(e, GradientRow):
            if not 1 <= e.row <= e.rows:
                raise TraceFormatError(f"event {e.seq} (gradient_row): row {e.row} of {e.rows} (rows count from 1)")
        elif isinstance(e, Accumulate):
            if e.node is not None and e.node not in nodes:
                raise TraceFormatError(f"event {e.seq} (accumulate): node {e.node} was never recorded by an "
                                       f"op event")
        for s in (getattr(e, "value", None), getattr(e, "total", None), getattr(e, "upstream", None)):
            if s is not None:
                _check_shape(s.shape, e, "value shape")
