"""Pictures that say only what is true: legend examples from the picture, one precision on boxes and
arrows, the backward seed explained, layers' own names kept."""
import math
import re

import numpy as np

import autodiff_viz as ad


def _legend_text(source: str) -> str:
    """The words of a graph's DOT text (labels only, tags dropped), on one line."""
    return " ".join(re.sub(r"<[^>]*>", " ", source).replace("\u00a0", " ").split())


def test_legend_example_is_a_gradient_the_picture_shows():
    x = ad.Variable(3.5, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = ad.sin(x) * x
        t.gradient(y, x)
    g = ad.viz.graph(tr, style="default", detail="classroom")
    text = _legend_text(g.source)
    want = math.cos(3.5) * 3.5 + math.sin(3.5)         # d(x·sin x)/dx, closed form
    m = re.search(r"in a box: the gradient of the target y with respect to that tensor \(here ∂ (\S+) at x\)", text)
    if m is None:  # a small graph: the compact legend's one gradient box
        m = re.search(r"∂ (\S+) gradient", text)
    assert m is not None, text
    assert float(m.group(1)) == float(f"{want:.4g}")
    assert f"∂ {m.group(1)}" in text.replace(m.group(0), "")   # the same number in x's box
    assert "∂ 6.0" not in text and "∂ 3.0 on an arrow" not in text


def test_no_legend_number_when_the_picture_shows_no_single_number():
    x = ad.Variable([1.0, 2.0, 3.0], name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = x * x
        t.gradient(y, x)
    text = _legend_text(ad.viz.graph(tr).source)
    assert "(here" not in text and "∂ 6.0" not in text


def test_arrows_use_the_boxes_precision():
    # y = x·x + x at x = 1/3 (float64): the arrow into Add carries ∂ 1.0, the two into Mul carry x = 0.333...
    x = ad.Variable(np.float64(1 / 3), name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = x * x + x
        t.gradient(y, x)
    src = ad.viz.graph(tr, digits=6).source
    arrows = re.findall(r'-> n\d+ \[label=<<font color="[^"]+">∂ ([^<]+)</font>>', src)
    assert "0.333333" in arrows                      # 6 digits, as the boxes are asked to show
    assert f"∂ {2 / 3 + 1:.6g}" in src               # x's box: 2x + 1 at 6 digits
