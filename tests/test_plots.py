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
    assert [l.get_label() for l in lines] == ["f(x)", "f'(x)", "f''(x)", "f'''(x)"]
    for l in lines:
        np.testing.assert_allclose(l.get_ydata(), np.exp(l.get_xdata()), rtol=1e-12)


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
