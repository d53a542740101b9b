"""A graph's text alternative: each node in the graph's order, with what it is, its value and gradients.

Screen readers read it where a picture cannot be seen (the widgets' hidden list, the graph's SVG
``<title>`` and ``<desc>``: :func:`in_svg`).
It is written from a node's details (:mod:`.details`), so it says what the inspector's details say.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = x * x
...     g = tape.gradient(y, x)
>>> for line in text_alternative(ad.viz.graph(tr).inspect().data):
...     print(line)
1. x: tensor passed to tape.watch · the source; value 3.0; gradient T1#1 (gradient of y): 6.0
2. y: Mul: op recorded on tape T1 · the target; value 9.0; gradient T1#1 (gradient of y): 1.0
"""
from __future__ import annotations


def text_alternative(data: dict) -> list:
    """One line per node of a widget's ``data`` (``nodes`` and their ``details``), in the graph's order."""
    out = []
    for i, (node, sections) in enumerate(zip(data["nodes"], data["details"]["nodes"]), 1):
        part = dict(sections)
        bits = [f"{i}. {node['label']}: " + " · ".join(part.get("what", []))]
        if part.get("value"):
            bits.append("value " + part["value"][0])
        if part.get("grads"):
            bits.append("gradient " + ", ".join(part["grads"]))
        out.append("; ".join(bits))
    return out


def in_svg(svg: str, title: str, lines: list) -> str:
    """``svg`` (a whole SVG document) named by ``title`` and described by ``lines``: a ``<title>`` and a
    ``<desc>`` as the root's first children, which screen readers read where the picture is shown.

    >>> in_svg('<svg width="10pt"><g/></svg>', "a < b", ["1. x: value 3.0"])
    '<svg width="10pt" role="img"><title>a &lt; b</title><desc>1. x: value 3.0</desc><g/></svg>'
    """
    from html import escape

    start = svg.find("<svg")
    end = svg.find(">", start)
    if start < 0 or end < 0:
        return svg
    head = svg[:end].rstrip("/")
    # No ids: a notebook shows many graphs in one page, and SVG takes its name and description from these.
    return (head + ' role="img">' + f"<title>{escape(title, quote=False)}</title>"
            + f"<desc>{escape(chr(10).join(lines), quote=False)}</desc>" + svg[end + 1:])
