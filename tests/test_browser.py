"""The step-through widget in a real browser: the exported page, opened from file:// with no kernel."""
import math
import pathlib

import numpy as np
import pytest

import autodiff_viz as ad

from browser_util import launch, require_chromium

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    require_chromium()
    pytest.importorskip("playwright")
    x, y = ad.constant(3.0), ad.constant(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch([x, y])
            z = x * y + ad.sin(x)
        tape.gradient(z, [x, y])
    path = tmp_path_factory.mktemp("browser") / "animation.html"
    ad.viz.animate(tr, names={"x": x, "y": y}).save(path)
    return path


def test_exported_page_steps_and_plays(page_path, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1300, "height": 800})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", lambda route: route.abort() if not route.request.url.startswith(("file:", "blob:"))
                   else route.continue_())  # no network: everything must be in the file
        page.goto(pathlib.Path(page_path).as_uri())
        page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
        title = page.locator(".adv-step-title")
        expect(title).to_have_text("Forward and backward pass, step by step")
        expect(page.locator(".adv-fit")).to_be_hidden()  # the graph fits its box: no fit toggle to offer
        page.click(".adv-next")
        expect(title).to_have_text("Forward 1/3: Mul")
        expect(page.locator(".adv-current")).to_have_attribute("data-label", "Mul")
        for _ in range(6):
            page.click(".adv-next")
        # Backward step 3 runs Mul's rule: x receives its second contribution, y gets a = 3.0.
        expect(title).to_have_text("Backward step 3: Mul")
        expect(page.locator(".adv-current")).to_have_attribute("data-label", "Mul")
        rows = page.locator(".adv-panel tbody tr")
        x_row = rows.filter(has_text="x")
        expect(x_row.locator(".adv-total")).to_have_text(f"{math.cos(3.0) + 2.0:.3g}")
        expect(x_row.locator(".adv-terms")).to_have_text(f"{math.cos(3.0):.3g} + 2.0")
        expect(rows.filter(has_text="y").locator(".adv-total")).to_have_text("3.0")
        expect(page.locator("[data-label='x'] .adv-grad")).to_contain_text("+= 2.0")
        page.screenshot(path=str(tmp_path / "step.png"))
        # Play from the start: it reaches the last step by itself.
        page.click(".adv-first")
        page.select_option(".adv-speed", "8")
        page.click(".adv-play")
        expect(title).to_have_text("Done: gradients of tape T1", timeout=10_000)
        expect(page.locator(".adv-results")).to_contain_text("∂target/∂y = 3.0")
        # How long one step takes to draw (script, style and layout), over 50 steps.
        ms = page.evaluate("""() => {
            const next = document.querySelector('.adv-next'), first = document.querySelector('.adv-first');
            const times = [];
            for (let i = 0; i < 50; i++) {
                if (i % 8 === 0) first.click();
                const t0 = performance.now();
                next.click();
                document.body.getBoundingClientRect(); document.body.offsetHeight;  // force style + layout
                times.push(performance.now() - t0);
            }
            times.sort((a, b) => a - b);
            return {median: times[25], max: times[49]};
        }""")
        print(f"\nstep draw time: median {ms['median']:.2f} ms, max {ms['max']:.2f} ms")
        page.screenshot(path=str(tmp_path / "done.png"))
        assert not errors
        browser.close()


@pytest.fixture(scope="module")
def mlp_pages(tmp_path_factory):
    """A 2-layer MLP's training step, wider or taller than the graph's box: top to bottom (auto) and left to right."""
    require_chromium()
    pytest.importorskip("playwright")
    import numpy as np

    ad.random.set_seed(0)
    l1, l2 = ad.keras.layers.Dense(3, activation="tanh"), ad.keras.layers.Dense(1)
    x = ad.constant(np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 1.5]], np.float32))
    y = ad.constant(np.array([[1.0], [0.0], [0.5]], np.float32))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean((l2(l1(x)) - y) ** 2)
        tape.gradient(loss, l1.trainable_variables + l2.trainable_variables)
    folder = tmp_path_factory.mktemp("mlp")
    pages = {}
    for rankdir in ("auto", "LR"):
        pages[rankdir] = folder / f"mlp_{rankdir}.html"
        # values in words keep every box one line high and narrow: this is about following the current node
        ad.viz.animate(tr, rankdir=rankdir, max_items=1).save(pages[rankdir])
    return pages


def _inside(inner, outer, tol=1.0):
    return (inner["x"] >= outer["x"] - tol and inner["y"] >= outer["y"] - tol
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + tol
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + tol)


