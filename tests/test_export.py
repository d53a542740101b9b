"""Exported notebooks: the step-through keeps stepping with no kernel and no network."""
import base64
import os
import re
import xml.etree.ElementTree as ET

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from autodiff_viz.nbconvert import WIDGET_MIME, StaticWidgets
from autodiff_viz.viz.draw.widget import esm_source
from browser_util import launch, require_chromium

CELL = """
import autodiff_viz as ad
x, y = ad.Variable(3.0, name="x"), ad.Variable(2.0, name="y")
with ad.trace() as tr:
    with ad.GradientTape() as tape:
        z = x * y + ad.sin(x)
    tape.gradient(z, [x, y])
ad.viz.animate(tr)
"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    finally:
        if old is not None:
            os.environ["HOME"] = old
    return nb


def test_the_live_output_carries_widget_and_html_view(executed):
    data = executed.cells[0].outputs[-1]["data"]
    assert WIDGET_MIME in data and 'class="adv-host"' in data["text/html"]


def test_preprocessor_keeps_only_the_self_contained_view(executed):
    nb = nbformat.from_dict(executed)
    other = nbformat.v4.new_output("display_data", data={WIDGET_MIME: {"model_id": "x"}, "text/plain": "w"})
    nb.cells[0].outputs.append(other)
    StaticWidgets().preprocess(nb, {})
    ours, theirs = nb.cells[0].outputs[-2]["data"], nb.cells[0].outputs[-1]["data"]
    assert WIDGET_MIME not in ours and "text/html" in ours
    assert WIDGET_MIME in theirs  # other libraries' widgets are left alone


@pytest.mark.browser
def test_exported_html_steps_offline(executed, tmp_path):
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    exporter = HTMLExporter()
    exporter.register_preprocessor(StaticWidgets, enabled=True)
    body, _ = exporter.from_notebook_node(nbformat.from_dict(executed))
    page_file = tmp_path / "exported.html"
    page_file.write_text(body, encoding="utf-8")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        # Only the file itself: any network request would fail the point of the test.
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
        page.goto(page_file.as_uri())
        title = page.locator(".adv-step-title")
        for _ in range(7):
            page.click(".adv-next")
        expect(title).to_contain_text("Backward step 3")
        expect(page.locator(".adv-current")).to_have_attribute("data-label", "Mul")
        page.click(".adv-last")
        expect(page.locator(".adv-results")).to_contain_text("3.0")  # dz/dy = x
        page.screenshot(path=str(tmp_path / "exported.png"))
        browser.close()


def _svg_texts(svg: str) -> list:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]


def test_saved_output_carries_a_still_picture(executed):
    """What a viewer with no widget manager and no scripts shows: the last step, as SVG."""
    data = executed.cells[0].outputs[-1]["data"]
    texts = _svg_texts(data["image/svg+xml"])
    for label in ("x", "y", "Mul", "Sin"):
        assert label in texts
    assert "z" in texts or "Add" in texts  # the target is named after the cell's variable, where there is one
    assert "= 3.0" in texts and "∂ 3.0" in texts      # y's gradient is x
    assert "∂target/∂y = 3.0" in texts and "∂target/∂x = 1.01" in texts   # y + cos(x)
    # The HTML shows the same picture as PNG (an <img>, which sanitizers and GitHub keep) until its script runs.
    b64 = re.search(r'class="adv-fallback" alt="[^"]*" src="data:image/png;base64,([^"]+)"', data["text/html"])
    assert base64.b64decode(b64.group(1)) == base64.b64decode(data["image/png"])


@pytest.mark.parametrize("kind", ["animate", "explore", "inspect"])
def test_widget_module_is_one_self_contained_module(kind):
    src = esm_source(kind)
    assert not re.search(r"^\s*import\b|\bimport\s*\(|\brequire\s*\(", src, re.M)  # imports nothing at run time
    assert {u for u in re.findall(r"https?://[^\s\"'`]+", src)} <= {"http://www.w3.org/2000/svg"}  # a namespace only
    assert src.count("export default") == 1


@pytest.mark.browser
def test_saved_notebook_shows_a_picture_with_no_widget_manager(executed, tmp_path):
    """A notebook saved as JupyterLab saves it (no widget state), exported by plain nbconvert: no widget manager.

    With scripts off the page shows the still picture; with scripts on (and no network) the player runs.
    """
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    nb = nbformat.from_dict(executed)
    nb.metadata.pop("widgets", None)  # nbclient stores the widgets' state; JupyterLab by default does not
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert WIDGET_MIME not in body
    page_file = tmp_path / "plain.html"
    page_file.write_text(body, encoding="utf-8")
    svg_file = tmp_path / "still.html"
    svg = executed.cells[0].outputs[-1]["data"]["image/svg+xml"]
    svg_file.write_text(f'<!DOCTYPE html><meta charset="utf-8"><body>{svg}</body>', encoding="utf-8")
    offline = lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()  # noqa: E731
    with sync_playwright() as p:
        browser = launch(p)
        still = browser.new_context(java_script_enabled=False, viewport={"width": 1300, "height": 900}).new_page()
        still.route("**/*", offline)
        still.goto(page_file.as_uri())
        img = still.locator(".jp-OutputArea-output img.adv-fallback")
        expect(img).to_be_visible()
        assert still.evaluate("document.querySelector('img.adv-fallback').naturalWidth") > 300  # decoded
        img.scroll_into_view_if_needed()
        still.screenshot(path=str(tmp_path / "no_scripts.png"))
        still.goto(svg_file.as_uri())  # the image/svg+xml output itself, drawn
        expect(still.locator("svg text", has_text="Mul")).to_be_visible()
        live = browser.new_page(viewport={"width": 1300, "height": 900})
        live.route("**/*", offline)
        live.goto(page_file.as_uri())
        expect(live.locator(".adv-host[data-ready='1']")).to_have_count(1, timeout=15_000)
        live.click(".adv-last")
        expect(live.locator(".adv-results")).to_contain_text("∂target/∂y = 3.0")
        browser.close()


# -- export background ---------------------------------------------------------------------------------------
def _small_graph():
    import autodiff_viz as ad

    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as t:
        y = x * x
    t.gradient(y, x)
    return ad.viz.graph(t)


def _corner(path):
    from PIL import Image

    with Image.open(path) as im:
        return im.convert("RGBA").getpixel((1, 1))


@pytest.mark.parametrize("background, pixel", [
    ("white", (255, 255, 255, 255)), ("#1E1E1E", (30, 30, 30, 255)), ((1.0, 1.0, 0.8), (255, 255, 204, 255)),
])
def test_graph_png_takes_a_background(tmp_path, background, pixel):
    path = _small_graph().save(tmp_path / "g.png", background=background)
    assert _corner(path) == pixel


def test_graph_png_and_svg_can_be_transparent(tmp_path):
    g = _small_graph()
    assert _corner(g.save(tmp_path / "g.png", background=None))[3] == 0
    def page_fill(svg):
        """The fill of the polygon that covers the whole picture (Graphviz's background), if any."""
        vb = re.search(r'viewBox="([^"]+)"', svg).group(1).split()
        for fill, points in re.findall(r'<polygon fill="([^"]+)"[^>]*points="([^"]+)"', svg):
            xs = [float(p.split(",")[0]) for p in points.split()]
            if max(xs) - min(xs) >= float(vb[2]) - 1:
                return fill
        return None

    assert page_fill(g.save(tmp_path / "g.svg", background="transparent").read_text()) in (None, "transparent")
    assert page_fill(g.save(tmp_path / "w.svg").read_text()) == "white"  # white by default
    assert page_fill(g.save(tmp_path / "c.svg", background="#123456").read_text()) == "#123456"
    assert g.save(tmp_path / "g.pdf", background=None).read_bytes().startswith(b"%PDF-")


def test_animation_gif_and_frames_take_a_background(tmp_path):
    from PIL import Image

    import autodiff_viz as ad

    anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0, linked=False)
    gif = anim.save(tmp_path / "a.gif", dpi=40, background="#FFFFCC")
    with Image.open(gif) as im:
        for k in (0, im.n_frames - 1):
            im.seek(k)
            assert im.convert("RGB").getpixel((1, 1)) == (255, 255, 204)
    anim.frame(-1, path=tmp_path / "f.png", dpi=40, background=None)
    assert _corner(tmp_path / "f.png")[3] == 0
    anim.frame(-1, path=tmp_path / "w.png", dpi=40)
    assert _corner(tmp_path / "w.png") == (255, 255, 255, 255)


@pytest.mark.parametrize("call, words", [
    (lambda g, a, d: g.save(d / "g.png", background="nope"), ["Graph.save", "background='nope'", "not a colour"]),
    (lambda g, a, d: g.save(d / "g.png", background=(1, 0, 0, 0.5)), ["Graph.save", "partly transparent"]),
    (lambda g, a, d: a.save(d / "a.gif", background=None), ["Animation.save", "background=None", ".gif"]),
    (lambda g, a, d: a.save(d / "a.mp4", background="transparent"), ["Animation.save", ".mp4"]),
    (lambda g, a, d: a.save(d / "a.gif", background=12), ["Animation.save", "background=12", "not a colour"]),
])
def test_a_bad_background_says_what_is_wrong(tmp_path, call, words):
    import autodiff_viz as ad

    anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0, linked=False)
    with pytest.raises(ValueError) as e:
        call(_small_graph(), anim, tmp_path)
    for w in words:
        assert w in str(e.value)
    assert not list(tmp_path.iterdir())  # nothing written
