"""The storyboard's words for a Jacobian: one backward pass per row, and the matrix filling in row by row.

A ``jacobian`` call runs one backward pass per element of its target (see
:mod:`.rows`); the player shows each pass as its own story ("row 2 of 3"),
its sums only of that pass's contributions, and lists the Jacobian's rows
under the panel as each pass finishes.

>>> from autodiff_viz import events as ev
>>> book = RowBook("y", {7: "x"}, "jacobian", (2,))
>>> book.begin(ev.GradientRow(0, 1, row=1, rows=2, index=(0,)))
'Row 1 of 2: the backward pass of y[0]'
>>> book.seen(7, ev.summarize([2.0, 0.0]))
>>> book.begin(ev.GradientRow(1, 1, row=2, rows=2, index=(1,)))
'Row 2 of 2: the backward pass of y[1]'
>>> book.matrix()
['∂y/∂x row by row:', '  row 1, ∂y[0]/∂x = [2.0, 0.0]', '  row 2, ∂y[1]/∂x = …']
"""
from __future__ import annotations

import numpy as np

from ... import events as ev
from ..text.numbers import fmt_full, fmt_value

MAX_ROWS_LISTED = 6  # rows listed under the panel; more are counted
ROW_CHARS = 48       # a row's values in full up to this length (a sentence's limit is 32: rows have a line each)


class RowBook:
    """The rows of one ``jacobian``/``batch_jacobian`` call, as the story reaches them.

    ``sources``: event tensor id -> label, in the call's order.
    """

    def __init__(self, target: str, sources: dict, method: str, row_shape: tuple, digits: int = 4,
                 max_items: int = 4):
        self.target, self.sources, self.method = target, dict(sources), method
        self.digits, self.max_items = digits, max_items  # the storyboard's value rules
        self.row, self.rows, self.index = 0, 0, ()
        self.call = 0                      # the call's number on its tape (T1#2: 2)
        self.row_shape = tuple(row_shape)  # the target's shape (one example's, for batch_jacobian)
        self.done: list[dict] = []    # per finished row: source id -> its row (Summary or None: zeros)
        self.now: dict = {}           # source id -> its total so far in the pass under way

    @classmethod
    def of(cls, e: ev.GradientBegin, label_of, digits: int = 4, max_items: int = 4) -> RowBook | None:
        """The book of a ``jacobian``/``batch_jacobian`` call (``None`` for ``gradient``); ``label_of``: tensor id -> label;
        ``digits`` and ``max_items`` as the storyboard's."""
        if e.method == "gradient":
            return None
        shape = tuple(e.target_values[0].shape) if e.target_values and e.target_values[0] else ()
        book = cls(label_of(e.targets[0]) if e.targets else "target", {s: label_of(s) for s in e.sources}, e.method,
                   shape[1:] if e.method == "batch_jacobian" else shape, digits, max_items)
        book.call = e.call
        return book

    def begin(self, e: ev.GradientRow) -> str:
        """A new pass starts (the last one's rows are kept); returns the step's title."""
        self.finish()
        self.row, self.rows, self.index = e.row, e.rows, tuple(e.index)
        return f"Row {self.row} of {self.rows}: the backward pass of {self.element(self.index)}"

    def finish(self) -> None:
        if self.row and len(self.done) < self.row:
            self.done.append(dict(self.now))
        self.now = {}

    def seen(self, tensor: int, total: ev.Summary | None) -> None:
        """An ``accumulate`` of the pass under way: a source's row is its last total."""
        if tensor in self.sources:
            self.now[tensor] = total

    def element(self, index) -> str:
        where = ", ".join(str(i) for i in index)
        if self.method == "batch_jacobian":  # the same element of every example at once
            where = ":, " + where if where else ":"
        return f"{self.target}[{where}]" if where else self.target

    def tag(self) -> str:
        """What a step of the pass under way says about it (``", row 2 of 3"``)."""
        return f", row {self.row} of {self.rows}" if self.rows else ""

    def lines(self) -> list:
        """What the row's seed step says, before its seed."""
        one = self.element(self.index)
        return [f"{self.method}: one backward pass per element of {self.target}; this one gives row {self.row}.",
                f"The seed is 1 at {one} and 0 elsewhere, so each source receives ∂{one}/∂source,",
                "and every sum in this pass adds only this pass's contributions."]

    def row_text(self, s: ev.Summary) -> str:
        """One row's values: in full with the storyboard's digits where they fit a line, else in words."""
        if s.complete and s.size <= self.max_items:
            full = fmt_full(s, self.digits)
            if len(full) <= ROW_CHARS:
                return full
        return fmt_value(s, self.digits, self.max_items)

    def matrix(self) -> list:
        """The Jacobian so far, row by row, per source: what the panel lists under the table."""
        out = []
        for sid, name in self.sources.items():
            out.append(f"∂{self.target}/∂{name} row by row:")
            shown = 0
            for r in range(1, self.rows + 1):
                if shown == MAX_ROWS_LISTED:
                    out.append(f"  … {self.rows - shown} more rows")
                    break
                shown += 1
                index = tuple(int(i) for i in np.unravel_index(r - 1, self.row_shape)) if self.row_shape else ()
                head = f"  row {r}, ∂{self.element(index)}/∂{name}"
                if r <= len(self.done):
                    got = self.done[r - 1].get(sid)
                    out.append(f"{head} = {self.row_text(got) if got is not None else '0 (not reached)'}")
                else:
                    out.append(f"{head} = …")
        return out
