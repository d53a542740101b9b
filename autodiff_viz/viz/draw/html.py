"""Self-contained HTML for the widgets: no network, no external scripts.

The page holds the widget's own ES module as a string, imports it from a
``blob:`` URL, and hands it a tiny stand-in for the widget model (``get``,
``set``, ``on``, ``off``, ``save_changes``, ``send``) holding the same state
the Jupyter widget syncs.  So the file plays from ``file://`` with no kernel.
A notebook fragment carries the widget's still picture (:mod:`._still`, an
SVG ``<img>``, which sanitizers keep) for viewers that run no scripts; the
script replaces it.  The graph inspector's still is its Graphviz SVG, which
the script then makes interactive (so the picture is in the page once).

The page title and the alternative text are user text: they go through
:func:`._labels.for_html` (cleaned, shortened, escaped).  The widget's state
is JSON inside the script, with ``<``, ``>`` and ``&`` written as ``\\u003c``...
so no string can end the script element.
"""
from __future__ import annotations

import json
import re
import secrets

from ..text import labels as L
from . import still as _still
from .widget import css_source, esm_source, initial_state

_MODEL_SHIM = """
function makeModel(state) {
  const handlers = {};
  return {
    get: (k) => state[k],
    set: (k, v) => { state[k] = v; for (const f of handlers["change:" + k] || []) f(); },
    on: (name, f) => { for (const n of name.split(" ")) (handlers[n] = handlers[n] || []).push(f); },
    off: (name, f) => { if (!name) { for (const k in handlers) delete handlers[k]; return; }
      handlers[name] = (handlers[name] || []).filter((g) => f && g !== f); },
    save_changes: () => {},
    send: () => {},
  };
}
"""

_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_ESCAPES = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def _script_json(obj) -> str:
    """JSON that is safe inside a <script> element (and still JSON).

    ``<``, ``>`` and ``&`` only occur inside strings, where ``\\u003c``... mean
    the same: so no text can end the script (``</script>``) or open a comment.
    Other characters are written as they are (the page is UTF-8), except line
    and paragraph separators and lone surrogates, which are escaped too.
    """
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return _ESCAPES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def widget_html(kind: str, data: dict, title: str = "autodiff_viz", standalone: bool = True, alt: str = "",
                fallback_png: str | None = None, still: str | None = None) -> str:
    """HTML that runs the ``kind`` widget on ``data`` with no kernel and no network.

    ``standalone`` gives a whole page; otherwise a fragment for a notebook output.
    ``still`` (an SVG document) or ``fallback_png`` (base64) is shown until the
    script runs, and where scripts do not run; a fragment shows the widget's
    still picture by default.

    >>> import autodiff_viz as ad
    >>> anim = ad.viz.animate(lambda x: x * x, 3.0, linked=False)
    >>> 'src="data:image/svg+xml;base64,' in widget_html("animate", anim.data, standalone=False)
    True
    """
    uid = "adv-" + secrets.token_hex(6)
    state = initial_state(kind, data)
    title_text = L.for_html(title, L.TITLE_LIMIT, "end")
    alt_text = L.for_html(alt, L.ALT_LIMIT, "end")
    fallback = ""
    if still is None and fallback_png is None and not standalone:
        still = _still.still(kind, data)
    if still is not None:
        fallback = f'<img class="adv-fallback" alt="{alt_text}" src="{_still.data_uri(still)}">'
    elif fallback_png:
        if not _BASE64.fullmatch(fallback_png):
            raise ValueError("fallback_png must be base64 text")
        fallback = (f'<img class="adv-fallback" alt="{alt_text}" '
                    f'src="data:image/png;base64,{fallback_png}">')
    body = f"""<div id="{uid}" class="adv-host" role="region" aria-label="{alt_text or title_text}">{fallback}</div>
<style>{css_source()}</style>
<script type="module">
{_MODEL_SHIM}
const esm = {_script_json(esm_source(kind))};
const state = {_script_json(state)};
const host = document.getElementById("{uid}");
const still = host.querySelector("img.adv-fallback");
const url = URL.createObjectURL(new Blob([esm], {{type: "text/javascript"}}));
const widget = (await import(url)).default;
URL.revokeObjectURL(url);
const model = makeModel(state);
if (widget.initialize) await widget.initialize({{model}});
host.replaceChildren();
await widget.render({{model, el: host, still: still && still.getAttribute("src")}});
host.dataset.ready = "1";
{"const first = host.querySelector('[tabindex]'); if (first && document.querySelectorAll('.adv-host').length === 1) first.focus({preventScroll: true});" if standalone else ""}
</script>"""
    if not standalone:
        return body
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title_text}</title>
</head>
<body>
<main>
<noscript>{alt_text}</noscript>
{body}
</main>
</body>
</html>
"""
