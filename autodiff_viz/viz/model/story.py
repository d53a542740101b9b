"""The storyboard: the forward and backward passes as steps, each saying only what changed.

:func:`build_story` is a pure function of the view model (:mod:`._model`) and
the events it was built from.  It returns plain data (JSON as it stands): the
nodes and edges to draw, and one entry per step with its title, its text and
a *delta*: the node texts, badges and gradient-table rows that this step
changes.  A player reconstructs step ``k`` by applying the deltas of steps
``0..k`` (:func:`states` does it in Python, ``animate.js`` in the browser),
so the storyboard grows linearly with the number of ops.

Glossary, as everywhere in the package: a *node* is one recorded op (or a
leaf tensor); its *rule* maps the *upstream gradient* it receives to the
gradient it sends to each input; a tensor reached by two paths *accumulates*
(``+=``) one contribution per path.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = x * x
...     g = tape.gradient(y, x)
>>> from autodiff_viz.viz.model.build import build
>>> story = build_story(tr.events, build(tr.events, subscripts=True))
>>> [s["phase"] for s in story["steps"]]
['start', 'forward', 'seed', 'backward', 'done']
>>> row = [r for r in list(states(story))[-1]["panel"] if r["name"] == "x"][0]
>>> row["terms"], row["total"]
(['3.0', '3.0'], '6.0')
"""
from __future__ import annotations


from ... import events as ev
from ..text import labels as L
from ..text import words as W
from . import forward as F
from . import graph as M
from . import window as _window
from .rule_text import rule_lines
from .story_rows import RowBook
from . import nonfinite as _nonfinite
from . import story_boxes as _boxes
from . import story_fold as _fold
from ..text.numbers import DIGITS, FULL_ITEMS, fmt_box, fmt_value, scalar


def _kind(n: M.Node) -> str:
    return "leaf" if n.is_leaf else {M.SKIPPED: "skipped", M.NUMPY: "numpy"}.get(n.kind, "op")


def _role(n: M.Node, targets: set, sources: set) -> str:
    if n._raw in targets and n.kind != M.NUMPY:
        return "target"
    if n.nonfinite:  # a NaN or an inf first appeared here (the marks of draw.look.MARKS)
        return "nonfinite"
    if n.is_leaf:
        return "source" if n.watched is not None or n._raw in sources else "constant"
    if n.kind in (M.SKIPPED, M.NUMPY):
        return n.kind
    return "rule_op" if n.backward_of is not None else "op"  # the words of draw.look.PLAYER_ROLES


class _Board:
    """The running state while steps are written; each step records only its changes."""

    def __init__(self, model: M.GraphModel, digits: int = DIGITS, max_items: int = FULL_ITEMS):
        self.model = model
        self.digits, self.max_items = digits, max_items
        self.steps: list[dict] = []
        self.delta = self._empty()
        self.settle: dict[int, str] = {}   # "+= c → total" texts this step shows: the plain total next step
        self.added: dict[int, list] = {}   # node id -> the terms this step added to its gradient, as boxes show them
        self.carry: dict[int, str] = {}

    def box(self, s) -> str:
        """A value as this storyboard's boxes show it."""
        return fmt_box(s, self.digits, self.max_items) if s is not None else ""

    def text(self, s) -> str:
        """A value as this storyboard's sentences and gradient table write it, on one line."""
        return fmt_value(s, self.digits, self.max_items)

    @staticmethod
    def _empty():
        return {"alive": [], "vals": [], "grads": [], "order": [], "panel": [], "trace": [], "reset": False,
                "results": None}

    def step(self, phase, title, node=None, recv=(), edges=(), lines=(), numbers=None):
        d = self.delta
        if self.carry and not d["reset"]:  # last step's "+=" texts settle now, unless this step set them or
            # starts a new backward pass (its boxes start empty)
            set_now = {i for i, _ in d["grads"]}
            d["grads"].extend([k, text] for k, text in self.carry.items() if k not in set_now)
        self.carry, self.settle = self.settle, {}
        entry = {"phase": phase, "title": title, "node": node, "recv": list(recv), "edges": list(edges),
                 "lines": list(lines), "numbers": _boxes.json_numbers(numbers or {})}
        for key in ("alive", "vals", "grads", "order", "panel", "trace"):
            if d[key]:
                entry[key] = d[key]
        if d["reset"]:
            entry["reset"] = True
        if d["results"] is not None:
            entry["results"] = d["results"]
        self.steps.append(entry)
        self.delta = self._empty()
        self.added = {}


