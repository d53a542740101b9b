"""GradientTape: records ops on watched tensors, replays them backwards.

The tape is an ordered list of records (tuples, see :mod:`._record`).  The
backward pass is a reverse loop over that list: iterative, so chains of any
length work, and in execution order, so every node's gradient is complete
before its rule runs.  Gradient rules are written with the package's ops, so a
gradient computed while an outer tape is recording lands on that outer tape
(higher orders).

Following ``x * y``: ``Tensor.__mul__`` (``_tensor``) calls ``binary``, which
checks the operands and calls ``execute``, which runs the op and calls
``_record.record``, which appends the record to each tape of this thread
(``_context.state.tapes``) that watches ``x`` or ``y``; ``gradient`` below
checks its arguments and ``_backward`` walks the records backwards, calling
each one's rule.
"""
from __future__ import annotations

import contextlib
import enum
import itertools
import operator
import warnings

import numpy as _np

from . import _backend, _context, _nest, _ops, _registry, _replay
from ._gradient_sums import add as _add, add_values as _add_values, unbroadcast as _unbroadcast, \
    unbroadcast_value as _unbroadcast_value
from . import _tensor as _t
from ._context import ACTIVE, LISTENING, emit, name_scope, state  # noqa: F401  (name_scope is public here too)
from ._dtypes import of_dtype
from ._op_view import Op
from ._record import FLOATING, IN_IDS, INPUTS, OUT_DTYPE, OUT_ID, OUTPUT, PRIM, RULE, released
from ._backend import _NUMPY_TYPES
from ._tensor import ResourceVariable, Tensor

_tape_ids = itertools.count(1).__next__
_ID_OF = operator.attrgetter("_id")


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


_NONE = UnconnectedGradients.NONE
_ONES: dict = {}  # NumPy scalar type -> its one (shared by threads: immutable values)


