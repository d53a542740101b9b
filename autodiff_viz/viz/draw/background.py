"""The background of an exported picture: a colour (white by default), or none (transparent).

Every export that takes ``background=`` (``Graph.save``, ``Animation.save``,
``Animation.frame``) reads it through :func:`background`, so the words
accepted and the error for a bad value are the same everywhere.  A colour
comes back as ``#rrggbb`` (as Graphviz and matplotlib both read it);
``None`` or ``"transparent"`` comes back as ``None``, for the formats that
can show what lies behind the picture (PNG, SVG, PDF).

>>> background("white", "Graph.save", "png"), background("#1E1E1E", "Graph.save", "png")
('#ffffff', '#1e1e1e')
>>> background("transparent", "Graph.save", "svg") is None
True
"""
from __future__ import annotations

DEFAULT = "white"
TRANSPARENT_FORMATS = ("png", "svg", "pdf")


def background(value, who: str, fmt: str, transparent: tuple = TRANSPARENT_FORMATS) -> str | None:
    """``value`` as ``#rrggbb``, or ``None`` for transparent; a clear ``ValueError`` naming ``who`` otherwise.

    ``fmt`` is the file's format (``"gif"``, ``"png"``...); ``transparent`` the formats that may be
    transparent there.
    """
    from matplotlib.colors import to_hex, to_rgba

    if value is None or (isinstance(value, str) and value.strip().lower() in ("transparent", "none")):
        if fmt not in transparent:
            raise ValueError(f"{who}: background={value!r} (transparent) cannot be written to .{fmt}: a .{fmt} "
                             f"has no transparency; give a colour such as 'white' "
                             f"(transparent works for {', '.join('.' + f for f in transparent)})")
        return None
    try:
        rgba = to_rgba(value)
    except (ValueError, TypeError):
        rgba = None
    if rgba is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{who}: background={value!r} is not a colour: give a name such as 'white', a hex colour "
                         f"such as '#1e1e1e', or None for a transparent background")
    if rgba[3] < 1.0:
        raise ValueError(f"{who}: background={value!r} is partly transparent: give an opaque colour, or None for "
                         f"a fully transparent background")
    return to_hex(rgba)
