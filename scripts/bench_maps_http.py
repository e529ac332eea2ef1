"""The maps tab's default request over HTTP, as the page's API sees it: p50 and p95.

    python scripts/bench_maps_http.py                        # starts `python app.py` on a free port
    python scripts/bench_maps_http.py --url http://127.0.0.1:7860/ --runs 40

Two series of ``--runs`` requests each, after one warm-up call (which loads the model):
  default, cold    every parameter at the tab's default but the head (and then the layer),
                   which changes each run, so that no run is served from the app's caches;
  default, repeat  the very default request again (what a visitor sees on opening the tab).
Each time is from the POST to the last event of the reply, read in full.

Target: p50 <= 0.4 s on a quiet 2-core machine. The machine may be shared: the dense
float32 matmul rate measured in this process before and after the runs is printed beside
them (a quiet 2-core machine gives ~100-200 GFLOP/s); times taken at a fraction of that
rate are slowed by other work, not by the app.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from bench_app import ApiCaller, matmul_rate, start_app  # noqa: E402

TARGET_P50_S = 0.4


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed(client: ApiCaller, **kwargs) -> float:
    start = time.perf_counter()
    client.predict("/maps", **kwargs)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running app (default: start one here)")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    proc = None
    if args.url:
        url = args.url
    else:
        proc, url, startup = start_app()
        print(f"app.py started at {url} in {startup:.1f} s")
    try:
        client = ApiCaller(url)
        warm = timed(client)
        print(f"warm-up (loads the model): {warm:.2f} s")
        before = matmul_rate()
        cold = [timed(client, layer=(i // 12) % 6, head=str(i % 12)) for i in range(1, args.runs + 1)]
        repeat = [timed(client) for _ in range(args.runs)]
        after = matmul_rate()
        print(f"dense matmul: {before:.0f} GFLOP/s before, {after:.0f} GFLOP/s after "
              "(a quiet 2-core machine: ~100-200)")
        for name, times in (("default, cold", cold), ("default, repeat", repeat)):
            p50 = statistics.median(times)
            print(f"{name:16s} p50 {p50:.3f} s  p95 {percentile(times, 0.95):.3f} s  ({len(times)} runs; "
                  f"target p50 <= {TARGET_P50_S} s: {'met' if p50 <= TARGET_P50_S else 'not met'})")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
