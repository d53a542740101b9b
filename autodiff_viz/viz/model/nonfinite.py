"""Where a NaN or an inf came from: the first op that made one out of finite numbers, and why.

It reads trace events only.  Forward, an op is an *origin* when its output
holds NaN or inf and every input it read was finite (``log`` of 0).
Backward, a rule is an origin when the gradient it sent holds NaN or inf
while the upstream gradient and the op's inputs were finite (``log``'s slope
``1/a`` at 0), and a tensor's gradient is one when finite terms add up to inf
(a ``sum``); in forward mode, an op's tangent is one when it holds NaN or
inf while the op's inputs and their tangents were finite.  Each origin carries its cause in words (log of 0, 0 · inf,
division by 0, sqrt's slope at 0, overflow of exp), read off the recorded
values.  :func:`mark` writes them on a view model's nodes, so the graph, the
player and ``explain`` show the same origin.

:func:`local_values` gives a rule's local derivative as numbers (``1/a`` is
``[inf, 2.0]``) for the ops whose derivative is a plain function of their
inputs and output, so a backward step can show it before the product.

>>> import autodiff_viz as ad
>>> p = ad.constant([0.0, 0.5])
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(p)
...         loss = -ad.reduce_sum(ad.math.log(p))
...     g = tape.gradient(loss, p)
>>> [(o.phase, o.op_type, o.cause) for o in origins(tr.events)]  # doctest: +NORMALIZE_WHITESPACE
[('forward', 'Log', 'log of 0 is -inf'),
 ('backward', 'Log', "division by 0: log's slope 1/a is inf at a = 0")]
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from ... import events as ev
from ..text.numbers import fmt_number


class Origin(NamedTuple):
    """One op where a non-finite value first appeared.

    ``phase``: ``"forward"`` (its output), ``"backward"`` (what its rule
    sent to input ``index``), ``"sum"`` (a gradient's total: ``output`` is the
    tensor, ``node`` the op whose rule sent the last term) or ``"tangent"``;
    ``node`` and ``output`` are the op event's ``node`` and output tensor id;
    ``cause`` says why in words.
    """

    phase: str
    node: int
    output: int
    op_type: str
    tape: int
    cause: str
    index: Optional[int] = None


def _numbers(s: ev.Summary):
    """The floats a summary shows (a complex value as its two parts)."""
    for v in (s.min, s.max, s.mean, *s.head):
        if isinstance(v, complex):
            yield from (v.real, v.imag)
        elif v is not None:
            yield float(v)


def finite(s: ev.Summary | None) -> bool:
    """False when the summary shows a NaN or an inf (``None``, unknown, counts as finite).

    The minimum and maximum say it for the whole array, kept values or not: NumPy's ``min`` and
    ``max`` are NaN when any element is, and an inf is one of them.
    """
    if s is None or s.size == 0:
        return True
    lo, hi = s.min, s.max
    if type(lo) is float and type(hi) is float:  # the common case, without a generator
        return math.isfinite(lo) and math.isfinite(hi)
    if isinstance(lo, (int, bool)) and isinstance(hi, (int, bool)):
        return True
    return all(math.isfinite(v) for v in _numbers(s))


def what(s: ev.Summary | None) -> str:
    """``"NaN"``, ``"inf"`` or ``"NaN and inf"``: what a non-finite summary holds."""
    vals = list(_numbers(s))
    nan = any(math.isnan(v) for v in vals)
    inf = any(math.isinf(v) for v in vals)
    return "NaN and inf" if nan and inf else "NaN" if nan else "inf"


def _array(s):
    return None if s is None or not s.complete else s.array()


def _largest(dtype: str) -> str:
    try:
        return f"{float(np.finfo(dtype).max):.3g}"
    except (TypeError, ValueError):
        return "the largest number of its dtype"


# Forward causes: op type -> f(input arrays, output array, dtype) -> words or None.
def _log_forward(a, out, dtype, one=0.0, name="log"):
    x = a[0]
    if x is None:
        return None
    if np.any(x == -one if one else x == 0):
        return f"{name} of {'-1' if one else '0'} is -inf"
    if np.any(x < -one if one else x < 0):
        return f"{name} of a negative number is NaN"
    return None


def _div_forward(a, out, dtype):
    if len(a) < 2 or a[1] is None:
        return None
    if np.any(a[1] == 0):
        both = a[0] is not None and np.any((np.broadcast_to(a[0], np.broadcast(a[0], a[1]).shape) == 0)
                                           & (np.broadcast_to(a[1], np.broadcast(a[0], a[1]).shape) == 0))
        return "division by 0 (0 / 0 is NaN)" if both else "division by 0"
    return None


def _reciprocal_forward(a, out, dtype):
    return "division by 0: 1/a at a = 0" if a[0] is not None and np.any(a[0] == 0) else None


def _sqrt_forward(a, out, dtype):
    if a[0] is not None and np.any(a[0] < 0):
        return "sqrt of a negative number is NaN"
    return None


def _exp_forward(a, out, dtype):
    return f"overflow of exp: exp(a) is larger than {_largest(dtype)}, the largest {dtype}"


def _pow_forward(a, out, dtype):
    if len(a) < 2 or a[0] is None or a[1] is None:
        return None
    base, p = np.broadcast_arrays(a[0], a[1])
    if np.any((base == 0) & (p < 0)):
        return "division by 0: 0 to a negative power"
    if np.any((base < 0) & (p != np.round(p))):
        return "a negative number to a fractional power is NaN"
    return None


_FORWARD = {"Log": _log_forward, "Log1p": lambda a, o, d: _log_forward(a, o, d, 1.0, "log1p"),
            "RealDiv": _div_forward, "Reciprocal": _reciprocal_forward, "Sqrt": _sqrt_forward, "Exp": _exp_forward, "Pow": _pow_forward}


def _forward_cause(op: ev.Op) -> str:
    a = [_array(v) for v in op.in_values]
    out = _array(op.value)
    with np.errstate(all="ignore"):
        rule = _FORWARD.get(op.op_type)
        words = rule(a, out, op.dtype) if rule is not None else None
    if words:
        return words
    if op.value is not None and what(op.value) == "inf":
        return f"overflow: {op.op_type} gave a number larger than {_largest(op.dtype)}, the largest {op.dtype}"
    return f"{op.op_type} gave NaN from finite numbers (such as inf − inf or 0 · inf inside it)"


# Local derivatives: op type -> (words for the slope, f(input arrays, output array) -> one array per input).
_LOCAL = {
    "Log": ("log's slope 1/a", lambda a, y: [1.0 / a[0]]),
    "Log1p": ("log1p's slope 1/(1 + a)", lambda a, y: [1.0 / (1.0 + a[0])]),
    "Sqrt": ("sqrt's slope 1/(2√a)", lambda a, y: [0.5 / y]),
    "Exp": ("exp's slope exp(a)", lambda a, y: [y]),
    "RealDiv": (("the slope 1/b", "the slope −a/b²"), lambda a, y: [1.0 / a[1], -a[0] / (a[1] * a[1])]),
    "Reciprocal": ("the slope −1/a²", lambda a, y: [-(y * y)]),
    "Square": ("the slope 2a", lambda a, y: [2.0 * a[0]]),
    "Mul": (("the slope b", "the slope a"), lambda a, y: [a[1], a[0]]),
    "Tanh": ("tanh's slope 1 − tanh²", lambda a, y: [1.0 - y * y]),
    "Sigmoid": ("sigmoid's slope σ(1 − σ)", lambda a, y: [y * (1.0 - y)]),
    "Relu": ("relu's slope", lambda a, y: [(a[0] > 0).astype(np.float64)]),
    "Pow": (("the slope b·a^(b−1)", "the slope log(a)·a^b"),
            lambda a, y: [a[1] * np.power(a[0], a[1] - 1.0), np.log(a[0]) * y]),
}


def slope_name(op_type: str, i: int) -> str:
    """How the cause sentences name input ``i``'s local derivative (``"log's slope 1/a"``)."""
    words = _LOCAL.get(op_type, ("its slope",))[0]
    return words[i] if isinstance(words, tuple) else words


