"""The look of every picture, in one place: each role's box, the colours and the font.

:data:`LOOKS` is the one table: a role (``"target"``) to its :class:`Look`
(fill, border colour, border width, dashes, text colour, a shape cue) and its
words (:attr:`Look.word`, the glossary's one word for it; :attr:`Look.says`,
what a legend or colour key writes).  Every renderer derives from it: the DOT
node styles and the graph's legend (:mod:`.dot`), the matplotlib frames' boxes
and colour key (:mod:`.frames`), the SVG stills (:mod:`.still`) and the
widgets' CSS role rules, which receive the table as data (:func:`css_rules`).
So a role's look is changed here, once; ``tests/test_look.py`` draws one node
of each role in every renderer and compares.

What each colour means, in every picture (Okabe-Ito, readable on a projector
and with the common colour-vision deficiencies):

- black: an op recorded on the tape;
- blue: a variable, and a source (what a gradient is taken with respect to);
- green: a tensor passed to ``tape.watch``;
- grey, dashed: a constant (not watched);
- purple: an op not recorded (``stop_recording``);
- yellow fill: an op of a gradient rule, recorded by an outer tape;
- orange: the forward pass (the op running now; the path target → sources
  in a graph; a backward pass that an outer tape records);
- vermillion: the backward pass and its gradients (the rule running now,
  every ``∂`` number), the target, where a path breaks or leaves the package;
- sky, dashed: the border of a box that just received a gradient (the players' step highlight);
- blue text: a tangent ``ẋ`` of forward mode (a derivative along the direction of the sources, blue).
- purple, thick, and purple bold numbers: NaN or inf, and the op where one first appeared.

Colour is never the only cue: the marks and moments a step or a graph tells apart (target, path,
received, source) differ in width, dashes or a shape cue too, so a greyscale print still tells them
apart.  The widgets follow a dark notebook theme with :func:`dark_look` and :func:`theme_colours`,
both derived from this table (mixed towards :data:`DARK_PAPER`), never typed in CSS.

>>> colour("variable"), tint("variable")
('#0072B2', '#D6EAF8')
>>> LOOKS["target"].border == PALETTE["vermillion"] and LOOKS["rule_op"].word
'rule op'
"""
from __future__ import annotations

import json
from typing import NamedTuple

PALETTE = {
    "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7", "black": "#000000",
}
GREY, LIGHT_GREY, DIM = "#6E6E6E", "#F2F2F2", "#B8B8B8"
INK, WHITE, SCOPE_GREY = PALETTE["black"], "#FFFFFF", "#EDEDED"
# A light fill for each colour that marks a border.
TINT = {"blue": "#D6EAF8", "green": "#CFEFE6", "orange": "#FCEFD2", "purple": "#F5E1EC", "vermillion": "#F9DCCB",
        "yellow": "#FBF7D0", "sky": "#DDF0FB"}
GRADIENT = PALETTE["vermillion"]  # every ∂ number, in boxes, on arrows, in tables
FADED = 0.25  # the opacity of a box not computed yet (the players)
# NaN and inf numbers: a dark purple, readable as small text (4.5:1 on white) and told from the ∂ colour.
NONFINITE_TEXT = "#8A3D6A"
PLAYER_WIDTH = 15 / 13  # borders scale with the labels: 15-unit labels in the players, 13 in the graph


class Look(NamedTuple):
    """How one role is drawn, and what it is called.

    ``width`` is the border's width in points beside the graph's text (the
    players multiply it by :data:`PLAYER_WIDTH`); ``cue`` is a shape cue:
    ``"rounded"`` corners, a ``"double"`` border, the ``"cds"`` arrow of a
    tensor leaving the package, a ``"box3d"`` folded scope, or ``"faded"``.
    """
    word: str
    says: str
    fill: str
    border: str
    width: float
    dash: bool
    text: str = INK
    cue: str = ""


