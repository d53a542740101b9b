"""``check_backward``: a backward pass written by hand, tensor by tensor, compared with the tape's.

The student's forward code runs on a persistent tape inside ``ad.trace()``;
the tape's gradients of the target with respect to every tensor the student
named are the right answers.  The student's tensors are checked in the order
the tape's backward pass completes them (the target's consumer first, the
inputs last), and the first wrong one is marked on the graph of the student's
own code, with what was expected and what came, the upstream gradient and the
local rule that combine to the right answer, and the usual slip when the
numbers show one (:mod:`.slips`).  This checker is this package's own; TensorFlow
has none.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Mapping

import numpy as np

from .. import GradientTape, ResourceVariable, Tensor, constant, extend, trace
from .. import events as _events
from .messages import _fmt, _input_names, need_function
from .results import CheckResult, Divergence
from .numeric import _sums_down
from .slips import name_slip

BACKWARD_MARK = "where your backward pass first differs from the tape's"


def check_backward(forward: Callable, inputs: Mapping[str, Any], backward: Any, *, target: str = "loss",
                   required=None, rtol: float = 1e-4, atol: float = 1e-5) -> CheckResult:
    """Compare a hand-written backward pass with the tape's, tensor by tensor.

    ``forward(**inputs)`` computes with the package's ops and returns a dict of
    the tensors it names (``{"h": h, "logits": logits, "loss": loss}``);
    ``target`` names the one to differentiate (summed over its elements).
    ``inputs``: ``{name: value}``; float values become watched constants,
    integer ones (labels) stay as they are, variables are used as given.
    ``backward``: the student's gradients, ``{name: array}`` with ``name`` an
    input or a tensor ``forward`` returned, or a function that receives every
    value by name (``v.X``, ``v.h``: NumPy arrays) and returns that dict.
    ``required``: names that must be answered (default: those given).

    >>> import autodiff_viz as ad, numpy as np
    >>> def forward(x, w):
    ...     y = x * w
    ...     return {"y": y, "loss": ad.reduce_sum(y * y)}
    >>> inputs = {"x": np.array([1.0, 2.0]), "w": np.array([3.0, -1.0])}
    >>> check_backward(forward, inputs, lambda v: {"y": 2 * v.y, "w": 2 * v.y * v.x}).passed
    True
    >>> r = check_backward(forward, inputs, lambda v: {"y": 2 * v.y, "w": v.y * v.x})
    >>> r.passed, r.divergence.name
    (False, 'w')
    """
    call = "check_backward(forward, inputs, backward)"
    need_function(forward, call, "forward", "the function that computes the forward pass")
    if not isinstance(inputs, Mapping) or not inputs:
        raise TypeError(f"{call}: inputs must be a dict {{name: value}}, got {type(inputs).__name__} {inputs!r:.60}")
    tensors = {k: _as_tensor(k, v) for k, v in inputs.items()}
    with trace() as tr:
        with GradientTape(persistent=True) as tape:
            for t in tensors.values():
                if not isinstance(t, ResourceVariable) and t.dtype.is_floating:
                    tape.watch(t)
            out = forward(**tensors)
        named = _named(out, tensors, target, call)
        values = _Values(**{k: np.asarray(t.numpy()) for k, t in named.items()})
        answers = _answers(backward, values, named, call)
        wanted = list(answers) + [k for k in (required or ()) if k not in answers]
        unknown = [k for k in (required or ()) if k not in named]
        if unknown:
            raise KeyError(f"{call}: required names {unknown} are neither inputs nor tensors forward returned "
                           f"({sorted(named)})")
        right = tape.gradient(named[target], [named[k] for k in wanted])
    ids = {k: extend.tensor_id(named[k]) for k in named}
    show = dict(trace=tr, target=named[target], sources=[t for t in tensors.values() if t.dtype.is_floating],
                names={i: k for k, i in ids.items()}, mark_legend=BACKWARD_MARK)
    order = _backward_order(tr.events)
    checked = sorted(range(len(wanted)), key=lambda j: (order.get(ids[wanted[j]], (float("inf"), 0)), j))
    sizes = {int(n) for t in named.values() for n in (*t.shape, np.prod(t.shape, dtype=int))}  # for a 1/n
    for j in checked:
        name, exp = wanted[j], right[j]
        verdict = _compare(name, answers.get(name, _MISSING), exp, rtol, atol)
        if verdict is None:
            continue
        got = verdict[1]
        local = _upstream_times_local(tr.events, ids[name], named, ids)
        if local.upstream is None and local.output in ids.values():   # too large for a summary: ask the tape
            up = tape.gradient(named[target], named[next(k for k in named if ids[k] == local.output)])
            local.upstream = None if up is None else np.asarray(up.numpy(), dtype=np.float64)
        exp_a = None if exp is None else np.asarray(exp.numpy(), dtype=np.float64)
        slip = ""
        if got is not None and exp_a is not None:
            slip = _one_use_only(name, got, local.uses, rtol, atol) or name_slip(
                name, got, exp_a, upstream=local.upstream, sizes=sizes) or _matmul_order(
                name, got, tr.events, local)
        message = " ".join(s for s in (verdict[0], slip, local.words) if s)
        note = f"d{name}: expected {_fmt(exp_a) if exp_a is not None else 'None'}, got " \
               f"{'None' if got is None else _fmt(got)}" + (f"; = {local.short}" if local.short else "")
        done = [wanted[k] for k in checked[:checked.index(j)]]
        if done:
            message += f" (Right so far: {', '.join('d' + k for k in done)}.)"
        div = Divergence(step=local.step, node=local.node, tensor=ids[name], op_type=local.op_type, name=name,
                         input_index=local.index, upstream=local.upstream, got=got, expected=exp_a,
                         input_name=name, hint=slip)
        return CheckResult(False, message, divergence=div, mark=ids[name], note=note, **show)
    shown = ", ".join("d" + wanted[j] for j in checked)
    return CheckResult(True, f"Right: {shown}, each as the tape computes it.", **show)


_MISSING = object()


class _Values(types.SimpleNamespace):
    """The forward values a backward function reads (``v.X``, ``v.h``); a name not there is named with the others."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"the forward values have no {name!r}: they are {sorted(vars(self))} (the inputs and "
                             "the tensors forward returned)")


