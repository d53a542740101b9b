"""The registry of primitives and their gradient rules.

A primitive pairs a forward function on raw arrays with a gradient rule
written in the package's own ops (so gradients of gradients work), and says
which values the rule needs saved.  ``RegisterGradient`` adds a rule with
TensorFlow's signature ``rule(op, grad)`` for an op type that has none (as in
TF, a second rule for one type is a ``KeyError``); :func:`gradient_override`
replaces a rule for the length of a ``with`` block only.
"""
from __future__ import annotations

import builtins
import contextlib


class Primitive:
    __slots__ = ("type", "forward", "grad", "jvp", "save_inputs", "save_output", "plan", "formula", "partials")

    def __init__(self, type, forward, grad, jvp, save_inputs, save_output, formula="", partials=()):
        self.type = type
        self.forward = forward
        self.grad = grad
        self.jvp = jvp
        self.saves(save_inputs, save_output)
        self.formula = formula      # how views write the op: "a · b" (inputs are a, b, c...)
        self.partials = partials    # per input, its partial derivative: ("b", "a")

    def saves(self, save_inputs, save_output) -> None:
        """Set what the rule reads (``defop``'s ``save=`` and ``save_output=``).

        When what is kept depends on which inputs need a gradient (a dict
        ``save``, a tuple ``save_output``) and only inputs 0 and 1 are named,
        ``plan`` answers it for a two-input op by table: ``plan[m]`` is
        ``(keep input 0, keep input 1, keep the output)``, where ``m`` is 1 if
        input 0 needs a gradient plus 2 if input 1 does.  Otherwise ``plan`` is None.
        """
        self.save_inputs, self.save_output = save_inputs, save_output
        self.plan = None
        by_need = type(save_inputs) is dict
        if not (by_need or type(save_output) is tuple):
            return
        named = set(save_output) if type(save_output) is tuple else set()
        if by_need:
            for i, users in save_inputs.items():
                named |= {i, *users}
        elif save_inputs != "all":
            named |= set(save_inputs)
        if not named <= {0, 1}:
            return

        def kept(needs):
            if by_need:
                keep = [any(needs[j] for j in save_inputs.get(i, ())) for i in (0, 1)]
            else:
                keep = [save_inputs == "all" or i in save_inputs for i in (0, 1)]
            out = any(needs[j] for j in save_output) if type(save_output) is tuple else bool(save_output)
            return keep[0], keep[1], out
        self.plan = tuple(kept((bool(m & 1), bool(m & 2))) for m in range(4))

    def __repr__(self):
        return f"<primitive {self.type}>"


NOT_DIFFERENTIABLE = "not differentiable"  # a rule value: gradient is None, not an error
_MISSING = "missing"                        # no rule registered: LookupError

PRIMITIVES: dict[str, Primitive] = {}
DIRECT: dict = {}  # a primitive's gradient rule (the function) -> its rule on arrays: defop's ``direct``


def defop(type, forward, grad=_MISSING, *, save=(), save_output=False, jvp=None, show=("",), direct=None):
    """Add one primitive: its TF type name, forward on arrays, gradient rule.

    ``save`` says which inputs the rule reads, in one of three forms: a tuple
    of input positions, ``"all"``, or a dict ``{position: (inputs whose
    gradient reads it)}`` (``Mul``: ``{0: (1,), 1: (0,)}``, so ``c * x``
    keeps ``c`` and never ``x``).  ``save_output`` keeps the result (``True``,
    or a tuple of the inputs whose gradient reads it).  Anything not saved is
    dropped as soon as the op has run, and reaches the rule as ``None`` in
    ``op.inputs``/``op.outputs``.  ``show`` is how pictures write the op: its
    formula in the inputs ``a, b, c...`` and then each input's partial
    derivative, ``("a · b", "b", "a")``; trace events carry these strings.
    ``direct`` is ``grad`` on arrays, for backward passes that no tape records
    (see ``_direct_rules``): it is filed under ``grad`` in :data:`DIRECT`, so a rule
    that replaces ``grad`` (:func:`gradient_override`) never meets it.
    """
    _check_definition(type, forward, grad, jvp)
    if direct is not None and not (callable(direct) and callable(grad)):
        raise TypeError(f"defop({type!r}): direct must be a function direct(record, upstream, reach) beside a "
                        f"gradient function grad(op, upstream); got direct={direct!r:.60} with grad={grad!r:.60}")
    if type in PRIMITIVES:
        raise ValueError(f"defop: an op type named {type!r} is already defined (running a cell twice?): take it "
                         f"with ad.extend.lookup({type!r}), or give the new op another name")
    p = Primitive(type, forward, grad, jvp, save, save_output, show[0], tuple(show[1:]))
    PRIMITIVES[type] = p
    if direct is not None:
        DIRECT[grad] = direct
    return p


