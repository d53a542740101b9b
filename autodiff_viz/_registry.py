"""The registry of primitives and their gradient rules.

A primitive pairs a forward function on raw arrays with a gradient rule
written in the package's own ops (so gradients of gradients work), and says
which values the rule needs saved.  ``RegisterGradient`` replaces a rule with
TensorFlow's signature ``rule(op, grad)``.
"""
from __future__ import annotations


class Primitive:
    __slots__ = ("type", "forward", "grad", "jvp", "save_inputs", "save_output", "formula", "partials")

    def __init__(self, type, forward, grad, jvp, save_inputs, save_output, formula="", partials=()):
        self.type = type
        self.forward = forward
        self.grad = grad
        self.jvp = jvp
        self.save_inputs = save_inputs
        self.save_output = save_output
        self.formula = formula      # how views write the op: "a · b" (inputs are a, b, c...)
        self.partials = partials    # per input, its partial derivative: ("b", "a")

    def __repr__(self):
        return f"<primitive {self.type}>"


NOT_DIFFERENTIABLE = "not differentiable"  # a rule value: gradient is None, not an error
_MISSING = "missing"                        # no rule registered: LookupError

PRIMITIVES: dict[str, Primitive] = {}


def defop(type, forward, grad=_MISSING, *, save=(), save_output=False, jvp=None, show=("",)):
    """Add one primitive: its TF type name, forward on arrays, gradient rule.

    ``save`` lists the input positions the rule reads (``"all"`` for every
    input); ``save_output`` keeps the result.  Anything not saved is dropped
    as soon as the op has run.  ``show`` is how pictures write the op: its
    formula in the inputs ``a, b, c...`` and then each input's partial
    derivative, ``("a · b", "b", "a")``; trace events carry these strings.
    """
    if type in PRIMITIVES:
        raise ValueError(f"primitive {type!r} is already defined")
    p = Primitive(type, forward, grad, jvp, save, save_output, show[0], tuple(show[1:]))
    PRIMITIVES[type] = p
    return p


def lookup(type: str) -> Primitive:
    try:
        return PRIMITIVES[type]
    except KeyError:
        raise LookupError(f"no primitive named {type!r}") from None


class RegisterGradient:
    """Decorator registering (or overriding) the gradient rule of an op type.

    >>> import autodiff_viz as ad
    >>> @ad.RegisterGradient("MyIdentityGrad")
    ... def _rule(op, grad):
    ...     return grad
    """

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError(f"RegisterGradient: op type must be a string, got {type(op_type).__name__}")
        self._op_type = op_type

    def __call__(self, rule):
        register_rule(self._op_type, rule)
        return rule


_custom_rules: dict[str, object] = {}


def register_rule(op_type: str, rule) -> None:
    p = PRIMITIVES.get(op_type)
    if p is None:
        _custom_rules[op_type] = rule  # for op types that a later gradient_override_map may use
        return
    p.grad = rule
    # A user rule may read any input or output: keep them all from now on.
    p.save_inputs = "all"
    p.save_output = True


def no_gradient(op_type: str) -> None:
    """Declare ``op_type`` not differentiable: its gradient is None, not an error."""
    p = PRIMITIVES.get(op_type)
    if p is None:
        raise LookupError(f"no_gradient: no op type named {op_type!r}")
    p.grad = NOT_DIFFERENTIABLE
    p.save_inputs = ()
    p.save_output = False


NotDifferentiable = no_gradient
