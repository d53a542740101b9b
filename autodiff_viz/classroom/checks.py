"""``check_rule``: is a gradient rule right at the given inputs and at the special points, and if not, where?"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Optional

import numpy as np

from .. import ResourceVariable, Tensor, constant, extend, transpose
from .._shape import broadcast_axes
from ..test import compute_gradient
from .messages import need_function, _cap, _count, _fmt, _hint, _input_names, _param_names, _point_words
from .messages import _names_of_inputs, _upstream_words
from .numeric import _finite_forward, _is_kink, _max_err, _one_sided, _steepest_slopes, _subgradient_ok, _unbroadcast
from .numeric import _whole_ok
from .results import CheckResult, Divergence
from .running import _RuleMistake, _Watcher, _custom_forward, _lookup, _primitive_forward, _run, _your_frame
from .running import registered


def check_rule(op_type_or_fn, rule: Optional[Callable] = None, f: Optional[Callable] = None,
               inputs: Any = None, *, rtol: float = 1e-4, atol: float = 1e-6, seed: int = 0,
               exact_shapes: Optional[bool] = None) -> CheckResult:
    """Check a gradient rule against finite differences and name the node where it goes wrong.

    Two forms:

    * ``check_rule("Sin", rule, f, inputs)``: ``rule(op, grad)`` is the rule of
      op type ``"Sin"`` (``rule=None`` checks the rule registered now);
      ``f(*inputs)`` is a computation that uses that op at least once.
    * ``check_rule(fn, inputs)`` or ``check_rule(fn, f, inputs)``: ``fn`` is
      decorated with ``ad.custom_gradient``; ``f`` (a computation that calls
      ``fn``) defaults to ``fn`` itself.

    ``inputs`` is one value (a number or an array) for a one-argument ``f``, or a
    list/tuple with one value per argument; values become float64 constants,
    so finite differences are accurate.  Besides them the rule is checked at the
    origin, at a tie (every input equal to the first, when their shapes agree)
    and at a random point (``seed``).  A rule is run the way TensorFlow runs
    it: each gradient it returns must have its input's shape, so the rule sums
    over broadcast dimensions itself (``exact_shapes``, on by default).
    ``exact_shapes=False`` lets this package's tape do that sum after the rule,
    a convenience TensorFlow does not have; ``rule=None`` (this package's
    built-in rule, which leaves the sum to its tape) defaults to it.
    The rule is installed only while checking: the registry is left as it was.

    >>> import autodiff_viz as ad, numpy as np
    >>> relu = check_rule("Relu", None, ad.nn.relu, np.array([-1.0, 0.0, 2.0]))  # a kink at 0
    >>> relu.passed
    True
    """
    if callable(op_type_or_fn) and not isinstance(op_type_or_fn, str):
        fn = op_type_or_fn
        given = [a for a in (rule, f, inputs) if a is not None]  # (inputs) or (f, inputs), by position or name
        g = given.pop(0) if given and callable(given[0]) else None
        if len(given) != 1:
            raise TypeError("check_rule(fn, inputs) or check_rule(fn, f, inputs): give the input values once")
        name = getattr(fn, "__name__", "fn")
        xs, f = _as_inputs(given[0]), g or fn
        return _check(op_type="IdentityN", f=f, xs=xs, rtol=rtol, atol=atol, seed=seed,
                      what=f"the custom gradient of {name}", label=name,
                      select=lambda node: node.attrs.get("function") == name,
                      reference=_custom_forward(fn), convention=None, input_names=_param_names(fn),
                      watcher=None)
    op_type = op_type_or_fn
    if not isinstance(op_type, str):
        raise TypeError("check_rule: the first argument must be an op type such as 'Sin', or a function decorated "
                        f"with ad.custom_gradient; got {type(op_type).__name__} {op_type!r:.60}")
    if rule is not None and not callable(rule):  # never fall back to the registered rule silently
        raise TypeError(f"check_rule({op_type!r}, rule, f, inputs): rule must be a function rule(op, grad), or None "
                        f"to check the rule registered now; got {type(rule).__name__} {rule!r:.60}")
    prim = _lookup(op_type)
    xs = _as_inputs(inputs)
    if f is None:
        raise TypeError("check_rule: give f, a function of the inputs that uses the op")
    need_function(f, f"check_rule({op_type!r}, rule, f, inputs)", "f", "a function of the inputs that uses the op")
    builtin = prim.grad if callable(prim.grad) else None   # the documented convention at kinks and ties
    if exact_shapes is None:
        exact_shapes = rule is not None
    watcher = _Watcher(rule if rule is not None else prim.grad, op_type, exact_shapes) if callable(
        rule if rule is not None else prim.grad) else None
    ctx = registered(op_type, watcher) if watcher is not None else contextlib.nullcontext()
    with ctx:
        return _check(op_type=op_type, f=f, xs=xs, rtol=rtol, atol=atol, seed=seed,
                      what=f"the rule for {op_type}", label=op_type, select=lambda node: True,
                      reference=_primitive_forward(prim), convention=builtin, input_names=None,
                      watcher=watcher)


def _as_inputs(inputs) -> list:
    if inputs is None:
        raise TypeError("give the input values: one value, or a list with one value per argument of f")
    if isinstance(inputs, (Tensor, np.ndarray, int, float)):
        inputs = [inputs]
    xs = []
    for v in inputs:
        if isinstance(v, ResourceVariable):
            raise TypeError("check_rule/check_prediction take values, not variables: pass v.numpy()")
        xs.append(np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=np.float64))
    if not xs:
        raise TypeError("give at least one input value")
    return xs


def _points(f, xs, seed, names):
    """Where to check: the given inputs, the origin, a tie, a random point (each with its words)."""
    pts = [("the given inputs", xs)]
    if any(np.any(a != 0) for a in xs):
        pts.append((" = ".join(names) + " = 0", [np.zeros_like(a) for a in xs]))
    if len(xs) >= 2 and all(a.shape == xs[0].shape for a in xs[1:]) and \
            not all(np.array_equal(a, xs[0]) for a in xs[1:]):
        pts.append((" = ".join(names) + " (a tie)", [xs[0].copy() for _ in xs]))
    rng = np.random.default_rng(seed + 1)
    pts.append(("a random point", [rng.normal(size=a.shape) for a in xs]))
    return pts


def _check(op_type, f, xs, rtol, atol, seed, what, label, select, reference, convention, input_names,
           watcher) -> CheckResult:
    names = _param_names(f, len(xs))
    first = None
    tried = []
    for where, arrays in _points(f, xs, seed, names):
        given = where == "the given inputs"
        if not given and not _finite_forward(f, arrays):
            continue  # the function has no value there: nothing to check
        result = _check_at(op_type, f, arrays, rtol, atol, seed, what, label, select, reference, convention,
                           input_names, watcher, where, names)
        if given:
            first = result
        if not result.passed:
            if not given and first is not None and first.passed:
                result.message = result.message.replace(
                    f"{_cap(what)} is not right", f"{_cap(what)} is right at the given inputs, but not at "
                    f"{_point_words(where, names, arrays)}", 1)
            return result
        tried.append(where)
    first.message = (f"{_cap(what)} matches finite differences at {_count(len(tried), 'point')} "
                     f"({'; '.join(tried)}): {first.message}")
    return first


def _check_at(op_type, f, arrays, rtol, atol, seed, what, label, select, reference, convention, input_names,
              watcher, where, names) -> CheckResult:
    op_label = "the custom-gradient function" if op_type == "IdentityN" else f"an op of type {op_type}"
    xs = [constant(a) for a in arrays]
    if watcher is not None:
        watcher.labels = {extend.tensor_id(x): n for x, n in zip(xs, names)}
    with np.errstate(all="ignore"):
        run = _run(f, xs, seed)
    rec, tr, y = run.rec, run.trace, run.target
    show = dict(trace=tr, target=y, sources=xs, names=_labels(rec, op_type, select, label, xs, names))
    if run.error is not None:
        node = watcher.node if watcher is not None else _unfinished_node(run, op_type, select)
        return _failed_run(run.error, what, show, node)
    if watcher is not None and watcher.unsummed is not None:
        return _unsummed(watcher, op_type, show)
    labels = show["names"]

    # Which tensors depend on the inputs: only their gradients are sent.
    reach = {extend.tensor_id(x) for x in xs}
    for nid in rec.order:
        node, ins = rec.ops[nid]
        if any(extend.tensor_id(t) in reach for t in ins):
            reach.add(node.out_id)

    checked = 0
    divergence = None
    kinks = 0
    for step, node, upstream, sent in rec.steps:
        if node.type != op_type or not select(node):
            continue
        _, ins = rec.ops[node.id]
        in_arrays = [np.asarray(t.numpy(), dtype=np.float64) for t in ins]
        g = np.asarray(upstream.numpy(), dtype=np.float64)
        checked += 1
        conv = None
        if convention is not None:
            with np.errstate(all="ignore"):
                out = convention(node, upstream)
            out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            conv = [None if c is None else _unbroadcast(c.numpy() if isinstance(c, Tensor) else c, a.shape)
                    for c, a in zip(out, in_arrays)]
        who = _names_of_inputs(labels, [extend.tensor_id(t) for t in ins], input_names or _input_names(len(ins)),
                               label)
        verdicts = []
        for i, t in enumerate(ins):
            if extend.tensor_id(t) not in reach or not t.dtype.is_floating:
                verdicts.append(None)
                continue
            got = None if sent[i] is None else np.asarray(sent[i].numpy(), dtype=np.float64)
            verdicts.append(_judge(reference, node, in_arrays, i, g, got, conv[i] if conv else None, rtol, atol))
        kinks += sum(int(np.any(v["kink"])) for v in verdicts if v is not None)
        bad = next((i for i, v in enumerate(verdicts) if v is not None and not v["ok"]), None)
        if bad is not None:
            v = verdicts[bad]
            name = label if op_type == "IdentityN" else node.name
            divergence = Divergence(step, node.id, node.out_id, node.type, name, bad, g, v["got"], v["expected"],
                                    input_name=who[bad] if bad < len(who) else f"input {bad}", point=where,
                                    why=v["why"])
            # How many elements the node sums or averages into one (a reduction), or copies one to.
            sizes = [max(a.size, g.size) // max(1, min(a.size, g.size)) for a in in_arrays if a.size != g.size]
            divergence.hint = _hint(divergence, verdicts, g, where, names, arrays, who, sizes) or (
                _rerun_hint(watcher, node, upstream, bad, v["expected"], who) if watcher is not None else "") or \
                _wrong_axis_hint(reference, node, in_arrays, bad, g, v["got"], v["expected"], who)
            divergence.hint = _output_factor(divergence.hint, v["got"], v["expected"], reference, node,
                                             in_arrays) or divergence.hint
            break

    if checked == 0:
        return CheckResult(False, f"f never used {op_label}, so {what} was never run: build f from it.", **show)
    with np.errstate(all="ignore"):
        theoretical, numerical = compute_gradient(f, xs)
    jac_ok, jac_kink = _whole_ok(f, xs, theoretical, numerical, rtol, atol)
    passed = jac_ok and divergence is None
    mark, note = None, ""
    if passed:
        msg = (f"{_count(checked, 'node')} checked each time, largest difference "
               f"{_max_err(theoretical, numerical, jac_kink):.2g}"
               + (("; at ties and kinks the documented convention was followed" if convention is not None else
                   "; at a kink finite differences cannot decide, and the gradient there is a subgradient (checked "
                   "along many directions)") if kinks or jac_kink else "") + ".")
    elif divergence is not None:
        d = divergence
        msg = f"{_cap(what)} is not right. The numbers first diverge at {d.describe()}"
        for part in (_upstream_words(d.upstream, d.hint), d.why, d.hint):
            msg += (" " + part) if part else ""
        mark = d.tensor
        note = (f"Rule sent {_fmt(d.got) if d.got is not None else 'None'} to {d.input_name}; "
                f"right: {_fmt(d.expected)}.")
    else:
        msg = (f"{_cap(what)} gives each node the right numbers, but the gradient of the whole computation "
               f"differs from finite differences by {_max_err(theoretical, numerical):.2g}.")
    return CheckResult(passed, msg, divergence, theoretical, numerical, mark=mark, note=note, **show)


def _labels(rec, op_type, select, label, xs, names) -> dict:
    """Names for the picture: the function's parameters for the inputs, the custom function's name for its node."""
    out = {extend.tensor_id(x): n for x, n in zip(xs, names)}
    if op_type == "IdentityN":
        for nid in rec.order:
            node, _ = rec.ops[nid]
            if node.type == op_type and select(node):
                out[node.out_id] = label
    return out


def _judge(reference, node, arrays, i, upstream, got, conv, rtol, atol) -> dict:
    """Is what the rule sent to input ``i`` right?  Finite differences decide, or the convention at a kink.

    With no convention, a kink accepts exactly the subgradients: checked along
    many directions at once (:func:`.numeric._steepest_slopes`), never element
    by element, which would pass [1, 1] for the norm at the origin.
    """
    right, left, central = _one_sided(reference, node, arrays, i, upstream)
    kink = _is_kink(right, left)
    expected = central.copy()
    why = ""
    at_kink = bool(np.any(kink))
    sub_ok = None
    if at_kink:
        if conv is not None:
            expected[kink] = conv[kink]
            why = ("Here the slopes from the left and the right differ (a tie or a kink), so finite differences "
                   "cannot decide: the checker follows the documented convention, TensorFlow's, which the "
                   "built-in rule implements.")
        elif got is not None and got.shape == expected.shape:
            dirs, slopes = _steepest_slopes(reference, node, arrays, i, upstream, got, central)
            sub_ok, worst, dots = _subgradient_ok(dirs, slopes, got, rtol, atol)
            expected[kink] = (got if sub_ok else central)[kink]
            why = ("Here the function has a kink (its slopes differ from one side to the other), so finite "
                   "differences cannot decide: a gradient g is accepted when, for every direction d, g·d is at most "
                   "the steepest slope of the function along d close to this point (a subgradient); "
                   + (f"along d = {_fmt(dirs[worst])} your g·d is {_fmt(dots[worst])}, but the steepest slope is "
                      f"{_fmt(slopes[worst])}." if not sub_ok else "yours is one."))
    finite = np.isfinite(expected)
    if got is None:
        ok = bool(np.allclose(expected[finite], 0.0, atol=atol))  # None for a zero gradient is what TF does too
    elif got.shape != expected.shape:
        ok = False
    else:
        with np.errstate(all="ignore"):
            ok = bool(np.all(np.isclose(got, expected, rtol=rtol, atol=atol) | ~finite))
        ok = ok and sub_ok is not False
    return {"ok": ok, "got": got, "expected": expected, "kink": kink, "why": why if not ok and at_kink else ""}


class _SavedValues:
    """The node as a rule sees it, with other saved values: what a rule with one slip would need to be right."""

    def __init__(self, node, inputs, outputs):
        self._node, self.inputs, self.outputs = node, tuple(inputs), tuple(outputs)

    def __getattr__(self, name):
        return getattr(self._node, name)


def _rerun_hint(watcher, node, upstream, i, expected, who) -> str:
    """Name the slip that the rule's numbers alone do not show, by running the rule on changed saved values.

    If the rule gives the right gradient once its input is the output (or the output its input), the two
    operands swapped, a value squared or a matrix transposed, that is the slip: the rule reads the one where
    its formula needs the other.
    """
    ins, outs = list(node.inputs), list(node.outputs)
    if any(t is None for t in ins + outs):
        return ""
    tries = []
    if len(ins) == 1 and ins[0].shape == outs[0].shape:
        tries.append(([outs[0]], outs, "Your rule reads the input op.inputs[0] where its formula needs the output "
                      "op.outputs[0] (the saved result of the op)."))
        tries.append((ins, [ins[0]], "Your rule reads the output op.outputs[0] where its formula needs the input "
                      "op.inputs[0]."))
    if len(ins) == 2 and ins[0].shape == ins[1].shape:
        tries.append(([ins[1], ins[0]], outs, f"Your formula has its operands swapped: it uses {who[0]} where it "
                      f"needs {who[1]}, and {who[1]} where it needs {who[0]}."))
    tries.append((ins, [o * o for o in outs], "Your formula uses the output y where it needs y² (a missing square)."))
    for j, t in enumerate(ins):
        tries.append((ins[:j] + [t * t] + ins[j + 1:], outs,
                      f"Your formula uses {who[j]} where it needs {who[j]}² (a missing square)."))
        if len(t.shape) == 2 and t.shape[0] == t.shape[1]:
            tries.append((ins[:j] + [transpose(t)] + ins[j + 1:], outs,
                          f"Your formula uses {who[j]} where it needs its transpose {who[j]}ᵀ (a missing transpose)."))
    tries = [(a, b, upstream, words) for a, b, words in tries]
    up_shape = tuple(upstream.shape)
    if len(up_shape) == 2 and up_shape[0] == up_shape[1] and len(ins[i].shape) == 1:
        # A bias-like input copied along one axis of a square result: its sum taken over the other axis.
        tries.append((ins, outs, transpose(upstream), f"Your rule sums over the wrong axis: {who[i]} was copied along "
                      f"axis 0 of the result, so its gradient is the sum over axis 0 (ad.reduce_sum(g, axis=0))."))
    for new_ins, new_outs, new_up, words in tries:
        try:
            with np.errstate(all="ignore"):
                out = watcher.rule(_SavedValues(node, new_ins, new_outs), new_up)
            out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            got = np.asarray(out[i].numpy() if isinstance(out[i], Tensor) else out[i], dtype=np.float64)
        except Exception:  # noqa: BLE001  (a guess that does not even run is simply not the slip)
            continue
        if got.shape == expected.shape and np.allclose(got, expected, rtol=1e-4, atol=1e-6):
            return words
    return ""


def _wrong_axis_hint(reference, node, arrays, i, upstream, got, expected, who) -> str:
    """A broadcast input whose gradient was summed over the wrong axis, even where that gives the right shape.

    The gradient before the sum (one value per copy of input ``i``) comes from finite differences of the op
    with that input copied out to the output's shape; the sums of it over each axis are compared with ``got``.
    """
    shape = np.shape(upstream)
    if got is None or np.shape(arrays[i]) == shape or np.shape(got) != np.shape(expected) or \
            broadcast_axes(np.shape(arrays[i]), shape) is None:
        return ""
    copied = list(arrays)
    copied[i] = np.broadcast_to(arrays[i], shape).copy()
    try:
        _, _, per_copy = _one_sided(reference, node, copied, i, upstream)
    except Exception:  # noqa: BLE001  (an op that refuses the copied shape: no hint)
        return ""
    right = tuple(broadcast_axes(np.shape(arrays[i]), shape))
    for k in range(len(shape)):
        if (k,) == right:
            continue
        summed = per_copy.sum(axis=k)
        if summed.size == got.size and np.allclose(summed.reshape(got.shape), got, rtol=1e-4, atol=1e-6):
            axes = right[0] if len(right) == 1 else list(right)
            return (f"Your rule sums over the wrong axis: {who[i]} was copied along axis {axes} of the result, so "
                    f"its gradient is the sum over axis {axes} (ad.reduce_sum(g, axis={axes})), not over axis {k}.")
    return ""


def _output_factor(hint, got, expected, reference, node, arrays) -> str:
    """A constant factor that is the op's own (one-number) output: a division by it missing, or one too many."""
    if "a constant factor is off" not in hint or got is None:
        return ""
    try:
        with np.errstate(all="ignore"):
            y = np.asarray(reference(node, arrays), dtype=np.float64)
    except Exception:  # noqa: BLE001  (no output to compare with: keep the plain factor)
        return ""
    if y.size != 1 or not np.isfinite(y).all() or abs(float(y.reshape(-1)[0])) in (0.0, 1.0):
        return ""
    y = float(y.reshape(-1)[0])
    with np.errstate(all="ignore"):
        if np.allclose(got, expected * y, rtol=1e-4, atol=1e-6):
            return (f"Your numbers are the right ones times the output y = {_fmt(y)}: a division by the output is "
                    "missing (or a factor y too many).")
        if np.allclose(got * y, expected, rtol=1e-4, atol=1e-6):
            return (f"Your numbers are the right ones divided by the output y = {_fmt(y)}: a factor y is missing "
                    "(or a division by y too many).")
    return ""


