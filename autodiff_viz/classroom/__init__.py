"""Checkers for exercises: is a gradient rule (or a predicted gradient) right, and if not, where and why?

This package's own, not TensorFlow.

Three questions a student answers, three checkers:

* :func:`check_rule` -- "I wrote the rule of an op" (a ``rule(op, grad)`` as
  ``ad.RegisterGradient`` takes it, or a function decorated with
  ``ad.custom_gradient``).  Every node that uses the rule is checked on its
  own, with the upstream gradient it really received, against finite
  differences of the op; then the whole computation.  This is done at the
  given inputs and at special points: the origin, ties (``a = b``) and a
  random point.  Where the function has a kink (the slopes from the left and
  the right differ) finite differences cannot decide: the checker then follows
  the documented convention (the built-in rule, which is TensorFlow's) or,
  with none, accepts exactly the subgradients, checked along many directions
  at once (for the norm at the origin: every g with ‖g‖ ≤ 1, not [1, 1]).
  A rule runs as TensorFlow runs it: each gradient it returns has its input's
  shape (it sums over broadcast axes itself).
* :func:`check_prediction` -- "I think the gradient is ...".  The tape's answer
  is compared with the prediction (its shape too); a wrong ``None`` (or a
  wrong number where the tape says ``None``) comes with
  :func:`autodiff_viz.viz.explain`.
* :func:`check_backward` -- "I wrote the backward pass by hand": each of the
  student's tensors (``dlogits``, ``dW2``, ...) against the tape's, the first
  wrong one marked on the graph of the student's own forward code.

All three return a :class:`CheckResult`: ``bool(result)`` says whether it passed,
``result.message`` says why in words (with a hint for the common mistakes:
a missing upstream factor, a flipped sign, a constant factor, a mean for a sum,
the input read for the output, swapped operands, a missing square or transpose,
a missing sum over the batch or a sum over the wrong axis, a wrong shape),
``result.graph()`` draws the computation with the diverging node marked, and
in Jupyter the result shows all of this.

The backward pass starts from random weights in (0.5, 1.5), one per element of
the target, not from 1: so the target's ∂ is not 1, and a rule that forgets to
multiply by the upstream gradient cannot pass by luck.

>>> import autodiff_viz as ad, numpy as np
>>> def sin_rule(op, grad):
...     return grad * ad.cos(op.inputs[0])
>>> x = np.array([0.3, 1.2])
>>> r = check_rule("Sin", sin_rule, lambda x: ad.sin(x) * x, x)
>>> r.passed
True
>>> wrong = check_rule("Sin", lambda op, grad: grad * ad.sin(op.inputs[0]), lambda x: ad.sin(x) * x, x)
>>> wrong.passed, wrong.divergence.op_type
(False, 'Sin')
"""
from .backward import BACKWARD_MARK, check_backward
from .checks import check_rule
from .display import PALETTE, projector_style
from .predictions import check_prediction
from .results import PREDICTION_MARK, RULE_MARK, CheckResult, Divergence
from .running import registered

__all__ = ["check_rule", "check_prediction", "check_backward", "BACKWARD_MARK", "CheckResult", "Divergence", "registered", "projector_style",
           "PALETTE", "RULE_MARK", "PREDICTION_MARK"]