_B, _G, _O, _V, _P, _S = (PALETTE[c] for c in ("blue", "green", "orange", "vermillion", "purple", "sky"))
LOOKS = {
    # what a box is
    "op": Look("op", "op recorded on the tape", WHITE, INK, 1.3, False, cue="rounded"),
    "variable": Look("variable", "variable (watched)", TINT["blue"], _B, 1.3, False),
    "variable_unwatched": Look("unwatched variable", "variable the tape does not watch", WHITE, _B, 1.3, True),
    "watched": Look("watched tensor", "tensor passed to tape.watch", TINT["green"], _G, 1.3, False),
    "constant": Look("constant", "constant (not watched)", LIGHT_GREY, GREY, 1.3, True),
    "rule_op": Look("rule op", "op of a rule, recorded by an outer tape", TINT["yellow"], INK, 1.3, False,
                    cue="rounded"),
    "skipped": Look("skipped op", "op not recorded (stop_recording)", TINT["purple"], _P, 1.3, True, cue="rounded"),
    "numpy": Look("NumPy", "left the package (NumPy)", WHITE, _V, 1.3, True, cue="cds"),
    "scope": Look("name scope", "folded name scope", SCOPE_GREY, GREY, 1.3, False, cue="box3d"),
    # what a box is to the gradient: its border over the box's own fill (the fill here is the legend's)
    "source": Look("source", "source", WHITE, _B, 2.4, False, cue="double"),
    "target": Look("target", "target", WHITE, _V, 3.2, False),
    # what a graph marks
    "path": Look("path", "on the path target → sources", WHITE, _O, 2.6, False, cue="rounded"),
    "dimmed": Look("off the path", "not on that path", WHITE, DIM, 1.3, False, DIM, "rounded"),
    "broken": Look("broken", "where the gradient path breaks", TINT["vermillion"], _V, 3.2, False),
    # a NaN or an inf: the border of the op where one first appeared (the box keeps its fill; the fill
    # here is the legend's), and its text colour for every non-finite number
    "nonfinite": Look("non-finite", "NaN or inf first appears here", TINT["purple"], _P, 3.2, False,
                      NONFINITE_TEXT),
    "backward_pass": Look("backward pass", "backward pass recorded by an outer tape", TINT["orange"], _O, 1.5, True),
    # what a player's step shows
    "forward": Look("forward", "op running (forward)", TINT["orange"], _O, 4.8, False),
    "backward": Look("backward", "rule running (backward)", TINT["vermillion"], _V, 4.8, True),  # dashed, as its edges
    # a border (the box keeps its fill), dashed: told from the target's thick solid border without colour
    "received": Look("received", "just received a gradient", WHITE, _S, 3.9, True),
    "pending": Look("pending", "not computed yet", WHITE, INK, 1.3, True, cue="faded"),
    # forward mode: the tangent ẋ written beside a value (its text colour; the fill and border are the legend's)
    "tangent": Look("tangent", "ẋ: tangent (forward mode)", WHITE, _B, 1.3, False, text=_B),
}
TANGENT = LOOKS["tangent"].text  # every ẋ number, in boxes and tables
# What a player's box can be (the storyboard's ``box``), the marks over it (its ``role``), and the
# moments of a step.
PLAYER_BOXES = ("op", "variable", "variable_unwatched", "watched", "constant", "rule_op", "skipped", "numpy")
MARKS = ("source", "target", "nonfinite")
MOMENTS = ("forward", "backward", "received", "pending")

CURVE_COLOURS = [PALETTE[c] for c in ("blue", "vermillion", "green", "purple", "orange", "sky")]
# The graphs' font: installed with Graphviz by the set-up (fonts-dejavu-core), so Graphviz measures
# text with the font the browser then draws.  FONT_FAMILY goes into DOT (fontconfig reads the list)
# and so into the SVG's font-family; Verdana has close metrics where DejaVu Sans is missing.
FONT = "DejaVu Sans"
FONT_FAMILY = f"{FONT},Verdana,sans-serif"


def look(role: str) -> Look:
    """The look of ``role``; an unknown role is drawn as an op."""
    return LOOKS.get(role, LOOKS["op"])


def node_look(box: str, role: str | None = None) -> Look:
    """A node's look: what the box is (``"watched"``), with a source's or the target's border over it.

    >>> node_look("watched", "source")[2:5] == (tint("watched"), colour("source"), 2.4)
    True
    """
    base = look(box)
    if role in MARKS:
        mark = LOOKS[role]
        base = base._replace(border=mark.border, width=mark.width)
    return base


