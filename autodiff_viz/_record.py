"""Recording: how one op that ran becomes a record on the tapes of this thread.

A record is a plain tuple (cheap to build on every op) whose fields are
named once, below.  Gradient rules and trace events see a record through
``_op_view.Op``, TensorFlow's op view (``op.inputs``, ``op.outputs``,
``op.get_attr(...)``, ``op.type``), made only when one is needed.

``record`` is called by :func:`autodiff_viz._tensor.execute` after an op
ran (and by ``custom_gradient`` for the one record that stands for its
function), while ``_context.ACTIVE[0]`` says a tape or accumulator exists:

1. each recording tape of this thread that watches one of the inputs gets
   the record (built once, shared by nested tapes) and watches the output;
2. a tape that is paused (``stop_recording``) notes the op it did not record;
3. each forward-mode accumulator pushes its tangents through the op.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x
>>> rec = tape._records[0]
>>> rec[PRIM].type, rec[IN_IDS] == (x._id, x._id), rec[OUT_ID] == y._id
('Mul', True, True)
"""
from __future__ import annotations

import itertools
from typing import Final

import numpy as _np

from ._context import ACCUMULATING, LISTENING, SCOPED, state
from ._registry import NOT_DIFFERENTIABLE

# (Final marks the module's names that are never rebound: a compiled build reads them without a dict lookup.)
_record_ids: Final = itertools.count(1).__next__


# A record's fields, in order: the one place they are declared.  First what the op was (plain
# facts, kept for as long as the tape lives: rec[:FACTS]), then what its gradient rule reads
# (let go once the tape is done with it: see ``released``).  A record is a plain tuple read by
# these names: a tuple subclass with named fields (a namedtuple built with tuple.__new__) made
# W1 about 14% slower (each record and released copy misses the tuple's free list).
(PRIM, IN_IDS, OUT_ID, ATTRS, IN_SHAPES, IN_DTYPES, OUT_SHAPE, OUT_DTYPE, SCOPE, ID,
 INPUTS, OUTPUT, RULE) = _FIELDS = range(13)
FACTS = INPUTS  # rec[:FACTS] are the plain facts, rec[FACTS:] the values
_LET_GO = (None,) * (len(_FIELDS) - FACTS)  # the values, once a tape has let them go


def make_record(prim, inputs, attrs, out, rule, tapes) -> tuple:
    """The record of an op: what it was, and only the values its rule will read.

    ``prim.save_inputs`` is ``"all"``, a tuple of input positions, or a dict
    ``{position: (inputs whose gradient reads it)}``: then a value is kept
    only if one of those inputs can get a gradient (``c * x`` keeps ``c``,
    never ``x``).  ``tapes`` are the tapes that could differentiate the op.
    The general builder (forward mode, ops of three or more inputs, rare
    kinds of ``save``): :func:`record` builds the common records itself.
    """
    in_ids = tuple([t._id for t in inputs])
    shapes, dtypes = _input_facts(tuple([t._value for t in inputs]))
    save, save_out = prim.save_inputs, prim.save_output
    n = len(inputs)
    if not save:
        saved = None
    elif type(save) is dict:
        # One tape (the common case): an input needs a gradient if the tape watches it.
        live = tapes[0]._live if len(tapes) == 1 else None
        kept = [None] * n
        for i, users in save.items():
            for j in users:
                u = inputs[j]
                if (u._id in live or u._is_variable and u._trainable) if live is not None else _needs_gradient(u, tapes):
                    t = inputs[i]
                    kept[i] = t._snapshot() if t._is_variable else t
                    break
        saved = tuple(kept)
        if type(save_out) is tuple:
            save_out = False
            for j in prim.save_output:
                if _needs_gradient(inputs[j], tapes):
                    save_out = True
                    break
    else:
        kept = []
        for i, t in enumerate(inputs):
            kept.append((t._snapshot() if t._is_variable else t) if save == "all" or i in save else None)
        saved = tuple(kept)
    v = out._value
    out_shape, out_dtype = (v.shape, v.dtype) if type(v) is _ARRAY else _FACTS.get(type(v)) or _value_facts(v)
    return (prim, in_ids, out._id, attrs, shapes, dtypes, out_shape, out_dtype, _scope(), _record_ids(), saved,
            out if save_out else None, rule)


# A NumPy number's shape and dtype follow from its type (np.float32: () and float32), and
# reading them cost as much as the rest of a record: their facts are looked up by type.
# Keys: a scalar type, for a value's (shape, dtype); a tuple of them, for an op's inputs'
# (shapes, dtypes).  Shared by all threads (immutable values; emptied when large).
_FACTS: Final[dict] = {}
_TYPED: Final = (_np.number, _np.bool_)  # (not np.str_ or np.datetime64: their dtype has a length or unit)
_ARRAY: Final = _np.ndarray  # (a NumPy array's facts are read at once: a lookup would only miss;
#                       other backends' arrays miss it, then are read)


