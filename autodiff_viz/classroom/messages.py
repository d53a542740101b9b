"""The checker's words: numbers as every view writes them, names of inputs, hints for common mistakes.

Numbers and operand letters come from the package's one voice (:mod:`autodiff_viz.viz.text`).

>>> _fmt(12.0), _fmt([0.5, -1.0]), _count(2, "input"), _input_names(2)
('12.0', '[0.5, -1.0]', '2 inputs', ['a', 'b'])
"""
from __future__ import annotations

import inspect

import numpy as np

from .. import ResourceVariable, Tensor
from ..viz.text import numbers as _numbers
from ..viz.text import words as _words
from .numeric import _sums_down


def _param_names(f, n=None) -> list:
    """The names of ``f``'s parameters (``inspect.signature``); ``x``, ``y``... where it has none."""
    try:
        params = [p.name for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if n is None:
        return params
    fallback = ["x", "y", "z", "u", "v", "w"]
    names = params[:n] + [fallback[i] if i < len(fallback) else f"x{i}" for i in range(len(params), n)]
    return names


def _input_names(n) -> list:
    """Input names as the op formulas write them: a, b, c..."""
    return _words.slots(n)


def _names_of_inputs(labels, ids, slots, owner) -> list:
    """One name per input of a node: the source's own name (``labels``), else its slot (``a``, ``b``...).

    A slot that is also a source's name (``b`` the second input, ``b`` a parameter of ``f``) is called by
    its place instead (``Mul's second input``), so one letter never means two tensors in a message.

    >>> _names_of_inputs({7: "b"}, [3, 7], ["a", "b"], "Mul"), _names_of_inputs({7: "w"}, [3, 7], ["a", "b"], "Mul")
    (['a', 'b'], ['a', 'w'])
    >>> _names_of_inputs({7: "b"}, [3, 9], ["a", "b"], "Mul")
    ['a', "Mul's second input"]
    """
    taken = set(labels.values())
    return [labels.get(i) or (f"{owner}'s {_place(k)} input" if slot in taken else slot)
            for k, (i, slot) in enumerate(zip(ids, slots))]


def _place(k) -> str:
    return ("first", "second", "third", "fourth", "fifth")[k] if k < 5 else f"{k + 1}th"


def _count(n, word) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _cap(text):
    return text[:1].upper() + text[1:]


def _fmt(a) -> str:
    """Numbers as every view writes them (``viz.text.numbers.fmt_number``): ``12.0``, ``[0.5, -1.0]``."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 1:
        return _numbers.fmt_number(float(a.reshape(-1)[0]))
    flat = [_numbers.fmt_number(float(v)) for v in a.reshape(-1)[:8]]
    text = "[" + ", ".join(flat) + (", …" if a.size > 8 else "") + "]"
    return text + (f" (shape {a.shape})" if a.ndim > 1 else "")


def _show(v) -> str:
    if v is None:
        return "None"
    return _fmt(v.numpy() if isinstance(v, Tensor) else v)


def _source_name(s, param) -> str:
    name = getattr(s, "name", None) if isinstance(s, ResourceVariable) else None
    if name:
        return name.split(":")[0]
    return param


def _point_words(where, names, arrays):
    if where.endswith("(a tie)"):
        return f"{where[:-len(' (a tie)')]} = {_fmt(arrays[0])} (a tie)"
    if where == "a random point":
        return "a random point (" + ", ".join(f"{n} = {_fmt(a)}" for n, a in zip(names, arrays)) + ")"
    return where


def _hint(d, verdicts, upstream, where, names, arrays, who, sizes=()) -> str:
    """One sentence naming a common mistake, when the numbers show it.

    ``sizes`` are the lengths the node works with (its axes, its element counts): a ratio of
    1/n or n with one of them is named as a mean where a sum belongs, or the other way round.
    """
    got, exp = d.got, d.expected
    at = "" if where == "the given inputs" else f" at {_point_words(where, names, arrays)}"
    if got is None:
        return f"The rule sent None to {d.input_name}, but a gradient flows to it: return a tensor."
    if got.shape != exp.shape:
        return f"It sent shape {got.shape} to {d.input_name}, whose shape is {exp.shape}."
    if d.why.startswith("Here the slopes") and "convention" in d.why and np.allclose(2 * got, exp, atol=1e-6):
        return ("Your rule splits the gradient in half here; the convention sends all of it to one input "
                "(for a maximum, to the first input on a tie).")
    both = _both_on_a_tie(d, verdicts, upstream, who)
    if both:
        return both
    with np.errstate(all="ignore"):
        if not np.all(np.isfinite(got)) and np.all(np.isfinite(exp)):
            bad = "nan" if np.any(np.isnan(got)) else "inf"
            return (f"Your rule returns {bad}{at}: a gradient must be a number wherever the function has a "
                    "value. Guard the division (ad.where) so it never divides by 0.")

        def close(a, b):
            return a is not None and np.shape(a) == np.shape(b) and bool(np.allclose(a, b, rtol=1e-4, atol=1e-6))
        if close(-got, exp) and not close(exp, 0 * exp):
            return "Your numbers have the right size but the wrong sign: check the sign of the derivative."
        if _sums_down(got.shape, np.shape(upstream)) and not close(upstream, np.ones_like(upstream)) and \
                close(got * upstream, exp):
            return ("Your numbers are the local derivative alone: multiply by the upstream gradient `grad` "
                    "(chain rule: the rule sends grad × ∂output/∂input). " + _upstream_words(upstream, "")).strip()
        others = [j for j, v in enumerate(verdicts) if v is not None and j != d.input_index]
        for j in others:
            v = verdicts[j]
            if close(got, v["expected"]) and close(v["got"], exp):
                tie = np.asarray(verdicts[d.input_index]["kink"], dtype=bool)
                off = ~np.isclose(got, exp, rtol=1e-4, atol=1e-6)
                if "convention" in d.why and not np.any(off & ~tie):   # wrong on the tie only: the convention decides
                    return (f"On this tie your rule sends the gradient to {who[j]}; the convention sends all of it "
                            f"to {who[0]}, the first input.")
                return (f"The gradients of {d.input_name} and {who[j]} are swapped: return them in the order "
                        "of op.inputs.")
        if got.ndim == 2 and got.shape[0] == got.shape[1] and close(got.T, exp) and not close(got, exp):
            return (f"Your gradient for {d.input_name} is the transpose of the right one: a missing (or extra) "
                    "transpose; for a matrix product the rule sends grad·bᵀ to a and aᵀ·grad to b.")
        k = _constant_ratio(got, exp)
        if k is not None:
            return _ratio_words(k, sizes)
    return ""


def _both_on_a_tie(d, verdicts, upstream, who) -> str:
    """At a tie, the whole upstream gradient sent to every input (counted twice), where the convention picks one."""
    if "convention" not in d.why or np.shape(upstream) != d.got.shape:
        return ""
    tie = np.asarray(verdicts[d.input_index]["kink"], dtype=bool)
    others = [v for j, v in enumerate(verdicts) if v is not None and j != d.input_index]
    g = np.asarray(upstream, dtype=np.float64)
    if not np.any(tie) or not others or not np.any(g[tie]):
        return ""
    for v in [verdicts[d.input_index]] + others:
        sent = v["got"]
        if sent is None or np.shape(sent) != g.shape or not np.allclose(sent[tie], g[tie], rtol=1e-4, atol=1e-6):
            return ""
    return ("On this tie your rule sends the whole gradient to every input, so it is counted twice; the convention "
            f"sends all of it to one input ({who[0]}, the first, for a maximum).")


def _constant_ratio(got, exp):
    """``k`` when ``got`` is ``k`` times ``exp`` everywhere (k not 1 nor -1, those are named elsewhere).

    Two nonzero numbers at least: any wrong single number is some multiple of the right one, which says nothing.
    """
    with np.errstate(all="ignore"):
        scale = max(float(np.max(np.abs(exp))), 1e-12) if exp.size else 0.0
        big = np.abs(exp) > 1e-3 * scale
        if np.count_nonzero(big) < 2 or not np.allclose(got[~big], 0.0, atol=1e-6 + 1e-3 * scale):
            return None
        ratios = got[big] / exp[big]
        k = float(np.median(ratios))
        if not np.allclose(ratios, k, rtol=1e-4, atol=1e-6) or np.isclose(abs(k), 1.0) or np.isclose(k, 0.0):
            return None
    return k


def _ratio_words(k, sizes) -> str:
    """The words for a constant factor: a mean for a sum (1/n), a sum for a mean (n), 2, ½, or k itself."""
    for n in sorted({int(n) for n in sizes if n > 1}, reverse=True):
        if np.isclose(k, 1.0 / n):
            return (f"Your numbers are exactly 1/{n} of the right ones: a mean where the formula has a sum "
                    f"(n = {n}), or an extra division by {n}.")
        if np.isclose(k, n) and n != 2:
            return (f"Your numbers are exactly {n} times the right ones: a sum where the formula has a mean "
                    f"(its 1/n, n = {n}, is missing), or an extra factor {n}.")
    if np.isclose(k, 2.0):
        return "Your numbers are exactly twice the right ones: a factor 2 too many (or a ½ missing)."
    if np.isclose(k, 0.5):
        return "Your numbers are exactly half the right ones: a factor 2 missing (or a ½ too many)."
    if np.isclose(k, -2.0) or np.isclose(k, -0.5):
        return (f"Your numbers are exactly {_numbers.fmt_number(k)} times the right ones: the wrong sign and a "
                "factor 2 off.")
    return f"Your numbers are exactly {_numbers.fmt_number(k)} times the right ones: a constant factor is off."


UPSTREAM_NOT_ONE = ("(The upstream gradient is not 1 here: the checker starts the backward pass from random weights "
                    "on the output, so a rule that forgets the upstream factor cannot pass by luck.)")


def _upstream_words(upstream, hint) -> str:
    """The note on the random upstream gradient: once per message, and only where it is true and matters."""
    u = np.asarray(upstream, dtype=np.float64)
    if UPSTREAM_NOT_ONE in hint or not np.any(u) or np.allclose(u, 1.0):
        return ""
    return UPSTREAM_NOT_ONE


def _shape_words(name, pa, aa) -> str:
    if pa.ndim <= 1 and aa.ndim <= 1 and pa.size != aa.size:
        return (f"For {name} you predicted {_count(pa.size, 'number')}, but {name} has {_count(aa.size, 'element')} "
                f"(shape {aa.shape}): a gradient has one number per element of its input.")
    return (f"Your prediction for {name} has shape {pa.shape}; a gradient has the shape of its input, {aa.shape}.")


def _shape_slip(got, want, out_shape) -> str:
    """The slip a wrong gradient shape shows: a missing transpose, or a sum over the wrong axis.

    >>> _shape_slip((3, 2), (2, 3), (2, 3))
    ' It has the transposed shape: a missing transpose (for a matrix product, grad·bᵀ for a and aᵀ·grad for b).'
    >>> _shape_slip((4,), (3,), (4, 3))
    ' It looks summed over axis 1, but the input was copied along axis 0: sum over axis 0 instead.'
    """
    got, want, out = tuple(got), tuple(want), tuple(out_shape)
    if len(got) == 2 and got == want[::-1]:
        return (" It has the transposed shape: a missing transpose (for a matrix product, grad·bᵀ for a and "
                "aᵀ·grad for b).")
    copied = _copied_axes(want, out)
    for k in range(len(out)):
        if k in copied:
            continue
        for kept in (out[:k] + out[k + 1:], out[:k] + (1,) + out[k + 1:]):
            if got == kept and copied:
                axes = ", ".join(map(str, copied))
                return (f" It looks summed over axis {k}, but the input was copied along axis {axes}: sum over "
                        f"axis {axes} instead.")
    return ""


def _copied_axes(want, out) -> tuple:
    """The axes of the output along which an input of shape ``want`` was broadcast (copied)."""
    extra = len(out) - len(want)
    if extra < 0:
        return ()
    return tuple(k for k in range(len(out)) if k < extra or (want[k - extra] == 1 and out[k] != 1))


def need_function(value, call, name, what) -> None:
    """Refuse an argument that should be a function, naming the call and the argument."""
    if not callable(value):
        raise TypeError(f"{call}: {name} must be {what}, got {type(value).__name__} {value!r:.60}")