def colour(role: str) -> str:
    """The border colour of a role (``"target"``), or a palette colour by name (``"blue"``)."""
    return LOOKS[role].border if role in LOOKS else PALETTE[role]


def tint(role: str) -> str:
    """The fill of a role, or the light fill that goes with a palette colour."""
    return LOOKS[role].fill if role in LOOKS else TINT[role]


def player_width(lk: Look) -> float:
    """A look's border width in a player (layout units at scale 1)."""
    return round(lk.width * PLAYER_WIDTH, 2)


# ---------------------------------------------------------------------------
# Dark themes: every colour derived from the light ones
# ---------------------------------------------------------------------------
DARK_PAPER, DARK_INK = "#1E1E1E", LIGHT_GREY  # a dark notebook's background (VS Code's) and its text
_TINT_OF = {t: PALETTE[c] for c, t in TINT.items()}


def mix(a: str, b: str, t: float) -> str:
    """``t`` of colour ``a`` over colour ``b`` (``#RRGGBB``).

    >>> mix("#FFFFFF", "#000000", 0.5)
    '#808080'
    """
    ca, cb = (tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in (a, b))
    return "#" + "".join(f"{round(x * t + y * (1 - t)):02X}" for x, y in zip(ca, cb))


def _on_dark(c: str) -> str:
    """A border or text colour that reads on :data:`DARK_PAPER` (black turns to the dark theme's ink)."""
    return {INK: DARK_INK, DIM: mix(DIM, DARK_PAPER, 0.45)}.get(c, c)


def dark_look(lk: Look) -> Look:
    """``lk`` for a dark theme: a tinted fill becomes its colour, dark; white becomes the paper, a shade lighter.

    >>> dark_look(LOOKS["variable"]).fill, dark_look(LOOKS["op"]).border == DARK_INK
    ('#143B52', True)
    """
    base = _TINT_OF.get(lk.fill)
    fill = (mix(base, DARK_PAPER, 0.35) if base else
            mix(WHITE, DARK_PAPER, 0.06 if lk.fill == WHITE else 0.16))
    return lk._replace(fill=fill, border=_on_dark(lk.border), text=_on_dark(lk.text))


def theme_colours(dark: bool) -> dict:
    """The widgets' page colours (``--adv-bg``...), light or dark, from the paper and ink they sit on."""
    paper, ink = (DARK_PAPER, DARK_INK) if dark else (WHITE, INK)
    return {"bg": paper, "ink": ink, "muted": mix(ink, paper, 0.72), "rule": mix(ink, paper, 0.2),
            "code-bg": mix(ink, paper, 0.05), "btn-bg": mix(ink, paper, 0.07), "btn-hover": mix(ink, paper, 0.14),
            "btn-border": mix(ink, paper, 0.5), "edge": mix(ink, paper, 0.6),
            "pressed": mix(PALETTE["blue"], paper, 0.2), "details-bg": mix(PALETTE["blue"], paper, 0.06),
            "gradient": mix(GRADIENT, WHITE, 0.65) if dark else GRADIENT, "focus": PALETTE["sky" if dark else "blue"],
            # the ∂ colour for small text beside other text (tables, details): darker, for a 4.5:1 contrast
            "gradient-text": mix(GRADIENT, WHITE, 0.65) if dark else mix(GRADIENT, INK, 0.8),
            "tangent-text": mix(TANGENT, WHITE, 0.65) if dark else mix(TANGENT, INK, 0.8),  # ẋ in tables, likewise
            "paper": WHITE}


# ---------------------------------------------------------------------------
# For the browser
# ---------------------------------------------------------------------------
PLAYER_DASH = "6 3"     # a dashed border in the players' SVG (the stills draw the same)
PENDING_DASH = "4 4"


# Where a page says its theme: JupyterLab's body attribute, VS Code's body classes; a plain page asks the system.
LIGHT_THEME = 'body[data-jp-theme-light="true"] .adv, body.vscode-light .adv, body.vscode-high-contrast-light .adv'
DARK_THEME = ('body[data-jp-theme-light="false"] .adv, body.vscode-dark .adv, '
              'body.vscode-high-contrast:not(.vscode-high-contrast-light) .adv')


