"""Step through the forward and backward passes: a storyboard built from trace events.

The storyboard is plain data (a dict that is JSON as it stands): the graph's
nodes and edges, laid out once, and one entry per step holding everything
that step shows (which node is current, every node's value and gradient
text, the rule with its numbers, the gradients accumulated so far).  The
browser widget, the self-contained HTML page and the GIF/MP4 frames all draw
from the same storyboard, so they cannot disagree.

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
>>> anim = ad.viz.animate(tr)
>>> anim.steps[-1]["title"]
'Done: gradients of tape T1'
"""
from __future__ import annotations

import json
import math
import os

import numpy as np

from .. import events as ev
from . import _source
from ._layout import layout, NODE_W, NODE_H, MAX_LR_RANKS  # noqa: F401
from ._plots import OKABE_ITO

# ---------------------------------------------------------------------------
# Local derivative rules, as the steps print them
# ---------------------------------------------------------------------------
# op type -> (expression in the placeholder inputs a, b; per input: (symbolic
# partial derivative, its value from the scalar inputs or None)).
_RULES = {
    "Add": ("a + b", (("1", lambda a, b: 1.0), ("1", lambda a, b: 1.0))),
    "AddV2": ("a + b", (("1", lambda a, b: 1.0), ("1", lambda a, b: 1.0))),
    "Sub": ("a − b", (("1", lambda a, b: 1.0), ("−1", lambda a, b: -1.0))),
    "Mul": ("a·b", (("b", lambda a, b: b), ("a", lambda a, b: a))),
    "RealDiv": ("a / b", (("1/b", lambda a, b: 1.0 / b), ("−a/b²", lambda a, b: -a / b ** 2))),
    "Neg": ("−a", (("−1", lambda a: -1.0),)),
    "Square": ("a²", (("2a", lambda a: 2.0 * a),)),
    "Sqrt": ("√a", (("1/(2√a)", lambda a: 0.5 / math.sqrt(a)),)),
    "Pow": ("a^b", (("b·a^(b−1)", lambda a, b: b * a ** (b - 1)),
                    ("a^b·ln a", lambda a, b: a ** b * math.log(a) if a > 0 else None))),
    "SquaredDifference": ("(a − b)²", (("2(a − b)", lambda a, b: 2.0 * (a - b)),
                                       ("−2(a − b)", lambda a, b: -2.0 * (a - b)))),
    "Exp": ("exp(a)", (("exp(a)", lambda a: math.exp(a)),)),
    "Log": ("log(a)", (("1/a", lambda a: 1.0 / a),)),
    "Log1p": ("log(1 + a)", (("1/(1 + a)", lambda a: 1.0 / (1.0 + a)),)),
    "Sin": ("sin(a)", (("cos(a)", lambda a: math.cos(a)),)),
    "Cos": ("cos(a)", (("−sin(a)", lambda a: -math.sin(a)),)),
    "Tan": ("tan(a)", (("1/cos²(a)", lambda a: 1.0 / math.cos(a) ** 2),)),
    "Tanh": ("tanh(a)", (("1 − tanh²(a)", lambda a: 1.0 - math.tanh(a) ** 2),)),
    "Sigmoid": ("σ(a)", (("σ(a)·(1 − σ(a))", lambda a: _sig(a) * (1.0 - _sig(a))),)),
    "Relu": ("relu(a)", (("1 if a > 0 else 0", lambda a: 1.0 if a > 0 else 0.0),)),
    "Softplus": ("log(1 + eᵃ)", (("σ(a)", lambda a: _sig(a)),)),
    "Abs": ("|a|", (("sign(a)", lambda a: float(np.sign(a))),)),
    "Identity": ("a", (("1", lambda a: 1.0),)),
    "Maximum": ("max(a, b)", (("1 where a wins, else 0", None), ("1 where b wins, else 0", None))),
    "Minimum": ("min(a, b)", (("1 where a wins, else 0", None), ("1 where b wins, else 0", None))),
    "Sum": ("Σ a", (("1 for every element", None),)),
    "Mean": ("mean(a)", (("1/n for every element", None),)),
    "MatMul": ("A @ B", (("upstream @ Bᵀ", None), ("Aᵀ @ upstream", None))),
    "AddN": ("a + b + …", (("1", None),) * 8),
}


