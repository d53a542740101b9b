"""Checkers for exercises: is a gradient rule (or a predicted gradient) right, and if not, where and why?

Two questions a student answers, two checkers:

* :func:`check_rule` -- "I wrote the rule of an op" (a ``rule(op, grad)`` as
  ``ad.RegisterGradient`` takes it, or a function decorated with
  ``ad.custom_gradient``).  Every node that uses the rule is checked on its
  own, with the upstream gradient it really received, against finite
  differences of the op; then the whole computation.  This is done at the
  given inputs and at special points: the origin, ties (``a = b``) and a
  random point.  Where the function has a kink (the slopes from the left and
  the right differ) finite differences cannot decide: the checker then follows
  the documented convention (the built-in rule, which is TensorFlow's) or,
  with none, accepts any value between the two slopes.
* :func:`check_prediction` -- "I think the gradient is ...".  The tape's answer
  is compared with the prediction; a wrong ``None`` (or a wrong number where the
  tape says ``None``) comes with :func:`autodiff_viz.viz.explain`.

Both return a :class:`CheckResult`: ``bool(result)`` says whether it passed,
``result.message`` says why in words (with a hint for the common mistakes:
a missing upstream factor, a flipped sign, swapped inputs, a wrong shape),
``result.graph()`` draws the computation with the diverging node marked, and
in Jupyter the result shows all of this.

The backward pass starts from random weights in (0.5, 1.5), one per element of
the target, not from 1: so the target's ∂ is not 1, and a rule that forgets to
multiply by the upstream gradient cannot pass by luck.

>>> import autodiff_viz as ad, numpy as np
>>> def sin_rule(op, grad):
...     return grad * ad.cos(op.inputs[0])
>>> x = np.array([0.3, 1.2])
>>> r = check_rule("Sin", sin_rule, lambda x: ad.sin(x) * x, x)
>>> r.passed
True
>>> wrong = check_rule("Sin", lambda op, grad: grad * ad.sin(op.inputs[0]), lambda x: ad.sin(x) * x, x)
>>> wrong.passed, wrong.divergence.op_type
(False, 'Sin')
"""
from __future__ import annotations

import contextlib
import inspect
import os
import sysconfig
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

# Only the public API and the extension API (autodiff_viz.extend): the checker uses the
# engine the way any tool built on the package would.
from . import GradientTape, ResourceVariable, Tensor, constant, extend, trace
from . import events as _events
from .test import compute_gradient
from .viz import _style

__all__ = ["check_rule", "check_prediction", "CheckResult", "Divergence", "registered", "projector_style",
           "PALETTE"]

# Okabe-Ito colours (from the one style module): told apart with the common forms of colour blindness.
PALETTE = [*_style.CURVE_COLOURS, _style.PALETTE["black"]]
RULE_MARK = "where the rule's numbers first differ from the right ones"
PREDICTION_MARK = "where your prediction differs from the tape's gradient"


def projector_style(font_size: int = 15) -> None:
    """Matplotlib settings for a classroom: large fonts, thick lines, a colour-blind-safe cycle.

    Colours come with line styles too, so curves stay apart on a washed-out
    projector or a greyscale print.
    """
    import matplotlib as mpl  # noqa: PLC0415  (only the notebooks draw)
    from cycler import cycler  # noqa: PLC0415

    styles = ["-", "--", "-.", ":", "-", "--", "-."]
    mpl.rcParams.update({
        "font.size": font_size, "axes.titlesize": font_size + 2, "axes.labelsize": font_size + 1,
        "xtick.labelsize": font_size - 1, "ytick.labelsize": font_size - 1, "legend.fontsize": font_size - 1,
        "lines.linewidth": 2.5, "lines.markersize": 8, "figure.figsize": (8, 4.5), "figure.dpi": 100,
        "axes.grid": True, "grid.alpha": 0.3, "image.cmap": "cividis",
        "axes.prop_cycle": cycler(color=PALETTE) + cycler(linestyle=styles),
    })


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------
@dataclass
class Divergence:
    """Where a rule's numbers first differ from the right ones.

    ``step`` counts the rules run in the backward pass (1 = the first one, next
    to the target); ``node`` is the node id that trace events use and
    ``tensor`` the id of its output, so a view can find it; ``input_index`` is
    the input whose gradient is wrong (``input_name`` its name: ``a``, ``b``...
    as in the op's formula, or the parameter's name for a custom gradient).
    ``point`` says where it was checked; ``hint`` names a common mistake when
    the numbers show one.
    """

    step: int
    node: int
    tensor: int
    op_type: str
    name: str
    input_index: int
    upstream: np.ndarray
    got: Optional[np.ndarray]
    expected: np.ndarray
    input_name: str = ""
    point: str = "the given inputs"
    hint: str = ""
    why: str = ""            # how the right value was decided where finite differences cannot (a kink)

    def describe(self) -> str:
        got = "nothing (None)" if self.got is None else _fmt(self.got)
        who = self.input_name or f"input {self.input_index}"
        kind = "" if self.name == self.op_type else f"{self.op_type}, "
        return (f"node '{self.name}' ({kind}backward step {self.step}), at {self.point}: with upstream gradient "
                f"{_fmt(self.upstream)}, the rule sent {got} to {who}; the right value is {_fmt(self.expected)}. "
                "(The upstream gradient is not 1: the checker starts the backward pass from random weights "
                "on the output, so a rule that forgets the upstream factor cannot pass by luck)")