def build_story(events, model: M.GraphModel, title: str | None = None, digits: int = DIGITS,
                max_items: int = FULL_ITEMS) -> dict:
    """The storyboard of ``events`` drawn with ``model`` (built from the same events, unpruned, unfolded).

    Boxes show values and gradients as a graph's boxes do (:func:`..text.numbers.fmt_box`: up to
    ``max_items`` values in full, ``digits`` significant digits); each storyboard node's ``rows``
    says how many lines its value and its gradient take at most, for the layout.

    Returns ``{"title", "nodes", "edges", "steps"}``; node ``i`` of the
    storyboard is node ``i`` of the model.
    """
    events = list(getattr(events, "events", events))
    nodes = model.nodes
    by_raw = {n._raw: n for n in nodes if n.kind not in (M.NUMPY, M.SCOPE)}
    inside = _fold.folded_outputs(nodes)   # a folded name scope: its ops' outputs -> its box
    by_raw.update({raw: n for raw, n in inside.items() if raw not in by_raw})
    last_op = _fold.last_forward(events, inside)
    folding: dict = {}                 # a folded box's run of rules so far: recv, lines, totals
    numpy_sinks = {}
    for e in model.edges:
        if e.kind == "leave":
            numpy_sinks.setdefault(nodes[e.src]._raw, []).append(e.dst)
    targets = {t for g in model.gradients for t in g.targets}
    sources = {s for g in model.gradients for s in g.sources}
    in_edges: dict[int, list[int]] = {}
    for k, e in enumerate(model.edges):
        in_edges.setdefault(e.dst, []).append(k)
    gid = [f"n{n.id}" for n in nodes]
    shown = [L.shorten(L.clean(n.label)) for n in nodes]  # user names are text of any length
    tape_no = {t.raw: t.index for t in model.tapes}
    many_tapes = len({e.tape for e in events if e.kind in ("op", "gradient_begin")}) > 1

    def label_of(tid):
        n = by_raw.get(tid)
        return shown[n.id] if n is not None else f"tensor {tid}"

    def by_label(tid):
        n = by_raw.get(tid)
        return shown[n.id] if n is not None else None

    def tape_name(t):
        return f"tape {W.tape_name(tape_no.get(t, t))}"

    board = _Board(model, digits, max_items)
    box, text = board.box, board.text
    panel: dict[int, dict] = {}   # node id -> {"terms": count, "total": text} (to know what is new)
    consumed: set[int] = set()

    def arrivals(i, tape, node, book):
        """The accumulations that event ``i`` (a pass's start, or node ``node``'s rule) made, each put in the table
        (and a Jacobian's ``book``): yields ``(node, event, table row)`` for those drawn."""
        for j in _following(events, i, tape, node):
            a = events[j]
            consumed.add(j)
            if book is not None:
                book.seen(a.tensor, a.total)
            n = by_raw.get(a.tensor)
            if n is not None and n.kind == M.SCOPE and a.tensor != n.folds[-1]:
                continue  # a gradient between a folded box's own ops: not the box's (its sum would be false)
            if n is not None:
                yield n, a, _panel_row(board, panel, n, shown[n.id], a)

    def seeds(i, tape, lines, book):
        """The seeds after event ``i`` (a backward pass's start) into the table and ``lines``; returns the node ids."""
        recv = []
        for n, a, _ in arrivals(i, tape, None, book):
            recv.append(n.id)
            lines.append(f"seed: ∂{shown[n.id]}/∂{shown[n.id]} = {text(a.contribution)}")
        return recv

    b = board.delta
    b["alive"] = [n.id for n in nodes if n.is_leaf]
    tangents = {}  # tensor id -> its tangent event (forward mode), the first accumulator's
    for e in events:
        if e.kind == "tangent":
            tangents.setdefault(e.tensor, e)
    b["vals"] = [[n.id, F.with_tangent(box(n.value), tangents.get(n._raw), text)] for n in nodes
                 if n.is_leaf and n.value is not None]
    for n in nodes:  # the evaluation trace starts with the primals
        t = tangents.get(n._raw)
        if n.is_leaf and t is not None:
            b["trace"].append(F.trace_row("t" + gid[n.id], shown[n.id], n, t, label_of))
    op_events = {}
    for e in events:
        if e.kind == "op":
            op_events.setdefault(e.node, e)
    n_forward = sum(1 for e in op_events.values() if e.during is None and e.output not in inside) + len(last_op)
    taped = any(e.kind == "tape_begin" for e in events)
    intro = ["Forward pass: each op runs and the tape records it."] if taped else []
    if tangents:
        intro.append("Forward mode: the ForwardAccumulator carries a tangent ẋ beside each value, ẏ = Σ ∂y/∂a · ȧ "
                     "over the op's inputs, in the same pass.")
    later = sum(1 for e in op_events.values() if e.during is not None)
    if later:
        intro.append(f"{later} more ops appear later: gradient rules recorded by an outer "
                     "tape.")
    intro.extend(model.remarks)
    title = L.shorten(L.clean(title), L.TITLE_LIMIT, "end") if title else None
    default = "Forward and backward pass, step by step" if taped else "Forward mode, step by step"
    if not nodes:  # words, never an empty player
        intro, default = [W.NOTHING_DRAWN], "Nothing to show"
    board.step("start", title or default, lines=intro)

    origins = {(o.phase, o.node): o for o in _nonfinite.origins(events)}
    seen_ops: set[int] = set()
    fwd_count = 0
    book = None  # a jacobian call's rows (one backward pass each), while one runs
    for i, e in enumerate(events):
        if i in consumed:
            continue
        kind = e.kind
        if kind == "op":
            if e.node in seen_ops:
                continue
            seen_ops.add(e.node)
            node = by_raw[e.output]
            folded = e.output in inside
            if folded and last_op.get(node.id) != e.output:
                continue  # a folded box is one step, at its last op
            b = board.delta
            b["alive"].append(node.id)
            t = tangents.get(e.output)
            b["vals"].append([node.id, F.with_tangent(box(e.value), t, text)])
            args = ", ".join(label_of(t) + (f" = {text(v)}" if v is not None and text(v) != label_of(t)
                                            else "") for t, v in zip(e.inputs, e.in_values))
            lines = [f"{W.op_name(e.op_type, e.attrs)}({args})", f"= {text(e.value)}"]
            if e.shape:
                lines.append(f"shape {tuple(e.shape)}, {e.dtype}")
            lines += _window.player_lines(node)
            if ("forward", e.node) in origins:
                lines.append(_nonfinite.note(origins["forward", e.node]))
            if e.during is None:
                fwd_count += 1
                head = f"Forward {fwd_count}/{n_forward}: " + (_fold.folded_title(node, shown[node.id]) if folded
                                                              else shown[node.id])
                if folded:
                    lines = [f"{len(node.members)} ops of name scope {shown[node.id]} ran; its last gave",
                             f"= {text(e.value)}", "(collapse=False shows each op)"]
                    lines += [_nonfinite.note(o) for (phase, _), o in origins.items()
                              if phase != "backward" and inside.get(o.output) is node]
            elif F.is_forward(model, e.tape):  # only a ForwardAccumulator saw it: it pushes the tangent through
                head = f"Run while {tape_name(e.during)} computes gradients: {shown[node.id]}"
            else:
                head = f"Recorded while {tape_name(e.during)} computes gradients: {shown[node.id]}"
                lines.append("An outer tape records the rule's ops, so it can differentiate them later.")
            numbers = None
            if t is not None:
                if not (folded and e.during is None):  # (a folded box's step keeps its summary and causes: its
                    # last op's tangent rule would name the box itself as that op's input)
                    rule = F.tangent_lines(e, t, by_label)
                    lines = rule[:1] + [f"y = {text(e.value)}"] + lines[2:] + rule[1:]
                    if ("tangent", e.node) in origins:
                        lines.append(_nonfinite.note(origins["tangent", e.node]))
                b["trace"].append(F.trace_row("t" + gid[node.id], shown[node.id], e, t, label_of))
                numbers = {"tangent": scalar(t.tangent), "terms": [scalar(v) for v in t.terms]}
            board.step("forward", head, node=gid[node.id], edges=in_edges.get(node.id, []), lines=lines,
                       numbers=numbers)
        elif kind == "op_skipped":
            node = by_raw.get(e.output)
            if node is None:
                continue
            board.delta["alive"].append(node.id)
            board.delta["vals"].append([node.id, box(e.value)])
            board.step("forward", f"Not recorded: {shown[node.id]}", node=gid[node.id],
                       edges=in_edges.get(node.id, []),
                       lines=[f"{e.op_type} ran under {e.reason}: the tape did not record it,",
                              "so no gradient flows back through it."])
        elif kind == "leave":
            sinks = numpy_sinks.get(e.tensor, [])
            if not sinks:
                continue
            sink = sinks.pop(0)
            board.delta["alive"].append(sink)
            board.step("forward", f"{label_of(e.tensor)} left the package", node=gid[sink],
                       edges=in_edges.get(sink, []),
                       lines=[f"{label_of(e.tensor)} {W.leave_words(e.how)}: the tape cannot see what "
                              "is done with it,", "so gradients stop here."])
        elif kind == "gradient_begin":
            panel.clear()
            b = board.delta
            b["reset"] = True
            b["results"] = []
            lines = [f"{tape_name(e.tape)}.{e.method}(target, sources): the backward pass starts.",
                     "The tape runs its records in reverse: a node's rule runs only after every",
                     "path from the target has delivered its contribution (reverse topological order)."]
            book = RowBook.of(e, label_of, digits, max_items)
            if book is not None:
                lines[0] = (f"{tape_name(e.tape)}.{e.method}(target, sources): one backward pass per element of "
                            "the target, each giving one row of the Jacobian.")
            recv = seeds(i, e.tape, lines, book)
            head = f"Backward pass of {tape_name(e.tape)} begins" if many_tapes else "Backward pass begins"
            board.step("seed", head, recv=[gid[k] for k in recv], lines=lines)
        elif kind == "gradient_row":
            if book is None:
                continue
            head = book.begin(e)
            b = board.delta
            panel.clear()
            b["reset"], b["results"] = True, book.matrix()  # a new pass: its sums start again
            lines = book.lines()
            recv = seeds(i, e.tape, lines, book)
            board.step("seed", head + (f" ({tape_name(e.tape)})" if many_tapes else ""),
                       recv=[gid[k] for k in recv], lines=lines)
        elif kind == "backward_step":
            op = op_events.get(e.node)
            node = by_raw.get(e.output)
            if op is None or node is None:
                continue
            folded = e.output in inside
            run = folding.setdefault(node.id, {"recv": [], "lines": [], "totals": {}, "count": 0}) if folded else None
            lines, numbers = rule_lines(op, e, label_of, text, digits)
            for phase in ("backward", "sum"):
                if (phase, e.node) in origins:
                    lines.append(_nonfinite.note(origins[phase, e.node]))
                    if run is not None:  # a folded box's step says what its rules found
                        run.setdefault("notes", []).append(lines[-1])
            recv, acc_lines, totals = ([], [], {}) if run is None else (run["recv"], run["lines"], run["totals"])
            with _fold.aside(board, run):  # a folded box's changes wait for its one step
                if run is None or not run["count"]:
                    board.delta["order"].append([node.id, str(e.step)])
                for n, a, row in arrivals(i, e.tape, e.node, book):
                    if n is node:
                        continue  # inside a folded box: a gradient between its own ops
                    if a.count > 1:  # the earlier terms, when left out, are said to be: "… + c + d = total"
                        acc_lines.append(f"{shown[n.id]}: reached again, += {text(a.contribution)}: "
                                         f"{'… + ' if len(row['terms']) > 4 else ''}"
                                         f"{' + '.join(row['terms'][-4:])} = {text(a.total)}")
                    recv.append(n.id)
                    totals[shown[n.id]] = text(a.total)
            numbers["totals"] = totals
            acc_lines = _window.player_lines(node, e.seq) + acc_lines
            active = [k for k in in_edges.get(node.id, []) if model.edges[k].kind == "data"
                      and model.edges[k].index < len(e.grads) and e.grads[model.edges[k].index] is not None]
            if run is not None:
                run["count"] += 1
                run["first"] = run.get("first", e.step)
                if _fold.run_continues(events, i, node, inside):
                    continue  # its deltas wait for the box's one step
                _fold.release(board, folding.pop(node.id))
                lines = [f"{run['count']} rules of name scope {shown[node.id]} ran, from its output back to its "
                         "inputs", "(collapse=False shows each rule)", *run.get("notes", ())]
                numbers = {"upstream": None, "local": [], "sent": [], "totals": totals}
                got = set(recv)  # the arrows into the box from what its rules sent to
                active = [k for k in in_edges.get(node.id, []) if model.edges[k].kind == "data"
                          and model.edges[k].src in got]
            row_tag = book.tag() if book is not None else ""
            head = (f"Backward step {run['first'] if run else e.step}{row_tag}: "
                    + (_fold.folded_title(node, shown[node.id]) if run else shown[node.id])
                    + (f" ({tape_name(e.tape)})" if many_tapes else ""))
            board.step("backward", head, node=gid[node.id], recv=[gid[k] for k in recv], edges=active,
                       lines=lines + acc_lines, numbers=numbers)
        elif kind == "gradient_end":
            results = [f"∂target/∂{label_of(t)} = {text(r) if r is not None else 'None'}"
                       for t, r in zip(e.sources, e.results)]
            done = f"Done: gradients of {tape_name(e.tape)}"
            if book is not None:
                book.finish()
                results = [r.replace("∂target/", f"∂{book.target}/", 1) for r in results]
                done = f"Done: the Jacobian from {tape_name(e.tape)}'s {book.rows} backward passes"
                board.delta["results"] = book.matrix() + results
                key = (tape_no.get(e.tape), book.call)
                # the boxes now show every row (the model stacks them), not the last pass's
                board.delta["grads"].extend([n.id, box(n.grads[key])] for n in nodes if key in n.grads)
                book = None
            else:
                board.delta["results"] = results
            recv = [gid[by_raw[t].id] for t, r in zip(e.sources, e.results) if r is not None and t in by_raw]
            board.step("done", done, lines=results or ["(no sources)"], recv=recv)
        elif kind == "forward_end":
            last = next((a for a in reversed(events[:i]) if a.kind == "tangent" and a.tape == e.tape and a.inputs),
                        None)
            lines = ["Every value now carries its tangent: one forward pass gave the derivative of every value",
                     "along the direction given (a Jacobian-vector product)."]
            if last is not None:
                lines.append(f"acc.jvp({label_of(last.tensor)}) = {text(last.tangent)}")
            inside = sorted({a.during for a in events[:i] if a.kind == "op" and a.tape == e.tape
                             and a.during is not None})
            if inside:  # forward over backward
                lines.append(f"The backward pass of {', '.join(tape_name(t) for t in inside)} ran inside the "
                             "accumulator: the tangent of a gradient is a Hessian-vector product H·v.")
            board.step("done", "Done: the forward pass carried the tangents", lines=lines)
        elif kind == "state":
            n = by_raw.get(e.variable)
            name = L.shorten(L.clean((e.name or "variable").split(":")[0]))
            if n is not None:
                board.delta["vals"].append([n.id, box(e.value)])
            board.step("update", f"{name} updated ({e.how})", node=gid[n.id] if n is not None else None,
                       lines=[f"{name} ← {text(e.value)}",
                              "State changes are not recorded: the next step starts a new tape."])
    rows = _boxes.rows(board.steps, len(nodes))
    return {
        "title": title or "Automatic differentiation, step by step",
        "nodes": [{"id": gid[n.id], "kind": _kind(n), "label": shown[n.id], "role": _role(n, targets, sources),
                   "box": n.box, "rows": rows[n.id],
                   "op": n.op or shown[n.id], "shape": list(n.shape),
                   "tensor": n.folds[-1] if n.kind == M.SCOPE and n.folds else n._raw,
                   **({"primal": True} if n.watched == "primal" else {})}  # (forward mode's primals only)
                  for n in nodes],
        "edges": [{"id": f"e{k}", "from": gid[e.src], "to": gid[e.dst], "input": e.index, "kind": e.kind,
                   "label": W.slot(e.index) if len(in_edges.get(e.dst, ())) > 1 and e.kind == "data"
                   and nodes[e.dst].kind != M.SCOPE else ""}
                  for k, e in enumerate(model.edges)],
        "steps": board.steps,
    }


