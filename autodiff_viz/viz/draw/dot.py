"""DOT text for a :class:`~autodiff_viz.viz.model.graph.GraphModel` (pure Python, no Graphviz needed).

Two levels of detail.  ``detail="classroom"`` (the default) shows what a
student needs to read the chain rule: each box's name, value and gradient;
the shape of tensors that are not scalars; the dtype only where the picture
mixes dtypes or a dtype is not floating; tensors of up to
:data:`..text.numbers.FULL_ITEMS` values in full; a legend of only the styles that
appear, which also explains the ``∂`` numbers in boxes and on arrows; a
spent tape as a quiet sentence.  ``detail="full"`` shows everything: shapes
and dtypes on every box, the spread of large arrays, how each leaf is
watched, and which tapes recorded each op.

``rankdir="auto"`` picks the direction (left to right or top to bottom) in
which the picture, fitted into a 16:9 slide, is drawn larger (see
:func:`choose_rankdir`; animations follow the same rule).

Every piece of text (variable names, scopes, notes, the title, values, the
legend) goes through :mod:`._labels`: cleaned, shortened and escaped into an
HTML-like label (:func:`esc`) or a quoted string (tooltips), so a name such as
``<script>`` stays text in the DOT source, the SVG and any HTML page that
embeds it, and no name can end a label early.  DOT identifiers are generated
(``n0``, ``n1``...), never taken from user text; attribute values that are not
labels are checked or generated here.

>>> from autodiff_viz import events as ev
>>> s = ev.summarize
>>> evs = [ev.TapeBegin(0, 7), ev.Watch(1, 7, tensor=40, value=s(3.0)),
...        ev.Op(2, 7, node=5, op_type="Mul", inputs=(40, 40), output=41, shape=(), dtype="float32",
...              value=s(9.0))]
>>> from autodiff_viz.viz.model.build import build
>>> text, full = to_dot(build(evs)), to_dot(build(evs), detail="full")
>>> "rankdir=LR" in text, "() float32</font>" in text, "() float32</font>" in full  # the dtype line
(True, False, True)
"""
from __future__ import annotations

import html
import re

from ..text import labels as L
from ..text.numbers import FULL_ITEMS
from ..text.words import call_name, tape_name
from . import layout as _layout
from ..model import graph as M
from ..model.nonfinite import finite
from ..model.source import UNTRACED_HINT
from . import boxes as B
from . import legend as _legend
from . import look as _look
from . import weight as _weight
from .boxes import LEFT, esc, esc_name, fmt_value, within as _within
from .look import DIM, FONT_FAMILY, GREY, LIGHT_GREY, LOOKS, PALETTE, TINT as _TINT

ORANGE, VERMILLION, PURPLE, BLACK = (PALETTE[c] for c in ("orange", "vermillion", "purple", "black"))
TINT = {PALETTE[c]: t for c, t in _TINT.items()}
LEAF_DIM_FILL = "#FAFAFA"  # a leaf off the path: a trace of its fill, so leaves still read as leaves
_SHAPES = {"cds": "cds", "box3d": "box3d"}  # how DOT draws a look's shape cue


def dot_style(lk: _look.Look) -> str:
    """The ``style`` attribute of a node drawn in the look ``lk``."""
    return ",".join((["dashed"] if lk.dash else []) + (["rounded"] if lk.cue == "rounded" else []) + ["filled"])


