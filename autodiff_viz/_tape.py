"""GradientTape: records ops on watched tensors, replays them backwards.

The tape is an ordered list of records (``_Node``).  The backward pass is a
reverse loop over that list: iterative, so chains of any length work, and in
execution order, so every node's gradient is complete before its rule runs.
Gradient rules are written with the package's ops, so a gradient computed
while an outer tape is recording lands on that outer tape (higher orders).
"""
from __future__ import annotations

import contextlib
import enum
import itertools
import threading
import warnings

from . import _backend, _hooks, _nest, _registry
from . import _tensor as _t
from ._dtypes import of_array as _of_array, of_dtype as _dtype_of
from ._tensor import ResourceVariable, Tensor

class _ThreadState(threading.local):
    # Class-level defaults: reading an attribute a thread has not set yet
    # costs no AttributeError (``record`` reads ``accumulators`` on every op).
    stack = None
    scopes = None
    accumulators = None


_tls = _ThreadState()
# Number of tapes active in any thread.  Ops test this first, so with no
# tape anywhere recording costs one list lookup.
ACTIVE = [0]
_tape_ids = itertools.count(1).__next__
_node_ids = itertools.count(1).__next__


def _stack() -> list:
    s = _tls.stack
    if s is None:
        s = _tls.stack = []
    return s


def _scopes() -> list:
    s = _tls.scopes
    if s is None:
        s = _tls.scopes = []
    return s


def current_scope() -> str:
    s = _tls.scopes
    return "/".join(s) if s else ""


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


class _Node:
    """One recorded op; also the ``op`` object handed to gradient rules."""

    __slots__ = ("id", "prim", "inputs", "outputs", "attrs", "in_ids", "out_id",
                 "in_shapes", "_in_values", "out_dtype", "out_shape", "scope", "rule", "holders")

    @property
    def type(self) -> str:
        """TensorFlow's op type name: ``"Mul"``, ``"MatMul"``..."""
        return self.prim.type

    @property
    def in_dtypes(self) -> tuple:
        return tuple([_dtype_of(d) for d in self._in_values])

    @property
    def name(self) -> str:
        """The op's name with its scope, e.g. ``"dense/MatMul"``."""
        return f"{self.scope}/{self.type}" if self.scope else self.type

    @property
    def node_def(self):
        return {"op": self.type, "name": self.name, "attr": dict(self.attrs)}

    def get_attr(self, name):
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"op {self.type} has no attribute {name!r}") from None

    def __getattr__(self, name):
        # Attributes (axis, keepdims, perm...) read as op.axis, as in many TF rules.
        attrs = object.__getattribute__(self, "attrs")
        if name in attrs:
            return attrs[name]
        raise AttributeError(name)

    def __repr__(self):
        return f"<op {self.name} type={self.type}>"


def _make_node(prim, inputs, attrs, out, rule, stack) -> _Node:
    # This runs once per recorded op: one pass over the inputs, no generators.
    node = _Node()
    node.id = _node_ids()
    node.prim = prim
    node.attrs = attrs
    ids, shapes, dtypes = [], [], []
    for t in inputs:
        v = t._value
        ids.append(t._id)
        shapes.append(v.shape)
        dtypes.append(v.dtype)  # raw dtype objects: ``in_dtypes`` names them on demand
    node.in_ids = tuple(ids)
    node.in_shapes = tuple(shapes)
    node._in_values = tuple(dtypes)
    v = out._value
    node.out_id = out._id
    node.out_dtype = _of_array(v)
    node.out_shape = v.shape
    save, save_out = prim.save_inputs, prim.save_output
    if save == "all":
        node.inputs = tuple([_saved(t) for t in inputs])
    elif type(save) is dict:
        # Save a value only if an input whose gradient reads it can get one:
        # ``c * x`` with a constant c keeps c, never x.
        need = _needs_gradient(inputs, stack)
        kept = [None] * len(inputs)
        for i, users in save.items():
            for j in users:
                if need[j]:
                    kept[i] = _saved(inputs[i])
                    break
        node.inputs = tuple(kept)
        if type(save_out) is tuple:
            save_out = True in [need[j] for j in save_out]
    elif save:
        node.inputs = tuple([_saved(t) if i in save else None for i, t in enumerate(inputs)])
    else:
        node.inputs = (None,) * len(inputs)
    node.outputs = (out,) if save_out else (None,)
    scopes = _tls.scopes
    node.scope = "/".join(scopes) if scopes else ""
    node.rule = rule
    node.holders = 0
    return node