@dataclass
class CheckResult:
    """The verdict of a checker: ``passed``, a readable ``message``, and what is needed to draw it."""

    passed: bool
    message: str
    divergence: Optional[Divergence] = None
    theoretical: Optional[list] = None       # the tape's Jacobians (compute_gradient layout)
    numerical: Optional[list] = None         # finite-difference Jacobians
    trace: Optional[_events.Trace] = None    # events of one run of the computation, for pictures
    target: Any = None                       # the target tensor of that run
    sources: Sequence = ()                   # its source tensors
    explanation: Any = None                  # viz.explain(...) for a wrong None
    mark: Optional[int] = None               # id of the tensor whose node is marked on the graph
    note: str = ""                           # the words written on the marked node
    mark_legend: str = RULE_MARK             # what the mark means, in the graph's legend
    names: dict = field(default_factory=dict)   # {tensor id: label}: the function's own names in the picture

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.message

    def graph(self, **kwargs):
        """The computation as ``ad.viz.graph`` draws it, the diverging node marked (``None`` without a trace).

        The marked node is filled light vermillion, with a ✗ and a note with
        the numbers (what was sent, what is right); the legend says what the
        mark means for this check.
        """
        if self.trace is None:
            return None
        from .viz import _dot, _graph  # noqa: PLC0415  (drawing code is loaded only when a picture is asked for)

        mark = None if self.mark is None else {self.mark: self.note}
        names = kwargs.pop("names", None) or self.names or None
        g = _graph.graph(self.trace, target=self.target, sources=list(self.sources), mark=mark, names=names,
                         **kwargs)
        if mark is None:
            return g
        dot_options = {k: kwargs[k] for k in ("rankdir", "legend", "values", "digits", "title") if k in kwargs}
        return _graph.Graph(g.model, _dot.to_dot(g.model, mark_legend=self.mark_legend, **dot_options))

    @property
    def marked_label(self) -> Optional[str]:
        """The label of the marked node in the picture shown (the op type, or the source's name)."""
        g = self.explanation.graph if self.explanation is not None else (
            self.graph() if self.mark is not None else None)
        if g is None:
            return None
        return next((n.label for n in g.model.nodes if n.broken), None)

    def _repr_html_(self) -> str:
        import html  # noqa: PLC0415

        colour = _style.colour("variable") if self.passed else _style.colour("backward")
        head = "Right" if self.passed else "Not yet"
        parts = [f'<div style="font-size:16px"><b style="color:{colour}">{head}.</b> '
                 f'{html.escape(self.message)}</div>']
        if not self.passed:
            try:
                g = self.explanation.graph if self.explanation is not None else self.graph()
            except Exception as e:  # noqa: BLE001  (a picture must never hide the verdict)
                g = None
                parts.append(f"<div><i>(no picture: {html.escape(str(e))})</i></div>")
            if g is not None and hasattr(g, "_repr_svg_"):
                parts.append(g._repr_svg_() or "")
            elif g is not None and hasattr(g, "_repr_html_"):
                parts.append(g._repr_html_())
        return "\n".join(parts)


# ---------------------------------------------------------------------------
# Installing a rule for a while
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def registered(op_type: str, rule: Callable):
    """Use ``rule`` as the gradient of ``op_type`` inside the block, then put the old rule back.

    ``ad.RegisterGradient`` changes the global registry for good; an exercise
    checker must leave it as it found it.
    """
    _lookup(op_type)
    with extend.gradient_override(op_type, rule):
        yield


def _lookup(op_type: str):
    if op_type not in extend.PRIMITIVES:
        raise LookupError(f"no op type named {op_type!r}; op types look like 'Sin', 'Mul', 'MatMul'")
    return extend.lookup(op_type)


class _RuleMistake(Exception):
    """A rule returned something the tape cannot use (wrong count or shape): said in words, node known."""

    def __init__(self, message, node):
        super().__init__(message)
        self.node = node


class _Watcher:
    """Wraps a student's ``rule(op, grad)``: checks what it returns before the tape uses it.

    A wrong number of gradients, or a shape that is not the input's (nor one the
    tape can sum down to it), stops the run with a sentence naming both.
    With ``exact_shapes`` every gradient must have its input's shape exactly:
    summing over broadcast dimensions is the student's job, and the first
    gradient that skips it is kept in ``unsummed``.
    """

    def __init__(self, rule, op_type, exact_shapes):
        self.rule, self.op_type, self.exact_shapes = rule, op_type, exact_shapes
        self.unsummed = None     # (node, input index, returned shape, input shape)
        self.node = None

    def __call__(self, op, grad):
        self.node = op  # the node whose rule runs now: marked if the rule raises
        out = self.rule(op, grad)
        grads = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        names = _input_names(len(op.inputs))
        if len(grads) != len(op.inputs):
            raise _RuleMistake(
                f"The rule for {self.op_type} returned {_count(len(grads), 'gradient')}, but {self.op_type} has "
                f"{_count(len(op.inputs), 'input')} ({', '.join(names)}): return one gradient per input, in the "
                "order of op.inputs.", op)
        for i, (g, x) in enumerate(zip(grads, op.inputs)):
            if g is None:
                continue
            got, want = tuple(np.shape(g.numpy() if isinstance(g, Tensor) else g)), tuple(x.shape)
            if got == want:
                continue
            if not _sums_down(got, want):
                raise _RuleMistake(
                    f"The rule for {self.op_type} sent a gradient of shape {got} to {names[i]}, whose shape is "
                    f"{want}: a gradient has the shape of its input.", op)
            if self.exact_shapes and self.unsummed is None:
                self.unsummed = (op, i, got, want)
        return out


