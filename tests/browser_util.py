"""Headless Chromium for the browser tests (Debian's /usr/bin/chromium, driven by Playwright)."""
import os
import pathlib

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


def require_chromium():
    """Skip with the reason where Chromium is absent; in CI (env CI set) that is a failure instead."""
    if pathlib.Path(CHROMIUM).exists():
        return
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing in CI: install Debian's chromium package")
    pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for a test module (conftest.py offers it to every module)."""
    require_chromium()
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def open_widget_page(browser, path, width=1300, height=900, init=None, **context):
    """A new page on the widget page at ``path`` once its widget is drawn; ``init``: a script to run before
    the page's own; the page's script errors collect in ``page.errors``."""
    page = browser.new_page(viewport={"width": width, "height": height}, **context)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if init:
        page.add_init_script(init)
    page.goto(pathlib.Path(path).as_uri())
    page.wait_for_selector(".adv-host[data-ready='1']", timeout=15_000)
    page.errors = errors
    return page
