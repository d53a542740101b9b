"""``Graph.inspect()``: the Graphviz picture, clickable, in a page that needs no kernel.

Clicking a node (or Enter on a focused one) shows its details
(:mod:`._details`: the full value, each gradient with the call that produced
it, its rule with the numbers); hovering or focusing a node highlights its
path from the sources and on to the target.  The page holds the SVG once,
as an ``<img>`` that shows wherever scripts do not run; the script
(``static/inspect.js``) parses that same picture into the page and makes it
interactive.  A graph's notebook output carries this view as its HTML.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = x * x
...     g = tape.gradient(y, x)
>>> view = ad.viz.graph(tr).inspect()
>>> len(view.data["nodes"]), view.data["edges"][0]
(2, {'from': 'n0', 'to': 'n1', 'kind': 'data'})
"""
from __future__ import annotations

import os

from .model import details as _details
from .text import labels as L


def node_id(nid: int) -> str:
    """The name a node has in the DOT text (``_dot`` writes ``n0``, ``n1``...), and so in Graphviz's SVG."""
    return f"n{nid}"


def inspect_data(model, title: str) -> dict:
    """What the inspector needs besides the picture: nodes, edges, and each node's details."""
    return {
        "title": L.shorten(L.clean(title), L.TITLE_LIMIT, "end"),
        "nodes": [{"id": node_id(n.id), "label": L.shorten(L.clean(n.label)), "role": n.role or ""}
                  for n in model.nodes],
        "edges": [{"from": node_id(e.src), "to": node_id(e.dst), "kind": e.kind} for e in model.edges],
        "details": _details.node_details(model),
    }


class Inspection:
    """A graph to click on: ``to_html()``, ``save("graph.html")``, and inline in Jupyter."""

    def __init__(self, data: dict, svg: str, png=None):
        self.data = data
        self.svg = svg
        self._png = png  # a function giving the PNG beside the SVG (or None), called only when a notebook asks

    def __repr__(self):
        return f"<Inspection of a graph: {len(self.data['nodes'])} nodes>"

    def to_html(self, standalone: bool = True) -> str:
        """Self-contained HTML (inline script, styles and picture; no network), working with no kernel."""
        from .draw.html import widget_html

        alt = (f"{self.data['title']}: {len(self.data['nodes'])} nodes, "
               f"{len(self.data['edges'])} edges. Click a node for its details.")
        return widget_html("inspect", self.data, title=self.data["title"], standalone=standalone, alt=alt,
                           still=self.svg)

    def save(self, path) -> str:
        """Write the page (``.html``)."""
        path = os.fspath(path)
        if not path.lower().endswith((".html", ".htm")):
            raise ValueError("Inspection.save writes .html (a self-contained page)")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_html())
        return path

    def _repr_mimebundle_(self, include=None, exclude=None):
        """HTML that clicks, the SVG, and a PNG for viewers that show no SVG output (GitHub's preview)."""
        bundle = {"text/plain": repr(self), "text/html": self.to_html(standalone=False), "image/svg+xml": self.svg}
        png = self._png() if self._png is not None and "image/png" not in (exclude or ()) else None
        if png is not None:
            bundle["image/png"] = png
        return bundle
