"""Still pictures of the players, as small SVG written from their data (no Graphviz, no matplotlib).

Every widget output carries one beside its interactive views, for places that
show notebooks without running them (GitHub's preview, an untrusted notebook,
a viewer with scripts off): :func:`animation_svg` draws an animation's last
step from its storyboard and stored layout (node boxes with their values and
gradients, the results below); :func:`explorer_svg` draws an explorer as it
opens.  Text goes through :func:`._labels.for_html`, colours and numbers come
from :mod:`.look` and :mod:`..text.numbers`.

>>> import autodiff_viz as ad
>>> svg = animation_svg(ad.viz.animate(lambda x: x * x, 3.0, linked=False).data)
>>> svg.startswith("<svg") and ">= 9.0<" in svg and ">∂ 6.0<" in svg
True
"""
from __future__ import annotations

import base64

from ..text import labels as L
from ..model import story as _story
from ..text.numbers import fmt_number, shows_nonfinite
from . import look as _look
from .look import CURVE_COLOURS, PALETTE

PAD = 16.0         # around the graph, as the player draws it
HEAD_H = 34.0      # the title's band
LINE_H = 22.0      # one line of results under the graph
MAX_NODES = 300    # a larger storyboard's still is a card that says so
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"

def _t(text, limit: int = L.TITLE_LIMIT) -> str:
    return L.for_html(text, limit)


def _css() -> str:
    """The picture's classes (one style sheet, so each box costs only its coordinates and texts); the
    boxes' from the look table, as the player's (``k-`` what a box is, ``m-`` a source's or the target's
    border)."""
    rules = [".t{font-size:18px;font-weight:600;fill:#111}", ".n{font-size:15px;fill:#333}", ".r{font-size:15px;font-weight:600;fill:#111}",
             ".l{font-size:16px;font-weight:700;text-anchor:middle}",
             ".v{font-size:15px;text-anchor:middle}",
             f".g{{font-size:15px;font-weight:700;fill:{_look.GRADIENT};text-anchor:middle}}",
             ".e{fill:none;stroke:#777;stroke-width:1.6}", ".h{fill:#777}", ".d{stroke-dasharray:5 4}",
             ".el{font-size:14px;font-style:italic;fill:#555;text-anchor:middle}"]
    for box in _look.PLAYER_BOXES:
        lk = _look.LOOKS[box]
        rules.append(f".k-{box}{{fill:{lk.fill};stroke:{lk.border};stroke-width:{_look.player_width(lk):g}"
                     + (f";stroke-dasharray:{_look.PLAYER_DASH}" if lk.dash else "") + "}")
        rules.append(f".k-{box}~.l,.k-{box}~.v{{fill:{lk.text}}}")
    for role in _look.MARKS:
        lk = _look.LOOKS[role]
        rules.append(f".m-{role}{{stroke:{lk.border};stroke-width:{_look.player_width(lk):g}}}")
    rules.append(f"text.v.x,text.g.x{{fill:{_look.NONFINITE_TEXT};font-weight:700}}")  # NaN and inf: after, and stronger than, the rules above
    return "".join(rules)


def animation_svg(story: dict) -> str:
    """The animation's last step as an SVG document: the graph with every value and gradient.

    A storyboard of more than ``MAX_NODES`` nodes gets a card instead (its title, size and
    results): a picture of it would be too large to read, or to carry in a notebook.
    """
    lay = story["layout"]
    final = _story.final_state(story)
    vals, grads, results = final["vals"], final["grads"], final["results"]
    results = results or story["steps"][-1]["lines"]
    big = len(story["nodes"]) > MAX_NODES
    gw, gh = (0.0, 0.0) if big else (lay["width"] + 2 * PAD, lay["height"] + 2 * PAD)
    notes = [f"{len(story['nodes']):,} nodes, {len(story['steps']):,} steps: too many for a still picture.",
             "Run the notebook, or open its HTML export, to step through them."] if big else []
    width = max(gw, 620.0)
    height = HEAD_H + gh + LINE_H * (len(notes) + len(results)) + 8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT}" role="img">',
           f"<title>{_t(story['title'])}</title><style>{_css()}</style>",
           '<rect width="100%" height="100%" fill="#fff"/>',
           f'<text x="{PAD:.0f}" y="23" class="t">{_t(story["title"])}</text>']
    if not big:
        out.append(f'<g transform="translate({PAD:.0f},{HEAD_H + PAD:.0f})">')
        out.extend(_edges(story, lay))
        for i, n in enumerate(story["nodes"]):
            p = lay["nodes"][n["id"]]
            w, h = p["w"], p["h"]
            box = n["box"] if n["box"] in _look.PLAYER_BOXES else "op"
            mark = f' m-{n["role"]}' if n["role"] in _look.MARKS else ""
            texts = [f'<text x="{w / 2:.0f}" y="22" class="l">{_t(n["label"], L.LINE_LIMIT)}</text>']
            if vals[i]:
                odd = " x" if shows_nonfinite(vals[i]) else ""
                texts.append(f'<text x="{w / 2:.0f}" y="45" class="v{odd}">= {_t(vals[i])}</text>')
            if grads[i]:
                odd = " x" if shows_nonfinite(grads[i]) else ""
                texts.append(f'<text x="{w / 2:.0f}" y="67" class="g{odd}">∂ {_t(grads[i])}</text>')
            out.append(f'<g transform="translate({p["x"] - w / 2:.1f},{p["y"] - h / 2:.1f})">'
                       f'<rect width="{w:.0f}" height="{h:.0f}" rx="{24 if n["kind"] == "leaf" else 8}" '
                       f'class="k-{box}{mark}"/>{"".join(texts)}</g>')
        out.append("</g>")
    y = HEAD_H + gh + 16
    for line in notes:
        out.append(f'<text x="{PAD:.0f}" y="{y:.0f}" class="n">{_t(line)}</text>')
        y += LINE_H
    for line in results:
        out.append(f'<text x="{PAD:.0f}" y="{y:.0f}" class="r">{_t(line)}</text>')
        y += LINE_H
    out.append("</svg>")
    return "\n".join(out)