def _needs_gradient(inputs, stack) -> list:
    """Which inputs a recording tape of this thread can differentiate."""
    if len(stack) == 1:
        live = stack[0]._live
        return [t._id in live or (type(t) is ResourceVariable and t._trainable) for t in inputs]
    tapes = [tape for tape in stack if tape._recording]
    return [any([t._id in tape._live for tape in tapes]) or (type(t) is ResourceVariable and t._trainable)
            for t in inputs]


def _release(node) -> None:
    """A tape is done with this record: drop its saved values once no tape holds them."""
    node.holders -= 1
    if node.holders <= 0:
        node.inputs = (None,) * len(node.in_ids)
        node.outputs = (None,)
        node.rule = None


def _saved(t):
    # A variable may be assigned before the backward pass: save the value read now.
    if type(t) is ResourceVariable:
        return _t._wrap_with_id(t._value, t._id)
    return t


def record(prim, inputs, attrs, out, rule=None) -> None:
    """Put an op on every tape of this thread that watches one of its inputs."""
    node = None
    stack = _tls.stack or ()
    for tape in stack:
        live = tape._live
        if not tape._recording:
            if not tape._spent and any(t._id in live for t in inputs):
                tape._note("op_skipped", op_type=prim.type, inputs=tuple(inputs), output=out,
                           reason="stop_recording")
            continue
        if tape._auto:
            for t in inputs:
                if type(t) is ResourceVariable and t._trainable and t._id not in live:
                    tape._watch_variable(t, auto=True)
        for t in inputs:
            if t._id in live:
                break
        else:
            continue
        if node is None:
            node = _make_node(prim, inputs, attrs, out, rule, stack)
        tape._records.append(node)
        node.holders += 1
        live.add(out._id)
        if _hooks.active:
            _hooks.emit("op", tape=tape, node=node, output=out, inputs=inputs)
    if _tls.accumulators:
        forward_op(prim, inputs, attrs, out, rule)


def accumulators() -> list:
    """The forward-mode accumulators active in this thread, outermost first."""
    s = _tls.accumulators
    if s is None:
        s = _tls.accumulators = []
    return s


def forward_op(prim, inputs, attrs, out, rule):  # replaced by _forward: push tangents through the op
    pass


def _leave(tensor, how):
    for tape in _stack():
        if not tape._spent and tensor._id in tape._live:
            tape._note("leave", tensor=tensor, how=how)


def _state_change(var, how):
    for tape in _stack():
        if not tape._spent and (tape._recording or var._id in tape._live):
            tape._note("state", variable=var, how=how)


