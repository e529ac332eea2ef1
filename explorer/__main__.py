"""Command line: ``python -m explorer <command>``.

Each command is a small function with its own argparse subparser, registered in
``COMMANDS``; with no command the help is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

# The CLI's default grid: powers of two for the slope fit, plus one long N for the chunked
# form's memory target. The slow forms stop at the end of the fit range: past it they only
# cost minutes (SDPA, the recurrent loop) or gigabytes (naive softmax, cumsum) and no target
# needs them.
SLOPE_NS = (1024, 2048, 4096, 8192, 16384)
LONG_N = 65536
SLOW_METHODS = ("softmax_naive", "sdpa", "linear_recurrent", "linear_cumsum")


def _add_bench(sub) -> None:
    from .measure import bench

    p = sub.add_parser(
        "bench", help="time and memory of every attention form against N",
        description="Median time, spread, extra peak memory, GFLOP/s (and its share of a dense "
                    "matmul measured in the same run), log-log slopes, the SDPA/linear "
                    "crossover and the performance targets.")
    p.add_argument("--ns", type=int, nargs="+", metavar="N",
                   help=f"sequence lengths (default: {' '.join(map(str, SLOPE_NS))} and {LONG_N})")
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--feature-map", default="elu1")
    p.add_argument("--feature-dim", type=int, default=None, help="features m (random-feature maps)")
    p.add_argument("--causal", action=argparse.BooleanOptionalAction, default=True,
                   help="causal masking for softmax and chunked; recurrent and cumsum need it "
                        "(linear_parallel is always non-causal). Default: causal")
    p.add_argument("--methods", nargs="+", choices=bench.METHODS, default=list(bench.METHODS))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--device", default=None,
                   help="cpu or cuda (an error if CUDA is unavailable); default cpu, and for --peers "
                        "cuda where available")
    p.add_argument("--peers", action="store_true",
                   help="instead of the sweep: ours beside performer-pytorch and flash-linear-attention "
                        "at one N (the first of --ns, default 16384) in interleaved rounds, with ratios; "
                        "needs those libraries importable (not dependencies: says so and exits 0 without)")
    p.add_argument("--rounds", type=int, default=9, help="interleaved rounds for --peers (default 9)")
    p.add_argument("--slow-max-n", type=int, default=SLOPE_NS[-1],
                   help="largest N for the quadratic, recurrent and cumsum forms; only "
                        "linear_parallel and linear_chunked go beyond (default %(default)s)")
    p.add_argument("--memory-budget-gb", type=float, default=bench.DEFAULT_MEMORY_BUDGET / 2**30,
                   help="skip runs whose estimated memory exceeds this (default %(default)s)")
    p.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                   help="skip runs predicted to overrun this total")
    p.add_argument("--no-memory", action="store_true", help="do not measure peak memory")
    p.add_argument("--json", metavar="PATH", help="write the result (rows, notes, targets) as JSON")
    p.add_argument("--csv", metavar="PATH", help="write the rows as CSV")
    p.add_argument("--no-sources", action="store_true", help="skip the text-source timing")
    p.set_defaults(func=run_bench)


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:6.1%}] {message}", file=sys.stderr, flush=True)


def run_bench(args) -> int:
    from .measure import bench

    if args.peers:
        return _run_peers(args)
    args.device = args.device or "cpu"
    ns = args.ns or [*SLOPE_NS, LONG_N]
    caps = dict.fromkeys(SLOW_METHODS, args.slow_max_n)
    started = time.perf_counter()
    try:
        result = bench.sweep(
            ns, head_dim=args.head_dim, feature_map=args.feature_map, feature_dim=args.feature_dim,
            methods=args.methods, causal=args.causal, device=args.device, repeats=args.repeats,
            warmup=args.warmup, memory=not args.no_memory,
            memory_budget_bytes=int(args.memory_budget_gb * 2**30), time_budget_s=args.time_budget,
            progress=_progress, max_n=caps)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - started

    print(result.table())
    print()
    # Slopes over the N each method was measured at, up to the slow forms' cap (the long
    # N of the chunked form's memory target stays out of the fit); the label says the range.
    window = (None, args.slow_max_n)
    fits = result.slope_fits(*window)
    spans = {(f["n_min"], f["n_max"]) for f in fits.values()}
    if len(spans) == 1:
        lo, hi = spans.pop()
        print(f"log-log slopes over N = {lo}..{hi}:")
    else:
        print("log-log slopes (each over the N it was measured at):")
    for method, fit in fits.items():
        print(f"  {method:<18} {fit['slope']:5.2f}   N = {fit['n_min']}..{fit['n_max']}, {fit['points']} points")
    if not fits:
        print("  (fewer than two N measured: no slope)")
    print("crossover: " + result.crossover_info("sdpa", "linear_chunked")[1])
    print("crossover: " + result.crossover_info("softmax_naive", "linear_chunked")[1])
    print()
    print("notes:")
    for note in result.notes:
        print(f"  - {note}")
    print()
    goals = bench.targets(result, slope_range=window)
    print("targets (attention):")
    print(bench.format_targets(goals))

    sources = None if args.no_sources else _sources()
    print(f"\nbenchmark wall time: {elapsed:.1f} s")

    data = result.to_dict()
    data["targets"] = goals
    data["sources"] = sources
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=2)
    if args.csv:
        with open(args.csv, "w") as fh:
            fh.write(result.to_csv())
    return 0


def _run_peers(args) -> int:
    from .measure import peers

    try:
        status, text = peers.run(n=args.ns[0] if args.ns else 16384, head_dim=args.head_dim,
                                 rounds=args.rounds, device=args.device)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return status


def _sources() -> dict | None:
    """Time the text source if that module is present; print its numbers and targets."""
    print()
    try:
        from .measure.bench_sources import measure_text_source
    except ImportError as exc:
        print(f"text source benchmark unavailable ({exc})")
        return None
    try:
        numbers = measure_text_source(n_tokens=128, repeats=10)
    except Exception as exc:  # a missing model must not lose the attention numbers above
        print(f"text source benchmark failed: {exc}")
        return {"error": str(exc)}
    print("text source: " + ", ".join(f"{key}={value}" for key, value in numbers.items()))
    print("targets (text source):")
    rows = []
    for key, goal, label in (("first_load_s", 3.0, "first load <= 3 s"),
                             ("from_text_p50_ms", 100.0, "from_text on 128 tokens <= 100 ms")):
        value = numbers.get(key)
        ok = None if value is None else value <= goal
        rows.append({"name": label, "value": None if value is None else f"{value}", "passed": ok})
    from .measure.bench import format_targets
    print(format_targets(rows))
    numbers["targets"] = rows
    return numbers


def _add_lecture(sub) -> None:
    p = sub.add_parser(
        "lecture", help="write the lecture as one self-contained HTML deck (and a PDF)",
        description="Every chapter and build of the lecture as interactive plotly in one HTML file that "
                    "needs no server and no network (plotly.js embedded once), with the claims, the "
                    "speaker's notes (key N) and keyboard navigation; and a PDF beside it with one "
                    "page per build, where playwright and Chromium are installed.")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the deck (default en)")
    p.add_argument("--output", "-o", default="deck.html", metavar="PATH", help="the HTML file (default deck.html)")
    p.add_argument("--text", default=None, help="the text the model reads (default: the lecture's own sentence)")
    p.add_argument("--pdf", default=None, metavar="PATH",
                   help="the PDF (default: the HTML's name with .pdf)")
    p.add_argument("--no-pdf", action="store_true", help="write the HTML only")
    p.set_defaults(func=run_lecture)


def run_lecture(args) -> int:
    from pathlib import Path

    from . import deck_export as export

    started = time.perf_counter()
    try:
        html = export.write_deck(args.output, args.lang, text=args.text, progress=_progress)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"deck: {html} ({html.stat().st_size / 1e6:.1f} MB, {time.perf_counter() - started:.0f} s)")
    if args.no_pdf:
        return 0
    pdf = Path(args.pdf) if args.pdf else html.with_suffix(".pdf")
    why_not = export.write_pdf(html, pdf)
    if why_not:
        print(f"no PDF: {why_not}", file=sys.stderr)
    else:
        print(f"pdf:  {pdf} ({pdf.stat().st_size / 1e6:.1f} MB)")
    return 0


COMMANDS = (_add_bench, _add_lecture)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m explorer",
                                     description="Attention Kernel Explorer: command-line tools.")
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
