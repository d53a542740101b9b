"""``viz.animate``: step through the forward and backward passes.

The pieces, each in its own module: the view model (:mod:`.model.graph`), the
storyboard of deltas built from it (:mod:`.model.story`), the layout
(:mod:`.draw.layout`), linked views that re-run a function (:mod:`.run.linked`),
and the renderers (the widget's ``animate.js``, :mod:`.draw.html`,
:mod:`.draw.frames`, :mod:`.draw.movie`).  This module holds the public :class:`Animation`.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = x * x
...     g = tape.gradient(y, x)
>>> anim = ad.viz.animate(tr)
>>> anim.steps[-1]["title"]
'Done: gradients of tape T1'
"""
from __future__ import annotations

import inspect
import json
import os

import numpy as np

from .model import details as _details
from .draw import layout as _layout
from .run import linked as _linked
from .model import graph as _model
from .model import source as _source
from .model import story as _story


class Animation:
    """The forward and backward pass of a computation, step by step.

    Displays as an interactive widget in Jupyter, with a self-contained HTML
    player for viewers without widgets and a still picture of the last step
    for viewers that run no scripts; ``save("a.html" | "a.gif" |
    "a.mp4")`` writes a file.  ``data`` is the storyboard (each step stores
    only what it changes); ``steps`` gives every step in full.
    """

    def __init__(self, data: dict):
        self.data = data
        self._steps = None

    # -- plain facts ----------------------------------------------------------
    @property
    def steps(self) -> list:
        """Every step in full: its title and text, and every node's value, gradient and badge."""
        if self._steps is None:
            self._steps = list(_story.states(self.data))
        return self._steps

    @property
    def nodes(self) -> list:
        return self.data["nodes"]

    def __len__(self):
        return len(self.data["steps"])

    def __repr__(self):
        return (f"<Animation: {len(self.nodes)} nodes, {len(self.steps)} steps"
                f"{', linked views' if self.data.get('linked') else ''}>")

    def node(self, label: str) -> dict:
        """The node with this label (``"x"``, ``"Mul"``); the first one if several."""
        for n in self.nodes:
            if n["label"] == label:
                return n
        raise KeyError(f"no node labelled {label!r}; labels: {[n['label'] for n in self.nodes]}")

    def to_json(self) -> str:
        return json.dumps(self.data, separators=(",", ":"))

    # -- views ----------------------------------------------------------------
    def widget(self):
        """The Jupyter widget (anywidget): stepping runs in the browser, no kernel needed."""
        from .draw.widget import make_widget

        return make_widget("animate", self.data)

    def to_html(self, standalone: bool = True) -> str:
        """Self-contained HTML (inline script and styles, no network), playable with no kernel."""
        return self._html(standalone)

    def _html(self, standalone: bool, fallback_png: str | None = None) -> str:
        from .draw.html import widget_html

        return widget_html("animate", self.data, title=self.data["title"], standalone=standalone,
                           alt=self._alt_text(), fallback_png=fallback_png)

    def _alt_text(self) -> str:
        steps = self.data["steps"]
        n_back = sum(1 for s in steps if s["phase"] == "backward")
        return (f"Animation of automatic differentiation: {len(self.nodes)} nodes, {len(steps)} steps, "
                f"{n_back} backward steps. " + " ".join(steps[-1]["lines"]))

    def _repr_mimebundle_(self, include=None, exclude=None):
        from .draw.widget import mimebundle

        return mimebundle("animate", self.data, lambda png: self._html(False, png), repr(self), exclude)

    def frame(self, i: int, path=None, dpi=100, background="white"):
        """Draw step ``i`` with matplotlib; returns the figure (saved to ``path`` if given).

        ``background``: a colour (default white), or ``None`` for a transparent PNG.
        """
        from .draw.frames import FrameRenderer

        fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() if path is not None else "png"
        r = FrameRenderer(self.data, dpi=dpi, background=_export_background(background, fmt))
        r.draw(i)
        if path is not None:
            r.fig.savefig(path, dpi=dpi)
        return r.fig

    def save(self, path, fps: float = 1.0, dpi: int = 100, *, background="white", per_page: int = 1,
             paper: str = "a4") -> str:
        """Write ``.html`` (self-contained player), ``.gif`` (one frame per step), ``.mp4``, or ``.pdf``: a
        handout with ``per_page`` steps (1, 2, 3, 4 or 6) on each ``paper`` page (``"a4"`` or ``"letter"``).

        ``background`` is the colour of the GIF, MP4 and PDF (default white).

        >>> import autodiff_viz as ad, tempfile, os
        >>> anim = ad.viz.animate(lambda x: x * x, 3.0, linked=False)
        >>> anim.save(os.path.join(tempfile.mkdtemp(), "steps.pdf"), per_page=4).endswith("steps.pdf")
        True
        """
        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        if ext == ".pdf":
            return _save_handout(self.data, path, background, per_page, paper)
        _not_for(ext, background=(background, "white", (".gif", ".mp4", ".pdf")),
                 per_page=(per_page, 1, (".pdf",)), paper=(paper, "a4", (".pdf",)))
        if ext in (".html", ".htm"):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.to_html())
            return path
        if ext in (".gif", ".mp4"):
            from .draw.movie import save_movie

            return save_movie(self.data, path, fps=fps, dpi=dpi, background=_export_background(background, ext[1:]))
        if ext == ".json":
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.to_json())
            return path
        raise ValueError(f"Animation.save: unknown file type {ext!r} (use .html, .gif, .mp4, .pdf or .json)")


