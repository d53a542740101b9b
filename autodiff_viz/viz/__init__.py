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
from ._explain import Explanation, explain
from ._graph import Graph, GraphvizNotFound, LayoutBudgetExceeded, graph
from ._animate import Animation, animate
from .run.explore import Explorer, explore
from .run.plots import plot_derivatives, plot_fd_error
from .run.layer_gradients import gradient_norms, plot_gradient_norms
# The colours every picture uses, by name, and the order curves take them: for plots of your own that match.
from .draw.look import CURVE_COLOURS, PALETTE

__all__ = ["graph", "Graph", "GraphvizNotFound", "LayoutBudgetExceeded", "explain", "Explanation", "animate",
           "Animation", "explore", "Explorer", "plot_derivatives", "plot_fd_error", "gradient_norms", "plot_gradient_norms", "PALETTE",
           "CURVE_COLOURS"]