def _following(events, i, tape, node):
    """Indices of the ``accumulate`` events that belong to event ``i`` (a seed, or a node's rule).

    An outer tape may record the inner tape's ``+=`` as an ``op`` event in
    between; those are skipped over here (they get their own step).
    """
    j = i + 1
    while j < len(events):
        a = events[j]
        if a.kind == "accumulate" and a.tape == tape and a.node == node:
            yield j
        elif not (a.kind == "op" and a.during is not None):
            return
        j += 1


def _panel_row(board: _Board, panel: dict, n: M.Node, name: str, a: ev.Accumulate) -> dict:
    """Add an accumulation to the gradient table and the node's text; returns the row."""
    row = panel.setdefault(n.id, {"terms": []})
    row["terms"].append(board.text(a.contribution))
    total, short, term = board.text(a.total), board.box(a.total), board.box(a.contribution)
    board.delta["panel"].append({"key": f"n{n.id}", "name": name, "term": row["terms"][-1], "total": total,
                                 "count": a.count})
    # The box shows what this step added to it: every term (a rule can send one input two terms, x · x), so
    # that the total it showed before plus the terms written is the total written.
    terms = board.added.setdefault(n.id, [])
    terms.append(term)
    grads = board.delta["grads"]
    if len(terms) > 1:
        grads[:] = [entry for entry in grads if entry[0] != n.id]
    if a.count > 1:  # shown once as "+=", then settles into the running total
        sep = "\n" if "\n" in "".join(terms) + short else " "
        grads.append([n.id, f"+= {(sep + '+ ').join(terms)}{sep}→ {short}"])
        board.settle[n.id] = short
    else:
        grads.append([n.id, short])
    return row


