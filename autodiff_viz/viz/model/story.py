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
from ..._shape import broadcast_axes
from ..text import labels as L
from ..text import words as W
from . import graph as M
from . import story_fold as F
from ..text.numbers import DIGITS, FULL_ITEMS, fmt_box, fmt_number, fmt_value, scalar


def local_derivative(upstream, sent):
    """What a rule multiplied the upstream gradient by, read off the step (sent ÷ upstream; scalars only)."""
    u, g = scalar(upstream), scalar(sent)
    return g / u if g is not None and u not in (None, 0.0) else None


def _kind(n: M.Node) -> str:
    return "leaf" if n.is_leaf else {M.SKIPPED: "skipped", M.NUMPY: "numpy"}.get(n.kind, "op")


def _role(n: M.Node, targets: set, sources: set) -> str:
    if n._raw in targets and n.kind != M.NUMPY:
        return "target"
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
        self.carry: dict[int, str] = {}

    def box(self, s) -> str:
        """A value as this storyboard's boxes show it."""
        return fmt_box(s, self.digits, self.max_items) if s is not None else ""

    def text(self, s) -> str:
        """A value as this storyboard's sentences and gradient table write it, on one line."""
        return fmt_value(s, self.digits, self.max_items)

    @staticmethod
    def _empty():
        return {"alive": [], "vals": [], "grads": [], "order": [], "panel": [], "reset": False, "results": None}

    def step(self, phase, title, node=None, recv=(), edges=(), lines=(), numbers=None):
        d = self.delta
        if self.carry:  # last step's "+=" texts settle now, unless this step set them
            set_now = {i for i, _ in d["grads"]}
            d["grads"].extend([k, text] for k, text in self.carry.items() if k not in set_now)
        self.carry, self.settle = self.settle, {}
        entry = {"phase": phase, "title": title, "node": node, "recv": list(recv), "edges": list(edges),
                 "lines": list(lines), "numbers": numbers or {}}
        for key in ("alive", "vals", "grads", "order", "panel"):
            if d[key]:
                entry[key] = d[key]
        if d["reset"]:
            entry["reset"] = True
        if d["results"] is not None:
            entry["results"] = d["results"]
        self.steps.append(entry)
        self.delta = self._empty()


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
    inside = F.folded_outputs(nodes)   # a folded name scope: its ops' outputs -> its box
    by_raw.update({raw: n for raw, n in inside.items() if raw not in by_raw})
    last_op = F.last_forward(events, inside)
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

    def tape_name(t):
        return f"tape {W.tape_name(tape_no.get(t, t))}"

    board = _Board(model, digits, max_items)
    box, text = board.box, board.text
    b = board.delta
    b["alive"] = [n.id for n in nodes if n.is_leaf]
    b["vals"] = [[n.id, box(n.value)] for n in nodes if n.is_leaf and n.value is not None]
    op_events = {}
    for e in events:
        if e.kind == "op":
            op_events.setdefault(e.node, e)
    n_forward = sum(1 for e in op_events.values() if e.during is None and e.output not in inside) + len(last_op)
    intro = ["Forward pass: each op runs and the tape records it."]
    later = sum(1 for e in op_events.values() if e.during is not None)
    if later:
        intro.append(f"{later} more ops appear later: gradient rules recorded by an outer "
                     "tape.")
    intro.extend(model.remarks)
    title = L.shorten(L.clean(title), L.TITLE_LIMIT, "end") if title else None
    board.step("start", title or "Forward and backward pass, step by step", lines=intro)

    panel: dict[int, dict] = {}   # node id -> {"terms": count, "total": text} (to know what is new)
    seen_ops: set[int] = set()
    consumed: set[int] = set()
    fwd_count = 0
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
            b["vals"].append([node.id, box(e.value)])
            args = ", ".join(label_of(t) + (f" = {text(v)}" if v is not None and text(v) != label_of(t)
                                            else "") for t, v in zip(e.inputs, e.in_values))
            lines = [f"{W.op_name(e.op_type, e.attrs)}({args})", f"= {text(e.value)}"]
            if e.shape:
                lines.append(f"shape {tuple(e.shape)}, {e.dtype}")
            if e.during is None:
                fwd_count += 1
                head = f"Forward {fwd_count}/{n_forward}: " + (F.folded_title(node, shown[node.id]) if folded
                                                              else shown[node.id])
                if folded:
                    lines = [f"{len(node.members)} ops of name scope {shown[node.id]} ran; its last gave",
                             f"= {text(e.value)}", "(collapse=False shows each op)"]
            else:
                head = f"Recorded while {tape_name(e.during)} computes gradients: {shown[node.id]}"
                lines.append("An outer tape records the rule's ops, so it can differentiate them later.")
            board.step("forward", head, node=gid[node.id], edges=in_edges.get(node.id, []), lines=lines)
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
                       lines=[f"{label_of(e.tensor)} became a NumPy array ({e.how}): the tape cannot see what "
                              "NumPy does with it,", "so gradients stop here."])
        elif kind == "gradient_begin":
            panel.clear()
            b = board.delta
            b["reset"] = True
            b["results"] = []
            lines = [f"{tape_name(e.tape)}.{e.method}(target, sources): the backward pass starts.",
                     "The tape runs its records in reverse: a node's rule runs only after every",
                     "path from the target has delivered its contribution (reverse topological order)."]
            recv = []
            for j in _following(events, i, e.tape, None):
                a = events[j]
                consumed.add(j)
                n = by_raw.get(a.tensor)
                if n is None:
                    continue
                _panel_row(board, panel, n, shown[n.id], a)
                recv.append(n.id)
                lines.append(f"seed: ∂{shown[n.id]}/∂{shown[n.id]} = {text(a.contribution)}")
            head = f"Backward pass of {tape_name(e.tape)} begins" if many_tapes else "Backward pass begins"
            board.step("seed", head, recv=[gid[k] for k in recv], lines=lines)
        elif kind == "backward_step":
            op = op_events.get(e.node)
            node = by_raw.get(e.output)
            if op is None or node is None:
                continue
            folded = e.output in inside
            run = folding.setdefault(node.id, {"recv": [], "lines": [], "totals": {}, "count": 0}) if folded else None
            if run is None or not run["count"]:
                board.delta["order"].append([node.id, str(e.step)])
            lines, numbers = _rule_lines(op, e, label_of, text, digits)
            recv, acc_lines, totals = ([], [], {}) if run is None else (run["recv"], run["lines"], run["totals"])
            for j in _following(events, i, e.tape, e.node):
                a = events[j]
                consumed.add(j)
                n = by_raw.get(a.tensor)
                if n is None:
                    continue
                if n is node:
                    continue  # inside a folded box: a gradient between its own ops
                row = _panel_row(board, panel, n, shown[n.id], a)
                if a.count > 1:
                    acc_lines.append(f"{shown[n.id]}: reached again, += {text(a.contribution)}: "
                                     f"{' + '.join(row['terms'][-4:])}{' …' if len(row['terms']) > 4 else ''}"
                                     f" = {text(a.total)}")
                recv.append(n.id)
                totals[shown[n.id]] = text(a.total)
            numbers["totals"] = totals
            active = [k for k in in_edges.get(node.id, []) if model.edges[k].kind == "data"
                      and model.edges[k].index < len(e.grads) and e.grads[model.edges[k].index] is not None]
            if run is not None:
                run["count"] += 1
                run["first"] = run.get("first", e.step)
                if F.run_continues(events, i, node, inside):
                    continue  # its deltas wait for the box's one step
                folding.pop(node.id)
                lines = [f"{run['count']} rules of name scope {shown[node.id]} ran, from its output back to its "
                         "inputs", "(collapse=False shows each rule)"]
                numbers = {"upstream": None, "local": [], "sent": [], "totals": totals}
                got = set(recv)  # the arrows into the box from what its rules sent to
                active = [k for k in in_edges.get(node.id, []) if model.edges[k].kind == "data"
                          and model.edges[k].src in got]
            head = (f"Backward step {run['first'] if run else e.step}: "
                    + (F.folded_title(node, shown[node.id]) if run else shown[node.id])
                    + (f" ({tape_name(e.tape)})" if many_tapes else ""))
            board.step("backward", head, node=gid[node.id], recv=[gid[k] for k in recv], edges=active,
                       lines=lines + acc_lines, numbers=numbers)
        elif kind == "gradient_end":
            results = [f"∂target/∂{label_of(t)} = {text(r) if r is not None else 'None'}"
                       for t, r in zip(e.sources, e.results)]
            board.delta["results"] = results
            recv = [gid[by_raw[t].id] for t, r in zip(e.sources, e.results) if r is not None and t in by_raw]
            board.step("done", f"Done: gradients of {tape_name(e.tape)}", lines=results or ["(no sources)"],
                       recv=recv)
        elif kind == "state":
            n = by_raw.get(e.variable)
            name = L.shorten(L.clean((e.name or "variable").split(":")[0]))
            if n is not None:
                board.delta["vals"].append([n.id, box(e.value)])
            board.step("update", f"{name} updated ({e.how})", node=gid[n.id] if n is not None else None,
                       lines=[f"{name} ← {text(e.value)}",
                              "State changes are not recorded: the next step starts a new tape."])
    rows = _rows(board.steps, len(nodes))
    return {
        "title": title or "Automatic differentiation, step by step",
        "nodes": [{"id": gid[n.id], "kind": _kind(n), "label": shown[n.id], "role": _role(n, targets, sources),
                   "box": n.box, "rows": rows[n.id],
                   "op": n.op or shown[n.id], "shape": list(n.shape),
                   "tensor": n.folds[-1] if n.kind == M.SCOPE and n.folds else n._raw}
                  for n in nodes],
        "edges": [{"id": f"e{k}", "from": gid[e.src], "to": gid[e.dst], "input": e.index, "kind": e.kind,
                   "label": W.slot(e.index) if len(in_edges.get(e.dst, ())) > 1 and e.kind == "data"
                   and nodes[e.dst].kind != M.SCOPE else ""}
                  for k, e in enumerate(model.edges)],
        "steps": board.steps,
    }


