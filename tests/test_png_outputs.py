"""Every picture output carries a PNG beside its SVG and HTML, for viewers that show no SVG (GitHub's notebook
preview) and converters that take PNG (nbconvert's LaTeX/PDF); the PNG is drawn only when a notebook asks.

A small notebook is run with nbclient and converted with nbconvert: to HTML, to LaTeX (what ``--to pdf``
typesets), and to PDF with Chromium's printing (what nbconvert's ``webpdf`` does; its exporter starts
Playwright's own browser download and cannot be pointed at the system Chromium, so the test prints the
same ``webpdf`` page with Playwright and /usr/bin/chromium).
"""
from __future__ import annotations

import base64
import io
import os
import re

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz import _graph
from autodiff_viz.viz.draw import png as _png
from autodiff_viz.viz.draw.look import colour

PIL = pytest.importorskip("PIL.Image")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _image(data: bytes) -> np.ndarray:
    assert data.startswith(PNG_MAGIC)
    return np.asarray(PIL.open(io.BytesIO(data)).convert("RGB"))


def _has_colour(img: np.ndarray, hex_colour: str, tol: int = 8) -> bool:
    rgb = np.array([int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)])
    return bool((np.abs(img.astype(int) - rgb).max(axis=2) <= tol).sum() > 20)


def _graph_of_cube():
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as t:
            y = x * x * x
        t.gradient(y, x)
    return ad.viz.graph(tr)


def test_an_animation_output_has_its_last_step_as_png():
    anim = ad.viz.animate(lambda a, b: a * b + a, 2.0, 3.0, linked=False)
    bundle = anim._repr_mimebundle_()
    assert {"image/png", "image/svg+xml", "text/html", "text/plain"} <= set(bundle)
    img = _image(bundle["image/png"])
    h, w, _ = img.shape
    assert max(h, w) <= _png.MAX_PX and min(h, w) >= 100
    assert _has_colour(img, colour("target"))  # the target's border
    assert _has_colour(img, colour("received"))  # the sources' borders, just received a gradient
    # the HTML fragment shows the same PNG until its script runs (sanitizers keep a PNG <img>)
    src = re.search(r'class="adv-fallback"[^>]*src="data:image/png;base64,([^"]+)"', bundle["text/html"])
    assert base64.b64decode(src.group(1)) == bundle["image/png"]


@pytest.mark.parametrize("f", [lambda x: x * x, lambda x, y: x * x + 3 * y * y], ids=["1d", "2d"])
def test_an_explorer_output_has_a_png(f):
    bundle = ad.viz.explore(f)._repr_mimebundle_()
    img = _image(bundle["image/png"])
    assert max(img.shape[:2]) <= _png.MAX_PX
    assert _has_colour(img, colour("variable"))  # the first curve (blue), or contours
    assert (img < 100).all(axis=2).sum() > 200  # axes, ticks and words in dark ink


def test_a_graph_output_has_a_png_of_bounded_size():
    g = _graph_of_cube()
    bundle = g._repr_mimebundle_()
    img = _image(bundle["image/png"])
    h, w, _ = img.shape
    assert w <= 12 * 96 and h <= 16 * 96
    # the same picture as the SVG: Graphviz's points at 96 dpi, within a pixel or two
    vb = re.search(r'viewBox="([\d.\s-]+)"', bundle["image/svg+xml"]).group(1).split()
    assert abs(float(vb[2]) * 96 / 72 - w) <= 2 and abs(float(vb[3]) * 96 / 72 - h) <= 2
    assert _has_colour(img, colour("target"))


def test_the_clickable_graph_carries_the_graphs_png():
    g = _graph_of_cube()
    png = g.inspect()._repr_mimebundle_()["image/png"]
    assert png == g._repr_mimebundle_()["image/png"] and _has_colour(_image(png), colour("target"))


def test_the_png_is_drawn_only_for_a_notebook(monkeypatch):
    """``.source``, ``.data``, ``.steps``, ``to_html`` and ``save`` never draw it; only the mimebundle does."""
    def refuse(*a, **k):
        raise AssertionError("PNG drawn")

    monkeypatch.setattr(_png, "still_png", refuse)
    monkeypatch.setattr(_graph.Graph, "_inline_png", refuse)
    anim = ad.viz.animate(lambda x: x * x, 3.0, linked=False)
    g = _graph_of_cube()
    clickable = g.inspect()
    assert anim.data and anim.steps and anim.to_html() and g.source and g.svg() and clickable.to_html()
    for obj in (anim, g, clickable):
        with pytest.raises(AssertionError, match="PNG drawn"):
            obj._repr_mimebundle_()


def test_a_png_can_be_left_out():
    anim = ad.viz.animate(lambda x: x * x, 3.0, linked=False)
    for obj in (anim, _graph_of_cube(), _graph_of_cube().inspect()):
        bundle = obj._repr_mimebundle_(exclude=["image/png"])
        assert "image/png" not in bundle and "image/svg+xml" in bundle