def _sig(a):
    return 1.0 / (1.0 + math.exp(-a))


_LETTERS = "abcdefgh"


# ---------------------------------------------------------------------------
# Number formatting (one place, so every view prints the same text)
# ---------------------------------------------------------------------------
def fmt_number(v) -> str:
    """``3.0``, ``-0.9111``, ``1.5e-07``: short, and integers keep their ``.0``."""
    if v is None:
        return "None"
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    if v == int(v) and abs(v) < 1e6:
        return f"{v:.1f}"
    if 1e-3 <= abs(v) < 1e5:
        return f"{v:.4g}"
    return f"{v:.3g}"


def fmt_summary(s) -> str:
    """A value summary in a few characters: ``3.0``, ``[1.0, 2.0]``, ``(4, 3) mean 0.12``."""
    if s is None:
        return "None"
    if s.size == 1:
        return fmt_number(s.head[0])
    if s.complete and s.size <= 4:
        return "[" + ", ".join(fmt_number(v) for v in s.head) + "]"
    shape = "×".join(str(d) for d in s.shape)
    return f"{shape}, mean {fmt_number(s.mean)}"


def fmt_short(s) -> str:
    """A value as a node shows it (it must fit a box): ``3.0``, ``[1.0, 2.0]``, ``2×3 μ 0.12``."""
    if s is None:
        return "None"
    if s.size == 1 or (s.complete and s.size <= 2):
        return fmt_summary(s) if s.size == 1 else "[" + ", ".join(f"{v:.3g}" for v in s.head) + "]"
    return "×".join(str(d) for d in s.shape) + f" μ {s.mean:.3g}"


def _scalar(s):
    return float(s.head[0]) if s is not None and s.size == 1 else None


def _number(s):
    """A number to plot for a value: the value itself, or the mean of an array."""
    if s is None:
        return None
    if s.size == 1:
        return float(s.head[0])
    return None if s.mean is None else float(s.mean)


# ---------------------------------------------------------------------------
# Which events belong to the picture
# ---------------------------------------------------------------------------
def _events_of(source):
    """The events to animate: from a trace, a list of events, or a tape."""
    if isinstance(source, ev.Trace):
        return list(source.events)
    if isinstance(source, (list, tuple)) and all(isinstance(e, ev.Event) for e in source):
        return list(source)
    if _source.rec.is_tape(source):
        return _source.events_of(source, family=True).events
    raise TypeError(f"animate() takes a trace, a GradientTape or a function, got {type(source).__name__}")


def _family(events, tid):
    """Events of one tape and of the tapes nested in it or around it (a second derivative needs both)."""
    links: dict[int, set] = {}
    for e in events:
        if e.kind == "tape_begin" and e.parent is not None:
            links.setdefault(e.tape, set()).add(e.parent)
            links.setdefault(e.parent, set()).add(e.tape)
    keep, todo = {tid}, [tid]
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in keep:
                keep.add(other)
                todo.append(other)
    return [e for e in events if e.tape in keep]


# ---------------------------------------------------------------------------
# The graph the animation draws
# ---------------------------------------------------------------------------
class _Node:
    __slots__ = ("gid", "kind", "label", "role", "tensor", "op", "value", "shape", "during", "inputs", "step_born")

    def __init__(self, gid, kind, label, role, tensor, op=None, value=None, shape=(), during=None, inputs=()):
        self.gid, self.kind, self.label, self.role, self.tensor = gid, kind, label, role, tensor
        self.op, self.value, self.shape, self.during, self.inputs = op, value, shape, during, inputs
        self.step_born = 0


def _leaf_label(tid, watch, names, n_watched):
    if tid in names:
        return names[tid]
    if watch is not None and watch.name:
        return watch.name.split(":")[0]
    if watch is not None:
        letters = "xyzuvw"
        return letters[n_watched] if n_watched < len(letters) else f"x{n_watched}"
    return None


