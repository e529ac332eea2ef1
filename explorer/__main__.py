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
    p.add_argument("--handout", default=None, metavar="OUT.pdf",
                   help="write a handout instead: a PDF with three builds a page beside their notes")
    p.add_argument("--numbers", default=None, metavar="OUT.md",
                   help="write the numbers page instead: every number of every chapter, labelled, for the "
                        "English and the Chinese sentence (docs/lecture-numbers.md)")
    p.set_defaults(func=run_lecture)


def run_handout(args) -> int:
    """``lecture --handout OUT.pdf``: the builds three a page with their notes (explorer.handout)."""
    from . import handout

    started = time.perf_counter()
    try:
        pages = handout.write_handout(args.handout, args.lang, text=args.text, progress=_progress)
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"handout: {args.handout} ({pages} pages, {time.perf_counter() - started:.0f} s)")
    return 0


def run_lecture(args) -> int:
    from pathlib import Path

    from . import deck_export as export

    # Said before minutes of work, not after: a file the command cannot write.
    targets = [t for t in (args.handout, args.numbers) if t] or \
        [args.output] + ([args.pdf] if args.pdf and not args.no_pdf else [])
    missing = [str(Path(t).parent) for t in targets if not Path(t).parent.is_dir()]
    if missing:
        print(f"error: the folder {missing[0]} does not exist; create it first", file=sys.stderr)
        return 2
    if getattr(args, "handout", None):
        return run_handout(args)
    if getattr(args, "numbers", None):
        from .lecture import numbers_page
        started = time.perf_counter()
        written = numbers_page.write(args.numbers, progress=_progress)
        print(f"numbers: {written} ({time.perf_counter() - started:.0f} s)")
        return 0
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


def _add_probe(sub) -> None:
    p = sub.add_parser(
        "probe", help="every map on every layer and head of a corpus, one tidy table (CSV and Parquet)",
        description="Reads a text file (one text a line) with a model and judges every chosen feature map on "
                    "every chosen layer and head of every text against softmax, with the maps tab's metrics: "
                    "one row per text x layer x head x map in OUT.csv and OUT.parquet, the provenance in "
                    "OUT.json. Resumable: run it again and the texts already done are skipped. With --merge, "
                    "joins shard tables instead.")
    p.add_argument("--texts", metavar="FILE", help="the corpus: one text a line (blank lines are left out)")
    p.add_argument("--model", default=None, help="the model that reads (default: the embedded all-MiniLM-L6-v2)")
    p.add_argument("--maps", nargs="+", default=None, metavar="MAP",
                   help="registry names (elu1 favor_plus taylor2 ...; softmax for the reference's own row) or "
                        "catalogue labels; default: elu1 favor_plus taylor2 cosformer")
    p.add_argument("--layers", nargs="+", default=["all"], metavar="L", help="layer indices, or all (default)")
    p.add_argument("--heads", nargs="+", default=["all"], metavar="H", help="head indices, or all (default)")
    p.add_argument("--causal", action=argparse.BooleanOptionalAction, default=None,
                   help="causal masking; default: as the model computes it")
    p.add_argument("--m", type=int, default=64, help="features of the maps that take m (default 64)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random-feature maps (default 0)")
    p.add_argument("--window", type=int, default=4, help="the sliding-window map's w (default 4)")
    p.add_argument("--max-tokens", type=int, default=512, help="tokens read per text, at most (default 512)")
    p.add_argument("--out", required=True, metavar="PATH", help="stem of the files (PATH.csv, .parquet, .json)")
    p.add_argument("--device", default="cpu", help="cpu or cuda: where the maps and metrics run (default cpu)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch's CPU threads (default 1: one head's maps are small, and on small tensors more "
                        "threads cost more than they give)")
    p.add_argument("--shard", default="0/1", metavar="i/n",
                   help="take the texts whose line index is i modulo n, into PATH.shard-i-of-n.*")
    p.add_argument("--merge", nargs="+", default=None, metavar="SHARD",
                   help="instead of probing: join these shard tables (their .csv or stems) into PATH")
    p.set_defaults(func=run_probe)