RANKDIRS = ("LR", "TB", "RL", "BT")
DETAILS = ("classroom", "full")
STYLES = ("default", "slide")
# Graphviz reads an HTML-like label of at most 16,384 characters.  Remarks past this budget (escaped
# characters) are left out, with a line that says how many (a node's label: boxes.NODE_LABEL_BUDGET).
REMARKS_BUDGET = 7_000
TITLE_LINES = 4  # a title keeps at most this many of its own lines
MAX_SCOPE_DEPTH = 12  # deeper name scopes share the innermost cluster (its label holds the rest of the path)
NODESEP, RANKSEP = 0.25 * 72, 0.35 * 72  # points, as written into the DOT text below
LEGEND_MIN_WIDTH = 600.0  # points: a legend may be this wide even above a narrow graph
SCOPE_MARGIN = "0.16,0.14"  # inches: a folded scope's label inside its box3d (a box's margin is 0.08,0.04)
EDGE_LABEL_MAX = 2  # arrows carry the gradient they sent when it has at most this many values
# A legend is drawn compact when the full one would cover more than this share of the graph's (estimated)
# area, and left out when even the compact one would: estimates are within about 20%, so this keeps the
# legend that Graphviz draws no larger than the graph.
LEGEND_SHARE = 0.7
# A compact legend under a wider title keeps its boxes' widths: an empty cell takes this share of the
# title's estimated width that the boxes leave (an estimate too large would widen the picture).
SPACER_SHARE = 0.85
# style="slide": text this much larger (the 16:9 canvas is made around the drawing: _graph.on_canvas).
SLIDE_FONT = {"graph": 15, "node": 14, "edge": 12}


# ---------------------------------------------------------------------------
def to_dot(model: M.GraphModel, rankdir: str = "auto", legend: bool = True, values: bool = True,
           digits: int = 4, title: str | None = None, mark_legend: str | None = None,
           detail: str = "classroom", tape_notes: bool | None = None, style: str = "default",
           gradient_size: bool | None = None, max_items: int = FULL_ITEMS) -> str:
    """The DOT text of a model: same model, same text (no ids or times from the engine).

    ``gradient_size``: arrows on the gradient path as wide as the gradient they carry, on a log
    scale (:mod:`.weight`); ``None`` does so where the sizes span two powers of ten or more.

    ``detail``: ``"classroom"`` or ``"full"`` (see the module's text).
    ``legend``: the legend of the looks drawn; on a small graph it is
    compact (a word in each box) and left out when even that would be larger
    than the graph.  ``tape_notes``: the sentences about the tapes ("Tape T1
    is spent: …"); by default drawn only with the legend.  ``style="slide"``:
    no tape notes, a compact legend, larger text, a 16:9 canvas.
    ``rankdir``: ``"auto"`` (see :func:`choose_rankdir`), ``"LR"``, ``"TB"``,
    ``"RL"`` or ``"BT"``.  Marked nodes (``Node.broken``) are filled light
    vermillion with a ✗ before their name; ``mark_legend`` says in the legend
    what a mark means (default: where the gradient path breaks).  The remarks
    box is vermillion when a node is marked, grey otherwise (a note, not an
    error).
    """
    direction = L.clean(rankdir).upper()
    if direction not in RANKDIRS + ("AUTO",):  # it is written into the DOT text as it is: only these
        raise ValueError(f"rankdir must be 'auto' or one of {', '.join(RANKDIRS)}, not {L.shorten(repr(rankdir))}")
    if detail not in DETAILS:
        raise ValueError(f"detail must be 'classroom' or 'full', not {L.shorten(repr(detail))}")
    if style not in STYLES:
        raise ValueError(f"style must be 'default' or 'slide', not {L.shorten(repr(style))}")
    for name, flag in (("legend", legend), ("tape_notes", tape_notes)):
        if not isinstance(flag, (bool, type(None))) or (flag is None and name == "legend"):
            raise TypeError(f"{name} must be True or False, not {L.shorten(repr(flag))}")
    if not isinstance(gradient_size, (bool, type(None))):
        raise TypeError(f"gradient_size must be True, False or None, not {L.shorten(repr(gradient_size))}")
    w = _Writer(model, digits, values, detail)
    w.max_items = max_items
    w.weigh(gradient_size)
    w.slide = style == "slide"
    w.tape_notes = (legend and not w.slide) if tape_notes is None else tape_notes
    if mark_legend:
        w.mark_legend = mark_legend
    return w.write(direction, legend, title)


