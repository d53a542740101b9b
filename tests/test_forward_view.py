"""Forward mode drawn: a ForwardAccumulator's events, the tangents in the graph and the player's forward steps.

Every number is checked against closed-form derivatives or finite differences, never against the
package's own output.
"""
import math
import re

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.model.build import build
from autodiff_viz.viz.model.story import build_story, states
from autodiff_viz.viz.text.words import NOTHING_DRAWN

X0 = 2.0


def _f(x):
    """y = x·x + sin(x)·3: dy/dx = 2x + 3 cos x."""
    return x * x + ad.sin(x) * ad.constant(3.0)


def _forward_trace(x0=X0, v0=1.0):
    x, v = ad.constant(x0), ad.constant(v0)
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, v) as acc:
            y = _f(x)
    return tr, acc, x, y


def _fd(f, x0, h=1e-4):
    return (f(x0 + h) - f(x0 - h)) / (2 * h)


def test_accumulator_emits_its_primal_each_op_and_each_tangent():
    tr, acc, x, y = _forward_trace()
    kinds = [e.kind for e in tr.events]
    assert kinds[0] == "forward_begin" and kinds[-1] == "forward_end"
    assert [e.op_type for e in tr.events if e.kind == "op"] == ["Mul", "Sin", "Mul", "Add"]
    tangents = {e.tensor: e for e in tr.events if e.kind == "tangent"}
    assert tangents[x._id].tangent.head == (1.0,)  # the direction given
    want = 2 * X0 + 3 * math.cos(X0)
    assert tangents[y._id].tangent.head[0] == pytest.approx(want, rel=1e-6)
    assert tangents[y._id].tangent.head[0] == pytest.approx(_fd(lambda t: t * t + 3 * math.sin(t), X0), rel=1e-4)
    for t in tangents.values():  # each step's terms add up to its tangent
        if t.inputs:
            terms = [s.head[0] for s in t.terms if s is not None]
            assert sum(terms) == pytest.approx(t.tangent.head[0], rel=1e-6)


def test_forward_trace_round_trips_through_json():
    tr, *_ = _forward_trace()
    assert ad.Trace.from_json(tr.to_json()).events == tr.events


def test_no_trace_no_events_and_the_same_tangent():
    x, v = ad.constant(X0), ad.constant(1.0)
    with ad.autodiff.ForwardAccumulator(x, v) as acc:
        y = _f(x)
    assert acc._traces == []
    assert float(acc.jvp(y)) == pytest.approx(2 * X0 + 3 * math.cos(X0), rel=1e-6)


def test_graph_shows_each_tangent_beside_its_value():
    tr, *_ = _forward_trace()
    g = ad.viz.graph(tr, names=False)
    by_label = {n.label: n for n in g.model.nodes}
    # closed form of each intermediate's tangent at x = 2, v = 1
    want = {"x": 1.0, "Sin": math.cos(X0)}
    for label, value in want.items():
        assert by_label[label].tangent.head[0] == pytest.approx(value, rel=1e-6)
    muls = sorted(n.tangent.head[0] for n in g.model.nodes if n.op == "Mul")
    assert muls == pytest.approx(sorted([2 * X0, 3 * math.cos(X0)]), rel=1e-6)
    src = g.source
    assert src.count("ẋ") >= 5  # x, two Muls, Sin, Add (and the legend's entry)
    assert "ẋ 4.0" in src  # x·x at x = 2 moves 2x = 4 per unit of x
    assert "the tangent of that tensor (forward mode)" in src
    assert "primal of a ForwardAccumulator" in src or ">primal<" in src


