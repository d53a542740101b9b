"""Gradient size as visual weight: arrows on the gradient path as wide as the gradient they carry (log scale)."""
import html
import re

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.draw import weight as W
from autodiff_viz.viz.draw.look import LOOKS


def _sigmoid_chain(n=10):
    x = ad.Variable(0.5, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            h = x
            for _ in range(n):
                h = ad.sigmoid(h * 4.0)
        t.gradient(h, x)
    return tr


def _by_hand(n=10):
    """The chain h = σ(4·σ(4·…σ(4·0.5))): ∂h/∂z_k for each pre-activation z_k, and ∂h/∂s_k for each output."""
    z, s = [], 0.5
    for _ in range(n):
        z.append(4.0 * s)
        s = 1.0 / (1.0 + np.exp(-z[-1]))
    slope = [1.0 / (1.0 + np.exp(-v)) * (1.0 - 1.0 / (1.0 + np.exp(-v))) for v in z]
    d_z = [np.prod(slope[k:]) * 4.0 ** (n - 1 - k) for k in range(n)]        # ∂h/∂z_k
    d_s = [4.0 * d_z[k + 1] for k in range(n - 1)]                          # ∂h/∂s_k (s_k feeds z_(k+1))
    return d_z, d_s


def _arrows(source):
    """(gradient written on the arrow, penwidth) for each arrow that carries one."""
    out = []
    for label, width in re.findall(r'label=<<font color="[^"]+">∂ ([^<]+)</font>>, color="[^"]+", penwidth=([\d.]+)',
                                   source):
        out.append((float(label), float(width)))
    return out


def test_chain_arrows_widen_with_the_log_of_their_gradient():
    source = ad.viz.graph(_sigmoid_chain()).source          # on by default: sizes span 9 powers of ten
    arrows = _arrows(source)
    d_z, d_s = _by_hand()
    sizes = [g for g, _ in arrows]
    lo, hi = min(d_z + d_s), max(d_z + d_s)
    assert min(sizes) == pytest.approx(lo, rel=1e-3) and max(sizes) == pytest.approx(hi, rel=1e-3)
    for g, width in arrows:
        want = W.THIN + (W.THICK - W.THIN) * (np.log10(g) - np.log10(lo)) / (np.log10(hi) - np.log10(lo))
        assert width == pytest.approx(want, abs=0.02)         # 4-digit labels, 2-decimal widths
    text = " ".join(html.unescape(re.sub(r"<[^>]*>", " ", source)).split())
    assert f"arrow width: the size of its gradient (max |∂|), log scale: widest {hi:.4g}, narrowest {lo:.4g}" in text


def test_weights_can_be_turned_off_and_stay_off_where_they_say_nothing():
    widths = {w for _, w in _arrows(ad.viz.graph(_sigmoid_chain(), gradient_size=False).source)}
    assert len(widths) == 1 and "arrow width" not in ad.viz.graph(_sigmoid_chain(), gradient_size=False).source
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = x * x
        t.gradient(y, x)
    path_width = LOOKS["path"].width
    assert {w for _, w in _arrows(ad.viz.graph(tr).source)} == {path_width}   # 6.0 and 3.0: one power of ten
    # asked for: one size, so every arrow gets the middle width
    assert {w for _, w in _arrows(ad.viz.graph(tr, gradient_size=True).source)} == {(W.THIN + W.THICK) / 2}
    with pytest.raises(TypeError, match="gradient_size must be True, False or None, not 'yes'"):
        ad.viz.graph(tr, gradient_size="yes")


def test_a_zero_gradient_gets_the_thinnest_arrow():
    assert W.widths([0.0, 1e-3, 1.0, None]) == [W.THIN, W.THIN, W.THICK, None]
    assert W.helps([0.0, 1e-3, 1.0]) and not W.helps([0.0, 0.5, 1.0])


def test_player_edges_carry_the_same_weights_as_the_graph():
    tr = _sigmoid_chain(6)
    anim = ad.viz.animate(tr)
    graph_widths = sorted(w for _, w in _arrows(ad.viz.graph(tr).source))
    player = sorted(e["weight"] for e in anim.data["edges"] if "weight" in e)
    assert player == pytest.approx(graph_widths, abs=0.011) and player[0] == W.THIN and player[-1] == W.THICK
    assert all("weight" not in e for e in ad.viz.animate(tr, gradient_size=False).data["edges"])
    with pytest.raises(TypeError, match="animate: gradient_size must be True, False or None"):
        ad.viz.animate(tr, gradient_size=1)
    # a frame draws a backward step's active arrow at that width (as the browser does, × 1.25)
    import matplotlib.pyplot as plt
    from autodiff_viz.viz.draw.frames import FrameRenderer

    step = next(k for k, s in enumerate(anim.steps) if s["phase"] == "backward" and s["edges"])
    r = FrameRenderer(anim.data)
    r.draw(step)
    j = anim.steps[step]["edges"][0]
    want = 1.25 * anim.data["edges"][j]["weight"] * r.k
    assert r.hot_edges[j][0].get_linewidth() == pytest.approx(want, rel=1e-6)
    plt.close(r.fig)


@pytest.mark.browser
def test_player_draws_a_backward_arrow_as_wide_as_its_gradient(browser, tmp_path):
    from browser_util import open_widget_page

    anim = ad.viz.animate(_sigmoid_chain(6))
    path = tmp_path / "weights.html"
    anim.save(path)
    page = open_widget_page(browser, path)
    page.keyboard.press("End")
    widths = {}
    for _ in range(len(anim) - 1):
        page.keyboard.press("ArrowLeft")
        if page.locator(".adv-animate").get_attribute("data-phase") != "backward":
            continue
        for w in page.eval_on_selector_all(".adv-edge.adv-active .adv-edge-line",
                                           "els => els.map(e => getComputedStyle(e).strokeWidth)"):
            widths[w] = True
    got = sorted(float(w.rstrip("px")) for w in widths)
    want = sorted(1.25 * e["weight"] for e in anim.data["edges"] if "weight" in e)
    assert got and all(any(abs(g - v) < 0.02 for v in want) for g in got)
    assert max(got) == pytest.approx(1.25 * W.THICK, abs=0.02) and min(got) < 2.0
    assert page.errors == []
    page.close()
