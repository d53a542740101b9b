"""TensorFlow's view of a recorded op: what gradient and tangent rules and trace events read.

A record (``_record``) is a plain tuple; :class:`Op` wraps one with TF's
names (``op.inputs``, ``op.outputs``, ``op.get_attr(...)``, ``op.type``) and
is made only when a rule or a view asks.  State: none.

>>> import autodiff_viz as ad
>>> x = ad.constant(3.0)
>>> with ad.GradientTape() as tape:
...     tape.watch(x)
...     y = x * x
>>> op = Op(tape._records[0])
>>> op.type, op.name, len(op.inputs)
('Mul', 'Mul', 2)
"""
from __future__ import annotations

from ._dtypes import of_dtype
from ._record import ATTRS, ID, IN_DTYPES, IN_IDS, IN_SHAPES, INPUTS, OUT_DTYPE, OUT_ID, OUT_SHAPE, OUTPUT, PRIM, RULE, \
    SCOPE


class Op:
    """TensorFlow's view of a recorded op, handed to gradient and tangent rules.

    ``inputs``/``outputs`` hold the values the rule asked to keep (``None``
    for the others, and for all of them once a tape has let the record go).
    """

    __slots__ = ("_r", "inputs", "outputs")

    def __init__(self, rec, inputs=None, outputs=None):
        self._r = rec
        if inputs is not None:
            self.inputs = inputs
        if outputs is not None:
            self.outputs = outputs

    @property
    def type(self) -> str:
        """TensorFlow's op type name: ``"Mul"``, ``"MatMul"``..."""
        return self._r[PRIM].type

    @property
    def prim(self):
        return self._r[PRIM]

    @property
    def id(self) -> int:
        return self._r[ID]

    @property
    def attrs(self) -> dict:
        return self._r[ATTRS]

    @property
    def in_ids(self) -> tuple:
        return self._r[IN_IDS]

    @property
    def out_id(self) -> int:
        return self._r[OUT_ID]

    @property
    def in_shapes(self) -> tuple:
        return self._r[IN_SHAPES]

    @property
    def out_shape(self) -> tuple:
        return self._r[OUT_SHAPE]

    @property
    def in_dtypes(self) -> tuple:
        return tuple([of_dtype(d) for d in self._r[IN_DTYPES]])

    @property
    def out_dtype(self):
        return of_dtype(self._r[OUT_DTYPE])

    @property
    def scope(self) -> str:
        return self._r[SCOPE]

    @property
    def rule(self):
        return self._r[RULE]

    @property
    def name(self) -> str:
        """The op's name with its scope, e.g. ``"dense/MatMul"``."""
        rec = self._r
        scope, kind = rec[SCOPE], rec[PRIM].type
        return f"{scope}/{kind}" if scope else kind

    @property
    def node_def(self):
        return {"op": self.type, "name": self.name, "attr": dict(self.attrs)}

    def get_attr(self, name):
        try:
            return self._r[ATTRS][name]
        except KeyError:
            raise ValueError(f"op {self.type} has no attribute {name!r}") from None

    def __getattr__(self, name):
        if name == "_r":
            raise AttributeError(name)
        if name == "inputs" or name == "outputs":
            # Not given: the values the record saved, filled in on first use (most views never ask).
            rec = self._r
            self.inputs = rec[INPUTS] or (None,) * len(rec[IN_IDS])
            self.outputs = (rec[OUTPUT],)
            return getattr(self, name)
        # Attributes (axis, keepdims, perm...) read as op.axis, as in many TF rules.
        attrs = self._r[ATTRS]
        if name in attrs:
            return attrs[name]
        raise AttributeError(name)

    def __eq__(self, other):
        return isinstance(other, Op) and other._r[ID] == self._r[ID]

    def __hash__(self):
        return hash(self._r[ID])

    def __repr__(self):
        return f"<op {self.name} type={self.type}>"