def _build_graph(events, names):
    """Nodes (leaves first, then ops in recording order) and edges (one per op input, duplicates kept)."""
    ops: dict[int, ev.Op] = {}
    for e in events:
        if e.kind == "op" and e.node not in ops:
            ops[e.node] = e
    produced = {op.output: nid for nid, op in ops.items()}
    watches: dict[int, ev.Watch] = {}
    for e in events:
        if e.kind == "watch" and e.tensor not in watches:
            watches[e.tensor] = e
    targets, sources = set(), set()
    for e in events:
        if e.kind == "gradient_begin":
            targets.update(e.targets)
            sources.update(e.sources)

    nodes: list[_Node] = []
    by_tensor: dict[int, _Node] = {}
    n_watched = 0
    leaf_values: dict[int, ev.Summary] = {}
    for op in ops.values():
        for tid, val in zip(op.inputs, op.in_values):
            if tid not in produced and val is not None:
                leaf_values.setdefault(tid, val)
    for w in watches.values():
        if w.value is not None:
            leaf_values.setdefault(w.tensor, w.value)

    def add_leaf(tid, name_hint=None):
        nonlocal n_watched
        w = watches.get(tid)
        label = _leaf_label(tid, w, names, n_watched)
        if label is None:
            label = name_hint
        if w is not None and tid not in names and not (w.name):
            n_watched += 1
        val = leaf_values.get(tid)
        if label is None:
            if val is not None and val.size == 1:
                label = fmt_summary(val)
            else:
                label = "const " + "×".join(str(d) for d in (val.shape if val is not None else ()))
        role = "source" if tid in sources or w is not None else "const"
        node = _Node(f"t{tid}", "leaf", label, role, tid, value=val, shape=val.shape if val is not None else ())
        nodes.append(node)
        by_tensor[tid] = node

    for w in watches.values():
        if w.tensor not in produced:
            add_leaf(w.tensor)
    for op in ops.values():
        for i, tid in enumerate(op.inputs):
            if tid not in produced and tid not in by_tensor:
                add_leaf(tid, op.in_names[i].split(":")[0] if i < len(op.in_names) and op.in_names[i] else None)
    counter = 0
    for nid, op in ops.items():
        counter += 1
        role = "target" if op.output in targets else ("backward" if op.during is not None else "op")
        label = names.get(op.output) or op.op_type
        node = _Node(f"n{nid}", "op", label, role, op.output, op=op.op_type, value=op.value, shape=op.shape,
                     during=op.during, inputs=op.inputs)
        nodes.append(node)
        by_tensor[op.output] = node
    for tid in targets | sources:
        if tid not in by_tensor:
            add_leaf(tid)
    # Several ops of one type: number them (Mul₁, Mul₂...) so steps and the panel can name each.
    op_labels = [n.label for n in nodes if n.kind == "op"]
    seen_count: dict[str, int] = {}
    for n in nodes:
        if n.kind == "op" and op_labels.count(n.label) > 1 and n.tensor not in names:
            seen_count[n.label] = seen_count.get(n.label, 0) + 1
            n.label = n.label + str(seen_count[n.label]).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))
    # Two variables both called "kernel": prefix the name scope of the op that reads each.
    labels = [n.label for n in nodes if n.kind == "leaf"]
    for n in nodes:
        if n.kind == "leaf" and labels.count(n.label) > 1 and n.tensor not in names:
            scope = next((op.scope for op in ops.values() if n.tensor in op.inputs and op.scope), "")
            if scope:
                n.label = f"{scope.split('/')[-1]}/{n.label}"
    for n in nodes:
        if n.kind == "leaf" and n.tensor in targets:
            n.role = "target"
    edges = []
    for n in nodes:
        if n.kind != "op":
            continue
        multi = len(n.inputs) > 1
        for i, tid in enumerate(n.inputs):
            src = by_tensor[tid]
            edges.append({"id": f"e{len(edges)}", "from": src.gid, "to": n.gid, "input": i,
                          "label": _LETTERS[i] if multi and i < len(_LETTERS) else ""})
    return nodes, edges, by_tensor, ops


