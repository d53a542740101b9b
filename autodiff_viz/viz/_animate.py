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
from .draw import weight as _weight
from .run import linked as _linked
from .model import build as _build
from .model import source as _source
from .model import story as _story
from .text import arguments as A
from .text import labels as _labels
from .text.numbers import FULL_ITEMS
from .. import events as _events


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

    def frame(self, i: int, path=None, dpi=100, fit: str = "auto", background="white"):
        """Draw step ``i`` with matplotlib; returns the figure (saved to ``path`` if given: ``.png``, ``.svg``).

        ``fit``: as for :meth:`save`; ``background``: a colour (default white), or ``None`` for a
        transparent PNG.
        """
        from .draw.frames import FrameRenderer

        save_options(self, dpi=dpi, fit=fit, who="Animation.frame")
        n = len(self)
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not -n <= i < n:
            raise IndexError(f"Animation.frame: i={_labels.shorten(repr(i))} is not a step of this animation: it has "
                             f"{n} steps (0 to {n - 1}, or -{n} to -1 from the end)")
        fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() if path is not None else "png"
        r = FrameRenderer(self.data, dpi=dpi, fit=fit, background=_export_background(background, fmt))
        r.draw(i)
        if path is not None:
            r.fig.savefig(path, dpi=dpi)
        return r.fig

    def save_steps(self, folder, frames=None, format: str = "png", dpi: int = 100,
                   fit: str = "auto", background="white") -> list:
        """Write steps as pictures into ``folder`` (which must exist): ``step-03.png`` for step 3 (numbered
        from 1, as the frames' counter says); ``frames``: step numbers from 0 as for :meth:`save` (default
        all); ``format``: ``"png"`` or ``"svg"``.  Returns the paths written.

        >>> import autodiff_viz as ad, tempfile
        >>> anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
        >>> [p.name for p in anim.save_steps(tempfile.mkdtemp(), frames=[0, -1], dpi=40)]
        ['step-1.png', 'step-5.png']
        """
        import pathlib

        import matplotlib.pyplot as plt

        from .draw.frames import FrameRenderer

        if format not in ("png", "svg"):
            raise ValueError(f"Animation.save_steps: format must be 'png' or 'svg', not {_labels.shorten(repr(format))}")
        folder = pathlib.Path(folder)
        if not folder.is_dir():
            raise FileNotFoundError(f"Animation.save_steps: no folder {str(folder)!r} (create it first)")
        options = save_options(self, dpi=dpi, fit=fit, frames=frames, who="Animation.save_steps")
        steps = options["frames"] if frames is not None else range(len(self))
        digits = len(str(len(self)))
        r = FrameRenderer(self.data, dpi=dpi, fit=fit, background=_export_background(background, format))
        paths = []
        try:
            for i in steps:
                r.draw(i)
                path = folder / f"step-{i + 1:0{digits}d}.{format}"
                r.fig.savefig(path, dpi=dpi, format=format)
                paths.append(path)
        finally:
            plt.close(r.fig)
        return paths

    def save(self, path, fps: float = 1.0, dpi: int = 100, fit: str = "auto", size=None, frames=None,
             style: str = "default", *, background="white", per_page: int = 1, paper: str = "a4") -> str:
        """Write ``.html`` (self-contained player), ``.gif`` (one frame per step), ``.mp4``, or ``.pdf``: a
        handout with ``per_page`` steps (1, 2, 3, 4 or 6) on each ``paper`` page (``"a4"`` or ``"letter"``).

        For ``.gif``/``.mp4``: ``fit="graph"`` draws the whole graph on every
        frame (the current node highlighted), ``fit="follow"`` a window at
        readable text size that follows the current node (the last frame
        shows the target), and ``"auto"`` the whole graph when its text is
        readable at the size asked, else the window.  ``size=(width,
        height)`` in pixels: each frame scaled to fit, centred on the
        background.  ``frames``: the step numbers to show (``[0, 3, 5]``;
        negative counts from the end), default all.  ``style="slide"``: 16:9
        frames (``size`` defaults to :data:`SLIDE_SIZE`).  ``background`` is
        the colour of the GIF, MP4 and PDF (default white).

        >>> import autodiff_viz as ad, tempfile, os
        >>> anim = ad.viz.animate(lambda x: x * x, 3.0, linked=False)
        >>> anim.save(os.path.join(tempfile.mkdtemp(), "steps.pdf"), per_page=4).endswith("steps.pdf")
        True
        """
        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        movies = (".gif", ".mp4")
        _not_for(ext, background=(background, "white", (*movies, ".pdf")),
                 per_page=(per_page, 1, (".pdf",)), paper=(paper, "a4", (".pdf",)), fps=(fps, 1.0, movies),
                 fit=(fit, "auto", movies), size=(size, None, movies), frames=(frames, None, movies),
                 style=(style, "default", movies))
        if ext == ".pdf":
            return _save_handout(self.data, path, background, per_page, paper)
        options = save_options(self, fps=fps, dpi=dpi, fit=fit, size=size, frames=frames, style=style)
        if ext in (".html", ".htm"):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.to_html())
            return path
        if ext in (".gif", ".mp4"):
            from .draw.movie import save_movie

            return save_movie(self.data, path, **options, background=_export_background(background, ext[1:]))
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


