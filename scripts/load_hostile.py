"""Hostile visitors beside an honest one: does the honest visitor still get answers?

    python scripts/load_hostile.py                          # starts `python app.py --public` on a free loopback port
    python scripts/load_hostile.py --url http://127.0.0.1:7860/ --pid 1234
    python scripts/load_hostile.py --seconds 30 --hostile 4
    python scripts/load_hostile.py --private                # the app as started without --public

For ``--seconds`` (60; at most 600), ``--hostile`` visitors (8; at most 16), each from an
address of its own and inventing a new session for every request, do what a public Space
meets, round and round:

  heavy maps       random N from 1,536 to 2,048, d = 64, every map, m = 1024, a new data seed
                   each time (no cache serves them)
  abandoned learn  every head, LUNA, m = 256, 1,000 steps: the stream closed once it runs
  queue flooding   five heavy maps and a sweep joined at once, each from a new session, the
                   streams read for a second
  big bodies       a 50 MB body announced, and one sent in chunks without a length
  training leaves  every head, Hedgehog, m = 256: the stream closed after the first loss
  unread posts     a sweep to 131,072 and a generation posted and never read
  direct route     POST /gradio_api/run/complexity, the socket closed after 6 s
  bf16 upload      a 2 KB bfloat16 .pt whose q expands one element to 25,000 x 25,000

while one honest visitor, from another address, sends the maps tab's default request (every
parameter at the tab's default), waits for its answer and a second, and repeats. Printed: the
honest visitor's requests, failures, p50 and p95 latency; what the hostile ones got (answers,
refusals); and the server's peak resident memory (of the app started here, or of ``--pid``).

The addresses travel in X-Forwarded-For, which the app's server (uvicorn) takes from a
proxy on the same host only, as a proxy in front of a server would send them.

Loopback only: the script refuses any other address, and it never runs longer than
``--seconds`` plus the time its last requests take to end (each bounded).
"""

from __future__ import annotations

import argparse
import ipaddress
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
import uuid
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
MAX_SECONDS = 600
MAX_HOSTILE = 16
REQUEST_TIMEOUT_S = 120
HONEST_PAUSE_S = 1.0
ALL_MAPS = None        # filled from the app's own catalogue (every map but the trained one)


def loopback_only(url: str) -> str:
    """``url`` when it names this machine's loopback interface; SystemExit otherwise."""
    host = urlsplit(url).hostname or ""
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise SystemExit(f"refusing {url!r}: this load runs against a local app only (127.0.0.1, ::1, localhost)")
    return url.rstrip("/") + "/"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(log_path: Path, public: bool = True) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port))
    log = open(log_path, "w")
    command = [sys.executable, "app.py"] + (["--public"] if public else [])
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    import httpx
    deadline = time.time() + 300
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"app.py exited with {proc.returncode}; see {log_path}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"app.py did not answer within 300 s; see {log_path}")


def rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Api:
    """The app's endpoints as the page's API calls them, parameters in the app's own order and
    defaults; each call carries its visitor's session."""

    def __init__(self, url: str):
        import httpx
        from gradio_client import Client
        self.url = url
        api = Client(url, verbose=False).view_api(return_format="dict", print_info=False)
        self.params = {name: [(p["parameter_name"], p.get("parameter_default")) for p in spec["parameters"]]
                       for name, spec in api["named_endpoints"].items()}
        self.http = httpx

    def data(self, api_name: str, **kwargs) -> list:
        names = {name for name, _ in self.params[api_name]}
        unknown = set(kwargs) - names
        if unknown:
            raise SystemExit(f"{api_name}: no parameters {sorted(unknown)}")
        return [kwargs.get(name, default) for name, default in self.params[api_name]]

    def join(self, client, api_name: str, session: str, **kwargs) -> str | None:
        route = f"{self.url}gradio_api/call/{api_name.lstrip('/')}"
        reply = client.post(route, json={"data": self.data(api_name, **kwargs), "session_hash": session})
        return reply.json().get("event_id") if reply.status_code == 200 else None

    def upload(self, client, path: Path) -> dict | None:
        """``path`` uploaded as the page uploads a file; its FileData, or None when refused."""
        with open(path, "rb") as fh:
            reply = client.post(f"{self.url}gradio_api/upload", files={"files": (path.name, fh)})
        if reply.status_code != 200:
            return None
        return {"path": reply.json()[0], "orig_name": path.name, "meta": {"_type": "gradio.FileData"}}

    def read(self, client, api_name: str, event_id: str, until=None) -> str:
        """Read the event's stream to its end ('complete' or 'error'), or until ``until(line)``
        is true (then the stream is closed: the visitor has left). Returns what ended it."""
        route = f"{self.url}gradio_api/call/{api_name.lstrip('/')}/{event_id}"
        kind = None
        with client.stream("GET", route) as reply:
            for line in reply.iter_lines():
                if until is not None and until(line):
                    return "left"
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:") and kind in ("complete", "error"):
                    return kind if kind == "complete" else f"error: {short_error(line[5:])}"
        return "ended"

    def call(self, client, api_name: str, session: str, **kwargs) -> str:
        event_id = self.join(client, api_name, session, **kwargs)
        return "refused at the door" if event_id is None else self.read(client, api_name, event_id)