_t._leave = _leave
_t._state_change = _state_change


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
        self._persistent = bool(persistent)
        self._auto = bool(watch_accessed_variables)
        self._id = _tape_ids()
        self._records: list | None = []
        self._live: set = set()
        self._variables: dict = {}
        self._notes: list = []
        self._recording = False
        self._pushed = False
        self._spent = False
        self._freed = 0  # records before this index have released their saved values
        self._parent = None
        self._traces: list = []  # the ad.trace()s that saw this tape: it keeps them alive, the package doesn't

    # -- context --------------------------------------------------------------
    def __enter__(self):
        self._push()
        return self

    def __exit__(self, *exc):
        self._pop()
        return False

    def _push(self):
        if self._pushed:
            raise RuntimeError("this GradientTape is already recording")
        stack = _stack()
        self._parent = stack[-1]._id if stack else None
        stack.append(self)
        ACTIVE[0] += 1
        self._pushed = True
        self._recording = True
        if _hooks.active:
            _hooks.emit("tape_begin", tape=self)

    def _pop(self):
        if not self._pushed:
            return
        stack = _stack()
        if self in stack:
            stack.remove(self)
        ACTIVE[0] -= 1
        self._pushed = False
        self._recording = False
        if _hooks.active:
            _hooks.emit("tape_end", tape=self)

    # -- what the tape watches ----------------------------------------------
    def watch(self, tensor) -> None:
        """Watch a tensor, a variable or a nested list of them.

        A tape used without ``with`` starts recording at its first ``watch``
        and stops when ``gradient`` is called (the guides use it that way).
        """
        for t in _nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(f"GradientTape.watch: expected a Tensor or Variable, got {type(t).__name__}: {t!r:.60}")
            if not t.dtype.is_floating:
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. ad.float32), got ad.{t.dtype.name}",
                              stacklevel=2)
            if isinstance(t, ResourceVariable):
                self._watch_variable(t, auto=False)
            else:
                self._live.add(t._id)
                if _hooks.active:
                    _hooks.emit("watch", tape=self, tensor=t, auto=False)
        if not self._pushed and not self._spent and not self._recording:
            self._implicit = True
            self._push()

    def _watch_variable(self, var, auto):
        self._live.add(var._id)
        self._variables[var._id] = var
        if _hooks.active:
            _hooks.emit("watch", tape=self, tensor=var, auto=auto)

    def watched_variables(self) -> tuple:
        """Variables this tape watches, in order of creation."""
        return tuple(v for _, v in sorted(self._variables.items()))

    def _note(self, kind, **info):
        self._notes.append((kind, info))
        if _hooks.active:
            _hooks.emit(kind, tape=self, **info)

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
        """Forget everything recorded so far (as if the block were re-entered)."""
        if not self._persistent:
            for node in self._records[self._freed:]:
                _release(node)
        self._records = []
        self._freed = 0
        self._live = set()
        self._variables = {}
        self._notes = []
        self._spent = False
        if _hooks.active:
            _hooks.emit("tape_reset", tape=self)

    # -- gradients ------------------------------------------------------------
    def _check_usable(self, what):
        if self._spent:
            raise RuntimeError(
                f"GradientTape.{what}: a non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians); create it with persistent=True to call it again")
        # Spent from here on, even if the call fails half-way: its saved values may be gone.
        self._spent = not self._persistent
        if getattr(self, "_implicit", False):
            self._implicit = False
            self._pop()

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Gradient of ``target`` (summed if several or non-scalar) w.r.t. ``sources``.

        The result has the structure of ``sources``; a source the target does
        not depend on gives ``None`` (or zeros with ``unconnected_gradients='zero'``).
        """
        self._check_usable("gradient")
        zero = _unconnected(unconnected_gradients)
        flat_targets = _as_tensors(_nest.flatten(target), "target")
        flat_sources = _as_tensors(_nest.flatten(sources), "source")
        ogs = _output_gradients(output_gradients, flat_targets)
        for t in flat_targets:
            if not t.dtype.is_floating:
                warnings.warn("The dtype of the target tensor must be floating (e.g. ad.float32) when calling "
                              f"GradientTape.gradient, got ad.{t.dtype.name}", stacklevel=2)
        for s in flat_sources:
            if not s.dtype.is_floating:
                warnings.warn("The dtype of the source tensor must be floating (e.g. ad.float32) when calling "
                              f"GradientTape.gradient, got ad.{s.dtype.name}", stacklevel=2)
        if _hooks.active:
            _hooks.emit("gradient_begin", tape=self, targets=flat_targets, sources=flat_sources, kind="gradient")
        grads = self._backward(flat_targets, ogs, flat_sources, free=not self._persistent)
        results = [_result(grads.get(s._id), s, zero) for s in flat_sources]
        self._finish(flat_sources, results)
        return _nest.pack_like(sources, results)

    def _finish(self, sources, results):
        if not self._persistent:
            # Saved values go; the records' plain facts (types, ids, shapes)
            # stay, so a spent tape can still be drawn and explained.
            for node in self._records[self._freed:]:
                _release(node)
            self._freed = len(self._records)
            self._spent = True
            self._recording = False
        if _hooks.active:
            _hooks.emit("gradient_end", tape=self, sources=sources, results=results, spent=self._spent)

    def _backward(self, targets, ogs, sources, free):
        """Reverse-mode sweep over the records; returns {tensor id: gradient}."""
        records = self._records
        n = len(records)
        source_ids = {s._id for s in sources if s.dtype.is_floating}
        # Ids that depend on a source: only these need gradients.  A source
        # counts if the tape watches it, or if it is itself a target.
        target_ids = {t._id for t in targets}
        reach = {i for i in source_ids if i in self._live or i in target_ids}
        for node in records[:n]:
            for i in node.in_ids:
                if i in reach:
                    reach.add(node.out_id)
                    break
        grads: dict = {}
        counts: dict = {}
        emitting = _hooks.active
        for t, og in zip(targets, ogs):
            if not t.dtype.is_floating or t._id not in reach:
                continue
            seed = og if og is not None else _ones_like(t)
            _accumulate(grads, counts, t._id, seed, self, None, emitting)
        step = 0
        missing, not_differentiable = _registry._MISSING, _registry.NOT_DIFFERENTIABLE
        add = _ops().add
        for k in range(n - 1, -1, -1):
            node = records[k]
            g = grads.get(node.out_id)
            if g is None or not node.out_dtype.is_floating:
                if free:
                    _release(node)
                continue
            in_ids = node.in_ids
            rule = node.rule or node.prim.grad
            if rule is missing:
                raise LookupError(f"gradient registry has no entry for: {node.type}")
            if rule is not_differentiable:
                in_grads = (None,) * len(in_ids)
            else:
                in_grads = rule(node, g)
                if type(in_grads) is not tuple and type(in_grads) is not list:
                    in_grads = (in_grads,)
                if len(in_grads) != len(in_ids):
                    raise ValueError(f"gradient rule for {node.type} returned {len(in_grads)} gradients "
                                     f"for {len(in_ids)} inputs")
            step += 1
            sent = [None] * len(in_ids)
            for i, gi in enumerate(in_grads):
                if gi is None or in_ids[i] not in reach:
                    continue
                if not isinstance(gi, Tensor):
                    gi = _t.convert_to_tensor(gi, dtype=node.in_dtypes[i])
                if gi._value.shape != node.in_shapes[i]:
                    gi = _unbroadcast(gi, node.in_shapes[i], node.type)
                sent[i] = gi
            if emitting:
                _hooks.emit("backward_step", tape=self, node=node, upstream=g, input_grads=tuple(sent), step=step)
                for tid, gi in zip(in_ids, sent):
                    if gi is not None:
                        _accumulate(grads, counts, tid, gi, self, node, emitting)
            else:
                for tid, gi in zip(in_ids, sent):
                    if gi is not None:
                        prev = grads.get(tid)
                        grads[tid] = gi if prev is None else add(prev, gi)
            if free:
                _release(node)
                if node.out_id not in source_ids:
                    del grads[node.out_id]
        if free:
            self._freed = n
        return grads

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """Jacobian of ``target`` w.r.t. each source: shape ``target.shape + source.shape``."""
        self._check_usable("jacobian")
        zero = _unconnected(unconnected_gradients)
        (target,) = _as_tensors([target], "target")
        flat_sources = _as_tensors(_nest.flatten(sources), "source")
        if _hooks.active:
            _hooks.emit("gradient_begin", tape=self, targets=[target], sources=flat_sources, kind="jacobian")
        results = _jacobian_rows(self, target, flat_sources, target.shape, zero, batch=False)
        self._finish(flat_sources, results)
        return _nest.pack_like(sources, results)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: shape ``[b] + target.shape[1:] + source.shape[1:]``."""
        self._check_usable("batch_jacobian")
        zero = _unconnected(unconnected_gradients)
        (target,) = _as_tensors([target], "target")
        (source,) = _as_tensors([source], "source")
        if target.ndim < 1 or source.ndim < 1 or target.shape[0] != source.shape[0]:
            raise ValueError(f"batch_jacobian: target {target.shape} and source {source.shape} need the same "
                             "first (batch) dimension")
        if _hooks.active:
            _hooks.emit("gradient_begin", tape=self, targets=[target], sources=[source], kind="batch_jacobian")
        (result,) = _jacobian_rows(self, target, [source], target.shape[1:], zero, batch=True)
        self._finish([source], [result])
        return result


