"""NaN and inf traced to their origin (viz/model/nonfinite.py), against the engine's real numbers.

Every expected number is closed-form math (log 0 = -inf, 1/0 = inf, 1/0.5 = 2), never copied from the
package's output.
"""
import math

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.model import nonfinite as nf
from autodiff_viz.viz.model.build import build
from autodiff_viz.viz.model.story import build_story, states

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the engine's NumPy warns on log(0), 1/0


def traced(f, *values):
    """Run ``f`` on watched constants inside a trace; (trace, tape, inputs, target, gradients)."""
    xs = [ad.constant(v) for v in values]
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(xs)
            y = f(*xs)
        g = tape.gradient(y, xs)
    return tr, tape, xs, y, g


def cross_entropy(y, p):
    return -ad.reduce_sum(y * ad.math.log(p))


# ---------------------------------------------------------------------------
# origins and causes
# ---------------------------------------------------------------------------
def test_log_of_zero_forward_and_zero_times_inf_backward():
    tr, _, _, loss, (gy, gp) = traced(cross_entropy, [0.0, 1.0], [0.0, 0.5])
    assert math.isnan(float(loss))  # 0 · log 0 = 0 · (-inf) = NaN
    np.testing.assert_array_equal(gp.numpy()[1:], [-1 / 0.5])
    assert math.isnan(gp.numpy()[0])  # -y/p at y = 0, p = 0: 0 · inf
    found = nf.origins(tr.events)
    assert [(o.phase, o.op_type) for o in found] == [("forward", "Log"), ("backward", "Log")]
    assert found[0].cause == "log of 0 is -inf"
    assert found[1].cause.startswith("0 · inf") and "at a = 0" in found[1].cause
    # the Mul that turned -inf into NaN is not an origin: its input was already not finite
    assert all(o.op_type != "Mul" for o in found)


@pytest.mark.parametrize("f, values, phase, op, words", [
    (lambda x, y: x / y, (1.0, 0.0), "forward", "RealDiv", "division by 0"),
    (lambda x: ad.sqrt(x), (0.0,), "backward", "Sqrt", "sqrt's slope at 0"),
    (lambda x: ad.exp(x), (100.0,), "forward", "Exp", "overflow of exp"),
    (lambda x: ad.math.log(x), (-1.0,), "forward", "Log", "log of a negative number is NaN"),
    (lambda x: x * 1e30 * 1e30, (1.0,), "forward", "Mul", "overflow"),
    (lambda x: x * 1e30 * 1e30, (1.0,), "backward", "Mul", "overflow: the upstream gradient times the slope b"),
    (lambda x: ad.sqrt(x), (-1.0,), "forward", "Sqrt", "sqrt of a negative number is NaN"),
    (lambda x: ad.sqrt(x), (-1.0,), "backward", "Sqrt", "sqrt of a negative number: sqrt's slope 1/(2√a) is NaN "
                                                       "at a = -1"),
    (lambda x: ad.exp(x) * 0.0, (100.0,), "backward", "Exp", "0 · inf: exp's slope exp(a) is inf"),
    (lambda x: ad.math.reciprocal(x), (0.0,), "forward", "Reciprocal", "division by 0: 1/a at a = 0"),
    (lambda x: ad.math.reciprocal(x), (0.0,), "backward", "Reciprocal",
     "division by 0: the slope −1/a² is -inf at a = 0"),
])
def test_each_cause_is_named(f, values, phase, op, words):
    tr, *_ = traced(f, *values)
    found = [o for o in nf.origins(tr.events) if o.phase == phase]
    assert found and found[0].op_type == op and words in found[0].cause, found


def test_division_by_zero_backward_and_local_values():
    tr, _, _, y, (ga, gb) = traced(lambda a, b: a / b, 1.0, 0.0)
    assert float(ga) == math.inf and float(gb) == -math.inf  # 1/b and -a/b² at b = 0
    (back,) = [o for o in nf.origins(tr.events) if o.phase == "backward"]  # both sent gradients are not finite
    assert back.cause == "division by 0: the slope 1/b is inf and the slope −a/b² is -inf at b = 0"