def local_values(op: ev.Op) -> list | None:
    """The local derivative of ``op``'s output with respect to each input, as arrays (elementwise ops of
    the table only; ``None`` when the op is not in it or its values were not kept whole).

    >>> s = ev.summarize
    >>> op = ev.Op(0, 1, op_type="Log", inputs=(1,), in_values=(s(np.array([0.0, 0.5])),),
    ...            value=s(np.array([-np.inf, -0.69])))
    >>> local_values(op)
    [array([inf,  2.])]
    """
    entry = _LOCAL.get(op.op_type)
    if entry is None:
        return None
    a = [_array(v) for v in op.in_values]
    y = _array(op.value)
    if any(x is None for x in a) or y is None:
        return None
    if any(np.iscomplexobj(x) for x in (*a, y)):
        return None
    try:
        with np.errstate(all="ignore"):
            return [np.broadcast_to(np.asarray(v, dtype=np.float64), y.shape) for v in entry[1](a, y)]
    except ValueError:  # shapes the table's formulas do not fit (not elementwise after all)
        return None


def _slope_cause(op: ev.Op, times, sent, i: int, factor: str) -> str:
    """Why ``op``'s slope for input ``i`` times ``times`` (the upstream gradient, or the input's tangent:
    ``factor`` names it) gave the non-finite ``sent``."""
    slopes = local_values(op)
    up = _array(times)
    slope_words = slope_name(op.op_type, i)
    if slopes is None or i >= len(slopes):
        return f"{op.op_type}'s {'rule' if factor == _UPSTREAM else 'tangent rule'} gave {what(sent)} from finite numbers"
    local = slopes[i]
    bad = ~np.isfinite(local)
    if not np.any(bad):
        if op.op_type == "Exp":
            return f"overflow of exp: the slope exp(a) times {factor} is too large"
        return f"overflow: {factor} times {slope_words} is larger than {_largest(op.dtype)}"
    first = tuple(np.argwhere(bad)[0])
    slope_is = "NaN" if np.isnan(local[first]) else "-inf" if local[first] < 0 else "inf"
    a = _array(op.in_values[0])
    a0 = float(a[first]) if a is not None and a.shape == local.shape else None
    if op.op_type == "Sqrt" and a0 is not None and a0 < 0:  # (log's slope 1/a stays finite below 0)
        slope = f"sqrt of a negative number: {slope_words} is NaN at a = {_plain(a0)}"
    elif op.op_type == "Sqrt":
        slope = "sqrt's slope at 0: 1/(2√a) is inf at a = 0"
    elif op.op_type in ("Log", "Log1p"):
        slope = f"division by 0: {slope_words} is inf" + (f" at a = {_plain(a0)}" if a0 is not None else "")
    elif op.op_type == "RealDiv":  # (−a/b² is NaN only where a is 0 too)
        slope = f"division by 0: {slope_words} is {slope_is}{' (−0/0)' if slope_is == 'NaN' else ''} at b = 0"
    elif op.op_type == "Reciprocal":
        slope = f"division by 0: {slope_words} is {slope_is} at a = 0"
    elif op.op_type == "Exp":
        slope = f"overflow of exp: {slope_words} is inf"
    else:
        slope = f"{slope_words} is {slope_is}"
    if not _zero_at(up, bad):
        return slope
    if slope_is != "NaN":  # the log's case keeps its short form: "0 · inf: log's slope 1/a is inf at a = 0, ..."
        reason = f"{slope_words} is inf at a = 0" if op.op_type == "Sqrt" else slope.split(': ', 1)[-1]
        return f"0 · {slope_is}: {reason}, and {factor} there is 0"
    return f"0 · NaN: {slope}, and {factor} there is 0 (0 · NaN is NaN)"


