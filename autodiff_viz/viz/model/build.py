"""The view model: what a picture of a tape shows, built from trace events only.

:func:`build` turns a list of events (see :mod:`autodiff_viz.events`) into a
:class:`GraphModel`: nodes, edges, tapes, name scopes, gradients and the path
from the target back to the sources.  It knows nothing about layout or
drawing, so the graph renderer, animations and widgets can share it.

It is the only code that turns events into nodes and edges: the graph, the
step-through animation, ``explain`` and the classroom's marks all read it.
Labels are decided here once: a variable by its name, watched tensors
``x, y, z...`` in the order they were watched, names given with ``names=``
first; ``subscripts=True`` numbers ops of one type (``Mul₁``, ``Mul₂``).

Numbering is by first appearance in the events (``Node.id`` 0, 1, 2...,
``Tape.index`` 1, 2...), never by the engine's global ids, so the same
computation gives the same model run after run.  Events that break the
schema's invariants (an id used before it exists, a backward step of an
unknown op, a cycle, an impossible shape) raise ``TraceFormatError`` naming
the event.

>>> from autodiff_viz import events as ev
>>> s = ev.summarize
>>> evs = [ev.TapeBegin(0, 7), ev.Watch(1, 7, tensor=40, value=s(3.0)),
...        ev.Op(2, 7, node=5, op_type="Mul", inputs=(40, 40), output=41, shape=(), dtype="float32",
...              value=s(9.0))]
>>> m = build(evs)
>>> [(n.id, n.kind, n.label) for n in m.nodes]
[(0, 'watched', 'x'), (1, 'op', 'Mul')]
>>> len(m.edges)  # x*x: two edges
2
"""
from __future__ import annotations

from ... import events as ev
from ...traces import check
from . import window as _window
from . import nonfinite as _nonfinite
from .fold import _collapse
from .graph import (CONSTANT, NUMPY, OP, SKIPPED, VARIABLE, WATCHED, Edge, Gradient, GraphModel, Node, Tape)
from . import rows as _rows
from .path import _mark_path, _prune
from ..text import words as W


def build(events, tape=None, target=None, sources=None, gradient=-1, prune=False, collapse=False, names=None,
          subscripts=False, traced=True) -> GraphModel:
    """Build the view model.

    ``events``: a list of events (or a ``Trace``).  ``tape``: an engine tape id
    to show only what that tape recorded (ops recorded by it, including the
    backward passes of inner tapes); ``None`` shows every tape.
    ``target``/``sources``: engine tensor ids to highlight the path between
    (default: those of the selected gradient call, ``gradient=-1`` the last).
    ``prune``: keep only the path (and the inputs of the ops on it).
    ``collapse``: ``True`` folds every top-level name scope into one box, a
    list of scope names folds those.  ``names``: ``{event tensor id: label}``
    to show instead of the default labels.  ``subscripts``: number the ops of
    one type (``Mul₁``, ``Mul₂``) and tell apart variables of one name by their
    scope, so text can name each node.  ``traced=False``: the events came
    from a bare tape; the model says so in a remark.
    """
    events = list(getattr(events, "events", events))
    check(events)
    b = _Builder(events, tape, names or {})
    model = b.model()
    model.traced = traced
    if not traced:
        from .source import UNTRACED_HINT  # one sentence, said where sources are read

        model.remarks.append(UNTRACED_HINT)
    _distinct_variables(model, b)
    if subscripts:
        _distinct_labels(model, b)
    _mark_path(model, b, target, sources, gradient)
    _nonfinite.mark(model, events)
    if prune:
        _prune(model)
    if collapse:
        _collapse(model, collapse)
    model.reindex()
    return model