def _value_facts(v) -> tuple:
    """``(shape, dtype)`` of a value that is not a NumPy array (a NumPy number's are kept)."""
    facts = (v.shape, v.dtype)
    if isinstance(v, _TYPED):
        remember(_FACTS, type(v), facts)
    return facts


def _input_facts(values: tuple) -> tuple:
    """``(shapes, dtypes)`` of an op's input values (kept when they are all NumPy numbers)."""
    shapes = tuple([v.shape for v in values])
    facts = (_SHARED.get(shapes) or _shared(shapes), tuple([v.dtype for v in values]))
    for v in values:
        if not isinstance(v, _TYPED):
            return facts
    remember(_FACTS, tuple([type(v) for v in values]), facts)
    return facts


_SHARED: Final[dict] = {}

# The classes of the NumPy dtypes seen to be floating (``_tape._floating`` adds them; shared by threads: a
# fact about each dtype, only ever added to).  Classes, not dtypes: another library's dtype (array_api_strict's)
# can hash as NumPy's and then warns when compared with it; NumPy's dtype classes are one per type (CuPy uses them).  A record whose output dtype is not among them, or whose primitive
# is declared not differentiable, may pass no gradient on: its tapes are marked (``_stops``), so that a
# backward pass walks their records to find what it reaches (``_tape._backward``).
FLOATING: Final[set] = set()


def _shared(facts: tuple) -> tuple:
    """One tuple for all records with these input shapes.

    A record made its own: a long tape held thousands of equal tuples, each
    one more object for the garbage collector to walk.  Shared by all threads
    (it holds only immutable tuples) and bounded: emptied when large.
    """
    kept = _SHARED.get(facts)
    return kept if kept is not None else remember(_SHARED, facts, facts)


def remember(cache: dict, key, value, limit: int = 4096):
    """``cache[key] = value``, emptying the cache first when it holds ``limit`` entries; returns ``value``.

    The engine's caches of immutable values (shared tuples, scalar facts,
    converted numbers) are shared by all threads and bounded this way.
    """
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


def released(rec: tuple) -> tuple:
    """The record without its saved values and rule: what a tape keeps once it is done with it.

    A record shared by nested tapes keeps its values for as long as another
    tape still holds the full record.
    """
    # Unpacked by position, in the order declared above (a wrong count fails at once): a third
    # faster than slicing the facts and adding the let-go values, on every op of a backward pass.
    a, b, c, d, e, f, g, h, i, j, saved, output, rule = rec
    if saved is None and output is None and rule is None:
        return rec
    return (a, b, c, d, e, f, g, h, i, j, None, None, None)


def from_facts(facts) -> tuple:
    """A released record made from its plain facts (``rec[:FACTS]`` of a record).

    >>> rec = from_facts(range(FACTS))
    >>> rec[OUT_ID], rec[ID], rec[RULE]
    (2, 9, None)
    """
    return tuple(facts) + _LET_GO


def _needs_gradient(t, tapes) -> bool:
    """Whether a recording tape among ``tapes`` can differentiate with respect to ``t``."""
    if t._is_variable and t._trainable:
        return True
    i = t._id
    for tape in tapes:
        if tape._recording and i in tape._live:
            return True
    return False


