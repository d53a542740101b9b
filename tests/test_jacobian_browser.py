"""The player of a Jacobian in headless Chromium: each row's backward pass is told apart, the matrix fills in."""
import numpy as np
import pytest

import autodiff_viz as ad
from browser_util import open_widget_page
from test_jacobian_rows import _square_jacobian as square_jacobian

pytestmark = pytest.mark.browser


def test_the_player_steps_through_a_jacobian_row_by_row(browser, tmp_path):
    from playwright.sync_api import expect

    tr, x, y, j = square_jacobian()
    np.testing.assert_allclose(j.numpy(), np.diag(2 * x.numpy()))   # d(x²)/dx = diag(2x)
    anim = ad.viz.animate(tr, names={"x": x, "y": y})
    path = tmp_path / "jacobian.html"
    anim.save(path)
    page = open_widget_page(browser, path)
    title, results = page.locator(".adv-step-title"), page.locator(".adv-results")
    titles = [s["title"] for s in anim.steps]
    for _ in range(titles.index("Row 2 of 2: the backward pass of y[1]")):
        page.click(".adv-next")
    expect(title).to_have_text("Row 2 of 2: the backward pass of y[1]")
    expect(results).to_contain_text("row 1, ∂y[0]/∂x = [2.0, 0.0]")   # row 1 is done
    expect(results).to_contain_text("row 2, ∂y[1]/∂x = …")            # row 2 is under way
    rows = page.locator(".adv-panel tbody tr")
    expect(rows.filter(has_text="x")).to_have_count(0)                 # a new pass: its table starts empty
    page.click(".adv-next")
    expect(title).to_have_text("Backward step 1, row 2 of 2: y")
    x_row = rows.filter(has_text="x")
    expect(x_row.locator(".adv-terms")).to_have_text("[0.0, 2.0] + [0.0, 2.0]")   # only this pass's terms
    expect(x_row.locator(".adv-total")).to_have_text("[0.0, 4.0]")
    page.click(".adv-next")
    expect(title).to_contain_text("Done: the Jacobian")
    expect(results).to_contain_text("row 2, ∂y[1]/∂x = [0.0, 4.0]")
    expect(results).to_contain_text("∂y/∂x = [[2.0, 0.0], [0.0, 4.0]]")
    page.screenshot(path=str(tmp_path / "row2.png"))
    assert page.errors == []
    page.close()
