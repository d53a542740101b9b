"""``custom_gradient``: replace the gradient of a Python function."""
from __future__ import annotations

import functools
import types

from . import _backend, _context, _nest
from ._record import record
from ._registry import PRIMITIVES
from ._tensor import Tensor, _wrap, convert_to_tensor, execute, getitem
from .errors import InvalidArgumentError


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
    _id = None  # a tape the function opens itself is nested in no real tape

    def __init__(self):
        self.variables: dict = {}

    def _watch_variable(self, var, auto):
        self.variables.setdefault(var._id, var)

    def _note(self, kind, **info):
        pass


def custom_gradient(f):
    """Decorate ``f(*x) -> (y, grad_fn)`` so tapes use ``grad_fn`` as its gradient.

    As ``tf.custom_gradient``:

    - ``grad_fn(*upstreams)`` gets one upstream gradient per output of ``f``
      (``f`` may return a tuple of tensors) and returns one gradient per
      input (or ``None``), each of its input's shape and dtype;
    - if ``f`` reads variables, ``grad_fn(*upstreams, variables=None)`` returns
      ``(input_gradients, variable_gradients)``;
    - it decorates methods too (``self`` is not an input), and ``f`` may use
      a ``GradientTape`` of its own (``grad_fn`` can call its ``gradient``).

    A ``grad_fn`` that returns the wrong number of gradients, or one of the
    wrong shape or dtype, raises an error naming ``f`` and the input.

    >>> import autodiff_viz as ad
    >>> @ad.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return ad.clip_by_norm(dy, 0.5)
    ...     return y, backward
    >>> v = ad.Variable(2.0)
    >>> with ad.GradientTape() as tape:
    ...     output = clip_gradients(v * v)
    >>> float(tape.gradient(output, v))  # 4 clipped to 0.5, times dv²/dv = 4
    2.0
    """
    return _CustomGradient(f)


class _CustomGradient:
    """The decorated function: callable, and bound like a method when it is one."""

    def __init__(self, f):
        self._f = f
        functools.update_wrapper(self, f)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return _CustomGradient(types.MethodType(self._f, instance))

    def __call__(self, *args, **kwargs):
        return _call(self._f, args, kwargs)

    def __repr__(self):
        return f"<custom_gradient {getattr(self._f, '__qualname__', self._f)!r}>"


def _name(f) -> str:
    return getattr(f, "__name__", None) or type(f).__name__


def _call(f, args, kwargs):
    name = _name(f)
    leaves = [a if isinstance(a, Tensor) else convert_to_tensor(a) for a in _nest.flatten(list(args))]
    args = _nest.pack_like(list(args), leaves)
    reads = _VariableReads()
    # The function's own ops are hidden from tapes and forward accumulators:
    # its record below stands for all of them.
    with _context.hidden_from_tapes(reads):
        result = f(*args, **kwargs)
    if not isinstance(result, (tuple, list)) or len(result) != 2 or not callable(result[1]):
        raise TypeError(f"custom_gradient: {name} must return (outputs, grad_fn), got {type(result).__name__}")
    y, grad_fn = result
    inputs = tuple(leaves)
    # Variables passed as arguments are inputs, not captured state (as in TF).
    input_ids = {t._id for t in inputs}
    variables = [v for vid, v in sorted(reads.variables.items()) if vid not in input_ids]
    flat_y = [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in _nest.flatten(y)]
    if not flat_y:
        raise TypeError(f"custom_gradient: {name} returned no tensors")
    if len({t.dtype for t in flat_y}) > 1:
        raise TypeError(f"custom_gradient: {name} returns outputs of different dtypes "
                        f"({sorted({t.dtype.name for t in flat_y})}); this package needs them to share one dtype")
    if not _context.ACTIVE[0]:
        outs = [_wrap(t._value) for t in flat_y]
        return outs[0] if _is_single(y) else _nest.pack_like(y, outs)

    rule = _rule(name, grad_fn, inputs, variables, flat_y)
    if len(flat_y) == 1:
        out = _wrap(flat_y[0]._value)
        record(PRIMITIVES["IdentityN"], inputs + tuple(variables), {"function": name}, out, rule)
        return out if _is_single(y) else _nest.pack_like(y, [out])
    # Several outputs: one record stands for the function, its output all outputs flattened
    # into one vector; each output is a slice of it, so grad_fn gets every upstream at once.
    xp = _backend.namespace_of(flat_y[0]._value)
    packed = _wrap(xp.concat([xp.reshape(t._value, (-1,)) for t in flat_y], axis=0))
    record(PRIMITIVES["IdentityN"], inputs + tuple(variables), {"function": name, "outputs": len(flat_y)},
           packed, rule)
    outs, start = [], 0
    for t in flat_y:
        n = _size(t.shape)
        piece = getitem(packed, (slice(start, start + n),))
        outs.append(piece if t.shape == (n,) else _reshape(piece, t.shape))
        start += n
    return _nest.pack_like(y, outs)