def _rows(steps, n: int) -> list:
    """Per node: ``[value lines, gradient lines, widest line]`` over every step (how large its box is)."""
    rows = [[1, 1, 0] for _ in range(n)]
    for st in steps:
        for col, key in enumerate(("vals", "grads")):
            for k, text in st.get(key, ()):
                parts = text.split("\n")
                r = rows[k]
                r[col] = max(r[col], len(parts))
                # a one-step "+= c → total" line is squeezed to the box, not widened for; a value in
                # words widens it to 80% of its length (the renderers shrink text to 80% before cutting it)
                r[2] = max(r[2], max((len(p) if len(parts) > 1 or " values, mean " not in p else int(0.8 * len(p) + 1)
                                      for p in parts if len(parts) > 1 or not p.startswith("+= ")), default=0))
    return rows


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
    if a.count > 1:  # shown once as "+=", then settles into the running total
        board.delta["grads"].append([n.id, f"+= {term} → {short}" if "\n" not in term + short
                                     else f"+= {term}\n→ {short}"])
        board.settle[n.id] = short
    else:
        board.delta["grads"].append([n.id, short])
    return row


def _rule_lines(op: ev.Op, step: ev.BackwardStep, label_of, text=fmt_value, digits: int = DIGITS):
    """The local rule with its numbers, one line per input that receives a gradient.

    The formula and partial derivatives come from the op event (the table of
    primitives); the local derivative's value is read off the step itself
    (what was sent divided by what came in), so it is what the rule computed.
    Returns (lines, numbers) where numbers holds upstream, local derivatives
    and sent gradients as floats (None where not a scalar) for tests and plots.
    """
    expr, partials = op.formula, op.partials
    up = step.upstream
    u = scalar(up)
    numbers = {"upstream": u, "local": [], "sent": []}
    vals = [scalar(v) for v in op.in_values]
    where = ", ".join(W.operand(i, label_of(tid), fmt_number(vals[i], digits) if vals[i] is not None else "")
                      for i, tid in enumerate(op.inputs))
    lines = [W.formula(W.op_name(op.op_type, op.attrs), expr) + (f"   with {where}" if where else ""),
             f"upstream gradient = {text(up)}"]
    for i, (tid, g) in enumerate(zip(op.inputs, step.grads)):
        sym = partials[i] if i < len(partials) else None
        local = local_derivative(up, g)
        numbers["local"].append(local)
        numbers["sent"].append(scalar(g))
        if g is None:
            lines.append(W.nothing_sent(label_of(tid)))
            continue
        head, tail = W.rule_sentence(W.partial_name(expr, W.op_name(op.op_type, op.attrs), i), sym, local, text(up), text(g),
                                     label_of(tid))
        lines += [head, "   " + tail] if head else [tail]
        shape = tuple(op.in_shapes[i]) if i < len(op.in_shapes) else None
        axes = stretched_axes(shape, tuple(up.shape)) if shape is not None and up is not None else ()
        if axes and tuple(g.shape) == shape:
            lines.append(W.broadcast_sentence(label_of(tid), shape, up.shape, axes))
    return lines, numbers


