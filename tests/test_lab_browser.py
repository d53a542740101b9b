"""JupyterLab end to end: open the step-through notebook, Run All, step the widget, read the gradient panel.

Serves JupyterLab on loopback with a token (HOME in a temporary folder), drives
Debian's /usr/bin/chromium through Playwright, and checks that the widget's
table of accumulated gradients shows dz/dx = y + cos(x) = 1.01 after the
backward pass has run Mul's rule.
"""
from __future__ import annotations

import math
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from browser_util import launch, require_chromium
from test_presenter import _luminance, contrast

pytestmark = pytest.mark.browser

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "08_backprop_step_by_step.ipynb"
TOKEN = "autodiff-viz-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    require_chromium()
    pytest.importorskip("playwright")
    pytest.importorskip("jupyterlab")
    home = tmp_path / "home"
    root = tmp_path / "nb"
    home.mkdir()
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    port = _free_port()
    env = {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    log = open(tmp_path / "lab.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
         "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text(errors="replace")[-3000:])
                time.sleep(0.2)
        yield base, root, tmp_path
    finally:
        proc.terminate()  # stops its kernels too
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_step_through_widget_in_jupyterlab(lab):
    from playwright.sync_api import expect, sync_playwright

    base, root, tmp_path = lab
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{base}/lab/tree/{NOTEBOOK.name}?token={TOKEN}")
            page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell .cm-content", timeout=60_000)
            # Wait for the kernel itself (the toolbar's indicator says idle too early: RECIPES §2).
            expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle", timeout=60_000)
            page.click('.lm-MenuBar-item:has-text("Run")')
            page.click('.lm-Menu-item[data-command="runmenu:run-all"]')

            page.locator(".jp-OutputArea-output .adv-next").first.wait_for(state="attached", timeout=90_000)
            widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".adv-next")).first
            widget.scroll_into_view_if_needed()
            title = widget.locator(".adv-step-title")
            expect(title).to_have_text("Forward and backward pass, step by step")
            widget.locator(".adv-next").click()
            expect(title).to_have_text("Forward 1/3: Mul")
            for _ in range(6):
                widget.locator(".adv-next").click()
            expect(title).to_have_text("Backward step 3: Mul")
            rows = widget.locator(".adv-panel tbody tr")
            expect(rows.filter(has_text="x").locator(".adv-total")).to_have_text(f"{math.cos(3.0) + 2.0:.3g}")
            expect(rows.filter(has_text="y").locator(".adv-total")).to_have_text("3.0")
            # A presenter's keys, once the player has been clicked: inside JupyterLab too.
            widget.locator(".adv-heading").click()
            for key, want in (("PageUp", "Backward step 2"), ("Space", "Backward step 3"),
                              ("Backspace", "Backward step 2"), ("PageDown", "Backward step 3")):
                page.keyboard.press(key)
                expect(title).to_contain_text(want)
            page.screenshot(path=str(tmp_path / "lab.png"))
            # JupyterLab's dark theme: the player follows it, readable.
            page.click('.lm-MenuBar-item:has-text("Settings")')
            page.hover('.lm-Menu-item:has-text("Theme")')
            page.click('.lm-Menu-item:has-text("JupyterLab Dark")')
            page.wait_for_selector('body[data-jp-theme-light="false"]', state="attached", timeout=30_000)
            colours = widget.locator(".adv").first.evaluate(
                "(e) => { const cs = getComputedStyle(e); return [cs.backgroundColor, cs.color]; }")
            assert _luminance(colours[0]) < 0.05 and contrast(*colours) >= 4.5, colours
            widget.screenshot(path=str(tmp_path / "lab-dark.png"))
            # Run All went to the end: the last cell's widget is there and no cell failed.
            expect(page.locator(".jp-OutputArea-output .adv-next")).to_have_count(2, timeout=60_000)
            expect(page.locator(".jp-OutputArea-output").filter(has_text="7 steps; Done")).to_have_count(1)
            assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").filter(
                has_text="Error").count() == 0
        finally:
            browser.close()
    # The notebook saved the slide material next to itself.
    assert (root / "backprop.html").exists() and (root / "backprop.gif").exists()
