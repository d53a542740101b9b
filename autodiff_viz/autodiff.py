"""``ad.autodiff``: forward mode next to the gradient tape (as ``tf.autodiff``).

>>> import autodiff_viz as ad
>>> x = ad.constant(2.0)
>>> with ad.autodiff.ForwardAccumulator(x, ad.constant(1.0)) as acc:
...     y = x ** 3
>>> float(acc.jvp(y))
12.0
"""
from ._forward import ForwardAccumulator
from ._tape import GradientTape
from ._missing import missing_api as _missing_api

__all__ = ["ForwardAccumulator", "GradientTape"]

__getattr__ = _missing_api(__name__)