def run_probe(args) -> int:
    from .experiments import probe, probe_table

    started = time.perf_counter()
    try:
        if args.merge:
            merged = probe_table.merge(args.merge, args.out)
            print(f"merged {len(args.merge)} shard(s): {len(merged['table'])} rows -> {merged['paths']['csv']}, "
                  f"{merged['paths']['parquet']}")
            if merged["missing"]:
                print(f"warning: {merged['missing']} text(s) of the corpus are in no shard", file=sys.stderr)
            return 0
        if not args.texts:
            print("error: --texts FILE is needed (or --merge SHARD ...)", file=sys.stderr)
            return 2
        if args.device.startswith("cuda"):
            import torch
            if not torch.cuda.is_available():
                print("error: --device cuda: no CUDA device here (torch was built without CUDA or sees no GPU)",
                      file=sys.stderr)
                return 2
        shard = probe_table.parse_shard(args.shard)
        if args.threads < 1:
            print("error: --threads must be at least 1", file=sys.stderr)
            return 2
        import torch
        torch.set_num_threads(args.threads)
        with open(args.texts, encoding="utf-8") as handle:
            corpus = probe.Corpus.from_lines(handle)
        settings = probe.ProbeSettings(model=args.model, maps=tuple(args.maps or probe.DEFAULT_MAPS),
                                       layers=tuple(args.layers), heads=tuple(args.heads), causal=args.causal,
                                       m=args.m, seed=args.seed, window=args.window, max_tokens=args.max_tokens)
        result = probe_table.run(corpus, settings, args.out, device=args.device, shard=shard)
    except KeyboardInterrupt:
        print("\nstopped: the texts finished are kept; run the same command again to go on", file=sys.stderr)
        return 130
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for index, why in result["failed"]:
        print(f"skipped line {index}: {why}", file=sys.stderr)
    print(f"{len(result['table'])} rows in {time.perf_counter() - started:.1f} s -> {result['paths']['csv']}, "
          f"{result['paths']['parquet']}, {result['paths']['json']}")
    return 0


MAX_TEXTS_FILE_BYTES = 2 * 2 ** 20


def _read_texts(path) -> list[str]:
    """Passages of a UTF-8 text file, one per block of lines separated by a blank line."""
    from pathlib import Path

    file = Path(path)
    if not file.is_file() or file.stat().st_size > MAX_TEXTS_FILE_BYTES:
        raise ValueError(f"--texts: expected a text file of at most {MAX_TEXTS_FILE_BYTES // 2 ** 20} MB, got {path}")
    passages = [p.strip() for p in file.read_text(encoding="utf-8").split("\n\n")]
    return [p for p in passages if p]


def _held_out_texts() -> list[str]:
    """The project's held-out passages, English and Chinese."""
    from .linearize import texts

    return [*texts.load("en", "heldout"), *texts.load("zh", "heldout")]


def _add_linearize(sub) -> None:
    from .linearize.evaluation import DEFAULT_MAX_TOKENS, MAX_FORWARD_TOKENS, RULES
    from .linearize.maps import LINEARIZE_KINDS

    p = sub.add_parser(
        "linearize", help="perplexity, agreement and KL of SmolLM2 with layers made linear",
        description="Judge SmolLM2-135M with KEEP layers kept softmax and the rest linearized (and with "
                    "none and every layer linearized) on held-out texts: perplexity, next-token top-1 "
                    "agreement with the original and mean KL(original || linearized).")
    p.add_argument("--kind", choices=LINEARIZE_KINDS, default="hedgehog")
    p.add_argument("--window", type=int, default=0, help="exact softmax keys per query (0: pure linear)")
    p.add_argument("--sinks", type=int, default=0, help="first keys kept exact, attention sinks (a shipped set: 1 with --window 16)")
    p.add_argument("--keep", type=int, default=6, help="layers kept softmax")
    p.add_argument("--rule", choices=RULES, default="even",
                   help="which layers to keep: evenly spaced, the first ones, or the most sensitive "
                        "(measured: one forward per layer and text)")
    p.add_argument("--texts", metavar="FILE", help="UTF-8 passages separated by blank lines "
                                                   "(default: the held-out texts, English and Chinese)")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="tokens read per text")
    p.add_argument("--curve", action="store_true",
                   help="also perplexity against k softmax layers kept, chosen greedily, as the first k and "
                        "evenly spaced (written to PREFIX-curve.csv); the greedy choice costs L + (L-1) + ... "
                        "forwards per text")
    p.add_argument("--ks", type=int, nargs="+", metavar="K", help="the k of --curve (default 0 ... 30)")
    p.add_argument("--max-forward-tokens", type=int, default=MAX_FORWARD_TOKENS,
                   help="refuse a --curve or --rule sensitivity run whose forwards read more tokens (default %(default)s)")
    p.add_argument("--out", default="linearize", metavar="PREFIX", help="writes PREFIX.csv and PREFIX.json")
    p.set_defaults(func=run_linearize)


