"""Jacobians and Hessians drawn as what they are: one backward pass per row, "row i of n"."""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import events as ev, traces
from autodiff_viz.viz.text.numbers import fmt_box


def _square_jacobian():
    x = ad.constant([1.0, 2.0])
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            t.watch(x)
            y = x * x
        j = t.jacobian(y, x)
    return tr, x, y, j


def test_a_jacobian_records_one_gradient_row_per_element_and_round_trips():
    tr, *_ = _square_jacobian()
    rows = [e for e in tr.events if e.kind == "gradient_row"]
    assert [(e.row, e.rows, e.index) for e in rows] == [(1, 2, (0,)), (2, 2, (1,))]
    # each pass's sums restart: x's second contribution in row 2 totals 2·x₂ = 4 (not 2 + 2 + 2 + 4)
    acc = [e for e in tr.events if e.kind == "accumulate" and e.node is not None]
    assert [(e.count, e.total.head) for e in acc] == [(1, (1.0, 0.0)), (2, (2.0, 0.0)), (1, (0.0, 2.0)),
                                                       (2, (0.0, 4.0))]
    assert traces.from_json(traces.to_json(tr.events)) == tr.events
    bad = ev.GradientRow(0, 1, row=3, rows=2)
    with pytest.raises(ev.TraceFormatError, match="row 3 of 2"):
        traces.check([bad])


def test_the_graph_box_shows_the_whole_jacobian():
    tr, x, y, j = _square_jacobian()
    g = ad.viz.graph(tr)
    (xn,) = [n for n in g.model.nodes if n.label == "x"]
    # d(x*x)/dx = diag(2x) = [[2, 0], [0, 4]]: the Jacobian, not its last row [0, 4]
    np.testing.assert_allclose(xn.grad.array(), np.diag(2 * x.numpy()))
    np.testing.assert_allclose(xn.grad.array(), j.numpy())
    assert "[[2.0, 0.0],<br/>" in g.source and "Jacobian" in g.source
    assert "jacobian() was called" in g.source and "gradient() was called" not in g.source


def test_hessian_from_nested_tapes_is_drawn_as_rows():
    x = ad.constant([1.0, 2.0])
    with ad.trace() as tr:
        with ad.GradientTape() as outer:
            outer.watch(x)
            with ad.GradientTape() as inner:
                inner.watch(x)
                y = ad.reduce_sum(x * x * x)
            g = inner.gradient(y, x)
        h = outer.jacobian(g, x)
    np.testing.assert_allclose(h.numpy(), np.diag(6 * x.numpy()))  # d²(Σx³)/dx² = diag(6x)
    anim = ad.viz.animate(tr, names={"x": x})
    titles = [s["title"] for s in anim.steps]
    assert any(t.startswith("Row 2 of 2") for t in titles)
    assert any("row 2 of 2" in t for t in titles if t.startswith("Backward step"))
    last = anim.steps[-1]["results"]
    assert "  row 1, ∂g[0]/∂x = [6.0, 0.0]" in last or any(r.endswith("= [6.0, 0.0]") for r in last)
    assert any(r.endswith("= [0.0, 12.0]") for r in last)
    gr = ad.viz.graph(tr, gradient=1)
    (xn,) = [n for n in gr.model.nodes if n.label == "x"]
    key = (gr.model.gradients[1].tape, gr.model.gradients[1].call)
    np.testing.assert_allclose(xn.grads[key].array(), h.numpy())


def test_batch_jacobian_rows_are_per_example():
    x = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            t.watch(x)
            y = x * x
        jb = t.batch_jacobian(y, x)
    expected = np.stack([np.diag(2 * row) for row in x.numpy()])
    np.testing.assert_allclose(jb.numpy(), expected)
    anim = ad.viz.animate(tr, names={"x": x, "y": y})
    results = anim.steps[-1]["results"]
    # row 1 is y[:, 0] differentiated, for both examples at once: [[2, 0], [6, 0]]
    assert "  row 1, ∂y[:, 0]/∂x = [[2.0, 0.0], [6.0, 0.0]]" in results
    assert "  row 2, ∂y[:, 1]/∂x = [[0.0, 4.0], [0.0, 8.0]]" in results
    g = ad.viz.graph(tr)
    (xn,) = [n for n in g.model.nodes if n.label == "x"]
    np.testing.assert_allclose(xn.grad.array(), expected)
    (yn,) = [n for n in g.model.nodes if n.label == "y"]  # y's own rows: the identity per example
    np.testing.assert_allclose(yn.grad.array(), np.stack([np.eye(2)] * 2))