SLIDE_SIZE = (1280, 720)  # pixels: a 16:9 frame, the size of a slide at 100%


def save_options(anim: Animation, fps=1.0, dpi=100, fit="auto", size=None, frames=None, style="default",
                 who: str = "Animation.save") -> dict:
    """The options of :meth:`Animation.save` checked, as ``save_movie`` takes them: ``frames`` as step
    numbers from 0, ``size`` from ``style``; each bad value raises an error that names the argument and
    the value."""
    from .draw.frames import FITS

    def bad(name, value, want, kind=ValueError):
        return kind(f"{who}: {name} must be {want}, not {_labels.shorten(repr(value))}")

    fps = A.number(who, "fps", fps, above=0, high=A.MAX_FPS)  # the bounds every view shares
    dpi = A.whole(who, "dpi", dpi, low=A.MIN_DPI, high=A.MAX_DPI)
    if fit not in FITS:
        raise bad("fit", fit, "'auto', 'graph' or 'follow'")
    if style not in ("default", "slide"):
        raise bad("style", style, "'default' or 'slide'")
    if style == "slide" and size is None:
        size = SLIDE_SIZE
    if size is not None:
        if (not isinstance(size, (tuple, list)) or len(size) != 2
                or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in size)):
            raise bad("size", size, "(width, height) in whole pixels", TypeError)
        if not all(16 <= v <= 7680 and v % 2 == 0 for v in size):
            raise bad("size", size, "even numbers of pixels from 16 to 7680 (video needs even sizes)")
        size = (int(size[0]), int(size[1]))
    n = len(anim)
    if frames is not None:
        if isinstance(frames, (str, bytes)) or not hasattr(frames, "__iter__"):
            raise bad("frames", frames, "a list of step numbers", TypeError)
        frames = list(frames)
        if not frames:
            raise bad("frames", frames, "a non-empty list of step numbers")
        for f in frames:
            if isinstance(f, bool) or not isinstance(f, (int, np.integer)):
                raise bad("frames", frames, f"a list of whole step numbers ({f!r} is not one)", TypeError)
            if not -n <= f < n:
                raise IndexError(f"{who}: frames holds step {f}, but this animation has {n} steps "
                                 f"(0 to {n - 1}, or -{n} to -1 from the end)")
        frames = [int(f) % n for f in frames]
    return {"fps": float(fps), "dpi": dpi, "fit": fit, "size": size, "frames": frames}


def _which_input(vary, labels) -> int:
    """The position of input ``vary`` (its position or its label) among ``labels``."""
    if vary is None:
        return 0
    if isinstance(vary, str):
        if vary not in labels:
            raise ValueError(f"animate: vary={_labels.shorten(repr(vary))} is not an input of the function "
                             f"(its inputs: {', '.join(labels)})")
        return labels.index(vary)
    return A.whole("animate", "vary", vary, low=0, high=len(labels) - 1)


