"""Flatten and rebuild nested lists, tuples and dicts (as ``tf.nest`` does)."""
from __future__ import annotations


def _flat(structure) -> bool:
    """A list or tuple of leaves, or a leaf: the common case, read without a walk."""
    if type(structure) is list or type(structure) is tuple:
        for s in structure:
            if isinstance(s, (list, tuple, dict)):
                return False
        return True
    return not isinstance(structure, (list, tuple, dict))


def flatten(structure) -> list:
    if _flat(structure):
        return list(structure) if type(structure) is list or type(structure) is tuple else [structure]
    out: list = []
    stack = [structure]
    while stack:
        s = stack.pop()
        if isinstance(s, dict):
            stack.extend(s[k] for k in reversed(sorted(s)))
        elif isinstance(s, (list, tuple)):
            stack.extend(reversed(s))
        else:
            out.append(s)
    return out


def pack_like(structure, flat: list):
    """Rebuild ``structure``'s shape from the leaves in ``flat`` (in flatten order)."""
    if _flat(structure):
        if type(structure) is list or type(structure) is tuple:
            return type(structure)(flat)
        return flat[0]
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s) if type(s) is not dict else {k: built[k] for k in s}
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(v) for v in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(v) for v in s)
        return next(it)

    return build(structure)
