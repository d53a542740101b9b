"""Pictures of what the tape did: computation graphs, explanations, animations, plots.

Every view here reads only trace events (:mod:`autodiff_viz.events`) and the
public API, never the engine's internals.

The rooms, each owning one role; imports run down this list, never up it:

- the public faces, here: ``graph`` (:mod:`._graph`), ``animate``
  (:mod:`._animate`), ``explain`` (:mod:`._explain`), ``Graph.inspect``
  (:mod:`._inspect`), and the plots and explorers re-exported from ``run``;
- ``run/``: views that run the engine through the public API (linked views
  over a grid of inputs, derivative plots, explorers);
- ``draw/``: how a picture is drawn (the look table, layout, Graphviz, DOT,
  matplotlib frames, movie writers, SVG stills, HTML, the widget and its
  static JavaScript and CSS);
- ``model/``: what a picture shows (source to events, the graph model, the
  storyboard, a node's details);
- ``text/``: the words and numbers every view writes (number formats, the
  rules that make user text safe, the sentences).

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x
>>> g = ad.viz.graph(tape)
>>> "Mul" in g.source
True
"""
import importlib

from ._graph import Graph, GraphvizNotFound, LayoutBudgetExceeded, graph
# The colours every picture uses, by name, and the order curves take them: for plots of your own that match.
from .draw.look import CURVE_COLOURS, PALETTE

# The other faces are imported on first use, as ``ad.viz`` itself is: a graph drawn in a fresh process
# does not wait for the player's, the explainer's and the plots' modules.
_ON_FIRST_USE = {"explain": "._explain", "Explanation": "._explain", "animate": "._animate",
                 "Animation": "._animate", "explore": ".run.explore", "Explorer": ".run.explore",
                 "plot_derivatives": ".run.plots", "plot_fd_error": ".run.plots",
                 "gradient_norms": ".run.layer_gradients", "plot_gradient_norms": ".run.layer_gradients"}

__all__ = ["graph", "Graph", "GraphvizNotFound", "LayoutBudgetExceeded", "explain", "Explanation", "animate",
           "Animation", "explore", "Explorer", "plot_derivatives", "plot_fd_error", "gradient_norms",
           "plot_gradient_norms", "PALETTE", "CURVE_COLOURS"]


def __getattr__(name):
    where = _ON_FIRST_USE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(where, __name__), name)


def __dir__():
    return sorted(set(globals()) | set(_ON_FIRST_USE))
