"""How fast the lecture responds on this machine, in the UI's own handlers.

    python scripts/bench_lecture.py [--repeats 7]

For a 64-token text (the default sentence cut to 64 tokens), per chapter, p50 of:

- figures update: what a control change costs (another head or seed, new each run, so no
  cache answers it): the chapter's view computed on the text already read, its figures
  drawn and serialised to JSON as gradio sends them. Target ≤ 0.5 s.
- new text: the same after the speaker changes the text (the model reads it first).
- switch: what the → key costs once the chapter was seen, or prefetched (the tab computes
  and draws the next chapter in the background while the speaker talks): the new screen
  (claim, selector, controls) plus its cached figures, serialised. Target ≤ 0.3 s.
- switch, not prefetched: the same when → comes before the prefetch finished and the
  figures are drawn from the computed view on the spot. (Before that, the first visit of a
  chapter costs its figures update.)

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

TOKENS = 64
FIGURES_TARGET_S, SWITCH_TARGET_S = 0.5, 0.3


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


def text_of(tokens: int, variant: int = 0) -> str:
    """The lecture's default sentence, repeated and cut to ``tokens`` tokens (with [CLS]/[SEP])."""
    from explorer.lecture.text import DEFAULT_TEXT
    from explorer.views import load_sample

    words = (f"Variant {variant}: " + (DEFAULT_TEXT + " ") * 8).split()
    lo, hi = 1, len(words)
    while lo < hi:                                  # the most words that stay within the budget
        mid = (lo + hi + 1) // 2
        if load_sample("text", text=" ".join(words[:mid])).n_tokens <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def changed_control(ch: int):
    """A control change that keeps the work the same size, new on every run (so no cache
    answers it): another head, else another seed, else another head dimension."""
    from explorer.views.lecture import chapter_controls

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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)

    from explorer.figures.lecture import chapter_figures
    from explorer.ui import lecture_tab
    from explorer.views import load_sample
    from explorer.views.lecture import CHAPTERS, chapter_view

    text = text_of(TOKENS)
    n_tokens = load_sample("text", text=text).n_tokens
    fresh = [text_of(TOKENS, variant=v + 1) for v in range(args.repeats)]

    def serialise(view, lang="en"):
        return [f.to_json() for f in chapter_figures(view, lang=lang, style=True)]

    rate_before = matmul_gflops()
    print(f"lecture benchmark: {n_tokens}-token text, p50 of {args.repeats} runs, presentation style, "
          f"dense matmul {rate_before:.0f} GFLOP/s")
    print(f"{'chapter':>7} | {'figures update':>14} | {'new text':>9} | {'switch':>8} | "
          f"{'switch, not prefetched':>22} | figures")
    rows = []
    for ch in CHAPTERS:
        chapter_view(ch, text=text)                  # warm: the text read, caches filled
        vary = changed_control(ch)
        update = p50(lambda i: serialise(chapter_view(ch, text=text, **vary(i))), args.repeats)
        new = p50(lambda i: serialise(chapter_view(ch, text=fresh[i])), args.repeats)
        cached = chapter_view(ch, text=text)
        key = lecture_tab.view_key(ch, None, None, dict(cached.controls))

        def switch_cold(_i):                         # → before the prefetch finished: figures drawn now
            lecture_tab.screen(ch, "en")
            serialise(cached)

        def switch(_i):                              # → to a chapter seen or prefetched: figures cached
            lecture_tab.screen(ch, "en")
            [f.to_json() for f in lecture_tab.chapter_figures(cached, "en", True, key)]
        cold = p50(switch_cold, args.repeats)
        sw = p50(switch, args.repeats)
        count = len(chapter_figures(cached, lang="en"))
        rows.append((ch, update, new, sw, cold))
        ok = "✓" if update <= FIGURES_TARGET_S and sw <= SWITCH_TARGET_S else "✗"
        print(f"{ch:>7} | {update:>12.3f} s | {new:>7.3f} s | {sw:>6.3f} s | {cold:>20.3f} s | {count} {ok}")
    rate_after = matmul_gflops()
    worst_update = max(r[1] for r in rows)
    worst_switch = max(r[3] for r in rows)
    print(f"worst: figures update {worst_update:.3f} s (target {FIGURES_TARGET_S} s), "
          f"switch {worst_switch:.3f} s (target {SWITCH_TARGET_S} s); "
          f"dense matmul {rate_before:.0f} → {rate_after:.0f} GFLOP/s over the run")


if __name__ == "__main__":
    main()
