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

    A slot that is also a source's name (``b`` the second input, ``b`` a parameter of ``f``) says whose
    slot it is, so one name never means two tensors in a message.

    >>> _names_of_inputs({7: "b"}, [3, 7], ["a", "b"], "Mul"), _names_of_inputs({7: "w"}, [3, 7], ["a", "b"], "Mul")
    (['a', 'b'], ['a', 'w'])
    >>> _names_of_inputs({7: "b"}, [3, 9], ["a", "b"], "Mul")
    ['a', "Mul's input b"]
    """
    taken = set(labels.values())
    return [labels.get(i) or (f"{owner}'s input {slot}" if slot in taken else slot) for i, slot in zip(ids, slots)]


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


def _hint(d, verdicts, upstream, where, names, arrays, who) -> str:
    """One sentence naming a common mistake, when the numbers show it."""
    got, exp = d.got, d.expected
    at = "" if where == "the given inputs" else f" at {_point_words(where, names, arrays)}"
    if got is None:
        return f"The rule sent None to {d.input_name}, but a gradient flows to it: return a tensor."
    if got.shape != exp.shape:
        return f"It sent shape {got.shape} to {d.input_name}, whose shape is {exp.shape}."
    if d.why.startswith("Here the slopes") and "convention" in d.why and np.allclose(2 * got, exp, atol=1e-6):
        return ("Your rule splits the gradient in half here; the convention sends all of it to one input "
                "(for a maximum, to the first input on a tie).")
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
                    f"(chain rule: the rule sends grad × ∂output/∂input). {UPSTREAM_NOT_ONE}")
        others = [j for j, v in enumerate(verdicts) if v is not None and j != d.input_index]
        for j in others:
            v = verdicts[j]
            if close(got, v["expected"]) and close(v["got"], exp):
                if "convention" in d.why:   # at a tie both inputs are "right" by the slopes: the convention decides
                    return (f"On this tie your rule sends the gradient to {who[j]}; the convention sends all of it "
                            f"to {who[0]}, the first input.")
                return (f"The gradients of {d.input_name} and {who[j]} are swapped: return them in the order "
                        "of op.inputs.")
    return ""


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


def need_function(value, call, name, what) -> None:
    """Refuse an argument that should be a function, naming the call and the argument."""
    if not callable(value):
        raise TypeError(f"{call}: {name} must be {what}, got {type(value).__name__} {value!r:.60}")