def record(prim, inputs, attrs, out, rule=None) -> None:
    """Put an op on every tape of this thread that watches one of its inputs; push tangents.

    What it asks of each entry of the tape stack: ``_recording``, ``_spent``,
    ``_auto`` (watch trainable variables on read), ``_live`` (the ids it
    watches), ``_records`` (a list, if it records), ``_watch_variable(var,
    auto)`` and ``_note(kind, **info)``; a tape that takes a record passing no
    gradient on (see :data:`FLOATING`) gets ``_stops = True``.  A ``GradientTape`` answers them; so does
    the stand-in ``_custom._VariableReads`` (while a ``custom_gradient`` function runs).
    """
    # One and two inputs (nearly every op) are asked about by name, and their record is built
    # here, in this one call: make_record's general loops cost a call and a third of a recorded op.
    # Their ids are read once: an input is sometimes a variable, and such mixed reads are slow.
    n = len(inputs)
    if n == 2:
        x, y = inputs
        xi, yi = x._id, y._id
    elif n == 1:
        x = y = inputs[0]
        xi = yi = x._id
    else:
        x = y = None
    rec = None
    # (Declared: a compiled build keeps a local's first type, and one- and two-input ops give tuples of two lengths.)
    in_ids: tuple
    shapes: tuple
    dtypes: tuple
    tapes = state.tapes
    for tape in tapes:
        live = tape._live
        if not tape._recording:
            if not tape._spent:
                for t in inputs:
                    if t._id in live:
                        tape._note("op_skipped", op_type=prim.type, inputs=tuple(inputs), output=out,
                                   reason="stop_recording")
                        break
            continue
        if x is None:
            if not _watches(tape, inputs, live):
                continue
        else:
            # A trainable variable is watched when first read (and for a one-input op, y is x).
            if xi not in live and x._is_variable and x._trainable and tape._auto:
                tape._watch_variable(x, True)
            if n == 2 and yi not in live and y._is_variable and y._trainable and tape._auto:
                tape._watch_variable(y, True)
            if xi not in live and yi not in live:
                continue  # (custom_gradient's collector watches nothing: it only notes the reads)
        if rec is None:
            v = out._value  # (its dtype, read once, says both whether it stops gradients and what it is)
            if type(v) is _ARRAY:
                out_shape = v.shape
                out_dtype = v.dtype
            else:
                out_shape, out_dtype = _FACTS.get(type(v)) or _value_facts(v)
            stops = prim.grad is NOT_DIFFERENTIABLE or out_dtype.__class__ not in FLOATING
            if x is None:
                rec = make_record(prim, inputs, attrs, out, rule, tapes)
            else:
                save, save_out, plan = prim.save_inputs, prim.save_output, prim.plan
                if plan is not None and n == 2:
                    # What to keep depends on which inputs need a gradient: looked up in the op's table.
                    if len(tapes) == 1:  # (the common case: a tape needs a gradient for what it watches)
                        m = (xi in live or x._is_variable and x._trainable) + 2 * (yi in live or y._is_variable and y._trainable)
                    else:
                        m = _needs_gradient(x, tapes) + 2 * _needs_gradient(y, tapes)
                    keep_x, keep_y, save_out = plan[m]
                elif not save:
                    keep_x = None
                elif type(save) is dict or type(save_out) is tuple:
                    rec = make_record(prim, inputs, attrs, out, rule, tapes)  # (kept by need, without a table)
                else:
                    keep_x, keep_y = save == "all" or 0 in save, save == "all" or 1 in save
                if rec is None:
                    if keep_x is None:
                        saved = None
                    else:
                        saved = (x._snapshot() if x._is_variable else x) if keep_x else None
                        saved = (saved, (y._snapshot() if y._is_variable else y) if keep_y else None) if n == 2 else (saved,)
                    a = x._value
                    if n == 2:
                        b = y._value
                        in_ids = (xi, yi)
                        if type(a) is _ARRAY or type(b) is _ARRAY:
                            shapes = (a.shape, b.shape)
                            shapes, dtypes = _SHARED.get(shapes) or _shared(shapes), (a.dtype, b.dtype)
                        else:
                            shapes, dtypes = _FACTS.get((type(a), type(b))) or _input_facts((a, b))
                    else:
                        in_ids = (xi,)
                        if type(a) is _ARRAY:
                            shapes = (a.shape,)
                            shapes, dtypes = _SHARED.get(shapes) or _shared(shapes), (a.dtype,)
                        else:
                            shapes, dtypes = _FACTS.get((type(a),)) or _input_facts((a,))
                    rec = (prim, in_ids, out._id, attrs, shapes, dtypes, out_shape, out_dtype,
                           _scope() if SCOPED[0] else "", _record_ids(), saved, out if save_out else None,
                           rule)  # (in the order of the names above)
        tape._records.append(rec)
        live.add(out._id)
        if stops:
            tape._stops = True
        if LISTENING[0]:
            state.audience.op(tape, rec, out, inputs)
    if ACCUMULATING[0]:
        accumulators = state.accumulators
        for k in range(len(accumulators) - 1, -1, -1):  # innermost first
            accumulators[k]._on_op(k, prim, inputs, attrs, out, rule)


def _scope() -> str:
    """This thread's name scope, as a record writes it (``"outer/inner"``; ``""`` outside any)."""
    scopes = state.scopes
    return "/".join(scopes) if scopes else ""


def _watches(tape, inputs, live) -> bool:
    """Whether a recording ``tape`` watches one of ``inputs`` (any number), watching trainable variables read."""
    watched = False
    for t in inputs:
        if t._id in live:
            watched = True
        elif t._is_variable and t._trainable and tape._auto:
            tape._watch_variable(t, auto=True)  # a trainable variable is watched when first read
            watched = t._id in live  # (custom_gradient's collector only notes the read)
    return watched


def note_leave(tensor, how) -> None:
    """A watched tensor became a NumPy array: every tape that watches it notes it (and every recording
    tape that would watch a trainable variable on read: ``v.numpy()`` is a detour around it)."""
    variable = getattr(tensor, "_is_variable", False) and getattr(tensor, "trainable", False)
    for tape in state.tapes:
        if not tape._spent and (tensor._id in tape._live or (variable and tape._recording and tape._auto)):
            tape._note("leave", tensor=tensor, how=how)


def note_state(var, how) -> None:
    """A variable changed in place: every recording tape (or one that watches it) notes it."""
    for tape in state.tapes:
        if not tape._spent and (tape._recording or var._id in tape._live):
            tape._note("state", variable=var, how=how)
