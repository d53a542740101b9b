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

import dataclasses
from dataclasses import dataclass, field

from ... import events as ev
from ...traces import check
from ..text.words import tape_name

# Node kinds
OP = "op"                # a recorded forward op (its output tensor)
VARIABLE = "variable"    # a variable (watched automatically, explicitly, or not at all)
WATCHED = "watched"      # a plain tensor passed to tape.watch
CONSTANT = "constant"    # any other input: not watched, so no gradient flows into it
SKIPPED = "skipped"      # an op that ran under stop_recording: not on the tape
NUMPY = "numpy"          # where a tensor left the package (turned into a NumPy array)
SCOPE = "scope"          # a folded name scope (see ``collapse``)


@dataclass
class Node:
    """One box in the picture.

    For ops and leaves the node stands for one tensor (the op's output);
    ``value`` and ``grads`` summarize that tensor and its gradients.
    """

    id: int
    kind: str
    label: str                          # op type, variable name, 'x'/'const'...
    op: str = ""                        # OP, SKIPPED: the op type (the label may be a name or carry a subscript)
    tensor: int | None = None           # renumbered tensor id (``TensorRef``-free: small ints)
    shape: tuple = ()
    dtype: str = ""
    value: ev.Summary | None = None
    grads: dict = field(default_factory=dict)   # (tape index, call) -> Summary: total gradient per gradient call
    scope: str = ""
    tapes: tuple = ()                   # tape indices that recorded this op
    backward_of: int | None = None      # op recorded while this tape's backward pass ran
    watched: str | None = None          # 'auto' (variable read on the tape), 'explicit' (tape.watch), None
    trainable: bool = True
    notes: list = field(default_factory=list)   # plain-language remarks ("assign_add on the tape"...)
    role: str | None = None             # 'target', 'source' or None
    on_path: bool = False               # lies between the sources and the target
    dimmed: bool = False                # a target is known and this node is not on its path
    broken: bool = False                # explain(): the gradient path breaks at this node
    members: tuple = ()                 # SCOPE: ids the folded ops had in the unfolded model
    op_types: tuple = ()                # SCOPE: op types inside, in order, deduplicated
    formula: str = ""                   # OP: the op in its inputs a, b... ("a · b"), from the primitive table
    partials: tuple = ()                # OP: each input's partial derivative ("b", "a")
    _raw: object = None                 # the event tensor id this node stands for (for matching, not for display)

    @property
    def is_leaf(self) -> bool:
        return self.kind in (VARIABLE, WATCHED, CONSTANT)

    @property
    def box(self) -> str:
        """What the box is, in the look table's words (``draw/look.py``): its kind, with a variable the
        tape does not watch and an op of a rule recorded by an outer tape told apart."""
        if self.kind == VARIABLE and self.watched is None:
            return "variable_unwatched"
        if self.kind == OP and self.backward_of is not None:
            return "rule_op"
        return self.kind

    @property
    def grad(self) -> ev.Summary | None:
        """The gradient from the last gradient computation that reached this node."""
        return next(reversed(self.grads.values())) if self.grads else None

    def mark(self, note: str | None = None) -> None:
        """Draw this node as where something goes wrong (bold vermillion, a ✗), ``note`` beside it once."""
        self.broken, self.dimmed = True, False
        if note and note not in self.notes:
            self.notes.append(note)


@dataclass
class Edge:
    """Input ``index`` of ``dst`` is the tensor of ``src`` (``x*x`` gives indices 0 and 1)."""

    src: int
    dst: int
    index: int = 0
    kind: str = "data"          # 'data', 'skipped' (into a stop_recording op), 'leave' (to NumPy)
    grad: ev.Summary | None = None   # what the backward pass sent along it (the gradient call shown)
    grads: dict = field(default_factory=dict)   # (tape index, call) -> Summary, one per gradient call
    on_path: bool = False
    dimmed: bool = False
    broken: bool = False
    count: int = 1              # edges merged into one (folded scopes)


@dataclass
class Tape:
    index: int                  # 1, 2... by first appearance
    raw: int                    # the engine's tape id
    parent: int | None = None   # index of the tape that was recording around it
    persistent: bool = False
    watch_accessed_variables: bool = True
    spent: bool = False         # non-persistent and gradient() has run: it cannot be used again
    gradient_calls: int = 0
    skipped_ops: int = 0

    @property
    def title(self) -> str:
        return tape_name(self.index)


