"""``viz.explain``: why is my gradient ``None``?  In words, and on the graph.

It reads the tape's events (or a trace) and checks, in order, the causes the
TensorFlow guide lists: integer dtypes, a source the tape never watched, a
tensor that left the package through NumPy, a variable changed in place
(state), ops run under ``stop_recording``, and plain disconnection.  The graph
it returns marks where the path breaks.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import events as ev
from . import _dot, _graph, _model as M, _source

REASONS = ("connected", "integer_dtype", "not_watched", "left_numpy", "state", "stop_recording",
           "not_on_tape", "not_connected")


@dataclass
class Explanation:
    """``reason`` (one of ``REASONS``), ``message`` (sentences), ``graph`` (with the break marked)."""

    reason: str
    message: str
    graph: _graph.Graph

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"<Explanation {self.reason}: {self.message[:70]}...>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.graph._repr_mimebundle_(include, exclude)
        bundle["text/plain"] = self.message
        return bundle

    def save(self, path):
        return self.graph.save(path)


def explain(tape, target, source, *, rankdir: str = "LR") -> Explanation:
    """Explain whether (and why not) ``tape.gradient(target, source)`` connects.

    ``tape`` is a ``GradientTape`` (or a ``Trace``); ``target`` and ``source``
    are tensors or variables.

    >>> import autodiff_viz as ad
    >>> x = ad.constant(3.0)
    >>> with ad.GradientTape() as t:
    ...     y = x * x
    >>> ad.viz.explain(t, y, x).reason
    'not_watched'
    """
    found = _source.events_of(tape)
    events, tape_id = found.events, found.tape
    (tid,), (sid,) = _source.ids(target), _source.ids(source)
    if tape_id is None:  # a trace: use the tape that recorded the target
        for e in events:
            if isinstance(e, ev.Op) and e.output == tid:
                tape_id = e.tape
                break
    model = M.build(events, tape=tape_id, target=(tid,), sources=(sid,))
    s_info, t_info = _source.tensor_info(source), _source.tensor_info(target)
    s_name = _name(s_info, "the source")
    t_name = _name(t_info, "the target")
    reason, sentences = _diagnose(model, events, tape_id, s_info, t_info, s_name, t_name)
    model.remarks = _wrap(sentences)
    model.reindex()
    g = _graph.Graph(model, _dot.to_dot(model, rankdir=rankdir))
    return Explanation(reason, " ".join(sentences), g)


def _name(info, fallback):
    if info["name"]:
        return f"variable {info['name'].split(':')[0]!r}"
    return f"{fallback} tensor ({info['dtype']}, shape {tuple(info['shape'])})"


def _cap(text):
    return text[:1].upper() + text[1:]


def _wrap(sentences, width=70):
    lines = []
    for s in sentences:
        line = ""
        for word in s.split():
            if len(line) + len(word) + 1 > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return lines


def _node_of(model, raw):
    for n in model.nodes:
        if n._raw == raw and n.kind != M.NUMPY:
            return n
    return None


def _reach(model, start, forward=True):
    return M.reachable(model, start, forward, kinds=("data", "skipped"))


def _diagnose(model, events, tape_id, s, t, s_name, t_name):
    snode, tnode = _node_of(model, s["id"]), _node_of(model, t["id"])
    mine = [e for e in events if tape_id is None or e.tape == tape_id]

    def add_source_node(note):
        nonlocal snode
        if snode is None:
            snode = M.Node(id=len(model.nodes), kind=M.VARIABLE if s["variable"] else M.CONSTANT,
                           label=(s["name"] or "source").split(":")[0], shape=tuple(s["shape"]),
                           dtype=s["dtype"], value=s["value"], role="source", trainable=s["trainable"])
            model.nodes.append(snode)
        snode.broken = True
        snode.dimmed = False
        snode.notes.append(note)

    # 1. integer dtypes
    for info, name, node in ((s, s_name, snode), (t, t_name, tnode)):
        if not (info["dtype"].startswith("float")):
            if node is None and info is s:
                add_source_node(f"dtype {info['dtype']}: not differentiable")
            elif node is not None:
                node.broken = True
                node.notes.append(f"dtype {info['dtype']}: not differentiable")
            return "integer_dtype", [
                f"The gradient is None because {name} has dtype {info['dtype']}.",
                "Gradients flow only through floating-point tensors (the tape warns about this).",
                "Create it as a float, e.g. ad.constant(10.0) or ad.cast(x, ad.float32)."]
    if snode is not None and tnode is not None:
        fwd = _reach(model, [snode.id])
        if tnode.id in fwd:
            path = fwd & _reach(model, [tnode.id], forward=False)
            ints = [model.nodes[i] for i in sorted(path) if not model.nodes[i].dtype.startswith("float")
                    and model.nodes[i].dtype]
            if ints:
                ints[0].broken = True
                return "integer_dtype", [f"The path from {s_name} to {t_name} goes through an integer tensor "
                                         f"({ints[0].label}, {ints[0].dtype}): no gradient flows through it."]
            n_ops = sum(1 for i in path if model.nodes[i].kind == M.OP)
            return "connected", [f"{_cap(t_name)} depends on {s_name} through {n_ops} recorded op(s): "
                                 "the gradient is not None."]
    # 2. state: a variable on the target's side was changed in place
    back = _reach(model, [tnode.id], forward=False) if tnode is not None else set()
    for e in mine:
        if isinstance(e, ev.State):
            vnode = _node_of(model, e.variable)
            if vnode is not None and vnode.id in back:
                vnode.broken = True
                if snode is None:
                    add_source_node("not on the tape: only the variable's new value is")
                name = (e.name or "a variable").split(":")[0]
                return "state", [
                    f"The gradient is None because variable {name!r} was changed in place ({e.how}) on the tape.",
                    "State blocks gradients: the tape sees only the variable's current value, not the history "
                    f"that led to it, so {t_name} is not connected to {s_name}."]
    # 3. never watched
    watched = {e.tensor for e in mine if isinstance(e, ev.Watch)}
    produced = {e.output for e in mine if isinstance(e, ev.Op)}
    if s["id"] not in watched and s["id"] not in produced:
        begin = next((e for e in mine if isinstance(e, ev.TapeBegin)), None)
        auto = begin.watch_accessed_variables if begin else True
        if s["variable"] and not s["trainable"]:
            why = (f"{s_name} was created with trainable=False, so the tape does not watch it when it is read.",
                   "Call tape.watch(...) on it inside the tape, or make it trainable.")
        elif s["variable"] and not auto:
            why = (f"The tape was created with watch_accessed_variables=False and {s_name} was never passed "
                   "to tape.watch.", "Call tape.watch(...) on it inside the tape.")
        elif s["variable"]:
            add_source_node("never read on the tape")
            return "not_connected", [
                f"The gradient is None because {t_name} does not use {s_name}: it was never read while the "
                "tape was recording, so no recorded op joins them."]
        else:
            why = (f"{s_name} is a plain tensor, not a variable: tapes watch variables automatically, "
                   "tensors only through tape.watch(x).",
                   "If it used to be a variable, an assignment like `x = x + 1` replaced it with a tensor: "
                   "use x.assign_add(1) to keep the variable.")
        add_source_node("never watched by the tape")
        return "not_watched", [f"The gradient is None because the tape never watched {s_name}.",
                               *(_cap(w) for w in why)]
    # 3. left the package through NumPy
    reach = _reach(model, [snode.id]) if snode is not None else set()
    for e in model.edges:
        if e.kind == "leave" and e.src in reach:
            e.broken = True
            left = model.nodes[e.src]
            left.broken = True
            return "left_numpy", [
                f"The gradient is None because a tensor computed from {s_name} ({left.label}) was turned into "
                "a NumPy array.",
                "The tape cannot follow NumPy: what came back is a new constant, unconnected to the source.",
                "Use the package's ops instead (ad.reduce_mean instead of np.mean...)."]
    # 4. stop_recording
    for n in model.nodes:
        if n.kind == M.SKIPPED and n.id in reach:
            n.broken = True
            return "stop_recording", [
                f"The gradient is None because {s_name} was used by {n.label} while tape.stop_recording() "
                "was on: that op is not on the tape, so nothing connects the target to the source."]
    # 6. the target is not on the tape
    if tnode is None:
        if snode is not None:
            snode.broken = True
        return "not_on_tape", [
            f"The gradient is None because {t_name} was not computed on this tape from a watched tensor "
            "(was it computed outside the `with` block, or before the tape started?)."]
    tnode.broken = True
    if snode is not None:
        snode.broken = True
    return "not_connected", [f"The gradient is None because {t_name} does not depend on {s_name} in what the "
                             "tape recorded: no path joins them."]