def _every_slope(op: ev.Op, bad: list, times, sent, factor, into: str) -> str:
    """Why ``op``'s step is not finite, naming the slope of every input ``i`` in ``bad`` (each sent the
    non-finite term ``sent[i]``: its slope times ``times[i]``, which ``factor(i)`` names).

    Terms that go into one sum are added up in words where more than one is not finite: ``into`` is
    ``"gradient"`` (the inputs that are one tensor: ``x / x``) or ``"tangent"`` (every input's term).
    """
    causes = [_slope_cause(op, times[i], sent[i], i, factor(i)) for i in bad]
    head = causes[0].split(": ", 1)[0] + ": "  # said once: "division by 0: the slope 1/b is inf and ..."
    causes[1:] = [c[len(head):] if c.startswith(head) else c for c in causes[1:]]
    places = {c.rsplit(" at ", 1)[-1] for c in causes}
    if len(causes) > 1 and len(places) == 1 and all(" at " in c for c in causes):  # "... at b = 0", once
        at = " at " + places.pop()
        words = " and ".join(c[:-len(at)] for c in causes) + at
    else:
        words = ", and ".join(causes)
    for group in _sums(op, bad, into):
        words += _sum_words(op, group, times, into)
    return words


def _sums(op: ev.Op, bad: list, into: str) -> list:
    """The inputs whose terms ``op``'s step adds in one sum, where two of them or more are not finite."""
    if into == "tangent":
        return [list(range(len(op.inputs)))] if len(bad) > 1 else []
    groups = [[j for j, t in enumerate(op.inputs) if t == op.inputs[i]] for i in bad]
    return [g for k, g in enumerate(groups) if g not in groups[:k] and sum(j in bad for j in g) > 1]