def short_error(payload: str) -> str:
    """The first words of an error event's message: enough to tell refusals apart."""
    try:
        message = json.loads(payload) if payload.strip() not in ("", "null") else None
    except ValueError:
        message = payload
    if isinstance(message, dict):
        message = message.get("error") or message.get("title")
    return " ".join(str(message or "no message").split()[:6])


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.honest: list[float] = []
        self.honest_failed: list[str] = []

    def add(self, what: str):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1


def heavy_maps():
    """A heavy maps request no cache has seen: another N and another data seed each time."""
    return dict(source="random", n=random.randint(1536, 2048), d=64, maps=ALL_MAPS, m=1024,
                data_seed=random.randrange(2 ** 31))


def bf16_bomb(folder: Path) -> Path:
    """2 KB on disk, 2.5 GB once converted: q is one bfloat16 element expanded to 25,000 x 25,000."""
    import torch
    path = folder / "expanded-bf16.pt"
    torch.save({"q": torch.zeros(1, dtype=torch.bfloat16).expand(25_000, 25_000),
                "k": torch.zeros(4, 4, dtype=torch.bfloat16)}, path)
    return path


def visitor_headers(index: int) -> dict:
    """The address of visitor ``index`` (the honest one is -1), as a proxy on this host names it."""
    return {"X-Forwarded-For": "10.0.1.1" if index < 0 else f"10.0.0.{index + 1}"}


def hostile(kind: str, index: int, api: Api, until: float, tally: Tally, bomb: Path):
    import httpx
    with httpx.Client(timeout=REQUEST_TIMEOUT_S, headers=visitor_headers(index)) as client:
        while time.time() < until:
            session = uuid.uuid4().hex                 # invented anew: one visitor is its address
            try:
                if kind == "heavy maps":
                    tally.add(f"{kind}: {api.call(client, '/maps', session, **heavy_maps())}")
                elif kind in ("abandoned learn", "training leaves"):
                    settings = dict(head=ALL_HEADS, num_features=256, steps=1000, kind="luna") \
                        if kind == "abandoned learn" else dict(head=ALL_HEADS, num_features=256, steps=1000)
                    event = api.join(client, "/learn", session, **settings)
                    if event is None:
                        tally.add(f"{kind}: refused at the door")
                        time.sleep(1)
                        continue
                    if kind == "abandoned learn":         # gone once it has started
                        left = lambda line: line.startswith("event:") and "generating" in line
                    else:                                 # gone after the first loss of the live curve
                        left = lambda line: line.startswith("data:") and "loss" in line
                    ended = api.read(client, "/learn", event, until=left)
                    tally.add(f"{kind}: {ended}")
                elif kind == "queue flooding":
                    events = [(name, api.join(client, name, uuid.uuid4().hex, **kwargs)) for name, kwargs in
                              [("/maps", heavy_maps()) for _ in range(5)]
                              + [("/complexity", dict(n_max=131072, points=random.randint(8, 12)))]]
                    for name, event in events:
                        tally.add(f"{kind}: {'joined' if event else 'refused at the door'}")
                    stop_at = time.time() + 1.0
                    for name, event in events:
                        if event:
                            api.read(client, name, event, until=lambda line: time.time() > stop_at)
                elif kind == "big bodies":
                    route = f"{api.url}gradio_api/call/maps"
                    announced = client.post(route, content=b"x" * (50 * 2 ** 20),
                                            headers={"Content-Type": "application/json"})
                    tally.add(f"{kind}: announced 50 MB answered {announced.status_code}")

                    def chunks():
                        for _ in range(50):
                            yield b"x" * 2 ** 20
                    try:
                        chunked = client.post(route, content=chunks(), headers={"Content-Type": "application/json"})
                        tally.add(f"{kind}: chunked 50 MB answered {chunked.status_code}")
                    except httpx.HTTPError as exc:
                        tally.add(f"{kind}: chunked 50 MB cut off ({type(exc).__name__})")
                    time.sleep(0.5)
                elif kind == "unread posts":
                    for name, kwargs in (("/complexity", dict(n_min=16, n_max=131072, points=random.randint(8, 12))),
                                         ("/generate", dict(new_tokens=64))):
                        event = api.join(client, name, uuid.uuid4().hex, **kwargs)
                        tally.add(f"{kind}: {name} {'posted' if event else 'refused at the door'}")
                    time.sleep(1.0)
                elif kind == "direct route":
                    route = f"{api.url}gradio_api/run/complexity"
                    data = api.data("/complexity", n_max=131072, points=random.randint(8, 12))
                    try:
                        reply = client.post(route, json={"data": data}, timeout=6)
                        tally.add(f"{kind}: answered {reply.status_code}")
                    except httpx.TimeoutException:
                        tally.add(f"{kind}: ran past 6 s, socket closed")
                    time.sleep(0.5)
                elif kind == "bf16 upload":
                    uploaded = api.upload(client, bomb)
                    if uploaded is None:
                        tally.add(f"{kind}: upload refused")
                    else:
                        ended = api.call(client, "/maps", session, source="file", file=uploaded)
                        tally.add(f"{kind}: {ended}")
                    time.sleep(0.5)
            except httpx.HTTPError as exc:
                tally.add(f"{kind}: {type(exc).__name__}")
                time.sleep(0.5)