class GradientTape:
    """Records operations for automatic differentiation.

    >>> import autodiff_viz as ad
    >>> x = ad.constant(3.0)
    >>> with ad.GradientTape() as g:
    ...     g.watch(x)
    ...     y = x * x
    >>> print(g.gradient(y, x))
    ad.Tensor(6.0, shape=(), dtype=float32)
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        # (True and False, the usual options, are taken without a call: a tape is made on every step)
        self._persistent = persistent if persistent is False or persistent is True else _flag(persistent, "persistent")
        self._auto = (watch_accessed_variables if watch_accessed_variables is True or watch_accessed_variables is False
                      else _flag(watch_accessed_variables, "watch_accessed_variables"))
        self._id = _tape_ids()
        self._records: list | None = []
        self._live: set = set()
        self._watched: set = set()  # the ids in _live that no record gave (watched, or variables read)
        self._stops = False  # whether a record may pass no gradient on (see _record.FLOATING)
        self._variables: dict = {}
        self._notes: list = []
        self._recording = False
        self._pushed = False
        self._spent = False
        self._freed = 0  # records before this index have released their saved values
        self._parent = None
        self._traces: list = []  # the ad.trace()s that saw this tape: it keeps them alive, the package doesn't
        self._entered = False    # TF makes its tape at the first `with`; before that watch() and gradient() fail
        self._asked = None       # (target ids, source ids) of the gradient() call that spent it, for from_tape

    # -- context --------------------------------------------------------------
    def __enter__(self):
        if self._pushed:
            raise RuntimeError("this GradientTape is already recording")
        self._parent = _context.push_tape(self)
        self._pushed = True
        self._recording = True
        if LISTENING[0]:
            emit("tape_begin", tape=self, parent=self._parent, persistent=self._persistent,
                 watch_accessed_variables=self._auto)
        self._entered = True
        return self

    def __exit__(self, *exc):
        if self._pushed:
            _context.pop_tape(self)
            self._pushed = False
            self._recording = False
            if LISTENING[0]:
                emit("tape_end", tape=self)
        return False

    # -- what the tape watches ----------------------------------------------
    def watch(self, tensor) -> None:
        """Watch a tensor, a variable or a nested list of them.

        As in TF, a tape records only inside its ``with`` block: ``watch`` on
        a tape never entered (or a non-persistent one whose gradient has been
        taken) raises ``AttributeError``, TF's error there.  A tape whose
        ``with`` block has ended takes the watch but records nothing more.
        """
        for t in (tensor,) if isinstance(tensor, Tensor) else _nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(f"GradientTape.watch: expected a Tensor or Variable, got {type(t).__name__}: {t!r:.60}")
            if not _floating(t):
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. ad.float32), got ad.{t.dtype.name}",
                              stacklevel=2)
            if not self._entered or self._spent:
                raise AttributeError(_no_tape_message(self, "watch"))
            if isinstance(t, ResourceVariable):
                self._watch_variable(t, auto=False)
            else:
                self._live.add(t._id)
                self._watched.add(t._id)
                if LISTENING[0]:
                    emit("watch", tape=self, tensor=t, auto=False)

    def _watch_variable(self, var, auto):
        self._live.add(var._id)
        self._watched.add(var._id)
        self._variables[var._id] = var
        if LISTENING[0]:
            emit("watch", tape=self, tensor=var, auto=auto)

    def _ops(self) -> list:
        """The records as op views (what gradient rules and trace events see), oldest first."""
        return [Op(rec) for rec in self._records or ()]

    def watched_variables(self) -> tuple:
        """Variables this tape watches, in order of creation."""
        return tuple(v for _, v in sorted(self._variables.items()))

    def _note(self, kind, **info):
        self._notes.append((kind, info))
        if LISTENING[0]:
            emit(kind, tape=self, **info)

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stop recording; ops run inside are not differentiable."""
        if not self._recording:
            raise RuntimeError("GradientTape.stop_recording: the tape is not currently recording")
        self._recording = False
        try:
            yield
        finally:
            self._recording = True

    def reset(self) -> None:
        """Forget everything recorded so far (as if the block were re-entered).

        Only while the tape records, inside its ``with`` block (TF raises
        ``ValueError`` elsewhere).
        """
        if not self._recording:
            raise ValueError("GradientTape.reset: the tape is not recording; call reset() inside its "
                             "`with tf.GradientTape() as tape:` block (and outside tape.stop_recording())")
        self._records = []
        self._freed = 0
        self._live = set()
        self._watched = set()
        self._stops = False
        self._variables = {}
        self._notes = []
        self._spent = False
        self._asked = None
        if LISTENING[0]:
            emit("tape_reset", tape=self)

    # -- gradients ------------------------------------------------------------
    def _check_usable(self, what):
        # TF's gradient() finds no tape before the first `with`; its jacobian() pushes one of its own first
        # (and so sees nothing recorded: None), so only gradient() raises there.
        if what == "gradient" and not self._entered:
            raise RuntimeError(_no_tape_message(self, what))
        if self._spent:
            raise RuntimeError(
                f"GradientTape.{what}: a non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians); create it with persistent=True to call it again")
        # Spent from here on, even if the call fails half-way: its saved values may be gone.
        self._spent = not self._persistent

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Gradient of ``target`` (summed if several or non-scalar) w.r.t. ``sources``.

        The result has the structure of ``sources``; a source the target does
        not depend on gives ``None`` (or zeros with ``unconnected_gradients='zero'``).
        """
        self._check_usable("gradient")
        if (output_gradients is None and unconnected_gradients is _NONE and not self._persistent and not ACTIVE[0]
                and not LISTENING[0] and not self._stops and isinstance(target, Tensor)):
            # A training loop's call: its pass may be written out already (_replay).
            results = self._written_out(target, sources)
            if results is not None:
                return results
        zero = False if unconnected_gradients is _NONE else _unconnected(unconnected_gradients)
        # One tensor, or a list or tuple of them (the common cases), skips the walks over nested structures.
        one_target, one_source = isinstance(target, Tensor), isinstance(sources, Tensor)
        flat_targets = [target] if one_target else _as_tensors(_nest.flatten(target), "target")
        if one_source:
            flat_sources = [sources]
        else:
            flat_sources = _tensor_list(sources)
            plain = flat_sources is not None  # (rebuilt as the same list or tuple, without a walk)
            if not plain:
                flat_sources = _as_tensors(_nest.flatten(sources), "source")
        asked = tuple(map(_ID_OF, flat_sources))  # (a map of attrgetter: no comprehension's frame)
        if not self._persistent:  # what the one call was asked: explain tells a later, refused call apart
            self._asked = ((target._id,) if one_target else tuple(map(_ID_OF, flat_targets)), asked)
        ogs = [None] * len(flat_targets) if output_gradients is None else _output_gradients(output_gradients,
                                                                                             flat_targets)
        for t in flat_targets:
            if not _floating(t):
                warnings.warn("The dtype of the target tensor must be floating (e.g. ad.float32) when calling "
                              f"GradientTape.gradient, got ad.{t.dtype.name}", stacklevel=2)
        source_ids = set(asked)  # (the floating sources: _backward would ask each one again)
        for s in flat_sources:
            if not _floating(s):
                source_ids.discard(s._id)
                warnings.warn("The dtype of the source tensor must be floating (e.g. ad.float32) when calling "
                              f"GradientTape.gradient, got ad.{s.dtype.name}", stacklevel=2)
        if LISTENING[0]:
            emit("gradient_begin", tape=self, targets=flat_targets, sources=flat_sources, method="gradient")
        grads = self._backward(flat_targets, ogs, flat_sources, not self._persistent, source_ids)
        results = list(map(grads.get, asked))
        if zero:
            for i, s in enumerate(flat_sources):
                if results[i] is None:
                    results[i] = _zeros_for(s)
        self._finish(flat_sources, results)
        if one_source:
            return results[0]
        return type(sources)(results) if plain else _nest.pack_like(sources, results)

    def _written_out(self, target, sources):
        """``gradient(target, sources)`` by the pass written out for tapes of this shape, or ``None`` (nothing
        done: the general pass runs).  Only where that pass would run on values with no outer tape, every
        source a tensor asked once and every id the tape watches a source (so it reaches what it watches)."""
        key = _replay.key_of(self._records)
        if key is None:
            return None
        one = isinstance(sources, Tensor)
        if one:
            asked = (sources._id,)
        else:
            listed = _tensor_list(sources)
            if listed is None:
                return None
            asked = tuple(map(_ID_OF, listed))
        ids = set(asked)
        if len(ids) != len(asked) or not self._watched <= ids:
            return None
        results = _replay.backward(key, self._records, self._live, target._id, asked, _one_value(target._value))
        if results is None:
            return None
        self._asked = ((target._id,), asked)
        self._freed = len(self._records)
        self._finish([sources] if one else sources, results)
        if one:
            return results[0]
        return results if type(sources) is list else tuple(results)  # (a new list, in the sources' order)

    def _finish(self, sources, results):
        if not self._persistent:
            # Saved values go; the records' plain facts (types, ids, shapes)
            # stay, so a spent tape can still be drawn and explained.
            records = self._records
            for k in range(self._freed, len(records)):
                records[k] = released(records[k])
            self._freed = len(records)
            self._spent = True
            self._recording = False
        if LISTENING[0]:
            emit("gradient_end", tape=self, sources=sources, results=results, spent=self._spent)

    def _backward(self, targets, ogs, sources, free, source_ids=None):
        """Reverse-mode sweep over the records; returns {tensor id: gradient}.

        With ``free`` each record is released as soon as its rule has run
        (a non-persistent tape), so memory falls as the pass goes.
        ``source_ids``: the ids of the floating sources, when the caller has them.
        """
        records = self._records
        n = len(records)
        # Ids that depend on a source: only these need gradients.  A source
        # counts if the tape watches it, or if it is itself a target.
        if source_ids is None:
            source_ids = {s._id for s in sources if _floating(s)}
        not_differentiable = _registry.NOT_DIFFERENTIABLE
        live = self._live
        # Every id the tape watches is a source and every record passes a gradient on: each record
        # was taken for an input that was live then (a source, or an earlier record's output), so
        # every live id is reached, and the walk below would only find that out.
        every_live = not self._stops and self._watched <= source_ids
        reach = live if every_live else source_ids & live  # (read only from here: copied if a target is added)
        for t in targets:
            if t._id in source_ids and t._id not in reach:
                if reach is live:
                    reach = live.copy()
                reach.add(t._id)
        if not every_live:
            # A record without a gradient (stop_gradient, comparisons...) does not pass
            # reachability on: rules downstream of it never run (as in TF).
            # Integer and bool results carry no gradient (as in TF): they stop reachability too.
            floating = FLOATING  # (one set lookup per record, not a dtype query)
            for rec in records:
                for i in rec[IN_IDS]:
                    if i in reach:
                        if rec[RULE] is not None or rec[PRIM].grad is not not_differentiable:
                            out_dtype = rec[OUT_DTYPE]
                            if out_dtype.__class__ in floating or _floating_dtype(out_dtype, floating):
                                reach.add(rec[OUT_ID])
                        break
        grads: dict = {}
        emitting = LISTENING[0]
        # No tape or accumulator anywhere: nothing would record the rules' ops, so the pass runs on the
        # gradients' values, the commonest rules as plain NumPy (see _direct_rules).  Below, an outer tape
        # records: every rule runs as the ops it is written in, so higher orders are recorded.
        if not ACTIVE[0] and not emitting and len(targets) == 1:
            # (The commonest call, one target and nobody listening: its seed is made as the value the pass takes.)
            t, og = targets[0], ogs[0]
            if t._id in reach and _floating(t):
                grads[t._id] = og._value if og is not None else _one_value(t._value)
            return self._backward_values(records, grads, reach, free, source_ids)
        counts: dict = {}
        audience = state.audience  # (who hears the steps: read once, as ``emitting`` is)
        for t, og in zip(targets, ogs):
            if t._id not in reach or not _floating(t):
                continue
            seed = og if og is not None else _ones_like(t)
            if emitting or t._id in grads:
                _seed(grads, counts, t._id, seed, self, emitting)
            else:  # (a target seen first, nobody listening: its seed is its gradient; counts are read only for events)
                grads[t._id] = seed
        if not ACTIVE[0]:
            for tid in grads:
                grads[tid] = grads[tid]._value
            return self._backward_values(records, grads, reach, free, source_ids, audience if emitting else None)
        step = 0
        for k in range(n - 1, -1, -1):
            # The record's fields in the order _record declares them: one unpacking costs a third of
            # reading six of them by name, on every record of every backward pass.
            (prim, in_ids, out_id, attrs, in_shapes, in_dtypes, out_shape, out_dtype, scope, rid,
             saved, output, own_rule) = rec = records[k]
            g = grads.get(out_id)
            if g is None:  # not on a path from a source to a target (or a spent record)
                if free:
                    records[k] = released(rec)
                continue
            in_grads = _built_rule_grads(rec, own_rule or prim.grad, g)
            if emitting:
                step += 1
                sent = ()  # per input given a gradient: its position, the gradient and its total now
            i = -1
            for gi in in_grads:
                i += 1
                if gi is None:
                    continue
                tid = in_ids[i]
                if tid not in reach:
                    continue
                if not isinstance(gi, Tensor):
                    gi = _t.convert_to_tensor(gi, dtype=Op(rec).in_dtypes[i])
                if gi._value.shape != in_shapes[i]:
                    gi = _unbroadcast(gi, in_shapes[i], prim.type)
                prev = grads.get(tid)
                grads[tid] = total = gi if prev is None else _add(prev, gi)
                if emitting:
                    sent += (i, gi._value, total._value)
            if emitting:
                # One announcement for the step and what it added to each input's gradient.
                audience.step(self, rec, step, g._value, sent)
            if free:
                if saved is not None or output is not None or own_rule is not None:
                    # released(rec), from the fields at hand
                    records[k] = (prim, in_ids, out_id, attrs, in_shapes, in_dtypes, out_shape, out_dtype, scope, rid,
                                  None, None, None)
                if out_id not in source_ids:
                    del grads[out_id]
        if free:
            self._freed = n
        return grads

    def _backward_values(self, records, grads, reach, free, source_ids, audience=None):
        """``_backward``'s sweep while no tape records, on the gradients' values (arrays).

        ``grads`` holds the targets' starting gradients (their values).  Direct rules take and give values; a tensor is made
        only for a rule built of ops (its upstream gradient) and for each
        source's gradient handed back.  ``audience``: who hears each step
        (its values), while a listener listens.
        """
        # The direct rules are NumPy's: they serve while every gradient is a NumPy value, which each one
        # is once the seeds are (a direct rule's results are), until a rule built of ops says otherwise.
        direct_rules = _registry.DIRECT
        numpy_types = _NUMPY_TYPES
        for v in grads.values():
            if numpy_types.get(type(v)) is not _np:
                direct_rules = _NO_RULES
        n = len(records)
        wrap = _t._wrap
        step = 0
        take = grads.pop  # (a record's gradient is taken as its rule runs: only the sources' are handed back)
        for k in range(n - 1, -1, -1):
            (prim, in_ids, out_id, attrs, in_shapes, in_dtypes, out_shape, out_dtype, scope, rid,
             saved, output, own_rule) = rec = records[k]
            g = take(out_id, None)
            if g is None:  # not on a path from a source to a target (or a spent record)
                if free:
                    records[k] = released(rec)
                continue
            if out_id in source_ids:  # (a source that is also an op's result keeps its gradient)
                grads[out_id] = g
            rule = own_rule or prim.grad
            direct = direct_rules.get(rule)
            if direct is None or (in_grads := direct(rec, g, reach)) is None:
                in_grads = _values_of(rec, _built_rule_grads(rec, rule, wrap(g)), reach)
                if direct_rules is not _NO_RULES:
                    for gi in in_grads:
                        if gi is not None and numpy_types.get(type(gi)) is not _np:
                            direct_rules = _NO_RULES
            if audience is not None:
                step += 1
                sent = ()  # per input given a gradient: its position, the gradient and its total now
            i = -1
            for gi in in_grads:  # (counting by hand: a zip costs more than the index reads)
                i += 1
                if gi is None:
                    continue
                tid = in_ids[i]
                if tid not in reach:
                    continue
                if gi.shape != (shape := in_shapes[i]):  # broadcast in the op: summed back (a bias's sum)
                    gi = _unbroadcast_value(gi, shape, prim.type)
                if tid not in grads:  # (a test costs less than a get, for the first gradient: the commonest)
                    grads[tid] = gi
                elif (prev := grads[tid]).dtype is gi.dtype and numpy_types.get(type(gi)) is _np:  # (_add_values)
                    grads[tid] = prev + gi
                else:
                    grads[tid] = _add_values(prev, gi)
                if audience is not None:
                    sent += (i, gi, grads[tid])
            if audience is not None:
                audience.step(self, rec, step, g, sent)  # (one announcement per step, as _backward's)
            if free and (saved is not None or output is not None or own_rule is not None):
                # released(rec), from the fields at hand
                records[k] = (prim, in_ids, out_id, attrs, in_shapes, in_dtypes, out_shape, out_dtype, scope, rid,
                              None, None, None)
        if free:
            self._freed = n
        # Left in ``grads``: the sources' gradients, and the targets' seeds and gradients of watched ids no record gave.
        results = {}
        for sid in source_ids:
            v = grads.get(sid)
            if v is not None:
                results[sid] = wrap(v)
        return results

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """Jacobian of ``target`` w.r.t. each source: shape ``target.shape + source.shape``.

        ``target`` is one tensor (as in TF).  ``experimental_use_pfor=False``
        asks TF for a loop that reuses the tape, so TF requires a persistent
        tape for it; the same ``RuntimeError`` is raised here.
        """
        _loop_needs_persistent(self, "jacobian", experimental_use_pfor)
        _one_target(target, "jacobian")
        self._check_usable("jacobian")
        zero = _unconnected(unconnected_gradients)
        (target,) = _as_tensors([target], "target")
        flat_sources = _as_tensors(_nest.flatten(sources), "source")
        if LISTENING[0]:
            emit("gradient_begin", tape=self, targets=[target], sources=flat_sources, method="jacobian")
        results = _jacobian_rows(self, target, flat_sources, target.shape, zero, batch=False)
        self._finish(flat_sources, results)
        return _nest.pack_like(sources, results)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: shape ``[b] + target.shape[1:] + source.shape[1:]``.

        As TF: both need rank at least 2 and the same first (batch) dimension,
        and an unconnected source gives zeros (TF keeps that for compatibility).
        """
        _loop_needs_persistent(self, "batch_jacobian", experimental_use_pfor)
        _one_target(target, "batch_jacobian")
        _one_target(source, "batch_jacobian", "source")
        (target,) = _as_tensors([target], "target")
        (source,) = _as_tensors([source], "source")
        for what, t in (("target", target), ("source", source)):
            if t.ndim < 2:
                raise ValueError(f"batch_jacobian: the {what} must have rank at least 2 ([batch, ...]), got shape "
                                 f"{t.shape}")
        if target.shape[0] != source.shape[0]:
            raise ValueError(f"batch_jacobian: need first dimension of target shape {target.shape} and source shape "
                             f"{source.shape} to match")
        self._check_usable("batch_jacobian")
        _unconnected(unconnected_gradients)
        zero = True
        if LISTENING[0]:
            emit("gradient_begin", tape=self, targets=[target], sources=[source], method="batch_jacobian")
        (result,) = _jacobian_rows(self, target, [source], target.shape[1:], zero, batch=True)
        self._finish([source], [result])
        return result


