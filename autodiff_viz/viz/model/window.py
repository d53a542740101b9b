"""One output position of a convolution or pooling op: its window forward, its gradient's spread backward.

Read from trace events only (an ``op`` event and its ``backward_step``):
the op's attributes give the geometry (strides, padding, dilations, the
window's size), and the events of ``events.WINDOW_OPS`` keep up to
``events.WINDOW_HEAD`` leading values of each tensor, so for small images
every number is there.  :func:`window` picks one output position of the first
image (the one that receives the largest gradient, else the middle one) and
gathers its patch of the input and, for ``Conv2D``, its kernel;
:func:`spread` says where that position's upstream gradient goes: over the
patch through the kernel (∂input) and into the kernel through the patch
(∂kernel), whole to the maximum (max pooling), or split equally over the
window's real inputs (average pooling).  :func:`forward_lines` and
:func:`backward_lines` write them as text.

>>> import autodiff_viz as ad
>>> x = ad.reshape(ad.range(16.0), [1, 4, 4, 1])
>>> with ad.trace() as tr:
...     with ad.GradientTape() as tape:
...         tape.watch(x)
...         y = ad.nn.max_pool2d(x, 2, 2, "VALID")
...     g = tape.gradient(y, x)
>>> op = [e for e in tr.events if e.kind == "op"][0]
>>> step = [e for e in tr.events if e.kind == "backward_step"][0]
>>> w = window(op, step)  # every gradient is 1: the first position
>>> w.position, w.rows, w.cols, w.output
((0, 0, 0, 0), (0, 1), (0, 1), 5.0)
>>> spread(w, step).to_input.tolist()
[[[0.0], [0.0]], [[0.0], [1.0]]]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import events as ev
from ..text import grids as G
from ..text.numbers import fmt_number

MAX_CELLS = 7        # a window up to 7×7 is drawn as a grid; a larger one is said in words
DETAIL_CHANNELS = 3  # input channels a click's details draw (the player's text draws one)
PAD = "·"            # a padding cell


@dataclass
class Window:
    """Output ``position`` (batch, row, column, channel) of a window op and what it read.

    ``rows``/``cols``: the input rows and columns of its window (outside the
    input: padding).  ``patch`` [kh, kw, channels] holds the input there (NaN on
    padding); ``kernel`` [kh, kw, channels] the filter of the output channel
    (``Conv2D`` only).  ``missing``: why no numbers are shown, in words.
    """

    op_type: str
    position: tuple
    rows: tuple
    cols: tuple
    in_shape: tuple
    strides: tuple
    pads: tuple
    dilations: tuple = (1, 1)
    patch: np.ndarray | None = None
    kernel: np.ndarray | None = None
    output: float | None = None
    chosen: str = ""
    missing: str = ""

    @property
    def inside(self) -> np.ndarray:
        """[kh, kw]: which cells of the window lie inside the input (the others are padding)."""
        rows, cols = np.array(self.rows)[:, None], np.array(self.cols)[None, :]
        return (rows >= 0) & (rows < self.in_shape[1]) & (cols >= 0) & (cols < self.in_shape[2])


@dataclass
class Spread:
    """Where the upstream gradient ``upstream`` of a window's position went, in one backward step.

    ``to_input`` [kh, kw, channels]: its share of ∂input on the patch (NaN on padding);
    ``to_kernel``: its share of ∂kernel (``Conv2D``).  ``input_total``/``kernel_total``: what the step
    sent there in all, every position's share summed (``None`` when the trace did not keep it).
    """

    upstream: float
    to_input: np.ndarray
    to_kernel: np.ndarray | None = None
    input_total: np.ndarray | None = None
    kernel_total: np.ndarray | None = None
    sent: tuple = (True, True)   # whether the step sent anything to the input, the kernel (not: not a source)


def _geometry(op: ev.Op):
    a = op.attrs
    pads = tuple(tuple(int(v) for v in p) for p in a.get("pads", ((0, 0), (0, 0))))
    strides = tuple(int(v) for v in a.get("strides", (1, 1)))
    if op.op_type == "Conv2D":
        k = tuple(int(v) for v in op.in_shapes[1][:2])
        return k, strides, pads, tuple(int(v) for v in a.get("dilations", (1, 1)))
    return tuple(int(v) for v in a.get("ksize", (1, 1))), strides, pads, (1, 1)


def _kept(s: ev.Summary | None, index) -> bool:
    """Whether the summary keeps the value at flat ``index`` (or all of an array of indices)."""
    return s is not None and int(np.max(index)) < len(s.head)


def _values(s: ev.Summary, index) -> np.ndarray:
    return np.asarray(s.head, dtype=np.float64)[index]


def _flat(shape, *index):
    return np.ravel_multi_index(np.broadcast_arrays(*index), shape)


def _too_big(what: str, s: ev.Summary | None) -> str:
    if s is None:
        return f"the trace holds no values of the {what}"
    dims = "×".join(str(d) for d in s.shape)
    return (f"the {what} ({dims}: {s.size} values) is too big to show: the trace keeps its first "
            f"{len(s.head)} values, and this window lies beyond them")


def window(op: ev.Op, step: ev.BackwardStep | None = None, position=None) -> Window | None:
    """The window of one output position of ``op`` (a ``Conv2D``, ``MaxPool`` or ``AvgPool`` event).

    ``position``: ``(row, col)`` or ``(row, col, channel)`` of the first image; by default the position
    whose upstream gradient in ``step`` is largest (the middle one without a step).  ``None`` for any
    other op.
    """
    if op.op_type not in ev.WINDOW_OPS or len(op.shape) != 4 or not op.in_shapes:
        return None
    (kh, kw), strides, pads, dil = _geometry(op)
    x_shape = tuple(op.in_shapes[0])
    _, oh, ow, oc = op.shape
    conv = op.op_type == "Conv2D"
    x_sum = op.in_values[0] if op.in_values else None
    w_sum = op.in_values[1] if conv and len(op.in_values) > 1 else None
    cin = x_shape[3]

    def geometry(r, c):
        rows = tuple(r * strides[0] - pads[0][0] + a * dil[0] for a in range(kh))
        cols = tuple(c * strides[1] - pads[1][0] + b * dil[1] for b in range(kw))
        return rows, cols

    def available(r, c, o):
        rows, cols = geometry(r, c)
        last_r = max([v for v in rows if 0 <= v < x_shape[1]], default=0)
        last_c = max([v for v in cols if 0 <= v < x_shape[2]], default=0)
        chans = cin - 1 if conv else o
        if not _kept(x_sum, _flat(x_shape, 0, last_r, last_c, chans)):
            return "input"
        if conv and not _kept(w_sum, _flat(op.in_shapes[1], kh - 1, kw - 1, cin - 1, o)):
            return "kernel"
        return ""

    up = step.upstream if step is not None else None
    if position is not None:
        r, c, o = (tuple(position) + (0,))[:3]
        if not (0 <= r < oh and 0 <= c < ow and 0 <= o < oc):
            raise IndexError(f"{op.op_type}: position {tuple(position)} is outside its output of shape "
                             f"{tuple(op.shape)}")
        chosen = "the position asked for"
    else:
        r, c, o, chosen = _choose(op, up, available)
    rows, cols = geometry(r, c)
    win = Window(op.op_type, (0, r, c, o), rows, cols, x_shape, strides, pads, dil, chosen=chosen)
    lacking = available(r, c, o)
    if lacking:
        win.missing = _too_big(lacking, x_sum if lacking == "input" else w_sum)
        return win
    win.patch = _patch_of(x_sum, win)
    if conv:
        win.kernel = _kernel_of(w_sum, win)
    out_index = _flat(op.shape, 0, r, c, o)
    win.output = float(_values(op.value, out_index)) if _kept(op.value, out_index) else None
    return win


def _choose(op, up, available):
    """The output position to show: the largest gradient whose window the trace keeps, else the middle."""
    _, oh, ow, oc = op.shape
    middle = (oh // 2, ow // 2, 0)
    if up is not None and tuple(up.shape) == tuple(op.shape) and up.size:
        g = np.abs(np.asarray(up.head, dtype=np.float64))
        for k in np.argsort(-g, kind="stable")[: 4 * oc + 64]:
            n, r, c, o = np.unravel_index(int(k), op.shape)
            if n != 0 or g[k] == 0:
                continue
            if not available(r, c, o):
                return int(r), int(c), int(o), "the position whose gradient is largest"
    if not available(*middle):
        return (*middle, "the middle position")
    return 0, 0, 0, "the first position"


def spread(win: Window, step: ev.BackwardStep) -> Spread | None:
    """Where the upstream gradient of ``win``'s position went in ``step`` (``None``: the trace lacks it)."""
    if win is None or win.missing or step is None or step.upstream is None:
        return None
    up = step.upstream
    k = _flat(up.shape, *win.position) if len(up.shape) == 4 else None
    if k is None or not _kept(up, k):
        return None
    g = float(_values(up, k))
    inside = np.broadcast_to(win.inside[..., None], win.patch.shape)
    if win.op_type == "Conv2D":
        out = Spread(g, np.where(inside, g * win.kernel, np.nan), np.where(inside, g * win.patch, 0.0))
    elif win.op_type == "MaxPool":
        share = np.zeros_like(win.patch)
        share[np.unravel_index(_first_max(win), win.inside.shape) + (0,)] = g
        out = Spread(g, np.where(inside, share, np.nan))
    else:
        out = Spread(g, np.where(inside, g / max(int(win.inside.sum()), 1), np.nan))
    out.sent = tuple(i < len(step.grads) and step.grads[i] is not None for i in range(2))
    out.input_total = _patch_of(step.grads[0] if step.grads else None, win)
    if win.op_type == "Conv2D" and len(step.grads) > 1:
        out.kernel_total = _kernel_of(step.grads[1], win)
    return out