@pytest.mark.parametrize("x", [0.0, [2.0, 0.0]])
def test_x_over_x_at_0_names_both_slopes_and_their_sum(x):
    # ∂(a/b)/∂a = 1/b = inf and ∂(a/b)/∂b = −a/b² = −0/0 = NaN at a = b = 0; x's gradient adds both: inf + NaN
    tr, _, xs, y, (g,) = traced(lambda x: x / x, x)
    g = np.ravel(g.numpy())
    assert math.isnan(g[-1]) and (len(g) == 1 or g[0] == 1 / 2.0 - 2.0 / 2.0**2)  # 0 where x = 2
    (step,) = [e for e in tr.events if e.kind == "backward_step"]
    sent = [np.ravel(s.array())[-1] for s in step.grads]
    assert sent[0] == math.inf and math.isnan(sent[1])
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "backward"]
    cause = ("division by 0: the slope 1/b is inf and the slope −a/b² is NaN (−0/0) at b = 0; a and b are one "
             "tensor: its gradient adds inf · 1.0 + nan · 1.0 = nan")
    assert (o.op_type, o.cause, o.index) == ("RealDiv", cause, 0)
    lines = [line for s in ad.viz.animate(tr).steps for line in s["lines"]]
    assert f"First NaN/inf of the backward pass: {cause}." in lines
    assert f"the gradient first became non-finite in its rule: {cause}." in str(ad.viz.explain(tr, y, xs[0]))
    g = ad.viz.graph(tr)
    (box,) = [n for n in g.model.nodes if n.nonfinite]
    assert f"First NaN/inf of the backward pass: {cause}." in box.notes
    line = next(s for s in g.source.splitlines() if s.strip().startswith(f"n{box.id} ["))
    assert "…" not in line and "nan · 1.0 = nan." in line  # the box's three note lines hold it whole


def test_one_over_x_at_0_names_one_slope():
    one, x = ad.constant(np.float32(1.0)), ad.constant(np.float32(0.0))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = one / x  # only b = x is watched: −a/b² = −1/0 = -inf; the constant's 1/b = inf is sent nowhere
        assert float(tape.gradient(y, x)) == -math.inf
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "backward"]
    assert (o.cause, o.index) == ("division by 0: the slope −a/b² is -inf at b = 0", 1)


def test_x_over_x_at_0_in_forward_mode_names_both_terms_of_the_tangent():
    # ẏ = (1/b) · ȧ + (−a/b²) · ḃ with ȧ = ḃ = 1 at 0: inf · 1 + NaN · 1
    x = ad.constant(np.float32(0.0))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant(np.float32(1.0))) as acc:
            y = x / x
        assert math.isnan(float(acc.jvp(y)))
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "tangent"]
    assert o.cause == ("division by 0: the slope 1/b is inf and the slope −a/b² is NaN (−0/0) at b = 0; its tangent "
                       "adds every input's term: inf · 1.0 + nan · 1.0 = nan")


def test_finite_values_have_no_origin():
    tr, *_ = traced(cross_entropy, [0.0, 1.0], [0.25, 0.5])
    assert nf.origins(tr.events) == []


def test_the_origin_is_marked_in_the_model_and_drawn_in_its_look():
    from autodiff_viz.viz.draw.look import LOOKS, NONFINITE_TEXT

    tr, *_ = traced(cross_entropy, [0.0, 1.0], [0.0, 0.5])
    g = ad.viz.graph(tr)
    marked = [n for n in g.model.nodes if n.nonfinite]
    assert [n.op for n in marked] == ["Log"]
    assert any("log of 0 is -inf" in t for t in marked[0].notes)
    src = g.source
    line = next(s for s in src.splitlines() if s.strip().startswith(f"n{marked[0].id} ["))
    assert f'color="{LOOKS["nonfinite"].border}"' in line and f"penwidth={LOOKS['nonfinite'].width}" in line
    assert "⚠ " in line
    assert f'<font color="{NONFINITE_TEXT}"><b>= [nan, -0.6931]</b>' in src  # the Mul's value, log(0.5) = -0.6931
    assert LOOKS["nonfinite"].says in src  # the legend says what the look means


def test_the_backward_step_shows_the_local_derivative_before_the_product():
    tr, *_ = traced(cross_entropy, [0.0, 1.0], [0.0, 0.5])
    story = build_story(tr.events, build(tr.events, subscripts=True))
    step = next(s for s in story["steps"] if s["phase"] == "backward" and s["title"].endswith("Log"))
    assert "∂(log(a))/∂a = 1/a = [inf, 2.0]" in step["lines"]  # 1/0, 1/0.5
    assert any(line.strip().startswith("sent [0.0, -1.0] × [inf, 2.0] = [nan, -2.0] → ") for line in step["lines"])
    assert any(line.startswith("First NaN/inf of the backward pass: 0 · inf") for line in step["lines"])
    roles = {n["label"]: n["role"] for n in story["nodes"]}
    assert roles["Log"] == "nonfinite"
    assert list(states(story))[-1]["results"][1].endswith(" = [nan, -2.0]")