def _no_tape_message(tape, what) -> str:
    """Why ``watch``/``gradient`` found no tape to work on, and the fix (TF fails there too)."""
    if not tape._entered:
        return (f"GradientTape.{what}: this tape was never entered, so it has recorded nothing. A GradientTape "
                "records only inside its `with` block: write `with tf.GradientTape() as tape:`, call tape.watch(x) "
                "and compute inside the block, then call tape.gradient(y, x). (TensorFlow raises here too; "
                "some articles show a tape used without `with`, which does not work in TensorFlow.)")
    return (f"GradientTape.{what}: this non-persistent tape has already computed its gradient and let go of its "
            "records; start a new `with tf.GradientTape() as tape:` block, or create the tape with persistent=True")


def _flag(value, name) -> bool:
    """A tape option, True or False only.

    TF passes it to its C tape, which takes only ``True`` itself as true
    (``persistent == Py_True``), while the Python side tests truthiness:
    ``persistent='no'`` would be half persistent there, and silently truthy here.
    """
    if value is True or value is False:  # (the common case, without the isinstance)
        return value
    if not isinstance(value, (bool, _np.bool_)):
        raise TypeError(f"GradientTape: {name} must be True or False, got {value!r:.60} ({type(value).__name__})")
    return bool(value)


def _loop_needs_persistent(tape, what, use_pfor):
    if not use_pfor and not tape._persistent:
        raise RuntimeError(f"GradientTape.{what}: the tape must be created with persistent=True to compute the "
                           f"{what} with experimental_use_pfor=False")


