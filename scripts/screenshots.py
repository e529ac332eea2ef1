"""Every screenshot the docs show, regenerated, then copied into docs/ on purpose.

    python scripts/screenshots.py                # docs/screenshots/<tab>.png and docs/deck/*.png
    python scripts/screenshots.py --tabs         # only the tab pictures (docs/screenshots/<tab>.png)
    python scripts/screenshots.py --deck         # only the deck's pictures (docs/deck/*.png)
    python scripts/screenshots.py --url http://127.0.0.1:7860/   # against a running app
    python scripts/screenshots.py --views        # projector views in test-artifacts/views, docs untouched

Every picture is first written under build/screenshots/ (ignored by git) and copied into
docs/ only when it was taken whole: the test suite writes to the same ignored folder and
never into docs/.

Tab pictures: the script starts `python app.py` on a free port (unless --url names a running
app) and waits until its start-up warm-up is over, opens each view through URL parameters (the same links a lecturer puts on a slide),
presses the buttons a view needs, waits until plotly has drawn, and saves a full-page PNG.

Deck pictures: the deck walk (tests/browser/test_deck_browser.py), run with EXPLORER_DECK_SHOTS=1, saves a palette PNG of every build
at every window size it checks, and of each tool tab on a projector, into
build/screenshots/deck/. The script runs that walk and, if it passed, makes docs/deck/ the
same set of files (a build that no longer exists loses its picture).

Timing figures (the complexity tab) are only as good as the machine was quiet: the sweep
measures a dense matmul rate beside its timings and prints it in the figure. If that rate
is below half the quiet rate (--quiet-gflops, this machine's idle rate), or the figure
says its measurement was disturbed, the timings are misleading, so the script refuses to
copy the picture and exits with status 2. The sweep a link starts runs while the browser
is still busy drawing the page, so timed views run it once more after the page is idle.
Take the docs' pictures on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "screenshots"          # ignored by git: where every picture is taken
DOCS = ROOT / "docs"
TAB_PICTURES = DOCS / "screenshots"
DECK_PICTURES = DOCS / "deck"
DECK_WALK = ROOT / "tests" / "browser" / "test_deck_browser.py"
DECK_SHOTS = BUILD / "deck"                      # where the deck walk saves its pictures

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
QUIET_GFLOPS = 150.0      # dense float32 matmul on the 2-core reference machine when idle (100-200)
APP_START_TIMEOUT_S = 180

LONG_TEXT = ("In 1964 Nadaraya and Watson proposed a kernel estimator that weights each sample by its similarity "
             "to the query point, and sixty years later the Transformer computes exactly that average for every "
             "token in the sequence, which is why its cost grows with the square of the length.")

# name -> (query parameters, the plot to wait for, viewport); "timed" views carry a matmul rate.
TABS = {
    "maps": ({"tab": "maps"}, "#maps-plot", (1600, 1000)),
    "quality": ({"tab": "quality"}, "#quality-overview", (1600, 1000)),
    "state": ({"tab": "state", "text": LONG_TEXT, "t": 30}, "#state-curves", (1600, 1000)),
    "complexity": ({"tab": "complexity", "nmin": 512, "nmax": 8192, "points": 5, "ccausal": 1}, "#cx-plot",
                   (1600, 1000)),
    # The learn tab draws once trained: the picture trains LUNA on one head briefly, then runs the hybrid.
    "learn": ({"tab": "learn", "lkind": "luna", "steps": 100, "hmode": "chosen layers", "hlayers": "2,3"},
              "#learn-loss", (1600, 1000)),
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


# ------------------------------------------------------------------------------ the app

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_warm_up(pid: int, quiet_s: float = 3.0, limit_s: float = 240.0) -> None:
    """Until the app's start-up warm-up (every chapter computed in the background, about a
    minute of both cores) is over: its CPU time grows by under 5 % of one core for
    ``quiet_s``. A timed picture taken during it reads as a busy machine and is refused."""
    deadline = time.time() + limit_s
    before = cpu_seconds(pid)
    while time.time() < deadline:
        time.sleep(quiet_s)
        now = cpu_seconds(pid)
        if now - before < 0.05 * quiet_s:
            return
        before = now
    print(f"warning: the app was still busy {limit_s:.0f} s after it answered", file=sys.stderr)


@contextmanager
def running_app(url: str | None):
    """``url`` if given; else ``python app.py`` on a free port until the pictures are taken."""
    if url:
        yield url
        return
    port = free_port()
    BUILD.mkdir(parents=True, exist_ok=True)
    log_path = BUILD / "app.log"
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.time() + APP_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"app.py exited with {proc.returncode}; its log: {log_path}")
            try:
                with urllib.request.urlopen(url, timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"app.py did not answer within {APP_START_TIMEOUT_S} s; its log: {log_path}")
            time.sleep(0.5)
        wait_for_warm_up(proc.pid)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --------------------------------------------------------------------------- pictures

def take(views: dict, url: str, out: Path, only, quiet_gflops: float) -> tuple[list[Path], list[str]]:
    """Full-page PNGs of ``views`` under ``out``: (the pictures taken, the names refused)."""
    out.mkdir(parents=True, exist_ok=True)
    taken, refused = [], []
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for name, (params, plot, (width, height)) in views.items():
            if only and name not in only:
                continue
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(url.rstrip("/") + "/?" + urlencode(params))
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
                if not timings_usable(title, quiet_gflops):
                    print(f"refused {name}: dense matmul measured {rate} GFLOP/s beside the timings (quiet "
                          f"{quiet_gflops:.0f}), or the figure says the measurement was disturbed: "
                          f"the machine is busy. The figure says: {re.sub('<[^>]+>', ' ', title)}", file=sys.stderr)
                    refused.append(name)
                    page.close()
                    continue
                print(f"{name}: dense matmul {rate:.0f} GFLOP/s beside the timings (quiet {quiet_gflops:.0f})")
            page.evaluate("() => window.scrollTo(0, 0)")
            path = out / f"{name}.png"
            page.screenshot(path=str(path), full_page=True)
            print(path)
            taken.append(path)
            page.close()
        browser.close()
    return taken, refused


def copy_into(pictures: list[Path], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path in pictures:
        shutil.copyfile(path, folder / path.name)
        print(f"copied {path.relative_to(ROOT)} -> {(folder / path.name).relative_to(ROOT)}")


def walk_the_deck() -> list[Path] | None:
    """Run the deck walk into a clean build/screenshots/deck/: its pictures, or None if it failed."""
    shutil.rmtree(DECK_SHOTS, ignore_errors=True)
    # CI: a missing browser fails instead of skipping; the walk takes pictures only when asked.
    env = dict(os.environ, CI="true", EXPLORER_DECK_SHOTS="1")
    done = subprocess.run([sys.executable, "-m", "pytest", str(DECK_WALK.relative_to(ROOT)), "-q",
                           "-k", "walk_the_deck or tool_tabs"], cwd=ROOT, env=env)
    pictures = sorted(DECK_SHOTS.glob("*.png"))
    if done.returncode != 0 or not pictures:
        print(f"the deck walk failed (status {done.returncode}, {len(pictures)} pictures): docs/deck/ left as it was",
              file=sys.stderr)
        return None
    return pictures


def mirror_into(pictures: list[Path], folder: Path) -> None:
    """``folder`` holds exactly ``pictures``: stale ones go, the rest are copied over."""
    names = {p.name for p in pictures}
    for old in folder.glob("*.png"):
        if old.name not in names:
            old.unlink()
            print(f"removed {old.relative_to(ROOT)} (no such build any more)")
    copy_into(pictures, folder)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None, help="a running app (default: start python app.py on a free port)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--tabs", action="store_true", help="only the tab pictures, docs/screenshots/<tab>.png")
    what.add_argument("--deck", action="store_true", help="only the deck's pictures, docs/deck/*.png")
    what.add_argument("--views", action="store_true", help="projector views into --out; docs/ untouched")
    parser.add_argument("--out", default="test-artifacts/views", help="folder of --views")
    parser.add_argument("--only", nargs="*", help="names of tab pictures or views to take (default: all)")
    parser.add_argument("--quiet-gflops", type=float, default=QUIET_GFLOPS,
                        help="this machine's dense matmul rate when idle; timing pictures need half of it")
    args = parser.parse_args(argv)

    failed = False
    if args.views:
        with running_app(args.url) as url:
            _, refused = take(VIEWS, url, ROOT / args.out, args.only, args.quiet_gflops)
        return 2 if refused else 0
    if not args.deck:
        with running_app(args.url) as url:
            taken, refused = take(TABS, url, BUILD / "tabs", args.only, args.quiet_gflops)
        copy_into(taken, TAB_PICTURES)
        failed |= bool(refused)
    if not args.tabs:
        pictures = walk_the_deck()
        if pictures is None:
            failed = True
        else:
            mirror_into(pictures, DECK_PICTURES)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
