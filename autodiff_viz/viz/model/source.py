"""From what a user passes to a view (tape, trace, events, tensor, function) to events.

The one place views turn their ``source`` argument into a list of trace
events: graphs, animations and explanations all call :func:`events_of`.  It
uses the recorder (:mod:`autodiff_viz._recording`) for live tapes and tensors
and never reads engine internals itself.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = x * x
>>> found = events_of(tape)
>>> found.tape == found.events[0].tape, found.traced
(True, True)
"""
from __future__ import annotations

import inspect
import os
import sys
from dataclasses import dataclass

import numpy as np

from ... import _recording as rec
from ... import events as ev
from ...traces import Trace
from ..text.words import tape_name

UNTRACED_HINT = ("This tape was recorded without ad.trace(), so values and gradients were not kept: "
                 "wrap the code in `with ad.trace():` to see them.")


@dataclass
class Found:
    """Events for a view: ``tape`` is the engine tape id to show (``None``: all of them).

    ``traced`` is False when the events were read from a bare tape (no values
    or backward pass were recorded): views then show :data:`UNTRACED_HINT`.
    """

    events: list
    tape: int | None = None
    traced: bool = True


def is_event_list(obj) -> bool:
    return isinstance(obj, Trace) or (isinstance(obj, (list, tuple)) and all(isinstance(e, ev.Event)
                                                                                for e in obj))


def events_of(source, tape=None, family=False) -> Found:
    """The events a view draws for ``source``.

    ``tape``: a ``GradientTape`` or its number in the picture (1 for T1) to
    show only what it recorded.  ``family``: with a tape as ``source``, also
    keep the tapes nested in it or around it (a second derivative needs both).
    """
    tape_id = None
    if tape is not None:
        tape_id = rec.tape_id(tape) if rec.is_tape(tape) else tape
    if rec.is_tape(source):
        tid = rec.tape_id(source)
        for tr in rec.traces_of(source):
            events = family_of(tr.events, tid) if family else list(tr.events)
            return Found(events, tid, True)
        return Found(list(rec.from_tape(source).events), tid, False)
    if rec.is_accumulator(source):  # forward mode: the whole trace (the tapes it ran around or inside too)
        for tr in rec.traces_of(source):
            return events_of(tr, tape)
        raise LookupError("this ForwardAccumulator was not traced: a ForwardAccumulator keeps no record of its "
                          "ops, so open `with ad.trace() as tr:` around it to draw it")
    if is_event_list(source):
        events = list(getattr(source, "events", source))
        if tape_id is not None and not rec.is_tape(tape):  # a number: T1, T2... as the picture shows them
            tape_id = tape_by_number(events, tape_id)
        return Found(events, tape_id, True)
    if rec.is_tensor(source):
        tid = rec.tensor_id(source)
        for tr in rec.recent_traces():
            if any(getattr(e, "output", None) == tid or getattr(e, "tensor", None) == tid for e in tr.events):
                return Found(upstream_of(tr.events, tid), tape_id, True)
        raise LookupError("this tensor was not recorded by any traced tape. Compute it inside "
                          "`with ad.trace() as tr:` (and a GradientTape), or pass the tape or the trace")
    raise TypeError(f"expected a GradientTape, a traced ForwardAccumulator, a Trace, a list of events or a tensor, "
                    f"got {type(source).__name__}")


def tape_numbers(events) -> dict:
    """Engine tape id -> 1, 2...: tapes numbered by first appearance, as every picture names them (``T1``)."""
    return {t: k for k, t in enumerate(dict.fromkeys(e.tape for e in events), 1)}


def tape_by_number(events, number):
    order = list(tape_numbers(events))
    if isinstance(number, int) and 1 <= number <= len(order):
        return order[number - 1]
    raise ValueError(f"no tape {tape_name(number)} in this trace (it has {len(order)} tapes)")


def family_of(events, tid):
    """Events of one tape and of the tapes nested in it or around it."""
    links: dict[int, set] = {}
    for e in events:
        if e.kind == "tape_begin" and e.parent is not None:
            links.setdefault(e.tape, set()).add(e.parent)
            links.setdefault(e.parent, set()).add(e.tape)
    keep, todo = {tid}, [tid]
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in keep:
                keep.add(other)
                todo.append(other)
    return [e for e in events if e.tape in keep]


def upstream_of(events, tid):
    """The events a tensor depends on (its ancestors' ops), plus the tapes' bookkeeping."""
    producers: dict[int, list] = {}
    for e in events:
        if isinstance(e, ev.Op):
            producers.setdefault(e.output, []).append(e)
    need, stack = {tid}, [tid]
    while stack:
        t = stack.pop()
        for op in producers.get(t, ()):
            for i in op.inputs:
                if i not in need:
                    need.add(i)
                    stack.append(i)
    keep = []
    for e in events:
        if isinstance(e, ev.Op):
            if e.output in need:
                keep.append(e)
        elif isinstance(e, (ev.Watch, ev.Leave)):
            if e.tensor in need:
                keep.append(e)
        elif isinstance(e, (ev.BackwardStep, ev.Accumulate, ev.OpSkipped)):
            continue
        else:
            keep.append(e)
    return keep