def _one_target(target, what, name="target"):
    if isinstance(target, (list, tuple, dict)):
        raise TypeError(f"GradientTape.{what}: the {name} must be one tensor, got a {type(target).__name__} of "
                        f"{len(target)}; stack them first (ad.stack) or take one {what} each")


def _jacobian_rows(tape, target, sources, row_shape, zero, batch):
    """Loop over target elements (per example when ``batch``), one backward pass each."""
    xp = _backend.namespace_of(target._value)
    count = 1
    for d in row_shape:
        count *= d
    rows = [[] for _ in sources]
    for j in range(count):
        if LISTENING[0]:  # each pass is its own backward pass: views must not add one row's gradient to another's
            emit("gradient_row", tape=tape, row=j + 1, rows=count, index=tuple(int(i) for i in _np.unravel_index(j, row_shape)))
        seed = xp.zeros((count,), dtype=target._value.dtype)
        seed[j] = 1
        if batch:
            b = target.shape[0]
            full = xp.reshape(xp.broadcast_to(seed, (b, count)), target.shape)
        else:
            full = xp.reshape(seed, target.shape)
        grads = tape._backward([target], [_t._wrap(full)], sources, free=False)
        for r, s in zip(rows, sources):
            r.append(grads.get(s._id))
    results = []
    for r, s in zip(rows, sources):
        out_shape = ((target.shape[0],) + tuple(row_shape) + s.shape[1:]) if batch else (tuple(row_shape) + s.shape)
        if all(g is None for g in r):
            # No rows at all (a target with no elements): the Jacobian is empty, not unconnected.
            results.append(_ops.zeros(out_shape, s.dtype) if zero or not r else None)
            continue
        filled = [g if g is not None else _ops.zeros_like(s) for g in r]
        stacked = _ops.stack(filled, axis=1 if batch else 0)  # batch: [b, count, x...]
        results.append(_ops.reshape(stacked, out_shape))
    return results


