"""The player shows what the graph shows: tensors of up to ``max_items`` values in full (a matrix one
row per line), ``digits=`` for every number, boxes sized to their text; linked details follow the slider."""
import json

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.events import summarize
from autodiff_viz.viz.draw import layout as _layout
from autodiff_viz.viz.text.numbers import fmt_box, fmt_lines

from browser_util import open_widget_page

X = np.array([[1.0, 2.0], [3.0, 4.0]])
W = np.array([[0.5, -1.0], [2.0, 0.25]])


def _matmul_trace():
    x, w = ad.Variable(X, name="x"), ad.Variable(W, name="w")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = ad.matmul(x, w)
            loss = ad.reduce_sum(y * y)
        t.gradient(loss, [x, w])
    return tr, {"y": y, "loss": loss}


def _anim(**options):
    tr, names = _matmul_trace()
    return ad.viz.animate(tr, names=names, **options)


def _texts(anim, step=-1):
    st = anim.steps[step]
    return ({n["label"]: v for n, v in zip(anim.nodes, st["vals"])},
            {n["label"]: g for n, g in zip(anim.nodes, st["grads"])})


def test_player_boxes_show_matrices_whole_with_the_closed_form_gradients():
    anim = _anim()
    vals, grads = _texts(anim)
    y = X @ W
    # loss = sum(y²): dloss/dy = 2y, dloss/dx = 2y Wᵀ, dloss/dw = Xᵀ 2y (closed form, not the engine)
    assert vals["y"] == "[[4.5, -0.5],\n [9.5, -2.0]]" == fmt_box(summarize(y))
    assert grads["x"] == fmt_box(summarize(2 * y @ W.T)) == "[[5.5, 17.75],\n [13.5, 37.0]]"
    assert grads["w"] == fmt_box(summarize(X.T @ (2 * y))) == "[[66.0, -13.0],\n [94.0, -18.0]]"
    assert "mean" not in " ".join(vals.values()) + " ".join(grads.values())
    # the same lines as the static graph's box for that value
    assert vals["y"].split("\n") == fmt_lines(summarize(y))


def test_digits_reach_boxes_texts_and_table():
    anim = _anim(digits=2)
    vals, grads = _texts(anim)
    assert vals["loss"] == "1.1e2"            # 114.75 with 2 significant digits
    assert grads["x"] == "[[5.5, 18.0],\n [14.0, 37.0]]"
    final = anim.steps[-1]
    assert "∂target/∂x = [[5.5, 18.0], [14.0, 37.0]]" in final["lines"]
    totals = {r["name"]: r["total"] for r in final["panel"]}
    assert totals["w"] == "[[66.0, -13.0], [94.0, -18.0]]"


def test_max_items_puts_larger_tensors_in_words():
    anim = _anim(max_items=3)
    vals, grads = _texts(anim)
    assert vals["y"] == "2×2 values, mean 2.88"   # (4.5 - 0.5 + 9.5 - 2) / 4 = 2.875, 3 digits as in graph
    assert vals["loss"] == "114.8"


@pytest.mark.parametrize("kw, value", [("digits", 0), ("digits", 2.5), ("max_items", 0), ("max_items", 17)])
def test_bad_value_options_are_refused_by_name(kw, value):
    with pytest.raises((ValueError, TypeError), match=f"animate.*{kw}"):
        ad.viz.animate(lambda a: a * a, 2.0, linked=False, **{kw: value})


def test_boxes_grow_with_their_lines_and_the_gradient_sits_below_the_value():
    anim = _anim()
    lay = anim.data["layout"]["nodes"]
    by = {n["label"]: n for n in anim.nodes}
    x, loss = lay[by["x"]["id"]], lay[by["loss"]["id"]]
    assert by["x"]["rows"][:2] == [2, 2] and by["loss"]["rows"][:2] == [1, 1]
    assert loss["h"] == pytest.approx(_layout.NODE_H, abs=0.01)
    assert x["h"] == pytest.approx(_layout.NODE_H + 2 * _layout.LINE_H, abs=0.01)
    assert x["gy"] == x["vy"] + _layout.LINE_H + (_layout.GRADIENT_Y - _layout.VALUE_Y)
    # the last gradient line stays inside the box
    assert x["gy"] + _layout.LINE_H < x["h"]


def test_frames_draw_a_matrix_on_lines_inside_its_box(tmp_path):
    anim = _anim()
    fig = anim.frame(-1, tmp_path / "last.png")
    texts = [t for t in fig.axes[0].texts if t.get_text().startswith("= [[1.0, 2.0],")]
    assert len(texts) == 1 and texts[0].get_text().split("\n")[1].strip("\u2007") == " [3.0, 4.0]]"


@pytest.mark.browser
def test_player_writes_a_matrix_one_row_per_line_inside_its_box(browser, tmp_path):
    path = tmp_path / "matrix.html"
    _anim().save(path)
    page = open_widget_page(browser, path)
    page.keyboard.press("End")
    spans = page.eval_on_selector_all(
        ".adv-node[data-label='x'] .adv-grad tspan", "els => els.map(e => e.textContent)")
    assert [s.replace("\u00a0", " ").replace("\u2007", "") for s in spans] == ["∂ [[5.5, 17.75],", " [13.5, 37.0]]"]
    over = page.evaluate("""() => Math.max(...[...document.querySelectorAll('.adv-node')].map(g => {
        const box = g.querySelector('rect').getBBox();
        return Math.max(...[...g.querySelectorAll('.adv-val, .adv-grad')].map(t => {
            const b = t.getBBox(); return Math.max(b.x + b.width - box.width, b.y + b.height - box.height, -b.x); }));
    }))""")
    assert over <= 1.0
    assert page.errors == []
    page.close()


