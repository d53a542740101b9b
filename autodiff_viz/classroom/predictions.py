"""``check_prediction``: is a predicted gradient the tape's, and if not, why (with ``viz.explain`` for a None)?"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import GradientTape, ResourceVariable, Tensor, constant, extend, trace
from .. import events as _events
from .. import viz
from .messages import need_function, _constant_ratio, _param_names, _ratio_words, _shape_words, _show, _source_name
from .results import PREDICTION_MARK, CheckResult


def check_prediction(f: Callable, inputs: Any, predicted: Any, *, rtol: float = 1e-4,
                     atol: float = 1e-5) -> CheckResult:
    """Compare a predicted gradient of ``f(*inputs)`` (summed over its elements) with the tape's.

    ``predicted`` holds one value per input (a single value for one input);
    ``None`` predicts that the input gets no gradient.  A prediction must
    have its input's shape: one number is not the gradient of a vector, even
    when every element of that gradient is that number.  ``inputs`` are values
    (made float32 constants and watched) or variables (watched when read, as
    usual, so an unwatched one gives ``None``).  Inputs are named by ``f``'s
    parameters (or a variable's own name) in words and in the picture.

    >>> r = check_prediction(lambda x: x * x, 3.0, 6.0)
    >>> r.passed, r.message
    (True, 'Right: d/dx = 6.0.')
    """
    need_function(f, "check_prediction(f, inputs, predicted)", "f", "the function whose gradient is predicted")
    single = not isinstance(inputs, (list, tuple))
    items = [inputs] if single else list(inputs)
    sources = [v if isinstance(v, ResourceVariable) else (v if isinstance(v, Tensor) else constant(v))
               for v in items]
    preds = [predicted] if single else list(predicted)
    if len(preds) != len(sources):
        raise ValueError(f"check_prediction: {len(sources)} inputs but {len(preds)} predictions")
    params = _param_names(f, len(sources))
    names = [_source_name(s, p) for s, p in zip(sources, params)]
    for p, n in zip(preds, names):
        _need_numbers(p, n)
    with trace() as tr:
        with GradientTape(persistent=True) as tape:
            for s in sources:
                if not isinstance(s, ResourceVariable):
                    tape.watch(s)
            y = f(*sources)
        actual = tape.gradient(y, sources)
    labels = {extend.tensor_id(s): n for s, n in zip(sources, names) if not isinstance(s, ResourceVariable)}
    show = dict(trace=tr, target=y, sources=sources, names=labels, mark_legend=PREDICTION_MARK)
    wrong, why = [], {}
    for i, (p, a) in enumerate(zip(preds, actual)):
        if a is None or p is None:
            if (a is None) != (p is None):
                wrong.append(i)
            continue
        pa = np.asarray(p.numpy() if isinstance(p, Tensor) else p, dtype=np.float64)
        aa = np.asarray(a.numpy(), dtype=np.float64)
        if pa.shape != aa.shape:  # the shape is part of the answer: 2.0 is not [2, 2, 2]
            wrong.append(i)
            if pa.size == 1 and aa.size > 1:
                why[i] = (f"For {names[i]} you predicted one number, {_show(p)}, but {names[i]} has {aa.size} "
                          f"elements (shape {aa.shape}): the tape gives {_show(a)}, one number per element.")
            else:
                why[i] = _shape_words(names[i], pa, aa)
        elif not np.allclose(pa, aa, rtol=rtol, atol=atol * _scale(aa)):
            wrong.append(i)
    if not wrong:
        shown = ", ".join(f"d/d{n} = {_show(a)}" for n, a in zip(names, actual))
        return CheckResult(True, f"Right: {shown}.", **show)
    i = wrong[0]
    a, p = actual[i], preds[i]
    msg = why.get(i) or f"For {names[i]} you predicted {_show(p)}; the tape gives {_show(a)}."
    if i not in why and a is not None and p is not None:
        slip = _slip(preds, actual, i, names, y)
        msg += (" " + slip) if slip else ""
    explanation = None
    if a is None:
        explanation = _explain(tape, y, sources[i], labels)
        if explanation is not None:   # its verdict here; the whole explanation is written above its graph
            msg += " " + (explanation.sentences[0] if explanation.sentences else explanation.message)
            around = _around_the_tape(f, sources, i, y, tr, explanation)
            if around:
                msg += " " + around
    elif p is None:
        msg += " A path of recorded ops joins the target to this input, so a gradient flows."
        if not np.any(np.asarray(a.numpy())):
            msg += (" Here it happens to be 0: None means no path at all, 0 means a path whose slope is 0 at "
                    "this point.")
    if len(wrong) > 1:
        msg += f" Also check: {', '.join(names[j] for j in wrong[1:])}."
    return CheckResult(False, msg, explanation=explanation, mark=extend.tensor_id(sources[i]),
                       note=f"You predicted {_show(p)}; the tape gives {_show(a)}{_shapes(p, a)}.", **show)


def _scale(a) -> float:
    """``atol`` is for gradients of size 1 and up; below, it shrinks with the gradient, so that 0 is never right
    for a vanishing one (3.9e-7 after ten sigmoids is small, not 0)."""
    return min(1.0, float(np.max(np.abs(a), initial=0.0)))


def _need_numbers(p, name) -> None:
    """A prediction is None, a number, a (nested) list of numbers or an array: say so for anything else."""
    if p is None or isinstance(p, Tensor):
        return
    try:
        ok = not isinstance(p, (str, bytes)) and np.asarray(p).dtype.kind in "biuf"
    except (TypeError, ValueError):   # a ragged list: rows of different lengths
        ok = False
    if not ok:
        raise TypeError(f"check_prediction: the prediction for {name} must be None, a number or an array of "
                        f"numbers (a list of equal-length rows), got {type(p).__name__} {p!r:.60}")


def _slip(preds, actual, i, names, y) -> str:
    """The mistake a wrong prediction of the right shape shows: swapped, transposed, the sign, a factor."""
    def arr(v):
        return None if v is None else np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=np.float64)

    def close(u, v):
        return u is not None and v is not None and u.shape == v.shape and bool(
            np.allclose(u, v, rtol=1e-4, atol=1e-5 * _scale(v)))
    p, a = arr(preds[i]), arr(actual[i])
    if not np.any(p) and np.any(a) and float(np.max(np.abs(a))) < 1e-3:
        return ("The tape's gradient is small, but it is not 0: a path joins the input to the result, and the "
                "slopes along it multiply to this number.")
    for j in range(len(preds)):
        if j != i and close(p, arr(actual[j])) and close(arr(preds[j]), a):
            return f"Your predictions for {names[i]} and {names[j]} are swapped."
    if p.ndim == 2 and p.shape[0] == p.shape[1] and close(p.T, a):
        return "Your prediction is the transpose of the tape's gradient."
    if close(-p, a) and np.any(a):
        return "Your prediction has the right size but the wrong sign."
    k = _constant_ratio(p, a)
    return "" if k is None else _ratio_words(k, [a.size // max(1, int(np.size(y.numpy())))])


def _shapes(p, a) -> str:
    """The two shapes, where they differ (the numbers alone would not show it: 6.0 and [6.0])."""
    if p is None or a is None:
        return ""
    ps, as_ = np.shape(p.numpy() if isinstance(p, Tensor) else p), tuple(a.shape)
    return "" if ps == as_ else f" (shape {ps}, the tape's {as_})"


def _around_the_tape(f, sources, i, y, tr, explanation) -> str:
    """For a variable the tape never read: does its value still change the result?  Then say where it came in.

    ``f`` runs again with that input nudged; a constant whose value moved is where the value came back
    from NumPy (``.numpy()``, ``float()``...).  It is marked on the explanation's graph.
    """
    if explanation.reason not in ("not_read", "left_numpy"):  # left_numpy: read only through .numpy()
        return ""
    s = sources[i]
    h = 1e-3
    nudged = list(sources)
    nudged[i] = ResourceVariable(s.numpy() + h, name=s.name.split(":")[0], trainable=s.trainable)
    try:
        with trace() as tr2:
            with GradientTape(persistent=True) as tape:
                for k, t in enumerate(nudged):
                    if not isinstance(t, ResourceVariable):
                        tape.watch(t)
                y2 = f(*nudged)
    except Exception:  # noqa: BLE001  (only a hint: the verdict stands without it)
        return ""
    moved = _moved_constant(tr.events, tr2.events)
    with np.errstate(all="ignore"):
        y_changed = not np.allclose(np.asarray(y.numpy(), dtype=np.float64), np.asarray(y2.numpy(), dtype=np.float64))
    if moved is None and not y_changed:
        return ""
    name = s.name.split(":")[0]
    text = f"Its value does reach the result: nudging {name} by {h} changes it"
    if moved is not None:
        _mark_constant(explanation, moved, name)
        return text + (", and the constant marked on the graph moves with it: that is where the value came "
                       "back into the package after leaving through .numpy() or NumPy.")
    return text + ", so it went around the tape (.numpy(), float() or NumPy)."


def _moved_constant(events1, events2):
    """The first constant input (same op, same position in both runs) whose value differs: its id in run 1."""
    ops1 = [e for e in events1 if isinstance(e, _events.Op)]
    ops2 = [e for e in events2 if isinstance(e, _events.Op)]
    made1 = {e.output for e in ops1} | {e.tensor for e in events1 if isinstance(e, _events.Watch)}
    for a, b in zip(ops1, ops2):
        for j, (ia, va, vb) in enumerate(zip(a.inputs, a.in_values, b.in_values)):
            if ia in made1 or va is None or vb is None:
                continue
            if va.head != vb.head or va.mean != vb.mean:
                return ia
    return None


def _mark_constant(explanation, tensor_id, name):
    explanation.graph = explanation.graph.mark({tensor_id: f"{name}'s value came back here as a constant."})


def _explain(tape, target, source, names):
    try:
        return viz.explain(tape, target, source, names=names)
    except Exception:  # noqa: BLE001  (the verdict stands without the picture)
        return None

