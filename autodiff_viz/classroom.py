"""Checkers for exercises: is a gradient rule (or a predicted gradient) right, and if not, where does it go wrong?

Two questions a student answers, two checkers:

* :func:`check_rule` -- "I wrote the rule of an op" (a ``rule(op, grad)`` as
  ``ad.RegisterGradient`` takes it, or a function decorated with
  ``ad.custom_gradient``).  The whole computation is compared with finite
  differences through :func:`autodiff_viz.test.compute_gradient`; then every
  node that uses the rule is checked on its own, with the upstream gradient it
  really received, so the first node (in backward order) whose numbers diverge
  is named and marked on the graph.
* :func:`check_prediction` -- "I think the gradient is ...".  The tape's answer
  is compared with the prediction; a wrong ``None`` (or a wrong number where the
  tape says ``None``) comes with :func:`autodiff_viz.viz.explain`.

Both return a :class:`CheckResult`: ``bool(result)`` says whether it passed,
``result.message`` says why in words, ``result.graph()`` draws the computation
with the diverging node marked, and in Jupyter the result shows all of this.

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
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _backend, _hooks, _registry
from . import _recording
from . import events as _events
from ._tape import GradientTape
from ._tensor import ResourceVariable, Tensor, constant
from .test import compute_gradient

__all__ = ["check_rule", "check_prediction", "CheckResult", "Divergence", "registered", "projector_style",
           "PALETTE"]

# Okabe-Ito colours: told apart with the common forms of colour blindness (and in greyscale, with line styles).
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]


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
    the input whose gradient is wrong.
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

    def describe(self) -> str:
        got = "nothing (None)" if self.got is None else _fmt(self.got)
        return (f"node '{self.name}' ({self.op_type}, backward step {self.step}): with upstream gradient "
                f"{_fmt(self.upstream)}, the rule sent {got} to input {self.input_index}; "
                f"the right value is {_fmt(self.expected)}")


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

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.message

    def graph(self, **kwargs):
        """The computation as ``ad.viz.graph`` draws it, the diverging node marked (``None`` without a trace).

        The marked node gets a bold vermillion border and a note with the
        numbers (what was sent, what is right).
        """
        if self.trace is None:
            return None
        from . import viz  # noqa: PLC0415  (drawing code is loaded only when a picture is asked for)

        mark = None if self.mark is None else {self.mark: self.note}
        return viz.graph(self.trace, target=self.target, sources=list(self.sources), mark=mark, **kwargs)

    @property
    def marked_label(self) -> Optional[str]:
        """The label of the marked node in the graph (the op type, or the source's name)."""
        g = self.graph() if self.mark is not None else None
        if g is None:
            return None
        return next((n.label for n in g.model.nodes if n.broken), None)

    def _repr_html_(self) -> str:
        import html  # noqa: PLC0415

        colour = "#0072B2" if self.passed else "#D55E00"  # Okabe-Ito blue / vermillion: colour-blind safe
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
                parts.append(g._repr_svg_())
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
    p = _lookup(op_type)
    saved = (p.grad, p.save_inputs, p.save_output)
    _registry.register_rule(op_type, rule)
    try:
        yield
    finally:
        p.grad, p.save_inputs, p.save_output = saved


def _lookup(op_type: str):
    if op_type not in _registry.PRIMITIVES:
        raise LookupError(f"no op type named {op_type!r}; op types look like 'Sin', 'Mul', 'MatMul'")
    return _registry.PRIMITIVES[op_type]


# ---------------------------------------------------------------------------
# check_rule
# ---------------------------------------------------------------------------
def check_rule(op_type_or_fn, rule: Optional[Callable] = None, f: Optional[Callable] = None,
               inputs: Any = None, *, rtol: float = 1e-4, atol: float = 1e-6, seed: int = 0) -> CheckResult:
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
    so finite differences are accurate.
    The rule is installed only while checking: the registry is left as it was.
    """
    if callable(op_type_or_fn) and not isinstance(op_type_or_fn, str):
        fn = op_type_or_fn
        given = [a for a in (rule, f, inputs) if a is not None]  # (inputs) or (f, inputs), by position or name
        g = given.pop(0) if given and callable(given[0]) else None
        if len(given) != 1:
            raise TypeError("check_rule(fn, inputs) or check_rule(fn, f, inputs): give the input values once")
        xs, f = _as_inputs(given[0]), g
        return _check(op_type="IdentityN", f=f or fn, xs=xs, rtol=rtol, atol=atol, seed=seed,
                      what=f"the custom gradient of {getattr(fn, '__name__', 'fn')}",
                      select=lambda node: node.attrs.get("function") == getattr(fn, "__name__", None),
                      reference=_custom_forward(fn))
    op_type = op_type_or_fn
    prim = _lookup(op_type)
    xs = _as_inputs(inputs)
    if f is None:
        raise TypeError("check_rule: give f, a function of the inputs that uses the op")
    ctx = registered(op_type, rule) if rule is not None else contextlib.nullcontext()
    with ctx:
        return _check(op_type=op_type, f=f, xs=xs, rtol=rtol, atol=atol, seed=seed,
                      what=f"the rule for {op_type}", select=lambda node: True,
                      reference=_primitive_forward(prim))


def _as_inputs(inputs) -> list:
    if inputs is None:
        raise TypeError("give the input values: one value, or a list with one value per argument of f")
    if isinstance(inputs, (Tensor, np.ndarray, int, float)):
        inputs = [inputs]
    xs = []
    for v in inputs:
        if isinstance(v, ResourceVariable):
            raise TypeError("check_rule/check_prediction take values, not variables: pass v.numpy()")
        arr = np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=np.float64)
        xs.append(constant(arr))
    if not xs:
        raise TypeError("give at least one input value")
    return xs


def _primitive_forward(prim):
    def forward(node, arrays):
        xp = _backend.namespace_of(arrays[0])
        return np.asarray(_backend.to_numpy(prim.forward(xp, *arrays, **(node.attrs or {}))), dtype=np.float64)
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


def _run(f, xs, seed):
    """One traced run: target = f(*xs), gradient with seeded random output weights (a plain sum can hide errors)."""
    rec = _Recorder()
    with _recording.trace() as tr:
        _hooks.add(rec)
        try:
            with GradientTape(persistent=True) as tape:
                tape.watch(xs)
                y = f(*xs)
            if not isinstance(y, Tensor):
                raise TypeError("f must return one tensor")
            rng = np.random.default_rng(seed)
            w = constant(rng.uniform(0.5, 1.5, size=tuple(y.shape)).astype(y.numpy().dtype))
            tape.gradient(y, xs, output_gradients=w)
        finally:
            _hooks.remove(rec)
    return rec, tr, tape, y


def _numeric_vjp(forward, node, arrays, i, upstream, h=1e-6):
    base = [np.asarray(a, dtype=np.float64) for a in arrays]
    x = base[i]
    out = np.zeros(x.size)
    flat = x.reshape(-1)
    for k in range(flat.size):
        vals = []
        for step in (h, -h):
            moved = flat.copy()
            moved[k] += step
            args = list(base)
            args[i] = moved.reshape(x.shape)
            vals.append(forward(node, args))
        out[k] = np.sum(upstream * (vals[0] - vals[1]) / (2 * h))
    return out.reshape(x.shape)


def _check(op_type, f, xs, rtol, atol, seed, what, select, reference) -> CheckResult:
    op_label = "the custom-gradient function" if op_type == "IdentityN" else f"an op of type {op_type}"
    try:
        theoretical, numerical = compute_gradient(f, xs)
        rec, tr, tape, y = _run(f, xs, seed)
    except NotImplementedError:
        raise  # an exercise's TODO: let the notebook stop here
    except Exception as e:  # noqa: BLE001  (a student's rule may fail in any way: say how, in words)
        return CheckResult(False, f"Running {what} raised {type(e).__name__}: {e}")

    jac_ok = all(t.shape == n.shape and np.allclose(t, n, rtol=rtol, atol=atol)
                 for t, n in zip(theoretical, numerical))
    # Which tensors depend on the inputs: only their gradients are sent.
    reach = {x._id for x in xs}
    for nid in rec.order:
        node, ins = rec.ops[nid]
        if any(t._id in reach for t in ins):
            reach.add(node.out_id)

    checked = 0
    divergence = None
    for step, node, upstream, sent in rec.steps:
        if node.type != op_type or not select(node):
            continue
        _, ins = rec.ops[node.id]
        arrays = [np.asarray(t.numpy(), dtype=np.float64) for t in ins]
        g = np.asarray(upstream.numpy(), dtype=np.float64)
        checked += 1
        for i, t in enumerate(ins):
            if t._id not in reach or not t.dtype.is_floating:
                continue
            expected = _numeric_vjp(reference, node, arrays, i, g)
            got = None if sent[i] is None else np.asarray(sent[i].numpy(), dtype=np.float64)
            ok = got is not None and got.shape == expected.shape and np.allclose(got, expected, rtol=rtol, atol=atol)
            if got is None and np.allclose(expected, 0.0, atol=atol):
                ok = True  # None for a zero gradient is what TF's rules do too
            if not ok:
                divergence = Divergence(step, node.id, node.out_id, node.type, node.name, i, g, got, expected)
                break
        if divergence is not None:
            break

    if checked == 0:
        return CheckResult(False, f"f never used {op_label}, so {what} was never run: build f from it.",
                           trace=tr, target=y, sources=xs)
    passed = jac_ok and divergence is None
    if passed:
        msg = (f"{what[0].upper() + what[1:]} matches finite differences: {checked} node(s) checked, "
               f"largest difference {_max_err(theoretical, numerical):.2g}.")
    elif divergence is not None:
        msg = (f"{what[0].upper() + what[1:]} is not right. The numbers first diverge at "
               f"{divergence.describe()}.")
    else:
        msg = (f"{what[0].upper() + what[1:]} gives each node the right numbers, but the gradient of the whole "
               f"computation differs from finite differences by {_max_err(theoretical, numerical):.2g}.")
    mark, note = None, ""
    if divergence is not None:
        mark = divergence.tensor
        note = (f"rule sent {_fmt(divergence.got) if divergence.got is not None else 'None'} to input "
                f"{divergence.input_index}, right: {_fmt(divergence.expected)}")
    return CheckResult(passed, msg, divergence, theoretical, numerical, tr, y, xs, mark=mark, note=note)


def _max_err(theoretical, numerical) -> float:
    errs = [float(np.max(np.abs(t - n))) for t, n in zip(theoretical, numerical) if t.size and t.shape == n.shape]
    return max(errs) if errs else 0.0


def _fmt(a) -> str:
    a = np.asarray(a)
    if a.size == 1:
        return f"{float(a.reshape(-1)[0]):.6g}"
    text = np.array2string(a, precision=4, suppress_small=True, max_line_width=10_000, threshold=12, edgeitems=2)
    return " ".join(text.split())


# ---------------------------------------------------------------------------
# check_prediction
# ---------------------------------------------------------------------------
def check_prediction(f: Callable, inputs: Any, predicted: Any, *, rtol: float = 1e-4,
                     atol: float = 1e-5) -> CheckResult:
    """Compare a predicted gradient of ``f(*inputs)`` (summed over its elements) with the tape's.

    ``predicted`` holds one value per input (a single value for one input);
    ``None`` predicts that the input gets no gradient.  ``inputs`` are values
    (made float32 constants and watched) or variables (watched when read, as
    usual, so an unwatched one gives ``None``).
    """
    single = not isinstance(inputs, (list, tuple))
    items = [inputs] if single else list(inputs)
    sources = [v if isinstance(v, ResourceVariable) else (v if isinstance(v, Tensor) else constant(v))
               for v in items]
    preds = [predicted] if single else list(predicted)
    if len(preds) != len(sources):
        raise ValueError(f"check_prediction: {len(sources)} inputs but {len(preds)} predictions")
    with _recording.trace() as tr:
        with GradientTape(persistent=True) as tape:
            for s in sources:
                if not isinstance(s, ResourceVariable):
                    tape.watch(s)
            y = f(*sources)
        actual = tape.gradient(y, sources)
    wrong = []
    for i, (p, a) in enumerate(zip(preds, actual)):
        if a is None or p is None:
            if (a is None) != (p is None):
                wrong.append(i)
            continue
        pa = np.asarray(p.numpy() if isinstance(p, Tensor) else p, dtype=np.float64)
        aa = np.asarray(a.numpy(), dtype=np.float64)
        if np.broadcast_shapes(pa.shape, aa.shape) != aa.shape or not np.allclose(pa, aa, rtol=rtol, atol=atol):
            wrong.append(i)
    names = [_source_name(s, i, len(sources)) for i, s in enumerate(sources)]
    if not wrong:
        shown = ", ".join(f"d/d{n} = {_show(a)}" for n, a in zip(names, actual))
        return CheckResult(True, f"Right: {shown}.", trace=tr, target=y, sources=sources)
    i = wrong[0]
    a, p = actual[i], preds[i]
    msg = f"For {names[i]} you predicted {_show(p)}, the tape gives {_show(a)}."
    explanation = None
    if a is None:
        msg += " The gradient is None: the path from the target back to this input is broken."
        explanation = _explain(tape, y, sources[i])
        if explanation is not None:
            msg += " " + explanation.message
    elif p is None:
        msg += " There is a path from the target to this input, so a gradient flows."
    if len(wrong) > 1:
        msg += f" Also check: {', '.join(names[j] for j in wrong[1:])}."
    return CheckResult(False, msg, trace=tr, target=y, sources=sources, explanation=explanation,
                       mark=sources[i]._id, note=f"you predicted {_show(p)}, the tape gives {_show(a)}")


def _source_name(s, i, n) -> str:
    name = getattr(s, "name", None) if isinstance(s, ResourceVariable) else None
    if name:
        return name.split(":")[0]
    return "x" if n == 1 else f"x{i}"


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