# ---------------------------------------------------------------------------
# the picture, in a browser
# ---------------------------------------------------------------------------
def test_the_log_picture_in_chromium(tmp_path, browser):
    from autodiff_viz.viz.draw.look import LOOKS, NONFINITE_TEXT

    tr, *_ = traced(cross_entropy, [0.0, 1.0], [0.0, 0.5])
    path = tmp_path / "log.svg"
    ad.viz.graph(tr).save(path)
    page = browser.new_page()
    page.goto(path.as_uri())
    got = page.evaluate("""() => {
            const g = [...document.querySelectorAll('g.node')].find(n => n.textContent.includes('⚠'));
            const shape = g.querySelector('path, polygon');
            const nan = [...document.querySelectorAll('text')].filter(t => /nan|inf/.test(t.textContent));
            return {stroke: shape.getAttribute('stroke'), text: g.textContent,
                    fills: [...new Set(nan.map(t => t.getAttribute('fill')))],
                    box: g.getBoundingClientRect().width};
        }""")
    page.close()
    assert got["stroke"].upper() == LOOKS["nonfinite"].border
    assert "Log" in got["text"] and "log of 0 is -inf" in got["text"]
    assert NONFINITE_TEXT.lower() in [f.lower() for f in got["fills"] if f]
    assert got["box"] > 0


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


_TEXTS_JS = """(sel) => [...document.querySelectorAll(sel)].filter(t => t.textContent)
    .map(t => ({text: t.textContent, fill: getComputedStyle(t).fill, weight: getComputedStyle(t).fontWeight}))"""