@dataclass
class Gradient:
    """One ``gradient``/``jacobian`` call: its targets, sources and results."""

    tape: int                   # tape index
    call: int
    method: str
    targets: tuple              # node ids (None where the tensor is not in the picture)
    sources: tuple
    source_names: tuple
    results: tuple = ()         # Summary or None per source
    done: bool = False


@dataclass
class GraphModel:
    nodes: list
    edges: list
    tapes: list
    gradients: list
    scopes: list                # scope paths that hold nodes, in order of first appearance
    selected_tape: int | None = None
    title: str = ""
    remarks: list = field(default_factory=list)   # sentences put under the picture (explain, hints)
    traced: bool = True         # False: read from a bare tape, without values or the backward pass

    def node(self, nid: int) -> Node:
        return self.nodes[self._index[nid]] if hasattr(self, "_index") else next(n for n in self.nodes if n.id == nid)

    def reindex(self):
        self._index = {n.id: i for i, n in enumerate(self.nodes)}

    def by_tensor(self, tensor: int) -> Node | None:
        """The node standing for a (renumbered) tensor."""
        for n in self.nodes:
            if n.tensor == tensor:
                return n
        return None

    def node_for(self, raw: int) -> Node | None:
        """The node standing for the tensor with this event id (not a NumPy sink)."""
        for n in self.nodes:
            if n._raw == raw and n.kind != NUMPY:
                return n
        return None

    def inputs_of(self, nid: int) -> list:
        return [e for e in self.edges if e.dst == nid]

    def consumers_of(self, nid: int) -> list:
        return [e for e in self.edges if e.src == nid]

    def tape(self, index: int) -> Tape | None:
        return next((t for t in self.tapes if t.index == index), None)