def animate(source, *args, names=None, title=None, rankdir="auto", vary=None, span=None, points=21,
            linked=None, digits: int = 4, max_items: int = FULL_ITEMS, collapse=False,
            gradient_size: bool | None = None) -> Animation:
    """Animate the forward and backward passes of ``source``, step by step.

    ``source`` is a trace (``with ad.trace() as tr:``), a tape (the trace
    that saw it, or just its forward records), a traced ``ForwardAccumulator``
    (forward mode: each step writes the tangent rule ``ẏ = Σ ∂y/∂a · ȧ`` with
    its numbers, and the table is the evaluation trace of primals and
    tangents), a list of events, or a function: then ``animate(f, 3.0, 2.0)`` runs ``f`` on those inputs under
    a tape, takes the gradient of its result with respect to every input,
    and adds linked views: a slider for input ``vary`` (default the first)
    over ``span``, with every node's value and derivative plotted against it.

    ``names`` labels tensors: ``{"x": x}`` (or ``{tensor_id: "x"}``); by
    default boxes carry the names your code holds the tensors in (as in
    ``graph``), and ``names=False`` uses none.  For a function, ``names`` is a
    list of its inputs' labels (default: its parameter names).
    ``rankdir`` is ``"LR"`` (left to right), ``"TB"`` (top to bottom) or
    ``"auto"``: whichever shows the graph larger in the player (the rule
    ``graph`` follows for a slide), so long chains such as a training step
    run down the page; the player, the HTML page and the GIF/MP4 frames all
    use this one layout.

    Boxes show values and gradients by the rules of ``graph``'s boxes: a
    tensor of up to ``max_items`` values in full (a matrix one row per line),
    a larger one in words (a trace keeps the first ``events.HEAD`` = 16
    values of a tensor, so at most 16); every number with ``digits`` significant digits,
    in the boxes, the step texts and the gradient table alike.  ``collapse``
    folds name scopes (and Modules, Keras layers) as ``graph`` does: ``True``
    every top-level scope, a list only those; a folded scope is one box, one
    forward step and one backward step for its run of rules.
    ``gradient_size``: as for ``graph``, an arrow carrying a gradient in a
    backward step is as wide as that gradient (log scale); by default where
    the sizes span two powers of ten.

    >>> import autodiff_viz as ad
    >>> anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
    >>> [s["title"] for s in anim.steps][:2]
    ['Forward and backward pass, step by step', 'Forward 1/1: Mul']
    >>> [n["label"] for n in anim.nodes]
    ['a', 'b', 'Mul']
    """
    if not isinstance(gradient_size, (bool, type(None))):
        raise TypeError(f"animate: gradient_size must be True, False or None, not {_labels.shorten(repr(gradient_size))}")
    shown = {"digits": A.whole("animate", "digits", digits, low=1, high=17),
             "max_items": A.whole("animate", "max_items", max_items, low=1, high=_events.HEAD)}
    if callable(source) and not _source.is_event_list(source) and not _source.rec.is_tape(source):
        return _animate_function(source, args, names, title, rankdir, vary, span, points, linked,
                                 dict(shown, collapse=collapse), gradient_size)
    found = _source.events_of(source, family=True)
    labels = {} if names is False else _source.caller_names(lambda: _source.nameable_ids(found.events))
    labels.update(_source.name_map(names or None))
    model = _build.build(found.events, names=labels, subscripts=True, traced=found.traced, collapse=collapse)
    story = _story.build_story(found.events, model, title, **shown)
    story["details"] = _details.node_details(model)
    _weight.weigh_story(story, model, gradient_size)
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
    return [_build.input_letter(i) for i in range(n)]


def _animate_function(f, args, names, title, rankdir, vary, span, points, linked, shown, gradient_size=None):
    import autodiff_viz as ad  # the public API's dtype, as a user would name it

    if not args:
        raise TypeError("animate(f, *inputs): give the input values, e.g. animate(f, 3.0)")
    labels = _input_labels(f, len(args), names)
    story, _, _, _ = _linked.story_of_run(f, args, labels, ad.float64, title, details=True,
                                          gradient_size=gradient_size, **shown)
    _lay_out(story, rankdir)
    vary = _which_input(vary, labels)
    scalar = np.ndim(args[vary]) == 0
    if linked is None:
        linked = scalar and len(story["nodes"]) <= 40
    if linked:
        if not scalar:
            raise ValueError("linked views vary one scalar input")
        story["linked"] = _linked.linked_views(f, args, story, vary, span, points, labels, ad.float64, **shown)
    return Animation(story)