def test_a_huge_storyboard_gets_a_small_card(monkeypatch):
    monkeypatch.setattr(_png, "MAX_NODES", 2)
    anim = ad.viz.animate(lambda a, b: a * b + a, 2.0, 3.0, linked=False)
    img = _image(_png.still_png("animate", anim.data))
    assert img.shape[0] < 150 and (img < 100).all(axis=2).sum() > 100  # one band of text


# -- a notebook, run and converted -------------------------------------------------------------------------
CELLS = [
    "import autodiff_viz as ad\nad.viz.animate(lambda a, b: a * b + a, 2.0, 3.0, linked=False)",
    "x = ad.Variable(3.0, name='x')\nwith ad.GradientTape() as t:\n    y = x * x * x\nad.viz.graph(t)",
    "ad.viz.explore(lambda x: x * x)",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    home = tmp_path_factory.mktemp("home")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        nbclient.NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    finally:
        if old is not None:
            os.environ["HOME"] = old
    nb.metadata.pop("widgets", None)  # as JupyterLab saves it: no widget state
    return nb


def _pngs(nb) -> list:
    return [base64.b64decode(c.outputs[-1]["data"]["image/png"]) for c in nb.cells]


def test_each_executed_output_carries_a_png(executed):
    for cell, png in zip(executed.cells, _pngs(executed)):
        data = cell.outputs[-1]["data"]
        assert {"image/png", "image/svg+xml", "text/html"} <= set(data)
        assert max(_image(png).shape[:2]) <= max(_png.MAX_PX, 16 * 96)


def test_nbconvert_html_carries_the_widgets_pngs(executed):
    """nbconvert's HTML takes text/html; the animation's and the explorer's show their PNG until their script
    runs (a graph's HTML holds its SVG, which its script makes clickable)."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(executed)
    pngs = _pngs(executed)
    for png in (pngs[0], pngs[2]):
        assert f'src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}"' in body


def test_nbconvert_latex_takes_every_png(executed):
    """nbconvert's PDF (LaTeX) takes image/png before SVG and drops HTML: each output is its PNG.

    (Its SVG-to-PDF step needs Inkscape, which this machine lacks: left out here, as where it is absent.)
    """
    from nbconvert import LatexExporter
    from traitlets.config import Config

    config = Config()
    config.SVG2PDFPreprocessor.enabled = False
    latex, resources = LatexExporter(config=config).from_notebook_node(executed)
    files = resources["outputs"]
    included = re.findall(r"\\adjustimage.*\{([^{}]+)\}\s*$", latex, re.M)
    assert [files[name] for name in included] == _pngs(executed)


def _pdf_images(pdf: bytes) -> list:
    """``(width, height)`` of each image XObject in a PDF."""
    out = []
    for m in re.finditer(rb"<<(.*?)>>\s*stream", pdf, re.S):
        d = m.group(1)
        if re.search(rb"/Subtype\s*/Image", d):
            out.append(tuple(int(re.search(rb"/" + k + rb"\s+(\d+)", d).group(1)) for k in (b"Width", b"Height")))
    return out


@pytest.mark.browser
def test_the_webpdf_page_printed_by_chromium_holds_the_pictures(executed, tmp_path):
    """nbconvert's webpdf page printed to PDF: with scripts off (a viewer or converter that runs none) the
    animation's PNG is in the PDF as an image of its size; with scripts on the player draws itself."""
    from browser_util import launch, require_chromium

    require_chromium()
    from nbconvert import HTMLExporter
    from playwright.sync_api import sync_playwright

    body, _ = HTMLExporter(template_name="webpdf").from_notebook_node(executed)
    page_file = tmp_path / "notebook.html"
    page_file.write_text(body, encoding="utf-8")
    anim_size = _image(_pngs(executed)[0]).shape[1::-1]
    offline = lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()  # noqa: E731
    with sync_playwright() as p:
        browser = launch(p)
        for scripts in (False, True):
            page = browser.new_context(java_script_enabled=scripts).new_page()
            page.route("**/*", offline)
            page.emulate_media(media="print")
            page.goto(page_file.as_uri(), wait_until="load")
            if scripts:  # the player replaces the picture (and prints the step it shows)
                page.wait_for_selector(".adv-host[data-ready='1']")
                assert page.locator(".adv-host svg .adv-box").count() >= 3 and not page.locator("img.adv-fallback").count()
            pdf = page.pdf(print_background=True)
            (tmp_path / f"notebook-{scripts}.pdf").write_bytes(pdf)
            images = _pdf_images(pdf)
            if not scripts:
                assert tuple(anim_size) in images, (anim_size, images)
            assert pdf.startswith(b"%PDF-") and len(pdf) > 10_000
        browser.close()