def _as_tensor(name, value):
    if isinstance(value, (Tensor, ResourceVariable)):
        return value
    arr = np.asarray(value)
    if arr.dtype.kind in "iub":
        return constant(arr)
    if arr.dtype.kind != "f":
        raise TypeError(f"check_backward: input {name!r} must be numbers, got {arr.dtype} {value!r:.60}")
    return constant(arr.astype(np.float32))


def _named(out, tensors, target, call) -> dict:
    if not isinstance(out, Mapping):
        raise TypeError(f"{call}: forward must return a dict of the tensors it names (with {target!r}), got "
                        f"{type(out).__name__}")
    named = dict(tensors)
    for k, t in out.items():
        if not isinstance(t, (Tensor, ResourceVariable)):
            raise TypeError(f"{call}: forward returned {k!r} = {type(t).__name__}, not a tensor of this package")
        named[k] = t
    if target not in named:
        raise KeyError(f"{call}: forward returned no {target!r} (the target); it returned {sorted(out)}")
    return named


def _answers(backward, values, named, call) -> dict:
    if callable(backward):
        backward = backward(values)   # an error in the student's code shows as their own traceback
    if not isinstance(backward, Mapping):
        raise TypeError(f"{call}: backward must be a dict {{name: gradient}} (or a function returning one), got "
                        f"{type(backward).__name__}")
    unknown = [k for k in backward if k not in named]
    if unknown:
        raise KeyError(f"{call}: backward gives {unknown}, which are neither inputs nor tensors forward returned "
                       f"({sorted(named)})")
    return dict(backward)


def _compare(name, got, exp, rtol, atol):
    """``None`` when right; else (the sentence, the student's array or ``None``)."""
    if got is _MISSING:
        return f"You gave no d{name}.", None
    if got is None or exp is None:
        if (got is None) == (exp is None):
            return None
        if exp is None:
            return (f"d{name}: you gave {_fmt(np.asarray(got.numpy() if isinstance(got, Tensor) else got))}, "
                    f"but no gradient reaches {name} (the tape gives None).", None)
        return f"d{name}: you gave None, but the loss depends on {name}.", None
    try:
        g = np.asarray(got.numpy() if isinstance(got, Tensor) else got, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"check_backward: your d{name} must be numbers (an array, a list or a tensor), got "
                        f"{type(got).__name__} {got!r:.60}") from None
    e = np.asarray(exp.numpy(), dtype=np.float64)
    scale = float(np.max(np.abs(e), initial=0.0))   # relative to the gradient's size: zeros never pass for a tiny one
    if g.shape == e.shape and np.allclose(g, e, rtol=rtol, atol=atol * scale):
        return None
    return f"d{name} is not right: expected {_fmt(e)}, got {_fmt(g)}.", g


class _Local(types.SimpleNamespace):
    """How the tape's answer for one tensor is made: upstream gradient × the consuming op's local rule."""


def _backward_order(events) -> dict:
    """{tensor id: (position, input slot)}: when the backward pass completes each tensor's gradient.

    A tensor's gradient is complete once every consumer's rule has run: the
    last backward step that sends to it.  The target comes first.
    """
    order = {}
    steps = [e for e in events if isinstance(e, _events.BackwardStep)]
    for pos, e in enumerate(steps):
        order.setdefault(e.output, (pos - 0.5, 0))
        for slot, (i, g) in enumerate(zip(e.inputs, e.grads)):
            if g is not None:
                order[i] = (pos, slot)
    return order