def _sums_down(got, want) -> bool:
    """Whether ``want`` broadcasts to ``got`` (so summing over the copies gives ``want``)."""
    try:
        return np.broadcast_shapes(got, want) == got
    except ValueError:
        return False


def _broadcast_axes(got, want) -> tuple:
    lead = len(got) - len(want)
    return tuple(range(lead)) + tuple(lead + i for i, n in enumerate(want) if n == 1 and got[lead + i] != 1)


# ---------------------------------------------------------------------------
# check_rule
# ---------------------------------------------------------------------------
def check_rule(op_type_or_fn, rule: Optional[Callable] = None, f: Optional[Callable] = None,
               inputs: Any = None, *, rtol: float = 1e-4, atol: float = 1e-6, seed: int = 0,
               exact_shapes: bool = False) -> CheckResult:
    """Check a gradient rule against finite differences and name the node where it goes wrong.

    Two forms:

    * ``check_rule("Sin", rule, f, inputs)``: ``rule(op, grad)`` is the rule of
      op type ``"Sin"`` (``rule=None`` checks the rule registered now);
      ``f(*inputs)`` is a computation that uses that op at least once.
    * ``check_rule(fn, inputs)`` or ``check_rule(fn, f, inputs)``: ``fn`` is
      decorated with ``ad.custom_gradient``; ``f`` (a computation that calls
      ``fn``) defaults to ``fn`` itself.

    ``inputs`` is one value (a number or an array) for a one-argument ``f``, or a
    list/tuple with one value per argument; values become float64 constants,
    so finite differences are accurate.  Besides them the rule is checked at the
    origin, at a tie (every input equal to the first, when their shapes agree)
    and at a random point (``seed``).  ``exact_shapes=True``: each gradient the
    rule returns must have its input's shape (the rule sums over broadcast
    dimensions itself; the tape would otherwise do it).
    The rule is installed only while checking: the registry is left as it was.

    >>> import autodiff_viz as ad, numpy as np
    >>> relu = check_rule("Relu", None, ad.nn.relu, np.array([-1.0, 0.0, 2.0]))  # a kink at 0
    >>> relu.passed
    True
    """
    if callable(op_type_or_fn) and not isinstance(op_type_or_fn, str):
        fn = op_type_or_fn
        given = [a for a in (rule, f, inputs) if a is not None]  # (inputs) or (f, inputs), by position or name
        g = given.pop(0) if given and callable(given[0]) else None
        if len(given) != 1:
            raise TypeError("check_rule(fn, inputs) or check_rule(fn, f, inputs): give the input values once")
        name = getattr(fn, "__name__", "fn")
        xs, f = _as_inputs(given[0]), g or fn
        return _check(op_type="IdentityN", f=f, xs=xs, rtol=rtol, atol=atol, seed=seed,
                      what=f"the custom gradient of {name}", label=name,
                      select=lambda node: node.attrs.get("function") == name,
                      reference=_custom_forward(fn), convention=None, input_names=_param_names(fn),
                      watcher=None)
    op_type = op_type_or_fn
    if not isinstance(op_type, str):
        raise TypeError("check_rule: the first argument must be an op type such as 'Sin', or a function decorated "
                        f"with ad.custom_gradient; got {type(op_type).__name__} {op_type!r:.60}")
    if rule is not None and not callable(rule):  # never fall back to the registered rule silently
        raise TypeError(f"check_rule({op_type!r}, rule, f, inputs): rule must be a function rule(op, grad), or None "
                        f"to check the rule registered now; got {type(rule).__name__} {rule!r:.60}")
    prim = _lookup(op_type)
    xs = _as_inputs(inputs)
    if f is None:
        raise TypeError("check_rule: give f, a function of the inputs that uses the op")
    _need_function(f, f"check_rule({op_type!r}, rule, f, inputs)", "f", "a function of the inputs that uses the op")
    builtin = prim.grad if callable(prim.grad) else None   # the documented convention at kinks and ties
    watcher = _Watcher(rule if rule is not None else prim.grad, op_type, exact_shapes) if callable(
        rule if rule is not None else prim.grad) else None
    ctx = registered(op_type, watcher) if watcher is not None else contextlib.nullcontext()
    with ctx:
        return _check(op_type=op_type, f=f, xs=xs, rtol=rtol, atol=atol, seed=seed,
                      what=f"the rule for {op_type}", label=op_type, select=lambda node: True,
                      reference=_primitive_forward(prim), convention=builtin, input_names=None,
                      watcher=watcher)


def _need_function(value, call, name, what) -> None:
    if not callable(value):
        raise TypeError(f"{call}: {name} must be {what}, got {type(value).__name__} {value!r:.60}")


def _as_inputs(inputs) -> list:
    if inputs is None:
        raise TypeError("give the input values: one value, or a list with one value per argument of f")
    if isinstance(inputs, (Tensor, np.ndarray, int, float)):
        inputs = [inputs]
    xs = []
    for v in inputs:
        if isinstance(v, ResourceVariable):
            raise TypeError("check_rule/check_prediction take values, not variables: pass v.numpy()")
        xs.append(np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=np.float64))
    if not xs:
        raise TypeError("give at least one input value")
    return xs


