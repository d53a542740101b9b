"""Recording: the engine's announcements turned into trace events, and ``trace()``.

This is the one module that reads engine objects for the views.  The engine
announces what it does through :mod:`autodiff_viz._context` (``emit``); a listener here
converts each announcement into a plain event of :mod:`autodiff_viz.events`.
:func:`from_tape` describes what a live tape holds with the same conversion
(:func:`_op_fields`), so a trace and a bare tape give the same ``op`` events.

State is per thread: a trace collects the events of the thread that opened
it, and "the last trace" that ``viz.graph(tape)`` looks in is per thread too.

>>> import autodiff_viz as ad
>>> with ad.trace() as tr:
...     x = ad.Variable(2.0)
...     with ad.GradientTape() as t:
...         y = x * x
...     g = t.gradient(y, x)
>>> [e.formula for e in tr.events if e.kind == "op"]
['a · b']
"""
from __future__ import annotations

import contextlib
import math
import sys
import warnings
import weakref

import numpy as np

from . import _backend, _context
from . import events as _events
from ._gradient_counts import GradientCounts
from ._op_view import Op as _OpView
from ._record import ID, IN_IDS, OUT_ID, PRIM, RULE
from ._registry import PRIMITIVES
from ._forward import ForwardAccumulator
from ._tape import GradientTape
from ._tensor import EagerTensor, ResourceVariable, Tensor
from .events import (Accumulate, BackwardStep, Event, ForwardBegin, ForwardEnd, GradientBegin, GradientEnd,
                     GradientRow, Leave, Op, OpSkipped, State, Tangent, TapeBegin, TapeEnd, TapeReset, Watch)
from .traces import Trace


def summarize(value, head=_events.HEAD):
    """The events' summary of a tensor, variable or array of any backend (copied to NumPy first)."""
    raw = getattr(value, "_value", value)
    if raw is not None and not isinstance(raw, (np.ndarray, np.generic, int, float, bool)):
        raw = _backend.to_numpy(raw)
    return _events.summarize(raw, head)


def _head(op_type) -> int:
    """How many leading values an op's events keep of each tensor: more for a convolution or pooling."""
    return _events.WINDOW_HEAD if op_type in _events.WINDOW_OPS else _events.HEAD


def _short(s):
    """``s`` cut to the ordinary head: what other events reuse of a window op's longer summary."""
    return s if s is None or len(s.head) <= _events.HEAD else s._replace(head=s.head[:_events.HEAD])

def _dtype_name(t) -> str:
    return getattr(getattr(t, "dtype", None), "name", str(getattr(t, "dtype", "")))


def _var_name(t) -> str | None:
    return t.name if isinstance(t, ResourceVariable) else None


def _plain(value, depth=0):
    """Op attributes as JSON-plain values (anything exotic becomes its short repr)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return _plain(value.item(), depth)
    if isinstance(value, (list, tuple)) and depth < 3 and len(value) <= 16:
        return [_plain(v, depth + 1) for v in value]
    return repr(value)[:80]


# ---------------------------------------------------------------------------
# The waiting list: its entries' layout, declared once
# ---------------------------------------------------------------------------
class _Layout:
    """Where an entry's fields lie in the waiting list, counted from after its head.

    Every entry begins with its head, ``_ENTRY_HEAD`` slots: its handler and
    its tape's id.  Then come ``after`` slots read as a block, its ``fields``
    in order (each name an offset attribute: ``_OP.value``; the last one
    counts the rows), then, for ops and backward steps, that many rows
    of values: one per input of an op, one per input a step sent a gradient to.  The writers
    (``_Converter.op`` and ``.step``) append in this order; the handlers
    (``on_*``) read by these names and return where the next entry starts.

    >>> lay = _Layout(("a", "n_inputs"), row=("x", "y"))
    >>> lay.n_inputs, lay.columns([9, 2, 10, 20, 11, 21], 0)
    (1, ([[10, 11], [20, 21]], 6))
    """

    def __init__(self, fields, row=(), after=0):
        for offset, name in enumerate(fields, after):
            setattr(self, name, offset)
        self.size, self.row = after + len(fields), len(row)
        self._cuts = tuple(slice(j, None, len(row)) for j in range(len(row)))  # one per row field

    def columns(self, buf, k):
        """Each row field's values, one per input, and where the entry starting at ``k`` ends."""
        start = k + self.size
        end = start + self.row * buf[start - 1]  # (the rows are counted by the last field)
        return list(map(buf[start:end].__getitem__, self._cuts)), end