class _Writer:
    def __init__(self, model, digits, values, detail="classroom"):
        self.m = model
        self.digits = digits
        self.values = values
        self.full = detail == "full"
        self.many_tapes = len({t for n in model.nodes for t in n.tapes}) > 1
        keys = {k for n in model.nodes for k in n.grads}
        self.many_grads = len(keys) > 1
        # a persistent tape asked twice: tell its calls apart ("T1#2" = tape T1's 2nd gradient call)
        self.many_calls = len(keys) > len({k[0] for k in keys})
        self.dtypes = {n.dtype for n in model.nodes if n.dtype}
        self.lines: list[str] = []
        self.mark_legend = "where the gradient path breaks"
        self.present: set = set()      # legend keys the picture uses
        self.edge_labels = False       # some arrow carries a gradient
        self.edge_example = ""         # the first gradient written on an arrow, for the legend
        self.weights, self.sizes = {}, []  # arrow widths by gradient size (see weigh)
        self.max_items = FULL_ITEMS    # a tensor of up to this many values is written whole
        self._layers = None            # the boxes' sizes by rank, once (see _graph_size)

    def out(self, line, depth=1):
        self.lines.append("  " * depth + line)

    def weigh(self, on):
        """The arrows' widths by gradient size (``self.weights``: edge index -> points), when ``on``."""
        self.sizes = [_weight.gradient_size(e.grad) if e.on_path and e.kind == "data" else None for e in self.m.edges]
        found = _weight.edge_weights(self.m.edges, on)
        self.weights = dict(enumerate(found)) if any(v is not None for v in found) else {}

    def write(self, rankdir, legend, title):
        m = self.m
        self.nodes = {n.id: self.node_text(n) for n in m.nodes}
        self.edges = [self.edge_text(e, k) for k, e in enumerate(m.edges)]
        # A title is user text like any other: its own line breaks are kept (up to TITLE_LINES).
        head = (L.for_dot_html(title, L.TITLE_LIMIT, max_lines=TITLE_LINES, where="end", br=LEFT)
                if title is not None else self.title() if self.tape_notes else "")
        rows = []  # (cell's attributes, text): the heading's rows above the legend
        if head:
            rows.append(('align="left" balign="left"', head))
        # "Recorded without ad.trace()" is a note about the tape: it goes with the others (tape_notes).
        said = [r for r in self.m.remarks if self.tape_notes or r != UNTRACED_HINT]
        if said:
            # A long remark wraps (a hint cut mid-sentence loses its instruction); a long word is shortened.
            remarks = [esc(line, L.TITLE_LIMIT, "end") for r in said
                       for line in L.lines(L.shorten_words(r, L.LINE_LIMIT), 90, max_lines=4, wrap=True)]
            text = LEFT.join(_within(remarks, REMARKS_BUDGET, lambda k: f"… ({k} more lines)"))
            tone = VERMILLION if any(n.broken or n.nonfinite for n in m.nodes) else GREY
            fill = TINT[VERMILLION] if tone == VERMILLION else LIGHT_GREY
            rows.append((f'align="left" balign="left" bgcolor="{fill}" border="1" color="{tone}" cellpadding="6"',
                         f'{text}<br align="left"/>'))
        entries = _legend.entries(self, compact=self.slide) if legend else []
        if rankdir == "AUTO":
            rankdir = self.choose([text for _, text in rows], entries)[0]
        entries, cols = self.fit_legend(entries, rankdir)
        spacer = 0
        if entries and rows and not any(wide for _, _, wide in entries):  # a compact legend under a wider title
            room = _text_size("<br/>".join(text for _, text in rows), 12)[0] * SPACER_SHARE
            spacer = int(max(0.0, room - _legend_size(entries, cols)[0]))
            spacer = spacer if spacer >= 20 else 0
        heading = [f'<tr><td {attrs} colspan="{cols + bool(spacer)}">{text}</td></tr>' for attrs, text in rows]
        heading += _legend.rows(entries, cols, spacer)
        font = SLIDE_FONT if self.slide else {"graph": 12, "node": 11, "edge": 9}
        self.lines = ["digraph autodiff {"]
        self.out(f'graph [rankdir={rankdir}, fontname="{FONT_FAMILY}", fontsize={font["graph"]}, nodesep=0.25, '
                 'ranksep=0.35, bgcolor="white", pad=0.2, labeljust=l];')  # no newrank: 10-30x slower with clusters
        self.out(f'node [fontname="{FONT_FAMILY}", fontsize={font["node"]}, margin="0.08,0.04", penwidth=1.3];')
        self.out(f'edge [fontname="{FONT_FAMILY}", fontsize={font["edge"]}, arrowsize=0.7, color="{BLACK}", '
                 'penwidth=1.2];')
        if heading:  # one table: title, remarks, then the legend's boxes (all as wide as the widest row)
            self.out('labelloc=t; labeljust=l; label=<<table border="0" cellborder="0" cellspacing="4" '
                     'cellpadding="0">' + "".join(heading) + "</table>>;")
        # Group nodes: backward-pass clusters, then name-scope clusters inside.
        groups: dict = {}
        for n in m.nodes:
            groups.setdefault(n.backward_of, []).append(n)
        for bw, nodes in groups.items():
            depth = 1
            if bw is not None:
                recorder = sorted({t for n in nodes for t in n.tapes})
                rec = ", ".join(tape_name(t) for t in recorder) or "?"
                self.out(f"subgraph cluster_backward_{bw} {{")
                lk = LOOKS["backward_pass"]
                how = (f"run inside the ForwardAccumulator {rec}: tangents carried" if m.forward_only(recorder)
                       else f"recorded by {rec}: differentiable again")
                self.out(f'label=<<b>backward pass of {tape_name(bw)}</b><br/><font point-size="10">{how}'
                         f'</font>>; style="{dot_style(lk)}"; color="{lk.border}"; '
                         f'fillcolor="{lk.fill}"; fontcolor="{lk.text}"; penwidth={lk.width};', 2)
                depth = 2
            self.scoped(nodes, depth)
            if bw is not None:
                self.out("}")
        for line in self.edges:
            self.out(line)
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def fit_legend(self, entries, rankdir):
        """``(entries, columns)``: the legend as it fits the graph drawn in ``rankdir``: in full, else
        compact (:func:`.legend.compact_entries`) in rows no wider than the graph, else none."""
        if not entries:
            return [], 1
        w, h = _graph_size(self, rankdir)
        room = LEGEND_SHARE * w * h
        cols = _legend_columns(entries, w)
        lw, lh = _legend_size(entries, cols)
        if lw * lh <= room and not self.slide:
            return entries, cols
        small = _legend.compact_entries(self)
        while small:  # the entries needed most that fit, in rows no wider than the graph
            cols = _legend_columns(small, w, min_width=0.0, most=len(small))
            lw, lh = _legend_size(small, cols)
            if lw * lh <= room:
                return small, cols
            small = small[:-1]
        return [], 1

    def choose(self, rows, entries):
        """``(rankdir, graph width)`` for ``rankdir="auto"``; see :func:`choose_rankdir`."""
        head_w, head_h = _text_size("<br/>".join(rows), 12) if rows else (0.0, 0.0)

        def size_of(direction):
            w, h = _graph_size(self, direction)
            lw, lh = _legend_size(entries, _legend_columns(entries, w)) if entries else (0.0, 0.0)
            return max(w, head_w, lw), h + head_h + lh

        direction = _layout.auto_rankdir(size_of, _layout.SLIDE)
        return direction, _graph_size(self, direction)[0]

    def layers(self) -> list:
        """The boxes' estimated ``(width, height)``, one list per rank as dot forms them (computed once)."""
        if self._layers is None:
            m = self.m
            index = {n.id: i for i, n in enumerate(m.nodes)}
            ranks = _layout.dot_ranks([n.id for n in m.nodes], [(index[e.src], index[e.dst]) for e in m.edges])
            by_rank: dict = {}
            for n, r in zip(m.nodes, ranks):
                w, h = _text_size(self.nodes[n.id][1])
                by_rank.setdefault(r, []).append((max(54.0, w + 14), max(36.0, h + 8)))
            self._layers = [by_rank[r] for r in sorted(by_rank)]
        return self._layers

    def title(self) -> str:
        tapes = self.m.tapes if self.m.selected_tape is None else [t for t in self.m.tapes
                                                                      if t.index == self.m.selected_tape]
        if not self.full:
            return self.quiet_title(tapes)
        parts = []
        for t in tapes:
            bits = ["persistent" if t.persistent else "non-persistent"]
            if t.parent is not None:
                bits.append(f"inside {tape_name(t.parent)}")
            if not t.watch_accessed_variables:
                bits.append("watch_accessed_variables=False")
            if t.skipped_ops:
                bits.append(f"{t.skipped_ops} op(s) skipped by stop_recording")
            state = ""
            if t.spent:
                state = (f' <font color="{VERMILLION}"><b>· spent: {self.spent_by([t.index])} was called, the tape '
                         'cannot be reused</b></font>')
            about = esc(", ".join(bits), L.TITLE_LIMIT, "end")
            parts.append(f"<b>tape {tape_name(t.index)}</b> ({about}){state}")
        return LEFT.join(parts)

    def spent_by(self, tapes) -> str:
        """The call that spent these tapes, as the code wrote it: ``gradient()``, ``jacobian()``..."""
        used = dict.fromkeys(f"{g.method}()" for g in self.m.gradients if g.tape in tapes)
        return " or ".join(used) or "gradient()"

    def quiet_title(self, tapes) -> str:
        """Classroom: what is special about the tapes, in grey sentences (nothing for one plain tape)."""
        said = []
        for t in tapes:
            if t.persistent:
                said.append(f"Tape {tape_name(t.index)} is persistent.")
            if t.parent is not None:
                said.append(f"Tape {tape_name(t.index)} was recorded inside tape {tape_name(t.parent)}.")
            if not t.watch_accessed_variables:
                said.append(f"Tape {tape_name(t.index)} watches only what tape.watch was given "
                            "(watch_accessed_variables=False).")
            if t.skipped_ops:
                said.append(f"Tape {tape_name(t.index)} did not record {t.skipped_ops} "
                            f"op{'s' if t.skipped_ops > 1 else ''} "
                            "run under stop_recording.")
        spent = [tape_name(t.index) for t in tapes if t.spent]
        if spent:
            who = (f"Tape {spent[0]} is" if len(spent) == 1
                   else f"Tapes {', '.join(spent[:-1])} and {spent[-1]} are")
            used = self.spent_by([t.index for t in tapes if t.spent])
            said.append(f"{who} spent: {used} was called, and a non-persistent tape can be used only once.")
        if not said:
            return ""
        lines, line = [], ""
        for sentence in said:  # sentences side by side, a new line past the title's width
            if line and len(line) + len(sentence) > L.TITLE_LIMIT:
                lines.append(line)
                line = ""
            line = f"{line} {sentence}".strip()
        lines.append(line)
        text = LEFT.join(esc(x, L.TITLE_LIMIT, "end") for x in lines)
        return f'<font point-size="10" color="{GREY}">{text}</font>'

    def scoped(self, nodes, depth):
        # Nested clusters following "a/b/c" scope paths.
        tree: dict = {}
        loose = []
        for n in nodes:
            if not n.scope:
                loose.append(n)
                continue
            node = tree
            parts = n.scope.split("/")
            if len(parts) > MAX_SCOPE_DEPTH:
                parts = parts[:MAX_SCOPE_DEPTH - 1] + ["/".join(parts[MAX_SCOPE_DEPTH - 1:])]
            for part in parts:
                node = node.setdefault(part, {})
            node.setdefault(None, []).append(n)
        for n in loose:
            self.out(self.nodes[n.id][0], depth)
        self._scope_tree(tree, depth, "")

    def _scope_tree(self, tree, depth, prefix):
        for name, sub in tree.items():
            if name is None:
                continue
            path = f"{prefix}/{name}" if prefix else name
            cid = f"cluster_s{len(self.lines)}"  # unique and deterministic: the line number
            dimmed = all(n.dimmed for n in _all_nodes(sub))
            self.out(f"subgraph {cid} {{", depth)
            self.out(f'label=<<i>{esc_name(name)}</i>>; style="rounded,filled"; fillcolor="#F7F7F7"; '
                     f'color="{DIM if dimmed else GREY}"; fontcolor="{DIM if dimmed else GREY}";', depth + 1)
            for n in sub.get(None, []):
                self.out(self.nodes[n.id][0], depth + 1)
            self._scope_tree(sub, depth + 1, path)
            self.out("}", depth)

    # -- nodes ------------------------------------------------------------------
    def node_text(self, n: M.Node):
        """``(DOT line, label)`` of a node; notes the legend entries it needs."""
        self.present.add(n.box)
        for flag, key in ((n.role, n.role), (n.on_path, "path"), (n.dimmed, "dimmed"), (n.grads, "grad"),
                          (n.backward_of is not None, "backward_pass"), (n.broken, "broken"),
                          (n.nonfinite and not n.broken, "nonfinite")):
            if flag:
                self.present.add(key)
        lk = _look.node_look(n.box, n.role or ("nonfinite" if n.nonfinite and not n.broken else None))
        border, fill, style, shape = lk.border, lk.fill, dot_style(lk), _SHAPES.get(lk.cue, "box")
        fontcolor, penwidth = lk.text, lk.width
        peripheries = 2 if n.role in _look.MARKS and LOOKS[n.role].cue == "double" else 1
        if n.role is None and not n.nonfinite and n.on_path and n.kind in (M.OP, M.SCOPE):
            border, penwidth = LOOKS["path"].border, LOOKS["path"].width
        if n.broken:  # filled and crossed: never mistaken for the target's thick border
            mark = LOOKS["broken"]
            border, penwidth, fill = mark.border, mark.width, mark.fill
            style = style.replace("dashed,", "") if "dashed" in style else style
            style = "bold," + (style if "filled" in style else style + ",filled")
        if n.dimmed and not n.broken:
            mark = LOOKS["dimmed"]
            border, fontcolor = mark.border, mark.text
            fill = mark.fill if n.kind in (M.OP, M.SCOPE) else LEAF_DIM_FILL
        label = B.label(self, n)
        attrs = [f"shape={shape}", f'style="{style}"', f'color="{border}"', f'fillcolor="{fill}"',
                 f'fontcolor="{fontcolor}"', f"penwidth={penwidth}", f"label=<{label}>",
                 f'tooltip="{L.for_dot_string(B.tooltip(self, n))}"']
        if peripheries != 1:
            attrs.append(f"peripheries={peripheries}")
        if shape == "box3d":  # room for the drawn depth: the scope's name clear of the top and right edges
            attrs.append(f'margin="{SCOPE_MARGIN}"')
        return f"n{n.id} [{', '.join(attrs)}];", label

    def call_tag(self, key) -> str:
        """``T1`` (tape T1's gradient call) or ``T1#2`` (its second call), as the legend explains."""
        return call_name(key) if self.many_calls else tape_name(key[0])

    # -- edges -------------------------------------------------------------------
    def edge_text(self, e: M.Edge, k: int = -1) -> str:
        attrs = []
        color, width, style = BLACK, 1.2, "solid"
        if e.kind == "skipped":  # into an op not recorded, out of the package: in the colour of that box
            color, style = LOOKS["skipped"].border, "dashed"
        elif e.kind == "leave":
            color, style = LOOKS["numpy"].border, "dashed"
        if e.on_path:
            color, width = LOOKS["path"].border, LOOKS["path"].width
            if self.weights.get(k) is not None:  # gradient size as weight (see weigh)
                width = round(self.weights[k], 2)
        if e.dimmed:
            color = LOOKS["dimmed"].border
        if e.broken:
            color, width, style = LOOKS["broken"].border, 3.0, "dashed"
            attrs.append(f'label=<<font color="{color}"><b>✗ path breaks</b></font>>')
        elif self.values and e.grad is not None and e.on_path and e.grad.size <= EDGE_LABEL_MAX:
            self.edge_labels, times = True, f'<font color="{GREY}"> ×{e.count}</font>' if e.count > 1 else ""
            key = next((k for k, g in e.grads.items() if g is e.grad), None)
            who = f"{self.call_tag(key)} " if self.many_grads and key is not None else ""
            sent = fmt_value(e.grad, self.digits)  # the boxes' precision: one rule for every number drawn
            self.edge_example = self.edge_example or who + sent
            text = f"∂ {who}{esc(sent, L.TITLE_LIMIT)}"
            if not finite(e.grad):  # NaN and inf in their own look, as in the boxes
                text = f'<font color="{_look.NONFINITE_TEXT}"><b>{text}</b></font>'
            attrs.append(f'label=<<font color="{_look.GRADIENT}">{text}</font>{times}>')  # ×n: n edges' sum
        elif e.count > 1:
            attrs.append(f'label="×{e.count}"')
        attrs += [f'color="{color}"', f"penwidth={width}"]
        if style != "solid":
            attrs.append(f"style={style}")
        return f"n{e.src} -> n{e.dst} [{', '.join(attrs)}];"

    # -- legend ------------------------------------------------------------------
