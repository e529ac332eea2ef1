"""End-to-end latency of the app, measured as a user of the API sees it.

    python scripts/bench_app.py                 # starts `python app.py` on a free port
    python scripts/bench_app.py --url http://127.0.0.1:7860/ --runs 15
    python scripts/bench_app.py --only quality  # the scenarios whose name contains "quality"

Prints the start-up time (from launching `python app.py` to the first page served) and
the median (p50) of each scenario through the app's HTTP API (as the page calls it):
  maps    on a 64-token text (5 maps, one head), on random data with N = 1024 (5 maps),
          and on random N = 1024 with every map the tab offers;
  quality "Measure" with the tab's defaults (m grid 4 ... 4096, 10 redraws) on the default
          text, and on random data with N = 256.
The first call of each scenario is a warm-up (it loads the model) and is reported
separately. Every timed request is new to the server (another head of the same text;
another data seed), so no run is served from the app's caches: these are cold
computations. "repeat" times the same request again (what a user sees when toggling back).

The machine may be shared: beside each scenario the script prints the dense float32
matmul rate measured in this process just before and after it (a quiet 2-core machine
gives ~100-200 GFLOP/s); a time measured at a fraction of that rate is slowed by others.
Targets (issues 5 and 12): start-up <= 8 s, maps text p50 <= 0.5 s, maps N = 1024 p50
<= 1.5 s (5 maps, and every map), quality p50 <= 2 s on the default text and <= 4 s on
random N = 256.
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
sys.path.insert(0, str(ROOT))
from explorer import catalog  # noqa: E402  (standard library only: no torch in this process's clock)

TEXT_64 = ("In 1964 Nadaraya and Watson proposed a kernel estimator that weights each sample by its similarity "
           "to the query point, and sixty years later the Transformer computes exactly that average for every "
           "token in the sequence, which is why its cost grows with the square.")
DEFAULT_TEXT = next(line.strip() for line in (ROOT / "assets" / "examples.txt").read_text(encoding="utf-8").splitlines()
                    if line.strip())
MAPS = ["softmax", "elu1", "favor_plus_orthogonal", "taylor2", "cosformer"]
ALL_MAPS = [label for label in catalog.map_choices() if label != catalog.TRAINED_HEDGEHOG]   # none trained here
# name -> (endpoint, request for run i): run i gets its own head (text) or data seed (random).
SCENARIOS = {
    "maps, 64-token text, 5 maps, one head": ("/maps", lambda i: dict(
        source="text", text=TEXT_64, layer=1 + (i // 12) % 5, head=str(i % 12), maps=MAPS)),
    "maps, random N = 1024, 5 maps": ("/maps", lambda i: dict(
        source="random", preset="gaussian", n=1024, d=32, data_seed=i, layer=0, head="0", maps=MAPS)),
    f"maps, random N = 1024, every map ({len(ALL_MAPS)})": ("/maps", lambda i: dict(
        source="random", preset="gaussian", n=1024, d=32, data_seed=i, layer=0, head="0", maps=ALL_MAPS)),
    "quality Measure, default text, defaults": ("/quality", lambda i: dict(
        source="text", text=DEFAULT_TEXT, layer=(i // 12) % 6, head=str(i % 12), seeds=10)),
    "quality Measure, random N = 256, defaults": ("/quality", lambda i: dict(
        source="random", preset="clustered", n=256, d=32, data_seed=i, layer=0, head="0", seeds=10)),
}
TARGETS = {"startup": 8.0, "maps, 64-token text, 5 maps, one head": 0.5, "maps, random N = 1024, 5 maps": 1.5,
           f"maps, random N = 1024, every map ({len(ALL_MAPS)})": 1.5,
           "quality Measure, default text, defaults": 2.0, "quality Measure, random N = 256, defaults": 4.0}


def matmul_rate() -> float:
    """Dense float32 matmul rate (GFLOP/s) of this machine now: the yardstick for 'busy'."""
    import torch
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    a @ b
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * 1024 ** 3 / best / 1e9


class ApiCaller:
    """Calls an endpoint as the page does: POST the inputs, then read the server-sent events
    until the result. gradio_client reads its event stream by appending every chunk to a
    buffer and searching the whole buffer again (quadratic in the reply): for the maps tab's
    ~7 MB reply with every map that alone took seconds, which no browser pays. Parameter
    order and defaults come from the app's own API description."""

    def __init__(self, url: str):
        import httpx
        from gradio_client import Client
        self.url = url.rstrip("/") + "/"
        self.http = httpx.Client(timeout=300)
        api = Client(url, verbose=False).view_api(return_format="dict", print_info=False)
        self.params = {name: [(p["parameter_name"], p.get("parameter_default")) for p in spec["parameters"]]
                       for name, spec in api["named_endpoints"].items()}

    def predict(self, api_name: str, **kwargs):
        import json
        names = {name for name, _ in self.params[api_name]}
        unknown = set(kwargs) - names
        if unknown:
            raise SystemExit(f"{api_name}: no parameters {sorted(unknown)}")
        data = [kwargs.get(name, default) for name, default in self.params[api_name]]
        route = f"{self.url}gradio_api/call/{api_name.lstrip('/')}"
        event = self.http.post(route, json={"data": data}).json()["event_id"]
        kind = None
        with self.http.stream("GET", f"{route}/{event}") as reply:
            for line in reply.iter_lines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:") and kind in ("complete", "error"):
                    if kind == "error":
                        raise SystemExit(f"{api_name} failed: {line[5:].strip()}")
                    return json.loads(line[5:])
        raise SystemExit(f"{api_name}: the stream ended without a result")


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
    parser.add_argument("--only", default="", help="run the scenarios whose name contains this text")
    args = parser.parse_args(argv)

    proc = None
    if args.url:
        url = args.url
    else:
        proc, url, startup = start_app()
        verdict = "ok" if startup <= TARGETS["startup"] else "OVER"
        print(f"start-up (python app.py -> first page): {startup:.2f} s   target <= 8 s   {verdict}", flush=True)
    try:
        client = ApiCaller(url)
        for name, (endpoint, request) in SCENARIOS.items():
            if args.only and args.only not in name:
                continue
            before = matmul_rate()
            start = time.perf_counter()
            client.predict(endpoint, **request(10_000))
            warm = time.perf_counter() - start
            times = []
            for i in range(args.runs):
                start = time.perf_counter()
                client.predict(endpoint, **request(i))
                times.append(time.perf_counter() - start)
            start = time.perf_counter()
            client.predict(endpoint, **request(0))
            repeat = time.perf_counter() - start
            after = matmul_rate()
            p50 = statistics.median(times)
            verdict = "ok" if p50 <= TARGETS[name] else "OVER"
            print(f"{name}: p50 {p50:.3f} s (min {min(times):.3f}, max {max(times):.3f}; first call {warm:.2f} s, "
                  f"repeat {repeat:.3f} s)   target <= {TARGETS[name]} s   {verdict}   "
                  f"[matmul {before:.0f} -> {after:.0f} GFLOP/s]", flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    main()