def _current_in_view(page, timeout_ms=3000):
    """Whether the current node ends up inside the graph box's visible rectangle (scrolling is smooth: wait)."""
    box = page.locator(".adv-graph-box").bounding_box()
    for _ in range(timeout_ms // 50):
        if _inside(page.locator(".adv-current").bounding_box(), box):
            return True
        page.wait_for_timeout(50)
    return False


@pytest.mark.parametrize("rankdir, starts_fit", [("auto", True), ("LR", False)])
def test_current_node_stays_in_view(mlp_pages, rankdir, starts_fit, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1300, "height": 800})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(pathlib.Path(mlp_pages[rankdir]).as_uri())
        page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
        graph_box = page.locator(".adv-graph-box").bounding_box()
        svg = page.locator(".adv-graph")
        # The graph is bigger than its box: what the side panel describes would be off-screen without scrolling.
        assert svg.bounding_box()["height"] > graph_box["height"] or svg.bounding_box()["width"] > graph_box["width"]
        fit = page.locator(".adv-fit")
        expect(fit).to_have_attribute("aria-pressed", "true" if starts_fit else "false")
        title = page.locator(".adv-step-title")
        root = page.locator(".adv-animate")
        while root.get_attribute("data-phase") != "backward":
            page.click(".adv-next")
        expect(title).to_have_text("Backward step 1: loss")  # the Mean, named as the code names it
        # Every backward step: the current node is in the box's visible rectangle, and the page itself never scrolls.
        for k in range(1, 9):
            expect(title).to_contain_text(f"Backward step {k}:")
            assert _current_in_view(page), f"backward step {k}: current node out of view"
            assert page.evaluate("window.scrollX + window.scrollY") == 0
            if k == 5:
                page.screenshot(path=str(tmp_path / f"mlp_{rankdir}_step5.png"))
            page.click(".adv-next")
        for _ in range(3):
            page.click(".adv-back")
        expect(title).to_contain_text("Backward step 6:")
        # The fit toggle scales the whole graph (viewBox) to the box's width, and back to 100%.
        width_before = svg.bounding_box()["width"]
        fit.click()
        expect(fit).to_have_attribute("aria-pressed", "false" if starts_fit else "true")
        width_after = svg.bounding_box()["width"]
        assert width_after != pytest.approx(width_before, abs=2)
        fitted = width_before if starts_fit else width_after
        assert fitted <= graph_box["width"] + 1
        assert _current_in_view(page)
        page.screenshot(path=str(tmp_path / f"mlp_{rankdir}_toggled.png"))
        fit.click()
        assert svg.bounding_box()["width"] == pytest.approx(width_before, abs=1)
        assert not errors
        browser.close()


def test_explorer_page(tmp_path):
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    path = tmp_path / "explore.html"
    ad.viz.explore(lambda x: x * x, x=(-2.0, 2.0), points=5).save(path)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
        page.fill(".adv-slider", "4")
        page.dispatch_event(".adv-slider", "input")
        expect(page.locator(".adv-readout")).to_contain_text("x = 2.0   f(x) = 4.0   f'(x) = 4.0")
        browser.close()


def test_linked_view_plots_the_result_until_a_node_is_clicked(tmp_path):
    # animate(f, x) with linked views: the plot starts with f's result against x (not x against itself).
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import expect, sync_playwright

    anim = ad.viz.animate(lambda x: ad.sin(x) * x, 1.0, points=9)
    path = tmp_path / "linked.html"
    anim.save(path)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto(path.as_uri())
        page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
        title = page.locator(".adv-plot-title")
        expect(title).to_have_text("Mul against x")
        page.locator(".adv-node[data-label='Sin']").click()
        expect(title).to_have_text("Sin against x")
        browser.close()


def test_keys_work_as_soon_as_the_page_opens(tmp_path):
    # A teacher opens the exported page and presses End: the player has the focus already.
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import expect, sync_playwright

    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * ad.sin(x)
        tape.gradient(y, x)
    path = tmp_path / "keys.html"
    ad.viz.animate(tr).save(path)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
        page.keyboard.press("End")
        expect(page.locator(".adv-step-title")).to_contain_text("Done")
        page.keyboard.press("Home")
        expect(page.locator(".adv-counter")).to_contain_text("step 1 /")
        browser.close()


def test_long_node_texts_stay_inside_their_boxes(tmp_path):
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    anim = ad.viz.animate(lambda x: ad.sin(x) * x + x * 1.23456, 3.0, linked=False)
    path = tmp_path / "long.html"
    anim.save(path)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto(path.as_uri())
        page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
        worst = 0.0
        for _ in range(len(anim)):
            worst = max(worst, page.evaluate("""() => Math.max(...[...document.querySelectorAll('.adv-node')].map(g => {
                const box = g.querySelector('.adv-box').getBBox();
                return Math.max(...[...g.querySelectorAll('.adv-val, .adv-grad')].map(t => t.getBBox().width - box.width));
            }))"""))
            page.keyboard.press("ArrowRight")
        assert worst <= 0, f"a text is {worst:.1f} px wider than its box"
        browser.close()


