"""What the tests of a running server share: a free port, how long the app may take to
start, one API call over plain HTTP, and a training slowed so that a stop can be timed."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.request

APP_START_TIMEOUT_S = 300   # cold imports on a busy 2-core machine can take a while


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api_call(app_url: str, endpoint: str, data: list) -> tuple[str, str]:
    """(event, payload) of the last SSE message of one API call made over plain HTTP."""
    base = f"{app_url}gradio_api/call/{endpoint}"
    body = json.dumps({"data": data}).encode()          # ensure_ascii: a lone surrogate travels as \\ud800
    request = urllib.request.Request(base, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as r:
        event_id = json.loads(r.read())["event_id"]
    with urllib.request.urlopen(f"{base}/{event_id}", timeout=300) as r:
        text = r.read().decode()
    events = [block for block in text.strip().split("\n\n") if block.startswith("event:")]
    event, payload = events[-1].split("\n", 1)
    return event.removeprefix("event:").strip(), payload.removeprefix("data:").strip()


# source, text, preset, n, d, data seed, temperature, file, model, layer, head, then the maps tab's own
# (causal, maps, m, seed, window; mechanisms, γ, GLA gates, mechanism seed, HGRN2 bound, β), presentation, language
# The /maps event's inputs in order: the data panel's, the maps tab's (the mechanisms' fold
# last: γ, gates, seed, lower bound, β, the papers' form), presentation mode and the language.
MAPS_ARGS = ["text", "The cat sat.", "clustered", 128, 32, 0, 1.0, None, "all-MiniLM-L6-v2", 2, "3", False,
             ["softmax", "elu1"], 64, 0, 4, [], 0.0, "seeded", 0, 0.9, 0.0, False, False, "en"]


STEP_PAUSE_S = 0.2          # x 20 steps between reports = 4 s: past the 2 s a stop is allowed


def slow_steps(monkeypatch):
    """A pause inside each training step, nothing else changed."""
    from explorer.experiments import learning

    real = learning.masked_log_map

    def slow(*args, **kwargs):
        time.sleep(STEP_PAUSE_S)
        return real(*args, **kwargs)
    monkeypatch.setattr(learning, "masked_log_map", slow)


def training_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.endswith("-training") and t.is_alive()]


@contextlib.contextmanager
def held_server(public: bool | None = None):
    """A small app with the server's queue settings and guard: ``hold`` keeps its one worker
    until the app closes (whatever is joined meanwhile waits), ``echo`` answers at once in a
    group of its own. Yields the running Blocks (``local_url``, ``fns``)."""
    import gradio as gr

    from explorer.ui import server

    release = threading.Event()

    def hold(x):
        release.wait(60)
        return x

    with gr.Blocks() as demo:
        box = gr.Textbox()
        box.submit(hold, box, box, api_name="hold", concurrency_limit=1, concurrency_id="hold")
        box.change(lambda x: x, box, box, api_name="echo", concurrency_limit=4, concurrency_id="echo")
    server.configure_queue(demo, public=public)
    demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                app_kwargs=server.app_kwargs())
    try:
        yield demo
    finally:
        release.set()
        demo.close()
