"""Adding an op, the way the package adds its own.

Every built-in op is one row of the table of primitives
(``autodiff_viz/_primitives.py``): a ``defop`` call with the op's forward
function, its gradient rule, its tangent rule and how pictures write it.  A
public function then converts its arguments and calls :func:`execute`.  Do
the same for an op of your own:

>>> import numpy as np
>>> import autodiff_viz as ad
>>> from autodiff_viz.extend import as_tensor, defop, execute
>>> cube = defop("MyCube", lambda xp, x: x * x * x,
...              lambda op, g: (g * 3.0 * op.inputs[0] * op.inputs[0],), save="all",
...              jvp=lambda op, t: t[0] * 3.0 * op.inputs[0] * op.inputs[0],
...              show=("a³", "3a²"))
>>> def my_cube(x):
...     return execute(cube, (as_tensor(x),))
>>> x = ad.constant(2.0)
>>> with ad.GradientTape() as tape:
...     tape.watch(x)
...     y = my_cube(x)
>>> float(y), float(tape.gradient(y, x))
(8.0, 12.0)

``defop(type, forward, grad, *, save=(), save_output=False, jvp=None, show=(...))``:

- ``forward(xp, *arrays, **attrs)`` computes on raw arrays of the array
  namespace ``xp`` (NumPy, CuPy...); ``attrs`` are the keyword arguments
  passed to :func:`execute`.
- ``grad(op, upstream)`` returns one gradient per input (or ``None``), written
  with the package's ops so gradients of gradients work.  ``op`` is
  TensorFlow's op view: ``op.inputs``, ``op.outputs``, ``op.get_attr(name)``.
  A gradient with a broadcast input's larger shape is summed back by the tape.
  ``NOT_DIFFERENTIABLE`` says the op has no gradient (``None``, not an error).
- ``save`` says which inputs the rule reads, in one of three forms: ``"all"``;
  a tuple of input positions, ``(0,)``; or a dict ``{position: (inputs whose
  gradient needs it)}``, so ``{0: (1,), 1: (0,)}`` for ``a * b`` keeps ``a``
  only when ``b`` can get a gradient.  An input that is not saved arrives in
  ``op.inputs`` as ``None``.  ``save_output=True`` keeps the result
  (``op.outputs[0]``), or a tuple of input positions: keep it only when one
  of those inputs can get a gradient.
- ``jvp(op, tangents)`` is the forward-mode rule: one tangent per input in,
  the output's tangent out.  It runs while the op runs, so ``op.inputs`` and
  ``op.outputs`` hold every value, whatever ``save`` says.
- ``show`` is the formula in the inputs ``a, b, c...`` and each input's
  partial derivative, for pictures: ``("a · b", "b", "a")``.

Then check the new rules against finite differences with
``ad.test.compute_gradient`` (the package's own test suite does so for every
row of its table).

A gradient rule of an op type that has none is added with
``ad.RegisterGradient``; replacing a rule that exists (an exercise, an
experiment) is done for the length of a block with
``with gradient_override("Sin", rule):``, which puts the old rule back.
"""
import contextlib

from ._context import listen, unlisten
from ._payloads import Payloads
from ._registry import NOT_DIFFERENTIABLE, PRIMITIVES, defop, gradient_override, has_rule, lookup
from ._tensor import as_tensor, execute_checked as execute, numeric
from .errors import InvalidArgumentError

__all__ = ["defop", "execute", "as_tensor", "numeric", "lookup", "gradient_override", "has_rule",
           "NOT_DIFFERENTIABLE", "PRIMITIVES", "InvalidArgumentError", "announcements", "tensor_id"]


def tensor_id(t) -> int:
    """The id that records, trace events and pictures use for a tensor or variable.

    >>> import autodiff_viz as ad
    >>> v = ad.Variable(1.0)
    >>> tensor_id(v) == tensor_id(v.read_value())
    True
    """
    return t._id


@contextlib.contextmanager
def announcements(listener):
    """Call ``listener(kind, payload)`` for everything the engine does in this thread while the block runs.

    The payloads hold the engine's own objects (tensors, the tape, the op
    view a rule gets); ``ad.trace()`` is built on this, and so is the
    classroom's checker.  The kinds and their payload keys are listed in
    ``autodiff_viz/_context.py``.

    >>> import autodiff_viz as ad
    >>> seen = []
    >>> x = ad.constant(2.0)
    >>> with announcements(lambda kind, payload: seen.append(kind)):
    ...     with ad.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = x * x
    >>> seen
    ['tape_begin', 'watch', 'op', 'tape_end']
    """
    heard = Payloads(listener)
    listen(heard)
    try:
        yield listener
    finally:
        unlisten(heard)