def _jacobian_rows(tape, target, sources, row_shape, zero, batch):
    """Loop over target elements (per example when ``batch``), one backward pass each."""
    from . import _ops

    xp = _backend.namespace_of(target._value)
    count = 1
    for d in row_shape:
        count *= d
    rows = [[] for _ in sources]
    for j in range(count):
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
            results.append(_ops.zeros(out_shape, s.dtype) if zero else None)
            continue
        filled = [g if g is not None else _ops.zeros_like(s) for g in r]
        stacked = _ops.stack(filled, axis=1 if batch else 0)  # batch: [b, count, x...]
        results.append(_ops.reshape(stacked, out_shape))
    return results


def _ones_like(t):
    xp = _backend.namespace_of(t._value)
    return _t._wrap(xp.ones(t._value.shape, dtype=t._value.dtype))


def _ops():
    # The op functions import this module; reach them once it has loaded.
    from . import _ops as ops

    return ops


def _accumulate(grads, counts, tid, g, tape, node, emitting):
    prev = grads.get(tid)
    if prev is None:
        total = g
        counts[tid] = 1
    else:
        total = _ops().add(prev, g)
        counts[tid] += 1
    grads[tid] = total
    if emitting:
        _hooks.emit("accumulate", tape=tape, tensor_id=tid, contribution=g, total=total,
                    count=counts[tid], node=node)


