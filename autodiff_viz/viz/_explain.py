"""``viz.explain``: why is my gradient ``None``?  In words, and on the graph.

It reads the tape's events (or a trace) and asks the questions in the order a
student would: is the source a tensor at all (a Python number cannot be
watched)?  Did the tape watch it (``tape.watch``, or a trainable variable read
by an op on the tape)?  Are source and target floating point?  Was the target
computed on this tape (not on an earlier one)?  Then, along the recorded ops:
did a value leave through NumPy, run under ``stop_recording``, pass through
``stop_gradient`` (or another op without a gradient), or was a variable changed
in place?  The first answer that explains the ``None`` is the verdict.  A
gradient that is not ``None`` is said with its value, and explained when it
is NaN, inf, zero or tiny, or was asked of a spent tape (:mod:`.explain_value`);
only a plain, finite answer is a grey box.  The graph
marks the node where the path breaks.
"""
from __future__ import annotations

import numbers
import textwrap
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .. import events as ev
from . import _graph
from . import explain_mode as _mode
from . import explain_value as _why
from .model import build as _build
from .model import graph as M
from .model import source as _source
from .text.numbers import fmt_value
from .text.words import tape_name

REASONS = ("connected", "python_number", "not_watched", "not_trainable", "not_read", "integer_dtype",
           "other_tape", "left_numpy", "stop_recording", "stop_gradient", "state", "not_on_tape",
           "not_connected", "spent", "not_finite", "zero", "tiny", "detour", "sums", "nothing_recorded",
           "forward_mode")
# What a mark means in the legend, where it does not mean that the path breaks.
_MARK_LEGEND = {"connected": "a part that passes no gradient back", "zero": "where the gradient becomes 0",
                "tiny": "where the gradient shrinks", "detour": "a copy the tape cannot follow", "spent": "asked of a spent tape",
                "sums": "a target that is summed", "not_finite": "where the gradient path breaks",
                "forward_mode": "where the first NaN/inf appeared"}


@dataclass
class Explanation:
    """``reason`` (one of ``REASONS``), ``message`` (sentences), ``graph`` (with the break marked).

    ``sentences`` holds the message's sentences one by one; the first one is the verdict.
    """

    reason: str
    message: str
    graph: _graph.Graph
    sentences: tuple = ()

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


def explain(tape, target, source, *, rankdir: str = "LR", names=None) -> Explanation:
    """Explain whether (and why not) ``tape.gradient(target, source)`` connects.

    ``tape`` is a ``GradientTape`` (or a ``Trace``); ``target`` and ``source``
    are tensors or variables (a Python number as ``source`` is explained too).
    Tensors are named as the calling code names them; ``names`` (``{tensor id:
    name}``) overrides that, for a caller that knows better (a checker naming
    inputs by the parameters of the student's function).

    >>> import autodiff_viz as ad
    >>> x = ad.constant(3.0)
    >>> with ad.GradientTape() as t:
    ...     y = x * x
    >>> ad.viz.explain(t, y, x).reason
    'not_watched'
    >>> with ad.GradientTape() as t:
    ...     t.watch(x)
    ...     y = x * x
    >>> ad.viz.explain(t, y, x).sentences[0]
    "The gradient is not None: the target depends on the source 'x' through 1 recorded op."
    """
    found = _source.events_of(tape)
    events, tape_id = found.events, found.tape
    (tid,) = _source.ids(target)
    number = not _is_tensor(source)
    sid = None if number else _source.ids(source)[0]
    if tape_id is None:  # a trace: use the tape that recorded the target
        tape_id = next((e.tape for e in events if isinstance(e, ev.Op) and e.output == tid), None)
    # Boxes and sentences use the names the caller's code holds the tensors in, as graph() does.
    labels = {**_source.caller_names(_source.tensor_ids(events) | {tid} | (set() if number else {sid})),
              **(names or {})}
    model = _build.build(events, tape=tape_id, target=(tid,), sources=() if number else (sid,), names=labels)
    d = _Diagnosis(model, events, tape_id, target, source, number, labels)
    reason, sentences = d.run()
    if reason == "connected" and not found.traced:   # a bare tape kept no numbers to explain a 0, NaN or detour by
        sentences = [*sentences, _UNTRACED_VALUE]
    model.remarks = _wrap(sentences)
    model.reindex()
    legend = _MARK_LEGEND.get(reason)
    g = _graph.draw(model, rankdir=rankdir, mark_legend=legend)
    return Explanation(reason, " ".join(sentences), g, tuple(sentences))