def _param_names(f, n=None) -> list:
    """The names of ``f``'s parameters (``inspect.signature``); ``x``, ``y``... where it has none."""
    try:
        params = [p.name for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if n is None:
        return params
    fallback = ["x", "y", "z", "u", "v", "w"]
    names = params[:n] + [fallback[i] if i < len(fallback) else f"x{i}" for i in range(len(params), n)]
    return names


def _input_names(n) -> list:
    """Input names as the op formulas write them: a, b, c..."""
    return [chr(ord("a") + i) for i in range(n)]


def _count(n, word) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _primitive_forward(prim):
    def forward(node, arrays):
        # The checker's arrays are float64 NumPy arrays: the forward runs on NumPy itself.
        return np.asarray(prim.forward(np, *arrays, **(node.attrs or {})), dtype=np.float64)
    return forward


def _custom_forward(fn):
    def forward(node, arrays):
        # Outside any tape the decorated function just computes its output.
        out = fn(*[constant(a) for a in arrays])
        return np.asarray(out.numpy(), dtype=np.float64)
    return forward


class _Recorder:
    """Listens to the engine's announcements: raw inputs of each op, raw gradients of each backward step."""

    def __init__(self):
        self.ops: dict[int, tuple] = {}        # node id -> (node, input tensors)
        self.order: list[int] = []
        self.steps: list[tuple] = []           # (step, node, upstream, sent)

    def __call__(self, kind, p):
        if kind == "op":
            node = p["node"]
            if node.id not in self.ops:
                self.ops[node.id] = (node, tuple(p["inputs"]))
                self.order.append(node.id)
        elif kind == "backward_step":
            self.steps.append((p["step"], p["node"], p["upstream"], p["input_grads"]))


@dataclass
class _Run:
    rec: _Recorder
    trace: Any
    target: Any = None
    error: Optional[BaseException] = None


def _run(f, xs, seed) -> _Run:
    """One traced run: target = f(*xs), gradient with seeded random output weights (a plain sum can hide errors).

    An exception is kept (with what was traced up to it), except ``NotImplementedError``: an exercise's TODO.
    """
    rec = _Recorder()
    run = _Run(rec, None)
    with trace() as tr, extend.announcements(rec):
        run.trace = tr
        try:
            with GradientTape(persistent=True) as tape:
                tape.watch(xs)
                y = f(*xs)
            if not isinstance(y, Tensor):
                raise TypeError(f"f must return one tensor, not {type(y).__name__}")
            run.target = y
            rng = np.random.default_rng(seed)
            w = constant(rng.uniform(0.5, 1.5, size=tuple(y.shape)).astype(y.numpy().dtype))
            tape.gradient(y, xs, output_gradients=w)
        except NotImplementedError:
            raise
        except Exception as e:  # noqa: BLE001  (a student's rule may fail in any way: said in words)
            run.error = e
    return run


def _one_sided(forward, node, arrays, i, upstream, h=1e-6):
    """Per element of input ``i``: the upstream-weighted slope from the right, from the left, and central."""
    base = [np.asarray(a, dtype=np.float64) for a in arrays]
    x = base[i]
    with np.errstate(all="ignore"):
        f0 = forward(node, base)
        right, left = np.zeros(x.size), np.zeros(x.size)
        flat = x.reshape(-1)
        for k in range(flat.size):
            for step, out in ((h, right), (-h, left)):
                moved = flat.copy()
                moved[k] += step
                args = list(base)
                args[i] = moved.reshape(x.shape)
                out[k] = np.sum(upstream * (forward(node, args) - f0)) / step
        central = (right + left) / 2
    return right.reshape(x.shape), left.reshape(x.shape), central.reshape(x.shape)


def _is_kink(right, left):
    with np.errstate(all="ignore"):
        return ~np.isclose(right, left, rtol=1e-3, atol=1e-4)


def _unbroadcast(a, shape):
    a = np.asarray(a, dtype=np.float64)
    if a.shape == tuple(shape):
        return a
    axes = _broadcast_axes(a.shape, tuple(shape))
    return np.sum(a, axis=axes).reshape(shape) if axes else a.reshape(shape)


def _points(f, xs, seed, names):
    """Where to check: the given inputs, the origin, a tie, a random point (each with its words)."""
    pts = [("the given inputs", xs)]
    if any(np.any(a != 0) for a in xs):
        pts.append((" = ".join(names) + " = 0", [np.zeros_like(a) for a in xs]))
    if len(xs) >= 2 and all(a.shape == xs[0].shape for a in xs[1:]) and \
            not all(np.array_equal(a, xs[0]) for a in xs[1:]):
        pts.append((" = ".join(names) + " (a tie)", [xs[0].copy() for _ in xs]))
    rng = np.random.default_rng(seed + 1)
    pts.append(("a random point", [rng.normal(size=a.shape) for a in xs]))
    return pts


def _check(op_type, f, xs, rtol, atol, seed, what, label, select, reference, convention, input_names,
           watcher) -> CheckResult:
    names = _param_names(f, len(xs))
    first = None
    tried = []
    for where, arrays in _points(f, xs, seed, names):
        given = where == "the given inputs"
        if not given and not _finite_forward(f, arrays):
            continue  # the function has no value there: nothing to check
        result = _check_at(op_type, f, arrays, rtol, atol, seed, what, label, select, reference, convention,
                           input_names, watcher, where, names)
        if given:
            first = result
        if not result.passed:
            if not given and first is not None and first.passed:
                result.message = result.message.replace(
                    f"{_cap(what)} is not right", f"{_cap(what)} is right at the given inputs, but not at "
                    f"{_point_words(where, names, arrays)}", 1)
            return result
        tried.append(where)
    first.message = (f"{_cap(what)} matches finite differences at {_count(len(tried), 'point')} "
                     f"({'; '.join(tried)}): {first.message}")
    return first


def _point_words(where, names, arrays):
    if where.endswith("(a tie)"):
        return f"{where[:-len(' (a tie)')]} = {_fmt(arrays[0])} (a tie)"
    if where == "a random point":
        return "a random point (" + ", ".join(f"{n} = {_fmt(a)}" for n, a in zip(names, arrays)) + ")"
    return where


def _finite_forward(f, arrays) -> bool:
    try:
        with np.errstate(all="ignore"):
            y = f(*[constant(a) for a in arrays])
        return isinstance(y, Tensor) and bool(np.all(np.isfinite(np.asarray(y.numpy(), dtype=np.float64))))
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001  (outside its domain: no check there)
        return False


def _cap(text):
    return text[:1].upper() + text[1:]


def _check_at(op_type, f, arrays, rtol, atol, seed, what, label, select, reference, convention, input_names,
              watcher, where, names) -> CheckResult:
    op_label = "the custom-gradient function" if op_type == "IdentityN" else f"an op of type {op_type}"
    xs = [constant(a) for a in arrays]
    with np.errstate(all="ignore"):
        run = _run(f, xs, seed)
    rec, tr, y = run.rec, run.trace, run.target
    show = dict(trace=tr, target=y, sources=xs, names=_labels(rec, op_type, select, label, xs, names))
    if run.error is not None:
        return _failed_run(run.error, what, show, watcher.node if watcher is not None else None)
    if watcher is not None and watcher.unsummed is not None:
        return _unsummed(watcher, op_type, show)
    labels = show["names"]

    # Which tensors depend on the inputs: only their gradients are sent.
    reach = {extend.tensor_id(x) for x in xs}
    for nid in rec.order:
        node, ins = rec.ops[nid]
        if any(extend.tensor_id(t) in reach for t in ins):
            reach.add(node.out_id)

    checked = 0
    divergence = None
    kinks = 0
    for step, node, upstream, sent in rec.steps:
        if node.type != op_type or not select(node):
            continue
        _, ins = rec.ops[node.id]
        in_arrays = [np.asarray(t.numpy(), dtype=np.float64) for t in ins]
        g = np.asarray(upstream.numpy(), dtype=np.float64)
        checked += 1
        conv = None
        if convention is not None:
            with np.errstate(all="ignore"):
                out = convention(node, upstream)
            out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            conv = [None if c is None else _unbroadcast(c.numpy() if isinstance(c, Tensor) else c, a.shape)
                    for c, a in zip(out, in_arrays)]
        who = [labels.get(extend.tensor_id(t), n) for t, n in zip(ins, input_names or _input_names(len(ins)))]
        verdicts = []
        for i, t in enumerate(ins):
            if extend.tensor_id(t) not in reach or not t.dtype.is_floating:
                verdicts.append(None)
                continue
            got = None if sent[i] is None else np.asarray(sent[i].numpy(), dtype=np.float64)
            verdicts.append(_judge(reference, node, in_arrays, i, g, got, conv[i] if conv else None, rtol, atol))
        kinks += sum(int(np.any(v["kink"])) for v in verdicts if v is not None)
        bad = next((i for i, v in enumerate(verdicts) if v is not None and not v["ok"]), None)
        if bad is not None:
            v = verdicts[bad]
            name = label if op_type == "IdentityN" else node.name
            divergence = Divergence(step, node.id, node.out_id, node.type, name, bad, g, v["got"], v["expected"],
                                    input_name=who[bad] if bad < len(who) else f"input {bad}", point=where,
                                    why=v["why"])
            divergence.hint = _hint(divergence, verdicts, g, where, names, arrays, who)
            break

    if checked == 0:
        return CheckResult(False, f"f never used {op_label}, so {what} was never run: build f from it.", **show)
    with np.errstate(all="ignore"):
        theoretical, numerical = compute_gradient(f, xs)
    jac_ok, jac_kink = _whole_ok(f, xs, theoretical, numerical, rtol, atol)
    passed = jac_ok and divergence is None
    mark, note = None, ""
    if passed:
        msg = (f"{_count(checked, 'node')} checked each time, largest difference "
               f"{_max_err(theoretical, numerical, jac_kink):.2g}"
               + ("; at ties and kinks the documented convention was followed" if kinks or jac_kink else "") + ".")
    elif divergence is not None:
        d = divergence
        msg = f"{_cap(what)} is not right. The numbers first diverge at {d.describe()}."
        if d.why:
            msg += " " + d.why
        if d.hint:
            msg += " " + d.hint
        mark = d.tensor
        note = (f"Rule sent {_fmt(d.got) if d.got is not None else 'None'} to {d.input_name}; "
                f"right: {_fmt(d.expected)}.")
    else:
        msg = (f"{_cap(what)} gives each node the right numbers, but the gradient of the whole computation "
               f"differs from finite differences by {_max_err(theoretical, numerical):.2g}.")
    return CheckResult(passed, msg, divergence, theoretical, numerical, mark=mark, note=note, **show)


def _labels(rec, op_type, select, label, xs, names) -> dict:
    """Names for the picture: the function's parameters for the inputs, the custom function's name for its node."""
    out = {extend.tensor_id(x): n for x, n in zip(xs, names)}
    if op_type == "IdentityN":
        for nid in rec.order:
            node, _ = rec.ops[nid]
            if node.type == op_type and select(node):
                out[node.out_id] = label
    return out


def _judge(reference, node, arrays, i, upstream, got, conv, rtol, atol) -> dict:
    """Is what the rule sent to input ``i`` right?  Finite differences decide, or the convention at a kink."""
    right, left, central = _one_sided(reference, node, arrays, i, upstream)
    kink = _is_kink(right, left)
    expected = central.copy()
    why = ""
    if np.any(kink):
        lo, hi = np.minimum(right, left), np.maximum(right, left)
        if conv is not None:
            expected[kink] = conv[kink]
            why = ("Here the slopes from the left and the right differ (a tie or a kink), so finite differences "
                   "cannot decide: the checker follows the documented convention, TensorFlow's, which the "
                   "built-in rule implements.")
        else:
            inside = (got >= lo - atol) & (got <= hi + atol) if got is not None and got.shape == lo.shape else False
            expected[kink] = np.where(inside, got, (lo + hi) / 2)[kink]
            why = (f"Here the slopes from the left and the right differ (a kink): any value from {_fmt(lo)} to "
                   f"{_fmt(hi)} is accepted, elementwise.")
    finite = np.isfinite(expected)
    if got is None:
        ok = bool(np.allclose(expected[finite], 0.0, atol=atol))  # None for a zero gradient is what TF does too
    elif got.shape != expected.shape:
        ok = False
    else:
        with np.errstate(all="ignore"):
            ok = bool(np.all(np.isclose(got, expected, rtol=rtol, atol=atol) | ~finite))
    return {"ok": ok, "got": got, "expected": expected, "kink": kink, "why": why if not ok and np.any(kink) else ""}


def _hint(d, verdicts, upstream, where, names, arrays, who) -> str:
    """One sentence naming a common mistake, when the numbers show it."""
    got, exp = d.got, d.expected
    at = "" if where == "the given inputs" else f" at {_point_words(where, names, arrays)}"
    if got is None:
        return f"The rule sent None to {d.input_name}, but a gradient flows to it: return a tensor."
    if got.shape != exp.shape:
        return f"It sent shape {got.shape} to {d.input_name}, whose shape is {exp.shape}."
    if d.why.startswith("Here the slopes") and "convention" in d.why and np.allclose(2 * got, exp, atol=1e-6):
        return ("Your rule splits the gradient in half here; the convention sends all of it to one input "
                "(for a maximum, to the first input on a tie).")
    with np.errstate(all="ignore"):
        if not np.all(np.isfinite(got)) and np.all(np.isfinite(exp)):
            bad = "nan" if np.any(np.isnan(got)) else "inf"
            return (f"Your rule returns {bad}{at}: a gradient must be a number wherever the function has a "
                    "value. Guard the division (ad.where) so it never divides by 0.")

        def close(a, b):
            return a is not None and np.shape(a) == np.shape(b) and bool(np.allclose(a, b, rtol=1e-4, atol=1e-6))
        if close(-got, exp) and not close(exp, 0 * exp):
            return "Your numbers have the right size but the wrong sign: check the sign of the derivative."
        if _sums_down(got.shape, np.shape(upstream)) and not close(upstream, np.ones_like(upstream)) and \
                close(got * upstream, exp):
            return ("Your numbers are the local derivative alone: multiply by the upstream gradient `grad` "
                    "(chain rule: the rule sends grad × ∂output/∂input). The checker starts the backward pass "
                    "from random weights, not 1, so the upstream gradient is not 1 here.")
        others = [j for j, v in enumerate(verdicts) if v is not None and j != d.input_index]
        for j in others:
            v = verdicts[j]
            if close(got, v["expected"]) and close(v["got"], exp):
                if "convention" in d.why:   # at a tie both inputs are "right" by the slopes: the convention decides
                    return (f"On this tie your rule sends the gradient to {who[j]}; the convention sends all of it "
                            f"to {who[0]}, the first input.")
                return (f"The gradients of {d.input_name} and {who[j]} are swapped: return them in the order "
                        "of op.inputs.")
    return ""


def _whole_ok(f, xs, theoretical, numerical, rtol, atol):
    """The whole computation against finite differences; rows at a kink are left to the per-node checks.

    Returns ``(ok, rows)``: ``rows`` are the ``(input, element)`` pairs excused as kinks.
    """
    kink_rows = set()
    for i, (t, n) in enumerate(zip(theoretical, numerical)):
        if t.shape != n.shape:
            return False, kink_rows
        t, n = t.T, n.T  # compute_gradient's Jacobians have one column per input element: a row each here
        with np.errstate(all="ignore"):
            rows = ~np.all(np.isclose(t, n, rtol=rtol, atol=atol), axis=1)
        for k in np.flatnonzero(rows):
            if not np.all(np.isfinite(t[k])):
                return False, kink_rows
            right, left = _whole_slopes(f, xs, i, k)
            if np.all(np.isclose(right, left, rtol=1e-3, atol=1e-4)):
                return False, kink_rows
            kink_rows.add((i, k))
    return True, kink_rows


def _whole_slopes(f, xs, i, k, h=1e-6):
    base = np.asarray(xs[i].numpy(), dtype=np.float64)
    flat = base.reshape(-1)

    def value(step):
        moved = flat.copy()
        moved[k] += step
        args = list(xs)
        args[i] = constant(moved.reshape(base.shape))
        with np.errstate(all="ignore"):
            return np.asarray(f(*args).numpy(), dtype=np.float64).reshape(-1)
    f0 = value(0.0)
    return (value(h) - f0) / h, (f0 - value(-h)) / h


def _failed_run(e, what, show, node=None) -> CheckResult:
    mark = note = None
    if node is not None:
        mark, note = node.out_id, "Its rule raised an error."
    if isinstance(e, _RuleMistake):
        msg = str(e)
        mark, note = e.node.out_id, "The rule's result does not fit here."
    else:
        text = str(e)
        if isinstance(e, AttributeError) and text.isidentifier():
            text = f"no attribute {text!r}"
        msg = f"Running {what} raised {type(e).__name__}: {text}"
        frame = _your_frame(e)
        if frame is not None:
            line = (frame.line or "").strip()
            msg += f", in {frame.name}, line {frame.lineno}" + (f": {line}" if line else "")
            if isinstance(e, AttributeError) and "op." in line:
                msg += ". A rule's op has .inputs and .outputs (lists of tensors) and .type"
        msg += "."
    return CheckResult(False, msg, mark=mark, note=note or "", **show)


def _your_frame(e):
    """The innermost frame of the traceback in the student's code (not this package, not a library)."""
    here = os.path.dirname(os.path.abspath(__file__))
    libs = {os.path.abspath(p) for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
                                          sysconfig.get_paths().get("platlib")) if p}
    frames = [fr for fr in traceback.extract_tb(e.__traceback__)
              if not os.path.abspath(fr.filename).startswith(here)
              and not any(os.path.abspath(fr.filename).startswith(lib) for lib in libs)
              and "site-packages" not in fr.filename and "dist-packages" not in fr.filename]
    return frames[-1] if frames else None


