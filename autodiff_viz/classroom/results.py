"""What a checker returns: the verdict, its words, and the picture with the diverging node marked.

The picture is drawn with the public views only (``ad.viz.graph``), once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from .. import traces as _traces
from .. import viz
from .display import verdict_colour
from .messages import _fmt

RULE_MARK = "where the rule's numbers first differ from the right ones"
PREDICTION_MARK = "where your prediction differs from the tape's gradient"


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
        right = "one right value" if "(a subgradient)" in self.why else "the right value"  # a kink allows several
        return (f"node '{self.name}' ({kind}backward step {self.step}), at {self.point}: with upstream gradient "
                f"{_fmt(self.upstream)}, the rule sent {got} to {who}; {right} is {_fmt(self.expected)}.")


@dataclass
class CheckResult:
    """The verdict of a checker: ``passed``, a readable ``message``, and what is needed to draw it."""

    passed: bool
    message: str
    divergence: Optional[Divergence] = None
    theoretical: Optional[list] = None       # the tape's Jacobians (compute_gradient layout)
    numerical: Optional[list] = None         # finite-difference Jacobians
    trace: Optional[_traces.Trace] = None    # events of one run of the computation, for pictures
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
        mark = None if self.mark is None else {self.mark: self.note}
        names = kwargs.pop("names", None) or self.names or None
        if mark is not None:
            kwargs.setdefault("mark_legend", self.mark_legend)
        return viz.graph(self.trace, target=self.target, sources=list(self.sources), mark=mark, names=names,
                         **kwargs)

    @property
    def marked_label(self) -> Optional[str]:
        """The label of the marked node in the picture shown (the op type, or the source's name)."""
        g = self.explanation.graph if self.explanation is not None else (
            self.graph() if self.mark is not None else None)
        if g is None:
            return None
        return next((n.label for n in g.model.nodes if n.broken), None)

    def _repr_html_(self) -> str:
        import html

        colour = verdict_colour(self.passed)
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