# ---------------------------------------------------------------------------
# Reading a storyboard back: every step in full
# ---------------------------------------------------------------------------
def _replay(story: dict):
    """Apply the steps' deltas in order; yield ``(step, state, fresh)`` with the one state being updated."""
    n = len(story["nodes"])
    state = {"alive": [0] * n, "vals": [""] * n, "grads": [""] * n, "order": [""] * n, "panel": {}, "trace": {},
             "results": []}
    for st in story["steps"]:
        if st.get("reset"):
            state.update(grads=[""] * n, order=[""] * n, panel={}, results=[])
        for k in st.get("alive", ()):
            state["alive"][k] = 1
        for key in ("vals", "grads", "order"):
            column = state[key]
            for k, text in st.get(key, ()):
                column[k] = text
        fresh = set()
        for r in st.get("trace", ()):  # (a gradient call's reset leaves the evaluation trace as it is)
            state["trace"][r["key"]] = dict(r)
            fresh.add(r["key"])
        for r in st.get("panel", ()):
            row = state["panel"].setdefault(r["key"], {"name": r["name"], "terms": [], "total": "", "count": 0})
            row["terms"].append(r["term"])
            row["total"], row["count"] = r["total"], r["count"]
            fresh.add(r["key"])
        if "results" in st:
            state["results"] = list(st["results"])
        yield st, state, fresh


