"""The words every view writes: tape and call names, operand letters, the rule and broadcast sentences.

The storyboard (the player's side panel and the GIF/MP4 frames), a node's
details (the inspector), the DOT labels, ``explain`` and the classroom checker
write these through the functions here, so changing a sentence is one edit.
Numbers inside the sentences come from :mod:`.numbers`; callers pass texts
they have already written (a value, a label) where the layout needs them.

>>> tape_name(1), call_name((1, 2)), slot(1), partial_name("a · b", "Mul", 0)
('T1', 'T1#2', 'b', '∂(a · b)/∂a')
>>> rule_sentence("∂(a · b)/∂a", "b", 3.0, "1.0", "3.0", "x")
('∂(a · b)/∂a = b = 3.0', 'sent 1.0 × 3.0 = 3.0 → x')
>>> broadcast_sentence("b", (3,), (2, 3), (0,))
'b has shape (3,) and the upstream gradient (2, 3): the tape sums over axis 0 to give the gradient of b.'
"""
from __future__ import annotations

from .numbers import fmt_number, fmt_shape

# Operand slots in a rule's formula: the primitive table writes formulas in these letters.
LETTERS = "abcdefgh"


def tape_name(index) -> str:
    """A tape as every picture names it: the first tape of a trace is ``T1``."""
    return f"T{index}"


def call_name(key) -> str:
    """A gradient call as every view names it: tape T1's second call (``key`` ``(1, 2)``) is ``T1#2``."""
    return f"{tape_name(key[0])}#{key[1]}"


def slot(i: int) -> str:
    """The name of operand ``i`` in a formula: a, b, c..."""
    return LETTERS[i] if i < len(LETTERS) else f"in{i}"


def slots(n: int) -> list:
    """The names of ``n`` operands: ``['a', 'b']``."""
    return [slot(i) for i in range(n)]


def partial_name(expr: str, op_type: str, i: int) -> str:
    """``∂(a · b)/∂a``: how every view writes an op's partial derivative."""
    return f"∂({expr})/∂{slot(i)}" if expr else f"∂{op_type}/∂{slot(i)}"


def op_name(op_type: str, attrs=None) -> str:
    """What a box calls an op: its type, or for a ``custom_gradient`` the function's own name.

    >>> op_name("Mul"), op_name("IdentityN", {"function": "clip_gradients"})
    ('Mul', 'clip_gradients')
    """
    function = (attrs or {}).get("function") if op_type == "IdentityN" else None
    return str(function) if function else op_type


def formula(op_type: str, expr: str) -> str:
    """An op's rule headline: ``Mul: a · b`` (``Foo: Foo(…)`` for an op with no formula)."""
    return f"{op_type}: {expr or op_type + '(…)'}"


def operand(i: int, label: str, value: str = "") -> str:
    """``a = x = 3.0``: an operand, the box it comes from, and its value unless that is the label itself."""
    return f"{slot(i)} = {label}" + (f" = {value}" if value and value != label else "")


def rule_sentence(partial: str, symbol, local, upstream: str, sent: str, to: str, local_text=None) -> tuple:
    """What a rule did for one input: ``(head, tail)``, written as two lines or joined with ``": "``.

    ``partial`` is :func:`partial_name`; ``symbol`` the partial derivative's
    formula (``b``) or ``None``; ``local`` its value (a float, ``None`` when not
    a scalar); ``upstream``, ``sent`` and ``to`` are texts.  Without a symbol
    (an op whose table entry has no ``show=``) the head is ``""``: only what
    was sent is known, and nothing is invented.  ``local_text``: a tensor's
    local derivative, written (``[inf, 2.0]``), for an elementwise rule.

    >>> rule_sentence("∂(log(a))/∂a", "1/a", None, "[0.0, -1.0]", "[nan, -2.0]", "p", "[inf, 2.0]")[1]
    'sent [0.0, -1.0] × [inf, 2.0] = [nan, -2.0] → p'
    """
    if not symbol:
        return "", f"sent {sent} → {to}"
    if local is None and local_text:
        return f"{partial} = {symbol} = {local_text}", f"sent {upstream} × {local_text} = {sent} → {to}"
    if local is None:
        return f"{partial} = {symbol}", f"sent {sent} → {to}"
    return f"{partial} = {symbol} = {fmt_number(local)}", f"sent {upstream} × {fmt_number(local)} = {sent} → {to}"


def nothing_sent(to: str) -> str:
    """What a rule sent to an input no gradient is asked for."""
    return f"→ {to}: nothing (not on a path to a source)"


def broadcast_sentence(name: str, shape, upstream, axes) -> str:
    """Why a broadcast input's gradient is summed: ``axes`` are those of ``upstream`` it was stretched along."""
    where = f"axis {axes[0]}" if len(axes) == 1 else "axes " + ", ".join(str(a) for a in axes)
    return (f"{name} has shape {fmt_shape(tuple(shape))} and the upstream gradient {fmt_shape(tuple(upstream))}: "
            f"the tape sums over {where} to give the gradient of {name}.")


# What every view says of a trace in which nothing drawable happened (never a blank picture).
NOTHING_DRAWN = ("This trace saw nothing to draw: no GradientTape or ForwardAccumulator was active inside it while "
                 "ops ran. Open ad.trace() around the tape (or the accumulator) and the computation.")


# How a value left the package (a ``leave`` event's ``how``), as a sentence and as a box's caption.
_LEFT = {"numpy": ("became a NumPy array (np.asarray)", "np.asarray"),
         "numpy()": ("became a NumPy value (.numpy())", ".numpy()"),
         "float()": ("became a Python float (float())", "float()")}


def leave_words(how: str) -> str:
    """``"became a Python float (float())"``: what a value that left the package became.

    >>> leave_words("numpy"), leave_caption("float()")
    ('became a NumPy array (np.asarray)', 'float()')
    """
    return _LEFT.get(how, (f"left the package ({how})",))[0]


def leave_caption(how: str) -> str:
    """The call a "left the package" box names (``np.asarray``, ``.numpy()``, ``float()``)."""
    return _LEFT.get(how, (None, how))[1]