# ---------------------------------------------------------------------------
# The storyboard
# ---------------------------------------------------------------------------
def _rule_lines(op: ev.Op, step: ev.BackwardStep, label_of):
    """The local rule with its numbers, one line per input that receives a gradient.

    Returns (lines, numbers) where numbers holds upstream, local derivatives
    and sent gradients as floats (None where not a scalar) for tests and plots.
    """
    expr, partials = _RULES.get(op.op_type, (None, ()))
    up = step.upstream
    lines = []
    numbers = {"upstream": _scalar(up), "local": [], "sent": []}
    letters = [_LETTERS[i] if i < len(_LETTERS) else f"in{i}" for i in range(len(op.inputs))]
    vals = [_scalar(v) for v in op.in_values]
    where = ", ".join(f"{letters[i]} = {label_of(tid)}" + (f" = {fmt_number(vals[i])}" if vals[i] is not None
                                                           and label_of(tid) != fmt_number(vals[i]) else "")
                      for i, tid in enumerate(op.inputs))
    lines.append(f"{op.op_type}: {expr or op.op_type + '(…)'}" + (f"   with {where}" if where else ""))
    lines.append(f"upstream gradient = {fmt_summary(up)}")
    for i, (tid, g) in enumerate(zip(op.inputs, step.grads)):
        sym, fn = partials[i] if i < len(partials) else (None, None)
        local = None
        if fn is not None and all(v is not None for v in vals):
            try:
                local = fn(*vals)
            except (ValueError, ZeroDivisionError, OverflowError):
                local = None
        numbers["local"].append(local)
        numbers["sent"].append(_scalar(g))
        if g is None:
            lines.append(f"→ {label_of(tid)}: nothing (not on a path to a source)")
            continue
        dd = f"∂({expr})/∂{letters[i]}" if expr else f"∂{op.op_type}/∂{letters[i]}"
        if sym is not None and local is not None:
            lines.append(f"{dd} = {sym} = {fmt_number(local)}")
            lines.append(f"   sent {fmt_summary(up)} × {fmt_number(local)} = {fmt_summary(g)} → {label_of(tid)}")
        elif sym is not None:
            lines.append(f"{dd} = {sym}")
            lines.append(f"   sent {fmt_summary(g)} → {label_of(tid)}")
        else:
            lines.append(f"sent {fmt_summary(g)} → {label_of(tid)}")
    return lines, numbers