def test_a_traced_accumulator_is_drawn_and_an_untraced_one_refused():
    tr, acc, *_ = _forward_trace()
    assert [n.tangent for n in ad.viz.graph(acc).model.nodes] == [n.tangent for n in ad.viz.graph(tr).model.nodes]
    assert ad.viz.animate(acc).steps[-1]["trace"] == ad.viz.animate(tr).steps[-1]["trace"]
    x = ad.constant(1.0)
    with ad.autodiff.ForwardAccumulator(x, ad.constant(1.0)) as untraced:
        x * x
    with pytest.raises(LookupError, match="ForwardAccumulator was not traced"):
        ad.viz.graph(untraced)


def test_player_steps_the_tangent_rule_with_real_numbers():
    tr, *_ = _forward_trace()
    story = build_story(tr.events, build(tr.events, subscripts=True))
    steps = list(states(story))
    assert steps[0]["title"] == "Forward mode, step by step"
    mul = next(s for s in steps if s["title"].startswith("Forward 1/"))
    text = "\n".join(mul["lines"])
    assert "ẏ = ∂(a · b)/∂a · ȧ + ∂(a · b)/∂b · ḃ" in text
    assert "= b · ȧ + a · ḃ" in text
    assert f"= {X0} · 1.0 + {X0} · 1.0 = {2 * X0}" in text  # ∂(x·x)/∂a = b = x = 2
    assert mul["numbers"]["tangent"] == pytest.approx(2 * X0)
    for s in steps:
        if s["phase"] == "forward":  # every step's terms add up to its tangent, as its text says
            assert sum(s["numbers"]["terms"][i] for i in range(len(s["numbers"]["terms"]))
                       if s["numbers"]["terms"][i] is not None) == pytest.approx(s["numbers"]["tangent"], rel=1e-6)
    sin = next(s for s in steps if s["title"].endswith("Sin"))
    assert f"= {math.cos(X0):.4g} · 1.0 = {math.cos(X0):.4g}" in "\n".join(sin["lines"])
    last = steps[-1]
    assert last["phase"] == "done"
    total = 2 * X0 + 3 * math.cos(X0)
    assert any(line.endswith(f"= {total:.4g}") for line in last["lines"])
    rows = {r["name"]: r for r in last["trace"]}  # the evaluation trace: primal and tangent columns
    assert rows["x"]["expr"] == "primal" and rows["x"]["value"] == "2.0" and rows["x"]["tangent"] == "1.0"
    assert rows["Sin"]["expr"] == "sin(x)" and float(rows["Sin"]["tangent"]) == pytest.approx(math.cos(X0), 1e-3)
    assert float(rows["Add"]["value"]) == pytest.approx(X0 * X0 + 3 * math.sin(X0), rel=1e-3)
    assert float(rows["Add"]["tangent"]) == pytest.approx(total, rel=1e-3)
    assert last["panel"] == []  # no gradient table: nothing ran backward


def test_a_constant_input_is_said_not_followed():
    tr, *_ = _forward_trace()
    story = build_story(tr.events, build(tr.events, subscripts=True))
    step = next(s for s in states(story) if s["title"].startswith("Forward 3/"))
    text = "\n".join(step["lines"])
    assert "ḃ = 0 (const is not followed)" in text
    c = math.cos(X0)
    assert f"= 3.0 · ({-abs(c):.4g}) = {3 * c:.4g}" in text or f"= 3.0 · {c:.4g} = {3 * c:.4g}" in text


def _hvp_trace(x0, v0):
    x, v = ad.constant(x0), ad.constant(v0)
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, v) as acc:
            with ad.GradientTape() as tape:
                tape.watch(x)
                y = ad.reduce_sum(x * x * x)
            g = tape.gradient(y, x)
    return tr, acc, g


