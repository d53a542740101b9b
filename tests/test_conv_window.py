"""A convolution's or pooling's window in its details and the player's text, checked against NumPy.

The forward numbers (the patch, the kernel, the output at one position) are computed here again from the
inputs with NumPy; where one position's gradient goes (into the patch, into the kernel) is checked against the
engine's gradient of that one output and against central finite differences in float64.
"""
import json
import pathlib
import re

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import events as ev
from autodiff_viz.traces import Trace
from autodiff_viz.viz.model import build as _build, details as _details, story as _story, window as _window
from autodiff_viz.viz.text.numbers import fmt_number

RNG = np.random.default_rng(24)


def traced(fn, x, *weights):
    """Trace ``loss = Σ (fn(x, *weights))²`` and its gradient with respect to ``x`` and the weights."""
    x = ad.constant(x)
    ws = [ad.constant(w) for w in weights]
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch([x] + ws)
            y = fn(x, *ws)
            loss = ad.reduce_sum(y * y)
        grads = tape.gradient(loss, [x] + ws)
    return tr, y.numpy(), [g.numpy() for g in grads]


def events_of(tr, op_type):
    op = next(e for e in tr.events if e.kind == "op" and e.op_type == op_type)
    step = next(e for e in tr.events if e.kind == "backward_step" and e.node == op.node)
    return op, step


def padded(x, pads, value=0.0):
    (t, b), (left, right) = pads
    return np.pad(x, [(0, 0), (t, b), (left, right), (0, 0)], constant_values=value)


def cells(line):
    """A grid line's cells as ``(value, half a unit of its last digit)``, padding as None (brackets dropped)."""
    out = []
    for t in line.replace("[", " ").replace("]", " ").split():
        try:
            digits = len(t.split(".")[1]) if "." in t and "e" not in t else 3
            out.append(None if t == "·" else (float(t), 0.5 * 10.0 ** -digits if "e" not in t else abs(float(t)) * 5e-3))
        except ValueError:
            return None
    return out


def has_row(lines, expected):
    """Whether a line of ``lines`` writes the numbers ``expected`` (NaN: padding) one after another, each
    rounded as written (grids side by side: one line holds a row of each)."""
    want = [None if np.isnan(v) else float(v) for v in expected]
    for line in lines:
        got = cells(line) or []
        for k in range(len(got) - len(want) + 1):
            if all((g is None) == (w is None) and (g is None or abs(g[0] - w) <= g[1] * 1.001 + 1e-12)
                   for g, w in zip(got[k:k + len(want)], want)):
                return True
    return False


def section(details, model, label, key):
    i = next(k for k, n in enumerate(model.nodes) if n.label == label)
    return dict(details["nodes"][i]).get(key)


CONV_CASES = [  # (x shape, w shape, strides, padding)
    ((1, 6, 6, 1), (3, 3, 1, 2), 1, "VALID"),
    ((2, 5, 5, 2), (3, 3, 2, 3), 2, "SAME"),
    ((1, 7, 6, 3), (2, 3, 3, 2), (2, 1), [[0, 0], [1, 0], [2, 1], [0, 0]]),
]


@pytest.mark.parametrize("xs, ws, strides, padding", CONV_CASES, ids=["valid", "same-stride2", "explicit"])
def test_conv_window_numbers_match_numpy(xs, ws, strides, padding):
    x = RNG.normal(size=xs).astype(np.float32)
    w = RNG.normal(size=ws).astype(np.float32)
    tr, y, (dx, dw) = traced(lambda a, k: ad.nn.conv2d(a, k, strides, padding), x, w)
    op, step = events_of(tr, "Conv2D")
    win = _window.window(op, step)
    _, r, c, o = win.position
    # The position shown is the one whose upstream gradient (2y for Σ y²) is largest in the first image.
    upstream = 2 * y
    assert abs(upstream[0, r, c, o]) == pytest.approx(np.abs(upstream[0]).max(), rel=1e-6)
    # Its patch of the zero-padded input and its kernel, as NumPy finds them.
    sh, sw = (strides, strides) if isinstance(strides, int) else strides
    pads = tuple(tuple(p) for p in op.attrs["pads"])
    xp = padded(x.astype(np.float64), pads)
    kh, kw = ws[:2]
    patch = xp[0, r * sh:r * sh + kh, c * sw:c * sw + kw, :]
    inside = ~np.isnan(win.patch)
    np.testing.assert_allclose(np.where(inside, win.patch, 0.0), patch, rtol=1e-6)
    np.testing.assert_allclose(win.kernel, w[:, :, :, o], rtol=1e-6)
    assert win.output == pytest.approx(float((patch * w[:, :, :, o]).sum()), rel=1e-5, abs=1e-5)
    assert win.output == pytest.approx(float(y[0, r, c, o]), rel=1e-6)
    # The rows and columns named are those of the unpadded input (padding: outside it).
    assert win.rows == tuple(r * sh - pads[0][0] + a for a in range(kh))
    assert win.cols == tuple(c * sw - pads[1][0] + b for b in range(kw))
    assert (~inside[:, :, 0]).sum() == sum(1 for a in win.rows for b in win.cols
                                            if not (0 <= a < xs[1] and 0 <= b < xs[2]))