def _not_for(ext: str, **options):
    """A ``ValueError`` for an option given (``name=(value, default, the types it is for)``) that ``ext`` ignores."""
    for name, (value, default, exts) in options.items():
        if ext not in exts and value != default:
            raise ValueError(f"Animation.save: {name}={value!r} is for {', '.join(exts)} files, not {ext or 'no extension'}")


def _export_background(background, fmt: str):
    """An animation's export ``background`` checked for the format ``fmt``: only a PNG frame may be transparent."""
    from .draw.background import background as check

    return check(background, "Animation.save", fmt, transparent=("png",))


def _save_handout(data: dict, path: str, background, per_page: int, paper: str) -> str:
    """The PDF handout (:mod:`.draw.handout`), its arguments checked before any drawing."""
    from .draw import handout

    colour = _export_background(background, "pdf")
    handout.check(per_page, paper)
    return handout.save_handout(data, path, per_page=per_page, paper=paper, background=colour)


def animate(source, *args, names=None, title=None, rankdir="auto", vary=None, span=None, points=21,
            linked=None) -> Animation:
    """Animate the forward and backward passes of ``source``, step by step.

    ``source`` is a trace (``with ad.trace() as tr:``), a tape (the trace
    that saw it, or just its forward records), a list of events, or a
    function: then ``animate(f, 3.0, 2.0)`` runs ``f`` on those inputs under
    a tape, takes the gradient of its result with respect to every input,
    and adds linked views: a slider for input ``vary`` (default the first)
    over ``span``, with every node's value and derivative plotted against it.

    ``names`` labels tensors: ``{"x": x}`` (or ``{tensor_id: "x"}``); by
    default boxes carry the names your code holds the tensors in (as in
    ``graph``), and ``names=False`` uses none.  For a function, ``names`` is a
    list of its inputs' labels (default: its parameter names).
    ``rankdir`` is ``"LR"`` (left to right), ``"TB"`` (top to bottom) or
    ``"auto"``: top to bottom for long chains (more than 8 ranks), such as a
    training step, so they fit a page; the player, the HTML page and the
    GIF/MP4 frames all use this one layout.

    >>> import autodiff_viz as ad
    >>> anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
    >>> [s["title"] for s in anim.steps][:2]
    ['Forward and backward pass, step by step', 'Forward 1/1: Mul']
    >>> [n["label"] for n in anim.nodes]
    ['a', 'b', 'Mul']
    """
    if callable(source) and not _source.is_event_list(source) and not _source.rec.is_tape(source):
        return _animate_function(source, args, names, title, rankdir, vary, span, points, linked)
    found = _source.events_of(source, family=True)
    labels = {} if names is False else _source.caller_names(_source.tensor_ids(found.events))
    labels.update(_source.name_map(names or None))
    model = _model.build(found.events, names=labels, subscripts=True, traced=found.traced)
    story = _story.build_story(found.events, model, title)
    story["details"] = _details.node_details(model)
    _lay_out(story, rankdir)
    return Animation(story)


def _lay_out(story, rankdir):
    """Add the layout; when Graphviz could not be used, the first step says so."""
    story["layout"] = _layout.layout(story, rankdir)
    note = story["layout"].get("note")
    if note:
        story["steps"][0]["lines"].append(note)


def _input_labels(f, n, names):
    if isinstance(names, (list, tuple)):
        if len(names) != n:
            raise ValueError(f"animate: names= has {len(names)} labels for {n} inputs")
        return [str(x) for x in names]
    if names is not None:
        raise TypeError("animate(f, ...): names= is a list of the inputs' labels")
    try:
        params = [p.name for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):  # a builtin or a callable without a signature
        params = []
    if len(params) >= n:
        return params[:n]
    return [_model.input_letter(i) for i in range(n)]


def _animate_function(f, args, names, title, rankdir, vary, span, points, linked):
    import autodiff_viz as ad  # noqa: PLC0415  (the public API's dtype, as a user would name it)

    if not args:
        raise TypeError("animate(f, *inputs): give the input values, e.g. animate(f, 3.0)")
    labels = _input_labels(f, len(args), names)
    story, _, _, _ = _linked.story_of_run(f, args, labels, ad.float64, title, details=True)
    _lay_out(story, rankdir)
    vary = 0 if vary is None else (labels.index(vary) if isinstance(vary, str) else int(vary))
    scalar = np.ndim(args[vary]) == 0
    if linked is None:
        linked = scalar and len(story["nodes"]) <= 40
    if linked:
        if not scalar:
            raise ValueError("linked views vary one scalar input")
        story["linked"] = _linked.linked_views(f, args, story, vary, span, points, labels, ad.float64)
    return Animation(story)
