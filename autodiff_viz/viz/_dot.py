"""DOT text for a :class:`~autodiff_viz.viz._model.GraphModel` (pure Python, no Graphviz needed).

Every piece of text (variable names, scopes, notes, the title, values, the
legend) goes through :mod:`._labels`: cleaned, shortened and escaped into an
HTML-like label (:func:`esc`) or a quoted string (tooltips), so a name such as
``<script>`` stays text in the DOT source, the SVG and any HTML page that
embeds it, and no name can end a label early.  DOT identifiers are generated
(``n0``, ``n1``...), never taken from user text; attribute values that are not
labels are checked or generated here.
"""
from __future__ import annotations

from . import _labels as L
from . import _model as M
from ._style import DIM, FONT, GREY, LIGHT_GREY, PALETTE, TINT as _TINT, fmt_number, fmt_shape
from ._style import fmt_value as _fmt_value

ORANGE, SKY, GREEN, YELLOW = (PALETTE[c] for c in ("orange", "sky", "green", "yellow"))
BLUE, VERMILLION, PURPLE, BLACK = (PALETTE[c] for c in ("blue", "vermillion", "purple", "black"))
TINT = {PALETTE[c]: t for c, t in _TINT.items()}

STYLES = {
    # kind: (border colour, fill, border style, shape)
    "op": (BLACK, "#FFFFFF", "rounded,filled", "box"),
    "variable": (BLUE, TINT[BLUE], "filled", "box"),
    "variable_unwatched": (BLUE, "#FFFFFF", "dashed,filled", "box"),
    "watched": (GREEN, TINT[GREEN], "filled", "box"),
    "constant": (GREY, LIGHT_GREY, "dashed,filled", "box"),
    "skipped": (PURPLE, TINT[PURPLE], "dashed,rounded,filled", "box"),
    "numpy": (VERMILLION, "#FFFFFF", "dashed,filled", "cds"),
    "scope": (GREY, "#EDEDED", "filled", "box3d"),
}


RANKDIRS = ("LR", "TB", "RL", "BT")
# Graphviz reads an HTML-like label of at most 16,384 characters.  Rows past these
# budgets (escaped characters) are left out, with a row that says how many.
NODE_LABEL_BUDGET = 12_000
REMARKS_BUDGET = 7_000
NOTE_LINES = 3  # a note wraps over at most this many lines
TITLE_LINES = 4  # a title keeps at most this many of its own lines
MAX_SCOPE_DEPTH = 12  # deeper name scopes share the innermost cluster (its label holds the rest of the path)
LEFT = '<br align="left"/>'


def esc(text, limit: int = L.LINE_LIMIT, where: str = "middle") -> str:
    """Text for an HTML-like Graphviz label (and thus for the SVG it becomes): cleaned, shortened, escaped."""
    return L.for_dot_html(text, limit, where=where)


def _within(rows: list, budget: int, more) -> list:
    """The first rows whose total length stays within ``budget``, then ``more(n_left_out)``."""
    out, used = [], 0
    for i, row in enumerate(rows):
        used += len(row)
        if used > budget and out:
            return out + [more(len(rows) - i)]
        out.append(row)
    return out


def fmt_value(s, digits: int = 4, max_items: int = 4) -> str:
    """A value in a graph's box: as every view writes it, with the spread of a large array."""
    return _fmt_value(s, digits, max_items, spread=True)


# ---------------------------------------------------------------------------
def to_dot(model: M.GraphModel, rankdir: str = "LR", legend: bool = True, values: bool = True,
           digits: int = 4, title: str | None = None, mark_legend: str | None = None) -> str:
    """The DOT text of a model: same model, same text (no ids or times from the engine).

    Marked nodes (``Node.broken``) are filled light vermillion with a ✗ before
    their name; ``mark_legend`` says in the legend what a mark means (default:
    where the gradient path breaks).  The remarks box is vermillion when a node
    is marked, grey otherwise (a note, not an error).
    """
    direction = L.clean(rankdir).upper()
    if direction not in RANKDIRS:  # it is written into the DOT text as it is: only these four
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {L.shorten(repr(rankdir))}")
    w = _Writer(model, digits, values)
    if mark_legend:
        w.mark_legend = mark_legend
    return w.write(direction, legend, title)