def _built_rule_grads(rec, rule, g):
    """What a gradient rule built of ops gives for upstream gradient ``g``: one entry per input."""
    in_ids = rec[IN_IDS]
    if rule is _registry._MISSING:
        raise LookupError(f"gradient registry has no entry for: {rec[PRIM].type}")
    # The op view the rule reads, made here without a call (what Op(rec) does).
    op = _new_op(Op)
    op._r = rec
    op.inputs = rec[INPUTS] or (None,) * len(in_ids)
    op.outputs = (rec[OUTPUT],)
    if rule is _registry.NOT_DIFFERENTIABLE:
        return (None,) * len(in_ids)
    try:
        in_grads = rule(op, g)
    except (TypeError, AttributeError) as e:
        raise _rule_error(op, e) from e
    if type(in_grads) is not tuple and type(in_grads) is not list:
        in_grads = (in_grads,)
    if len(in_grads) != len(in_ids):
        raise ValueError(f"gradient rule for {op.type} returned {len(in_grads)} gradients for {len(in_ids)} inputs")
    return in_grads


_new_op = object.__new__


def _values_of(rec, in_grads, reach) -> list:
    """A rule's input gradients as values: a tensor's own, anything else converted to the input's dtype.

    (Only for the inputs that need a gradient, as the pass on tensors converts them; ``None`` for the others.)
    """
    in_ids = rec[IN_IDS]
    out = [None] * len(in_grads)  # (None for an input that needs none: the pass skips it)
    i = -1
    for gi in in_grads:
        i += 1
        if gi is not None and in_ids[i] in reach:
            out[i] = (gi if isinstance(gi, Tensor) else _t.convert_to_tensor(gi, dtype=Op(rec).in_dtypes[i]))._value
    return out


