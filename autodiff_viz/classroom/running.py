"""Running a student's computation: a rule installed for a while, checked as the tape calls it, recorded.

Only the public API and the extension API (:mod:`autodiff_viz.extend`): the
checker uses the engine the way any tool built on the package would.
"""
from __future__ import annotations

import contextlib
import os
import sysconfig
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from .. import GradientTape, Tensor, constant, extend, trace
from .messages import _count, _input_names, _names_of_inputs, _shape_slip
from .numeric import _sums_down


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
    """The primitive named ``op_type``; an unknown name raises the package's one unknown-op ``LookupError``."""
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
        self.labels: dict = {}   # tensor id -> the name the checker's messages give it (one name per input)

    def __call__(self, op, grad):
        self.node = op  # the node whose rule runs now: marked if the rule raises
        out = self.rule(op, grad)
        grads = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        names = _names_of_inputs(self.labels, op.in_ids, _input_names(len(op.inputs)), self.op_type)
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
                    f"{want}: a gradient has the shape of its input." + _shape_slip(got, want, op.out_shape), op)
            if self.exact_shapes and self.unsummed is None:
                self.unsummed = (op, i, got, want)
        return out


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


def _your_frame(e):
    """The innermost frame of the traceback in the student's code (not this package, not a library)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the whole package, not only classroom/
    libs = {os.path.abspath(p) for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
                                          sysconfig.get_paths().get("platlib")) if p}
    frames = [fr for fr in traceback.extract_tb(e.__traceback__)
              if not os.path.abspath(fr.filename).startswith(here)
              and not any(os.path.abspath(fr.filename).startswith(lib) for lib in libs)
              and "site-packages" not in fr.filename and "dist-packages" not in fr.filename]
    return frames[-1] if frames else None