def honest(api: Api, until: float, tally: Tally):
    import httpx
    session = uuid.uuid4().hex
    with httpx.Client(timeout=REQUEST_TIMEOUT_S, headers=visitor_headers(-1)) as client:
        while time.time() < until:
            start = time.perf_counter()
            try:
                ended = api.call(client, "/maps", session)
            except httpx.HTTPError as exc:
                ended = type(exc).__name__
            took = time.perf_counter() - start
            with tally.lock:
                tally.honest.append(took)
                if ended != "complete":
                    tally.honest_failed.append(ended)
            time.sleep(HONEST_PAUSE_S)


KINDS = ["heavy maps", "abandoned learn", "queue flooding", "big bodies", "training leaves", "unread posts",
         "direct route", "bf16 upload"]
ALL_HEADS = None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main(argv=None):
    global ALL_MAPS, ALL_HEADS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running app on this machine (default: start one here)")
    parser.add_argument("--pid", type=int, help="the running app's process, for its resident memory")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hostile", type=int, default=8)
    parser.add_argument("--private", action="store_true", help="start the app without --public")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= MAX_SECONDS:
        raise SystemExit(f"--seconds: between 0 and {MAX_SECONDS}")
    if not 0 <= args.hostile <= MAX_HOSTILE:
        raise SystemExit(f"--hostile: between 0 and {MAX_HOSTILE}")
    sys.path.insert(0, str(ROOT))
    from explorer import catalog
    ALL_MAPS = [label for label in catalog.map_choices() if label != catalog.TRAINED_HEDGEHOG]
    layers, heads, _ = catalog.EMBEDDED_SHAPE
    ALL_HEADS = f"all {layers * heads} heads"                  # the learn tab's "every head"

    proc = None
    if args.url:
        url, pid = loopback_only(args.url), args.pid
    else:
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"load-hostile-{os.getpid()}.log"
        proc, url = start_app(log, public=not args.private)
        pid = proc.pid
        print(f"app.py started at {url} (log {log})")
    try:
        api = Api(url)
        tally = Tally()
        honest_warm = Tally()
        honest(api, time.time() + 0.1, honest_warm)            # the first call loads the model: not counted
        peak, base = 0, rss_bytes(pid) if pid else None
        until = time.time() + args.seconds
        bomb = bf16_bomb(Path(tempfile.mkdtemp(prefix="load-hostile-")))
        threads = [threading.Thread(target=hostile, args=(KINDS[i % len(KINDS)], i, api, until, tally, bomb),
                                    daemon=True) for i in range(args.hostile)]
        threads.append(threading.Thread(target=honest, args=(api, until, tally), daemon=True))
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            if pid:
                peak = max(peak, rss_bytes(pid) or 0)
            time.sleep(0.2)
            if time.time() > until + REQUEST_TIMEOUT_S + 30:
                print("some requests were still running at the end; not waited for")
                break
        times = tally.honest
        print(f"{args.hostile} hostile visitors, one honest, {args.seconds:.0f} s"
              f"{'' if args.url else (' (app.py' + ('' if args.private else ' --public') + ')')}")
        if times:
            print(f"honest /maps (defaults): {len(times)} requests, {len(tally.honest_failed)} failed "
                  f"({', '.join(sorted(set(tally.honest_failed))) or 'none'}); "
                  f"p50 {statistics.median(times):.2f} s, p95 {percentile(times, 0.95):.2f} s, max {max(times):.2f} s")
        else:
            print("honest /maps: no request finished")
        for what, count in sorted(tally.counts.items()):
            print(f"  {what}: {count}")
        if pid:
            print(f"server resident memory: {base / 1e9:.2f} GB before, peak {peak / 1e9:.2f} GB")
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
