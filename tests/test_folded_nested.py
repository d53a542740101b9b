"""A folded name scope under nested tapes: each ``+=`` shows on the step of the rule that sent it.

An outer tape records the inner tape's rules as they run, one "Recorded while …" step per op.  A folded box
is one backward step; what its rules add to other boxes must not show on a recording step in between.
"""
import math

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.model.story import states
from test_false_sums import assert_true_box, assert_true_sum, body, check_player, parse_value, programs

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402

X = 1.5


def _nested_with_a_scope(outer="tape"):
    """z = (x³ + sin x) · x with the bracket in name scope ``blk``; g = dz/dx (inner tape), h = dg/dx (an
    outer tape, or a ForwardAccumulator along ẋ = 1 around the inner tape)."""
    x = ad.constant(X)
    with ad.trace() as tr:
        if outer == "tape":
            with ad.GradientTape() as out:
                out.watch(x)
                g = _inner_gradient(x)
            h = out.gradient(g, x)
        else:
            with ad.autodiff.ForwardAccumulator(x, ad.constant(1.0)) as acc:
                g = _inner_gradient(x)
            h = acc.jvp(g)
    return tr, float(g.numpy()), float(h.numpy())


def _inner_gradient(x):
    with ad.GradientTape() as inner:
        inner.watch(x)
        with ad.name_scope("blk"):
            y = x * x * x + ad.sin(x)
        z = y * x
    return inner.gradient(z, x)


def _x_row(step):
    return next(r for r in step["panel"] if r["name"] == "x")


@pytest.mark.parametrize("outer", ["tape", "accumulator"])
def test_the_program_is_what_the_closed_form_says(outer):
    _, g, h = _nested_with_a_scope(outer)
    assert g == pytest.approx(4 * X**3 + math.sin(X) + X * math.cos(X), rel=1e-6)
    assert h == pytest.approx(12 * X**2 + 2 * math.cos(X) - X * math.sin(X), rel=1e-5)


@pytest.mark.parametrize("outer", ["tape", "accumulator"])
def test_a_folded_boxs_sums_show_on_its_own_step_not_on_a_recording_step(outer):
    tr, g, _ = _nested_with_a_scope(outer)
    anim = ad.viz.animate(tr, collapse=True)
    steps = list(states(anim.data))
    ids = [n["id"] for n in anim.data["nodes"]]
    x_index = ids.index(anim.node("x")["id"])
    while_ = "Recorded while" if outer == "tape" else "Run while"  # the outer tape's recordings, or the tangents
    recorded = [k for k, s in enumerate(steps) if s["title"].startswith(while_)]
    assert len(recorded) >= 10
    for k, (raw, s) in enumerate(zip(anim.data["steps"], steps)):
        if s["phase"] in ("forward", "done"):  # nothing reaches a gradient table on these steps
            assert not any(r["fresh"] for r in s["panel"]), (k, s["title"], s["panel"])
            assert not raw.get("order"), (k, s["title"])
            assert not any(text.startswith("+=") for _, text in raw.get("grads", ())), (k, s["title"], raw["grads"])
    # the inner pass's folded step: x's terms from the box are x · (3x² + cos x), its total dz/dx
    (k,) = [k for k, s in enumerate(steps) if s["title"].startswith("Backward step 2: blk (4 ops folded")
            and "T2" in s["title"]]
    before, at = steps[k - 1], steps[k]
    assert before["title"].startswith(while_)
    (only,) = _x_row(before)["terms"]  # only z's rule has sent to x yet: ∂(y · x)/∂x = y
    assert parse_value(only).array == pytest.approx(X**3 + math.sin(X), rel=1e-3)
    new = [parse_value(t) for t in _x_row(at)["terms"][1:]]
    assert sum(float(t.array) for t in new) == pytest.approx(X * (3 * X**2 + math.cos(X)), rel=1e-3)
    assert parse_value(_x_row(at)["total"]).array == pytest.approx(g, rel=1e-3)
    assert_true_sum([parse_value(t) for t in _x_row(at)["terms"]], parse_value(_x_row(at)["total"]), at["title"])
    box = at["grads"][x_index]
    assert box.startswith("+= ") and box.count(" + ") == len(new) - 1  # every term the box's rules sent
    assert_true_box(before["grads"][x_index], box, at["title"])
    blk = ids.index(anim.node("blk")["id"])
    assert (before["order"][blk], at["order"][blk]) == ("", "2")  # its step number comes with its step
    if outer == "tape":  # the outer pass: d²z/dx²
        np.testing.assert_allclose(parse_value(steps[-1]["lines"][0].split(" = ")[1]).array,
                                   12 * X**2 + 2 * math.cos(X) - X * math.sin(X), rtol=1e-3)


