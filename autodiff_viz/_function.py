"""``tf.function`` as TensorFlow runs it under ``tf.config.run_functions_eagerly(True)``: the Python function, called.

There are no graphs here: a decorated function runs op by op, so tapes,
traces and pictures see every op it runs, and Python control flow in it is
plain Python.  What only a graph can do (``get_concrete_function``, saving)
raises ``NotImplementedError`` saying so.

>>> import autodiff_viz as ad
>>> @ad.function
... def f(x):
...     return x * x
>>> x = ad.constant(3.0)
>>> with ad.GradientTape() as tape:
...     tape.watch(x)
...     y = f(x)
>>> float(tape.gradient(y, x))
6.0
"""
from __future__ import annotations

import functools

from ._dtypes import as_dtype
from ._shape import TensorShape

_NO_GRAPHS = ("{what} is not part of autodiff_viz: it has no graphs; tf.function here runs the Python function "
              "eagerly, as TensorFlow does under tf.config.run_functions_eagerly(True)")


class TensorSpec:
    """The shape (``None`` for any size) and dtype a function's argument should have, for ``input_signature``.

    >>> import autodiff_viz as ad
    >>> ad.TensorSpec(shape=[None, 3], dtype=ad.float32)
    TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
    """

    def __init__(self, shape, dtype="float32", name=None):
        dims = None if shape is None else tuple(shape)
        for d in dims or ():
            if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 0):
                raise TypeError(f"TensorSpec: shape must hold sizes >= 0 or None, got {shape!r}")
        self.shape, self.dtype, self.name = dims, as_dtype(dtype), name

    def is_compatible_with(self, value) -> bool:
        """Whether ``value`` (a tensor) has this spec's dtype and a shape it allows."""
        shape = TensorShape(value.shape)
        if getattr(value, "dtype", None) != self.dtype:
            return False
        return self.shape is None or (len(shape) == len(self.shape)
                                      and all(s is None or s == d for s, d in zip(self.shape, shape)))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


class Function:
    """A function decorated with ``ad.function``: calling it calls the Python function."""

    def __init__(self, python_function, input_signature=None, name=None):
        if not callable(python_function):
            raise TypeError(f"tf.function: expected a function to decorate, got {python_function!r:.60}")
        if input_signature is not None:
            if not isinstance(input_signature, (list, tuple)) or not all(
                    isinstance(s, TensorSpec) for s in input_signature):
                raise TypeError("tf.function: input_signature must be a list of ad.TensorSpec, got "
                                f"{input_signature!r:.80}")
        self.python_function = python_function
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self._name = name or getattr(python_function, "__name__", "function")
        functools.update_wrapper(self, python_function)

    def __call__(self, *args, **kwargs):
        return self.python_function(*args, **kwargs)

    def __get__(self, instance, owner=None):
        # On a method (``@ad.function def __call__(self, x)``): bound to the instance, as a plain function is.
        if instance is None:
            return self
        return Function(self.python_function.__get__(instance, owner), self.input_signature, self._name)

    def get_concrete_function(self, *args, **kwargs):
        raise NotImplementedError(_NO_GRAPHS.format(what="get_concrete_function (a traced graph)"))

    def experimental_get_tracing_count(self):
        raise NotImplementedError(_NO_GRAPHS.format(what="experimental_get_tracing_count (graph tracing)"))

    def __repr__(self):
        return f"<ad.function {self._name} (runs eagerly)>"


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_implements=None, experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None, experimental_follow_type_hints=None):
    """``@ad.function`` or ``@ad.function(input_signature=..., reduce_retracing=True, jit_compile=True)``.

    Every argument TensorFlow takes is accepted; none changes what runs (the
    Python function, eagerly).
    """
    if func is None:
        return lambda f: Function(f, input_signature)
    return Function(func, input_signature)


def save_refused(what: str):
    """The error for saving, which needs graphs."""
    return NotImplementedError(_NO_GRAPHS.format(what=what))