def _ones_like(t):
    return _t._wrap(_one_value(t._value))


def _one_value(v):
    """Ones of ``v``'s shape and dtype: a target's starting gradient (a NumPy scalar one is made once per type)."""
    one = _ONES.get(type(v))  # a scalar result (a loss): NumPy's own scalar one
    if one is not None:
        return one
    if isinstance(v, _np.generic):
        one = _ONES[type(v)] = v.dtype.type(1)
        return one
    if type(v) is _np.ndarray:  # (np.ones is a Python function around these two calls)
        ones = _np.empty(v.shape, v.dtype)
        ones.fill(1)
        return ones
    return _backend.namespace_of(v).ones(v.shape, dtype=v.dtype)


def _rule_error(op, e):
    """The error a gradient rule raised; if it tripped over an unsaved value (None), saying so."""
    unsaved = [f"input {i}" for i, v in enumerate(op.inputs) if v is None]
    unsaved += ["the output"] if op.outputs[0] is None else []
    if "NoneType" not in str(e) or not unsaved:
        return e
    try:
        return type(e)(f"gradient rule for {op.type}: {e}. The rule got None for {', '.join(unsaved)}: a value "
                       "the rule reads must be saved when the op runs (defop's save= and save_output=)")
    except Exception:  # noqa: BLE001  (an exception type that wants other arguments: raise it as it was)
        return e


