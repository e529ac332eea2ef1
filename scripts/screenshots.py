"""Screenshots of a running app for the README and for looking at figures as a projector would.

    python app.py &                       # or any running instance
    python scripts/screenshots.py --url http://127.0.0.1:7860/ --out docs/screenshots

Opens views through URL parameters (the same links a lecturer puts on a slide), waits
until plotly has drawn, and saves <name>.png (1600 x 1000 viewport, full page).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlencode

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

LONG_TEXT = ("In 1964 Nadaraya and Watson proposed a kernel estimator that weights each sample by its similarity "
             "to the query point, and sixty years later the Transformer computes exactly that average for every "
             "token in the sequence, which is why its cost grows with the square of the length.")

VIEWS = {
    "maps-64-tokens": ({"tab": "maps", "src": "text", "text": LONG_TEXT, "layer": 2, "head": 3}, "#maps-plot"),
    "maps-random-1024": ({"tab": "maps", "src": "random", "preset": "local", "n": 1024, "d": 32, "layer": 0,
                          "head": 0}, "#maps-plot"),
    "maps-presentation": ({"tab": "maps", "present": 1, "maps": "softmax,elu+1,FAVOR+ (orthogonal),Taylor-2"},
                          "#maps-plot"),
    "state-long": ({"tab": "state", "src": "text", "text": LONG_TEXT, "layer": 2, "head": 3, "t": 30}, "#state-step"),
    "quality-presentation": ({"tab": "quality", "src": "random", "preset": "gaussian", "n": 64, "d": 16,
                              "temp": 2, "layer": 0, "head": 0, "present": 1}, "#quality-plot"),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860/")
    parser.add_argument("--out", default="test-artifacts/views")
    parser.add_argument("--only", nargs="*", help="names of views to take (default: all)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        for name, (params, plot) in VIEWS.items():
            if args.only and name not in args.only:
                continue
            page.goto(args.url.rstrip("/") + "/?" + urlencode(params))
            page.wait_for_selector(f"{plot} .js-plotly-plot .main-svg", timeout=180_000)
            page.wait_for_timeout(1500)
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            print(out / f"{name}.png")
        browser.close()


if __name__ == "__main__":
    main()
