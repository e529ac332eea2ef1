"""How fast the lecture deck responds on this machine, in the UI's own handlers.

    python scripts/bench_lecture.py [--repeats 5]

Per chapter, on the chapter's own default text:

- address, cold: a chapter opened by its address before anything was computed (the text
  already read by the model): its view computed, its figures drawn and serialised to JSON
  as gradio sends them.
- address, warm: the same once the app's start-up warm-up (``lecture_warm.warm``, run in
  the background when the server starts) has computed every chapter at its defaults: the
  screen plus the cached figures, serialised. Target ≤ 3 s.
- next build, prefetched: → to the next chapter once the tab prefetched it (it computes and
  draws the chapter after the one on screen while the speaker talks): the screen plus the
  cached figures. Builds inside a chapter need no server at all (all of a chapter's figures
  arrive with one draw; the browser shows the next one). Target ≤ 0.3 s. In the browser the
  prefetch also hands the next chapter's first build to the page, which draws it out of
  sight and shows it on → while the server switches chapters.
- next build, cold (p50): → to a chapter nobody computed with these controls (another head
  or seed, new on every run): view computed and figures drawn on the spot. Target ≤ 1.5 s.

With ``--url http://127.0.0.1:7860/`` (a running app, warmed up), the same as the audience
sees it, in Chromium at 1280×720 in presentation mode: each chapter opened by its address
until its first figure is drawn; then the deck walked with PageDown, a pause between presses
(the speaker talks, the prefetch runs): the next build inside a chapter, and the first build
of the next chapter, both when the page's held copy is on screen and when the server's slide
is live; then each chapter opened by its address in a fresh browser (target ≤ 5 s) and its
"Go deeper" link opened in that browser until the full tab's first figure is drawn (target
≤ 3 s).

Beside them, the dense float32 matmul rate measured in the same run: on a shared machine
read the times against it (quiet ≈ 100-200 GFLOP/s here).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

ADDRESS_TARGET_S, PREFETCHED_TARGET_S, COLD_TARGET_S, FRESH_TARGET_S = 3.0, 0.3, 1.5, 5.0


def matmul_gflops(size: int = 1024, repeats: int = 5) -> float:
    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best / 1e9


def changed_control(ch: int):
    """A control change that keeps the work the same size, new on every run (so no cache
    answers it): another head, else another seed, else another head dimension."""
    from explorer.lecture.view import chapter_controls

    specs = {spec.name: spec for spec in chapter_controls(ch)}
    for name in ("head", "seed"):
        if name in specs:
            spec = specs[name]
            span = int(spec.max - spec.min) + 1
            return lambda i: {name: int(spec.min + (int(spec.default) - spec.min + i + 1) % span)}
    spec = next(s for s in specs.values() if s.kind == "int")
    step = int(spec.step or 1)
    return lambda i: {spec.name: int(max(spec.min, spec.default - step * (i + 1)))}


def p50(fn, repeats: int) -> float:
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


STATE_JS = """() => { const el = document.querySelector('#deck-info [data-ch]');
  const deck = document.getElementById('lecture');
  return el && el.dataset.builds !== '' && deck.dataset.step !== undefined
    ? [Number(el.dataset.ch), Number(deck.dataset.step), Number(el.dataset.builds)] : null; }"""
DRAWN_JS = """([ch, step]) => { const s = (%s)(); if (!s || s[0] !== ch || s[1] !== step) { return false; }
  const g = document.querySelector('#lecture-plot-' + step + ' .js-plotly-plot');
  return !!g && !!g.querySelector('.main-svg'); }""" % STATE_JS


# Before a press: when the held next chapter (assets/deck.js, preload) is on screen, in ms
# from here: the class that shows it set, then two frames (it has been painted).
HELD_JS = """() => { window.__heldShown = null; const t0 = performance.now();
  const seen = new MutationObserver(() => {
    if (!document.body.classList.contains('deck-previewing')) { return; }
    seen.disconnect();
    requestAnimationFrame(() => requestAnimationFrame(() => { window.__heldShown = performance.now() - t0; }));
  });
  seen.observe(document.body, { attributes: true, attributeFilter: ['class'] }); }"""


# A figure of another tab drawn and on screen: what "Go deeper" opens.
TARGET_DRAWN_JS = """() => { for (const el of document.querySelectorAll('.js-plotly-plot')) {
  if (el.closest('#lecture') || el.offsetParent === null) { continue; }
  if (el.data && el.data.length && el.querySelector('.main-svg')) { return true; } } return false; }"""


def go_deeper(chromium, base: str, chapters) -> tuple[list, list]:
    """Each chapter opened by its address in a fresh browser (a new context: nothing cached),
    then its "Go deeper" link opened in a new page of that browser (it has opened the app
    before), each until its first figure is drawn: (fresh seconds, go-deeper seconds)."""
    fresh, deeper = [], []
    for ch in chapters:
        context = chromium.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.set_default_timeout(120_000)
        start = time.perf_counter()
        page.goto(f"{base}&ch={ch}")
        page.wait_for_function(DRAWN_JS, arg=[ch, 0])
        fresh.append(time.perf_counter() - start)
        page.wait_for_function("() => !!document.querySelector('#lecture-deeper-link')")
        href = page.get_attribute("#lecture-deeper-link", "href")
        other = context.new_page()
        other.set_default_timeout(120_000)
        start = time.perf_counter()
        other.goto(base.split("?")[0] + href)
        other.wait_for_function(TARGET_DRAWN_JS, polling=50)
        deeper.append(time.perf_counter() - start)
        context.close()
    return fresh, deeper


def browser(url: str, pause_s: float = 2.5):
    """The deck in Chromium (Debian's, through playwright), as the audience sees it."""
    from playwright.sync_api import sync_playwright

    from explorer.lecture.view import CHAPTERS

    base = url.rstrip("/") + "/?tab=lecture&present=1&lang=en"
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium",
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = chromium.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(120_000)
        opened = []
        for ch in CHAPTERS:
            start = time.perf_counter()
            page.goto(f"{base}&ch={ch}")
            page.wait_for_function(DRAWN_JS, arg=[ch, 0])
            opened.append(time.perf_counter() - start)
        page.goto(f"{base}&ch={CHAPTERS[0]}")
        page.wait_for_function(DRAWN_JS, arg=[CHAPTERS[0], 0])
        page.locator("#lecture-claim").click()
        within, across, held = [], [], []
        while True:
            ch, step, builds = page.evaluate(STATE_JS)
            if ch == CHAPTERS[-1] and step == builds - 1:
                break
            page.wait_for_timeout(pause_s * 1000)
            target = [ch, step + 1] if step + 1 < builds else [ch + 1, 0]
            page.evaluate(HELD_JS)
            start = time.perf_counter()
            page.keyboard.press("PageDown")
            page.wait_for_function(DRAWN_JS, arg=target, polling=20)
            (across if target[1] == 0 else within).append(time.perf_counter() - start)
            if target[1] == 0:
                shown = page.evaluate("window.__heldShown")
                held.append(None if shown is None else shown / 1000)
                if shown is None:
                    print(f"  chapter {ch} → {ch + 1}: the page held nothing yet (its prefetch had not come back)")
        fresh, deeper = go_deeper(chromium, base, CHAPTERS)
        chromium.close()
    shown = [x for x in held if x is not None]
    print("in Chromium, 1280x720, each chapter opened by its address: "
          + ", ".join(f"{ch} {s:.2f} s" for ch, s in zip(CHAPTERS, opened)))
    print(f"chapter opened by its address {statistics.median(opened):.2f} s p50 "
          f"(max {max(opened):.2f} s; target {ADDRESS_TARGET_S} s); next build in a chapter "
          f"{statistics.median(within):.3f} s p50 (max {max(within):.3f} s)")
    print(f"next chapter, prefetched: on screen (its first build, held by the page) "
          + (f"{statistics.median(shown):.3f} s p50 (max {max(shown):.3f} s; {len(shown)} of {len(held)} held)"
             if shown else f"never held (0 of {len(held)})")
          + f"; target {PREFETCHED_TARGET_S} s. Live (the server's slide, controls and all) "
          f"{statistics.median(across):.2f} s p50 (max {max(across):.2f} s)")
    print("chapter opened by its address in a fresh browser: " + ", ".join(f"{ch} {s:.2f} s" for ch, s in
                                                                        zip(CHAPTERS, fresh))
          + f"; p50 {statistics.median(fresh):.2f} s (target {FRESH_TARGET_S} s)")
    print("Go deeper, the full tab drawn: " + ", ".join(f"{ch} {s:.2f} s" for ch, s in zip(CHAPTERS, deeper))
          + f"; p50 {statistics.median(deeper):.2f} s, max {max(deeper):.2f} s (target {ADDRESS_TARGET_S} s)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--url", help="a running app: measure the deck in Chromium instead of the handlers")
    args = parser.parse_args(argv)
    if args.url:
        rate = matmul_gflops()
        browser(args.url)
        print(f"dense matmul {rate:.0f} → {matmul_gflops():.0f} GFLOP/s over the run")
        return

    from explorer.ui import common, lecture_handlers, lecture_warm
    from explorer.lecture.view import CHAPTERS

    common.import_engine()
    from explorer.sources.text import preload
    preload()

    def send(ch, view, key=None):
        """What the browser receives for a chapter: the screen, then its figures as JSON."""
        lecture_handlers.screen(ch, "en")
        return [f.to_json() for f in lecture_handlers.chapter_figures(view, "en", True, key)]

    rate_before = matmul_gflops()
    print(f"lecture deck benchmark: p50 of {args.repeats} runs, presentation style, English, "
          f"dense matmul {rate_before:.0f} GFLOP/s")
    cold_address = {}
    for ch in CHAPTERS:                      # first, before any warm-up: each chapter's first draw
        controls = lecture_handlers.default_controls(ch)
        start = time.perf_counter()
        view = lecture_handlers.compute(ch, None, None, controls)
        send(ch, view)
        cold_address[ch] = time.perf_counter() - start
    start = time.perf_counter()
    lecture_warm.warm()                      # what app.py runs in the background at start
    warm_s = time.perf_counter() - start
    print(f"start-up warm-up of all chapters (both languages, both styles, from the caches just filled): "
          f"{warm_s:.2f} s")
    print(f"{'chapter':>7} | {'address, cold':>13} | {'address, warm':>13} | {'next, prefetched':>16} | "
          f"{'next, cold p50':>14} | builds")
    rows = []
    for ch in CHAPTERS:
        controls = lecture_handlers.default_controls(ch)
        key = lecture_handlers.view_key(ch, None, None, controls)
        view = lecture_handlers.compute(ch, None, None, controls)
        warm = p50(lambda i: send(ch, lecture_handlers.compute(ch, None, None, controls), key), args.repeats)
        prefetched = warm                    # the same path: → finds the chapter in the caches
        vary = changed_control(ch)

        def cold(i):
            changed = dict(controls, **vary(i))
            send(ch, lecture_handlers.compute(ch, None, None, changed))
        cold_p50 = p50(cold, args.repeats)
        builds = len(lecture_handlers.chapter_figures(view, "en", True, key))
        ok = ("✓" if warm <= ADDRESS_TARGET_S and prefetched <= PREFETCHED_TARGET_S and cold_p50 <= COLD_TARGET_S
              else "✗")
        rows.append((ch, cold_address[ch], warm, prefetched, cold_p50))
        print(f"{ch:>7} | {cold_address[ch]:>11.3f} s | {warm:>11.3f} s | {prefetched:>14.3f} s | "
              f"{cold_p50:>12.3f} s | {builds} {ok}")
    rate_after = matmul_gflops()
    print(f"worst: address warm {max(r[2] for r in rows):.3f} s (target {ADDRESS_TARGET_S} s), next prefetched "
          f"{max(r[3] for r in rows):.3f} s (target {PREFETCHED_TARGET_S} s), next cold p50 "
          f"{max(r[4] for r in rows):.3f} s (target {COLD_TARGET_S} s); address cold worst "
          f"{max(r[1] for r in rows):.3f} s; dense matmul {rate_before:.0f} → {rate_after:.0f} GFLOP/s over the run")


if __name__ == "__main__":
    main()
