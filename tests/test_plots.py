"""Derivative plots and the explorer: curves equal closed forms."""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.run.plots import derivatives, fd_errors

pytest.importorskip("matplotlib")


def test_derivatives_up_to_third_order():
    xs = np.linspace(-3, 3, 13)
    f, d1, d2, d3 = derivatives(lambda x: ad.sin(x) * x, xs, order=3)
    np.testing.assert_allclose(f, np.sin(xs) * xs, atol=1e-12)
    np.testing.assert_allclose(d1, np.cos(xs) * xs + np.sin(xs), atol=1e-12)
    np.testing.assert_allclose(d2, 2 * np.cos(xs) - xs * np.sin(xs), atol=1e-12)
    np.testing.assert_allclose(d3, -3 * np.sin(xs) - xs * np.cos(xs), atol=1e-12)


def test_unconnected_higher_derivative_is_zero_and_non_elementwise_f():
    assert derivatives(lambda x: 2.0 * x, [1.0, 2.0], order=3)[3].tolist() == [0.0, 0.0]
    v = derivatives(lambda x: ad.reduce_sum(x * x * x), [1.0, 2.0], order=2)
    assert v[1].tolist() == [3.0, 12.0] and v[2].tolist() == [6.0, 12.0]


def test_plot_derivatives_labels_and_data():
    fig = ad.viz.plot_derivatives(ad.exp, (0.0, 1.0), order=3)
    lines = fig.axes[0].get_lines()[:4]
    assert [line.get_label() for line in lines] == ["f(x)", "f'(x)", "f''(x)", "f'''(x)"]
    for line in lines:
        np.testing.assert_allclose(line.get_ydata(), np.exp(line.get_xdata()), rtol=1e-12)


def test_fd_error_is_a_v():
    hs, forward, central, exact = fd_errors(ad.exp, 1.0)
    assert exact == pytest.approx(np.e, rel=1e-15)
    best = int(np.argmin(forward))
    assert 1e-10 < hs[best] < 1e-6                     # near sqrt(eps) for forward differences
    assert forward[0] > 1e3 * forward[best] and forward[-1] > 1e3 * forward[best]
    assert central.min() < forward.min()
    fig = ad.viz.plot_fd_error(ad.exp, 1.0)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"


def test_explore_1d_values_from_tape():
    e = ad.viz.explore(lambda x: x ** 3, x=(-1.0, 1.0), points=5)
    assert e.data["df"] == [3.0, 0.75, 0.0, 0.75, 3.0]
    assert "URL.createObjectURL" in e.to_html()


def test_explore_2d_descent_paths():
    e = ad.viz.explore(lambda x, y: x * x + 3.0 * y * y, x=(-2, 2), y=(-2, 2), iterations=5, starts=3,
                       rates=[0.1, 0.5])
    d = e.data
    assert d["mode"] == "2d" and len(d["paths"]) == 2 * 3 * 3
    # path for rate 0.1 starting at (-2, -2): x_{k+1} = x_k - 0.1 * 2 x_k
    p = d["paths"][0]
    assert p["x"][:3] == [-2.0, -1.6, -1.28]
    assert p["y"][1] == pytest.approx(-2.0 + 0.1 * 12.0)
    # rate 0.5 on 3y²: y_{k+1} = y_k - 0.5*6 y_k = -2 y_k: diverges, path stops (None) at some point
    far = d["paths"][9]
    assert far["y"][:3] == [-2.0, 4.0, -8.0]
    assert d["contours"] and d["arrows"]["gx"][0] == -4.0


def test_plot_derivatives_legend_sits_beside_the_axes_not_on_a_curve():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = ad.viz.plot_derivatives(lambda x: ad.sin(x) * x, (-6, 6), order=3)
    fig.canvas.draw()
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    legend_box = ax.get_legend().get_window_extent(renderer)
    assert legend_box.x0 >= ax.get_window_extent(renderer).x1     # right of the plotting area
    assert legend_box.x1 <= fig.bbox.x1 + 1                       # and still inside the saved figure
    plt.close(fig)