def _unbroadcast(g, shape, op_type):
    """Sum a gradient over the axes its input was broadcast along."""
    from . import _ops

    gshape = tuple(g._value.shape)
    extra = len(gshape) - len(shape)
    if extra < 0:
        raise ValueError(f"gradient of {op_type} has shape {gshape}, smaller than its input's {shape}")
    axes = list(range(extra))
    for i, s in enumerate(shape):
        if s == 1 and gshape[i + extra] != 1:
            axes.append(i + extra)
        elif s != gshape[i + extra] and s != 1:
            raise ValueError(f"gradient of {op_type} has shape {gshape}, which does not broadcast to its input's {shape}")
    if axes:
        g = _ops.reduce_sum(g, axis=axes)
    return _ops.reshape(g, shape)


def _unconnected(value) -> bool:
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
        if og.shape != t.shape:
            raise ValueError(f"output_gradients: gradient of shape {og.shape} for a target of shape {t.shape}")
        out.append(og)
    return out


def _result(g, source, zero):
    if g is None:
        if zero:
            xp = _backend.namespace_of(source._value)
            return _t._wrap(xp.zeros(source._value.shape, dtype=source._value.dtype))
        return None
    return g


@contextlib.contextmanager
def name_scope(name: str):
    """Label the ops recorded inside (graphs fold each scope into one box).

    >>> import autodiff_viz as ad
    >>> with ad.name_scope("layer1"):
    ...     pass
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name_scope: expected a non-empty string, got {name!r}")
    scopes = _scopes()
    scopes.append(name.rstrip("/"))
    try:
        yield name
    finally:
        scopes.pop()