def test_the_player_and_the_still_draw_nan_and_inf_in_their_own_look(tmp_path, browser):
    from autodiff_viz.viz.draw.html import widget_html
    from autodiff_viz.viz.draw.look import GRADIENT, LOOKS, NONFINITE_TEXT, player_width
    from autodiff_viz.viz.draw.still import animation_svg

    tr, *_ = traced(cross_entropy, [0.0, 1.0], [0.0, 0.5])
    story = ad.viz.animate(tr, linked=False).data
    last = len(story["steps"]) - 1
    path = tmp_path / "nan.html"
    path.write_text(widget_html("animate", story, title="nan"), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(path.as_uri())
    page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
    page.fill(".adv-slider", str(last))
    page.dispatch_event(".adv-slider", "input")
    page.wait_for_function(f"document.querySelector('.adv').dataset.step === '{last}'")
    texts = page.evaluate(_TEXTS_JS, ".adv-node .adv-val, .adv-node .adv-grad")
    box = page.evaluate("""() => { const b = document.querySelector('.adv-role-nonfinite .adv-box');
        return {stroke: getComputedStyle(b).stroke, width: parseFloat(getComputedStyle(b).strokeWidth)}; }""")
    page.close()
    odd = [t for t in texts if "nan" in t["text"] or "inf" in t["text"]]
    plain = [t for t in texts if t not in odd]
    assert {t["text"] for t in odd} >= {"= [-inf, -0.6931]", "∂ [nan, -2.0]", "= nan"}
    assert {t["fill"] for t in odd} == {_rgb(NONFINITE_TEXT)} and {t["weight"] for t in odd} == {"700"}
    assert _rgb(GRADIENT) in {t["fill"] for t in plain} and _rgb(NONFINITE_TEXT) not in {t["fill"] for t in plain}
    assert box["stroke"] == _rgb(LOOKS["nonfinite"].border)
    assert box["width"] == pytest.approx(player_width(LOOKS["nonfinite"]), abs=0.01)

    page = browser.new_page()
    page.set_content(f"<!DOCTYPE html><html><body>{animation_svg(story)}</body></html>")
    texts = page.evaluate(_TEXTS_JS, "text.v, text.g")
    page.close()
    odd = [t for t in texts if "nan" in t["text"] or "inf" in t["text"]]
    assert odd and {t["fill"] for t in odd} == {_rgb(NONFINITE_TEXT)}
    assert _rgb(NONFINITE_TEXT) not in {t["fill"] for t in texts if t not in odd}


def test_the_frames_draw_nan_and_inf_in_their_own_look():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from autodiff_viz.viz.draw.frames import FrameRenderer
    from autodiff_viz.viz.draw.look import GRADIENT, LOOKS, NONFINITE_TEXT

    tr, *_ = traced(cross_entropy, [0.0, 1.0], [0.0, 0.5])
    story = ad.viz.animate(tr, linked=False).data
    r = FrameRenderer(story, dpi=40)
    try:
        r.draw(len(story["steps"]) - 1)
        colours = {}
        for nd, box, _lab, val, grad, *_ in r.nodes:
            for t, plain in ((val, "#000000"), (grad, GRADIENT)):
                if t.get_text():
                    odd = "nan" in t.get_text() or "inf" in t.get_text()
                    colours[t.get_text()] = to_hex(t.get_color()).upper()
                    assert to_hex(t.get_color()).upper() == (NONFINITE_TEXT if odd else plain), t.get_text()
            if nd["role"] == "nonfinite":
                assert to_hex(box.get_edgecolor()).upper() == LOOKS["nonfinite"].border
        assert colours["∂ [nan, -2.0]"] == NONFINITE_TEXT
    finally:
        plt.close("all")


def _parse(text):
    return np.array([float(v) for v in text.strip("[]").split(", ")])


@pytest.mark.parametrize("f, values", [
    (lambda a, b: a ** b, ([0.0, 2.0, -1.0], [2.0, 2.0, 2.0])),
    (lambda a: ad.sqrt(a) * a, ([0.0, 4.0],)),
    (lambda a: ad.nn.relu(a) * 3.0, ([-1.0, 0.0, 2.0],)),
    (lambda a, b: a / b, ([1.0, 0.0, 3.0], [0.0, 0.0, 2.0])),
    (lambda a: ad.math.reciprocal(a) * 2.0, ([0.0, 2.0, -4.0],)),
    (lambda a: ad.exp(a) + ad.math.log(a), ([0.0, 100.0],)),
    (lambda a: ad.tanh(a) * ad.sigmoid(a), ([-30.0, 0.0, 30.0],)),
])
def test_every_written_product_is_true(f, values):
    """Each "sent U × L = G" line the player writes holds element by element (NaN equal to NaN)."""
    tr, *_ = traced(f, *values)
    story = build_story(tr.events, build(tr.events, subscripts=True))
    checked = 0
    for step in story["steps"]:
        for line in step["lines"]:
            line = line.strip()
            if line.startswith("sent [") and " × [" in line:
                up, rest = line[len("sent "):].split(" × ")
                local, sent = rest.split(" = ")
                sent = sent.split(" → ")[0]
                with np.errstate(all="ignore"):
                    product = _parse(up) * _parse(local)
                np.testing.assert_allclose(product, _parse(sent), rtol=2e-3, equal_nan=True, err_msg=line)
                checked += 1
    assert checked >= 1


def _log_in_a_scope():
    """Cross-entropy with its log in name scope ``logs``: log 0 = -inf; the slope 1/0 = inf times y's 0."""
    y = ad.constant([0.0, 1.0])
    p = ad.constant([0.0, 0.5])
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(p)
            with ad.name_scope("logs"):
                logs = ad.math.log(p) * 1.0
            loss = -ad.reduce_sum(y * logs)
        tape.gradient(loss, p)
    return tr


def test_a_folded_scope_shows_the_origin_inside_it():
    from autodiff_viz.viz.draw.look import LOOKS

    g = ad.viz.graph(_log_in_a_scope(), collapse=True)
    (box,) = [n for n in g.model.nodes if n.kind == "scope"]
    assert box.nonfinite and "Log" in box.op_types
    line = next(s for s in g.source.splitlines() if s.strip().startswith(f"n{box.id} ["))
    assert f'color="{LOOKS["nonfinite"].border}"' in line and "⚠ logs" in line


@pytest.mark.parametrize("direction, words", [
    ([1.0, 1.0], "sqrt's slope at 0: 1/(2√a) is inf at a = 0"),   # 1/(2√0) · 1 = inf
    # 0.5 · (0/0): TF's tangent of sqrt is 0.5 · ẋ/√a (its SqrtGrad transposed), not SqrtGrad's kernel,
    # whose zero upstream gives 0 in reverse mode only
    ([0.0, 1.0], "0 · inf: sqrt's slope 1/(2√a) is inf at a = 0, and the input's tangent ȧ there is 0"),
])
def test_a_forward_mode_tangent_is_traced_to_its_origin(direction, words):
    x = ad.constant(np.array([0.0, 4.0], np.float32))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant(np.array(direction, np.float32))) as acc:
            y = ad.sqrt(x) * 2.0
        jvp = acc.jvp(y).numpy()
    # closed form: d(2√x) = ẋ/√x: at x = 4, 1/2 · ẋ; at x = 0, ẋ/0: inf for ẋ = 1, NaN for ẋ = 0
    assert jvp[1] == 0.5 * direction[1] and (math.isinf(jvp[0]) if direction[0] else math.isnan(jvp[0]))
    found = [o for o in nf.origins(tr.events) if o.phase == "tangent"]
    (o,) = found  # the Mul after it takes a non-finite tangent: it is not an origin
    assert (o.op_type, o.cause, o.index) == ("Sqrt", words, 0)
    note = f"First NaN/inf of the tangents (forward mode): {words}."
    lines = [line for s in ad.viz.animate(tr).steps for line in s["lines"]]
    assert lines.count(note) == 1
    (box,) = [n for n in ad.viz.graph(tr).model.nodes if n.nonfinite]
    assert box.label.startswith("Sqrt") and note in box.notes


