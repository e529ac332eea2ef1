"""End-to-end latency of the app, measured as a user of the API sees it.

    python scripts/bench_app.py                 # starts `python app.py` on a free port
    python scripts/bench_app.py --url http://127.0.0.1:7860/ --runs 15

Prints the start-up time (from launching `python app.py` to the first page served) and
the p50 of each scenario through gradio_client: the maps tab on a 64-token text (5 maps,
one head) and on random data with N = 1024 (5 maps). The first call of each scenario is a
warm-up (it loads the model) and is reported separately. Every timed request is new to
the server (another head of the same text; another data seed), so no run is served from
the app's per-map cache: these are cold computations. "repeat" times the same request
again, which the cache answers (what a user sees when toggling back to a view).
Targets (issue): start-up <= 8 s, text p50 <= 0.5 s, N = 1024 p50 <= 1.5 s.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT_64 = ("In 1964 Nadaraya and Watson proposed a kernel estimator that weights each sample by its similarity "
           "to the query point, and sixty years later the Transformer computes exactly that average for every "
           "token in the sequence, which is why its cost grows with the square.")
MAPS = ["softmax", "elu+1", "FAVOR+ (orthogonal)", "Taylor-2", "cosFormer"]
SCENARIOS = {
    # run i gets its own head (text) or data seed (random): a request the server has not seen
    "maps, 64-token text, 5 maps, one head": lambda i: dict(source="text", text=TEXT_64, layer=1 + (i // 12) % 5,
                                                             head=str(i % 12), maps=MAPS),
    "maps, random N = 1024, 5 maps": lambda i: dict(source="random", preset="gaussian", n=1024, d=32,
                                                    data_seed=i, layer=0, head="0", maps=MAPS),
}
TARGETS = {"startup": 8.0, "maps, 64-token text, 5 maps, one head": 0.5, "maps, random N = 1024, 5 maps": 1.5}


def start_app() -> tuple[subprocess.Popen, str, float]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return proc, url, time.perf_counter() - start
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"app.py exited with {proc.returncode}")
            time.sleep(0.05)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="measure a running app instead of starting one")
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args(argv)

    proc = None
    if args.url:
        url = args.url
    else:
        proc, url, startup = start_app()
        verdict = "ok" if startup <= TARGETS["startup"] else "OVER"
        print(f"start-up (python app.py -> first page): {startup:.2f} s   target <= 8 s   {verdict}")
    try:
        from gradio_client import Client
        client = Client(url, verbose=False)
        for name, request in SCENARIOS.items():
            start = time.perf_counter()
            client.predict(**request(10_000), api_name="/maps")
            warm = time.perf_counter() - start
            times = []
            for i in range(args.runs):
                start = time.perf_counter()
                client.predict(**request(i), api_name="/maps")
                times.append(time.perf_counter() - start)
            start = time.perf_counter()
            client.predict(**request(0), api_name="/maps")
            repeat = time.perf_counter() - start
            p50 = statistics.median(times)
            verdict = "ok" if p50 <= TARGETS[name] else "OVER"
            print(f"{name}: p50 {p50:.3f} s (min {min(times):.3f}, max {max(times):.3f}; first call {warm:.2f} s, "
                  f"repeat {repeat:.3f} s)   target <= {TARGETS[name]} s   {verdict}")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    main()