def _first_max(win) -> int:
    """The flat index of the window's first largest real value (row-major, as TF routes ties)."""
    return int(np.argmax(np.where(win.inside, win.patch[:, :, 0], -np.inf)))


def _patch_of(s, win):
    """The values of ``s`` (shaped as the op's input) on ``win``'s patch, NaN on padding (``None``: not kept)."""
    if s is None or tuple(s.shape) != tuple(win.in_shape):
        return None
    rr, cc = np.meshgrid(np.array(win.rows), np.array(win.cols), indexing="ij")
    inside = (rr >= 0) & (rr < win.in_shape[1]) & (cc >= 0) & (cc < win.in_shape[2])
    chans = np.arange(win.in_shape[3]) if win.op_type == "Conv2D" else np.array([win.position[3]])
    idx = _flat(win.in_shape, 0, np.clip(rr, 0, win.in_shape[1] - 1)[..., None],
                np.clip(cc, 0, win.in_shape[2] - 1)[..., None], chans[None, None, :])
    return np.where(inside[..., None], _values(s, idx), np.nan) if _kept(s, idx) else None


def _kernel_of(s, win):
    """The values of ``s`` (shaped as the kernel) for ``win``'s output channel (``None``: not kept)."""
    if s is None or len(s.shape) != 4:
        return None
    kh, kw, cin, _ = s.shape
    a, b, ch = np.meshgrid(np.arange(kh), np.arange(kw), np.arange(cin), indexing="ij")
    idx = _flat(s.shape, a, b, ch, win.position[3])
    return _values(s, idx) if _kept(s, idx) else None


