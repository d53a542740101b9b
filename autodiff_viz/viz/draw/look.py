"""The look of every picture, in one place: colours, roles and the font.

Python renderers (DOT, matplotlib frames, SVG stills, plots) import these
names; the browser widgets receive them as data (:func:`css_variables` and
:func:`js_constants`), so a colour is changed here once.

>>> colour("variable"), tint("variable")
('#0072B2', '#D6EAF8')
"""
from __future__ import annotations

import json

# Okabe-Ito: readable on a projector, distinguishable with the common colour-vision deficiencies.
PALETTE = {
    "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7", "black": "#000000",
}
GREY, LIGHT_GREY, DIM = "#6E6E6E", "#F2F2F2", "#B8B8B8"
# A light fill for each colour that marks a border.
TINT = {"blue": "#D6EAF8", "green": "#CFEFE6", "orange": "#FCEFD2", "purple": "#F5E1EC", "vermillion": "#F9DCCB",
        "yellow": "#FBF7D0"}

# What each colour means, in every picture.
ROLE_COLOUR = {
    "variable": "blue",      # a variable, or any source of a gradient
    "watched": "green",      # a plain tensor passed to tape.watch; also "just received a gradient"
    "target": "purple",      # what the gradient is of
    "forward": "orange",     # the op running now, forward
    "backward": "vermillion",  # the rule running now, backward; where a path breaks
    "skipped": "purple",     # ran under stop_recording
}
CURVE_COLOURS = [PALETTE[c] for c in ("blue", "vermillion", "green", "purple", "orange", "sky")]
# The graphs' font: installed with Graphviz by the set-up (fonts-dejavu-core), so Graphviz measures
# text with the font the browser then draws.  FONT_FAMILY goes into DOT (fontconfig reads the list)
# and so into the SVG's font-family; Verdana has close metrics where DejaVu Sans is missing.
FONT = "DejaVu Sans"
FONT_FAMILY = f"{FONT},Verdana,sans-serif"


def colour(role: str) -> str:
    """The colour of a role (``"target"``) or a palette name (``"blue"``)."""
    return PALETTE[ROLE_COLOUR.get(role, role)]


def tint(role: str) -> str:
    """The light fill that goes with :func:`colour`."""
    return TINT[ROLE_COLOUR.get(role, role)]


# ---------------------------------------------------------------------------
# For the browser
# ---------------------------------------------------------------------------
def css_variables() -> str:
    """CSS custom properties for the widgets' style sheet (``var(--adv-blue)``...)."""
    names = {f"--adv-{k}": v for k, v in PALETTE.items()}
    names.update({f"--adv-tint-{k}": v for k, v in TINT.items()})
    names.update({f"--adv-{role}": colour(role) for role in ROLE_COLOUR})
    names["--adv-grey"] = GREY
    names["--adv-font"] = FONT_FAMILY
    return ".adv { " + " ".join(f"{k}: {v};" for k, v in names.items()) + " }\n"


def js_constants() -> str:
    """The palette as a JavaScript constant for the widgets' module."""
    return f"const PALETTE = {json.dumps(PALETTE)};\n"
