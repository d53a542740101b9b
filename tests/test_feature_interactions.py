"""The merged features together: a Jacobian folded by ``collapse=``, ``digits=`` on a Jacobian's rows,
gradient-size widths in a Jacobian, forward mode with a NaN, a convolution in forward mode.

Every number is checked against closed form (NumPy) or the engine's own gradient checked that way,
and every sum a picture writes is checked to be true.
"""

import re

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.model.story import states

from test_false_sums import assert_true_sum, parse_value

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _dense_jacobian():
    """y = sigmoid(x @ K + b) in a Dense layer (one name scope), its Jacobian by rows; with closed form."""
    ad.random.set_seed(3)
    layer = ad.keras.layers.Dense(2, activation="sigmoid", name="dense")
    x = ad.constant([[1.0, -2.0, 0.5]])
    layer(x)
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            t.watch(x)
            y = layer(x)
        jac = t.jacobian(y, x).numpy().reshape(2, 3)
    k, b = layer.kernel.numpy(), layer.bias.numpy()
    s = _sigmoid(x.numpy() @ k + b)[0]
    want = (s * (1 - s))[:, None] * k.T  # ∂y_i/∂x_j = σ'(z_i) K_ji
    np.testing.assert_allclose(jac, want, rtol=1e-5)
    return tr, want


def _true_tables(story):
    """Every step's table rows add up; returns the steps (in full)."""
    out = []
    for k, s in enumerate(states(story)):
        for row in s["panel"]:
            terms = [parse_value(t) for t in row["terms"]]
            assert len(terms) == row["count"], (k, s["title"], row)
            if len(terms) > 1:
                assert_true_sum(terms, parse_value(row["total"]), f"step {k} ({s['title']}): {row}")
            else:
                assert row["terms"][0] == row["total"], (k, s["title"], row)
        out.append(s)
    return out


def test_a_folded_jacobian_steps_each_row_and_writes_no_false_sum():
    tr, want = _dense_jacobian()
    anim = ad.viz.animate(tr, collapse=True)
    steps = _true_tables(anim.data)
    titles = [s["title"] for s in steps]
    for r in (1, 2):  # each row's pass has its folded backward step (row 1's was lost in row 2's)
        assert any(t.startswith(f"Backward step 1, row {r} of 2: dense (3 ops folded") for t in titles), titles
    label = {n["id"]: n["label"] for n in anim.data["nodes"]}
    for s in steps:
        for row in s["panel"]:  # the folded box's row holds its output's gradient only: the seed of this row
            if row["name"] == "dense":
                seed = parse_value(row["total"]).array
                assert sorted(np.ravel(seed)) == [0.0, 1.0], (s["title"], row)
    after = {s["title"]: s for s in steps}
    for r in (1, 2):
        s = after[f"Backward step 1, row {r} of 2: dense (3 ops folded: MatMul, Add, Sigmoid)"]
        x_row = next(row for row in s["panel"] if row["name"] == "x")
        np.testing.assert_allclose(np.ravel(parse_value(x_row["total"]).array), want[r - 1], rtol=2e-3, atol=1e-4)
    assert "x" in label.values()


def test_a_folded_gradient_writes_no_false_sum():
    ad.random.set_seed(4)
    l1 = ad.keras.layers.Dense(3, activation="tanh", name="hidden")
    l2 = ad.keras.layers.Dense(1, name="output")
    x = ad.constant([[0.5, -1.0]])
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            t.watch(x)
            loss = ad.reduce_sum(l2(l1(x)))
        g = t.gradient(loss, x).numpy()
    k1, b1, k2 = l1.kernel.numpy(), l1.bias.numpy(), l2.kernel.numpy()
    h = np.tanh(x.numpy() @ k1 + b1)
    np.testing.assert_allclose(g, ((1 - h * h) * k2.T) @ k1.T, rtol=1e-5)
    steps = _true_tables(ad.viz.animate(tr, collapse=True).data)
    final = next(row for row in steps[-1]["panel"] if row["name"] == "x")
    np.testing.assert_allclose(parse_value(final["total"]).array, g, rtol=2e-3)
    output = next(row for row in steps[-1]["panel"] if row["name"] == "output")
    assert parse_value(output["total"]).array == pytest.approx(1.0)  # the seed: ∂loss/∂output of a sum is 1


@pytest.mark.parametrize("digits", [2, 4])
def test_a_jacobians_rows_follow_digits_and_are_all_written_alike(digits):
    tr, want = _dense_jacobian()
    steps = _true_tables(ad.viz.animate(tr, digits=digits).data)
    rows = [line.split(" = ", 1)[1] for line in steps[-1]["results"] if line.startswith("  row ")]
    assert len(rows) == 2
    for got, row in zip(rows, want):
        value = parse_value(got)
        assert value.array is not None, rows  # both rows in full, none in words
        np.testing.assert_allclose(np.ravel(value.array), row, rtol=10.0 ** (1 - digits))
        for number in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", got):
            assert len(number.lstrip("-0.").replace(".", "").split("e")[0]) <= digits, (number, got)