def build_story(events, names=None, title=None) -> dict:
    """The storyboard for a list of events: graph, then one dict per step.

    ``names`` maps tensor ids to the labels to show (``{id: "x"}``).
    """
    names = dict(names or {})
    nodes, edges, by_tensor, ops = _build_graph(events, names)
    index = {n.gid: i for i, n in enumerate(nodes)}
    in_edges: dict[str, list[int]] = {}
    for k, e in enumerate(edges):
        in_edges.setdefault(e["to"], []).append(k)
    # Tapes are numbered by first appearance (T1 is the outermost of nested tapes), not by engine id.
    tape_no = {t: k + 1 for k, t in enumerate(dict.fromkeys(e.tape for e in events))}
    used = {e.tape for e in events if e.kind in ("op", "gradient_begin")}
    many_tapes = len(used) > 1

    def label_of(tid):
        n = by_tensor.get(tid)
        return n.label if n is not None else f"tensor {tid}"

    def tape_name(t):
        return f"tape T{tape_no.get(t, t)}"

    # Mutable state, snapshotted into each step.
    alive = [n.kind == "leaf" for n in nodes]
    vals = [fmt_short(n.value) if n.kind == "leaf" and n.value is not None else "" for n in nodes]
    grads = [""] * len(nodes)
    order = [""] * len(nodes)
    panel: dict[str, dict] = {}
    results: list[str] = []
    steps: list[dict] = []
    n_forward = sum(1 for op in ops.values() if op.during is None)
    n_backward_ops = len(ops) - n_forward
    seen_ops: set[int] = set()
    fwd_count = 0

    def snapshot(phase, title_, node=None, recv=(), active=(), lines=(), numbers=None, fresh=()):
        steps.append({
            "phase": phase, "title": title_, "node": node, "recv": list(recv), "edges": list(active),
            "lines": list(lines), "alive": [1 if a else 0 for a in alive], "vals": list(vals),
            "grads": list(grads), "order": list(order),
            "panel": [dict(row, terms=list(row["terms"]), fresh=(key in fresh)) for key, row in panel.items()],
            "results": list(results), "numbers": numbers or {},
        })

    intro = ["Forward pass: each op runs and the tape records it."]
    if n_backward_ops:
        intro.append(f"{n_backward_ops} more ops appear later: gradient rules recorded by an outer tape.")
    snapshot("start", title or "Forward and backward pass, step by step", lines=intro)

    i = 0
    while i < len(events):
        e = events[i]
        i += 1
        if e.kind == "op":
            if e.node in seen_ops:
                continue
            seen_ops.add(e.node)
            node = by_tensor[e.output]
            k = index[node.gid]
            alive[k] = True
            vals[k] = fmt_short(e.value)
            args = ", ".join(f"{label_of(t)}" + (f" = {fmt_summary(v)}" if v is not None
                                                 and fmt_summary(v) != label_of(t) else "")
                             for t, v in zip(e.inputs, e.in_values))
            lines = [f"{e.op_type}({args})", f"= {fmt_summary(e.value)}"]
            if e.shape:
                lines.append(f"shape {tuple(e.shape)}, {e.dtype}")
            if e.during is None:
                fwd_count += 1
                head = f"Forward {fwd_count}/{n_forward}: {node.label}"
            else:
                head = f"Recorded while {tape_name(e.during)} computes gradients: {node.label}"
                lines.append(f"An outer tape records the rule's ops, so it can differentiate them later.")
            snapshot("forward", head, node=node.gid, active=in_edges.get(node.gid, []), lines=lines)
        elif e.kind == "gradient_begin":
            for k in range(len(nodes)):
                grads[k] = ""
                order[k] = ""
            panel.clear()
            results.clear()
            lines = [f"{tape_name(e.tape)}.{e.method}(target, sources): the backward pass starts.",
                     "The tape runs its records in reverse: a node's rule runs only after every",
                     "path from the target has delivered its contribution (reverse topological order)."]
            fresh = set()
            while i < len(events) and events[i].kind == "accumulate" and events[i].node is None:
                a = events[i]
                i += 1
                n = by_tensor.get(a.tensor)
                if n is None:
                    continue
                grads[index[n.gid]] = fmt_short(a.total)
                panel[n.gid] = {"name": n.label, "terms": [fmt_summary(a.contribution)], "total": fmt_summary(a.total),
                                "count": a.count, "short": fmt_short(a.total)}
                fresh.add(n.gid)
                lines.append(f"seed: ∂{n.label}/∂{n.label} = {fmt_summary(a.contribution)}")
            head = f"Backward pass of {tape_name(e.tape)} begins" if many_tapes else "Backward pass begins"
            snapshot("seed", head, node=None, recv=sorted(fresh, key=index.get), lines=lines, fresh=fresh)
        elif e.kind == "backward_step":
            op = ops.get(e.node)
            node = by_tensor.get(e.output)
            if op is None or node is None:
                continue
            k = index[node.gid]
            order[k] = str(e.step)
            lines, numbers = _rule_lines(op, e, label_of)
            recv, fresh, acc_lines = [], set(), []
            while i < len(events) and events[i].kind == "accumulate" and events[i].node == e.node:
                a = events[i]
                i += 1
                n = by_tensor.get(a.tensor)
                if n is None:
                    continue
                row = panel.setdefault(n.gid, {"name": n.label, "terms": [], "total": "", "count": 0, "short": ""})
                row["terms"].append(fmt_summary(a.contribution))
                row["total"] = fmt_summary(a.total)
                row["short"] = fmt_short(a.total)
                row["count"] = a.count
                kk = index[n.gid]
                if a.count > 1:
                    grads[kk] = f"+= {fmt_short(a.contribution)} → {fmt_short(a.total)}"
                    acc_lines.append(f"{n.label}: reached again, += {fmt_summary(a.contribution)}: "
                                     f"{' + '.join(row['terms'])} = {fmt_summary(a.total)}")
                else:
                    grads[kk] = fmt_short(a.total)
                recv.append(n.gid)
                fresh.add(n.gid)
            numbers["totals"] = {panel[g]["name"]: panel[g]["total"] for g in fresh}
            active = [j for j in in_edges.get(node.gid, []) if e.grads[edges[j]["input"]] is not None]
            head = f"Backward step {e.step}: {node.label}" + (f" ({tape_name(e.tape)})" if many_tapes else "")
            snapshot("backward", head, node=node.gid, recv=recv, active=active, lines=lines + acc_lines,
                     numbers=numbers, fresh=fresh)
            # Once shown, a "+=" settles into the plain running total.
            for g in fresh:
                grads[index[g]] = panel[g]["short"]
        elif e.kind == "gradient_end":
            results.clear()
            lines = []
            for tid, r in zip(e.sources, e.results):
                line = f"∂target/∂{label_of(tid)} = {fmt_summary(r)}"
                results.append(line)
                lines.append(line)
            head = f"Done: gradients of {tape_name(e.tape)}"
            snapshot("done", head, lines=lines or ["(no sources)"],
                     recv=[by_tensor[t].gid for t, r in zip(e.sources, e.results) if r is not None and t in by_tensor])
        elif e.kind == "state":
            n = by_tensor.get(e.variable)
            if n is not None:
                vals[index[n.gid]] = fmt_short(e.value)
            snapshot("update", f"{(e.name or 'variable').split(':')[0]} updated ({e.how})",
                     node=n.gid if n is not None else None,
                     lines=[f"{(e.name or 'variable').split(':')[0]} ← {fmt_summary(e.value)}",
                            "State changes are not recorded: the next step starts a new tape."])
    return {
        "title": title or "Automatic differentiation, step by step",
        "nodes": [{"id": n.gid, "kind": n.kind, "label": n.label, "role": n.role,
                   "op": n.op, "shape": list(n.shape), "tensor": n.tensor} for n in nodes],
        "edges": edges,
        "steps": steps,
    }


