"""Per-token decode time and memory of SmolLM2-135M against context length: the original
(every layer softmax, a KV cache growing by one token per step) against every layer linearized
(a fixed-size state per layer).

    python scripts/bench_generate.py                       # contexts 512 ... 8192, hedgehog w = 0
    python scripts/bench_generate.py --contexts 64 128 --steps 4     # a quick check that it runs

For each context length L: a prompt of L tokens (seeded random token ids: timing does not
depend on the words) is read at once, then ``--steps`` tokens are decoded one at a time; the
median time of those steps is the per-token time at context L. Printed in one run: the table,
each model's fitted slope of per-token time against L (ms per 1,000 tokens of context, least
squares) and its log-log exponent, and the bytes each keeps at every L: the original's KV cache
grows with L, the linear model's state does not.

The maps: the shipped trained ones for ``--kind``/``--window`` when they exist, else maps of the
same kind and shape untrained (the same work per token; the script says which). The dense
float32 matmul rate is measured before and after: on a shared machine a rate far below a quiet
one (~100-200 GFLOP/s on 2 cores) means the times are slowed by others.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from explorer.linearize.decode import Decoder  # noqa: E402
from explorer.linearize.maps import MODEL, SHAPE, LayerMaps, layer_maps  # noqa: E402
from explorer.maps.learned import LEARNED_CLASSES  # noqa: E402
from explorer.measure.bench import matmul_gflops  # noqa: E402
from explorer.sources.models import get_model  # noqa: E402

CONTEXTS = (512, 1024, 2048, 4096, 8192)


def maps_for(kind: str, window: int) -> tuple[LayerMaps, str]:
    """The shipped maps, or untrained maps of the same kind and shape (timing only)."""
    try:
        return layer_maps(kind, window, MODEL), "shipped"
    except ValueError:
        if kind not in LEARNED_CLASSES:
            raise
    shape = SHAPE[MODEL]
    maps = [LEARNED_CLASSES[kind](shape["head_dim"], heads=(shape["heads"],)).requires_grad_(False)
            for _ in range(shape["layers"])]
    return LayerMaps(kind, window, MODEL, maps, torch.zeros(shape["layers"], shape["heads"])), "untrained (none ship)"


def per_token(loaded, layers, maps, context: int, steps: int, seed: int) -> tuple[float, int]:
    """Median seconds of one decode step after a ``context``-token prompt, and the bytes kept then."""
    gen = torch.Generator().manual_seed(seed)
    prompt = torch.randint(0, loaded.model.config.vocab_size, (context,), generator=gen)
    decoder = Decoder(loaded, layers, maps)
    row = decoder.prefill(prompt)
    times = []
    for _ in range(steps):
        token = int(row.argmax())
        start = time.perf_counter()
        row = decoder.step(token)
        times.append(time.perf_counter() - start)
    return statistics.median(times), decoder.nbytes()


def fit(xs, ys) -> tuple[float, float]:
    """(slope of y against x by least squares, exponent of the log-log fit)."""
    import math

    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mlx, mly = statistics.fmean(lx), statistics.fmean(ly)
    exponent = sum((a - mlx) * (b - mly) for a, b in zip(lx, ly)) / sum((a - mlx) ** 2 for a in lx)
    return slope, exponent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, nargs="+", default=list(CONTEXTS))
    parser.add_argument("--steps", type=int, default=16, help="decode steps timed per context")
    parser.add_argument("--kind", default="hedgehog")
    parser.add_argument("--window", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if len(args.contexts) < 2 or min(args.contexts) < 1 or args.steps < 1:
        parser.error("give at least two context lengths >= 1 and --steps >= 1")
    if args.threads:
        torch.set_num_threads(args.threads)
    loaded = get_model(MODEL)
    maps, origin = maps_for(args.kind, args.window)
    every = range(SHAPE[MODEL]["layers"])
    print(f"SmolLM2-135M, float32, {torch.get_num_threads()} threads; linear model: {args.kind} w={args.window} "
          f"at every layer, maps {origin}; median of {args.steps} decode steps per context")
    rate_before = matmul_gflops()
    rows = []
    with torch.no_grad():
        for context in sorted(args.contexts):
            t_orig, b_orig = per_token(loaded, [], None, context, args.steps, args.seed)
            t_lin, b_lin = per_token(loaded, every, maps, context, args.steps, args.seed)
            rows.append((context, t_orig, t_lin, b_orig, b_lin))
    rate_after = matmul_gflops()
    print(f"{'context':>8}{'original ms/token':>19}{'linear ms/token':>17}{'ratio':>8}"
          f"{'original bytes':>16}{'linear bytes':>14}")
    for context, t_orig, t_lin, b_orig, b_lin in rows:
        print(f"{context:>8}{t_orig * 1e3:>19.2f}{t_lin * 1e3:>17.2f}{t_orig / t_lin:>8.2f}{b_orig:>16,}{b_lin:>14,}")
    xs = [r[0] for r in rows]
    for name, column in (("original", 1), ("linear", 2)):
        slope, exponent = fit(xs, [r[column] * 1e3 for r in rows])
        print(f"{name:>8}: slope {slope * 1e3:+.3f} ms per 1,000 tokens of context; log-log exponent {exponent:+.2f}")
    flat = len({r[4] for r in rows}) == 1
    print(f"linear model's memory the same at every context: {'yes' if flat else 'NO'}; "
          f"original's KV cache from {rows[0][3]:,} to {rows[-1][3]:,} bytes")
    print(f"dense matmul rate: {rate_before:.0f} GFLOP/s before, {rate_after:.0f} after "
          "(far below a quiet machine's means the times are slowed by others)")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