def test_gradient_sizes_a_few_percent_apart_get_about_one_width():
    from autodiff_viz.viz.draw.weight import THICK, THIN, widths

    near = widths([0.2333, 0.2188])
    assert abs(near[0] - near[1]) < 0.2 * (THICK - THIN)  # 7% apart is not drawn 6× wider
    far = widths([1.0, 1e-2, 1e-4])
    assert far == pytest.approx([THICK, (THIN + THICK) / 2, THIN])  # decades still span the whole range
    tr, _ = _dense_jacobian()
    g = ad.viz.graph(tr, gradient_size=True)
    pens = [float(w) for w in re.findall(r"penwidth=([\d.]+)", g.source.split("->", 1)[1])]
    on_path = [w for w in pens if w > 1.5]
    assert on_path and max(on_path) - min(on_path) < 1.0, pens
    assert "re…" not in g.source and "…sor" not in g.source  # the legend's Jacobian sentence is whole
    assert "row i from the backward pass of the" in g.source


def _forward_nan():
    """-Σ y·log p along ṗ = [1, 1] with p = [0, 0.5]: log 0 = -inf, ṗ/p = [inf, 2], then 0 · inf = nan."""
    p, y = ad.constant([0.0, 0.5]), ad.constant([0.0, 1.0])
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(p, ad.constant([1.0, 1.0])) as acc:
            loss = -ad.reduce_sum(y * ad.math.log(p))
    assert np.isnan(float(acc.jvp(loss)))
    return tr, {"p": p}


def test_forward_mode_draws_a_nonfinite_tangent_in_the_nonfinite_look():
    from matplotlib.colors import to_rgb

    from autodiff_viz.viz.draw.frames import FrameRenderer
    from autodiff_viz.viz.draw.tangent_part import text_of
    from autodiff_viz.viz.draw.look import NONFINITE_TEXT, TANGENT

    tr, names = _forward_nan()
    g = ad.viz.graph(tr, names=names)
    assert f'<font color="{NONFINITE_TEXT}"><b>ẋ [inf, 2.0]</b></font>' in g.source  # Log's tangent 1/p · ṗ
    assert f'<font color="{TANGENT}">ẋ [1.0, 1.0]</font>' in g.source  # p's, finite
    anim = ad.viz.animate(tr, names=names)
    fr = FrameRenderer(anim.data, dpi=60)
    fr.draw(len(anim.steps) - 2)
    texts = {nd["label"]: (fr.nodes[j][3], text_of(fr, j)) for j, (nd, *_r) in enumerate(fr.nodes)}
    val, tan = texts["Log"]
    assert tan.get_text() == "ẋ [inf, 2.0]" and np.allclose(to_rgb(tan.get_color()), to_rgb(NONFINITE_TEXT))
    val, tan = texts["p"]
    assert tan.get_text() == "ẋ [1.0, 1.0]" and np.allclose(to_rgb(tan.get_color()), to_rgb(TANGENT))
    assert not np.allclose(to_rgb(val.get_color()), to_rgb(NONFINITE_TEXT))  # p's value is finite: ink


def test_browser_marks_only_the_nonfinite_part_of_a_value_line(browser, tmp_path):
    from browser_util import open_widget_page

    tr, names = _forward_nan()
    path = ad.viz.animate(tr, names=names).save(tmp_path / "nan.html")
    page = open_widget_page(browser, path)
    page.click(".adv-last")
    p_val = page.locator("[data-label='p'] .adv-val")
    assert p_val.text_content() == "= [0.0, 0.5]  ẋ [1.0, 1.0]"
    assert "adv-nonfinite-text" not in (p_val.get_attribute("class") or "")
    log_tan = page.locator("[data-label='Log'] .adv-val .adv-tangent-part")
    assert log_tan.text_content() == "  ẋ [inf, 2.0]" and "adv-nonfinite-text" in log_tan.get_attribute("class")
    p_tan = page.locator("[data-label='p'] .adv-val .adv-tangent-part")
    assert p_tan.evaluate("t => getComputedStyle(t).fill") != log_tan.evaluate("t => getComputedStyle(t).fill")
    assert page.errors == []


def test_a_convolution_in_forward_mode_writes_no_backward_rule_as_its_tangent_rule():
    x = ad.constant(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1) / 10)
    k = ad.constant(np.array([[1.0, -1.0], [0.5, 2.0]], np.float32).reshape(2, 2, 1, 1))
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator(k, ad.ones_like(k)) as acc:
            s = ad.reduce_sum(ad.nn.conv2d(x, k, strides=1, padding="VALID"))
    patches = sum(x.numpy()[0, i:i + 2, j:j + 2, 0].sum() for i in range(3) for j in range(3))
    assert float(acc.jvp(s)) == pytest.approx(patches, rel=1e-5)  # conv is linear in W: ṡ = Σ conv(x, 1)
    steps = ad.viz.animate(tr).steps
    conv = next(st for st in steps if "Conv2D" in " ".join(st["lines"][:1]))
    text = "\n".join(conv["lines"])
    assert "upstream" not in text  # forward mode has no upstream gradient
    assert "ẏ = ∂y/∂b · ḃ" in text and "∂(conv2d" not in text
    done = steps[-1]["lines"]
    assert done[-1].startswith("acc.jvp(s) = ") and float(done[-1].split(" = ")[1]) == pytest.approx(patches), done


def test_a_scalar_nan_or_inf_step_still_saves_as_html(tmp_path):
    x = ad.constant(0.0)
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            t.watch(x)
            y = ad.sqrt(x)
        g = t.gradient(y, x)
    assert float(g) == np.inf  # 1/(2√0)
    anim = ad.viz.animate(tr)
    assert any("inf" in line for st in anim.steps for line in st["lines"])  # the words keep it
    assert "inf" in open(anim.save(tmp_path / "inf.html"), encoding="utf-8").read()
    tr, names = _forward_nan()
    assert ad.viz.animate(tr, names=names).to_html()