def _upstream_times_local(events, tensor, named, ids) -> _Local:
    """The backward steps that sent to ``tensor``: their upstream, the local rule, in words."""
    ops = {e.node: e for e in events if isinstance(e, _events.Op)}
    label = {i: k for k, i in ids.items()}
    sends = [(e, slot) for e in events if isinstance(e, _events.BackwardStep)
             for slot, (i, g) in enumerate(zip(e.inputs, e.grads)) if i == tensor and g is not None]
    if not sends:
        return _Local(words="", short="", upstream=None, step=0, node=0, op_type="", index=0, output=None, uses=[])
    parts = []
    for e, slot in sends:
        op = ops.get(e.node)
        rule = op.partials[slot] if op is not None and slot < len(op.partials) else "its local derivative"
        if op is not None and slot < len(op.in_shapes) and tuple(op.in_shapes[slot]) != tuple(op.shape) and \
                _sums_down(tuple(op.shape), tuple(op.in_shapes[slot])):
            rule += f", summed over the axes broadcasting added (to shape {tuple(op.in_shapes[slot])})"
        parts.append(f"{e.op_type} ({_formula(op, label) if op is not None else e.op_type}) received upstream "
                     f"dL/d{_out(e, label)} = {_fmt_summary(e.upstream)} and its local rule for this input is "
                     f"{rule}")
    e, slot = sends[-1]
    who = label.get(tensor, "this tensor")
    many = f"{who} is used {len(sends)} times; the tape adds the gradients of its uses: " if len(sends) > 1 else ""
    words = f"Upstream × local: {many}" + "; ".join(parts) + "."
    op = ops.get(e.node)
    short = f"upstream dL/d{_out(e, label)} × {op.partials[slot] if op and op.partials else '…'}"
    up = e.upstream.array() if e.upstream is not None else None
    return _Local(words=words, short=short if len(sends) == 1 else f"the sum over {len(sends)} uses",
                  upstream=up, step=e.step, node=e.node, op_type=e.op_type, index=slot, output=e.output,
                  uses=[(e.op_type, e.grads[slot].array()) for e, slot in sends])


def _fmt_summary(s) -> str:
    if s is None:
        return "None"
    a = s.array()
    if a is not None:
        return _fmt(a)
    return f"(shape {s.shape}, mean {_fmt(s.mean)})"


def _out(step, label) -> str:
    return label.get(step.output) or f"({step.op_type} output)"


def _formula(op, label) -> str:
    """The op's formula with its operand letters named: ``A @ B`` with A = h, B = W2."""
    letters = _input_names(len(op.inputs))
    if any(ch.isupper() for ch in op.formula if ch.isalpha()):
        letters = [x.upper() for x in letters]
    known = [f"{x} = {label[i]}" for x, i in zip(letters, op.inputs) if i in label]
    return op.formula + (f", {', '.join(known)}" if known else "")


def _one_use_only(name, got, uses, rtol, atol) -> str:
    """A tensor used several times whose answer is the gradient through one use only."""
    if len(uses) < 2:
        return ""
    for k, (op_type, part) in enumerate(uses):
        if part is not None and part.shape == got.shape and np.allclose(got, part, rtol=rtol, atol=atol):
            others = ", ".join(o for j, (o, _) in enumerate(uses) if j != k)
            return (f"Your d{name} is the gradient through {op_type} only: {name} is used {len(uses)} times, "
                    f"so add the gradient through {others} too.")
    return ""


def _matmul_order(name, got, events, local) -> str:
    """A MatMul rule with a factor left untransposed or its product in the wrong order (the shapes may agree)."""
    op = next((e for e in events if isinstance(e, _events.Op) and e.node == local.node), None)
    if op is None or op.op_type != "MatMul" or (op.attrs or {}).get("transpose_a") or \
            (op.attrs or {}).get("transpose_b") or local.upstream is None or len(op.in_values) != 2:
        return ""
    a, b = (None if v is None else v.array() for v in op.in_values)
    if a is None or b is None or np.ndim(a) != 2 or np.ndim(b) != 2:
        return ""
    g = np.asarray(local.upstream, dtype=np.float64)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    tries = ([(lambda: g @ b, "Ḡ·B without transposing B")] if local.index == 0 else
             [(lambda: a @ g, "A·Ḡ without transposing A"), (lambda: g @ a.T, "Ḡ·Aᵀ, the product in the wrong order")])
    for make, words in tries:
        try:
            wrong = make()
        except ValueError:   # the shapes do not multiply: not this slip
            continue
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=1e-4, atol=1e-6 * max(1.0, np.abs(wrong).max())):
            right = "Ḡ·Bᵀ" if local.index == 0 else "Aᵀ·Ḡ"
            return (f"Your d{name} is {words}; the MatMul rule gives {right} for it (Ḡ is the upstream gradient, "
                    "A and B the two factors): check which factor is transposed and on which side it goes.")
    return ""