class _Builder:
    def __init__(self, events, tape, names):
        self.events = events
        self.tape_filter = tape
        self.given = dict(names)               # labels the caller chose
        self.labels: dict[int, str] = {}       # tensor id -> a named constant's name=
        self.letters = 0                       # watched tensors named so far (x, y, z...)
        self.tapes: dict[int, Tape] = {}
        self.nodes: list[Node] = []
        self.by_raw_tensor: dict[int, Node] = {}   # engine tensor id -> node
        self.by_raw_node: dict[int, Node] = {}     # engine node id -> node
        self.tensor_numbers: dict[int, int] = {}
        self.edges: list[Edge] = []
        self.edge_at: dict[tuple, Edge] = {}       # (engine node id, input index) -> edge
        self.gradients: list[Gradient] = []
        self.rows: dict[tuple, _rows.Rows] = {}     # (tape index, call) -> a Jacobian call's rows
        self.row_shapes: dict[int, tuple] = {}       # id of a Gradient -> its target's shape (per example: batch)
        self.watch: dict[int, ev.Watch] = {}
        self.names: dict[int, str] = {}
        self.seeds: dict[int, int] = {}        # a backward pass's seed tensor id -> its target's id
        self.scopes: dict[str, None] = {}
        self.windows: dict[int, tuple] = {}       # engine node id -> (its op event, [(call key, step)])
        self.forward: set[int] = set()             # engine ids of the ForwardAccumulators

    # -- numbering ------------------------------------------------------------
    def tape_index(self, raw, begin: ev.TapeBegin | None = None) -> Tape:
        t = self.tapes.get(raw)
        if t is None:
            t = self.tapes[raw] = Tape(index=len(self.tapes) + 1, raw=raw)
        return t

    def tnum(self, raw):
        n = self.tensor_numbers.get(raw)
        if n is None:
            n = self.tensor_numbers[raw] = len(self.tensor_numbers)
        return n

    def left_leaf(self, e: ev.Leave) -> Node:
        """The box of a tensor first seen leaving the package: a variable that no op read (``v.numpy()``)
        is named as its gradient call names it; the engine notes only trainable ones."""
        name = next((n for g in self.events if isinstance(g, ev.GradientBegin)
                     for t, n in zip(g.sources, g.source_names) if t == e.tensor and n), None)
        node = self.leaf(e.tensor, value=e.value, name=name)
        if name is not None:
            node.trainable = True
        return node

    def new_node(self, **kw) -> Node:
        n = Node(id=len(self.nodes), **kw)
        self.nodes.append(n)
        return n

    def keep(self, e) -> bool:
        return self.tape_filter is None or e.tape == self.tape_filter

    # -- leaves -----------------------------------------------------------------
    def leaf(self, raw, shape=(), dtype="", value=None, name=None) -> Node:
        node = self.by_raw_tensor.get(raw)
        if node is not None:
            if not node.dtype and dtype:  # first seen without a value (a state change): fill in
                node.shape, node.dtype = tuple(shape), dtype
            return node
        if value is not None and not dtype:
            shape, dtype = value.shape, value.dtype
        w = self.watch.get(raw)
        name = name or self.names.get(raw) or (w.name if w else None)
        if name is not None:
            kind, label = VARIABLE, name.split(":")[0]
        elif w is not None:
            kind, label = WATCHED, self.labels.get(raw) or input_letter(self.letters)
            self.letters += raw not in self.labels
        else:
            kind, label = CONSTANT, self.labels.get(raw, "const")
        seed_of = None
        if kind == CONSTANT and raw in self.seeds:  # what an outer tape saw of a backward pass's seed
            target = self.by_raw_tensor.get(self.seeds[raw])
            seed_of = target.label if target is not None else "target"
            label = f"∂{seed_of}/∂{seed_of}"
        label = self.given.get(raw, label)
        node = self.new_node(kind=kind, label=label, tensor=self.tnum(raw), shape=tuple(shape), dtype=dtype,
                             value=value if value is not None else (w.value if w else None), _raw=raw)
        if w is not None:
            node.watched = "primal" if w.tape in self.forward else "auto" if w.auto else "explicit"
            node.trainable = w.trainable if w.variable else True
            if node.value is None:
                node.value = w.value
        elif kind == VARIABLE:
            node.trainable = False
        node.seed_of = seed_of
        self.by_raw_tensor[raw] = node
        return node

    def model(self) -> GraphModel:
        self.read_names()
        handle = {"tape_begin": self.on_tape_begin, "tape_reset": self.on_tape_reset, "watch": self.on_watch,
                  "op": self.on_op, "op_skipped": self.on_skipped, "leave": self.on_leave, "state": self.on_state,
                  "gradient_begin": self.on_gradient_begin, "backward_step": self.on_backward_step,
                  "accumulate": self.on_accumulate, "gradient_row": self.on_gradient_row,
                  "forward_begin": self.on_forward_begin, "tangent": self.on_tangent,
                  "gradient_end": self.on_gradient_end}
        tapes = self.tapes
        for e in self.events:  # one dict lookup per event, not a chain of isinstance tests
            t = tapes.get(e.tape) or self.tape_index(e.tape)
            on = handle.get(e.kind)
            if on is not None:
                on(e, t)
        for raw, (op, steps) in self.windows.items():
            _window.attach(self.by_raw_node[raw], op, steps)
        for n in self.nodes:
            if n.scope:
                self.scopes.setdefault(n.scope, None)
        return GraphModel(nodes=self.nodes, edges=self.edges, tapes=list(self.tapes.values()),
                          gradients=self.gradients, scopes=list(self.scopes),
                          selected_tape=self.tapes[self.tape_filter].index
                          if self.tape_filter in self.tapes else None)

    def read_names(self):
        """First pass: what is watched, and variable names (a watch may come after the first use)."""
        for e in self.events:
            kind = e.kind
            if kind == "watch" and self.keep(e):
                prev = self.watch.get(e.tensor)
                if prev is None or (prev.auto and not e.auto):
                    self.watch[e.tensor] = e
                if e.name:
                    self.names[e.tensor] = e.name
                if e.label:
                    self.labels[e.tensor] = e.label
            elif kind == "op":
                for i, nm in zip(e.inputs, e.in_names):
                    if nm:
                        self.names[i] = nm
                for i, lab in zip(e.inputs, e.in_labels):
                    if lab:
                        self.labels[i] = lab
            elif kind == "state" and e.name:
                self.names[e.variable] = e.name
            elif kind == "accumulate" and e.node is None and e.seed is not None:
                self.seeds[e.seed] = e.tensor
            elif kind == "forward_begin":
                self.forward.add(e.tape)

    # -- one method per event kind (``t``: the event's tape) ---------------------------------
    def on_tape_begin(self, e: ev.TapeBegin, t: Tape):
        t.parent = self.tape_index(e.parent).index if e.parent is not None else None
        t.persistent = e.persistent
        t.watch_accessed_variables = e.watch_accessed_variables

    def on_tape_reset(self, e: ev.TapeReset, t: Tape):
        if self.keep(e):
            t.spent = False

    def on_watch(self, e: ev.Watch, t: Tape):
        if self.keep(e):
            self.leaf(e.tensor, e.value.shape if e.value else (), e.value.dtype if e.value else "", e.value, e.name)

    def on_leave(self, e: ev.Leave, t: Tape):
        if self.keep(e):
            src = self.by_raw_tensor.get(e.tensor) or self.left_leaf(e)
            sink = self.new_node(kind=NUMPY, label="NumPy", op=e.how, shape=src.shape, dtype=src.dtype,
                                 scope=src.scope, backward_of=src.backward_of)
            src.notes += (f"It left the package through {e.how}, so the tape cannot follow it further.",)
            self.edges.append(Edge(src.id, sink.id, 0, kind="leave"))

    def on_state(self, e: ev.State, t: Tape):
        if self.keep(e):
            node = self.by_raw_tensor.get(e.variable) or self.leaf(e.variable, value=e.value, name=e.name)
            node.note(f"{e.how} changed it on the tape, so its earlier history is not recorded.")

    def on_gradient_begin(self, e: ev.GradientBegin, t: Tape):
        t.gradient_calls += 1
        if self.keep(e) or self.tape_filter is None:
            self.gradients.append(Gradient(tape=t.index, call=e.call, method=e.method, targets=e.targets,
                                           sources=e.sources, source_names=e.source_names))
            value = e.target_values[0] if e.target_values else None
            if value is not None:  # a jacobian's rows count the elements of this shape
                shape = tuple(value.shape)
                self.row_shapes[id(self.gradients[-1])] = shape[1:] if e.method == "batch_jacobian" else shape

    def on_backward_step(self, e: ev.BackwardStep, t: Tape):
        g = self.current_gradient(t)
        if e.node in self.windows and g is not None:
            self.windows[e.node][1].append(((t.index, g.call), e))
        rows = self.rows.get((t.index, g.call)) if g is not None else None
        for i, s in enumerate(e.grads):
            edge = self.edge_at.get((e.node, i))
            if edge is not None:
                edge.grad = s
                if rows is not None:  # one row of a Jacobian: stacked when the call ends
                    rows.put(("edge", id(edge)), rows.row, s)
                elif g is not None:
                    edge.grads[(t.index, g.call)] = s

    def on_accumulate(self, e: ev.Accumulate, t: Tape):
        g = self.current_gradient(t)
        node = self.by_raw_tensor.get(e.tensor)
        if node is not None and g is not None and e.total is not None:
            rows = self.rows.get((t.index, g.call))
            if rows is not None:
                rows.put(("node", node.id), rows.row, e.total)
            else:
                node.grads[(t.index, g.call)] = e.total

    def on_gradient_row(self, e: ev.GradientRow, t: Tape):
        g = self.current_gradient(t)
        if g is not None:
            g.rows = e.rows
            rows = self.rows.setdefault((t.index, g.call), _rows.Rows(e.rows, self.row_shapes.get(id(g), ())))
            rows.row = e.row

    def on_forward_begin(self, e: ev.ForwardBegin, t: Tape):
        t.forward = True

    def on_tangent(self, e: ev.Tangent, t: Tape):
        if self.keep(e):
            node = self.by_raw_tensor.get(e.tensor)
            if node is not None:
                node.tangent = e.tangent

    def on_gradient_end(self, e: ev.GradientEnd, t: Tape):
        g = self.current_gradient(t)
        if g is not None:
            g.results = e.results
            g.done = True
            rows = self.rows.get((t.index, g.call))
            if rows is not None:
                self.stack_rows(g, rows, e)
        if e.spent:
            t.spent = True

    def stack_rows(self, g: Gradient, rows: _rows.Rows, end: ev.GradientEnd):
        """A Jacobian call's gradients: every row of each tensor and edge stacked (a source: the engine's result)."""
        key, batch = (g.tape, g.call), g.method == "batch_jacobian"
        results = {t: r for t, r in zip(end.sources, end.results)}
        edges = {id(edge): edge for edge in self.edges}
        for (what, ident), parts in rows.parts.items():
            if what == "edge":
                edge = edges[ident]
                src = self.nodes[edge.src]
                edge.grads[key] = edge.grad = _rows.stack(parts, src.shape, src.dtype, rows.row_shape, batch)
                continue
            node = self.nodes[ident]
            given = results.get(node._raw)
            node.grads[key] = (given if given is not None
                               else _rows.stack(parts, node.shape, node.dtype, rows.row_shape, batch))

    def current_gradient(self, t: Tape) -> Gradient | None:
        for g in reversed(self.gradients):
            if g.tape == t.index and not g.done:
                return g
        return None

    def on_op(self, e: ev.Op, t: Tape):
        if not self.keep(e):
            return
        node = self.by_raw_node.get(e.node)
        if node is None:
            ins = []
            for k, i in enumerate(e.inputs):
                src = self.by_raw_tensor.get(i)
                ins.append(self.leaf(i, *_input_facts(e, k)) if src is None or src.is_leaf else src)
            shown = W.op_name(e.op_type, e.attrs)  # a custom_gradient box: the function's name
            node = self.new_node(kind=OP, label=self.given.get(e.output, shown), op=shown,
                                 tensor=self.tnum(e.output),
                                 shape=tuple(e.shape), dtype=e.dtype, value=e.value, scope=e.scope,
                                 formula=e.formula, partials=tuple(e.partials), _raw=e.output)
            if e.during is not None:
                node.backward_of = self.tape_index(e.during).index
            self.by_raw_node[e.node] = node
            if e.op_type in ev.WINDOW_OPS:
                self.windows[e.node] = (e, [])
            self.by_raw_tensor[e.output] = node
            for i, src in enumerate(ins):
                edge = Edge(src.id, node.id, i)
                self.edges.append(edge)
                self.edge_at[(e.node, i)] = edge
        if t.index not in node.tapes:
            node.tapes = node.tapes + (t.index,)

    def on_skipped(self, e: ev.OpSkipped, t: Tape):
        if not self.keep(e):
            return
        ins = [self.by_raw_tensor.get(i) or self.leaf(i) for i in e.inputs]
        node = self.new_node(kind=SKIPPED, label=e.op_type, op=e.op_type, tensor=self.tnum(e.output),
                             shape=tuple(e.shape),
                             dtype=e.dtype, value=e.value, scope=e.scope, _raw=e.output)
        node.notes += (f"Not recorded: it ran under {e.reason}.",)
        self.by_raw_tensor[e.output] = node
        t.skipped_ops += 1
        for i, src in enumerate(ins):
            self.edges.append(Edge(src.id, node.id, i, kind="skipped"))