@pytest.mark.browser
def test_the_browser_player_shows_the_boxs_sums_on_its_step(browser, tmp_path):
    from browser_util import open_widget_page

    tr, g, _ = _nested_with_a_scope()
    anim = ad.viz.animate(tr, collapse=True)
    (k,) = [k for k, s in enumerate(anim.steps) if s["title"].startswith("Backward step 2: blk") and "T2" in s["title"]]
    path = tmp_path / "folded_nested.html"
    anim.save(path)
    page = open_widget_page(browser, path)
    x_row = page.locator(".adv-panel tbody tr").filter(has_text="x")
    x_grad = page.locator("[data-label='x'] .adv-grad")
    for step in range(1, k + 1):
        page.click(".adv-next")
        page.wait_for_selector(f".adv-animate[data-step='{step}']")
        if step == k - 1:  # the last recording step: x holds z's term y = x³ + sin x only
            assert page.locator(".adv-step-title").text_content().startswith("Recorded while")
            assert float(x_row.locator(".adv-total").text_content()) == pytest.approx(X**3 + math.sin(X), rel=1e-3)
            assert "+=" not in x_grad.text_content()
    assert page.locator(".adv-step-title").text_content().startswith("Backward step 2: blk")
    assert float(x_row.locator(".adv-total").text_content()) == pytest.approx(g, rel=1e-3)
    assert "+=" in x_grad.text_content()
    assert page.errors == []


def _scoped(x, prog, outer):
    """The generated chain of ops on ``x`` in name scope ``blk``, times x outside it (x then gets terms from
    the box and from outside); the inner gradient under an outer tape (or accumulator), and its derivative."""
    with ad.trace() as tr:
        def inner_gradient():
            with ad.GradientTape() as inner:
                inner.watch(x)
                with ad.name_scope("blk"):
                    h = body(x, prog)
                y = ad.reduce_sum(h * x)
            return inner.gradient(y, x)
        if outer == "tape":
            with ad.GradientTape() as out:
                out.watch(x)
                g = inner_gradient()
                total = ad.reduce_sum(g)
            h = out.gradient(total, x)
        else:
            with ad.autodiff.ForwardAccumulator(x, ad.ones_like(x)) as acc:
                g = inner_gradient()
            h = acc.jvp(g)
    return tr, g, h


def _f(prog, v):
    return float(np.sum(body(ad.constant(v, dtype=ad.float64), prog).numpy() * v))


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_fold_with_each_sum_on_its_rules_step(prog):
    # (the generated chain, its size and values; the outer tape or accumulator chosen by ``cut``, ``kind`` unused)
    n = prog["n"]
    data = np.array(prog["x"][:n], dtype=np.float32)
    outer = "tape" if prog["cut"] % 2 else "accumulator"
    tr, g, h = _scoped(ad.constant(data), prog, outer)
    # the engine against central differences of the program's own function, in float64
    eps, flat = 1e-6, data.astype(np.float64)
    fd = [(_f(prog, flat + eps * e) - _f(prog, flat - eps * e)) / (2 * eps) for e in np.eye(n)]
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-3, atol=1e-3)
    if outer == "tape":  # unfolded, every written sum is true and the results are the engine's
        check_player(tr, [("gradient", g.numpy()), ("gradient", h.numpy())])
    anim = ad.viz.animate(tr, collapse=True)
    for k, (raw, st) in enumerate(zip(anim.data["steps"], states(anim.data))):
        if st["phase"] in ("forward", "done"):
            assert not any(r["fresh"] for r in st["panel"]), (prog, k, st["title"], st["panel"])
            assert not raw.get("order"), (prog, k, st["title"])
            assert not any(t.startswith("+=") for _, t in raw.get("grads", ())), (prog, k, st["title"])
        for row in st["panel"]:
            if len(row["terms"]) > 1:
                assert_true_sum([parse_value(t) for t in row["terms"]], parse_value(row["total"]), (k, row))
    done = [st for st in states(anim.data) if st["title"].startswith("Done: gradients of tape T2")]
    (x_line,) = [line for line in done[0]["results"] if line.startswith("∂target/∂x")]
    np.testing.assert_allclose(parse_value(x_line.split(" = ", 1)[1]).array, g.numpy(), rtol=2e-3, atol=1e-4)