def _unsummed(watcher, op_type, show) -> CheckResult:
    op, i, got, want = watcher.unsummed
    name = show["names"].get(op.in_ids[i], _input_names(len(op.inputs))[i])
    axes = _broadcast_axes(got, want)
    keep = any(a >= len(got) - len(want) for a in axes)
    how = (f"ad.reduce_sum(g, axis={axes[0] if len(axes) == 1 else list(axes)}"
           + (", keepdims=True" if keep else "") + ")")
    msg = (f"The rule for {op_type} sent a gradient of shape {got} to {name}, whose shape is {want}. "
           f"{name} was broadcast (copied) along axis {', '.join(map(str, axes))} to make the output, so its "
           f"gradient is the sum over the copies: {how}. In this exercise the tape does not sum for you.")
    return CheckResult(False, msg, mark=op.out_id, note=f"Sent shape {got} to {name} of shape {want}.", **show)


def _max_err(theoretical, numerical, skip=None) -> float:
    """The largest difference, leaving out the rows (input elements) at a kink: ``skip`` from :func:`_whole_ok`."""
    errs = []
    for i, (t, n) in enumerate(zip(theoretical, numerical)):
        if t.size and t.shape == n.shape:
            t, n = t.T, n.T  # one row per input element, as in _whole_ok
            rows = [k for k in range(t.shape[0]) if not skip or (i, k) not in skip]
            if rows:
                errs.append(float(np.nanmax(np.abs(t[rows] - n[rows]))))
    return max(errs) if errs else 0.0


