"""Folding: a name scope (or a Module) drawn as one box, and the middle of a graph too large to lay out."""
from __future__ import annotations

import math as _math

import dataclasses

from ... import events as ev
from .graph import CONSTANT, NUMPY, OP, SCOPE, SKIPPED, Edge, GraphModel, Node
from .path import _restrict


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
        return fold, lambda first: Node(id=first.id, kind=SCOPE, label=fold.split("/")[-1],
                                        scope=fold.rsplit("/", 1)[0] if "/" in fold else "",
                                        backward_of=first.backward_of,
                                        notes=(f"This box folds the ops of name scope {fold}.",))
    _fold(model, box_of, joins=_own_constants(model, box_of))


def _own_constants(model: GraphModel, box_of) -> dict:
    """``{constant id: box key}`` for each one-number constant that only ops of one box read: it is part of
    what that box computes (a scale, an offset, an exponent), so it folds into it.  A constant read by two
    boxes, or by an op left unfolded, stays its own box, and so does the seed of a backward pass (a source
    or target is never a constant here) and any array of data: where a model's inputs come in stays in
    the picture."""
    key_of = {}
    for n in model.nodes:
        found = box_of(n)
        if found is not None:
            key_of[n.id] = (found[0], n.backward_of)
    readers: dict[int, set] = {}
    for e in model.edges:
        readers.setdefault(e.src, set()).add(key_of.get(e.dst))
    joins = {}
    for n in model.nodes:
        keys = readers.get(n.id)
        if n.kind == CONSTANT and n.role is None and n.seed_of is None and keys and len(keys) == 1 \
                and None not in keys and _math.prod(n.shape) == 1:
            joins[n.id] = next(iter(keys))
    return joins


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
    middle = _middle(model, head, tail)
    count = len(middle)
    folded = ("folded", lambda first: Node(id=first.id, kind=SCOPE, label=f"{count:,} boxes folded",
                                           notes=("This box folds the middle of a graph too big to lay out.",)))

    def box_of(node: Node):
        return folded if node.id in middle else None
    _fold(model, box_of, keep_backward=False)
    model.remarks.append(note.format(folded=count))
    model.reindex()
    return count


def _middle(model: GraphModel, head: int, tail: int) -> set:
    """Ids of the nodes ``fold_middle`` folds: those at positions ``head`` to ``tail`` of the recording order.

    Chosen by position, not by id (after ``collapse`` or ``prune`` ids are not positions).  A
    leaf (a constant) can be listed after the box that reads it (a folded scope sits where its
    first op was): folded with the middle while its reader stays in the head, the fold would
    feed a box that feeds the fold, a cycle.  So a leaf in the middle folds only if nothing
    before the middle reads it; ops keep their recording order, which no edge runs against.
    """
    pos = {node.id: k for k, node in enumerate(model.nodes)}
    read_early = {e.src for e in model.edges if pos[e.dst] < head}  # (sets of ints: nothing for the GC to walk)
    fed = {e.dst for e in model.edges}
    return {node.id for node in model.nodes[head:tail] if node.id in fed or node.id not in read_early}