def test_conv_details_and_player_write_the_window_numbers():
    x = RNG.normal(size=(1, 5, 5, 1)).astype(np.float32)
    w = RNG.normal(size=(3, 3, 1, 1)).astype(np.float32)
    tr, y, (dx, dw) = traced(lambda a, k: ad.nn.conv2d(a, k, 1, "SAME"), x, w)
    model = _build.build(tr.events, subscripts=True)
    details = _details.node_details(model)
    forward = section(details, model, "Conv2D", "window")
    win = model.nodes[next(k for k, n in enumerate(model.nodes) if n.label == "Conv2D")].window
    _, r, c, _ = win.position
    xp = padded(x.astype(np.float64), ((1, 1), (1, 1)), np.nan)
    patch = xp[0, r:r + 3, c:c + 3, 0]
    text = "\n".join(forward)
    assert f"row {r}, col {c}, filter 0" in text
    for row_p, row_w in zip(patch, w[:, :, 0, 0]):  # each grid line: the patch's row, the kernel's beside it
        assert has_row(forward, row_p) and has_row(forward, row_w), (row_p, row_w, forward)
    assert f"the output there is {fmt_number(float(y[0, r, c, 0]), 4)}." in text
    # Backward: g = 2y there; its share of ∂input is g · kernel, of ∂kernel g · patch (padding: 0).
    g = 2 * float(y[0, r, c, 0])
    spread = section(details, model, "Conv2D", "spread")
    assert f"received upstream g = {fmt_number(g, 4)}." in spread[0]
    share_in = g * w[:, :, 0, 0].astype(np.float64)
    share_w = g * np.nan_to_num(patch)
    for a in range(3):
        assert has_row(spread, [np.nan if np.isnan(patch[a, b]) else share_in[a, b] for b in range(3)]), spread
        assert has_row(spread, share_w[a]), spread
    # The totals are the engine's ∂kernel and ∂input on the patch.
    for row in dw[:, :, 0, 0]:
        assert has_row(spread, row), spread
    # The player writes the same window at the Conv2D's forward step and its share at its backward step.
    story = _story.build_story(tr.events, model)
    fwd = next(s for s in story["steps"] if s["phase"] == "forward" and "Conv2D" in s["title"])
    bwd = next(s for s in story["steps"] if s["phase"] == "backward" and "Conv2D" in s["title"])
    assert forward[2:2 + 4] == fwd["lines"][fwd["lines"].index(forward[0]) + 2:][:4]
    assert spread[0] == "T1#1: " + next(t for t in bwd["lines"] if t.startswith("The output at")) and spread[2] in bwd["lines"]