# ---------------------------------------------------------------------------
# Wrong arguments: one clear error naming the function, the argument and the value
# ---------------------------------------------------------------------------
def _square_tape():
    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as t:
        y = x * x
    t.gradient(y, x)
    return t


@pytest.mark.parametrize("call, error, words", [
    (lambda a, t: a.save("never.gif", fps=0), ValueError, "Animation.save: fps must be above 0 and at most 100, got 0"),
    (lambda a, t: a.save("never.gif", fps=-1), ValueError, "Animation.save: fps must be above 0 and at most 100, got -1"),
    (lambda a, t: a.save("never.gif", fps=float("nan")), ValueError, "fps must be above 0 and at most 100, got nan"),
    (lambda a, t: a.save("never.gif", fps="fast"), TypeError, "Animation.save: fps must be a number, got str 'fast'"),
    (lambda a, t: a.save("never.gif", dpi=10 ** 5), ValueError,
     "Animation.save: dpi must be a whole number from 10 to 400, got 100000"),
    (lambda a, t: a.frame(0, dpi=0), ValueError, "Animation.frame: dpi must be a whole number from 10 to 400, got 0"),
    (lambda a, t: ad.viz.animate(lambda u: u * u, 2.0, vary=5), ValueError,
     "animate: vary must be a whole number from 0 to 0, got 5"),
    (lambda a, t: ad.viz.animate(lambda u: u * u, 2.0, vary="w"), ValueError,
     "animate: vary='w' is not an input of the function (its inputs: u)"),
    (lambda a, t: ad.viz.animate(lambda u: u * u, 2.0, vary=0.5), TypeError, "animate: vary must be a whole number"),
    (lambda a, t: ad.viz.graph(t, digits=-1), ValueError, "graph: digits must be a whole number from 1 to 17, got -1"),
    (lambda a, t: ad.viz.graph(t, digits=2.5), TypeError, "graph: digits must be a whole number from 1 to 17, got float"),
    (lambda a, t: ad.viz.explore(5), TypeError, "explore: f must be a function (such as lambda x: x ** 2), got int 5"),
    (lambda a, t: ad.viz.explore(lambda u: u, points=10 ** 9), ValueError,
     "explore: points must be a whole number from 2 to 20001, got 1000000000"),
    (lambda a, t: ad.viz.explore(lambda u, w: u * w, resolution=100000), ValueError,
     "explore: resolution must be a whole number from 2 to 400, got 100000"),
    (lambda a, t: ad.viz.plot_fd_error(5), TypeError, "plot_fd_error: f must be a function"),
    (lambda a, t: ad.viz.plot_derivatives(ad.sin, order=1.5), TypeError,
     "plot_derivatives: order must be a whole number from 0 to 12, got float 1.5"),
    (lambda a, t: ad.viz.plot_derivatives(ad.sin, order=-1), ValueError,
     "plot_derivatives: order must be a whole number from 0 to 12, got -1"),
    (lambda a, t: ad.viz.plot_derivatives("sin"), TypeError, "plot_derivatives: f must be a function (such as lambda x: x ** 2), got str 'sin'"),
])
def test_wrong_arguments_name_function_argument_and_value(tmp_path, monkeypatch, call, error, words):
    monkeypatch.chdir(tmp_path)
    anim = ad.viz.animate(lambda u: u * u, 2.0)
    with pytest.raises(error) as info:
        call(anim, _square_tape())
    assert words in str(info.value)
    assert not list(tmp_path.iterdir())   # refused before anything was written