def _sum_words(op: ev.Op, group: list, times, into: str) -> str:
    """``; a and b are one tensor: its gradient adds inf · 1.0 + nan · 1.0 = nan`` (at the first element where a
    term is not finite, in the op's dtype); empty where the values were not kept whole."""
    slopes = local_values(op)
    factors = [_array(times[i]) for i in group]
    if slopes is None or any(f is None for f in factors):
        return ""
    try:
        pairs = [np.broadcast_arrays(slopes[i], f) for i, f in zip(group, factors)]
    except ValueError:
        return ""
    with np.errstate(all="ignore"):
        terms = [_in_dtype(slope * f, op.dtype) for slope, f in pairs]
        bad = np.argwhere(~np.all([np.isfinite(t) for t in terms], axis=0))
        if not len(bad):
            return ""
        k = tuple(bad[0])
        total = fmt_number(float(_in_dtype(sum(t[k] for t in terms), op.dtype)))
    written = " + ".join(f"{fmt_number(float(slope[k]))} · {fmt_number(float(f[k]))}" for slope, f in pairs)
    if into == "tangent":
        return f"; its tangent adds every input's term: {written} = {total}"
    letters = " and ".join(_LETTERS[i] if i < len(_LETTERS) else f"input {i}" for i in group)
    return f"; {letters} are one tensor: its gradient adds {written} = {total}"


def _in_dtype(x, dtype: str):
    """``x`` (float64) as the engine's ``dtype`` holds it: a product that overflows a float32 is inf there too."""
    try:
        return np.asarray(x, dtype=dtype)
    except (TypeError, ValueError):
        return np.asarray(x)


_UPSTREAM = "the upstream gradient"
_TANGENTS = ("ȧ", "ḃ", "ċ")  # an input's tangent, by the letter pictures give the input
_LETTERS = "abc"


def _tangent_of(i: int) -> str:
    return f"the input's tangent {_TANGENTS[i]}" if i < len(_TANGENTS) else "the input's tangent"


def _bad_terms(op: ev.Op, e: ev.Tangent) -> list:
    """The inputs whose term ∂y/∂aᵢ · ȧᵢ in ``e`` is not finite: from the slope table where it knows the op (the
    engine can write a finite term as NaN where another input's term is: its push of a unit tangent takes both),
    else as the event says."""
    said = [i for i, t in enumerate(e.terms) if t is not None and not finite(t)]
    slopes = local_values(op)
    if slopes is None or len(slopes) != len(e.terms):
        return said
    out = []
    for i in said:
        t = _array(e.in_tangents[i])
        try:
            with np.errstate(all="ignore"):
                if t is None or not np.all(np.isfinite(_in_dtype(slopes[i] * t, e.terms[i].dtype))):
                    out.append(i)
        except ValueError:  # shapes the slope table does not fit
            out.append(i)
    return out


def _zero_at(up, where) -> bool:
    if up is None:
        return False
    try:
        return bool(np.any(np.broadcast_to(up, where.shape)[where] == 0))
    except ValueError:
        return False


def _plain(x) -> str:
    x = float(x)
    return str(int(x)) if x == int(x) else f"{x:g}"