def ids(x):
    """Engine ids of a tensor, a list of tensors or ids, or a dict's values (``None`` stays ``None``)."""
    if x is None:
        return None
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        out = []
        for item in x:
            out.extend(ids(item) or ())
        return tuple(out)
    if rec.is_tensor(x):
        return (rec.tensor_id(x),)
    if isinstance(x, int) and not isinstance(x, bool):
        return (x,)
    raise TypeError(f"expected a tensor or a list of tensors, got {type(x).__name__}")


def name_map(names) -> dict:
    """``names=`` as ``{engine tensor id: label}``: from ``{"x": x}``, ``{x: "x"}`` or ``{id: "x"}``."""
    if not names:
        return {}
    if not isinstance(names, dict):
        raise TypeError(f"names= is a dict such as {{'x': x}}, got {type(names).__name__}")
    out = {}
    for k, v in names.items():
        if isinstance(k, str) and rec.is_tensor(v):
            out[rec.tensor_id(v)] = k
        elif isinstance(v, str) and isinstance(k, int) and not isinstance(k, bool):
            out[k] = v
        elif isinstance(v, str) and rec.is_tensor(k):
            out[rec.tensor_id(k)] = v
        else:
            raise TypeError(f"names=: cannot tell which tensor {k!r}: {v!r} names (use {{'label': tensor}})")
    return out


# ---------------------------------------------------------------------------
# The user's own names for tensors
# ---------------------------------------------------------------------------
DEFAULT_VARIABLE_NAME = "Variable:0"  # what a Variable is called when it is given no name=


_ID_FIELDS = ("inputs", "output", "tensor", "variable")


def tensor_ids(events, scoped=True) -> set:
    """Every tensor id the events mention (op inputs and outputs, watched, left, changed).

    ``scoped=False``: all but the outputs of ops run inside a name scope (see :func:`nameable_ids`).
    """
    out: set = set()
    drop: set = set()
    fields_of: dict = {}  # event class -> which of the id fields it has, found once per class
    for e in events:
        names = fields_of.get(type(e))
        if names is None:
            names = fields_of[type(e)] = tuple(f for f in _ID_FIELDS if hasattr(e, f))
        for field in names:
            v = getattr(e, field)
            if isinstance(v, tuple):
                out.update(v)
            elif isinstance(v, int):
                out.add(v)
        if not scoped and e.kind == "op" and e.scope:
            drop.add(e.output)
    return out - drop


def nameable_ids(events) -> set:
    """The tensors the caller's variable names may label: all but the outputs of ops run inside a
    name scope (a layer, a Module), whose boxes keep the op's name under the layer's own, so that
    ``h = layer(h)`` in a loop never names the last layer's op ``h``."""
    return tensor_ids(events, scoped=False)


def names_in(namespaces, ids=None) -> dict:
    """``{event tensor id: name}`` for the tensors that the namespaces (dicts, nearest first) hold.

    Only tensors whose id is in ``ids`` (all when ``None``; a function that gives the set is called
    only when the namespaces hold a tensor, so a picture drawn where no tensor is named reads no
    events for it); names that start
    with ``_`` are skipped (IPython's ``_``, ``_1``...); a tensor held by several
    names gets the shortest one of the nearest namespace; a variable keeps the
    ``name=`` it was given (only an unnamed ``Variable`` takes its Python name), and
    so does a constant made with ``name=``.

    >>> import autodiff_viz as ad
    >>> w, v, c = ad.Variable(1.0), ad.Variable(1.0, name="bias"), ad.constant(2.0)
    >>> found = names_in([{"weights": w, "w": w, "v": v, "_": c}])
    >>> sorted(found.values())
    ['w']
    """
    out: dict = {}
    for space in namespaces:
        mine: dict = {}
        for name, value in list(space.items()):
            if not isinstance(name, str) or name.startswith("_") or not rec.is_tensor(value):
                continue
            tid = rec.tensor_id(value)
            if tid in out:
                continue
            own = rec.variable_name(value)
            if own is not None and own != DEFAULT_VARIABLE_NAME:
                continue
            if own is None and value.name is not None:  # a constant made with name= keeps it
                continue
            if tid not in mine or len(name) < len(mine[tid]):
                mine[tid] = name
        out.update(mine)
    if ids is not None and out:  # an id left out here is left out of every namespace alike
        keep = ids() if callable(ids) else ids
        out = {tid: name for tid, name in out.items() if tid in keep}
    return out