def test_zero_times_an_infinite_slope_in_a_tangent_is_named():
    x = ad.constant(np.array([0.0, 2.0], np.float32))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant(np.array([0.0, 1.0], np.float32))) as acc:
            y = ad.math.log(x)
        jvp = acc.jvp(y).numpy()
    assert math.isnan(jvp[0]) and jvp[1] == 0.5  # 0 · (1/0) is NaN; 1 · 1/2
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "tangent"]
    assert o.cause == "0 · inf: log's slope 1/a is inf at a = 0, and the input's tangent ȧ there is 0"


def test_a_folded_scopes_player_steps_say_the_causes_found_inside_it():
    steps = {s["title"].split(":")[0]: s["lines"] for s in ad.viz.animate(_log_in_a_scope(), collapse=True).steps
             if "logs" in s["title"]}
    assert "First NaN/inf of the forward pass: log of 0 is -inf." in steps["Forward 1/4"]
    assert ("First NaN/inf of the backward pass: 0 · inf: log's slope 1/a is inf at a = 0, and the upstream "
            "gradient there is 0.") in steps["Backward step 4"]


def test_a_folded_scope_in_forward_mode_keeps_its_summary_and_says_each_cause_once():
    x = ad.constant(np.float32(0.0))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant(np.float32(1.0))):
            with ad.name_scope("blk"):
                b = ad.math.log(x * 2.0)  # log 0 = -inf; its tangent ẋ · 2 / 0 = inf
            b + 1.0
    (lines,) = [s["lines"] for s in ad.viz.animate(tr, collapse=True).steps if "blk" in s["title"]]
    assert lines[0] == "2 ops of name scope blk ran; its last gave"
    assert lines.count("First NaN/inf of the forward pass: log of 0 is -inf.") == 1
    assert lines.count("First NaN/inf of the tangents (forward mode): division by 0: log's slope 1/a is inf at a = 0.") == 1


def test_a_tangent_cause_names_the_input_by_its_letter_and_the_sign_of_the_slope():
    one, zero = ad.constant(np.float32(1.0)), ad.constant(np.float32(0.0))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(zero, ad.constant(np.float32(0.0))) as acc:
            y = one / zero  # ∂(a/b)/∂b = -a/b² = -inf at b = 0, times ḃ = 0: NaN
        assert math.isnan(float(acc.jvp(y)))
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "tangent"]
    assert o.cause == "0 · -inf: the slope −a/b² is -inf at b = 0, and the input's tangent ḃ there is 0"