def _fmt(a) -> str:
    """Numbers as every view writes them (``_style.fmt_number``): ``12.0``, ``[0.5, -1.0]``."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 1:
        return _style.fmt_number(float(a.reshape(-1)[0]))
    flat = [_style.fmt_number(float(v)) for v in a.reshape(-1)[:8]]
    text = "[" + ", ".join(flat) + (", …" if a.size > 8 else "") + "]"
    return text + (f" (shape {a.shape})" if a.ndim > 1 else "")


# ---------------------------------------------------------------------------
# check_prediction
# ---------------------------------------------------------------------------
def check_prediction(f: Callable, inputs: Any, predicted: Any, *, rtol: float = 1e-4,
                     atol: float = 1e-5) -> CheckResult:
    """Compare a predicted gradient of ``f(*inputs)`` (summed over its elements) with the tape's.

    ``predicted`` holds one value per input (a single value for one input);
    ``None`` predicts that the input gets no gradient.  ``inputs`` are values
    (made float32 constants and watched) or variables (watched when read, as
    usual, so an unwatched one gives ``None``).  Inputs are named by ``f``'s
    parameters (or a variable's own name) in words and in the picture.

    >>> r = check_prediction(lambda x: x * x, 3.0, 6.0)
    >>> r.passed, r.message
    (True, 'Right: d/dx = 6.0.')
    """
    _need_function(f, "check_prediction(f, inputs, predicted)", "f", "the function whose gradient is predicted")
    single = not isinstance(inputs, (list, tuple))
    items = [inputs] if single else list(inputs)
    sources = [v if isinstance(v, ResourceVariable) else (v if isinstance(v, Tensor) else constant(v))
               for v in items]
    preds = [predicted] if single else list(predicted)
    if len(preds) != len(sources):
        raise ValueError(f"check_prediction: {len(sources)} inputs but {len(preds)} predictions")
    params = _param_names(f, len(sources))
    names = [_source_name(s, p) for s, p in zip(sources, params)]
    with trace() as tr:
        with GradientTape(persistent=True) as tape:
            for s in sources:
                if not isinstance(s, ResourceVariable):
                    tape.watch(s)
            y = f(*sources)
        actual = tape.gradient(y, sources)
    labels = {extend.tensor_id(s): n for s, n in zip(sources, names) if not isinstance(s, ResourceVariable)}
    show = dict(trace=tr, target=y, sources=sources, names=labels, mark_legend=PREDICTION_MARK)
    wrong, why = [], {}
    for i, (p, a) in enumerate(zip(preds, actual)):
        if a is None or p is None:
            if (a is None) != (p is None):
                wrong.append(i)
            continue
        pa = np.asarray(p.numpy() if isinstance(p, Tensor) else p, dtype=np.float64)
        aa = np.asarray(a.numpy(), dtype=np.float64)
        if pa.shape != aa.shape and pa.size != 1:
            wrong.append(i)
            why[i] = _shape_words(names[i], pa, aa)
        elif not np.allclose(pa, aa, rtol=rtol, atol=atol):
            wrong.append(i)
            if pa.size == 1 and aa.size > 1:
                why[i] = (f"For {names[i]} you predicted one number, {_show(p)}, but {names[i]} has {aa.size} "
                          f"elements (shape {aa.shape}): the tape gives {_show(a)}, one number per element.")
    if not wrong:
        shown = ", ".join(f"d/d{n} = {_show(a)}" for n, a in zip(names, actual))
        return CheckResult(True, f"Right: {shown}.", **show)
    i = wrong[0]
    a, p = actual[i], preds[i]
    msg = why.get(i) or f"For {names[i]} you predicted {_show(p)}; the tape gives {_show(a)}."
    explanation = None
    if a is None:
        explanation = _explain(tape, y, sources[i])
        if explanation is not None:   # its verdict here; the whole explanation is written above its graph
            msg += " " + (explanation.sentences[0] if explanation.sentences else explanation.message)
            around = _around_the_tape(f, sources, i, y, tr, explanation)
            if around:
                msg += " " + around
    elif p is None:
        msg += " A path of recorded ops joins the target to this input, so a gradient flows."
        if not np.any(np.asarray(a.numpy())):
            msg += (" Here it happens to be 0: None means no path at all, 0 means a path whose slope is 0 at "
                    "this point.")
    if len(wrong) > 1:
        msg += f" Also check: {', '.join(names[j] for j in wrong[1:])}."
    return CheckResult(False, msg, explanation=explanation, mark=extend.tensor_id(sources[i]),
                       note=f"You predicted {_show(p)}; the tape gives {_show(a)}.", **show)


def _shape_words(name, pa, aa) -> str:
    if pa.ndim <= 1 and aa.ndim <= 1:
        return (f"For {name} you predicted {_count(pa.size, 'number')}, but {name} has {_count(aa.size, 'element')} "
                f"(shape {aa.shape}): a gradient has one number per element of its input.")
    return (f"Your prediction for {name} has shape {pa.shape}; a gradient has the shape of its input, {aa.shape}.")


def _around_the_tape(f, sources, i, y, tr, explanation) -> str:
    """For a variable the tape never read: does its value still change the result?  Then say where it came in.

    ``f`` runs again with that input nudged; a constant whose value moved is where the value came back
    from NumPy (``.numpy()``, ``float()``...).  It is marked on the explanation's graph.
    """
    if explanation.reason != "not_read":
        return ""
    s = sources[i]
    h = 1e-3
    nudged = list(sources)
    nudged[i] = ResourceVariable(s.numpy() + h, name=s.name.split(":")[0], trainable=s.trainable)
    try:
        with trace() as tr2:
            with GradientTape(persistent=True) as tape:
                for k, t in enumerate(nudged):
                    if not isinstance(t, ResourceVariable):
                        tape.watch(t)
                y2 = f(*nudged)
    except Exception:  # noqa: BLE001  (only a hint: the verdict stands without it)
        return ""
    moved = _moved_constant(tr.events, tr2.events)
    with np.errstate(all="ignore"):
        y_changed = not np.allclose(np.asarray(y.numpy(), dtype=np.float64), np.asarray(y2.numpy(), dtype=np.float64))
    if moved is None and not y_changed:
        return ""
    name = s.name.split(":")[0]
    text = f"Its value does reach the result: nudging {name} by {h} changes it"
    if moved is not None:
        _mark_constant(explanation, moved, name)
        return text + (", and the constant marked on the graph moves with it: that is where the value came "
                       "back into the package after leaving through .numpy() or NumPy.")
    return text + ", so it went around the tape (.numpy(), float() or NumPy)."


def _moved_constant(events1, events2):
    """The first constant input (same op, same position in both runs) whose value differs: its id in run 1."""
    ops1 = [e for e in events1 if isinstance(e, _events.Op)]
    ops2 = [e for e in events2 if isinstance(e, _events.Op)]
    made1 = {e.output for e in ops1} | {e.tensor for e in events1 if isinstance(e, _events.Watch)}
    for a, b in zip(ops1, ops2):
        for j, (ia, va, vb) in enumerate(zip(a.inputs, a.in_values, b.in_values)):
            if ia in made1 or va is None or vb is None:
                continue
            if va.head != vb.head or va.mean != vb.mean:
                return ia
    return None


def _mark_constant(explanation, tensor_id, name):
    from .viz import _dot, _graph  # noqa: PLC0415

    model = explanation.graph.model
    n = model.node_for(tensor_id)
    if n is not None:
        n.broken, n.dimmed = True, False
        n.notes.append(f"{name}'s value came back here as a constant.")
    explanation.graph = _graph.Graph(model, _dot.to_dot(model))


def _source_name(s, param) -> str:
    name = getattr(s, "name", None) if isinstance(s, ResourceVariable) else None
    if name:
        return name.split(":")[0]
    return param


def _show(v) -> str:
    if v is None:
        return "None"
    return _fmt(v.numpy() if isinstance(v, Tensor) else v)


def _explain(tape, target, source):
    try:
        from . import viz  # noqa: PLC0415
        return viz.explain(tape, target, source)
    except Exception:  # noqa: BLE001  (the verdict stands without the picture)
        return None
