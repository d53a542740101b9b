"""Checks of what the drawing functions are given: a wrong value is one clear error naming the function,
the argument and the value (``TypeError`` for the wrong kind, ``ValueError`` for a value out of range).

>>> whole("graph", "digits", 3, low=1, high=17)
3
>>> whole("graph", "digits", -1, low=1, high=17)
Traceback (most recent call last):
ValueError: graph: digits must be a whole number from 1 to 17, got -1
>>> number("Animation.save", "fps", 0, above=0, high=100)
Traceback (most recent call last):
ValueError: Animation.save: fps must be above 0 and at most 100, got 0
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import labels as L

# A GIF frame lasts at least 1/100 s, so more frames per second cannot be shown.
MAX_FPS = 100
# Dots per inch of a movie frame: a frame of a large graph is 16 inches wide, so 400 dpi makes frames
# of 6,400 pixels (about 100 MB each in memory); 10 dpi is a thumbnail.
MIN_DPI, MAX_DPI = 10, 400


def _shown(value) -> str:
    try:
        return L.shorten(repr(value), 80)
    except Exception:  # noqa: BLE001  (a value whose repr fails is still named by its type)
        return f"a {type(value).__name__}"


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def number(func: str, name: str, value, *, above=None, low=None, high=None) -> float:
    """``value`` as a float, when it is a finite real number within the bounds given (``above``: exclusive)."""
    if not _real(value):
        raise TypeError(f"{func}: {name} must be a number, got {type(value).__name__} {_shown(value)}")
    x = float(value)
    bounds = []
    if above is not None:
        bounds.append(f"above {above:g}")
    if low is not None:
        bounds.append(f"at least {low:g}")
    if high is not None:
        bounds.append(f"at most {high:g}")
    if (not math.isfinite(x) or (above is not None and x <= above) or (low is not None and x < low)
            or (high is not None and x > high)):
        raise ValueError(f"{func}: {name} must be {' and '.join(bounds) or 'finite'}, got {_shown(value)}")
    return x


def whole(func: str, name: str, value, *, low: int, high: int) -> int:
    """``value`` as an int, when it is a whole number (not a bool, not a float) from ``low`` to ``high``."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{func}: {name} must be a whole number from {low} to {high}, "
                        f"got {type(value).__name__} {_shown(value)}")
    if not low <= int(value) <= high:
        raise ValueError(f"{func}: {name} must be a whole number from {low} to {high}, got {_shown(value)}")
    return int(value)


def function(func: str, name: str, value):
    """``value``, when it can be called."""
    if not callable(value):
        raise TypeError(f"{func}: {name} must be a function (such as lambda x: x ** 2), "
                        f"got {type(value).__name__} {_shown(value)}")
    return value


def flag(func: str, name: str, value) -> bool:
    """``value``, when it is ``True`` or ``False`` (a NumPy bool too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{func}: {name} must be True or False, got {type(value).__name__} {_shown(value)}")
    return bool(value)