def test_finite_gradients_that_add_up_to_inf_are_an_origin():
    x = ad.constant(np.float32(3e38))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            a = x * 0.5
            y = a + a
        g = tape.gradient(y, x, output_gradients=ad.constant(np.float32(3e38)))
    assert math.isinf(float(g))  # a gets 3e38 twice: 6e38 is over float32's largest, about 3.4e38
    (o,) = nf.origins(tr.events)
    assert o.phase == "sum" and o.output == ad.extend.tensor_id(a)
    assert o.cause == "overflow: the gradients reaching one tensor add up to more than 3.4e+38, the largest float32"
    lines = [line for s in ad.viz.animate(tr).steps for line in s["lines"]]
    assert f"First NaN/inf of the backward pass: {o.cause}." in lines
    assert "∂(a · b)/∂a = b = 0.5" in lines  # Mul's slope is the constant 0.5, not the step's inf ÷ inf
    (box,) = [n for n in ad.viz.graph(tr).model.nodes if n.nonfinite]
    assert box.label == "a"
    assert "At a the gradients it received first added up to a non-finite total" in str(ad.viz.explain(tape, y, x))


def test_a_tangent_made_nan_by_an_input_that_is_not_followed_writes_that_term():
    # ẏ of a / b at b = 0 with ȧ = 1 and b not followed: 1/b · 1 + (−a/b²) · 0 = inf + (−inf · 0) = NaN
    x = ad.constant(np.float32(2.0))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant(np.float32(1.0))) as acc:
            y = x / ad.constant(np.float32(0.0))
        assert math.isnan(float(acc.jvp(y)))
    (step,) = [s for s in ad.viz.animate(tr).steps if s["title"].startswith("Forward 1/")]
    assert "  = (1/b) · ȧ + (−a/b²) · ḃ" in step["lines"]
    assert "  = inf · 1.0 + -inf · 0 = nan" in step["lines"]  # (the partial 1/b was written as nan)
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "tangent"]  # the NaN is b's term, not a's inf
    assert o.cause == "0 · -inf: the slope −a/b² is -inf at b = 0, and ḃ (the input is not followed) there is 0"


def test_one_over_x_at_0_has_a_nan_tangent_from_the_1_that_is_not_followed():
    # ẏ of 2 / x at x = 0, ẋ = 1: (1/b) · 0 + (−a/b²) · 1 = (inf · 0) + -inf = NaN, as TF's ȧ/b = 0/0 is NaN
    x = ad.constant(np.float32(0.0))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant(np.float32(1.0))) as acc:
            y = ad.constant(np.float32(2.0)) / x
        assert math.isnan(float(acc.jvp(y)))
    (step,) = [s for s in ad.viz.animate(tr).steps if s["title"].startswith("Forward 1/")]
    assert "ȧ = 0 (const is not followed), ḃ = 1.0" in step["lines"]
    assert "  = inf · 0 + -inf · 1.0 = nan" in step["lines"]
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "tangent"]
    assert (o.cause, o.index) == ("0 · inf: the slope 1/b is inf at b = 0, and ȧ (the input is not followed) there is 0", 0)


def test_a_nan_tangent_that_is_inf_plus_minus_inf_says_so():
    # ẏ of a / b at a = 1, b = 0 with ȧ = ḃ = 1: (1/b) · 1 + (−a/b²) · 1 = inf + -inf = NaN
    a, b = ad.constant(np.float32(1.0)), ad.constant(np.float32(0.0))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator([a, b], [ad.constant(np.float32(1.0))] * 2) as acc:
            y = a / b
        assert math.isnan(float(acc.jvp(y)))
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "tangent"]
    assert o.cause == "inf + -inf: the slope 1/b times ȧ is inf, the slope −a/b² times ḃ is -inf"
    (step,) = [s for s in ad.viz.animate(tr).steps if s["title"].startswith("Forward 1/")]
    assert "  = inf · 1.0 + -inf · 1.0 = nan" in step["lines"]




def test_x_times_x_whose_two_terms_overflow_float32_names_both_and_their_sum():
    # d(x · x · 1e30)/dx = 2 · x · 1e30 = 2e50 at x = 1e20, past float32's 3.4e38: each term x · 1e30 is inf already
    x = ad.constant(np.float32(1e20))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = (x * x) * 1e30
        assert float(tape.gradient(y, x)) == math.inf and 1e20 * 1e30 > float(np.finfo(np.float32).max)
    (o,) = [o for o in nf.origins(tr.events) if o.phase == "backward"]
    assert o.cause == ("overflow: the upstream gradient times the slope b is larger than 3.4e+38, and the upstream "
                       "gradient times the slope a is larger than 3.4e+38; a and b are one tensor: its gradient "
                       "adds 1e20 · 1e30 + 1e20 · 1e30 = inf")