def _check_definition(op_type, forward, grad, jvp) -> None:
    """Refuse, when the op is defined, what would otherwise fail only when it runs or is differentiated."""
    if not isinstance(op_type, str) or not op_type:
        raise TypeError(f"defop: the op type must be a non-empty string such as 'MyCube', got {op_type!r:.60}")
    if not callable(forward):
        raise TypeError(f"defop({op_type!r}): forward must be a function forward(xp, *arrays), got "
                        f"{builtins.type(forward).__name__} {forward!r:.60}")
    if not (callable(grad) or grad is NOT_DIFFERENTIABLE or grad is _MISSING):
        raise TypeError(f"defop({op_type!r}): grad must be a function grad(op, upstream), or "
                        f"ad.extend.NOT_DIFFERENTIABLE for an op without a gradient (leave it out to register one "
                        f"later with ad.RegisterGradient); got {builtins.type(grad).__name__} {grad!r:.60}")
    if jvp is not None and not callable(jvp):
        raise TypeError(f"defop({op_type!r}): jvp must be a function jvp(op, tangents) or None, got "
                        f"{builtins.type(jvp).__name__} {jvp!r:.60}")


def lookup(type: str) -> Primitive:
    """The primitive named ``type``; ``LookupError`` naming it when there is none."""
    try:
        return PRIMITIVES[type]
    except KeyError:
        raise unknown_op(type) from None


def unknown_op(op_type, who: str = "") -> LookupError:
    """The one error for an op type that no primitive has; ``who`` names the function asked.

    >>> str(unknown_op("Sine", "no_gradient"))
    "no_gradient: no op type named 'Sine'; op types look like 'Sin', 'Mul', 'MatMul'"
    """
    return LookupError(f"{who + ': ' if who else ''}no op type named {op_type!r}; "
                       "op types look like 'Sin', 'Mul', 'MatMul'")


class RegisterGradient:
    """Decorator registering the gradient rule of an op type that has none yet.

    As in TensorFlow, an op type that already has a rule (every built-in op,
    ``no_gradient`` ones included) raises ``KeyError``: replace a rule for a
    while with :func:`gradient_override` instead.

    >>> import autodiff_viz as ad
    >>> @ad.RegisterGradient("MyIdentityGrad")
    ... def _rule(op, grad):
    ...     return grad
    >>> try:
    ...     ad.RegisterGradient("Sin")(_rule)
    ... except KeyError as e:
    ...     print("KeyError")
    KeyError
    """

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError(f"RegisterGradient: op type must be a string, got {type(op_type).__name__}")
        self._op_type = op_type

    def __call__(self, rule):
        if not callable(rule):
            raise TypeError(f"RegisterGradient({self._op_type!r}): the rule must be a function rule(op, grad), "
                            f"got {type(rule).__name__}")
        _refuse_second_rule(self._op_type, "RegisterGradient")
        register_rule(self._op_type, rule)
        return rule


def has_rule(op_type: str) -> bool:
    """Whether ``op_type`` has a gradient rule (``no_gradient`` counts as one, as in TF)."""
    p = PRIMITIVES.get(op_type)
    return (p is not None and p.grad is not _MISSING) or op_type in _names_without_op


def _refuse_second_rule(op_type, who):
    if has_rule(op_type):
        raise KeyError(f"{who}: registering two gradients with name {op_type!r}: the op type already has a "
                       f"rule. To replace it for a while, use `with ad.extend.gradient_override({op_type!r}, rule):`")


@contextlib.contextmanager
def gradient_override(op_type: str, rule):
    """Use ``rule`` as the gradient of ``op_type`` inside the block; the rule it had comes back on exit.

    For exercises and experiments that replace a built-in rule on purpose
    (``RegisterGradient`` refuses to, as TensorFlow does).  The registry is
    process-wide, so the override holds in every thread while the block runs.

    >>> import autodiff_viz as ad
    >>> x = ad.constant(0.5)
    >>> with gradient_override("Sin", lambda op, g: (g * 100.0,)):
    ...     with ad.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = ad.sin(x)
    ...     print(float(tape.gradient(y, x)))
    100.0
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = ad.sin(x)
    >>> round(float(tape.gradient(y, x)), 4)  # cos(0.5): the built-in rule is back
    0.8776
    """
    if not callable(rule) and rule is not NOT_DIFFERENTIABLE:
        raise TypeError(f"gradient_override({op_type!r}): the rule must be a function rule(op, grad), "
                        f"got {type(rule).__name__}")
    p = PRIMITIVES.get(op_type)
    if p is None:
        raise unknown_op(op_type, "gradient_override")
    saved = (p.grad, p.save_inputs, p.save_output)
    register_rule(op_type, rule)
    try:
        yield
    finally:
        p.grad = saved[0]
        p.saves(saved[1], saved[2])


# Names given to RegisterGradient that no op has (TF allows it, for graph-mode
# gradient_override_map): kept only so that a second registration is refused.
_names_without_op: set[str] = set()


def register_rule(op_type: str, rule) -> None:
    p = PRIMITIVES.get(op_type)
    if p is None:
        _names_without_op.add(op_type)
        return
    p.grad = rule
    # A user rule may read any input or output: keep them all from now on.
    p.saves("all", True)


def no_gradient(op_type: str) -> None:
    """Declare ``op_type`` not differentiable: its gradient is None, not an error.

    An op type that already has a rule raises ``KeyError``, as in TensorFlow.
    """
    p = PRIMITIVES.get(op_type)
    if p is None:
        raise unknown_op(op_type, "no_gradient")
    _refuse_second_rule(op_type, "no_gradient")
    p.grad = NOT_DIFFERENTIABLE
    p.saves((), False)


NotDifferentiable = no_gradient