def _floating_dtype(dt, seen: set) -> bool:
    """Whether an array library's dtype is floating; a floating NumPy dtype's class joins ``seen``."""
    if of_dtype(dt).is_floating:
        if isinstance(dt, _np.dtype):
            seen.add(dt.__class__)
        return True
    return False


def _floating(t) -> bool:
    """Whether a tensor's dtype is floating (``t.dtype.is_floating`` without the property's call)."""
    dt = t._value.dtype
    return dt.__class__ in FLOATING or _floating_dtype(dt, FLOATING)


_NO_RULES: dict = {}


def _seed(grads, counts, tid, g, tape, emitting):
    """A target's starting gradient (added to another's when a target is given twice)."""
    prev = grads.get(tid)
    total = g if prev is None else _add(prev, g)
    grads[tid] = total
    counts[tid] = counts.get(tid, 0) + 1
    if emitting:
        emit("accumulate", tape=tape, tensor_id=tid, contribution=g, total=total, count=counts[tid], node=None)


def _unconnected(value) -> bool:
    if value is _NONE:  # (the default: an enum member's lookup costs more than this test)
        return False
    if isinstance(value, UnconnectedGradients):
        return value is UnconnectedGradients.ZERO
    if value in ("zero", "none"):
        return value == "zero"
    raise ValueError(f"unconnected_gradients must be 'none' or 'zero', got {value!r}")