LETTERS = "xyzuvw"


def input_letter(i: int) -> str:
    """The label of the ``i``-th watched tensor: x, y, z, u, v, w, then x6, x7..."""
    return LETTERS[i] if i < len(LETTERS) else f"x{i}"


_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _distinct_labels(model: GraphModel, b: _Builder):
    """Mul₁, Mul₂... for ops of one type (and const₁, const₂...)."""
    given = {n.id for n in model.nodes if n._raw in b.given}
    count: dict[str, int] = {}
    numbered = (OP, CONSTANT)
    for n in model.nodes:
        if n.kind in numbered and n.id not in given:
            count[n.label] = count.get(n.label, 0) + 1
    seen: dict[str, int] = {}
    for n in model.nodes:
        if n.kind in numbered and n.id not in given and count[n.label] > 1:
            seen[n.label] = seen.get(n.label, 0) + 1
            n.label = n.label + str(seen[n.label]).translate(_SUBSCRIPTS)


def _distinct_variables(model: GraphModel, b: _Builder):
    """``dense/kernel``, ``output/kernel``: variables of one name told apart by the scope (the layer)
    of the op that first uses them, in every view."""
    leaves: dict[str, int] = {}
    for n in model.nodes:
        if n.kind == VARIABLE:
            leaves[n.label] = leaves.get(n.label, 0) + 1
    if all(count == 1 for count in leaves.values()):
        return  # no two variables share a name (the walk of the edges below is for those that do)
    given = {n.id for n in model.nodes if n._raw in b.given}
    used_in: dict[int, str] = {}  # node id -> the scope of its first consumer that has one
    for e in model.edges:
        if e.src not in used_in and model.nodes[e.dst].scope:
            used_in[e.src] = model.nodes[e.dst].scope
    for n in model.nodes:
        if n.kind == VARIABLE and leaves[n.label] > 1 and n.id not in given:
            scope = used_in.get(n.id, "")
            if scope:
                n.label = f"{scope.split('/')[-1]}/{n.label}"


def _input_facts(e: ev.Op, k: int) -> tuple:
    """Input ``k``'s shape, dtype, value and name as the op event keeps them (``()``, ``""``, ``None``
    where it keeps fewer)."""
    return (e.in_shapes[k] if k < len(e.in_shapes) else (), e.in_dtypes[k] if k < len(e.in_dtypes) else "",
            e.in_values[k] if k < len(e.in_values) else None, e.in_names[k] if k < len(e.in_names) else None)
