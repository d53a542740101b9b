"""Forward mode: ``ForwardAccumulator`` pushes tangents through ops as they run.

Each primitive's tangent rule (``jvp`` in the op table) sits beside its
gradient rule.  A rule takes ``(op, tangents)``, one tangent per input (zeros
for floating inputs the accumulator does not follow, ``None`` for integer and
boolean ones), and returns the output's tangent.  The zeros are TF's: its
accumulator gives every floating input it does not follow a zero tangent and
pushes it through the op's transposed gradient function like any other, so
where such an input's slope is infinite its term is inf · 0, NaN (``a / b`` at
``b = 0`` with only ``a`` followed: ``inf · 1 + -inf · 0``, NaN in TF too);
RealDiv's, Pow's and Sqrt's rules compute what TF's transposed gradients do,
so their NaNs fall where TF's do.  Rules use the package's ops, so tapes and
outer accumulators see them: that is what makes forward-over-reverse
(Hessian-vector products) and reverse-over-forward work.

While one accumulator computes tangents, only the tapes and accumulators that
were already active when it was entered watch those computations; the ones
entered inside it see the primal ops only.

Inside ``ad.trace()`` an accumulator announces itself (``forward_begin`` with
its primals and their tangents, ``forward_end``) and each tangent it pushes
(``forward_step``); with no trace open an op pays one more list read.
"""
from __future__ import annotations

import contextlib

from . import _context, _gradient_sums, _nest, _ops, _registry, _tape
from . import _tensor as _t
from ._context import LISTENING, emit
from ._op_view import Op
from ._record import make_record
from ._tensor import Tensor


class ForwardAccumulator:
    """Compute Jacobian-vector products while the function runs (forward mode).

    ``primals`` are the tensors or variables to differentiate with respect to,
    ``tangents`` the direction for each (same structure and shapes).

    >>> import autodiff_viz as ad
    >>> x = ad.constant([1.0, 2.0])
    >>> with ad.autodiff.ForwardAccumulator(x, ad.constant([1.0, 0.0])) as acc:
    ...     y = x * x
    >>> acc.jvp(y).numpy().tolist()
    [2.0, 0.0]
    """

    def __init__(self, primals, tangents):
        flat_p = _nest.flatten(primals)
        flat_t = _nest.flatten(tangents)
        if len(flat_p) != len(flat_t):
            raise ValueError(f"ForwardAccumulator: {len(flat_p)} primals but {len(flat_t)} tangents")
        self._tangents: dict = {}
        for p, t in zip(flat_p, flat_t):
            if not isinstance(p, Tensor):
                raise TypeError(f"ForwardAccumulator: primals must be tensors or variables, got {type(p).__name__}")
            if not p.dtype.is_floating:
                raise ValueError(f"ForwardAccumulator: primal of dtype {p.dtype.name} is not floating")
            if t is None:  # (TF raises ValueError too: None does not convert to a tensor)
                raise ValueError(f"ForwardAccumulator: the tangent for the primal of shape {p.shape} is None; give "
                                 "a tensor of the primal's shape and dtype (the direction to differentiate along)")
            t = _t.convert_to_tensor(t, dtype=p.dtype) if not isinstance(t, Tensor) else t
            if t.shape != p.shape:
                raise ValueError(f"ForwardAccumulator: tangent of shape {t.shape} for a primal of shape {p.shape}")
            if t.dtype != p.dtype:
                raise TypeError(f"ForwardAccumulator: tangent dtype {t.dtype.name} differs from the primal's {p.dtype.name}")
            self._tangents[p._id] = t
        self._pushed = False
        self._outer_tapes: tuple = ()
        self._primals = tuple(flat_p)
        self._id = _tape._tape_ids()  # (one numbering with the tapes: a trace tells them apart by id)
        self._traces: list = []       # the ad.trace()s that saw it (as a tape keeps its own)

    def __enter__(self):
        if self._pushed:
            raise ValueError("this ForwardAccumulator is already active")
        self._outer_tapes = _context.push_accumulator(self)
        self._pushed = True
        if LISTENING[0]:
            emit("forward_begin", tape=self, primals=self._primals,
                 tangents=tuple(self._tangents[p._id] for p in self._primals))
        return self

    def __exit__(self, *exc):
        _context.pop_accumulator(self)
        self._pushed = False
        if LISTENING[0]:
            emit("forward_end", tape=self)
        return False

    def _on_op(self, k, prim, inputs, attrs, out, rule):
        """An op ran while this accumulator is ``k``-th on the stack: push its tangent through it.

        Only the tapes that were recording when this accumulator was entered,
        and the accumulators entered before it, see the tangent's ops.
        """
        known = self._tangents
        if not any(t._id in known for t in inputs):
            return
        with _context.outer_only(self._outer_tapes, _context.state.accumulators[:k]):
            tangent = _tangent_of(prim, inputs, attrs, out, rule, known)
        if LISTENING[0]:
            self._announce(prim, inputs, attrs, out, rule, tangent)
        if tangent is not None:
            known[out._id] = tangent

    def _announce(self, prim, inputs, attrs, out, rule, tangent):
        """Tell a trace what this op did to the tangents, with each followed input's term of the sum.

        The terms (the tangent pushed from one input at a time) are computed
        with no tape or accumulator watching, so a trace sees the same ops as
        an untraced run records.
        """
        given = [self._tangents.get(t._id) for t in inputs]
        followed = [i for i, g in enumerate(given) if g is not None]
        terms, partials = [None] * len(inputs), [None] * len(inputs)
        if len(followed) == 1:
            terms[followed[0]] = tangent
        scalar = out.shape == () and all(inputs[i].shape == () for i in followed)
        if rule is None and tangent is not None and (scalar or len(followed) > 1):
            with _context.outer_only((), ()):
                for i in followed:
                    alone = [None] * len(inputs)
                    if len(followed) > 1:
                        alone[i] = given[i]
                        terms[i] = _tangent_of(prim, inputs, attrs, out, rule, None, alone)
                    if scalar:  # the local derivative: the tangent pushed from a unit tangent of input i
                        alone[i] = _ops.ones_like(inputs[i])
                        partials[i] = _tangent_of(prim, inputs, attrs, out, rule, None, alone)
        emit("forward_step", tape=self, op_type=prim.type, inputs=tuple(inputs), output=out,
             record=make_record(prim, inputs, attrs, out, None, ()), in_tangents=tuple(given), terms=tuple(terms),
             partials=tuple(partials), tangent=tangent)

    def jvp(self, primals, unconnected_gradients=_tape.UnconnectedGradients.NONE):
        """The tangent of each tensor in ``primals`` (same structure).

        A tensor that does not depend on the accumulator's primals gives
        ``None``, or zeros with ``unconnected_gradients='zero'``.
        """
        zero = _tape._unconnected(unconnected_gradients)
        results = []
        for p in _nest.flatten(primals):
            if not isinstance(p, Tensor):
                raise TypeError(f"ForwardAccumulator.jvp: expected tensors, got {type(p).__name__}")
            t = self._tangents.get(p._id)
            if t is None and zero:
                t = _ops.zeros_like(p)
            results.append(t)
        return _nest.pack_like(primals, results)

    def __repr__(self):
        return f"<ForwardAccumulator following {len(self._tangents)} tensors>"