# ---------------------------------------------------------------------------
# The window in words and grids
# ---------------------------------------------------------------------------
def _span(cells) -> str:
    return f"{cells[0]}–{cells[-1]}" if len(cells) > 1 else str(cells[0])


def _padding(pads) -> str:
    (t, b), (left, right) = pads
    if not (t or b or left or right):
        return "no padding"
    return f"padding {t} above, {b} below, {left} left, {right} right"


def _where(win: Window) -> list:
    n, r, c, o = win.position
    what = "filter" if win.op_type == "Conv2D" else "channel"
    dil = "" if win.dilations == (1, 1) else f", dilation {win.dilations[0]}×{win.dilations[1]}"
    return [f"One output: image {n}, row {r}, col {c}, {what} {o}: {win.chosen}.",
            f"Its window: input rows {_span(win.rows)}, cols {_span(win.cols)} "
            f"(stride {win.strides[0]}×{win.strides[1]}, {_padding(win.pads)}{dil})."]


def _output(win: Window) -> str:
    n, r, c, o = win.position
    return f"image {n}, row {r}, col {c}, {'filter' if win.op_type == 'Conv2D' else 'channel'} {o}"


def _cells(a2, inside=None, mark=None):
    """A 2-D array as a grid; cells outside ``inside`` (padding) as ``·``."""
    inside = np.ones(np.shape(a2), bool) if inside is None else inside
    return G.grid([[float(v) if ok else PAD for v, ok in zip(row, ins)] for row, ins in zip(a2, inside)], mark)


def _channels(n, most):
    shown = list(range(min(n, most)))
    more = n - len(shown)
    return shown, (f"… and {more} more input channel{'s' if more > 1 else ''}, each with its own kernel slice."
                   if more else "")


def forward_lines(win: Window | None, channels: int = DETAIL_CHANNELS) -> list:
    """The forward step at ``win``'s position: its patch (and kernel), and the output they give."""
    if win is None:
        return []
    lines = _where(win)
    if win.missing:
        return lines + [f"Its numbers are not shown: {win.missing}."]
    kh, kw = win.patch.shape[:2]
    if max(kh, kw) > MAX_CELLS:
        return lines + [f"The {kh}×{kw} window is too big to draw here."]
    pad_note = f"{PAD}: padding" + (" (counts as 0)." if win.op_type == "Conv2D" else
                                    " (never the maximum)." if win.op_type == "MaxPool" else " (not counted).")
    y = fmt_number(win.output, 4) if win.output is not None else "not kept by the trace"
    if win.op_type == "Conv2D":
        cin = win.patch.shape[2]
        shown, more = _channels(cin, channels)
        for ch in shown:
            title = f"patch, channel {ch}" if cin > 1 else "patch"
            lines += G.side_by_side([(title, _cells(win.patch[:, :, ch], win.inside)),
                                     ("⊙ kernel", _cells(win.kernel[:, :, ch]))])
        if more:
            lines.append(more)
        total = float(np.where(win.inside[..., None], win.patch * win.kernel, 0.0).sum())
        lines.append(f"Σ patch ⊙ kernel{' over all channels' if cin > 1 else ''} = {fmt_number(total, 4)}: "
                     f"the output there is {y}.")
    elif win.op_type == "MaxPool":
        mark = np.unravel_index(_first_max(win), (kh, kw))
        lines += ["Window ([ ]: its maximum):"] + _cells(win.patch[:, :, 0], win.inside, tuple(int(v) for v in mark))
        lines.append(f"max = {y}.")
    else:
        real = int(win.inside.sum())
        lines += ["Window:"] + _cells(win.patch[:, :, 0], win.inside)
        lines.append(f"The mean of its {real} real inputs = {y}.")
    if not win.inside.all():
        lines.append(pad_note)
    return lines