# ---------------------------------------------------------------------------
# Linked views: the same computation over a grid of one input
# ---------------------------------------------------------------------------
def _run(f, values, dtype, keep_tensors=False):
    """Run ``f`` on constants made from ``values`` under a trace; returns (trace, inputs, tape)."""
    import autodiff_viz as ad

    inputs = [ad.constant(v, dtype=dtype) for v in values]
    with ad.trace(keep_tensors=keep_tensors) as tr:
        with ad.GradientTape(persistent=keep_tensors) as tape:
            tape.watch(inputs)
            target = f(*inputs)
        tape.gradient(target, inputs)
    return tr, inputs, tape


def _node_means(f, vals, vary, x, dtype):
    import autodiff_viz as ad

    v = list(vals)
    v[vary] = x
    inputs = [ad.constant(a, dtype=dtype) for a in v]
    with ad.trace(keep_tensors=True) as tr:
        with ad.GradientTape() as tape:
            tape.watch(inputs)
            f(*inputs)
    nodes, _, _, _ = _build_graph(tr.events, {})
    out = []
    for n in nodes:
        t = tr.tensors.get(n.tensor)
        out.append(None if t is None else float(np.mean(np.asarray(t.numpy(), dtype=np.float64))))
    return out


def _numeric_part(step):
    """What changes with the input: the numbers in a step's texts."""
    return {"title": step["title"], "lines": step["lines"], "vals": step["vals"], "grads": step["grads"],
            "panel": step["panel"], "results": step["results"]}