def final_state(story: dict) -> dict:
    """The state after the last step (``alive``, ``vals``, ``grads``, ``order``, ``panel`` by row key,
    ``results``), without copying every step on the way: linear in the storyboard's size."""
    state = None
    for _, state, _ in _replay(story):
        pass
    return state


def states(story: dict):
    """Yield each step's full state: the step's own fields plus ``alive``, ``vals``, ``grads``,
    ``order`` (one entry per node), ``panel`` (rows with all their terms, ``fresh`` for rows this
    step touched) and ``results``.

    The yielded dicts are fresh copies, safe to keep.
    """
    for st, state, fresh in _replay(story):
        full = {k: v for k, v in st.items() if k not in ("alive", "vals", "grads", "order", "panel", "trace", "reset")}
        full.update(alive=list(state["alive"]), vals=list(state["vals"]), grads=list(state["grads"]),
                    order=list(state["order"]), results=list(state["results"]),
                    panel=[dict(row, terms=list(row["terms"]), fresh=key in fresh)
                           for key, row in state["panel"].items()],
                    trace=[dict(row, fresh=key in fresh) for key, row in state["trace"].items()])
        yield full


def state_at(story: dict, i: int) -> dict:
    """Step ``i`` in full (see :func:`states`)."""
    if not -len(story["steps"]) <= i < len(story["steps"]):
        raise IndexError(f"step {i} of {len(story['steps'])}")
    i %= len(story["steps"])
    for k, st in enumerate(states(story)):
        if k == i:
            return st
    raise AssertionError("unreachable")  # pragma: no cover
