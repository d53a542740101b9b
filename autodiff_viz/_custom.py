"""``custom_gradient``: replace the gradient of a Python function."""
from __future__ import annotations

import functools

from . import _context, _nest
from ._record import record
from ._registry import PRIMITIVES
from ._tensor import Tensor, _wrap, convert_to_tensor


class _VariableReads:
    """The one tape while a custom-gradient function runs: it records nothing and notes the variables read.

    It answers the questions ``_record.record`` asks a tape (recording? watching
    variables on read? watching this id?) so the function's own ops reach no
    real tape (see ``_context.hidden_from_tapes``).
    """

    _recording = True
    _auto = True
    _spent = False
    _live = frozenset()

    def __init__(self):
        self.variables: dict = {}

    def _watch_variable(self, var, auto):
        self.variables.setdefault(var._id, var)

    def _note(self, kind, **info):
        pass


def custom_gradient(f):
    """Decorate ``f(*x) -> (y, grad_fn)`` so tapes use ``grad_fn(upstream)`` as its gradient.

    ``grad_fn`` returns one gradient per input; if ``f`` reads variables,
    ``grad_fn(upstream, variables=None)`` returns ``(input_grads, variable_grads)``.

    >>> import autodiff_viz as ad
    >>> @ad.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return ad.clip_by_norm(dy, 0.5)
    ...     return y, backward
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        inputs = tuple(a if isinstance(a, Tensor) else convert_to_tensor(a) for a in args)
        reads = _VariableReads()
        # The function's own ops are hidden from tapes and forward accumulators:
        # its record below stands for all of them.
        with _context.hidden_from_tapes(reads):
            y, grad_fn = f(*inputs, **kwargs)
        # Variables passed as arguments are inputs, not captured state (as in TF).
        input_ids = {t._id for t in inputs}
        variables = [v for vid, v in sorted(reads.variables.items()) if vid not in input_ids]
        flat_y = _nest.flatten(y)
        if len(flat_y) != 1:
            raise TypeError(f"custom_gradient: {f.__name__} must return one tensor and its grad_fn")
        y_t = flat_y[0] if isinstance(flat_y[0], Tensor) else convert_to_tensor(flat_y[0])
        out = _wrap(y_t._value)
        if not _context.ACTIVE[0]:
            return out

        n_inputs = len(inputs)

        def rule(op, upstream):
            if variables:
                result = grad_fn(upstream, variables=variables)
                if not isinstance(result, (tuple, list)) or len(result) != 2:
                    raise TypeError(f"custom_gradient: {f.__name__}'s grad_fn must return "
                                    "(input_gradients, variable_gradients) when variables are used")
                in_grads, var_grads = result
            else:
                in_grads, var_grads = grad_fn(upstream), []
            in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
            var_grads = list(var_grads or [])
            if len(in_grads) != n_inputs or len(var_grads) != len(variables):
                raise ValueError(f"custom_gradient: {f.__name__}'s grad_fn returned {len(in_grads)} input and "
                                 f"{len(var_grads)} variable gradients for {n_inputs} inputs and "
                                 f"{len(variables)} variables")
            return tuple(in_grads + var_grads)

        rule.__name__ = f"custom_gradient({f.__name__})"
        record(PRIMITIVES["IdentityN"], inputs + tuple(variables), {"function": f.__name__}, out, rule)
        return out

    return wrapped


__all__ = ["custom_gradient"]