# ---------------------------------------------------------------------------
# The public object
# ---------------------------------------------------------------------------
class Animation:
    """The forward and backward pass of a computation, step by step.

    Displays as an interactive widget in Jupyter (with a self-contained HTML
    fallback for viewers without widgets); ``save("a.html" | "a.gif" |
    "a.mp4")`` writes a file.  ``steps`` is the storyboard: one dict per step.
    """

    def __init__(self, data: dict):
        self.data = data

    # -- plain facts ----------------------------------------------------------
    @property
    def steps(self) -> list:
        return self.data["steps"]

    @property
    def nodes(self) -> list:
        return self.data["nodes"]

    def __len__(self):
        return len(self.steps)

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
        from ._widget import make_widget

        return make_widget("animate", self.data)

    def to_html(self, standalone: bool = True) -> str:
        """Self-contained HTML (inline script and styles, no network), playable with no kernel."""
        from ._html import widget_html

        return widget_html("animate", self.data, title=self.data["title"], standalone=standalone,
                           alt=self._alt_text())

    def _alt_text(self) -> str:
        n_back = sum(1 for s in self.steps if s["phase"] == "backward")
        return (f"Animation of automatic differentiation: {len(self.nodes)} nodes, {len(self.steps)} steps, "
                f"{n_back} backward steps. " + " ".join(self.steps[-1]["lines"]))

    def _repr_mimebundle_(self, include=None, exclude=None):
        from ._widget import mimebundle

        return mimebundle("animate", self.data, self.to_html(standalone=False), repr(self))

    def frame(self, i: int, path=None, dpi=100):
        """Draw step ``i`` with matplotlib; returns the figure (saved to ``path`` if given)."""
        from ._frames import FrameRenderer

        r = FrameRenderer(self.data, dpi=dpi)
        r.draw(i)
        if path is not None:
            r.fig.savefig(path, dpi=dpi)
        return r.fig

    def save(self, path, fps: float = 1.0, dpi: int = 100) -> str:
        """Write ``.html`` (self-contained player), ``.gif`` (one frame per step) or ``.mp4``."""
        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        if ext in (".html", ".htm"):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.to_html())
            return path
        if ext in (".gif", ".mp4"):
            from ._frames import save_movie

            return save_movie(self.data, path, fps=fps, dpi=dpi)
        if ext == ".json":
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.to_json())
            return path
        raise ValueError(f"Animation.save: unknown file type {ext!r} (use .html, .gif, .mp4 or .json)")


def animate(source, *args, names=None, title=None, rankdir="auto", vary=None, span=None, points=21,
            linked=None) -> Animation:
    """Animate the forward and backward passes of ``source``, step by step.

    ``source`` is a trace (``with ad.trace() as tr:``), a tape (the last trace
    that saw it, or just its forward records), or a function: then
    ``animate(f, 3.0, 2.0)`` runs ``f`` on those inputs under a tape, takes
    the gradient of its result with respect to every input, and adds linked
    views: a slider for input ``vary`` (default the first) over ``span``,
    with every node's value and derivative plotted against it.

    ``names`` labels tensors: ``{"x": x}`` (or ``{tensor_id: "x"}``).
    ``rankdir`` is ``"LR"`` (left to right), ``"TB"`` (top to bottom) or
    ``"auto"``: top to bottom for long chains (more than 8 ranks), such as a
    training step, so they fit a page; the player, the HTML page and the
    GIF/MP4 frames all use this one layout.

    >>> import autodiff_viz as ad
    >>> anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0, names=["a", "b"])
    >>> [s["title"] for s in anim.steps][:2]
    ['Forward and backward pass, step by step', 'Forward 1/1: Mul']
    """
    if callable(source) and not isinstance(source, ev.Trace) and not _source.rec.is_tape(source):
        return _animate_function(source, args, names, title, rankdir, vary, span, points, linked)
    events = _events_of(source)
    story = build_story(events, _name_map(names), title)
    story["layout"] = layout(story, rankdir)
    return Animation(story)


