"""The player's boxes hold what they say: a ``+= c → total`` sum is never cut (it wraps), and forward
mode's ``ẋ`` is drawn in the tangent's colour beside the value, in the frames and in the browser.

The numbers are checked against closed form (the Jacobian of y = x·Σx is [[2x₀+x₁, x₀], [x₁, x₀+2x₁]]).
"""
import re

import numpy as np

import autodiff_viz as ad
from autodiff_viz import tour
from autodiff_viz.viz.draw import layout as _layout
from autodiff_viz.viz.draw.look import TANGENT
from autodiff_viz.viz.draw.tangent_part import text_of
from autodiff_viz.viz.model.story import states
from autodiff_viz.viz.model.story_boxes import BOX_CHARS

from browser_util import open_widget_page

NUM = r"-?\d+(?:\.\d+)?"


def _vector(text):
    return np.array([float(v) for v in re.findall(NUM, text)])


def test_a_running_sum_in_a_box_wraps_instead_of_being_cut():
    anim, _ = tour.still_jacobian_rows()
    x = np.array([1.0, 2.0])
    jac = np.array([[2 * x[0] + x[1], x[0]], [x[1], x[0] + 2 * x[1]]])  # closed form of x·Σx
    nodes = anim.data["nodes"]
    sums = 0
    for st in states(anim.data):
        for j, text in enumerate(st["grads"]):
            if not text.startswith("+= "):
                continue
            sums += 1
            chars = nodes[j]["rows"][2]
            lines = text.split("\n")
            assert len(lines) <= nodes[j]["rows"][1], text  # the box is tall enough for it
            for line in lines:  # each line fits, at most squeezed to the renderers' 80%
                assert 0.8 * len(line) <= max(chars, BOX_CHARS) + 1, (line, chars)
            term, total = text[3:].split("→")
            if st["title"].endswith("x") or "row 2" in st["title"]:
                assert np.allclose(_vector(total), jac[1]) or np.allclose(_vector(total), jac[0])
            assert _vector(term).size == 2
    assert sums >= 1
    # the wrapped box is as wide as its lines need (the layout's node size follows the rows)
    x_node = next(n for n in nodes if n["label"] == "x")
    assert _layout.node_size(x_node)[1] > _layout.NODE_H


def _forward_frames():
    from autodiff_viz.viz.draw.frames import FrameRenderer

    tr, names = tour._forward_mode_trace()
    anim = ad.viz.animate(tr, names=names)
    return FrameRenderer(anim.data, dpi=100), anim


def test_frames_draw_the_tangent_in_its_colour_beside_the_value():
    from matplotlib.colors import to_rgb

    fr, anim = _forward_frames()
    step = len(anim.steps) - 2  # the last forward step: z = x·y + sin(x) = 6 + sin 3, ż = y + cos 3
    fr.draw(step)
    j = next(k for k, (nd, *_r) in enumerate(fr.nodes) if nd["label"] == "z")
    val, tan = fr.nodes[j][3], text_of(fr, j)
    assert val.get_text() == f"= {6 + np.sin(3.0):.4g}"
    assert tan.get_text() == f"ẋ {2 + np.cos(3.0):.3g}" and tan.get_visible()
    assert np.allclose(to_rgb(tan.get_color()), to_rgb(TANGENT))
    assert not np.allclose(to_rgb(val.get_color()), to_rgb(TANGENT))
    # in the pixels too: the composed frame is blue where the tangent is written, and not where the value is
    rgb = fr.render(step).astype(float) / 255
    fr.draw(step)
    fr.fig.canvas.draw()
    h = rgb.shape[0]

    def crop(t):
        b = t.get_window_extent(fr.fig.canvas.get_renderer())
        return rgb[int(h - b.y1):int(h - b.y0) + 1, int(b.x0):int(b.x1) + 1].reshape(-1, 3)

    def blue(px):
        return np.sum(np.all(np.abs(px - np.array(to_rgb(TANGENT))) < 0.12, axis=1))

    assert blue(crop(tan)) > 20 and blue(crop(val)) == 0
    assert tan.get_window_extent().x0 > val.get_window_extent().x1  # beside, not on top


def test_browser_player_writes_the_tangent_in_its_colour(browser, tmp_path):
    tr, names = tour._forward_mode_trace()
    path = ad.viz.animate(tr, names=names).save(tmp_path / "forward.html")
    page = open_widget_page(browser, path)
    page.click(".adv-last")
    val = page.locator("[data-label='Mul'] .adv-val")
    assert val.text_content() == "= 6.0  ẋ 2.0"  # x·y = 6, ẋ·y + x·ẏ = 2
    part = val.locator(".adv-tangent-part")
    assert part.text_content() == "  ẋ 2.0"
    want = TANGENT  # the graph's and the frames' ẋ colour (the box text is large: no darker shade needed)
    got = part.evaluate("t => getComputedStyle(t).fill")
    assert got == "rgb({}, {}, {})".format(*(int(want[i:i + 2], 16) for i in (1, 3, 5)))
    ink = val.evaluate("t => getComputedStyle(t).fill")
    assert ink != got
    assert page.errors == []