def _edges(story, lay) -> list:
    out = []
    for e in story["edges"]:
        p = lay["edges"].get(e["id"])
        if not p or not p["points"]:
            continue
        pts = p["points"]
        d = f"M{pts[0][0]:.1f} {pts[0][1]:.1f}"
        for i in range(1, len(pts) - 2, 3):
            d += "C" + " ".join(f"{x:.1f} {y:.1f}" for x, y in pts[i:i + 3])
        dash = " d" if e.get("kind") in ("skipped", "leave") else ""
        out.append(f'<path d="{d}" class="e{dash}"/>')
        if p.get("head"):
            out.append('<polygon points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in p["head"]) + '" class="h"/>')
        if e.get("label"):
            mid = pts[len(pts) // 2]
            out.append(f'<text x="{mid[0]:.1f}" y="{mid[1] - 6:.1f}" class="el">{_t(e["label"], L.LINE_LIMIT)}</text>')
    return out


def explorer_svg(data: dict) -> str:
    """An explorer as it opens: f and f' (one input), or the contours and a descent path (two)."""
    W, H, m = 640.0, 400.0, 48.0
    name = _t(data["name"], L.LINE_LIMIT)
    if data["mode"] == "1d":
        xs = data["x"]
        series = [(data["f"], CURVE_COLOURS[0], "", f"— {name}(x)"),
                  (data["df"], CURVE_COLOURS[1], "7 4", f"- - {name}'(x), from the tape")]
        ys = [v for s in series for v in s[0] if v is not None]
        x0, x1 = min(xs), max(xs)
        y0, y1 = (min(ys), max(ys)) if ys else (-1.0, 1.0)
        title = f"{name}(x) and its derivative"
        curves = [(list(zip(xs, s[0])), s[1], s[2]) for s in series]
        legend = [(s[3], s[1]) for s in series]
    else:
        (x0, x1), (y0, y1) = data["xlim"], data["ylim"]
        W = H = 520.0
        title = f"contours of {name}(x, y) and a gradient-descent path"
        curves = []
        k = len(data["contours"])
        for j, c in enumerate(data["contours"]):
            col = CURVE_COLOURS[j * len(CURVE_COLOURS) // max(k, 1) % len(CURVE_COLOURS)]
            for seg in c["lines"]:
                curves.append((list(zip(seg[0::2], seg[1::2])), col, ""))
        i, j = data["start"]
        path = data["paths"][(data["rate"] * len(data["sy"]) + j) * len(data["sx"]) + i]
        curves.append((list(zip(path["x"], path["y"])), PALETTE["black"], ""))
        legend = [(f"— descent path from the orange point, learning rate {fmt_number(data['rates'][data['rate']])}", PALETTE["black"])]
    if y1 - y0 < 1e-12:
        y0, y1 = y0 - 1, y1 + 1

    def sx(x):
        return m + (x - x0) / ((x1 - x0) or 1) * (W - 2 * m)

    def sy(y):
        return H - m - (y - y0) / (y1 - y0) * (H - 2 * m)
    total = H + 22 * len(legend)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W:.0f}" height="{total:.0f}" '
           f'viewBox="0 0 {W:.0f} {total:.0f}" font-family="{FONT}" role="img"><title>{title}</title>',
           '<rect width="100%" height="100%" fill="#FFFFFF"/>',
           f'<rect x="{m}" y="{m}" width="{W - 2 * m}" height="{H - 2 * m}" fill="none" stroke="#BBBBBB"/>',
           f'<text x="{m}" y="28" font-size="16" font-weight="600" fill="#111111">{title}</text>']
    for pts, col, dash in curves:
        d, pen = "", False
        for x, y in pts:
            if x is None or y is None:
                pen = False
                continue
            d += ("L" if pen else "M") + f"{sx(x):.1f} {sy(y):.1f}"
            pen = True
        if d:
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<path d="{d}" fill="none" stroke="{col}" stroke-width="2.2"{dashes}/>')
    if data["mode"] != "1d" and curves[-1][0]:
        x, y = curves[-1][0][0]
        out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="6" fill="{PALETTE["orange"]}" stroke="#000000"/>')
    for k, (text, col) in enumerate(legend):  # under the plot, one line each
        out.append(f'<text x="{m}" y="{H + 22 * k:.0f}" font-size="14" font-weight="600" fill="{col}">{text}</text>')
    for v, x, anchor in ((x0, sx(x0), "start"), (x1, sx(x1), "end")):
        out.append(f'<text x="{x:.1f}" y="{H - m + 18:.1f}" text-anchor="{anchor}" font-size="13" fill="#444444">'
                   f"{fmt_number(v, 3)}</text>")
    out.append("</svg>")
    return "\n".join(out)


def still(kind: str, data: dict) -> str | None:
    """The still picture of a widget's data (``kind`` ``"animate"`` or ``"explore"``), or ``None``."""
    if kind == "animate" and "layout" in data:
        return animation_svg(data)
    if kind == "explore":
        return explorer_svg(data)
    return None


def data_uri(svg: str) -> str:
    """An SVG document as a ``data:`` URI (base64), for an ``<img>`` that sanitizers keep."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