def stretched_axes(shape: tuple, upstream: tuple) -> tuple:
    """The axes of ``upstream`` that broadcasting stretched ``shape`` along (summed back for its gradient).

    The tape's own rule (:func:`autodiff_viz._shape.broadcast_axes`), less the axes of length 1 (nothing
    was copied along them); empty when ``shape`` does not broadcast to ``upstream`` (a matmul, a reduction).

    >>> stretched_axes((3,), (2, 3)), stretched_axes((2, 1), (2, 4)), stretched_axes((2, 3), (3,))
    ((0,), (1,), ())
    >>> stretched_axes((3,), (1, 3))
    ()
    """
    return tuple(a for a in broadcast_axes(shape, upstream) or () if upstream[a] != 1)


# ---------------------------------------------------------------------------
# Reading a storyboard back: every step in full
# ---------------------------------------------------------------------------
def _replay(story: dict):
    """Apply the steps' deltas in order; yield ``(step, state, fresh)`` with the one state being updated."""
    n = len(story["nodes"])
    state = {"alive": [0] * n, "vals": [""] * n, "grads": [""] * n, "order": [""] * n, "panel": {}, "results": []}
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
        full = {k: v for k, v in st.items() if k not in ("alive", "vals", "grads", "order", "panel", "reset")}
        full.update(alive=list(state["alive"]), vals=list(state["vals"]), grads=list(state["grads"]),
                    order=list(state["order"]), results=list(state["results"]),
                    panel=[dict(row, terms=list(row["terms"]), fresh=key in fresh)
                           for key, row in state["panel"].items()])
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