def caller_names(ids) -> dict:
    """The names that the code drawing a picture gives the tensors in ``ids`` (a set, or a function that
    gives it: see :func:`names_in`).

    Frames are told apart by their source file.  Searched: the first frame
    whose code is not in this package (the user's cell, script, function or
    doctest: its locals, then its module's globals), then the package's own
    frames between it and the view (its examples, such as the tour), nearest
    first; frames of the views themselves (``autodiff_viz/viz``) are passed over.
    """
    views = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # autodiff_viz/viz
    package = os.path.dirname(views)
    frame = inspect.currentframe()
    inner, user = [], None
    try:
        f = frame.f_back if frame is not None else None
        while f is not None:
            path = f.f_code.co_filename  # "<doctest ...>", "<stdin>", a cell's name: outside the package
            path = path if path.startswith("<") else os.path.abspath(path)
            if not path.startswith(package + os.sep):
                user = f
                break
            if not path.startswith(views + os.sep):
                inner.append(f)
            f = f.f_back
        spaces = []
        for f in ([user] if user is not None else []) + inner:
            spaces.append(_locals_of(f))
            spaces.append(f.f_globals)
        return names_in(spaces, ids)
    finally:
        del frame, f, inner, user


def _locals_of(frame) -> dict:
    """A copy of a frame's local variables that keeps nothing alive after the picture is drawn.

    Before Python 3.13 reading a function's ``f_locals`` leaves a snapshot of
    its variables on the frame until the function returns; emptying it lets a
    tape or trace the function deletes afterwards be freed.  The snapshot is
    rebuilt whenever ``locals()`` or a debugger reads it again, and it is never
    written back without being rebuilt first, so emptying it changes no variable.
    """
    snapshot = frame.f_locals
    if snapshot is frame.f_globals:
        return {}
    copy = dict(snapshot)
    if sys.version_info < (3, 13) and frame.f_code.co_flags & inspect.CO_OPTIMIZED and type(snapshot) is dict:
        snapshot.clear()
    return copy


def tensor_info(t) -> dict:
    return rec.tensor_info(t)


def run_function(f, values, dtype, keep_tensors=False):
    """Run ``f`` on constants made from ``values`` under a trace and a tape; (trace, inputs, tape).

    The gradient of ``f``'s result with respect to every input is taken too,
    so the trace holds the backward pass.
    """
    import autodiff_viz as ad  # the public API: this is how a user would run it

    inputs = [ad.constant(v, dtype=dtype) for v in values]
    with ad.trace(keep_tensors=keep_tensors) as tr:
        with ad.GradientTape(persistent=keep_tensors) as tape:
            tape.watch(inputs)
            target = f(*inputs)
        tape.gradient(target, inputs)
    return tr, inputs, tape


def _plain_attrs(value):
    """An op's attributes as a trace stores them (lists) back into what the forward takes (tuples)."""
    if isinstance(value, list):
        return tuple(_plain_attrs(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain_attrs(v) for k, v in value.items()}
    return value


def replay_gradient(events, target: int, source: int):
    """The gradient ``target`` would have with respect to ``source`` had every op in ``events`` counted.

    The ops are run again through the public API on constants made from the
    recorded values, ``stop_gradient`` as an identity and ops that ran under
    ``stop_recording`` recorded like the others.  Returns a value summary, or
    ``None`` when the events do not hold what a replay needs (a value too
    large to be kept whole, an attribute a trace cannot store, an op done in
    NumPy).

    >>> import autodiff_viz as ad
    >>> x = ad.constant(2.0)
    >>> with ad.trace() as tr:
    ...     with ad.GradientTape() as tape:
    ...         tape.watch(x)
    ...         with tape.stop_recording():
    ...             z = x * x
    ...         y = x + z
    >>> float(tape.gradient(y, x)), replay_gradient(tr.events, rec.tensor_id(y), rec.tensor_id(x)).head
    (1.0, (5.0,))
    """
    import autodiff_viz as ad  # the public API, as a user would run the ops
    from autodiff_viz.extend import execute, lookup

    values: dict = {}

    def known(tid, summary, tape):
        if tid not in values:
            if summary is None or not summary.complete:
                raise LookupError(tid)
            values[tid] = ad.constant(summary.array(), dtype=summary.dtype)
            if tid == source:
                tape.watch(values[tid])
        return values[tid]

    try:
        with ad.GradientTape() as tape:
            for e in events:
                if e.kind == "watch":
                    known(e.tensor, e.value, tape)
                elif e.kind in ("op", "op_skipped") and getattr(e, "during", None) is None and e.output not in values:
                    in_values = getattr(e, "in_values", ()) or (None,) * len(e.inputs)
                    args = tuple(known(t, v, tape) for t, v in zip(e.inputs, in_values))
                    prim = lookup("Identity" if e.op_type == "StopGradient" else e.op_type)
                    values[e.output] = execute(prim, args, _plain_attrs(getattr(e, "attrs", {}) or {}))
        if target not in values or source not in values:
            return None
        g = tape.gradient(values[target], values[source])
    except Exception:  # noqa: BLE001  (a replay that cannot run says nothing, it never fails the explanation)
        return None
    return None if g is None else ev.summarize(np.asarray(g.numpy()))