# Numbers the browser writes itself (plot ticks, readouts) follow the rules Python writes every other number by.
NUMBERS = [(12.0, "12.0"), (0.123456, "0.1235"), (1.5e-7, "1.5e-7"), (123456.0, "1.235e5"), (-0.5, "-0.5"),
           (2.0 / 3.0, "0.6667"), (1e-4, "0.0001"), (100.0, "100.0"), (0.0, "0.0"), (-0.0, "0.0"),
           (2.96017, "2.96"), (1e20, "1e20"), (-4.2e-9, "-4.2e-9"), (float("nan"), "nan"),
           (float("inf"), "inf"), (float("-inf"), "-inf"), (None, "?")]


def test_the_browser_writes_numbers_as_python_does():
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    from autodiff_viz.viz.draw.widget import STATIC
    from autodiff_viz.viz.text import numbers

    assert [numbers.fmt_number(v) for v, _ in NUMBERS] == [text for _, text in NUMBERS]
    script = numbers.js_constants() + (STATIC / "common.js").read_text(encoding="utf-8")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.add_script_tag(content=script)
        # JSON has no nan or inf: they travel as strings and are turned back into numbers in the page.
        values = [v if v is None or math.isfinite(v) else str(v) for v, _ in NUMBERS]
        got = page.evaluate("(vs) => vs.map((v) => fmt(typeof v === 'string' ? Number(v.replace('inf', "
                            "'Infinity')) : v))", values)
        browser.close()
    assert got == [text for _, text in NUMBERS]


def test_the_browser_replays_the_storyboard_as_python_does(tmp_path):
    # Every step of a storyboard with a broadcast and a sum of two paths: what the page shows (the boxes'
    # values, gradients and order badges, which boxes are drawn yet, the step's words, the gradient table,
    # the results) is what Python's states() says that step holds.
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    x = ad.constant(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    b = ad.constant(np.array([0.5, -1.0, 2.0]))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch([x, b])
            y = ad.reduce_sum(x * b + ad.sin(b))
        tape.gradient(y, [x, b])
    anim = ad.viz.animate(tr, names={"x": x, "b": b})
    path = tmp_path / "replay.html"
    anim.save(path)
    ids = [n["id"] for n in anim.nodes]
    expected = []
    for st in anim.steps:
        expected.append({
            "title": st["title"], "lines": st["lines"], "results": st["results"],
            "pending": [not a for a in st["alive"]],
            "vals": ["= " + v if v else "" for v in st["vals"]],
            "grads": ["∂ " + g if g else "" for g in st["grads"]],
            "order": st["order"],
            "panel": [[r["name"], " + ".join(r["terms"]), r["total"], r["fresh"]] for r in st["panel"]],
        })
    assert any("the tape sums over axis 0" in line for e in expected for line in e["lines"])
    assert any(len(row[1].split(" + ")) == 2 for e in expected for row in e["panel"])   # b's two paths
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto(path.as_uri())
        page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
        shown = []
        for k in range(len(expected)):
            if k:
                page.click(".adv-next")
            page.wait_for_selector(f".adv-animate[data-step='{k}']")
            shown.append(page.evaluate("""(ids) => {
                const text = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent);
                const node = (id) => document.querySelector(`.adv-node[data-id='${id}']`);
                // a value over several lines: its tspans, back to the storyboard's text
                const box = (el) => el.querySelector("tspan") ? [...el.querySelectorAll("tspan")].map((t, i) =>
                    i ? t.textContent.replace(/^\u2007\u2007\u00a0?/, (m) => m.endsWith("\u00a0") ? " " : "")
                      : t.textContent).join("\\n") : el.textContent;
                return {
                    title: document.querySelector(".adv-step-title").textContent,
                    lines: text(".adv-lines .adv-line"),
                    results: text(".adv-results div"),
                    pending: ids.map((id) => node(id).classList.contains("adv-pending")),
                    vals: ids.map((id) => box(node(id).querySelector(".adv-val"))),
                    grads: ids.map((id) => box(node(id).querySelector(".adv-grad"))),
                    order: ids.map((id) => document.querySelector(`.adv-badge[data-for='${id}'] text`).textContent),
                    panel: [...document.querySelectorAll(".adv-panel tbody tr")].map((tr) => [
                        tr.querySelector(".adv-name").textContent, tr.querySelector(".adv-terms").textContent,
                        tr.querySelector(".adv-total").textContent, tr.classList.contains("adv-fresh")]),
                };
            }""", ids))
        browser.close()
    for k, (want, got) in enumerate(zip(expected, shown)):
        assert got == want, f"step {k}: {want['title']}"