_UNTRACED_VALUE = ("This tape was recorded without ad.trace(), so its numbers were not kept: to hear why a gradient "
                   "is 0, tiny, NaN or smaller than expected, put the tape and its gradient() call inside "
                   "`with ad.trace():` and ask again.")


def _is_tensor(x) -> bool:
    """Tensors and variables; a Python number or a NumPy array is not one."""
    return not isinstance(x, (numbers.Number, np.ndarray))


def _wrap(sentences, width=70):
    """Each sentence on lines of at most ``width`` characters (a long word is never split)."""
    return [line for s in sentences
            for line in textwrap.wrap(s, width, break_long_words=False, break_on_hyphens=False) or [""]]


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class _Diagnosis:
    """The questions, in order; each ``_ask_*`` returns ``(reason, sentences)`` or ``None``."""

    def __init__(self, model, events, tape_id, target, source, number, labels=None):
        self.m, self.events, self.tape_id = model, events, tape_id
        self.labels = labels or {}
        self.mine = [e for e in events if tape_id is None or e.tape == tape_id]
        self.t = _source.tensor_info(target)
        self.number = number
        self.source_value = source
        self.s = None if number else _source.tensor_info(source)
        self.tnode = model.node_for(self.t["id"])
        self.snode = None if number else model.node_for(self.s["id"])
        self.t_name = self.name(self.t, self.tnode, "target", self.labels)
        self.s_name = "the Python number" if number else self.name(self.s, self.snode, "source", self.labels)
        # engine tape id -> T1, T2... as pictures number them
        self.tapes = {t: tape_name(k) for t, k in _source.tape_numbers(events).items()}

    # -- names and marks --------------------------------------------------------------------------
    @staticmethod
    def name(info, node, role, labels=None):
        own = (info["name"] or "").split(":")[0]
        mine = (labels or {}).get(info["id"])   # the name the caller's code holds it in
        if own and own != "Variable":            # a variable's own name= comes first
            return f"variable {own!r}"
        if own:
            return f"variable {mine or (node.label if node is not None else own)!r}"
        if node is not None and node.kind in (M.WATCHED, M.CONSTANT):
            return f"the {role} {node.label!r}"
        if node is not None and node.kind == M.OP:
            return (f"the {role} {node.label!r} (the output of {node.op})" if node.label != node.op
                    else f"the {role} (the output of {node.label})")
        if mine:
            return f"the {role} {mine!r}"
        return f"the {role} tensor ({info['dtype']}, shape {tuple(info['shape'])})"

    def source_node(self):
        """The source's node, added as a lone box when the tape never saw it."""
        if self.snode is None:
            if self.number:
                v = self.source_value
                label, kind, value = _short_repr(v), M.CONSTANT, None
                shape, dtype = tuple(np.shape(v)), "NumPy array" if isinstance(v, np.ndarray) else "Python number"
            else:
                s = self.s
                label = (s["name"] or "source").split(":")[0]
                kind = M.VARIABLE if s["variable"] else M.CONSTANT
                shape, dtype, value = tuple(s["shape"]), s["dtype"], s["value"]
            self.snode = M.Node(id=len(self.m.nodes), kind=kind, label=label, shape=shape, dtype=dtype,
                                value=value, role="source",
                                trainable=bool(self.s and self.s["trainable"]))
            self.m.nodes.append(self.snode)
        return self.snode

    def target_node(self, note):
        if self.tnode is None:
            t = self.t
            self.tnode = M.Node(id=len(self.m.nodes), kind=M.CONSTANT, label="target", shape=tuple(t["shape"]),
                                dtype=t["dtype"], value=t["value"], role="target")
            self.m.nodes.append(self.tnode)
        self.tnode.mark(note)

    def no_path(self):
        """No gradient flows: nothing is drawn as 'on the path' (an orange path would say the opposite)."""
        for n in self.m.nodes:
            n.on_path, n.dimmed = False, False
        for e in self.m.edges:
            e.on_path, e.dimmed = False, False

    # -- the walk -----------------------------------------------------------------------------------
    def reach(self, start, forward=True, kinds=("data",), cut=False):
        """Nodes reached along edges of ``kinds``; ``cut``: not through ops that pass no gradient back."""
        edges = self.m.edges
        if cut:
            stop = {n.id for n in self.m.nodes if self.passes_nothing(n) or not self.floating(n)}
            edges = [e for e in edges if e.dst not in stop and e.src not in stop]
        return M.reachable(SimpleNamespace(edges=edges), start, forward, kinds)

    @staticmethod
    def passes_nothing(n):
        """An op whose rule sends no gradient to its inputs (``stop_gradient``, ``round``, comparisons)."""
        return n.kind == M.OP and bool(n.formula) and not n.partials

    @staticmethod
    def floating(n):
        return not n.dtype or n.dtype.startswith(("float", "complex"))

    # -- the questions, in order ----------------------------------------------------------------------
    def run(self):
        for ask in (self.ask_number, lambda: _mode.nothing_recorded(self), lambda: _mode.forward_only(self),
                    self.ask_watched, self.ask_dtype, self.ask_target_here, self.ask_connected):
            answer = ask()
            if answer is not None:
                return answer
        return self.ask_why_not_connected()

    def ask_number(self):
        if not self.number:
            return None
        self.no_path()
        v = self.source_value
        what = "a NumPy array" if isinstance(v, np.ndarray) else "a Python number"
        self.source_node().mark(f"{what[0].upper()}{what[1:]}: the tape cannot watch it.")
        shown = _short_repr(v)
        return "python_number", [
            f"The gradient is None because the source is {what} ({shown}), not a tensor.",
            f"A tape watches tensors and variables only: {what} has no identity the tape could follow.",
            f"Make it a tensor first, x = ad.constant({shown}), call tape.watch(x) inside the tape, and compute "
            "the target from x."]

    def watched_here(self):
        sid = self.s["id"]
        return any(isinstance(e, ev.Watch) and e.tensor == sid for e in self.mine) or \
            any(isinstance(e, ev.Op) and e.output == sid for e in self.mine)

    def other_tape_of(self, tensor_id):
        """The picture name (T1...) of another tape whose op made this tensor, if the events know it."""
        for e in self.events:
            if isinstance(e, ev.Op) and e.output == tensor_id and e.tape != self.tape_id:
                return self.tapes[e.tape]
        return None

    def ask_watched(self):
        if self.watched_here():
            return None
        s, name = self.s, self.s_name
        self.no_path()
        begin = next((e for e in self.mine if isinstance(e, ev.TapeBegin)), None)
        auto = begin.watch_accessed_variables if begin else True
        integer = [] if s["dtype"].startswith("float") else [
            f"It is also an integer tensor ({s['dtype']}), and gradients flow only through floating-point "
            "tensors: create it as a float, as in ad.constant(10.0)."]
        if s["variable"] and not s["trainable"]:
            self.source_node().mark("Created with trainable=False: read, but not watched.")
            return "not_trainable", [
                f"The gradient is None because {name} was created with trainable=False.",
                "The tape reads such a variable but does not watch it, so to the tape it is a constant "
                "(its box is dashed: not watched).",
                f"Call tape.watch({_short(name)}) inside the tape, or create it with trainable=True.", *integer]
        if s["variable"] and not auto:
            self.source_node().mark("Never passed to tape.watch.")
            return "not_watched", [
                f"The gradient is None because the tape was created with watch_accessed_variables=False and "
                f"{name} was never passed to tape.watch.",
                f"Call tape.watch({_short(name)}) inside the tape.", *integer]
        state = self.state_change()
        if state is not None:
            return state
        detour = _why.variable_detour(self) if s["variable"] else None
        if detour is not None:
            return detour
        if s["variable"]:
            self.source_node().mark("No op on the tape read it.")
            return "not_read", [
                f"The gradient is None because no op on the tape read {name}: a trainable variable is watched "
                "when an op on the tape reads it, and none did.",
                "If its value reached the target anyway, it went around the tape: through .numpy(), float() or "
                "a NumPy function (each gives back a plain number that the tape sees as a new constant), or "
                "through a tensor computed from it before the tape started or under tape.stop_recording().",
                "Compute the target with the package's ops on the variable itself, inside the tape "
                f"(ad.square({_short(name)}), not np.square({_short(name)}.numpy())).", *integer]
        elsewhere = self.other_tape_of(s["id"])
        self.source_node().mark("Never watched by this tape.")
        if elsewhere is not None:
            return "not_watched", [
                f"The gradient is None because this tape never watched {name}: it was computed on another "
                f"tape ({elsewhere}), and a tape only follows tensors it watched or computed itself.",
                "Compute everything inside one tape, or call tape.watch on it in this tape.", *integer]
        return "not_watched", [
            f"The gradient is None because the tape never watched {name}.",
            "A tape watches trainable variables on its own, plain tensors only through tape.watch(x).",
            "If it used to be a variable, an assignment like `x = x + 1` replaced it with a tensor: use "
            "x.assign_add(1) to keep the variable.", *integer]

    def ask_dtype(self):
        for info, name, node in ((self.s, self.s_name, self.snode), (self.t, self.t_name, self.tnode)):
            if not info["dtype"].startswith("float"):
                self.no_path()
                (node if node is not None else self.source_node()).mark(
                    f"dtype {info['dtype']}: not differentiable.")
                return "integer_dtype", [
                    f"The gradient is None because {name} has dtype {info['dtype']}.",
                    "Gradients flow only through floating-point tensors (the tape warns about this).",
                    "Create it as a float, as in ad.constant(10.0), or cast it with ad.cast(x, ad.float32)."]
        return None

    def ask_target_here(self):
        t_id = self.t["id"]
        if self.tnode is not None or t_id == self.s["id"]:
            return None
        self.no_path()
        for ask in (self.left_numpy, self.skipped):
            answer = ask()
            if answer is not None:
                return answer
        elsewhere = self.other_tape_of(t_id)
        if elsewhere is not None:
            self.source_node().mark(f"Watched by this tape; the target is on {elsewhere}.")
            self.target_node(f"Computed on tape {elsewhere}, not on this one.")
            return "other_tape", [
                f"The gradient is None because the target was computed on another tape ({elsewhere}), "
                "not on this one: this tape recorded none of the ops that made it.",
                "Ask the tape that recorded it, or compute the target inside this tape's `with` block "
                "(re-run the cell that computes it, with this tape).",
            ]
        self.source_node().mark("Watched, but the target was not computed from it on this tape.")
        self.target_node("Not computed on this tape.")
        return "not_on_tape", [
            f"The gradient is None because the target was not computed on this tape from {self.s_name}.",
            "It was computed before the tape started, outside its `with` block, or on another (earlier) "
            "tape, so no recorded op leads to it."]

    def gradient_value(self):
        """What this tape's last gradient call gave for this target and source, if the events hold it."""
        begin, value = None, None
        for e in self.mine:
            if isinstance(e, ev.GradientBegin):
                begin = e
            elif isinstance(e, ev.GradientEnd) and begin is not None:
                if self.t["id"] in begin.targets and self.s["id"] in begin.sources:
                    k = begin.sources.index(self.s["id"])
                    if k < len(e.results) and e.results[k] is not None:
                        value = e.results[k]
                begin = None
        return value

    def ask_connected(self):
        if self.tnode is None:  # the target is the source itself
            return "connected", [f"The gradient is not None: the target is {self.s_name} itself, so it is 1."]
        s, t = self.snode.id, self.tnode.id
        if t not in self.reach([s], cut=True):
            return None
        path = self.reach([s], cut=True) & self.reach([t], forward=False, cut=True)
        for n in self.m.nodes:  # the highlighted path is the one the gradient takes (not through stop_gradient)
            n.on_path = n.id in path
        for e in self.m.edges:
            e.on_path = e.kind == "data" and e.src in path and e.dst in path
        n_ops = sum(1 for i in path if self.m.node(i).kind == M.OP)
        value = self.gradient_value()
        if value is None:
            value = _source.replay_gradient(self.events, self.t["id"], self.s["id"])
        answer = _why.diagnose(self, value, path)
        if answer is not None:
            return answer
        head = (f"The gradient is not None: the target depends on {self.s_name} through "
                f"{_plural(n_ops, 'recorded op')}" + (f"; tape.gradient gave {fmt_value(value)}." if value else "."))
        parts = self.uncounted(path)
        if not parts:
            return "connected", [head]
        expected = _source.replay_gradient(self.events, self.t["id"], self.s["id"])
        if expected is not None and value is not None and fmt_value(expected) != fmt_value(value):
            parts.append(f"Had every part counted, the gradient would be {fmt_value(expected)}, "
                         f"not {fmt_value(value)}.")
        return "connected", [head, *parts]

    def uncounted(self, path):
        """Sentences for the parts of the source's influence that the gradient leaves out (each marked)."""
        s, t = self.snode.id, self.tnode.id
        fwd_all = self.reach([s], kinds=("data", "skipped"))
        back_all = self.reach([t], forward=False, kinds=("data", "skipped"))
        out = []
        for n in self.m.nodes:
            if n.id in path or n.id not in fwd_all or n.id not in back_all:
                continue
            if n.kind == M.SKIPPED:
                n.mark()  # the model's own note says it ran under stop_recording
                out.append(f"The part through {n.label} is not counted: it ran under tape.stop_recording(), so "
                           "the tape did not record it.")
            elif self.passes_nothing(n):
                n.mark("This op passes no gradient back.")
                out.append(f"The part through {n.label} is not counted: {n.label} passes no gradient back"
                           + (" (that is what stop_gradient is for)." if n.op == "StopGradient" else "."))
        for e in self.m.edges:
            if e.kind == "leave" and e.src in fwd_all:
                e.broken = True
                left = self.m.node(e.src)
                left.mark()
                out.append(f"A value computed from {self.s_name} ({left.label}) also left the package "
                           "through NumPy: whatever was computed from that copy is not counted.")
        if out:
            out.append("So the gradient counts only the recorded path.")
        return out

    def ask_why_not_connected(self):
        self.no_path()
        for ask in (self.left_numpy, self.integer_on_path, self.skipped, self.stopped, self.state_change):
            answer = ask()
            if answer is not None:
                return answer
        self.tnode.mark("No recorded op joins it to the source.")
        self.snode.mark()
        return "not_connected", [
            f"The gradient is None because the target does not depend on {self.s_name} in what the tape "
            "recorded: no path of recorded ops joins them.",
            "If the source's value was used through .numpy(), float() or a NumPy function, the tape could not "
            "follow it there."]

    # -- causes along the recorded ops ---------------------------------------------------------------------
    def left_numpy(self):
        reach = self.reach([self.snode.id]) if self.snode is not None else set()
        for e in self.m.edges:
            if e.kind == "leave" and e.src in reach:
                e.broken = True
                left = self.m.node(e.src)
                left.mark()
                return "left_numpy", [
                    f"The gradient is None because a tensor computed from {self.s_name} ({left.label}) was turned "
                    "into a NumPy array.",
                    "The tape cannot follow NumPy: what came back is a new constant, unconnected to the source.",
                    "Use the package's ops instead (ad.reduce_mean instead of np.mean...)."]
        return None

    def integer_on_path(self):
        s, t = self.snode.id, self.tnode.id
        path = self.reach([s]) & self.reach([t], forward=False)
        ints = [self.m.node(i) for i in sorted(path) if not self.floating(self.m.node(i))]
        if t in path and ints:
            ints[0].mark(f"dtype {ints[0].dtype}: no gradient flows through it.")
            return "integer_dtype", [
                f"The gradient is None because the path from {self.s_name} to the target goes through an "
                f"integer tensor ({ints[0].label}, {ints[0].dtype}), and no gradient flows through integers.",
                "Keep the computation in floating point (ad.cast(..., ad.float32) before, not after)."]
        return None

    def skipped(self):
        fwd = self.reach([self.snode.id], kinds=("data", "skipped"))
        for n in self.m.nodes:
            if n.kind == M.SKIPPED and n.id in fwd:
                n.mark()
                return "stop_recording", [
                    f"The gradient is None because {self.s_name} reaches the target only through {n.label}, which "
                    "ran while tape.stop_recording() was on.",
                    "That op is not on the tape, so nothing recorded connects the target to the source."]
        return None

    def stopped(self):
        s, t = self.snode.id, self.tnode.id
        path = self.reach([s]) & self.reach([t], forward=False)
        for i in sorted(path):
            n = self.m.node(i)
            if self.passes_nothing(n) and t in path:
                n.mark("This op passes no gradient back.")
                why = (["That is what stop_gradient is for: the value goes forward, the gradient does not go "
                        "back."] if n.op == "StopGradient" else [])
                return "stop_gradient", [
                    f"The gradient is None because every path from {self.s_name} to the target goes through "
                    f"{n.label}, which passes no gradient back.", *why]
        return None

    def state_change(self):
        back = self.reach([self.tnode.id], forward=False) if self.tnode is not None else set()
        for e in self.mine:
            if isinstance(e, ev.State):
                vnode = self.m.node_for(e.variable)
                if vnode is not None and vnode.id in back:
                    self.no_path()
                    vnode.mark()
                    self.source_node().mark("This value is not on the tape: only the variable's value after the "
                                            "change is.")
                    name = (e.name or "a variable").split(":")[0]
                    return "state", [
                        f"The gradient is None because variable {name!r} was changed in place ({e.how}) on the "
                        "tape.",
                        "State blocks gradients: the tape sees only the variable's current value, not the "
                        f"history that led to it, so the target is not connected to {self.s_name}."]
        return None


def _short(name):
    """``variable 'b'`` -> ``b``; other descriptions -> ``x``."""
    if name.startswith("variable "):
        return name.split("'")[1]
    if name.count("'") >= 2:
        return name.split("'")[1]
    return "x"


def _short_repr(v) -> str:
    text = repr(v.tolist() if isinstance(v, np.ndarray) else v)
    return text if len(text) <= 40 else text[:39] + "…"