# ---------------------------------------------------------------------------
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
        from .source import UNTRACED_HINT  # noqa: PLC0415  (one sentence, said where sources are read)

        model.remarks.append(UNTRACED_HINT)
    if subscripts:
        _distinct_labels(model, b)
    _mark_path(model, b, target, sources, gradient)
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
        self.watch: dict[int, ev.Watch] = {}
        self.names: dict[int, str] = {}
        self.scopes: dict[str, None] = {}

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
        label = self.given.get(raw, label)
        node = self.new_node(kind=kind, label=label, tensor=self.tnum(raw), shape=tuple(shape), dtype=dtype,
                             value=value if value is not None else (w.value if w else None), _raw=raw)
        if w is not None:
            node.watched = "auto" if w.auto else "explicit"
            node.trainable = w.trainable if w.variable else True
            if node.value is None:
                node.value = w.value
        elif kind == VARIABLE:
            node.trainable = False
        self.by_raw_tensor[raw] = node
        return node

    def model(self) -> GraphModel:
        events = self.events
        # First pass: what is watched, and variable names (a watch may come after the first use).
        for e in events:
            if isinstance(e, ev.Watch) and self.keep(e):
                prev = self.watch.get(e.tensor)
                if prev is None or (prev.auto and not e.auto):
                    self.watch[e.tensor] = e
                if e.name:
                    self.names[e.tensor] = e.name
                if e.label:
                    self.labels[e.tensor] = e.label
            elif isinstance(e, ev.Op):
                for i, nm in zip(e.inputs, e.in_names):
                    if nm:
                        self.names[i] = nm
                for i, lab in zip(e.inputs, e.in_labels):
                    if lab:
                        self.labels[i] = lab
            elif isinstance(e, ev.State) and e.name:
                self.names[e.variable] = e.name
        for e in events:
            t = self.tape_index(e.tape)
            if isinstance(e, ev.TapeBegin):
                t.parent = self.tape_index(e.parent).index if e.parent is not None else None
                t.persistent = e.persistent
                t.watch_accessed_variables = e.watch_accessed_variables
            elif isinstance(e, ev.TapeReset) and self.keep(e):
                t.spent = False
            elif isinstance(e, ev.Watch):
                if self.keep(e):
                    self.leaf(e.tensor, e.value.shape if e.value else (), e.value.dtype if e.value else "",
                              e.value, e.name)
            elif isinstance(e, ev.Op):
                self.on_op(e, t)
            elif isinstance(e, ev.OpSkipped):
                if self.keep(e):
                    self.on_skipped(e, t)
            elif isinstance(e, ev.Leave):
                if self.keep(e):
                    src = self.by_raw_tensor.get(e.tensor) or self.leaf(e.tensor, value=e.value)
                    sink = self.new_node(kind=NUMPY, label="NumPy", shape=src.shape, dtype=src.dtype,
                                         scope=src.scope, backward_of=src.backward_of)
                    src.notes.append(f"It left the package through {e.how}, so the tape cannot follow it further.")
                    self.edges.append(Edge(src.id, sink.id, 0, kind="leave"))
            elif isinstance(e, ev.State):
                if self.keep(e):
                    node = self.by_raw_tensor.get(e.variable) or self.leaf(e.variable, value=e.value, name=e.name)
                    note = f"{e.how} changed it on the tape, so its earlier history is not recorded."
                    if note not in node.notes:
                        node.notes.append(note)
            elif isinstance(e, ev.GradientBegin):
                t.gradient_calls += 1
                if self.keep(e) or self.tape_filter is None:
                    self.gradients.append(Gradient(tape=t.index, call=e.call, method=e.method,
                                                   targets=e.targets, sources=e.sources,
                                                   source_names=e.source_names))
            elif isinstance(e, ev.BackwardStep):
                for i, s in enumerate(e.grads):
                    edge = self.edge_at.get((e.node, i))
                    if edge is not None:
                        edge.grad = s
                        g = self.current_gradient(t)
                        if g is not None:
                            edge.grads[(t.index, g.call)] = s
            elif isinstance(e, ev.Accumulate):
                g = self.current_gradient(t)
                node = self.by_raw_tensor.get(e.tensor)
                if node is not None and g is not None and e.total is not None:
                    node.grads[(t.index, g.call)] = e.total
            elif isinstance(e, ev.GradientEnd):
                g = self.current_gradient(t)
                if g is not None:
                    g.results = e.results
                    g.done = True
                if e.spent:
                    t.spent = True
        for n in self.nodes:
            if n.scope:
                self.scopes.setdefault(n.scope, None)
        return GraphModel(nodes=self.nodes, edges=self.edges, tapes=list(self.tapes.values()),
                          gradients=self.gradients, scopes=list(self.scopes),
                          selected_tape=self.tapes[self.tape_filter].index
                          if self.tape_filter in self.tapes else None)

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
            ins = [self.leaf(i, shape, dt, val, nm) if self.by_raw_tensor.get(i) is None
                   or self.by_raw_tensor[i].is_leaf else self.by_raw_tensor[i]
                   for i, shape, dt, val, nm in _zip_inputs(e)]
            node = self.new_node(kind=OP, label=self.given.get(e.output, e.op_type), op=e.op_type,
                                 tensor=self.tnum(e.output),
                                 shape=tuple(e.shape), dtype=e.dtype, value=e.value, scope=e.scope,
                                 formula=e.formula, partials=tuple(e.partials), _raw=e.output)
            if e.during is not None:
                node.backward_of = self.tape_index(e.during).index
            self.by_raw_node[e.node] = node
            self.by_raw_tensor[e.output] = node
            for i, src in enumerate(ins):
                edge = Edge(src.id, node.id, i)
                self.edges.append(edge)
                self.edge_at[(e.node, i)] = edge
        if t.index not in node.tapes:
            node.tapes = node.tapes + (t.index,)

    def on_skipped(self, e: ev.OpSkipped, t: Tape):
        ins = [self.by_raw_tensor.get(i) or self.leaf(i) for i in e.inputs]
        node = self.new_node(kind=SKIPPED, label=e.op_type, op=e.op_type, tensor=self.tnum(e.output),
                             shape=tuple(e.shape),
                             dtype=e.dtype, value=e.value, scope=e.scope, _raw=e.output)
        node.notes.append(f"Not recorded: it ran under {e.reason}.")
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
    """Mul₁, Mul₂... for ops of one type (and const₁, const₂...); ``scope/kernel`` for variables of one name."""
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
    leaves: dict[str, int] = {}
    for n in model.nodes:
        if n.kind == VARIABLE:
            leaves[n.label] = leaves.get(n.label, 0) + 1
    used_in: dict[int, str] = {}  # node id -> the scope of its first consumer that has one
    for e in model.edges:
        if e.src not in used_in and model.nodes[e.dst].scope:
            used_in[e.src] = model.nodes[e.dst].scope
    for n in model.nodes:
        if n.kind == VARIABLE and leaves[n.label] > 1 and n.id not in given:
            scope = used_in.get(n.id, "")
            if scope:
                n.label = f"{scope.split('/')[-1]}/{n.label}"