def _name_map(names) -> dict:
    if not names:
        return {}
    out = {}
    items = names.items() if isinstance(names, dict) else []
    for k, v in items:
        if isinstance(k, str) and _source.rec.is_tensor(v):
            out[_source.rec.tensor_id(v)] = k
        elif isinstance(v, str) and isinstance(k, int):
            out[k] = v
        elif isinstance(v, str) and _source.rec.is_tensor(k):
            out[_source.rec.tensor_id(k)] = v
    return out


def _animate_function(f, args, names, title, rankdir, vary, span, points, linked):
    import autodiff_viz as ad

    if not args:
        raise TypeError("animate(f, *inputs): give the input values, e.g. animate(f, 3.0)")
    tr, inputs, _ = _run(f, args, ad.float64)
    labels = list(names) if isinstance(names, (list, tuple)) else None
    if labels is None:
        labels = ["x", "y", "z", "u", "v", "w"][:len(args)] if len(args) <= 6 else [f"x{i}" for i in range(len(args))]
    name_ids = {_source.rec.tensor_id(t): lab for t, lab in zip(inputs, labels)}
    story = build_story(tr.events, name_ids, title)
    story["layout"] = layout(story, rankdir)
    vary = 0 if vary is None else (labels.index(vary) if isinstance(vary, str) else int(vary))
    scalar = np.ndim(args[vary]) == 0
    if linked is None:
        linked = scalar and len(story["nodes"]) <= 40
    if linked:
        if not scalar:
            raise ValueError("linked views vary one scalar input")
        story["linked"] = _linked_for(f, args, story, vary, span, points, labels)
    return Animation(story)


def _linked_for(f, args, story, vary, span, points, labels):
    import autodiff_viz as ad

    base = float(args[vary])
    if span is None:
        half = max(2.0, abs(base))
        span = (base - half, base + half)
    grid = np.unique(np.append(np.linspace(float(span[0]), float(span[1]), int(points)), base))
    n_nodes = len(story["nodes"])
    ref_types = [n["op"] for n in story["nodes"]]
    out = {"input": labels[vary], "inputNode": None, "grid": [], "steps": [], "val": [], "dval": [], "fd": []}
    h = 1e-6 * max(1.0, abs(base))
    for x in grid:
        vals = list(args)
        vals[vary] = float(x)
        tr, inputs, tape = _run(f, vals, ad.float64, keep_tensors=True)
        sub = build_story(tr.events, {_source.rec.tensor_id(t): lab for t, lab in zip(inputs, labels)})
        if [n["op"] for n in sub["nodes"]] != ref_types or len(sub["steps"]) != len(story["steps"]):
            continue  # control flow took another path here: this point is left out
        row_val, row_d = [], []
        for n in sub["nodes"]:
            t = tr.tensors.get(n["tensor"])
            if t is None:
                row_val.append(None)
                row_d.append(None)
                continue
            arr = np.asarray(t.numpy(), dtype=np.float64)
            row_val.append(_finite(arr.mean()))
            g = tape.gradient(t, inputs[vary])  # of the sum; divided by size, it is d(mean)/dx
            row_d.append(None if g is None else _finite(float(np.asarray(g.numpy())) / max(arr.size, 1)))
        plus = _node_means(f, vals, vary, float(x) + h, ad.float64)
        minus = _node_means(f, vals, vary, float(x) - h, ad.float64)
        fd = [None if p is None or m is None else _finite((p - m) / (2 * h)) for p, m in zip(plus, minus)]
        out["grid"].append(float(x))
        out["steps"].append([_numeric_part(s) for s in sub["steps"]])
        out["val"].append(row_val)
        out["dval"].append(row_d)
        out["fd"].append(fd if len(fd) == n_nodes else [None] * n_nodes)
    out["base"] = int(np.argmin(abs(np.asarray(out["grid"]) - base))) if out["grid"] else 0
    for n in story["nodes"]:
        if n["label"] == labels[vary] and n["kind"] == "leaf":
            out["inputNode"] = n["id"]
    return out


def _finite(v):
    v = float(v)
    return v if math.isfinite(v) else None