def _fold(model: GraphModel, box_of, keep_backward=True, joins=None):
    """Fold nodes into boxes: ``box_of(node)`` is ``None`` or ``(key, make_box)``, ``make_box(first)`` making
    the box from the first node it folds; one box per key (and per
    backward pass, with ``keep_backward``).  A box counts the ops it holds; leaves fold in uncounted.
    ``joins``: ``{leaf id: full box key}``, leaves that join a box its ops make (never making one: the box
    stays where its first op was).  Edges through a box merge (``Edge.count``).  Linear in the size of
    the graph."""
    boxes: dict[tuple, Node] = {}
    members: dict[int, list] = {}   # box id -> ids of the ops it folds
    folds: dict[int, list] = {}     # box id -> their outputs' tensor ids (a tuple grown op by op is quadratic)
    tapes: dict[int, dict] = {}     # box id -> the tapes of the ops it folds, in order, once each
    last_grads: dict[int, Node] = {}  # box id -> the last op it folds that has gradients (the box shows them)
    owner: dict[int, int] = {}
    new_nodes = []
    dimmed = {n.id for n in model.nodes if n.dimmed}  # (by id: after an earlier fold ids are not positions)
    any_dimmed = bool(dimmed)
    joins = joins or {}
    joining = []
    for n in model.nodes:
        if n.id in joins:
            joining.append(n)
            continue
        found = box_of(n)
        if found is None:
            new_nodes.append(n)
            continue
        key = (found[0], n.backward_of if keep_backward else None)
        box = boxes.get(key)
        if box is None:
            box = boxes[key] = found[1](n)
            members[box.id], folds[box.id], tapes[box.id] = [], list(box.folds), dict.fromkeys(box.tapes)
            new_nodes.append(box)
        owner[n.id] = box.id
        box.on_path = box.on_path or n.on_path
        box.role = box.role or n.role
        box.nonfinite = box.nonfinite or n.nonfinite  # a NaN/inf that starts inside shows on the fold
        if n.kind not in (OP, SKIPPED, NUMPY):
            continue
        members[box.id].append(n.id)
        folds[box.id].append(n._raw)
        if (n.op or n.label) not in box.op_types:  # the op's type, also where the user named its output
            box.op_types = box.op_types + (n.op or n.label,)
        for t in n.tapes:
            tapes[box.id][t] = None
        box.shape, box.dtype, box.value = n.shape, n.dtype, n.value   # the scope's last output
        if n.grads:
            last_grads[box.id] = n
    held: dict[int, int] = {}  # box id -> the constants that joined it
    for n in joining:
        box = boxes[joins[n.id]]  # (one of its readers made it)
        owner[n.id] = box.id
        box.nonfinite = box.nonfinite or n.nonfinite
        held[box.id] = held.get(box.id, 0) + 1
    for box in boxes.values():
        if box.id in held:
            count = held[box.id]
            box.note(f"It also holds {count} constant{'s' if count > 1 else ''} that only its ops read.")
        box.members, box.folds = tuple(members[box.id]), tuple(folds[box.id])
        box.tapes = tuple(tapes[box.id])
        if box.id in last_grads:
            box.grads = dict(last_grads[box.id].grads)
        box.dimmed = not box.on_path and box.role is None and any_dimmed and \
            all(m in dimmed for m in box.members)
    merged: dict[tuple, Edge] = {}
    first: dict[tuple, Edge] = {}   # merged arrow -> the first edge it stands for
    more: dict[tuple, list] = {}    # ... and the others, where it stands for more than one
    edges = []
    for e in model.edges:
        src, dst = owner.get(e.src, e.src), owner.get(e.dst, e.dst)
        if src == dst:
            continue
        key = (src, dst, e.kind)
        if e.src in owner or e.dst in owner:  # (not ``src != e.src``: a box has its first node's id)
            m = merged.get(key)
            if m is not None:
                m.count += 1
                m.on_path = m.on_path or e.on_path
                m.dimmed = m.dimmed and e.dimmed
                more.setdefault(key, []).append(e)
                continue
            first[key] = e
            e = dataclasses.replace(e, src=src, dst=dst, grads=dict(e.grads))
            merged[key] = e
        edges.append(e)
    for key, rest in more.items():
        _sum_grads(merged[key], [first[key], *rest])
    model.nodes = new_nodes
    model.edges = edges
    _restrict(model, {n.id for n in new_nodes})



def _sum_grads(m: Edge, group: list) -> None:
    """The gradients of arrow ``m``, which merges the edges ``group``, per gradient call: their sum where
    all leave one tensor (a box that reads ``x`` twice sends ``x`` both terms); none where they leave
    several (no sum of those is a tensor's gradient), or where a summary cannot give the sum (a large
    tensor keeps only its first values): left out, never guessed."""
    shown = next((k for k, g in m.grads.items() if g is m.grad), None)
    m.grads = {}
    if len({e.src for e in group}) == 1:
        for key in dict.fromkeys(k for e in group for k in e.grads):
            sent = [e.grads[key] for e in group if e.grads.get(key) is not None]
            if len(sent) < 2:
                m.grads[key] = sent[0] if sent else None  # (None: nothing sent along any of them)
            elif all(g.complete and g.shape == sent[0].shape for g in sent):
                m.grads[key] = ev.summarize(sum(g.array() for g in sent))._replace(dtype=sent[0].dtype)
    m.grad = m.grads.get(shown)
