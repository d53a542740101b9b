r"""What a storyboard's boxes and numbers need once every step is known: each box's size (its value and
gradient lines, its widest line), a ``+= c → total`` too long for its box written on two lines, and a
step's numbers made JSON (no NaN) for the HTML player.

>>> steps = [{"grads": [[0, "+= [2.0, 2.0] → [2.0, 5.0]"]]}]
>>> rows(steps, 1), steps[0]["grads"][0][1]
([[1, 2, 11]], '+= [2.0, 2.0]\n→ [2.0, 5.0]')
>>> json_numbers({"upstream": float("nan"), "sent": [1.0, float("inf")]})
{'upstream': None, 'sent': [1.0, None]}
"""
from __future__ import annotations

import math


def json_numbers(numbers: dict) -> dict:
    """A step's numbers with NaN and inf as ``None`` (not a number a plot can use; JSON has no NaN, and the
    HTML player's data is JSON): the step's words still say nan or inf."""
    def clean(v):
        if isinstance(v, float):
            return v if math.isfinite(v) else None
        if isinstance(v, list):
            return [clean(x) for x in v]
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return v
    return clean(numbers)


BOX_CHARS = 13  # characters of a value line the narrowest player box holds (draw.layout's NODE_W)


def rows(steps, n: int) -> list:
    """Per node: ``[value lines, gradient lines, widest line]`` over every step (how large its box is).

    A one-step ``+= c → total`` line too long for its box (even at the renderers' 80%) is written on
    two lines, ``+= c`` over ``→ total``, and the box made tall and wide enough for them: a sum is never cut.
    """
    rows = [[1, 1, 0] for _ in range(n)]
    sums = []  # (step's grads list, index) of the one-line "+=" texts, fitted once the boxes are known
    for st in steps:
        for col, key in enumerate(("vals", "grads")):
            for i, (k, text) in enumerate(st.get(key, ())):
                parts = text.split("\n")
                r = rows[k]
                r[col] = max(r[col], len(parts))
                if len(parts) == 1 and text.startswith("+= "):
                    sums.append((st[key], i))
                    continue
                # a value in words widens the box to 80% of its length (the renderers shrink text to 80%
                # before cutting it)
                r[2] = max(r[2], max((len(p) if len(parts) > 1 or " values, mean " not in p else int(0.8 * len(p) + 1)
                                      for p in parts), default=0))
    for grads, i in sums:
        k, text = grads[i]
        r = rows[k]
        if 0.8 * len(text) > max(r[2], BOX_CHARS):
            term, _, total = text.partition(" → ")
            grads[i] = [k, f"{term}\n→ {total}"]
            r[1] = max(r[1], 2)
            r[2] = max(r[2], int(0.8 * max(len(term), len(total) + 2) + 1))
    return rows