def _is_single(y) -> bool:
    return not isinstance(y, (list, tuple, dict))


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _reshape(t, shape):
    return execute(PRIMITIVES["Reshape"], (t,), {"shape": tuple(shape)})


def _rule(name, grad_fn, inputs, variables, outputs):
    n_inputs = len(inputs)
    shapes = [t.shape for t in outputs]

    def rule(op, upstream):
        if len(outputs) == 1:
            upstreams = [upstream]
        else:
            upstreams, start = [], 0
            for shape in shapes:
                n = _size(shape)
                piece = getitem(upstream, (slice(start, start + n),))
                upstreams.append(piece if tuple(shape) == (n,) else _reshape(piece, shape))
                start += n
        if variables:
            result = grad_fn(*upstreams, variables=variables)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError(f"custom_gradient: {name}'s grad_fn must return "
                                "(input_gradients, variable_gradients) when the function reads variables")
            in_grads, var_grads = result
        else:
            in_grads, var_grads = grad_fn(*upstreams), []
        in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        var_grads = list(var_grads) if isinstance(var_grads, (list, tuple)) else [var_grads]
        if len(in_grads) != n_inputs or len(var_grads) != len(variables):
            raise ValueError(f"custom_gradient: {name}'s grad_fn returned {len(in_grads)} input and "
                             f"{len(var_grads)} variable gradients for {n_inputs} inputs and {len(variables)} "
                             "variables: one gradient (or None) per input, and per variable the function reads")
        targets = list(inputs) + list(variables)
        checked = [_checked(name, g, t, i, n_inputs) for i, (g, t) in enumerate(zip(in_grads + var_grads, targets))]
        return tuple(checked)

    rule.__name__ = f"custom_gradient({name})"
    return rule


def _checked(name, g, like, i, n_inputs):
    """A gradient from grad_fn, as a tensor of exactly its input's shape and dtype, or None."""
    if g is None:
        return None
    what = f"input {i}" if i < n_inputs else f"variable {like.name!r}"
    if not isinstance(g, Tensor):
        try:
            g = convert_to_tensor(g, dtype=like.dtype)
        except (TypeError, ValueError) as e:
            raise TypeError(f"custom_gradient: {name}'s grad_fn returned {g!r:.60} for {what}, which is not a "
                            f"gradient of dtype {like.dtype.name}: {e}") from None
    if g.dtype != like.dtype:
        raise TypeError(f"custom_gradient: {name}'s grad_fn returned a gradient of dtype {g.dtype.name} for {what} "
                        f"of dtype {like.dtype.name}")
    if g.shape != like.shape:
        raise InvalidArgumentError(f"custom_gradient: {name}'s grad_fn returned a gradient of shape {g.shape} for "
                                   f"{what} of shape {like.shape}; each gradient has its input's shape")
    return g


__all__ = ["custom_gradient"]
