"""Screenshots of a running app: the README's pictures, and views to look at as a projector would.

    python app.py &                       # or any running instance
    python scripts/screenshots.py --readme                   # docs/screenshots/<tab>.png
    python scripts/screenshots.py --out test-artifacts/views  # the projector views below

Opens views through URL parameters (the same links a lecturer puts on a slide), waits
until plotly has drawn, and saves <name>.png (full page).

Timing figures (the complexity tab) are only as good as the machine was quiet: the sweep
measures a dense matmul rate beside its timings and prints it in the figure. If that rate
is below half the quiet rate (--quiet-gflops, this machine's idle rate), or the figure
says its measurement was disturbed, the timings are misleading, so the script refuses to
write the picture and exits with status 2. The sweep a link starts runs while the browser
is still busy drawing the page, so timed views run it once more after the page is idle.
Take README pictures on a quiet machine.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import urlencode

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
QUIET_GFLOPS = 150.0      # dense float32 matmul on the 2-core reference machine when idle (100-200)

LONG_TEXT = ("In 1964 Nadaraya and Watson proposed a kernel estimator that weights each sample by its similarity "
             "to the query point, and sixty years later the Transformer computes exactly that average for every "
             "token in the sequence, which is why its cost grows with the square of the length.")

# name -> (query parameters, the plot to wait for, viewport); "timed" views carry a matmul rate.
README = {
    "maps": ({"tab": "maps"}, "#maps-plot", (1600, 1000)),
    "quality": ({"tab": "quality"}, "#quality-overview", (1600, 1000)),
    "state": ({"tab": "state", "text": LONG_TEXT, "t": 30}, "#state-curves", (1600, 1000)),
    "complexity": ({"tab": "complexity", "nmin": 512, "nmax": 8192, "points": 5, "ccausal": 1}, "#cx-plot",
                   (1600, 1000)),
    # The learn tab draws once trained: the picture trains one head briefly, then runs the hybrid.
    "learn": ({"tab": "learn", "steps": 100, "hmode": "chosen layers", "hlayers": "2,3"}, "#learn-loss",
              (1600, 1000)),
}
# view -> the buttons to press, in order, each followed by the plot it fills
ACTIONS = {"learn": (("#learn-train", "#learn-comparison"), ("#hybrid-run", "#hybrid-cosine"))}
VIEWS = {
    "maps-64-tokens": ({"tab": "maps", "src": "text", "text": LONG_TEXT, "layer": 2, "head": 3}, "#maps-plot",
                       (1600, 1000)),
    "maps-random-1024": ({"tab": "maps", "src": "random", "preset": "local", "n": 1024, "d": 32, "layer": 0,
                          "head": 0}, "#maps-plot", (1600, 1000)),
    "maps-presentation-720p": ({"tab": "maps", "present": 1, "maps": "softmax,elu+1,FAVOR+ (orthogonal),Taylor-2"},
                               "#maps-plot", (1280, 720)),
    "state-presentation-720p": ({"tab": "state", "present": 1, "text": LONG_TEXT, "t": 30}, "#state-step",
                                (1280, 720)),
    "quality-presentation-1080p": ({"tab": "quality", "src": "random", "preset": "gaussian", "n": 64, "d": 16,
                                    "temp": 2, "layer": 0, "head": 0, "present": 1}, "#quality-plot", (1920, 1080)),
}
TIMED = {"complexity": "#cx-run"}     # timed view -> the button that reruns its sweep
RATE = re.compile(r"dense matmul in the same run: ([0-9.]+) GFLOP/s")


def figure_title(page, plot: str) -> str:
    return page.evaluate(f"""() => {{ const g = document.querySelector('{plot} .js-plotly-plot');
        if (!g || !g.layout || !g.layout.title) return '';
        return (g.layout.title.text || '') + ' ' + ((g.layout.title.subtitle || {{}}).text || ''); }}""")


def measured_rate(title: str) -> float | None:
    """The matmul rate the figure says was measured beside its timings."""
    found = RATE.search(title.replace("<br>", " "))
    return float(found.group(1)) if found else None


def quiet_enough(rate: float | None, quiet: float) -> bool:
    return rate is not None and rate >= quiet / 2


def timings_usable(title: str, quiet: float) -> bool:
    """A timed figure goes into a picture only from a quiet machine and an undisturbed run."""
    return quiet_enough(measured_rate(title), quiet) and "disturbed" not in title.lower()


def rerun_when_idle(page, plot: str, button: str) -> None:
    """Run the view's sweep again now that the page has drawn, and wait for its new figure."""
    before = figure_title(page, plot)
    page.click(button)
    page.wait_for_function(
        f"""(old) => {{ const g = document.querySelector('{plot} .js-plotly-plot');
            const t = g && g.layout && g.layout.title; if (!t) return false;
            return (t.text || '') + ' ' + ((t.subtitle || {{}}).text || '') !== old; }}""",
        arg=before, timeout=300_000)
    page.wait_for_timeout(2000)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860/")
    parser.add_argument("--out", default=None, help="folder (default: docs/screenshots with --readme, "
                        "else test-artifacts/views)")
    parser.add_argument("--readme", action="store_true", help="the README's pictures, one per tab")
    parser.add_argument("--only", nargs="*", help="names of views to take (default: all)")
    parser.add_argument("--quiet-gflops", type=float, default=QUIET_GFLOPS,
                        help="this machine's dense matmul rate when idle; timing pictures need half of it")
    args = parser.parse_args(argv)
    views = README if args.readme else VIEWS
    out = Path(args.out or ("docs/screenshots" if args.readme else "test-artifacts/views"))
    out.mkdir(parents=True, exist_ok=True)

    refused = []
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for name, (params, plot, (width, height)) in views.items():
            if args.only and name not in args.only:
                continue
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(args.url.rstrip("/") + "/?" + urlencode(params))
            if name not in ACTIONS:
                page.wait_for_selector(f"{plot} .js-plotly-plot .main-svg", timeout=300_000)
            page.wait_for_timeout(2000)
            for button, filled in ACTIONS.get(name, ()):
                page.click(button)
                page.wait_for_selector(f"{filled} .js-plotly-plot .main-svg", timeout=600_000)
                page.wait_for_timeout(2000)
            if name in TIMED:
                rerun_when_idle(page, plot, TIMED[name])
                title = figure_title(page, plot)
                rate = measured_rate(title)
                if not timings_usable(title, args.quiet_gflops):
                    print(f"refused {name}: dense matmul measured {rate} GFLOP/s beside the timings (quiet "
                          f"{args.quiet_gflops:.0f}), or the figure says the measurement was disturbed: "
                          f"the machine is busy. The figure says: {re.sub('<[^>]+>', ' ', title)}", file=sys.stderr)
                    refused.append(name)
                    page.close()
                    continue
                print(f"{name}: dense matmul {rate:.0f} GFLOP/s beside the timings (quiet {args.quiet_gflops:.0f})")
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            print(out / f"{name}.png")
            page.close()
        browser.close()
    return 2 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