def _theme_names(dark: bool) -> dict:
    side = dark_look if dark else (lambda lk: lk)
    names = {f"--adv-{k}": v for k, v in theme_colours(dark).items()}
    for role, lk in LOOKS.items():
        lk, name = side(lk), role.replace("_", "-")
        names.update({f"--adv-{name}": lk.border, f"--adv-fill-{name}": lk.fill, f"--adv-text-{name}": lk.text})
    names["--adv-tint-sky"] = mix(PALETTE["sky"], DARK_PAPER, 0.35) if dark else TINT["sky"]
    return names


def css_variables() -> str:
    """CSS custom properties for the widgets' style sheet (``var(--adv-blue)``...): the light theme, then
    the dark one where the page's theme is dark (or, on a plain page, the system's).

    >>> "--adv-fill-variable: #143B52;" in css_variables()
    True
    """
    names = {f"--adv-{k}": v for k, v in PALETTE.items()}
    names.update({f"--adv-tint-{k}": v for k, v in TINT.items()})
    names["--adv-grey"] = GREY
    names["--adv-font"] = FONT_FAMILY
    names.update(_theme_names(False))
    def block(sel, d):
        return sel + " { " + " ".join(f"{k}: {v};" for k, v in d.items()) + " }\n"
    dark, light = _theme_names(True), _theme_names(False)
    return (block(".adv", names) + "@media (prefers-color-scheme: dark) {\n" + block(".adv", dark) + "}\n"
            + block(LIGHT_THEME, light) + block(DARK_THEME, dark))


def _var(kind: str, role: str) -> str:
    return f"var(--adv-{kind}{role.replace('_', '-')})"


def _box_rule(selector: str, role: str, dash: str = PLAYER_DASH) -> str:
    lk = LOOKS[role]
    return (f"{selector} .adv-box {{ fill: {_var('fill-', role)}; stroke: {_var('', role)}; "
            f"stroke-width: {player_width(lk):g}; stroke-dasharray: {dash if lk.dash else 'none'}; }}\n")


def css_rules() -> str:
    """The player's node rules, from :data:`LOOKS`: one per box, then the marks (a border), then the
    moments of a step (later rules win, as a frame's moment does over a box).

    The colours are the theme's variables (:func:`css_variables`), so a dark page gets the dark looks.

    >>> ".adv-role-target .adv-box { stroke: var(--adv-target); stroke-width: 3.69; }" in css_rules()
    True
    """
    out = []
    for box in PLAYER_BOXES:
        out.append(_box_rule(f".adv-is-{box}", box))
        out.append(f".adv-is-{box} .adv-label, .adv-is-{box} .adv-val {{ fill: {_var('text-', box)}; }}\n")
    for role in MARKS:
        lk = LOOKS[role]
        out.append(f".adv-role-{role} .adv-box {{ stroke: {_var('', role)}; stroke-width: {player_width(lk):g}; }}\n")
        if lk.cue == "double":  # the player's inner ring (DOT draws peripheries=2)
            out.append(f".adv-role-{role} .adv-ring {{ display: inline; stroke: {_var('', role)}; "
                       f"stroke-width: {player_width(LOOKS['op']):g}; }}\n")
    out.append(".adv-grad { fill: var(--adv-gradient); }\n")
    out.append(f".adv-node .adv-nonfinite-text {{ fill: {_var('text-', 'nonfinite')}; font-weight: 700; }}\n")
    lk = LOOKS["received"]
    out.append(f".adv-recv .adv-box {{ stroke: {_var('', 'received')}; stroke-width: {player_width(lk):g}; "
               f"stroke-dasharray: {PLAYER_DASH if lk.dash else 'none'}; }}\n")
    for phases, moment in ((("forward",), "forward"), (("backward", "update"), "backward")):
        selector = ", ".join(f'.adv[data-phase="{p}"] .adv-current' for p in phases)
        out.append(_box_rule(selector.replace(", ", " .adv-box, "), moment))
    out.append(f".adv-pending {{ opacity: {FADED}; }}\n")
    out.append(f".adv-pending .adv-box {{ stroke-dasharray: {PENDING_DASH}; }}\n")
    return "".join(out)


def js_constants() -> str:
    """The palette as a JavaScript constant for the widgets' module."""
    return f"const PALETTE = {json.dumps(PALETTE)};\n"
