"""Pictures of what the tape did: computation graphs, explanations, animations, plots.

Every view here reads only trace events (:mod:`autodiff_viz.events`) and the
public API, never the engine's internals.

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
from ._explore import Explorer, explore
from ._plots import plot_derivatives, plot_fd_error

__all__ = ["graph", "Graph", "GraphvizNotFound", "LayoutBudgetExceeded", "explain", "Explanation", "animate",
           "Animation", "explore", "Explorer", "plot_derivatives", "plot_fd_error"]