def _unfinished_node(run, op_type, select):
    """The node whose gradient function raised: the newest checked node the backward pass did not finish.

    Only once the forward pass is done (an error in ``f`` itself belongs to no node's rule).
    """
    if run.target is None:
        return None
    rec = run.rec
    done = {node.id for _, node, _, _ in rec.steps}
    for nid in reversed(rec.order):
        node, _ = rec.ops[nid]
        if node.type == op_type and select(node) and nid not in done:
            return node
    return None


def _failed_run(e, what, show, node=None) -> CheckResult:
    mark = note = None
    if node is not None:
        mark, note = node.out_id, "Its rule raised an error."
    if isinstance(e, _RuleMistake):
        msg = str(e)
        mark, note = e.node.out_id, "The rule's result does not fit here."
    else:
        text = str(e)
        if isinstance(e, AttributeError) and text.isidentifier():
            text = f"no attribute {text!r}"
        msg = f"Running {what} raised {type(e).__name__}: {text}"
        frame = _your_frame(e)
        if frame is not None:
            line = (frame.line or "").strip()
            msg += f", in {frame.name}, line {frame.lineno}" + (f": {line}" if line else "")
            if isinstance(e, AttributeError) and "op." in line:
                msg += ". A rule's op has .inputs and .outputs (lists of tensors) and .type"
        msg += "."
        if "cannot multiply shapes" in text:
            msg += (" A matrix product's gradient needs transposes whose shapes fit: grad·bᵀ for a and aᵀ·grad for "
                    "b (ad.transpose, or ad.matmul(..., transpose_b=True)).")
    return CheckResult(False, msg, mark=mark, note=note or "", **show)


def _unsummed(watcher, op_type, show) -> CheckResult:
    op, i, got, want = watcher.unsummed
    name = _names_of_inputs(show["names"], op.in_ids, _input_names(len(op.inputs)), op_type)[i]
    axes = broadcast_axes(want, got)
    keep = any(a >= len(got) - len(want) for a in axes)
    how = (f"ad.reduce_sum(g, axis={axes[0] if len(axes) == 1 else list(axes)}"
           + (", keepdims=True" if keep else "") + ")")
    batch = " (one copy per example of the batch: a missing sum over the batch)" if tuple(axes) == (0,) and \
        len(got) > len(want) else ""
    msg = (f"The rule for {op_type} sent a gradient of shape {got} to {name}, whose shape is {want}. "
           f"{name} was broadcast (copied) along axis {', '.join(map(str, axes))} to make the output{batch}, so its "
           f"gradient is the sum over the copies: {how}. In TensorFlow a gradient rule does this sum itself: the tape does not "
           "sum for you.")
    return CheckResult(False, msg, mark=op.out_id, note=f"Sent shape {got} to {name} of shape {want}.", **show)

