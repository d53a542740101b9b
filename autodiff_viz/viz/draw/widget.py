"""Jupyter widgets for the animation and the explorers: thin views over plain state.

Why anywidget: the widget is one small ES module written here (no bundler,
no separate JupyterLab extension to install), it runs in JupyterLab, Notebook
7, VS Code and Colab, and its state is a plain dict.  All the data a widget
shows is computed in Python up front and shipped as that state, so stepping,
playing and dragging sliders happen in the browser: instant, and still
working in a notebook saved with its widget state or with no kernel running.
The same module and state also run outside Jupyter, in the self-contained
HTML page from :mod:`._html`.
"""
from __future__ import annotations

import base64
import functools
import pathlib

from ..model import alt as _alt
from ..text import numbers as _numbers
from . import look as _look
from . import png as _png
from . import still as _still

STATIC = pathlib.Path(__file__).with_name("static")

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def esm_source(kind: str) -> str:
    """The widget's ES module: the shared helpers followed by the widget's own code."""
    return (_look.js_constants() + _numbers.js_constants() + (STATIC / "common.js").read_text(encoding="utf-8") + "\n"
            + (STATIC / f"{kind}.js").read_text(encoding="utf-8"))


def css_source() -> str:
    """The widgets' style sheet: the colours as CSS variables and the role rules (both from the look
    table), then the layout (``static/style.css``)."""
    return _look.css_variables() + _look.css_rules() + (STATIC / "style.css").read_text(encoding="utf-8")


def initial_state(kind: str, data: dict) -> dict:
    """The synced traits and their starting values (also what the static page's model holds)."""
    if "details" in data and "alt" not in data:  # a graph's text alternative, for screen readers
        data = {**data, "alt": _alt.text_alternative(data)}
    state = {"data": data, "step": 0, "selected": ""}
    if kind == "animate":
        linked = data.get("linked")
        state["grid"] = linked["base"] if linked else -1
    return state


@functools.lru_cache(maxsize=None)
def widget_class(kind: str):
    """One anywidget class per kind of view, created on first use (anywidget is optional)."""
    try:
        import anywidget
        import traitlets
    except ImportError as e:  # pragma: no cover - exercised only without the viz extra
        raise ImportError("the interactive widget needs anywidget: pip install 'autodiff_viz[viz]'") from e

    class _View(anywidget.AnyWidget):
        _esm = esm_source(kind)
        _css = css_source()
        data = traitlets.Dict().tag(sync=True)
        step = traitlets.Int(0).tag(sync=True)
        grid = traitlets.Int(-1).tag(sync=True)
        selected = traitlets.Unicode("").tag(sync=True)

    _View.__name__ = _View.__qualname__ = {"animate": "AnimationWidget", "explore": "ExploreWidget"}.get(kind, "View")
    return _View


def make_widget(kind: str, data: dict):
    return widget_class(kind)(**initial_state(kind, data))


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def mimebundle(kind: str, data: dict, html, text: str, exclude=()) -> dict:
    """The widget view where a kernel is running, always with the HTML player and a still picture beside it.

    Front ends that render widgets pick the widget (JupyterLab ranks it first);
    exported HTML without widget state and VS Code reopening a saved notebook
    pick the self-contained HTML; whatever shows neither widgets nor scripts
    has the still: ``image/svg+xml``, and ``image/png`` (:mod:`.png`) for
    viewers that show no SVG output, such as GitHub's notebook preview.
    ``html`` is the HTML fragment, or a function of the PNG (base64, or
    ``None``) that makes it with the PNG as the picture shown until its
    script runs, so a viewer that keeps the HTML but drops SVG images still
    shows one.  A type in ``exclude`` is not drawn.

    >>> import autodiff_viz as ad
    >>> sorted(ad.viz.animate(lambda x: x * x, 3.0, linked=False)._repr_mimebundle_())
    ['image/png', 'image/svg+xml', 'text/html', 'text/plain']
    """
    png = None if "image/png" in (exclude or ()) else _png.still_png(kind, data)
    if callable(html):
        html = html(None if png is None else base64.b64encode(png).decode("ascii"))
    bundle = {"text/plain": text, "text/html": html}
    picture = _still.still(kind, data)
    if picture is not None:
        bundle["image/svg+xml"] = picture
    if png is not None:
        bundle["image/png"] = png
    if _in_kernel():
        try:
            w = make_widget(kind, data)
            wb = w._repr_mimebundle_()
            if isinstance(wb, tuple):
                wb = wb[0]
            if wb and WIDGET_MIME in wb:
                bundle[WIDGET_MIME] = wb[WIDGET_MIME]
        except ImportError:
            pass
    return bundle