def origins(events) -> list:
    """Every op where a NaN or an inf first appeared, in the order the events saw them.

    An op counts once per phase (the same op on two nested tapes is one op).
    """
    events = list(getattr(events, "events", events))
    ops: dict = {}
    outputs: dict = {}  # output id -> its op event (a tangent event names the output only)
    totals: dict = {}   # (tape, tensor id) -> its gradient's total so far (a pass's first term restarts it)
    out: list = []
    seen: set = set()
    for e in events:
        kind = e.kind
        if kind == "op":
            if e.node in ops:
                continue
            ops[e.node] = e
            outputs.setdefault(e.output, e)
            if not finite(e.value) and all(finite(v) for v in e.in_values):
                out.append(Origin("forward", e.node, e.output, e.op_type, e.tape, _forward_cause(e)))
        elif kind == "backward_step":
            # the sent gradients first: nearly every step sends finite ones, and then nothing else is read
            for g in e.grads:
                if g is not None and not finite(g):
                    break
            else:
                continue
            bad = [i for i, g in enumerate(e.grads) if g is not None and not finite(g)]
            op = ops.get(e.node)
            if op is None or not finite(e.upstream) or not all(finite(v) for v in op.in_values):
                continue
            if any((e.node, i) not in seen for i in bad):
                seen.update((e.node, i) for i in bad)
                ups = [e.upstream] * len(e.grads)
                out.append(Origin("backward", e.node, e.output, e.op_type, e.tape,
                                  _every_slope(op, bad, ups, e.grads, lambda i: _UPSTREAM, "gradient"), bad[0]))
        elif kind == "accumulate":
            # a sum of finite gradients that overflowed: its last term and the total before it were finite
            before = totals.get((e.tape, e.tensor))
            totals[e.tape, e.tensor] = e.total
            if (e.count > 1 and not finite(e.total) and finite(before) and finite(e.contribution)
                    and ("sum", e.tensor) not in seen):
                seen.add(("sum", e.tensor))
                dtype = e.total.dtype
                out.append(Origin("sum", e.node, e.tensor, "", e.tape,
                                  f"overflow: the gradients reaching one tensor add up to more than "
                                  f"{_largest(dtype)}, the largest {dtype}"))
        elif kind == "tangent" and e.inputs and not finite(e.tangent):
            # forward mode: the op's tangent ẏ = Σ ∂y/∂aᵢ · ȧᵢ is not finite, from finite inputs and tangents
            op = outputs.get(e.tensor)
            if op is None or ("tangent", op.node) in seen or not all(finite(v) for v in (*op.in_values, *e.in_tangents)):
                continue
            seen.add(("tangent", op.node))
            found = _nan_of_a_sum(op, e)  # (an input not followed, or inf + -inf: the sum made the NaN)
            if found is not None:
                i, cause = found
            else:
                bad = _bad_terms(op, e)
                i = bad[0] if bad else None
                cause = (_every_slope(op, bad, e.in_tangents, e.terms, _tangent_of, "tangent") if bad
                         else f"{e.op_type}'s tangent rule gave {what(e.tangent)} from finite numbers")
            out.append(Origin("tangent", op.node, e.tensor, e.op_type, e.tape, cause, i))
    return out


def _nan_of_a_sum(op: ev.Op, t) -> tuple | None:
    """Where a NaN tangent ẏ = Σ slope · tangent comes from the sum, not from any followed input's own
    term: an input not followed (tangent 0, as in TF) whose slope is infinite, or two terms that are
    inf and -inf.  ``(input index, cause)``, or ``None`` (then a term itself is the NaN, or it cannot
    be told from the slope table)."""
    if "NaN" not in what(t.tangent):
        return None
    slopes = local_values(op)
    if slopes is None or len(t.in_tangents) > len(_TANGENTS):
        return None
    terms = {}
    for k, g in enumerate(t.in_tangents):
        tangent = _array(g)
        if g is not None and (tangent is None or k >= len(slopes)):
            return None
        if g is not None:
            with np.errstate(all="ignore"):
                terms[k] = slopes[k] * tangent
            if np.any(np.isnan(terms[k])):
                return None
    j = next((j for j in range(len(t.in_tangents)) if j not in terms and j < len(slopes)
              and np.any(np.isinf(slopes[j]))), None)
    if j is not None:
        return j, _slope_cause(op, ev.summarize(np.float64(0.0)), t.tangent, j,
                               f"{_TANGENTS[j]} (the input is not followed)")
    pair = next(((u, d) for u in terms for d in terms
                 if np.any((terms[u] == np.inf) & (terms[d] == -np.inf))), None)  # (at one element)
    if pair is None:
        return None
    up, down = pair
    return up, (f"inf + -inf: {slope_name(op.op_type, up)} times {_TANGENTS[up]} is inf, "
                f"{slope_name(op.op_type, down)} times {_TANGENTS[down]} is -inf")


def note(o: Origin) -> str:
    """The words a marked box carries: ``First NaN/inf of the forward pass: log of 0 is -inf.``"""
    return f"First NaN/inf of the {_WHERE.get(o.phase, o.phase + ' pass')}: {o.cause}."


_WHERE = {"sum": "backward pass", "tangent": "tangents (forward mode)"}  # (other phases: "forward pass"...)


def mark(model, events) -> list:
    """Mark the origins on a view model's nodes (``Node.nonfinite`` and a note); returns them."""
    found = origins(events)
    for o in found:
        n = model.node_for(o.output)
        if n is None:
            continue
        n.nonfinite = True
        n.note(note(o))
    return found