def test_the_player_tells_the_rows_apart_and_never_adds_one_row_to_another():
    tr, x, y, j = _square_jacobian()
    anim = ad.viz.animate(tr, names={"x": x, "y": y})
    titles = [s["title"] for s in anim.steps]
    assert "Row 1 of 2: the backward pass of y[0]" in titles
    assert "Row 2 of 2: the backward pass of y[1]" in titles
    assert "Backward step 1, row 2 of 2: y" in titles
    lines = [line for s in anim.steps for line in s["lines"]]
    # the false sum is gone; each pass's own sum is there
    assert not any("[1.0, 0.0] + [1.0, 0.0] + [0.0, 2.0]" in line for line in lines)
    assert "x: reached again, += [0.0, 2.0]: [0.0, 2.0] + [0.0, 2.0] = [0.0, 4.0]" in lines
    # the matrix fills in row by row under the table
    row2 = anim.steps[titles.index("Row 2 of 2: the backward pass of y[1]")]["results"]
    assert row2 == ["∂y/∂x row by row:", "  row 1, ∂y[0]/∂x = [2.0, 0.0]", "  row 2, ∂y[1]/∂x = …"]
    assert anim.steps[-1]["results"][-1] == "∂y/∂x = [[2.0, 0.0], [0.0, 4.0]]"
    # when the passes are done, x's box shows the whole Jacobian (not row 2), y's the identity
    ids = {n["label"]: k for k, n in enumerate(anim.nodes)}
    assert anim.steps[-1]["grads"][ids["x"]] == fmt_box(ev.summarize(j.numpy()))
    assert anim.steps[-1]["grads"][ids["y"]] == fmt_box(ev.summarize(np.eye(2, dtype=np.float32)))
    assert anim.steps[-2]["grads"][ids["x"]] != anim.steps[-1]["grads"][ids["x"]]
    # a click on x: its gradient is the Jacobian of one call of two passes
    grads = dict(anim.data["details"]["nodes"][ids["x"]])["grads"]
    assert grads[0] == "T1#1 (jacobian of y, one backward pass per row: 2 rows): [[2.0, 0.0], [0.0, 4.0]]"
    x_row = [r for r in anim.steps[-1]["panel"] if r["name"] == "x"][0]
    assert x_row["terms"] == ["[0.0, 2.0]", "[0.0, 2.0]"] and x_row["total"] == "[0.0, 4.0]"


def test_graph_gradient_index_counts_from_0_and_refuses_what_is_out_of_range():
    x = ad.constant([1.0, 3.0])
    with ad.trace() as tr:
        with ad.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)          # T1#1: 2x = [2, 6]
        tape.jacobian(y, x)          # T1#2: diag(2x)
    first, last = ad.viz.graph(tr, gradient=0), ad.viz.graph(tr, gradient=-1)
    assert [e.grad.head for e in first.model.edges if e.grad is not None][0] == (1.0, 3.0)
    assert [e.grad.shape for e in last.model.edges if e.grad is not None][0] == (2, 2)
    with pytest.raises(IndexError, match=r"gradient=2 is out of range: the picture has 2 gradient calls, "
                                         r"T1#1 to T1#2, so gradient= counts from 0 \(T1#1\) to 1 \(T1#2\)"):
        ad.viz.graph(tr, gradient=2)
    with pytest.raises(IndexError, match="gradient=-3 is out of range"):
        ad.viz.graph(tr, gradient=-3)
    with pytest.raises(TypeError, match=r"gradient= must be an int .* got 1.0 \(float\)"):
        ad.viz.graph(tr, gradient=1.0)
    with ad.trace() as none:
        with ad.GradientTape() as t:
            t.watch(x)
            x * x
    ad.viz.graph(none)  # no call, the default: nothing to choose, no error
    with pytest.raises(IndexError, match="the picture has no gradient calls"):
        ad.viz.graph(none, gradient=0)


def test_the_tour_draws_a_jacobians_rows(tmp_path):
    from PIL import Image

    from autodiff_viz import tour

    anim, step = tour.still_jacobian_rows()
    st = anim.steps[step]
    assert st["title"] == "Backward step 2, row 2 of 2: s"
    # y = x·Σx: ∂y_i/∂x_j = δ_ij Σx + x_i, at x = [1, 2]: [[4, 1], [2, 5]]
    assert st["results"] == ["∂y/∂x row by row:", "  row 1, ∂y[0]/∂x = [4.0, 1.0]", "  row 2, ∂y[1]/∂x = …"]
    x_row = [r for r in st["panel"] if r["name"] == "x"][0]
    assert x_row["terms"] == ["[0.0, 3.0]", "[2.0, 2.0]"] and x_row["total"] == "[2.0, 5.0]"
    (path,) = tour.run_tour(tmp_path, only=["jacobian-rows"])
    assert path.name == "step-jacobian-rows.png"
    img = Image.open(path)
    assert img.width > 600 and len(img.convert("L").getcolors(1 << 16) or ()) > 10


def test_a_jacobian_of_a_scalar_keeps_the_engines_shape_in_every_box():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            t.watch(x)
            y = x * x
            z = ad.sin(y)
        j = t.jacobian(z, x)
    g = ad.viz.graph(tr, names={"x": x, "y": y, "z": z})
    boxes = {n.label: n.grad for n in g.model.nodes}
    assert j.shape == () and {k: v.shape for k, v in boxes.items()} == {"x": (), "y": (), "z": ()}
    assert boxes["y"].head[0] == pytest.approx(np.cos(9.0), rel=1e-6)             # dz/dy = cos(x²)
    assert boxes["x"].head[0] == pytest.approx(6.0 * np.cos(9.0), rel=1e-6)       # dz/dx = 2x·cos(x²)