def test_forward_over_backward_shows_tangents_and_gradients():
    x0, v0 = np.array([1.0, 2.0], np.float32), np.array([1.0, 0.5], np.float32)
    tr, acc, g = _hvp_trace(x0, v0)
    hv = 6 * x0 * v0  # y = Σx³: H = diag(6x)
    fd = (3 * (x0 + 1e-3 * v0) ** 2 - 3 * (x0 - 1e-3 * v0) ** 2) / 2e-3
    np.testing.assert_allclose(acc.jvp(g).numpy(), hv, rtol=1e-5)
    np.testing.assert_allclose(hv, fd, rtol=1e-3)
    model = build(tr.events)
    gnode = model.node_for(g._id)
    np.testing.assert_allclose(gnode.tangent.head, hv, rtol=1e-5)  # the gradient's box carries H·v
    xnode = next(n for n in model.nodes if n.label == "x")
    np.testing.assert_allclose(xnode.grad.head, 3 * x0 ** 2, rtol=1e-5)  # and x its gradient
    np.testing.assert_allclose(xnode.tangent.head, v0)
    src = ad.viz.graph(tr).source
    assert "∂ [3.0, 12.0]" in src and "ẋ [3.0, 6.0]" in src
    assert "run inside the ForwardAccumulator" in src
    steps = list(states(build_story(tr.events, model)))
    assert any(s["phase"] == "backward" for s in steps) and any(s["trace"] for s in steps)
    for s in steps:  # a backward step freshens gradient rows only, never a row of the evaluation trace
        if s["phase"] == "backward":
            assert not any(r["fresh"] for r in s["trace"]) and any(r["fresh"] for r in s["panel"])
    done = steps[-1]
    assert any("Hessian-vector product" in line for line in done["lines"])
    assert any(r["total"] == "[3.0, 12.0]" for r in done["panel"])


def test_a_trace_that_saw_nothing_says_so_in_words(tmp_path):
    x = ad.constant(2.0)
    with ad.trace() as tr:
        x * x  # no tape, no accumulator
    g = ad.viz.graph(tr)
    assert NOTHING_DRAWN.split(":")[0] in g.source
    png = g.save(tmp_path / "empty.png")
    from PIL import Image

    w, h = Image.open(png).size
    assert w > 300 and h > 44  # words, not a blank 44×44 picture
    anim = ad.viz.animate(tr)
    only = list(states(anim.data))
    assert len(only) == 1 and only[0]["lines"] == [NOTHING_DRAWN]
    assert "tape records" not in " ".join(only[0]["lines"])
    assert "saw nothing to draw" in anim.to_html()  # the page says it too


def test_nonscalar_forward_step_adds_vectors_truly():
    x0, v0 = np.array([1.0, 2.0], np.float32), np.array([1.0, 0.0], np.float32)
    x, v = ad.constant(x0), ad.constant(v0)
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, v):
            x * x
    step = next(s for s in states(build_story(tr.events, build(tr.events))) if s["phase"] == "forward")
    line = step["lines"][-1]
    parts = re.fullmatch(r"  = (\[.*\]) \+ (\[.*\]) = (\[.*\])", line)
    a, b, total = (np.array(eval(p)) for p in parts.groups())
    np.testing.assert_allclose(a + b, total)
    np.testing.assert_allclose(total, 2 * x0 * v0)