@pytest.mark.browser
def test_linked_details_follow_the_slider(browser, tmp_path):
    # f(x) = x·x over a grid: a clicked node's details show the run at the slider's point.
    anim = ad.viz.animate(lambda x: x * x, 1.0, points=5, span=(-2.0, 2.0))
    grid = anim.data["linked"]["grid"]
    path = tmp_path / "linked.html"
    anim.save(path)
    page = open_widget_page(browser, path)
    page.locator(".adv-node[data-label='Mul']").click()
    value = page.locator(".adv-d-value .adv-d-line").first
    assert value.text_content() == "1.0"
    k = grid.index(2.0)
    page.fill(".adv-grid-slider", str(k))
    page.dispatch_event(".adv-grid-slider", "input")
    assert value.text_content() == "4.0"    # 2² at the slider's point, not the base run's 1²
    grads = page.locator(".adv-d-grads .adv-d-line").first.text_content()
    page.keyboard.press("End")
    assert page.errors == []
    assert grads.endswith(": 1.0")      # ∂f/∂(x·x) = 1 at every point
    page.close()


def logistic_trace():
    """Σ sigmoid_cross_entropy_with_logits at logits [0.5, -1] and labels [1, 0]: (trace, names)."""
    logits = ad.Variable([0.5, -1.0], name="logits")
    labels = ad.constant([1.0, 0.0])
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            loss = ad.reduce_sum(ad.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
        t.gradient(loss, logits)
    return tr, {"loss": loss, "labels": labels}


def test_collapse_folds_a_scope_into_one_box_one_forward_and_one_backward_step():
    tr, names = logistic_trace()
    whole = ad.viz.animate(tr, names=names)
    anim = ad.viz.animate(tr, names=names, collapse=True)
    assert [s["phase"] for s in anim.steps] == ["start", "forward", "forward", "seed", "backward", "backward", "done"]
    assert len(whole) == 22
    box = anim.node("logistic_loss")
    assert box["kind"] == "op" and "logistic_loss" in [n["label"] for n in anim.nodes]
    titles = [s["title"] for s in anim.steps]
    assert titles[1].startswith("Forward 1/2: logistic_loss (9 ops folded: GreaterEqual, SelectV2")
    assert titles[5].startswith("Backward step 2: logistic_loss (9 ops folded")
    # the numbers stay true: d/dlogits Σ sce = σ(logits) - labels, and the panel's terms add up to it
    want = 1.0 / (1.0 + np.exp(-np.array([0.5, -1.0]))) - np.array([1.0, 0.0])
    row = next(r for r in anim.steps[-1]["panel"] if r["name"] == "logits")
    terms = [np.array(json.loads(t)) for t in row["terms"]]   # the storyboard's own text, e.g. "[-1.0, 0.0]"
    np.testing.assert_allclose(sum(terms), want, atol=1e-4)
    assert anim.steps[-1]["lines"] == [f"∂target/∂logits = [{want[0]:.4g}, {want[1]:.4g}]"]
    assert anim.steps[-1]["lines"] == whole.steps[-1]["lines"]
    # only the arrows that carried a gradient light up: from logits, not from the labels or constants
    back = anim.steps[5]
    lit = {anim.data["edges"][k]["from"] for k in back["edges"]}
    assert lit == {anim.node("logits")["id"]}
    assert all(e["label"] == "" for e in anim.data["edges"] if e["to"] == box["id"])


def test_collapse_a_list_folds_only_those_scopes_and_a_function_too():
    tr, names = logistic_trace()
    assert len(ad.viz.animate(tr, names=names, collapse=["no_such_scope"])) == 22
    assert len(ad.viz.animate(tr, names=names, collapse=["logistic_loss"])) == 7

    def f(x):
        with ad.name_scope("square"):
            y = x * x + 1.0
        return y * 3.0

    anim = ad.viz.animate(f, 2.0, collapse=True, points=5)
    assert [n["label"] for n in anim.nodes].count("square") == 1
    assert anim.steps[-1]["lines"] == ["∂target/∂x = 12.0"]      # d(3(x²+1))/dx = 6x at 2
    k = [n["label"] for n in anim.nodes].index("square")
    base = anim.data["linked"]["base"]
    assert anim.data["linked"]["val"][base][k] == 5.0               # the box's value: x² + 1 at 2


@pytest.mark.browser
def test_a_folded_player_steps_in_the_browser(browser, tmp_path):
    tr, names = logistic_trace()
    path = tmp_path / "folded.html"
    ad.viz.animate(tr, names=names, collapse=True).save(path)
    page = open_widget_page(browser, path)
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    assert page.locator(".adv-step-title").text_content().startswith("Backward step 2: logistic_loss")
    assert page.locator(".adv-current").get_attribute("data-label") == "logistic_loss"
    assert page.errors == []
    page.close()


def test_graph_and_player_share_max_items_and_digits():
    tr, names = _matmul_trace()
    for max_items, want in ((12, "[[4.5, -0.5],"), (3, "2×2 values, mean 2.88")):
        graph = ad.viz.graph(tr, names=names, max_items=max_items, digits=3)
        player = ad.viz.animate(tr, names=names, max_items=max_items, digits=3)
        assert want in graph.source
        assert _texts(player)[0]["y"].split("\n")[0] == want
    with pytest.raises(ValueError, match="graph: max_items must be a whole number from 1 to 16, got 17"):
        ad.viz.graph(tr, max_items=17)