class _Writer:
    def __init__(self, model, digits, values):
        self.m = model
        self.digits = digits
        self.values = values
        self.many_tapes = len({t for n in model.nodes for t in n.tapes}) > 1
        keys = {k for n in model.nodes for k in n.grads}
        self.many_grads = len(keys) > 1
        # a persistent tape asked twice: tell its calls apart ("T1#2" = tape T1's 2nd gradient call)
        self.many_calls = len(keys) > len({k[0] for k in keys})
        self.lines: list[str] = []
        self.mark_legend = "where the gradient path breaks"

    def out(self, line, depth=1):
        self.lines.append("  " * depth + line)

    def write(self, rankdir, legend, title):
        m = self.m
        self.lines = ["digraph autodiff {"]
        self.out(f'graph [rankdir={rankdir}, fontname="{FONT}", fontsize=12, nodesep=0.25, ranksep=0.35, '
                 'bgcolor="white", pad=0.2, labeljust=l];')  # no newrank: 10-30x slower layouts with clusters
        self.out(f'node [fontname="{FONT}", fontsize=11, margin="0.08,0.04", penwidth=1.3];')
        self.out(f'edge [fontname="{FONT}", fontsize=9, arrowsize=0.7, color="{BLACK}", penwidth=1.2];')
        # A title is user text like any other: its own line breaks are kept (up to TITLE_LINES).
        head = (L.for_dot_html(title, L.TITLE_LIMIT, max_lines=TITLE_LINES, where="end", br=LEFT)
                if title is not None else self.title())
        rows = []
        if head:
            rows.append(f'<tr><td align="left" balign="left">{head}</td></tr>')
        if self.m.remarks:
            remarks = [esc(L.shorten_words(r, L.LINE_LIMIT), L.TITLE_LIMIT, "end") for r in self.m.remarks]
            text = LEFT.join(_within(remarks, REMARKS_BUDGET, lambda k: f"… ({k} more lines)"))
            tone = VERMILLION if any(n.broken for n in m.nodes) else GREY
            fill = TINT[VERMILLION] if tone == VERMILLION else LIGHT_GREY
            rows.append(f'<tr><td align="left" balign="left" bgcolor="{fill}" border="1" '
                        f'color="{tone}" cellpadding="6">{text}<br align="left"/></td></tr>')
        if legend:
            table = self.legend()
            if table:
                rows.append(f'<tr><td align="left">{table}</td></tr>')
        if rows:
            self.out('labelloc=t; labeljust=l; label=<<table border="0" cellspacing="4" cellpadding="0">'
                     + "".join(rows) + "</table>>;")
        # Group nodes: backward-pass clusters, then name-scope clusters inside.
        groups: dict = {}
        for n in m.nodes:
            groups.setdefault(n.backward_of, []).append(n)
        for bw, nodes in groups.items():
            depth = 1
            if bw is not None:
                recorder = sorted({t for n in nodes for t in n.tapes})
                rec = ", ".join(f"T{t}" for t in recorder) or "?"
                self.out(f"subgraph cluster_backward_{bw} {{")
                self.out(f'label=<<b>backward pass of T{bw}</b><br/><font point-size="10">recorded by {rec}: '
                         f'differentiable again</font>>; style="dashed,filled"; color="{ORANGE}"; '
                         f'fillcolor="{TINT[ORANGE]}"; fontcolor="{BLACK}"; penwidth=1.5;', 2)
                depth = 2
            self.scoped(nodes, depth)
            if bw is not None:
                self.out("}")
        for e in m.edges:
            self.edge(e)
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def title(self) -> str:
        parts = []
        tapes = self.m.tapes if self.m.selected_tape is None else [t for t in self.m.tapes
                                                                      if t.index == self.m.selected_tape]
        for t in tapes:
            bits = ["persistent" if t.persistent else "non-persistent"]
            if t.parent is not None:
                bits.append(f"inside T{t.parent}")
            if not t.watch_accessed_variables:
                bits.append("watch_accessed_variables=False")
            if t.skipped_ops:
                bits.append(f"{t.skipped_ops} op(s) skipped by stop_recording")
            state = ""
            if t.spent:
                state = f' <font color="{VERMILLION}"><b>· spent: gradient() was called, the tape cannot be reused</b></font>'
            about = esc(", ".join(bits), L.TITLE_LIMIT, "end")
            parts.append(f"<b>tape T{t.index}</b> ({about}){state}")
        return "<br align=\"left\"/>".join(parts)

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
            self.node(n, depth)
        self._scope_tree(tree, depth, "")

    def _scope_tree(self, tree, depth, prefix):
        for name, sub in tree.items():
            if name is None:
                continue
            path = f"{prefix}/{name}" if prefix else name
            cid = f"cluster_s{len(self.lines)}"  # unique and deterministic: the line number
            dimmed = all(n.dimmed for n in _all_nodes(sub))
            self.out(f"subgraph {cid} {{", depth)
            self.out(f'label=<<i>{esc(name)}</i>>; style="rounded,filled"; fillcolor="#F7F7F7"; '
                     f'color="{DIM if dimmed else GREY}"; fontcolor="{DIM if dimmed else GREY}";', depth + 1)
            for n in sub.get(None, []):
                self.node(n, depth + 1)
            self._scope_tree(sub, depth + 1, path)
            self.out("}", depth)

    # -- nodes ------------------------------------------------------------------
    def node(self, n: M.Node, depth):
        kind = n.kind
        if kind == M.VARIABLE and n.watched is None:
            kind = "variable_unwatched"
        border, fill, style, shape = STYLES.get(kind, STYLES["op"])
        fontcolor = BLACK
        penwidth = 1.3
        peripheries = 1
        if n.role == "target":
            border, penwidth = VERMILLION, 3.2
        elif n.role == "source":
            border, penwidth, peripheries = BLUE, 2.4, 2
        elif n.on_path and n.kind in (M.OP, M.SCOPE):
            border, penwidth = ORANGE, 2.6
        if n.broken:  # filled and crossed: never mistaken for the target's thick border
            border, penwidth, fill = VERMILLION, 3.2, TINT[VERMILLION]
            style = style.replace("dashed,", "") if "dashed" in style else style
            style = "bold," + (style if "filled" in style else style + ",filled")
        if n.dimmed and not n.broken:
            border, fontcolor = DIM, DIM
            fill = "#FFFFFF" if kind in ("op", "scope") else "#FAFAFA"
        label = self.label(n, fontcolor)
        attrs = [f"shape={shape}", f'style="{style}"', f'color="{border}"', f'fillcolor="{fill}"',
                 f'fontcolor="{fontcolor}"', f"penwidth={penwidth}", f"label=<{label}>",
                 f'tooltip="{L.for_dot_string(self.tooltip(n))}"']
        if peripheries != 1:
            attrs.append(f"peripheries={peripheries}")
        self.out(f"n{n.id} [{', '.join(attrs)}];", depth)

    def label(self, n: M.Node, fontcolor) -> str:
        rows = []
        dim = n.dimmed and not n.broken
        sub = DIM if dim else GREY
        if n.kind == M.SCOPE:
            rows.append(f"<b>{esc(n.label)}</b>")
            types = ", ".join(L.shorten(L.clean(t), 24) for t in n.op_types[:4])
            types = esc(types + (", …" if len(n.op_types) > 4 else ""), where="end")
            shape = esc(fmt_shape(n.shape, n.dtype), L.TITLE_LIMIT)
            rows.append(f'<font point-size="9" color="{sub}">{len(n.members)} ops: {types}</font>')
            rows.append(f'<font point-size="9" color="{sub}">out {shape}</font>')
        elif n.kind == M.NUMPY:
            rows.append(f'<b>left the package</b>')
            rows.append(f'<font point-size="9">np.asarray: the tape stops here</font>')
        else:
            title = esc(n.label)
            if n.broken:
                title = f"✗ {title}"
            if n.kind == M.SKIPPED:
                title = f"{title} <font point-size=\"9\">(skipped)</font>"
            rows.append(f"<b>{title}</b>")
            rows.append(f'<font point-size="9" color="{sub}">{esc(fmt_shape(n.shape, n.dtype), L.TITLE_LIMIT)}</font>')
        if self.values and n.value is not None and n.kind not in (M.NUMPY,):
            rows.append(f"= {esc(fmt_value(n.value, self.digits), L.TITLE_LIMIT)}")
        for key, g in n.grads.items():
            who = (f" T{key[0]}#{key[1]}" if self.many_calls else f" T{key[0]}") if self.many_grads else ""
            color = DIM if dim else VERMILLION
            rows.append(f'<font color="{color}">∂{who} {esc(fmt_value(g, self.digits), L.TITLE_LIMIT)}</font>')
        tags = self.tags(n)
        if tags:
            rows.append(f'<font point-size="8" color="{sub}">{esc(" · ".join(tags), L.TITLE_LIMIT, "end")}</font>')
        for note in n.notes:
            if n.kind == M.SCOPE:
                continue
            color = DIM if dim else VERMILLION
            text = L.for_dot_html(note, L.LINE_LIMIT, max_lines=NOTE_LINES, wrap=True, where="end")
            rows.append(f'<font point-size="8" color="{color}">{text}</font>')
        rows = _within(rows, NODE_LABEL_BUDGET,
                       lambda k: f'<font point-size="8" color="{sub}">… {k} more rows</font>')
        return "<br/>".join(rows)

    def tags(self, n: M.Node) -> list:
        tags = []
        if n.role:
            tags.append(n.role)
        if n.kind == M.VARIABLE:
            if n.watched == "auto":
                tags.append("variable, watched on read")
            elif n.watched == "explicit":
                tags.append("variable, tape.watch")
            else:
                tags.append("variable, not watched" + ("" if n.trainable else " (trainable=False)"))
        elif n.kind == M.WATCHED:
            tags.append("tape.watch")
        elif n.kind == M.CONSTANT:
            tags.append("not watched")
        if self.many_tapes and n.tapes:
            tags.append("on " + " ".join(f"T{t}" for t in n.tapes))
        return tags

    def tooltip(self, n: M.Node) -> str:
        bits = [n.label, fmt_shape(n.shape, n.dtype)]
        if n.scope:
            bits.append(f"scope {n.scope}")
        return " | ".join(bits)

    # -- edges -------------------------------------------------------------------
    def edge(self, e: M.Edge):
        attrs = []
        color, width, style = BLACK, 1.2, "solid"
        if e.kind == "skipped":
            color, style = PURPLE, "dashed"
        elif e.kind == "leave":
            color, style = VERMILLION, "dashed"
        if e.on_path:
            color, width = ORANGE, 2.6
        if e.dimmed:
            color = DIM
        if e.broken:
            color, width, style = VERMILLION, 3.0, "dashed"
            attrs.append('label=<<font color="#D55E00"><b>✗ path breaks</b></font>>')
        elif e.count > 1:
            attrs.append(f'label="×{e.count}"')
        elif self.values and e.grad is not None and e.on_path and e.grad.size <= 2:
            attrs.append(f'label=<<font color="{VERMILLION}">∂ {esc(fmt_value(e.grad, 3), L.TITLE_LIMIT)}</font>>')
        attrs += [f'color="{color}"', f"penwidth={width}"]
        if style != "solid":
            attrs.append(f"style={style}")
        self.out(f"n{e.src} -> n{e.dst} [{', '.join(attrs)}];")

    # -- legend ------------------------------------------------------------------
    def legend(self):
        present = set()
        for n in self.m.nodes:
            k = n.kind
            if k == M.VARIABLE:
                k = "variable" if n.watched else "variable_unwatched"
            present.add(k)
            if n.role:
                present.add(n.role)
            if n.on_path:
                present.add("path")
            if n.dimmed:
                present.add("dimmed")
            if n.grads:
                present.add("grad")
            if n.backward_of is not None:
                present.add("backward")
            if n.broken:
                present.add("broken")
        entries = [
            ("variable", TINT[BLUE], BLUE, "variable (watched)", ""),
            ("variable_unwatched", "#FFFFFF", BLUE, "variable, not watched", "dashed"),
            ("watched", TINT[GREEN], GREEN, "tensor passed to tape.watch", ""),
            ("constant", LIGHT_GREY, GREY, "constant: not watched", "dashed"),
            ("op", "#FFFFFF", BLACK, "op recorded on the tape", ""),
            ("skipped", TINT[PURPLE], PURPLE, "op skipped (stop_recording)", "dashed"),
            ("numpy", "#FFFFFF", VERMILLION, "left the package (NumPy)", "dashed"),
            ("scope", "#EDEDED", GREY, "folded name scope", ""),
            ("source", "#FFFFFF", BLUE, "source (double border)", ""),
            ("target", "#FFFFFF", VERMILLION, "target (thick border)", ""),
            ("path", "#FFFFFF", ORANGE, "on the path target → sources", ""),
            ("dimmed", "#FFFFFF", DIM, "not on the path (dimmed)", ""),
            ("backward", TINT[ORANGE], ORANGE, "backward pass recorded by an outer tape", "dashed"),
            ("broken", TINT[VERMILLION], VERMILLION, f"✗ {self.mark_legend}", ""),
        ]
        cells = []
        for key, fill, border, text, dash in entries:
            if key not in present:
                continue
            mark = "┄┄" if dash else "██"
            cells.append(f'<td bgcolor="{fill}" border="1" color="{border}"><font color="{border}" point-size="9">'
                         f'{mark}</font></td><td align="left"><font point-size="10">{esc(text, L.TITLE_LIMIT, "end")}</font></td>')
        if "grad" in present:
            cells.append(f'<td><font color="{VERMILLION}">∂</font></td><td align="left"><font point-size="10">'
                         'gradient of the target w.r.t. this tensor'
                         + ((" (Tk#n: tape Tk's n-th gradient call)" if self.many_calls else
                             " (Tk: tape Tk's gradient call)") if self.many_grads else "") + '</font></td>')
        if not cells:
            return ""
        per_row = 4
        rows = ["<tr>" + "".join(cells[i:i + per_row]) + "</tr>" for i in range(0, len(cells), per_row)]
        return ('<table border="0" cellborder="0" cellspacing="3" cellpadding="1">'
                + "".join(rows) + "</table>")


def _all_nodes(tree):
    for k, v in tree.items():
        if k is None:
            yield from v
        else:
            yield from _all_nodes(v)