def _as_tensors(items, what):
    out = []
    for x in items:
        if isinstance(x, Tensor):
            out.append(x)
        elif x is None:
            raise ValueError(f"GradientTape: a {what} is None")
        else:
            out.append(_t.convert_to_tensor(x))
    return out


def _tensor_list(sources):
    """``sources`` as a new list when it is a list or tuple of tensors (the common case), else None."""
    if type(sources) is list or type(sources) is tuple:
        for s in sources:
            if not isinstance(s, Tensor):
                return None
        return list(sources)
    return None


def _output_gradients(output_gradients, targets):
    if output_gradients is None:
        return [None] * len(targets)
    ogs = _nest.flatten(output_gradients)
    if len(ogs) != len(targets):
        raise ValueError(f"output_gradients: got {len(ogs)} gradients for {len(targets)} targets")
    out = []
    for og, t in zip(ogs, targets):
        if og is None:
            out.append(None)
            continue
        og = og if isinstance(og, Tensor) else _t.convert_to_tensor(og, dtype=t.dtype)
        if og.dtype != t.dtype:
            raise TypeError(f"output_gradients: a gradient of dtype {og.dtype.name} for a target of dtype "
                            f"{t.dtype.name}; give it the target's dtype")
        if og.shape != t.shape:
            raise ValueError(f"output_gradients: gradient of shape {og.shape} for a target of shape {t.shape}")
        out.append(og)
    return out


def _zeros_for(source):
    """An unconnected source's gradient under ``unconnected_gradients='zero'``."""
    xp = _backend.namespace_of(source._value)
    return _t._wrap(xp.zeros(source._value.shape, dtype=source._value.dtype))
