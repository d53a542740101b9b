"""The view model's data: nodes, edges, tapes, gradient calls, and the walks over them.

What a picture of a tape shows, as plain data: :mod:`.build` makes it from
trace events (the only code that turns events into nodes and edges),
:mod:`.path` marks the path from a target back to its sources, :mod:`.fold`
folds name scopes.  It knows nothing about layout or drawing, so the graph
renderer, animations and widgets share it.

>>> from autodiff_viz import events as ev
>>> from autodiff_viz.viz.model.build import build
>>> s = ev.summarize
>>> evs = [ev.TapeBegin(0, 7), ev.Watch(1, 7, tensor=40, value=s(3.0)),
...        ev.Op(2, 7, node=5, op_type="Mul", inputs=(40, 40), output=41, shape=(), dtype="float32",
...              value=s(9.0))]
>>> m = build(evs)
>>> [(n.id, n.kind, n.label) for n in m.nodes], len(m.edges)  # x*x: two edges
([(0, 'watched', 'x'), (1, 'op', 'Mul')], 2)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ... import events as ev
from ..text.words import tape_name

# Node kinds
OP = "op"                # a recorded forward op (its output tensor)
VARIABLE = "variable"    # a variable (watched automatically, explicitly, or not at all)
WATCHED = "watched"      # a plain tensor passed to tape.watch
CONSTANT = "constant"    # any other input: not watched, so no gradient flows into it
SKIPPED = "skipped"      # an op that ran under stop_recording: not on the tape
NUMPY = "numpy"          # where a tensor left the package (turned into a NumPy array)
SCOPE = "scope"          # a folded name scope (see ``collapse``)


@dataclass(slots=True)  # 31 fields: without slots each box costs ~800 bytes (a graph of 20,000 ops, 50 MB more)
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
    watched: str | None = None          # 'auto' (variable read on the tape), 'explicit' (tape.watch), 'primal'
    #                                     (followed by a ForwardAccumulator), None
    trainable: bool = True
    notes: tuple = ()                   # plain-language remarks ("assign_add on the tape"...)
    role: str | None = None             # 'target', 'source' or None
    on_path: bool = False               # lies between the sources and the target
    dimmed: bool = False                # a target is known and this node is not on its path
    broken: bool = False                # explain(): the gradient path breaks at this node
    nonfinite: bool = False             # a NaN or an inf first appeared here (see :mod:`.nonfinite`)
    members: tuple = ()                 # SCOPE: ids the folded ops had in the unfolded model
    folds: tuple = ()                   # SCOPE: the event tensor ids of the folded ops' outputs, in order
    op_types: tuple = ()                # SCOPE: op types inside, in order, deduplicated
    seed_of: str | None = None          # CONSTANT: the seed of a backward pass, ∂t/∂t = 1 for the target t named
    formula: str = ""                   # OP: the op in its inputs a, b... ("a · b"), from the primitive table
    partials: tuple = ()                # OP: each input's partial derivative ("b", "a")
    window: object = None               # Conv2D, MaxPool, AvgPool: one output position's window (.window)
    spreads: tuple = ()                 # ... and per backward step: (call key, step seq, .window.Spread)
    tangent: ev.Summary | None = None   # forward mode: its tangent ẋ (the last accumulator's that followed it)
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
        self.note(note)

    def note(self, text: str | None) -> None:
        """Add a remark to the box, once (remarks are a tuple: most boxes have none, and an empty
        tuple costs no object; a graph of 20,000 ops makes 40,000 boxes)."""
        if text and text not in self.notes:
            self.notes += (text,)


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
    forward: bool = False       # a ForwardAccumulator (forward mode), not a GradientTape

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
    rows: int = 0               # jacobian/batch_jacobian: its backward passes, one per row (0: one pass, gradient)


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

    def forward_only(self, indices) -> bool:
        """Whether the tapes numbered ``indices`` are all ForwardAccumulators (a backward pass run
        inside forward mode is carried by it, not recorded)."""
        forward = {t.index for t in self.tapes if t.forward}
        return bool(indices) and set(indices) <= forward


def carries_gradient(dtype: str) -> bool:
    """Whether a tensor of this dtype can carry a gradient (floating or complex; unknown counts as yes).

    >>> carries_gradient("float32"), carries_gradient("bool"), carries_gradient("int32"), carries_gradient("")
    (True, False, False, True)
    """
    return not dtype or dtype.startswith(("float", "bfloat", "half", "double", "complex"))


def reachable(model: GraphModel, start, forward=True, kinds=("data",), blocked=()) -> set:
    """Node ids reached from ``start`` along edges of ``kinds`` (backwards with ``forward=False``),
    never entering a node in ``blocked``.

    The one walk of the graph: paths, explanations and marks all use it.
    """
    # Most boxes feed one other box: its successor is kept as a plain int, and a list is made only for
    # a box that feeds more (a list per box cost the garbage collector a walk of 40,000 lists on a
    # chain of 20,000 ops).
    one: dict[int, int] = {}
    many: dict[int, list] = {}
    for e in model.edges:
        if e.kind in kinds:
            a, b = (e.src, e.dst) if forward else (e.dst, e.src)
            if a not in one:
                one[a] = b
            elif a in many:
                many[a].append(b)
            else:
                many[a] = [one[a], b]
    seen = set(start)
    stack = list(seen)
    while stack:
        a = stack.pop()
        if a not in one:
            continue
        for b in many.get(a) or (one[a],):
            if b not in seen and b not in blocked:
                seen.add(b)
                stack.append(b)
    return seen