_ENTRY_HEAD = 2  # an entry's handler, then its tape's id
# Any announcement but an op or a step: its payload dict (tape taken out).
_PAYLOAD = _Layout(("payload",))
# An op: its record and its output's raw value; per input, its raw value, or its variable name,
# label and raw value together (see _write_inputs).
_OP = _Layout(("record", "value", "n_inputs"), row=("input",))
# A backward step: its record, the step number and the upstream gradient's raw value;
# per input sent a gradient (as the engine hands them, see _context): its position, the gradient
# and its total so far (how many it has had is counted when the event is made).
_STEP = _Layout(("record", "step", "upstream", "n_sent"), row=("position", "sent", "total"))



class _Converter:
    """Listens to the engine's hooks and appends plain events to a list."""

    def __init__(self, trace: Trace, tensors: dict | None = None, max_events: int | None = None):
        # The trace owns this converter (to finish its events when read): a weak link back keeps
        # the two out of a reference cycle, so they are freed with the last tape or name.
        self.trace = weakref.ref(trace)
        self.events = trace._events
        # Announcements whose values are all small and immutable (scalars, tensors of a few values)
        # wait here and become events when the trace is read: a traced loop pays only the append.
        # A variable (its value may change) or a large array (the trace must not keep it) turns
        # everything waiting into events at once, in order.  They wait in one flat list (laid
        # out as _Layout says), without their tape (the tape holds the trace: that would be
        # a cycle) and, for ops and backward steps, as their records and raw values (see op and step).
        self.pending: list = []
        trace._recorder = self
        self.max_events = max_events
        self.tensors = tensors  # id -> live tensor, only for trace(keep_tensors=True)
        self.in_gradient: list[int] = []  # tapes whose backward pass is running (innermost last)
        self.calls: dict[int, int] = {}
        self.counts = GradientCounts()  # how many gradients each tensor has had (backward_step, accumulate)
        self.tapes: set[int] = set()
        # Summaries made once per value: an op's output is summarized when its event is made, and
        # reused where it is another op's input (a step's gradients, likewise, in its accumulate events).
        self.outputs: dict[int, object] = {}   # tensor id of an op's output -> its summary
        # The handlers are the class's plain functions (a bound method would be a new object, and a cycle).
        self.handlers = {name[3:]: getattr(_Converter, name) for name in dir(_Converter) if name.startswith("on_")}
        self.limit = self._limit()

    def _add(self, cls, tape, **fields):
        if self.max_events is not None and len(self.events) >= self.max_events:
            trace = self.trace()
            if trace is not None:
                if not trace.dropped:
                    warnings.warn(f"ad.trace(max_events={self.max_events}): the trace is full, later events are "
                                  "dropped (pass a larger max_events, or None for no limit)", RuntimeWarning,
                                  stacklevel=4)
                trace.dropped += 1
            return
        self.events.append(_events.make(cls, len(self.events), tape, **fields))

    def __call__(self, kind: str, p: dict) -> None:
        handler = self.handlers.get(kind)
        if handler is None:
            return
        tid = self._tape_id(p.pop("tape"))  # (the payload is this listener's own)
        pending = self.pending
        mark = len(pending)
        pending += (handler, tid, p)  # (_PAYLOAD)
        self._wait_or_now(mark, _can_wait(kind, p))

    # The two announcements of every op and every backward step (see _context.emit).  They
    # write the record and raw values into the waiting list, in the order _OP and _STEP
    # declare: a waiting announcement holds no tensor, op view or container of its own, only
    # the record its tape made (immutable: the event is built from it when the trace is read)
    # and NumPy values, so a traced loop leaves the garbage collector little new to walk.  The
    # record also holds the values its rule reads, which are small when the announcement waits;
    # a record with a rule of its own (custom_gradient: its closure may hold anything) never waits.
    def op(self, tape, rec, out, inputs) -> None:
        tid = tape._id
        if tid not in self.tapes:
            self._tape_id(tape)
        pending = self.pending
        v = out._value
        if len(pending) < self.limit and rec[RULE] is None:
            # An op of one or two plain op results (no variable, no name), all NumPy scalars of one
            # type or small: it waits, written here without a call (on every op of a traced loop;
            # _op_in_full writes the others).
            tv = type(v)
            one_type = tv in _SCALAR_TYPES
            n = len(inputs)
            if n == 2:
                a, b = inputs
                if type(a) is EagerTensor and type(b) is EagerTensor:
                    x, y = a._value, b._value
                    if (one_type and type(x) is tv and type(y) is tv) or (_small_raw(v) and _small_raw(x) and _small_raw(y)):
                        pending += (_ON_OP, tid, rec, v, 2, x, y)
                        return
            elif n == 1:
                a = inputs[0]
                if type(a) is EagerTensor:
                    x = a._value
                    if (one_type and type(x) is tv) or (_small_raw(v) and _small_raw(x)):
                        pending += (_ON_OP, tid, rec, v, 1, x)
                        return
        self._op_in_full(tid, rec, out, inputs)

    def _op_in_full(self, tid, rec, out, inputs) -> None:
        """Any op: it waits if it can (see ``__init__``), else becomes its event now."""
        if self.tensors is not None:
            self.tensors[out._id] = out
        pending = self.pending
        mark = len(pending)
        v = out._value
        pending += (_ON_OP, tid, rec, v, len(inputs))
        waits = _write_inputs(pending, inputs) and _small_raw(v) and rec[RULE] is None
        self._wait_or_now(mark, waits)

    def step(self, tape, rec, step, upstream, sent) -> None:
        tid = tape._id
        if tid not in self.tapes:
            self._tape_id(tape)
        pending = self.pending
        up = upstream
        n = len(sent)
        if n <= 6 and len(pending) < self.limit and rec[RULE] is None:
            # One or two inputs given a gradient (nearly every step), all NumPy scalars of one type or
            # small: it waits, written without a loop.
            tu = type(up)
            one_type = tu in _SCALAR_TYPES
            if n == 3:
                g, t = sent[1], sent[2]
                if (one_type and type(g) is tu and type(t) is tu) or (_small_raw(up) and _small_raw(g) and _small_raw(t)):
                    pending += (_ON_STEP, tid, rec, step, up, 1, sent[0], g, t)
                    return
            elif n == 6:
                g, t, h, u = sent[1], sent[2], sent[4], sent[5]
                if ((one_type and type(g) is tu and type(t) is tu and type(h) is tu and type(u) is tu)
                        or (_small_raw(up) and _small_raw(g) and _small_raw(t) and _small_raw(h) and _small_raw(u))):
                    pending += (_ON_STEP, tid, rec, step, up, 2, sent[0], g, t, sent[3], h, u)
                    return
        self._step_in_full(tid, rec, step, up, sent)

    def _step_in_full(self, tid, rec, step, up, sent) -> None:
        """Any backward step: it waits if it can (see ``__init__``), else becomes its events now."""
        pending = self.pending
        mark = len(pending)
        n = len(sent)
        pending += (_ON_STEP, tid, rec, step, up, n // 3)
        scalars = _SCALAR_TYPES
        waits = (type(up) in scalars or _small_raw(up)) and rec[RULE] is None
        for j in range(0, n, 3):  # (position, gradient, total: their values)
            g, t = sent[j + 1], sent[j + 2]
            pending += (sent[j], g, t)
            if waits and not ((type(g) in scalars or _small_raw(g)) and (t is g or type(t) in scalars or _small_raw(t))):
                waits = False
        if not waits or mark >= self.limit:
            self._wait_or_now(mark, False)

    def _tape_id(self, tape) -> int:
        tid = tape._id
        if tid not in self.tapes:  # the tape keeps this trace alive for views that get only the tape
            self.tapes.add(tid)
            tape._traces.append(self.trace())
        return tid

    def _wait_or_now(self, mark, waits) -> None:
        """The announcement written at ``pending[mark:]`` waits, or (large values, a variable, no room) becomes its events now."""
        if waits and mark < self.limit:
            return
        pending = self.pending
        entry = pending[mark:]
        del pending[mark:]
        if pending:  # what waits before it becomes events first
            self.flush()
        entry[0](self, entry[1], entry, _ENTRY_HEAD)
        self.limit = self._limit()

    def _limit(self):
        """How long the waiting list may be before another announcement: none waits once it is that long.

        Each announcement takes three slots or more, so at most as many wait as the trace
        has room for events; none when the trace keeps tensors (it handles each at once).
        """
        if self.tensors is not None:
            return 0
        return _NO_LIMIT if self.max_events is None else 3 * (self.max_events - len(self.events))

    def flush(self) -> None:
        """Turn every waiting announcement into its event, in order."""
        pending, self.pending = self.pending, []
        k, n = 0, len(pending)
        while k < n:  # each handler reads its facts and returns where the next announcement starts
            k = pending[k](self, pending[k + 1], pending, k + _ENTRY_HEAD)
        self.limit = self._limit()

    def on_tape_begin(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        self._add(TapeBegin, tid, parent=p["parent"], persistent=p["persistent"],
                  watch_accessed_variables=p["watch_accessed_variables"])
        return k + _PAYLOAD.size

    def on_tape_end(self, tid, buf, k):
        self._add(TapeEnd, tid)
        return k + _PAYLOAD.size

    def on_tape_reset(self, tid, buf, k):
        self._add(TapeReset, tid)
        return k + _PAYLOAD.size

    def on_watch(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        if self.tensors is not None:
            self.tensors[p["tensor"]._id] = p["tensor"]
        self._add(Watch, tid, **watch_fields(p["tensor"], bool(p.get("auto", False))))
        return k + _PAYLOAD.size

    def on_op(self, tid, buf, k):
        node = _OpView(buf[k + _OP.record])
        (slots,), end = _OP.columns(buf, k)
        names, labels, raws = _input_columns(slots)
        value = summarize(buf[k + _OP.value], _head(node.type))
        self.outputs[node.out_id] = _short(value)
        self._add(Op, tid, **_op_fields(node, names, labels, raws, self.outputs), value=value,
                  during=self.in_gradient[-1] if self.in_gradient else None)
        return end

    def on_op_skipped(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        self._add(OpSkipped, tid, **skipped_fields(p))
        return k + _PAYLOAD.size

    def on_leave(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        self._add(Leave, tid, **leave_fields(p))
        return k + _PAYLOAD.size

    def on_state(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        self._add(State, tid, **state_fields(p))
        return k + _PAYLOAD.size

    def on_gradient_begin(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        if tid in self.in_gradient:  # a previous call on this tape raised before its end event
            del self.in_gradient[self.in_gradient.index(tid):]
        self.in_gradient.append(tid)
        self.calls[tid] = self.calls.get(tid, 0) + 1
        self.counts.start(tid)
        targets, sources = p["targets"], p["sources"]
        self._add(GradientBegin, tid, call=self.calls[tid], method=p.get("method", "gradient"),
                  targets=tuple(t._id for t in targets), sources=tuple(s._id for s in sources),
                  source_names=tuple(_var_name(s) for s in sources),
                  source_dtypes=tuple(_dtype_name(s) for s in sources),
                  target_dtypes=tuple(_dtype_name(t) for t in targets),
                  target_values=tuple(summarize(t) for t in targets))
        return k + _PAYLOAD.size

    def on_gradient_row(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        self.counts.start(tid)  # (each row is a backward pass of its own)
        self._add(GradientRow, tid, row=p["row"], rows=p["rows"], index=p["index"])
        return k + _PAYLOAD.size

    def on_backward_step(self, tid, buf, k):
        # The step's event, then one accumulate event per input that got a gradient.
        rec = buf[k + _STEP.record]
        node, in_ids = rec[ID], rec[IN_IDS]
        (positions, given, sums), end = _STEP.columns(buf, k)
        n = len(in_ids)
        sent, totals, counts = [None] * n, [None] * n, [0] * n
        tally = self.counts.now(tid)
        for j, i in enumerate(positions):
            t = in_ids[i]
            sent[i], totals[i] = given[j], sums[j]
            counts[i] = tally[t] = tally.get(t, 0) + 1
        op_type = rec[PRIM].type
        head = _head(op_type)
        grads = tuple([summarize(g, head) for g in sent])
        self._add(BackwardStep, tid, node=node, op_type=op_type, step=int(buf[k + _STEP.step]),
                  inputs=tuple(in_ids), output=rec[OUT_ID],
                  upstream=summarize(buf[k + _STEP.upstream], head), grads=grads)
        for i, g in enumerate(sent):
            if g is not None:
                total, sent_i = totals[i], _short(grads[i])
                self._add(Accumulate, tid, tensor=in_ids[i], node=node, count=int(counts[i]), contribution=sent_i,
                          total=sent_i if total is g else summarize(total))
        return end

    def on_accumulate(self, tid, buf, k):  # (a target's seed: the steps' own come with backward_step)
        p = buf[k + _PAYLOAD.payload]
        count = int(p.get("count", 1))
        self.counts.seed(tid, p["tensor_id"], count)
        contribution, total = p["contribution"], p["total"]
        c = summarize(contribution)
        self._add(Accumulate, tid, tensor=p["tensor_id"], node=None, count=count, contribution=c,
                  total=c if total is contribution else summarize(total), seed=contribution._id)
        return k + _PAYLOAD.size

    def on_gradient_end(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        self.counts.end(tid)
        if tid in self.in_gradient:
            del self.in_gradient[self.in_gradient.index(tid):]
        self._add(GradientEnd, tid, sources=tuple(s._id for s in p["sources"]),
                  results=tuple(summarize(r) for r in p["results"]), spent=bool(p.get("spent", False)))
        return k + _PAYLOAD.size

    # Forward mode (a ForwardAccumulator; its id stands where a tape's would).
    def on_forward_begin(self, tid, buf, k):
        p = buf[k + _PAYLOAD.payload]
        self._add(ForwardBegin, tid, primals=tuple(t._id for t in p["primals"]))
        for t, tangent in zip(p["primals"], p["tangents"]):
            self._add(Watch, tid, **watch_fields(t, False))
            self._add(Tangent, tid, tensor=t._id, tangent=summarize(tangent))
        return k + _PAYLOAD.size

    def on_forward_step(self, tid, buf, k):
        # The op's own event first, unless a tape in this trace recorded it already.
        p = buf[k + _PAYLOAD.payload]
        out, inputs = p["output"], p["inputs"]
        if out._id not in self.outputs:
            if self.tensors is not None:
                self.tensors[out._id] = out
            raws = [t._value for t in inputs]
            names = [t.name if t._is_variable else None for t in inputs]
            labels = [None if t._is_variable else t.name for t in inputs]
            value = self.outputs[out._id] = summarize(out)
            self._add(Op, tid, **_op_fields(_OpView(p["record"]), names, labels, raws, self.outputs), value=value,
                      during=self.in_gradient[-1] if self.in_gradient else None)
        self._add(Tangent, tid, tensor=out._id, op_type=p["op_type"], inputs=tuple(t._id for t in inputs),
                  in_tangents=tuple(summarize(t) for t in p["in_tangents"]),
                  terms=tuple(summarize(t) for t in p["terms"]), partials=tuple(summarize(t) for t in p["partials"]),
                  tangent=summarize(p["tangent"]))
        return k + _PAYLOAD.size

    def on_forward_end(self, tid, buf, k):
        self._add(ForwardEnd, tid)
        return k + _PAYLOAD.size



# What ops and steps write first in their entries, read without the class (on every op of a traced loop).
_ON_OP, _ON_STEP = _Converter.on_op, _Converter.on_backward_step
_NO_LIMIT = sys.maxsize  # (the waiting list's length bound without max_events: an int compares faster than inf)
# One function per event kind, shared by live recording and :func:`from_tape` (whose
# notes hold the same payloads the hooks announce).
def watch_fields(t, auto: bool) -> dict:
    name = _var_name(t)
    return dict(tensor=t._id, name=name, variable=name is not None,
                trainable=bool(getattr(t, "trainable", False)) if name is not None else False,
                auto=auto, value=summarize(t), label=None if name is not None else t.name)


def skipped_fields(p) -> dict:
    out = p["output"]
    return dict(op_type=p["op_type"], scope=p.get("scope", _context.current_scope()), inputs=tuple(t._id for t in p["inputs"]),
                output=out._id, shape=tuple(out.shape), dtype=_dtype_name(out),
                reason=p.get("reason", "stop_recording"), value=summarize(out))


def leave_fields(p) -> dict:
    t = p["tensor"]
    return dict(tensor=t._id, how=p.get("how", "numpy"), value=summarize(t))


def state_fields(p) -> dict:
    v = p["variable"]
    return dict(variable=v._id, name=_var_name(v), how=p.get("how", "assign"), value=summarize(v))


_HEAD = _events.HEAD
# Per announcement kind: the payload keys holding one tensor, and those holding a list of them.
_VALUES = {
    "tape_begin": ((), ()), "tape_end": ((), ()), "tape_reset": ((), ()),
    "watch": (("tensor",), ()), "op_skipped": (("output",), ("inputs",)),
    "leave": (("tensor",), ()), "state": (("variable",), ()),
    "gradient_begin": ((), ("targets", "sources")), "gradient_row": ((), ()), "gradient_end": ((), ("results", "sources")),
    "accumulate": (("contribution", "total"), ()),
    "forward_begin": ((), ("primals", "tangents")), "forward_end": ((), ()),
    "forward_step": (("output", "tangent"), ("inputs", "in_tangents", "terms", "partials")),
}


# What ops and backward steps write into the waiting list (see _Converter.op).
def _small_raw(v) -> bool:
    """Whether a raw value can wait: None, a NumPy scalar, or a NumPy array of a few values."""
    return v is None or isinstance(v, np.generic) or type(v) is np.ndarray and v.size <= _HEAD


# The NumPy scalar types of floating dtypes: a value of one can wait (``_small_raw``), told by one
# set lookup on every op and step of a traced loop.
_SCALAR_TYPES = frozenset((np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128))


class _Named:
    """An op input with a name as it waits: a variable's name, or a named constant's label, and its raw value."""

    __slots__ = ("name", "label", "raw")

    def __init__(self, name, label, raw):
        self.name, self.label, self.raw = name, label, raw


def _write_inputs(buf, inputs) -> bool:
    """Per op input (tensor or None), one slot: its raw value, or a :class:`_Named`; whether all can wait."""
    waits = True
    for t in inputs:
        if t is None:
            buf.append(None)
        elif t._is_variable:
            buf.append(_Named(t.name, None, t._value))
            waits = False
        elif type(t) is EagerTensor:  # (a plain op result has no name)
            v = t._value
            buf.append(v)
            if waits and type(v) not in _SCALAR_TYPES:
                waits = _small_raw(v)
        else:
            v = t._value
            buf.append(_Named(None, t.name, v))
            waits = waits and _small_raw(v)
    return waits


def _input_columns(slots) -> tuple:
    """The inputs' variable names, labels and raw values, from the slots :func:`_write_inputs` wrote."""
    for s in slots:
        if type(s) is _Named:
            break
    else:  # (the common case: plain op results, no names; the lists are only read)
        nones = [None] * len(slots)
        return nones, nones, slots
    names, labels, raws = [None] * len(slots), [None] * len(slots), list(slots)
    for i, s in enumerate(slots):
        if type(s) is _Named:
            names[i], labels[i], raws[i] = s.name, s.label, s.raw
    return names, labels, raws


def _can_wait(kind: str, p: dict) -> bool:
    """Whether an announcement's values can be summarized later: small NumPy values, no variables."""
    ones, lists = _VALUES.get(kind, _NO_VALUES)
    for key in ones:
        if not _small(p[key]):
            return False
    for key in lists:
        for t in p[key]:
            if not _small(t):
                return False
    return True


def _small(t) -> bool:
    return t is None or not t._is_variable and _small_raw(t._value)


_NO_VALUES = ((), ())


def _op_fields(node, names, labels, raws, known=None) -> dict:
    """The plain fields of an op event, from its record and its inputs' facts (:func:`_write_inputs`).

    ``known`` maps the ids of earlier ops' outputs to their summaries, reused here.
    """
    in_values = []
    head = _head(node.type)
    for i, i_id in enumerate(node.in_ids):
        v = raws[i] if i < len(raws) else None
        if v is None:
            in_values.append(None)
            continue
        s = known.get(i_id) if known is not None and names[i] is None and head == _HEAD else None
        in_values.append(s if s is not None else summarize(v, head))
    pad = (None,) * (len(node.in_ids) - len(names))
    in_names, in_labels = tuple(names) + pad, tuple(labels) + pad
    prim = PRIMITIVES.get(node.type)
    return dict(node=node.id, op_type=node.type, name=node.name, scope=node.scope or "",
                formula=prim.formula if prim is not None else "",
                partials=prim.partials if prim is not None else (),
                inputs=tuple(node.in_ids), output=node.out_id,
                in_shapes=tuple(tuple(int(d) for d in s) for s in node.in_shapes),
                in_dtypes=tuple(_dtype_name_of(d) for d in node.in_dtypes),
                in_names=tuple(in_names), in_values=tuple(in_values), in_labels=tuple(in_labels),
                shape=tuple(int(d) for d in node.out_shape), dtype=_dtype_name_of(node.out_dtype),
                attrs={str(k): _plain(v) for k, v in (node.attrs or {}).items()})


def _dtype_name_of(d) -> str:
    return getattr(d, "name", str(d))


# ---------------------------------------------------------------------------
# trace() and reading a live tape
# ---------------------------------------------------------------------------
DEFAULT_MAX_EVENTS = 1_000_000  # about 1 GB of events: far beyond a lesson, short of filling the machine


@contextlib.contextmanager
def trace(keep_tensors: bool = False, max_events: int | None = DEFAULT_MAX_EVENTS):
    """Collect the events of every tape (nested ones included) while the block runs.

    A trace collects the events of the thread that opened it only: another
    thread's tapes are not in it.  It holds every event until it closes, so
    its memory grows with the work done inside it (on scalars about 1.2 KB
    per op and 1.3 KB per backward step once read, 0.1 and 0.3 KB while its
    small values wait unread; on 1,000 values 2 and 3 KB: ``benchmarks/trace_memory.py``);
    past ``max_events`` later events are dropped with one warning
    (``tr.dropped`` counts them; ``None`` for no limit).  Trace a few steps
    to look at, not a whole training run.  The tapes it saw keep it alive
    (so ``viz.graph(tape)`` finds their events); the package itself holds
    only weak references, so it is freed with the last tape or name.

    With ``keep_tensors=True``, ``tr.tensors`` maps the id of every watched
    tensor and op output to the live tensor (so a view can ask a persistent
    tape for d(node)/d(input)); it is never saved to JSON.

    >>> import autodiff_viz as ad
    >>> with ad.trace() as tr:
    ...     x = ad.Variable(2.0)
    ...     with ad.GradientTape() as t:
    ...         y = x * x
    ...     g = t.gradient(y, x)
    >>> sorted({e.kind for e in tr.events})[:3]
    ['accumulate', 'backward_step', 'gradient_begin']
    """
    if max_events is not None and (not isinstance(max_events, int) or max_events < 1):
        raise ValueError(f"trace(max_events=...): a positive integer or None, got {max_events!r}")
    tr = Trace()
    if keep_tensors:
        tr.tensors = {}
    listener = _Converter(tr, tr.tensors if keep_tensors else None, max_events)
    _context.listen(listener)
    _context.state.open_traces.append(tr)
    try:
        yield tr
    finally:
        _context.unlisten(listener)
        if tr in _context.state.open_traces:
            _context.state.open_traces.remove(tr)
        _context.state.closed_traces = [r for r in _context.state.closed_traces[-15:] if r() is not None] + [weakref.ref(tr)]


def traces_of(tape) -> list[Trace]:
    """The traces that saw this tape, newest first (the tape holds them; see :func:`trace`)."""
    return list(reversed(tape._traces))


def trace_for(tape) -> Trace:
    """The events of a tape: the newest trace that saw it, else what the tape itself still holds."""
    found = traces_of(tape)
    return found[0] if found else from_tape(tape)


def recent_traces() -> list[Trace]:
    """This thread's open traces (innermost first), then closed ones still alive, newest first."""
    closed = [t for t in (r() for r in reversed(_context.state.closed_traces)) if t is not None and t not in _context.state.open_traces]
    return list(reversed(_context.state.open_traces)) + closed


def is_tape(obj) -> bool:
    return isinstance(obj, GradientTape)


def is_accumulator(obj) -> bool:
    """Whether ``obj`` is a ``ForwardAccumulator`` (forward mode; the traces that saw it: :func:`traces_of`)."""
    return isinstance(obj, ForwardAccumulator)


def tape_id(tape) -> int:
    return tape._id


def tensor_id(t) -> int:
    """The id events use for a tensor or variable."""
    return t._id


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def variable_name(obj) -> str | None:
    return _var_name(obj)


def tensor_info(t) -> dict:
    """Plain facts about a tensor for views: id, shape, dtype, variable name, value summary."""
    name = _var_name(t)
    return {"id": t._id, "shape": tuple(t.shape), "dtype": _dtype_name(t), "name": name,
            "variable": name is not None, "trainable": bool(getattr(t, "trainable", False)),
            "value": summarize(t)}


def from_tape(tape) -> Trace:
    """Events describing what a live tape holds now (no trace needed).

    Gives the tape's records as ``op`` events, its watched variables and
    tensors as ``watch`` events, and its notes (``leave``, ``state``,
    ``op_skipped``).  Upstream gradients are not known this way: open a
    :func:`trace` around the computation to see the backward pass.  A
    non-persistent tape whose ``gradient()`` has run has freed its records'
    values: its ops, watched variables and notes remain, with the call that
    spent it (a ``gradient_begin`` naming its targets and sources, without
    values), so a later, refused call can be told apart (open a trace to keep it all).
    """
    events: list[Event] = []

    def add(cls, **f):
        events.append(cls(seq=len(events), tape=tape._id, **f))

    add(TapeBegin, parent=tape._parent, persistent=tape._persistent, watch_accessed_variables=tape._auto)
    records = tape._records
    spent = records is None or tape._spent
    if records is None:
        records = []
    nodes = tape._ops()
    variables = dict(tape._variables)
    produced = {n.out_id for n in nodes}
    # A variable's value now may not be the one the tape used (assigned since): only a value a
    # record saved when the op ran is the tape's; else the picture shows none.
    used: dict = {}
    for n in nodes:
        for i, t in zip(n.in_ids, getattr(n, "inputs", None) or ()):
            if i in variables and t is not None and i not in used:
                used[i] = t
    for vid, var in sorted(variables.items()):
        fields = watch_fields(var, var.trainable and tape._auto)
        fields["value"] = summarize(used[vid]) if vid in used else None
        add(Watch, **fields)
    for tid in sorted(i for i in tape._live if i not in produced and i not in variables):
        if tid not in variables:
            add(Watch, tensor=tid, value=None)
    for n in nodes:
        slots: list = []
        _write_inputs(slots, getattr(n, "inputs", None) or ())
        f = _op_fields(n, *_input_columns(slots))
        f["in_names"] = tuple(variables[i].name if i in variables else nm for i, nm in zip(n.in_ids, f["in_names"]))
        outs = getattr(n, "outputs", None) or (None,)
        add(Op, **f, value=summarize(outs[0], _head(n.type)) if outs[0] is not None else None)
    notes = {"leave": (Leave, leave_fields), "state": (State, state_fields),
             "op_skipped": (OpSkipped, lambda info: skipped_fields(dict(info, scope=info.get("scope", ""))))}
    for kind, info in tape._notes:
        if kind in notes:
            cls, fields = notes[kind]
            add(cls, **fields(info))
    if spent and not tape._persistent:
        known = {e.output for e in events if isinstance(e, Op)} | {e.tensor for e in events if isinstance(e, Watch)}
        asked = getattr(tape, "_asked", None)
        if asked and set(asked[0]) | set(asked[1]) <= known:  # the call that spent it (no values: none were kept)
            add(GradientBegin, targets=asked[0], sources=asked[1])
        add(GradientEnd, spent=True)
    return Trace(events)


__all__ = ["trace", "from_tape", "trace_for", "traces_of", "recent_traces", "is_tape", "is_accumulator", "is_tensor", "tape_id", "tensor_id",
           "variable_name", "tensor_info", "DEFAULT_MAX_EVENTS"]
