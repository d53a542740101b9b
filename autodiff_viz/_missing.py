"""The error for a TensorFlow API this package does not have.

Every public module ends with ``__getattr__ = missing_api(__name__)``: a
name it lacks raises an ``AttributeError`` that says so in words, naming
the TensorFlow spelling, instead of a bare "has no attribute".

>>> import autodiff_viz as ad
>>> try:
...     ad.nn.conv3d
... except AttributeError as e:
...     print(e)
tf.nn.conv3d is not part of autodiff_viz: it implements the TensorFlow APIs that the gradient guides use (the README lists them, under "Which TensorFlow APIs exist")
"""
from __future__ import annotations


def tf_name(module: str, name: str) -> str:
    """``("autodiff_viz.nn", "conv2d")`` -> ``"tf.nn.conv2d"``."""
    parts = module.split(".")[1:]
    return ".".join(["tf"] + parts + [name])


def missing_api(module: str):
    """A module ``__getattr__`` raising the package's "not part of this package" error."""

    def __getattr__(name):
        if name.startswith("__") and name.endswith("__"):
            # Tools probe modules for dunder names (__wrapped__, __path__...): the plain error.
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise AttributeError(
            f"{tf_name(module, name)} is not part of autodiff_viz: it implements the TensorFlow APIs that "
            'the gradient guides use (the README lists them, under "Which TensorFlow APIs exist")')

    return __getattr__
