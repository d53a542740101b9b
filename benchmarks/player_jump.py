"""How long the browser player takes to show a step it has to rebuild from deltas.

The storyboard stores per step only what changes; the player applies the
deltas of every step up to the one asked for.  This measures, in headless
Chromium, the time the player's draw reports (``data-draw-ms``) for the worst
jumps: to the last step (End, every delta applied), then back to the first
(Home) and to the last again.

    python benchmarks/player_jump.py                 # chains of 250, 1000 and 2000 ops
    python benchmarks/player_jump.py --chain 1000 --repeat 5
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile

import autodiff_viz as ad

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def chain_page(n: int, folder: pathlib.Path) -> pathlib.Path:
    x = ad.constant(1.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in range(n):
                y = y * 1.001 if i % 2 else y + 0.0
        tape.gradient(y, x)
    path = folder / f"chain{n}.html"
    ad.viz.animate(tr).save(path)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chain", default="250,1000,2000", help="comma-separated op counts")
    ap.add_argument("--repeat", type=int, default=3, help="End/Home round trips per size")
    args = ap.parse_args(argv)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("needs playwright (the dev extra) and Chromium at /usr/bin/chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 800})
        print(f"{'ops':>6} {'steps':>6} {'HTML MB':>8} {'End ms (median, max)':>22} {'Home ms':>8}")
        for n in (int(v) for v in args.chain.split(",")):
            path = chain_page(n, pathlib.Path(tmp))
            page.goto(path.as_uri())
            page.wait_for_selector(".adv-host[data-ready='1']", timeout=60_000)
            root = page.locator(".adv-animate")
            ends, homes = [], []
            for _ in range(args.repeat):
                root.press("End")
                ends.append(float(root.get_attribute("data-draw-ms")))
                root.press("Home")
                homes.append(float(root.get_attribute("data-draw-ms")))
            steps = page.evaluate("document.querySelector('.adv-counter').textContent")
            print(f"{n:>6} {steps.split('/')[-1].strip():>6} {path.stat().st_size / 1e6:>8.2f} "
                  f"{statistics.median(ends):>12.1f}, {max(ends):>6.1f} {statistics.median(homes):>8.1f}")
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