def _tangent_of(prim, inputs, attrs, out, rule, known, given=None):
    """The output's tangent, from the tangents ``known`` by tensor id, or (a trace's terms) from ``given``:
    one tangent or ``None`` (not followed: zero) per input position.

    A floating input not followed enters its rule with a zero tangent, never skipped, as in TF's
    ``ForwardAccumulator::Accumulate`` (its C++ tape): an infinite slope times it is NaN there too.
    """
    if not out.dtype.is_floating:
        return None
    grad = prim.grad
    if rule is None and grad is _registry.NOT_DIFFERENTIABLE:
        return None
    # A tangent rule may read any input and the output.
    op = Op(make_record(prim, inputs, attrs, out, rule, ()), tuple(inputs), (out,))
    tangents = []
    for k, t in enumerate(inputs):
        tangent = known.get(t._id) if given is None else given[k]
        if tangent is None and t.dtype.is_floating:
            tangent = _ops.zeros_like(t)
        tangents.append(tangent)
    if rule is not None:
        # A per-record rule (custom_gradient) has no tangent rule: transpose its gradient.
        result = _jvp_from_vjp(op, rule, tangents)
    elif prim.jvp is not None:
        result = prim.jvp(op, tuple(tangents))
    else:
        raise LookupError(f"forward-mode (jvp) registry has no entry for: {prim.type}")
    if result is None:
        return None
    if not isinstance(result, Tensor):
        result = _t.convert_to_tensor(result, dtype=out.dtype)
    if result.shape != out.shape:
        result = _ops.broadcast_to(result, out.shape)
    return result


@contextlib.contextmanager
def _unheard():
    """Run the block with no listener in this thread (it keeps its traces, which hear nothing meanwhile)."""
    st = _context.state
    saved = st.listeners, st.audience
    st.listeners, st.audience = [], _context.NOBODY
    try:
        yield
    finally:
        st.listeners, st.audience = saved


def _jvp_from_vjp(op, rule, tangents):
    """J t from the rule u -> J^T u: the derivative of <J^T u, t> with respect to u.

    Its tape is the engine's means, not the user's computation: a trace does
    not see it, unless an outer tape records these ops (its events need them).
    """
    with _unheard() if not _context.state.tapes else contextlib.nullcontext():
        u = _ops.zeros_like(op.outputs[0])
        with _tape.GradientTape() as inner:
            inner.watch(u)
            grads = rule(op, u)
            if not isinstance(grads, (list, tuple)):
                grads = (grads,)
            total = None
            for g, t, shape in zip(grads, tangents, op.in_shapes):
                if g is None or t is None:
                    continue
                g = g if isinstance(g, Tensor) else _t.convert_to_tensor(g, dtype=t.dtype)
                if g.shape != shape:
                    g = _gradient_sums.unbroadcast(g, shape, op.type)
                term = _ops.reduce_sum(g * t)
                total = term if total is None else total + term
        if total is None:
            return None
        return inner.gradient(total, u)