def run_linearize(args) -> int:
    import csv

    from .linearize.evaluation import hybrid_table, keep_softmax

    try:
        passages = _read_texts(args.texts) if args.texts else _held_out_texts()
        table = hybrid_table(passages, args.keep, args.kind, args.window, rule=args.rule,
                             max_tokens=args.max_tokens, max_forward_tokens=args.max_forward_tokens, sinks=args.sinks)
        if args.curve:
            table["curve"] = keep_softmax(passages, args.kind, args.window, ks=args.ks, max_tokens=args.max_tokens,
                                          max_forward_tokens=args.max_forward_tokens, sinks=args.sinks,
                                          progress=lambda f: _progress(f, "keep-softmax search"))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.kind}, window {args.window}, sinks {args.sinks}; softmax kept in layers {table['kept']}")
    print(f"{'model':<24}{'softmax layers':>16}{'perplexity':>12}{'top-1 agree':>13}{'KL (nats)':>11}")
    for row in table["rows"]:
        print(f"{row['model']:<24}{row['softmax_layers']:>16}{row['perplexity']:>12.3f}"
              f"{row['top1_agreement']:>13.3f}{row['kl']:>11.4f}")
    with open(f"{args.out}.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(table["rows"][0]))
        writer.writeheader()
        writer.writerows(table["rows"])
    if args.curve:
        _write_curve(table["curve"], args.out)
    with open(f"{args.out}.json", "w", encoding="utf-8") as fh:
        json.dump(table, fh, indent=1)
    print(f"wrote {args.out}.csv{', ' + args.out + '-curve.csv' if args.curve else ''} and {args.out}.json")
    return 0


def _write_curve(curve: dict, prefix: str) -> None:
    import csv

    print(f"\nperplexity against k softmax layers kept (original {curve['original_perplexity']:.3f})")
    print(f"{'k':>4}{'greedy':>12}{'first k':>12}{'even':>12}   greedy keeps")
    with open(f"{prefix}-curve.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["k", "greedy", "first", "even", "greedy_layers"])
        for i, k in enumerate(curve["ks"]):
            kept = curve["kept"]["greedy"][i]
            row = [curve["greedy"][i], curve["first"][i], curve["even"][i]]
            print(f"{k:>4}" + "".join(f"{v:>12.3f}" for v in row) + f"   {kept}")
            writer.writerow([k, *row, " ".join(map(str, kept))])


def _add_generate(sub) -> None:
    from .linearize.generation import MAX_NEW_TOKENS
    from .linearize.evaluation import RULES
    from .linearize.maps import LINEARIZE_KINDS

    p = sub.add_parser(
        "generate", help="continue a prompt with SmolLM2, some layers linearized, decoding as an RNN",
        description="Greedy (or seeded sampled) decoding where linearized layers keep a fixed-size state "
                    "and softmax layers their KV cache; prints the text as it comes, then the bytes kept "
                    "against the original's KV cache.")
    p.add_argument("--prompt", required=True)
    p.add_argument("--kind", choices=LINEARIZE_KINDS, default="hedgehog")
    p.add_argument("--window", type=int, default=0)
    p.add_argument("--sinks", type=int, default=0, help="first keys kept exact (attention sinks)")
    p.add_argument("--keep", type=int, default=6, help="layers kept softmax (chosen by --rule, first or even)")
    p.add_argument("--rule", choices=[r for r in RULES if r != "sensitivity"], default="even")
    p.add_argument("--max-new-tokens", type=int, default=64, help=f"at most {MAX_NEW_TOKENS}")
    p.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run_generate)


def run_generate(args) -> int:
    from .linearize.generation import generate
    from .linearize.evaluation import keep_rule
    from .linearize.maps import MODEL, SHAPE

    count = SHAPE[MODEL]["layers"]
    shown = [0]

    def stream(result):
        # Decode the whole continuation each time, holding back a character whose bytes have
        # not all come yet (a Chinese character may span two byte-level tokens).
        from .sources.models import get_model
        text = get_model(MODEL).tokenizer.decode(result.tokens).rstrip("\ufffd")
        print(text[shown[0]:], end="", flush=True)
        shown[0] = len(text)

    try:
        kept = keep_rule(args.rule, args.keep, count)
        print(args.prompt, end="", flush=True)
        out = generate(args.prompt, args.max_new_tokens, [i for i in range(count) if i not in kept],
                       kind=args.kind, window=args.window, temperature=args.temperature, seed=args.seed,
                       on_token=stream, sinks=args.sinks)
    except ValueError as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 2
    seconds = sum(out.seconds[1:]) / max(1, len(out.seconds) - 1)
    print(f"\n\n{len(out.tokens)} tokens; softmax kept in layers {kept}; {seconds * 1000:.1f} ms per token "
          f"after the prompt; kept {out.memory_bytes[-1]:,} bytes against the original's KV cache of "
          f"{out.kv_cache_bytes[-1]:,} bytes")
    return 0


def _add_mqar(sub) -> None:
    from .experiments.mqar import MIXERS
    from .experiments.mqar_table import SEEDS, WIDTHS

    p = sub.add_parser(
        "mqar", help="associative recall (MQAR) against state size, on tiny models trained here",
        description="With no option: the shipped table (accuracy against the state's bytes per mixer, "
                    "width and seed). --train: train one model (--mixer, --width, --seed) and print its "
                    "accuracy and state. --table: train the whole grid (minutes; --out writes its JSON). "
                    "--check: retrain shipped points (a fast subset, or --all) and say whether each lands "
                    "within its seeds' spread.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--train", action="store_true", help="train one model")
    what.add_argument("--table", action="store_true", help="train every mixer x width x seed")
    what.add_argument("--check", action="store_true", help="reproduce shipped points")
    p.add_argument("--mixer", choices=MIXERS, default="softmax")
    p.add_argument("--width", type=int, default=WIDTHS[0])
    p.add_argument("--seed", type=int, default=SEEDS[0])
    p.add_argument("--all", action="store_true", help="with --check: every shipped point, not the subset")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (one thread each)")
    p.add_argument("--out", help="with --table: write the table's JSON here")
    p.set_defaults(func=run_mqar)


# The points --check retrains by default: softmax, the additive state and the hybrid at the
# narrow width, seed 0 (about a minute on one thread).
MQAR_CHECK = (("softmax", 32, 0), ("linear", 32, 0), ("hybrid", 32, 0))


def _print_mqar_table(table) -> None:
    from .experiments.mqar_table import summarise

    print(f"MQAR: {table['task']['pairs']} pairs in {table['task']['length']} tokens, vocabulary "
          f"{table['task']['vocab']}, chance {table['task']['chance']:.3f}; {table['training']['steps']} steps")
    print(f"{'mixer':>15} {'width':>5} {'state bytes':>12} {'accuracy':>9}  seeds")
    for s in summarise(table):
        print(f"{s.mixer:>15} {s.width:>5} {s.state_bytes:>12,} {s.mean:>9.3f}  "
              + " ".join(f"{a:.3f}" for a in s.seeds)
              + "".join(f" (seed {seed} diverged)" for seed in s.diverged))


def run_mqar(args) -> int:
    from .experiments import mqar, mqar_table
    from .measure.cost import TRAINING_SECONDS, Refusal

    def show(r):
        print(f"{r.mixer:>15} width {r.width:>3} seed {r.seed}: accuracy {r.accuracy:.3f}, "
              f"state {r.state_bytes:,} bytes ({r.seconds:.0f} s)", flush=True)

    try:
        if args.train:
            import torch
            torch.set_num_threads(1)
            shape = mqar.ModelShape(args.mixer, args.width)
            show(mqar.train(shape, training=mqar.with_seed(mqar.Training(), args.seed), limit_seconds=TRAINING_SECONDS))
        elif args.table:
            task, training, head_dim = mqar.Task(), mqar.Training(), mqar.ModelShape().head_dim
            start = time.perf_counter()
            results = mqar_table.run(mqar_table.grid(), task, training, head_dim, jobs=args.jobs, on_result=show)
            table = mqar_table.record(results, task, training, head_dim, time.perf_counter() - start)
            _print_mqar_table(table)
            if args.out:
                with open(args.out, "w", encoding="utf-8") as fh:
                    json.dump(table, fh, indent=1)
        elif args.check:
            table = mqar_table.shipped()
            if args.all:
                points = [mqar_table.Point(p["mixer"], p["width"], p["seed"]) for p in table["points"]]
            else:
                points = [mqar_table.Point(*p) for p in MQAR_CHECK]
            found = mqar_table.check(table, points, jobs=args.jobs)
            for r in found:
                print(f"{r.point.mixer:>15} width {r.point.width:>3} seed {r.point.seed}: accuracy {r.accuracy:.3f}, "
                      f"shipped seeds {', '.join(f'{a:.3f}' for a in r.shipped)}: {'holds' if r.holds else 'OUTSIDE'}")
            return 0 if all(r.holds for r in found) else 1
        else:
            _print_mqar_table(mqar_table.shipped())
    except (Refusal, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _add_space(sub) -> None:
    from .space import add_command
    add_command(sub)


COMMANDS = (_add_bench, _add_lecture, _add_probe, _add_linearize, _add_generate, _add_mqar, _add_space)


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
    from . import plugins
    try:
        plugins.load()                    # EXPLORER_FEATURE_MAPS: maps from outside the package
    except plugins.Refused as exc:
        print(exc, file=sys.stderr)
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