@pytest.mark.parametrize("xs, ws, strides, padding", CONV_CASES, ids=["valid", "same-stride2", "explicit"])
def test_conv_spread_is_the_gradient_of_that_one_output(xs, ws, strides, padding):
    x = RNG.normal(size=xs).astype(np.float32)
    w = RNG.normal(size=ws).astype(np.float32)
    tr, y, _ = traced(lambda a, k: ad.nn.conv2d(a, k, strides, padding), x, w)
    op, step = events_of(tr, "Conv2D")
    win = _window.window(op, step)
    s = _window.spread(win, step)
    n, r, c, o = win.position
    assert s.upstream == pytest.approx(2 * float(y[n, r, c, o]), rel=1e-6)
    # The engine's gradient of g · y[n, r, c, o] alone, in float64, read on the window.
    x64, w64 = ad.constant(x.astype(np.float64)), ad.constant(w.astype(np.float64))
    with ad.GradientTape() as tape:
        tape.watch([x64, w64])
        one = ad.nn.conv2d(x64, w64, strides, padding)[n, r, c, o] * s.upstream
    gx, gw = (t.numpy() for t in tape.gradient(one, [x64, w64]))
    np.testing.assert_allclose(s.to_kernel, gw[:, :, :, o], rtol=1e-5, atol=1e-6)
    assert np.abs(np.delete(gw, o, axis=3)).max(initial=0.0) == 0.0  # other filters get nothing from it
    inside = ~np.isnan(s.to_input)
    for (a, b, ch), share in np.ndenumerate(s.to_input):
        if inside[a, b, ch]:
            assert share == pytest.approx(gx[n, win.rows[a], win.cols[b], ch], rel=1e-5, abs=1e-6)
    # ... and nothing outside the window.
    mask = np.zeros(xs[1:3], bool)
    mask[np.ix_([v for v in win.rows if 0 <= v < xs[1]], [v for v in win.cols if 0 <= v < xs[2]])] = True
    assert np.abs(gx[n][~mask]).max(initial=0.0) == 0.0
    # Central finite differences of g · y[n, r, c, o] with respect to the kernel (it is linear: exact).
    eps = 1e-3
    w0 = w.astype(np.float64)
    for a, b, ch in [(0, 0, 0), (ws[0] - 1, ws[1] - 1, ws[2] - 1)]:
        plus, minus = w0.copy(), w0.copy()
        plus[a, b, ch, o] += eps
        minus[a, b, ch, o] -= eps
        fd = s.upstream * (ad.nn.conv2d(x.astype(np.float64), plus, strides, padding).numpy()[n, r, c, o]
                           - ad.nn.conv2d(x.astype(np.float64), minus, strides, padding).numpy()[n, r, c, o]) / (2 * eps)
        assert s.to_kernel[a, b, ch] == pytest.approx(fd, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("pool, padding", [("max", "VALID"), ("max", "SAME"), ("avg", "VALID"), ("avg", "SAME")])
def test_pool_spread_matches_the_engine_and_finite_differences(pool, padding):
    x = RNG.normal(size=(1, 5, 5, 2)).astype(np.float32)
    fn = ad.nn.max_pool2d if pool == "max" else ad.nn.avg_pool2d
    tr, y, _ = traced(lambda a: fn(a, 2, 2, padding), x)
    op, step = events_of(tr, "MaxPool" if pool == "max" else "AvgPool")
    win = _window.window(op, step)
    s = _window.spread(win, step)
    n, r, c, ch = win.position
    real = [(a, b) for a in range(2) for b in range(2)
            if 0 <= win.rows[a] < 5 and 0 <= win.cols[b] < 5]
    values = np.array([x[n, win.rows[a], win.cols[b], ch] for a, b in real], np.float64)
    assert win.output == pytest.approx(values.max() if pool == "max" else values.mean(), rel=1e-6)
    # Finite differences of g · y[n, r, c, ch] with respect to each real input of the window.
    x0 = x.astype(np.float64)
    eps = 1e-4
    for a, b in real:
        plus, minus = x0.copy(), x0.copy()
        plus[n, win.rows[a], win.cols[b], ch] += eps
        minus[n, win.rows[a], win.cols[b], ch] -= eps
        fd = s.upstream * (fn(plus, 2, 2, padding).numpy()[n, r, c, ch]
                           - fn(minus, 2, 2, padding).numpy()[n, r, c, ch]) / (2 * eps)
        assert s.to_input[a, b, 0] == pytest.approx(fd, rel=1e-5, abs=1e-7)
    expected = "All of g goes to the window's maximum" if pool == "max" else \
        f"g is split equally over the window's {len(real)} real inputs"
    model = _build.build(tr.events)
    spread = section(_details.node_details(model), model, op.op_type, "spread")
    assert expected in "\n".join(spread)


def test_window_events_stay_bounded_and_say_when_too_big():
    # A 40×40 batch: the conv's events keep WINDOW_HEAD values of each tensor, never the whole batch.
    x = RNG.normal(size=(8, 40, 40, 1)).astype(np.float32)
    w = RNG.normal(size=(3, 3, 1, 4)).astype(np.float32)
    tr, y, _ = traced(lambda a, k: ad.nn.conv2d(a, k, 1, "VALID"), x, w)
    op, step = events_of(tr, "Conv2D")
    assert len(op.in_values[0].head) == ev.WINDOW_HEAD and op.in_values[0].size == x.size
    assert len(step.grads[0].head) == ev.WINDOW_HEAD
    others = [e for e in tr.events if e.kind == "op" and e.op_type != "Conv2D"]
    assert all(len(v.head) <= ev.HEAD for e in others for v in e.in_values + (e.value,) if v is not None)
    # A JSON round trip keeps the longer heads.
    assert Trace.from_json(tr.to_json()).events == tr.events
    # The chosen position lies within what the trace kept; a position beyond it is said in words.
    win = _window.window(op, step)
    assert not win.missing and win.patch is not None
    far = _window.window(op, step, position=(30, 30))
    assert far.patch is None
    text = " ".join(_window.forward_lines(far))
    assert "the input (8×40×40×1: 12800 values) is too big to show: the trace keeps its first 1024 values" in text
    assert "is not shown" in " ".join(_window.backward_lines(far, _window.spread(far, step)))
    # A kernel too big to keep: the details say so instead of drawing numbers.
    big = RNG.normal(size=(3, 3, 16, 32)).astype(np.float32)
    tr2, _, _ = traced(lambda a, k: ad.nn.conv2d(a, k, 1, "VALID"), RNG.normal(size=(1, 4, 4, 16)).astype(np.float32),
                       big)
    op2, step2 = events_of(tr2, "Conv2D")
    lines = _window.forward_lines(_window.window(op2, step2))
    assert any("the kernel (3×3×16×32: 4608 values) is too big to show" in t for t in lines)


def test_window_loader_refuses_a_head_longer_than_the_bound():
    x = RNG.normal(size=(1, 40, 40, 1)).astype(np.float32)
    tr, _, _ = traced(lambda a: ad.nn.max_pool2d(a, 2, 2, "VALID"), x)
    doc = json.loads(tr.to_json())
    op = next(e for e in doc["events"] if e["kind"] == "op" and e["op_type"] == "MaxPool")
    op["in_values"][0]["head"] += [0.0]
    with pytest.raises(ev.TraceFormatError, match="head has 1025 values, expected 16 to 1024"):
        Trace.from_json(json.dumps(doc))


def test_position_outside_the_output_is_refused():
    tr, _, _ = traced(lambda a: ad.nn.avg_pool2d(a, 2, 2, "VALID"), np.ones((1, 4, 4, 1), np.float32))
    op, step = events_of(tr, "AvgPool")
    with pytest.raises(IndexError, match=re.escape("AvgPool: position (2, 0) is outside its output of shape "
                                                   "(1, 2, 2, 1)")):
        _window.window(op, step, position=(2, 0))


# -- in a browser -------------------------------------------------------------------------------------------
@pytest.mark.browser
def test_click_on_a_conv_node_shows_its_window(browser, tmp_path):
    from playwright.sync_api import expect
    from browser_util import open_widget_page

    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1) / 10
    w = np.array([1, 0, -1, 2], np.float32).reshape(2, 2, 1, 1)
    tr, y, _ = traced(lambda a, k: ad.nn.conv2d(a, k, 1, "VALID"), x, w)
    path = pathlib.Path(ad.viz.animate(tr).save(tmp_path / "conv.html"))
    page = open_widget_page(browser, path)
    page.click("[data-label='Conv2D']")
    expect(page.locator(".adv-details-title")).to_have_text("Conv2D")
    # y = Σ (conv)²: the last position (row 2, col 2) has the largest output, so the largest gradient.
    window = page.locator(".adv-details [data-section='window']")
    expect(window).to_contain_text("One output: image 0, row 2, col 2, filter 0")
    expect(window.locator(".adv-d-line", has_text="1.00 1.10")).to_have_text(
        re.compile(r"^1\.00 1\.10\s+1\.00\s+0\.00$"))
    expect(window).to_contain_text(f"the output there is {fmt_number(float(y[0, 2, 2, 0]), 4)}.")
    spread = page.locator(".adv-details [data-section='spread']")
    expect(spread).to_contain_text(f"received upstream g = {fmt_number(2 * float(y[0, 2, 2, 0]), 4)}.")
    expect(spread).to_contain_text("∂patch += g · kernel")
    expect(spread).to_contain_text("∂kernel += g · patch")
    page.screenshot(path=str(tmp_path / "conv_details.png"))
    assert page.errors == []
    page.close()


def test_a_nan_in_the_window_is_written_as_nan_not_as_padding():
    x = np.ones((1, 3, 3, 1), np.float32)
    x[0, 1, 1, 0] = np.nan
    tr, _, _ = traced(lambda a, k: ad.nn.conv2d(a, k, 1, "VALID"), x, np.ones((3, 3, 1, 1), np.float32))
    op, step = events_of(tr, "Conv2D")
    lines = _window.forward_lines(_window.window(op, step))
    assert lines[3:6] == ["1.00 1.00 1.00    1.00 1.00 1.00", "1.00  nan 1.00    1.00 1.00 1.00",
                          "1.00 1.00 1.00    1.00 1.00 1.00"] and not any("·" in t for t in lines)
    assert lines[-1] == "Σ patch ⊙ kernel = nan: the output there is nan."