@pytest.mark.browser
def test_forward_player_shows_the_evaluation_trace_in_a_browser(browser, tmp_path):
    from playwright.sync_api import expect

    from browser_util import open_widget_page

    tr, *_ = _forward_trace()
    path = ad.viz.animate(tr, names=False).save(tmp_path / "forward.html")
    page = open_widget_page(browser, path)
    title = page.locator(".adv-step-title")
    expect(title).to_have_text("Forward mode, step by step")
    table = page.locator(".adv-trace")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(1)  # the primal x with the direction given
    expect(rows.nth(0).locator(".adv-primal")).to_have_text("2.0")
    expect(rows.nth(0).locator(".adv-tangent")).to_have_text("1.0")
    page.click(".adv-next")
    expect(title).to_have_text("Forward 1/4: Mul₁")
    expect(page.locator(".adv-lines")).to_contain_text("= 2.0 · 1.0 + 2.0 · 1.0 = 4.0")
    expect(rows).to_have_count(2)
    expect(rows.nth(1)).to_have_class("adv-fresh")
    expect(rows.nth(1).locator(".adv-expr")).to_have_text("x · x")
    expect(rows.nth(1).locator(".adv-tangent")).to_have_text(f"{2 * X0}")
    page.click(".adv-last")
    total = 2 * X0 + 3 * math.cos(X0)
    last = rows.nth(4)
    expect(last.locator(".adv-primal")).to_have_text(f"{X0 * X0 + 3 * math.sin(X0):.4g}")
    expect(last.locator(".adv-tangent")).to_have_text(f"{total:.4g}")
    expect(page.locator(".adv-panel")).to_be_hidden()  # no gradient table: nothing ran backward
    page.locator("[data-label='Sin'] .adv-box").click()  # a node's details carry its tangent in full
    expect(page.locator("[data-section='tangent']")).to_contain_text(f"{math.cos(X0):.5f}"[:7])
    # the tangent column is drawn in the look's tangent colour, darkened for small text (4.5:1 on a fresh row)
    from autodiff_viz.viz.draw.look import theme_colours

    want = theme_colours(False)["tangent-text"]
    colour = last.locator(".adv-tangent").evaluate("td => getComputedStyle(td).color")
    assert colour == "rgb({}, {}, {})".format(*(int(want[i:i + 2], 16) for i in (1, 3, 5)))
    # moving back replays: the first step again holds only the primal
    page.click(".adv-first")
    expect(rows).to_have_count(1)
    assert page.errors == []


def test_movie_frames_list_the_evaluation_trace():
    from autodiff_viz.viz.draw.panel import side_text

    tr, *_ = _forward_trace()
    last = list(states(build_story(tr.events, build(tr.events))))[-1]
    _, rows = side_text(last)
    assert ("head", "Evaluation trace (forward mode)") in rows
    total = 2 * X0 + 3 * math.cos(X0)
    assert any(text.rstrip().endswith(f"ẋ {total:.4g}") for _, text in rows)
    assert not any(style == "head" and "Gradients" in text for style, text in rows)


def test_every_tangent_printed_in_the_graph_matches_finite_differences():
    # the ẋ each box prints, read back from the DOT text, against central differences of that box's value
    def values(x0):
        tr, *_ = _forward_trace(x0)
        return np.array([n.value.head[0] for n in ad.viz.graph(tr, names=False).model.nodes], np.float64)

    h = 1e-2
    fd = (values(X0 + h) - values(X0 - h)) / (2 * h)
    tr, *_ = _forward_trace(X0)
    src = ad.viz.graph(tr, names=False).source
    printed = {int(m[1]): float(m[2]) for m in re.finditer(r"^\s*n(\d+) \[.*?ẋ ([-\d.e]+)</font>", src, re.M)}
    assert len(printed) == 5  # x, x·x, sin x, 3 sin x, the sum (the constant 3 is not followed)
    for nid, shown in printed.items():
        assert shown == pytest.approx(fd[nid], rel=2e-3, abs=1e-4), nid


def test_a_custom_gradient_under_forward_mode_draws_only_the_users_ops():
    @ad.custom_gradient
    def triple(t):
        def grad(u):
            return u * 3.0
        return t * 3.0, grad

    x = ad.constant(X0)
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(x, ad.constant(1.0)) as acc:
            y = triple(x) + x
    assert float(acc.jvp(y)) == pytest.approx(4.0)  # d(3x + x)/dx
    assert not any(e.kind in ("tape_begin", "gradient_begin") for e in tr.events)  # the engine's own tape is unseen
    model = build(tr.events)
    assert [n.tangent.head[0] for n in model.nodes if n.tangent is not None] == pytest.approx([1.0, 3.0, 4.0])
    step = next(s for s in states(build_story(tr.events, model)) if s["phase"] == "forward")
    assert step["lines"][-1] == "  = 3.0"  # no terms invented for a rule the package cannot split