def backward_lines(win: Window | None, s: Spread | None, channels: int = DETAIL_CHANNELS,
                   totals: bool = True) -> list:
    """Where the gradient of ``win``'s position went: over its patch (∂input) and into the kernel (∂kernel).

    ``totals``: also the step's whole ∂input on the patch and ∂kernel (every position's share summed).
    """
    if win is None:
        return []
    if win.missing or s is None:
        why = win.missing or "the trace did not keep its upstream gradient"
        return [f"The output at {_output(win)}: where its gradient went is not shown: {why}."]
    kh, kw = s.to_input.shape[:2]
    lines = [f"The output at {_output(win)} received upstream g = {fmt_number(s.upstream, 4)}."]
    if max(kh, kw) > MAX_CELLS:
        return lines + [f"The {kh}×{kw} window is too big to draw here."]
    for what, sent in zip(("input", "kernel"), s.sent if win.op_type == "Conv2D" else s.sent[:1]):
        if not sent:
            lines.append(f"(The tape sends the {what} nothing: it is not a source. Its share is drawn all the same.)")
    if win.op_type == "Conv2D":
        cin = s.to_input.shape[2]
        shown, more = _channels(cin, channels)
        for ch in shown:
            tail = f", channel {ch}" if cin > 1 else ""
            lines += G.side_by_side([(f"∂patch += g · kernel{tail}", _cells(s.to_input[:, :, ch], win.inside)),
                                     (f"∂kernel += g · patch{tail}", _cells(s.to_kernel[:, :, ch]))])
        if more:
            lines.append(more)
    elif win.op_type == "MaxPool":
        mark = tuple(int(v) for v in np.unravel_index(_first_max(win), (kh, kw)))
        lines.append(f"All of g goes to the window's maximum (row {win.rows[mark[0]]}, col {win.cols[mark[1]]});"
                     " the other cells get 0:")
        lines += _cells(s.to_input[:, :, 0], win.inside, mark)
    else:
        real = int(win.inside.sum())
        lines.append(f"g is split equally over the window's {real} real inputs, g/{real} = "
                     f"{fmt_number(s.upstream / max(real, 1), 4)} each:")
        lines += _cells(s.to_input[:, :, 0], win.inside)
    if not win.inside.all():
        lines.append(f"{PAD}: padding, it receives nothing.")
    if totals:
        lines += _total_lines(win, s)
    return lines


def _total_lines(win: Window, s: Spread) -> list:
    lines = []
    if s.input_total is not None:
        lines.append("∂input on this patch in all (every window that covers a cell adds its share):")
        lines += _cells(s.input_total[:, :, 0], win.inside)
        if s.input_total.shape[2] > 1:
            lines.append("(channel 0 shown.)")
    if s.kernel_total is not None:
        lines.append(f"∂kernel of filter {win.position[3]} in all (g · patch summed over every position and image):")
        lines += _cells(s.kernel_total[:, :, 0])
        if s.kernel_total.shape[2] > 1:
            lines.append("(input channel 0 shown.)")
    return lines


def attach(node, op: ev.Op, steps) -> None:
    """Put ``op``'s window on its view-model ``node``, and the spread of each of its backward ``steps``
    (``[(call key, step event)]``); the position is the first step's largest gradient."""
    node.window = window(op, steps[0][1] if steps else None)
    node.spreads = tuple((key, step.seq, spread(node.window, step)) for key, step in steps)


def player_lines(node, seq: int | None = None) -> list:
    """What the player's step adds for a window op's view-model ``node`` (nothing for other nodes): the
    forward step's window, or (``seq``: a backward step's event) where its gradient went, one channel."""
    if node.window is None:
        return []
    if seq is None:
        return forward_lines(node.window, channels=1)
    found = [s for _, step_seq, s in node.spreads if step_seq == seq]
    return backward_lines(node.window, found[0], channels=1, totals=False) if found else []