def test_arguments_at_the_bounds_are_accepted(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    anim = ad.viz.animate(lambda u: u * u, 2.0)
    gif = anim.save(tmp_path / "a.gif", fps=100, dpi=10)
    assert Image.open(gif).info["duration"] == 10   # 1/100 s a frame
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = x * x
        t.gradient(y, x)
    g = ad.viz.graph(tr, digits=17)
    assert "= 9.0" in g.source and "∂ 6.0" in g.source   # d(x*x)/dx at 3
    e = ad.viz.explore(lambda u, w: u * w, resolution=2, arrows=2, starts=1, iterations=1)
    assert e.data["mode"] == "2d"


_TEXTS = """(svg) => { const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('text')].map((t) => { const b = t.getBoundingClientRect();
    return {text: t.textContent, inside: b.left >= box.left - 0.5 && b.right <= box.right + 0.5
      && b.top >= box.top - 0.5 && b.bottom <= box.bottom + 0.5}; }); }"""


@pytest.mark.browser
def test_explore_labels_are_whole_and_the_2d_plot_has_axes_and_a_colour_scale(tmp_path):
    from browser_util import launch, require_chromium

    require_chromium()
    from playwright.sync_api import sync_playwright

    def rosen(a, b):
        return (1 - a) ** 2 + 5 * (b - a * a) ** 2

    small = ad.viz.explore(lambda x: 0.05 * ad.sin(3.0 * x) - 0.0002 * x, x=(-3.0, 3.0))
    flat = ad.viz.explore(rosen, iterations=5, starts=3)
    assert flat.data["inputs"] == ["a", "b"]
    found = {}
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        for key, e in (("1d", small), ("2d", flat)):
            path = e.save(tmp_path / f"{key}.html")
            page.goto(f"file://{path}")
            page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
            found[key] = page.evaluate(_TEXTS, page.query_selector("svg.adv-plot"))
            found[key + "bar"] = page.locator(".adv-colourbar rect").count()
        browser.close()
    for key in ("1d", "2d"):
        assert found[key] and all(t["inside"] for t in found[key]), found[key]   # no label clipped
    ticks = [t["text"] for t in found["1d"]]
    assert f"{min(small.data['f'] + small.data['df']):.4g}" in ticks   # the lowest value, whole: "-0.1502"
    words = [t["text"] for t in found["2d"]]
    assert "a" in words and "b" in words and "rosen(a, b)" in words   # axis labels and the colour scale's name
    assert found["2dbar"] == 6
    numbers = [float(w) for w in words if w[:1] in "-0123456789"]
    for level in (flat.data["contours"][0]["level"], flat.data["contours"][-1]["level"]):   # the scale's ends
        assert any(v == pytest.approx(level, rel=0.01) for v in numbers)


def test_plot_derivatives_logy_plots_sizes_on_a_log_axis():
    import matplotlib.pyplot as plt

    # f = sigmoid applied 6 times: its slope is a product of six sigmoid slopes, each at most 1/4
    def f(x):
        for _ in range(6):
            x = ad.sigmoid(x)
        return x

    xs = np.linspace(-3.0, 3.0, 7)
    fig = ad.viz.plot_derivatives(f, xs, logy=True)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"|f(x)|", "|f'(x)|"}
    # closed form: f'(x) = Π σ'(a_k) over the chain's inputs a_0 = x, a_k = σ(a_{k-1})
    a, slope = xs.copy(), np.ones_like(xs)
    for _ in range(6):
        s = 1.0 / (1.0 + np.exp(-a))
        slope, a = slope * s * (1.0 - s), s
    np.testing.assert_allclose(lines["|f'(x)|"].get_ydata(), slope, rtol=1e-5)
    assert slope.max() < 1e-3        # a flat line at 0 on a linear axis
    fig.canvas.draw()  # the title says so, and fits the figure (one line ran off both edges)
    assert ax.title.get_text().endswith("\n(sizes on a log scale)")
    box = ax.title.get_window_extent(fig.canvas.get_renderer())
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width
    plt.close(fig)
    with pytest.raises(TypeError, match="plot_derivatives: logy must be True or False"):
        ad.viz.plot_derivatives(f, xs, logy="yes")