def _zip_inputs(e: ev.Op):
    n = len(e.inputs)

    def get(seq, i, default):
        return seq[i] if i < len(seq) else default
    for i in range(n):
        yield e.inputs[i], get(e.in_shapes, i, ()), get(e.in_dtypes, i, ""), get(e.in_values, i, None), \
            get(e.in_names, i, None)


# ---------------------------------------------------------------------------
# Target, sources and the path between them
# ---------------------------------------------------------------------------
def _mark_path(model: GraphModel, b: _Builder, target, sources, gradient):
    chosen = None
    if target is None and sources is None and model.gradients:
        pool = model.gradients
        if model.selected_tape is not None:
            pool = [g for g in pool if g.tape == model.selected_tape] or pool
        try:
            chosen = pool[gradient]
        except IndexError:
            chosen = pool[-1]
        target, sources = chosen.targets, chosen.sources
        for e in model.edges:  # label the edges with what the chosen call sent, not the last call
            if e.grads:
                e.grad = e.grads.get((chosen.tape, chosen.call))
    tnodes = [b.by_raw_tensor[i] for i in _as_tuple(target) if i in b.by_raw_tensor]
    snodes = [b.by_raw_tensor[i] for i in _as_tuple(sources) if i in b.by_raw_tensor]
    for n in snodes:
        n.role = "source"
    for n in tnodes:
        n.role = "target"  # a target that is also a source is shown as the target
    if not tnodes:
        return
    fwd = reachable(model, [n.id for n in snodes])
    back = reachable(model, [n.id for n in tnodes], forward=False)
    if snodes:
        path = fwd & back
    elif _as_tuple(sources):  # sources asked for but not in the picture: nothing leads to the target
        path = {n.id for n in tnodes}
    else:
        path = back
    for n in model.nodes:
        n.on_path = n.id in path
        n.dimmed = not n.on_path and n.role is None
    for e in model.edges:
        e.on_path = e.kind == "data" and e.src in path and e.dst in path
        e.dimmed = not e.on_path and (model.nodes[e.dst].dimmed or model.nodes[e.src].dimmed)


def reachable(model: GraphModel, start, forward=True, kinds=("data",)) -> set:
    """Node ids reached from ``start`` along edges of ``kinds`` (backwards with ``forward=False``).

    The one walk of the graph: paths, explanations and marks all use it.
    """
    nxt: dict[int, list] = {}
    for e in model.edges:
        if e.kind in kinds:
            a, b = (e.src, e.dst) if forward else (e.dst, e.src)
            nxt.setdefault(a, []).append(b)
    seen = set(start)
    stack = list(seen)
    while stack:
        for b in nxt.get(stack.pop(), ()):
            if b not in seen:
                seen.add(b)
                stack.append(b)
    return seen


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def _prune(model: GraphModel):
    keep = {n.id for n in model.nodes if n.on_path or n.role}
    for e in model.edges:  # keep the constants the ops on the path use (the 3 in a*3)
        if e.dst in keep and model.nodes[e.dst].on_path and e.kind == "data" and \
                model.nodes[e.src].kind == CONSTANT:
            keep.add(e.src)
    _restrict(model, keep)


def _restrict(model: GraphModel, keep: set):
    old = model.nodes
    model.nodes = [n for n in old if n.id in keep]
    renumber = {n.id: i for i, n in enumerate(model.nodes)}
    for n in model.nodes:
        n.id = renumber[n.id]
        if n.kind != SCOPE:  # a folded box keeps the ids its ops had before folding
            n.members = tuple(renumber[m] for m in n.members if m in renumber)
    model.edges = [e for e in model.edges if e.src in renumber and e.dst in renumber]
    for e in model.edges:
        e.src, e.dst = renumber[e.src], renumber[e.dst]
    held = {n.scope for n in model.nodes}
    model.scopes = [s for s in model.scopes if s in held]