def _legend_columns(entries, width, min_width: float = LEGEND_MIN_WIDTH, most: int = 4) -> int:
    """How many boxes side by side: as many as fit the graph's width (at least ``min_width``), 1 to ``most``."""
    boxes = [text for _, text, wide in entries if not wide]
    if not boxes:
        return 1
    cell = max(_text_size(text, 10)[0] for text in boxes) + 18
    return max(1, min(most, len(boxes), int(max(width, min_width) // cell)))


def _legend_size(entries, cols):
    boxes = [text for _, text, wide in entries if not wide]
    wide = [text for _, text, w in entries if w]
    cell = max((_text_size(text, 10)[0] for text in boxes), default=0.0) + 18
    w = max([cell * cols] + [_text_size(text, 10)[0] for text in wide])
    rows = -(-len(boxes) // cols) if boxes else 0
    return w, rows * 24.0 + len(wide) * 17.0


# ---------------------------------------------------------------------------
# How large a picture comes out: enough to choose a direction, without Graphviz
# ---------------------------------------------------------------------------
_TAG = re.compile(r"<[^>]*>")
_SIZE = re.compile(r'point-size="(\d+)"')
_ROW = re.compile(r"<br[^>]*>|</tr>")
CHAR_WIDTH = 0.55  # of the font size: DejaVu Sans' average advance on labels like these
PAD = 0.2 * 72 * 2  # points: the pad around the drawing, as written into the DOT text
SPREAD = 1.2  # dot lays a rank of boxes out about this much wider than the boxes themselves


def _text_size(label: str, size: float = 11.0):
    """Estimated ``(width, height)`` in points of an HTML-like label: one line per row or line break."""
    w = h = 0.0
    for line in _ROW.split(label):
        text = html.unescape(_TAG.sub("", line)).strip()
        if not text:
            continue
        found = _SIZE.findall(line)
        pt = float(found[-1]) if found else size
        w = max(w, len(text) * pt * CHAR_WIDTH)
        h += pt * 1.25
    return w, h


def _graph_size(writer: _Writer, rankdir: str):
    """Estimated ``(width, height)`` in points of the nodes and edges laid out in ``rankdir``.

    Ranks as Graphviz forms them (:func:`._layout.dot_ranks`), linear in the
    size of the graph.  Calibrated on the tour's graphs: within about 20% of
    what ``dot`` draws.
    """
    layers = writer.layers()
    if not layers:
        return 0.0, 0.0
    gap = RANKSEP + (40.0 if writer.edge_labels and rankdir in ("LR", "RL") else 0.0)
    width, height = _layout.extent(layers, rankdir, NODESEP, gap, SPREAD)
    return width + PAD, height + PAD


def choose_rankdir(model: M.GraphModel, legend: bool = True, detail: str = "classroom") -> str:
    """The direction ``rankdir="auto"`` draws ``model`` in: ``"LR"`` or ``"TB"``.

    Both layouts are estimated from the labels' text (no Graphviz run, linear
    in the size of the graph) and each is fitted into a 16:9 slide
    (:data:`._layout.SLIDE`), title and legend included, never enlarged; top
    to bottom is chosen when it comes out clearly larger (by more than 5%), so
    long chains such as a training step run down the page and short graphs
    stay left to right (:func:`._layout.auto_rankdir`, the rule animations
    follow too).  A graph too large for a slide either way is still drawn:
    at its own size in a file, scaled to the width of a notebook cell.
    """
    return re.search(r"rankdir=(\w+)", to_dot(model, legend=legend, detail=detail)).group(1)


def _all_nodes(tree):
    for k, v in tree.items():
        if k is None:
            yield from v
        else:
            yield from _all_nodes(v)
