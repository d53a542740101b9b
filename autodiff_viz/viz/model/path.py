"""The path a picture highlights: from the target back to the sources, and pruning to it."""
from __future__ import annotations

from ..text.words import call_name
from .graph import CONSTANT, SCOPE, GraphModel, carries_gradient, reachable


def _mark_path(model: GraphModel, b, target, sources, gradient):
    chosen = None
    if target is None and sources is None and (model.gradients or gradient != -1):
        pool = model.gradients
        if model.selected_tape is not None:
            pool = [g for g in pool if g.tape == model.selected_tape] or pool
        chosen = pool[call_index([call_name((g.tape, g.call)) for g in pool], gradient)]
        target, sources = chosen.targets, chosen.sources
        key = (chosen.tape, chosen.call)
        for e in model.edges:  # label the edges with what the chosen call sent, not the last call
            if e.grads:
                e.grad = e.grads.get(key)
    tnodes = [b.by_raw_tensor[i] for i in _as_tuple(target) if i in b.by_raw_tensor]
    snodes = [b.by_raw_tensor[i] for i in _as_tuple(sources) if i in b.by_raw_tensor]
    for n in snodes:
        n.role = "source"
    for n in tnodes:
        n.role = "target"  # a target that is also a source is shown as the target
    if not tnodes:
        return
    # a bool or integer tensor (a comparison inside a stable formula) carries no gradient: the tape
    # never sends one through it, so the path does not pass it either (dtypes are few: each is asked once)
    inert = {d for d in {n.dtype for n in model.nodes} if not carries_gradient(d)}
    blocked = {n.id for n in model.nodes if n.dtype in inert and n.role is None} if inert else ()
    fwd = reachable(model, [n.id for n in snodes], blocked=blocked)
    back = reachable(model, [n.id for n in tnodes], forward=False, blocked=blocked)
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


def call_index(calls, gradient) -> int:
    """``gradient=`` checked against the calls a picture can show (0 is the first, ``T1#1``; -1 the last).

    Counted as a list is indexed, over the gradient calls in the picture (of
    the tape chosen with ``tape=``), in the order they ran.

    >>> call_index(["T1#1", "T1#2"], -1), call_index(["T1#1", "T1#2"], 0)
    (-1, 0)
    >>> call_index(["T1#1", "T1#2"], 2)
    Traceback (most recent call last):
    ...
    IndexError: graph: gradient=2 is out of range: the picture has 2 gradient calls, T1#1 to T1#2, so gradient= counts from 0 (T1#1) to 1 (T1#2), or -1 for the last
    """
    if isinstance(gradient, bool) or not isinstance(gradient, int):
        raise TypeError(f"graph: gradient= must be an int (0 for the first gradient call, -1 for the last), got "
                        f"{gradient!r:.60} ({type(gradient).__name__})")
    n = len(calls)
    if not -n <= gradient < n:
        if not n:
            raise IndexError(f"graph: gradient={gradient} is out of range: the picture has no gradient calls")
        which = f"1 gradient call, {calls[0]}" if n == 1 else f"{n} gradient calls, {calls[0]} to {calls[-1]}"
        raise IndexError(f"graph: gradient={gradient} is out of range: the picture has {which}, so gradient= counts "
                         f"from 0 ({calls[0]}) to {n - 1} ({calls[-1]}), or -1 for the last")
    return gradient


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
