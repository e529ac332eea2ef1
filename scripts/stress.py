"""Load and abuse the app the way a public Space meets it, and report what it did.

    python scripts/stress.py                       # one round: 8 clients x 60 s, then the bad inputs
    python scripts/stress.py --rounds 2            # two rounds on one server process
    python scripts/stress.py --seconds 20 --idle 10

Starts `python app.py` in a child process on a free loopback port (127.0.0.1 only), then
per round: ``--clients`` concurrent clients (gradio_client) send a mix of requests over
every endpoint (/maps, /quality, /state, /complexity, /learn, /hybrid, and the page) for
``--seconds``; then the bad inputs are replayed one by one (a .pt whose storage deflates
a thousand-fold, a 50,000-member .npz, quantized and sparse .pt, integers of 2^64 and more,
N = 2048 with d = 2048 and Taylor-2, a lone surrogate, an 8,000-character Chinese link, a
file path the server must not read, an upload over the size limit). The crafted files are
built here (scripts/crafted.py), about a megabyte on disk.

Printed: requests, errors, p50/p95 latency per round, the server's RSS before and after
each round and after ``--idle`` seconds without requests, its peak RSS, and each bad
input's outcome. Exit status 1 when the server died, answered a valid request with an
error, or a bad input got no clear answer.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
import crafted  # noqa: E402

TEXTS = [
    "The animal didn't cross the street because it was too tired.",
    "Attention is kernel regression: each query averages the values, weighted by a kernel.",
    "猫坐在垫子上。注意力机制就是核回归。",
    "Linear attention turns the N by N map into a running state that never forgets.",
]


# --------------------------------------------------------------------------- the server

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port),
               EXPLORER_SWEEP_BUDGET_S="15")
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 180
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"app.py exited with {proc.returncode}; see {log_path}")
        if http_status(url) == 200:
            return proc, url
        time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"app.py did not answer within 180 s; see {log_path}")


def http_status(url: str, timeout: float = 30) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


# --------------------------------------------------------------------------- the load

def request_mix(rng: random.Random) -> tuple[str, dict]:
    """One valid request, drawn like a lecture hall would click."""
    kind = rng.choices(["maps-text", "maps-random", "quality", "state", "complexity", "learn", "hybrid", "page"],
                       weights=[5, 4, 2, 3, 1, 1, 1, 2])[0]
    if kind == "maps-text":
        return "/maps", dict(text=rng.choice(TEXTS), head=rng.choice(["mean", "3", "0"]), m=rng.choice([16, 64, 256]),
                             seed=rng.randint(0, 3), causal=rng.random() < 0.5)
    if kind == "maps-random":
        return "/maps", dict(source="random", preset=rng.choice(["gaussian", "clustered", "local"]),
                             n=rng.choice([64, 256, 512, 1024]), d=rng.choice([16, 32, 64]),
                             data_seed=rng.randint(0, 20), m=rng.choice([32, 64, 128]))
    if kind == "quality":
        return "/quality", dict(text=rng.choice(TEXTS), seeds=10, m=rng.choice([16, 64]))
    if kind == "state":
        return "/state", dict(text=rng.choice(TEXTS), map_id=rng.choice(["elu1", "favor_plus_iid", "taylor2"]),
                              m=rng.choice([16, 32, 64]), kind=rng.choice(["none", "retnet", "gla"]))
    if kind == "complexity":
        return "/complexity", dict(n_min=256, n_max=1024, points=2, d=32, methods=["sdpa", "linear_chunked"],
                                   repeats=1)
    if kind == "learn":
        return "/learn", dict(num_features=16, steps=20, seed=rng.randint(0, 2), train_count=6, heldout_count=3)
    if kind == "hybrid":
        return "/hybrid", dict(map_name="elu1", mode="chosen layers", heldout_count=3)
    return "page", {}


def client_loop(url: str, until: float, seed: int, results: list, lock: threading.Lock):
    from gradio_client import Client
    rng = random.Random(seed)
    client = Client(url, verbose=False)
    while time.time() < until:
        endpoint, kwargs = request_mix(rng)
        start = time.perf_counter()
        error = None
        try:
            if endpoint == "page":
                status = http_status(url)
                if status != 200:
                    error = f"page answered {status}"
            else:
                client.predict(api_name=endpoint, **kwargs)
        except Exception as exc:  # every request in the mix is valid: any error is one
            error = f"{type(exc).__name__}: {str(exc)[:160]}"
        with lock:
            results.append((endpoint, time.perf_counter() - start, error))


def load_round(url: str, clients: int, seconds: float, round_index: int) -> list:
    results, lock = [], threading.Lock()
    until = time.time() + seconds
    threads = [threading.Thread(target=client_loop, args=(url, until, 1000 * round_index + i, results, lock))
               for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# --------------------------------------------------------------------------- the bad inputs

def call_raw(url: str, endpoint: str, data: list) -> tuple[str, str]:
    """One API call over plain HTTP (a lone surrogate cannot go through gradio_client's encoder)."""
    base = f"{url}gradio_api/call/{endpoint}"
    body = json.dumps({"data": data}).encode()
    request = urllib.request.Request(base, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as r:
        event_id = json.loads(r.read())["event_id"]
    with urllib.request.urlopen(f"{base}/{event_id}", timeout=600) as r:
        text = r.read().decode()
    events = [block for block in text.strip().split("\n\n") if block.startswith("event:")]
    event, payload = events[-1].split("\n", 1)
    return event.removeprefix("event:").strip(), payload.removeprefix("data:").strip()


MAPS_ARGS = ["text", TEXTS[0], "clustered", 128, 32, 0, 1.0, None, 2, "3", False, ["softmax", "elu1"], 64, 0, 4, False]


def bad_inputs(url: str, folder: Path) -> list[tuple[str, str, bool]]:
    """(name, outcome, answered clearly) for every hostile input."""
    from gradio_client import Client, handle_file
    client = Client(url, verbose=False)
    out = []

    def api(name, **kwargs):
        try:
            result = client.predict(api_name="/maps", **kwargs)
            notices = result[3] if isinstance(result, (list, tuple)) and len(result) > 3 else ""
            refusal = [line for line in str(notices).splitlines() if "not shown" in line or "limit" in line]
            out.append((name, "drawn; " + (refusal[0][:200] if refusal else "no refusal"), bool(refusal)))
        except Exception as exc:
            message = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            out.append((name, f"refused: {message}", "Traceback" not in str(exc) and bool(message)))

    def page(name, query):
        status = http_status(f"{url}?{query}")
        out.append((name, f"page answered {status} ({len(query):,}-character query)", status == 200))

    api("N=2048, d=2048, Taylor-2 (API)", source="random", n=2048, d=2048, maps=["softmax", "taylor2"])
    api("N=2048, d=1024, Taylor-2 (API)", source="random", n=2048, d=1024, maps=["softmax", "taylor2"])
    page("N=2048, d=2048, Taylor-2 (link)", "src=random&n=2048&d=2048&maps=softmax,Taylor-2")
    bomb = folder / "bomb.pt"
    if not bomb.exists():
        crafted.deflate_bomb_pt(bomb, 1 << 30)
    api(f".pt deflating to 1 GiB ({bomb.stat().st_size / 1e6:.1f} MB on disk)", source="file", file=handle_file(str(bomb)))
    many = folder / "many.npz"
    if not many.exists():
        crafted.many_member_npz(many, 50_000)
    api(f"50,000-member .npz ({many.stat().st_size / 1e6:.1f} MB)", source="file", file=handle_file(str(many)))
    api("quantized .pt", source="file", file=handle_file(str(crafted.quantized_pt(folder / "quantized.pt"))))
    api("sparse .pt", source="file", file=handle_file(str(crafted.sparse_pt(folder / "sparse.pt"))))
    page("integers >= 2^64 in a link", crafted.huge_int_query())
    api("seed 10^30 (API)", source="random", n=64, d=16, seed=10 ** 30, maps=["softmax", "favor_plus_orthogonal"])

    from explorer.ui.common import query_string
    page("8,000-character Chinese text (the app's own link)",
         query_string({"tab": "maps", "src": "text", "text": crafted.long_chinese_text(8000), "layer": 2, "head": 3}))

    args = list(MAPS_ARGS)
    args[1] = "abc \ud800 def"
    event, payload = call_raw(url, "maps", args)
    out.append(("lone surrogate (API)", f"{event}; link text {'cleaned' if '%EF%BF%BD' in payload else 'NOT cleaned'}",
                event == "complete" and "%EF%BF%BD" in payload))
    args = list(MAPS_ARGS)
    args[0], args[7] = "file", {"path": "/etc/passwd.npy", "meta": {"_type": "gradio.FileData"}}
    event, payload = call_raw(url, "maps", args)
    message = json.loads(payload).get("error") if event == "error" else payload[:100]
    out.append(("file path the server must not read (API)", f"{event}: {message}", event == "error" and bool(message)))

    import httpx
    big = folder / "big.npy"
    with open(big, "wb") as fh:
        fh.truncate(130 * 2 ** 20)          # sparse: no disk used
    with open(big, "rb") as fh:
        response = httpx.post(f"{url}gradio_api/upload", files={"files": ("big.npy", fh)}, timeout=300)
    out.append(("130 MiB upload", f"HTTP {response.status_code}: {response.text[:120]}", response.status_code == 413))
    return out


# --------------------------------------------------------------------------- the report

def percentile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--idle", type=float, default=60.0, help="seconds without requests before the last RSS")
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="stress-"))
    log_path = folder / "app.log"
    proc, url = start_server(log_path)
    failed = False
    try:
        http_status(url)
        from gradio_client import Client
        Client(url, verbose=False).predict(api_name="/maps")      # the engine and model loaded
        rows, before = [], rss_mb(proc.pid)
        print(f"server pid {proc.pid} at {url}; RSS after start and one request: {before:.0f} MB", flush=True)
        for r in range(1, args.rounds + 1):
            start_rss = rss_mb(proc.pid)
            results = load_round(url, args.clients, args.seconds, r)
            errors = [x for x in results if x[2]]
            times = [x[1] for x in results if not x[2]]
            after_load = rss_mb(proc.pid)
            outcomes = bad_inputs(url, folder)
            after_bad = rss_mb(proc.pid)
            alive = proc.poll() is None and http_status(url) == 200
            rows.append(dict(round=r, requests=len(results), errors=len(errors), p50=percentile(times, 0.5),
                             p95=percentile(times, 0.95), rss_before=start_rss, rss_after_load=after_load,
                             rss_after_bad=after_bad, alive=alive))
            by_endpoint = {}
            for endpoint, seconds, error in results:
                by_endpoint.setdefault(endpoint, []).append(seconds)
            print(f"\nround {r}: {len(results)} requests, {len(errors)} errors, p50 {rows[-1]['p50']:.2f} s, "
                  f"p95 {rows[-1]['p95']:.2f} s; RSS {start_rss:.0f} -> {after_load:.0f} MB after the load, "
                  f"{after_bad:.0f} MB after the bad inputs; server alive: {alive}", flush=True)
            print("  per endpoint: " + ", ".join(f"{e} {len(v)} (p50 {statistics.median(v):.2f} s)"
                                                 for e, v in sorted(by_endpoint.items())))
            for endpoint, _, error in errors[:10]:
                print(f"  error on {endpoint}: {error}")
            for name, outcome, clear in outcomes:
                print(f"  {'ok ' if clear else 'BAD'} {name}: {outcome}")
            failed |= bool(errors) or not alive or not all(clear for _, _, clear in outcomes)
            if not alive:
                break
        peak = rss_mb(proc.pid, "VmHWM")
        time.sleep(args.idle)
        idle = rss_mb(proc.pid)
        print(f"\nRSS after {args.idle:.0f} s idle: {idle:.0f} MB; peak (VmHWM) {peak:.0f} MB", flush=True)
        if len(rows) >= 2:
            growth = rows[-1]["rss_after_bad"] - rows[0]["rss_after_bad"]
            print(f"RSS growth from round 1 to round {len(rows)}: {growth:+.0f} MB (target: within 300 MB)")
            failed |= growth > 300
        failed |= idle > peak
        print("\n| round | requests | errors | p50 s | p95 s | RSS before MB | after load MB | after bad inputs MB |")
        print("|---|---|---|---|---|---|---|---|")
        for row in rows:
            print(f"| {row['round']} | {row['requests']} | {row['errors']} | {row['p50']:.2f} | {row['p95']:.2f} | "
                  f"{row['rss_before']:.0f} | {row['rss_after_load']:.0f} | {row['rss_after_bad']:.0f} |")
        print(f"\nidle {args.idle:.0f} s: {idle:.0f} MB; peak {peak:.0f} MB; server log: {log_path}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