# ---------------------------------------------------------------------------
# Folding name scopes
# ---------------------------------------------------------------------------
def folded_scope(scope: str, collapse) -> str | None:
    """The scope a node in ``scope`` folds into, or ``None``."""
    if not scope or not collapse:
        return None
    if collapse is True:
        return scope.split("/")[0]
    for name in ([collapse] if isinstance(collapse, str) else collapse):
        name = name.strip("/")
        if scope == name or scope.startswith(name + "/"):
            return name
    return None


def _collapse(model: GraphModel, collapse):
    def box_of(n: Node):
        fold = folded_scope(n.scope, collapse) if n.kind in (OP, SKIPPED, NUMPY) else None
        if fold is None:
            return None
        return fold, lambda: Node(id=n.id, kind=SCOPE, label=fold.split("/")[-1],
                                  scope=fold.rsplit("/", 1)[0] if "/" in fold else "", backward_of=n.backward_of,
                                  notes=[f"This box folds the ops of name scope {fold}."])
    _fold(model, box_of)


def fold_middle(model: GraphModel, keep: int, note: str) -> int:
    """Fold all but the first and last ``keep // 2`` nodes (in recording order) into one box; say ``note``.

    For a graph too big to lay out: the start and the end of the computation
    stay readable, the box in between says how many ops it holds, and
    ``note`` (with ``{folded}``, the number of boxes folded) goes under the
    picture.  Returns how many nodes were folded (0: none, the graph is
    small enough).  Linear in the size of the graph.
    """
    n = len(model.nodes)
    if n <= keep:
        return 0
    head = keep // 2
    tail = n - (keep - head)

    def box_of(node: Node):
        if not head <= node.id < tail:
            return None
        return "folded", lambda: Node(id=node.id, kind=SCOPE, label=f"{tail - head:,} boxes folded",
                                      notes=["This box folds the middle of a graph too big to lay out."])
    _fold(model, box_of, keep_backward=False)
    model.remarks.append(note.format(folded=tail - head))
    model.reindex()
    return tail - head


def _fold(model: GraphModel, box_of, keep_backward=True):
    """Fold nodes into boxes: ``box_of(node)`` is ``None`` or ``(key, make_box)``; one box per key (and per
    backward pass, with ``keep_backward``).  A box counts the ops it holds; leaves fold in uncounted.
    Edges through a box merge (``Edge.count``).  Linear in the size of the graph."""
    boxes: dict[tuple, Node] = {}
    members: dict[int, list] = {}   # box id -> ids of the ops it folds
    owner: dict[int, int] = {}
    new_nodes = []
    any_dimmed = any(n.dimmed for n in model.nodes)
    for n in model.nodes:
        found = box_of(n)
        if found is None:
            new_nodes.append(n)
            continue
        key = (found[0], n.backward_of if keep_backward else None)
        box = boxes.get(key)
        if box is None:
            box = boxes[key] = found[1]()
            members[box.id] = []
            new_nodes.append(box)
        owner[n.id] = box.id
        box.on_path = box.on_path or n.on_path
        box.role = box.role or n.role
        if n.kind not in (OP, SKIPPED, NUMPY):
            continue
        members[box.id].append(n.id)
        if (n.op or n.label) not in box.op_types:  # the op's type, also where the user named its output
            box.op_types = box.op_types + (n.op or n.label,)
        box.tapes = tuple(dict.fromkeys(box.tapes + n.tapes))
        box.shape, box.dtype, box.value = n.shape, n.dtype, n.value   # the scope's last output
        if n.grads:
            box.grads = dict(n.grads)
    for box in boxes.values():
        box.members = tuple(members[box.id])
        box.dimmed = not box.on_path and box.role is None and any_dimmed and \
            all(model.nodes[m].dimmed for m in box.members if m < len(model.nodes))
    merged: dict[tuple, Edge] = {}
    edges = []
    for e in model.edges:
        src, dst = owner.get(e.src, e.src), owner.get(e.dst, e.dst)
        if src == dst:
            continue
        key = (src, dst, e.kind)
        if src != e.src or dst != e.dst:
            m = merged.get(key)
            if m is not None:
                m.count += 1
                m.on_path = m.on_path or e.on_path
                m.dimmed = m.dimmed and e.dimmed
                continue
            e = dataclasses.replace(e, src=src, dst=dst, grads=dict(e.grads))
            merged[key] = e
        edges.append(e)
    model.nodes = new_nodes
    model.edges = edges
    _restrict(model, {n.id for n in new_nodes})
