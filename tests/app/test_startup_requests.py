"""A request that arrives while the engine is still loading waits for it instead of failing
(issue 23, point 12). Right after `python app.py` answered, a request for the lecture's
chapter 5 once failed with "Something went wrong (ImportError: cannot import name ... from
partially initialized module ...)": the background warm-up and the request imported the
engine side by side. Here a fresh server gets one request at every endpoint at once, the
moment its page answers, while the warm-up is still importing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from helpers.server import APP_START_TIMEOUT_S, free_port

pytestmark = pytest.mark.slow      # fresh processes and a fresh app.py

ROOT = Path(__file__).resolve().parents[2]

# Every named endpoint, with settings small enough to finish soon on a busy machine.
REQUESTS = {
    "/lecture": dict(chapter=5),
    "/maps": dict(),
    "/maps_arrays": dict(source="random", n=32, d=8, maps=["softmax", "elu1"], m=8),
    "/quality": dict(source="random", n=32, d=8, seeds=10, m=8),
    "/state": dict(),
    "/complexity": dict(n_min=64, n_max=128, points=2, d=16, methods=["sdpa", "linear_chunked"], repeats=1),
    "/learn": dict(num_features=8, steps=10, train_count=2, heldout_count=2),
    "/hybrid": dict(num_features=8, heldout_count=2, mode="chosen layers", layers=["2"]),
    "/probe": dict(file=handle_file(str(ROOT / "assets" / "examples.txt")), maps=["elu1"], m=8),
    "/linearize": dict(keep=28),
    "/generate": dict(new_tokens=2, keep=28),
    "/mqar": dict(),
    "/mqar_train": dict(mixer="linear", width=32, steps=20),
}


def test_the_guarded_import_leaves_no_engine_module_for_a_request_to_import():
    """After the one guarded import, a handler that imports a chapter, an export or a
    mechanism finds it there, so no request imports a module beside the warm-up."""
    code = ("import json, sys; from explorer.ui import common; common.import_engine(); "
            "print(json.dumps({'modules': common.engine_modules(), "
            "'left': [m for m in common.engine_modules() if m not in sys.modules]}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"explorer.export", "explorer.deck_export", "explorer.lecture.view"} <= set(found["modules"])
    assert any(name.startswith("explorer.lecture.ch5_") for name in found["modules"])
    assert found["left"] == [], f"import_engine left {found['left']} for a request to import"


@pytest.fixture()
def fresh_app(tmp_path):
    port = free_port()
    log_path = tmp_path / "app.log"
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1", EXPLORER_SWEEP_BUDGET_S="20")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + APP_START_TIMEOUT_S
    try:
        while True:                      # poll fast: the requests must land during the warm-up
            assert proc.poll() is None, log_path.read_text()
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.time() < deadline, log_path.read_text()
            time.sleep(0.1)
        yield url, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_every_endpoint_answers_during_start_up(fresh_app):
    url, log_path = fresh_app
    client = Client(url, verbose=False)
    assert set(REQUESTS) == set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])

    def call(item):
        name, kwargs = item
        for _ in range(120):
            try:
                Client(url, verbose=False).predict(api_name=name, **kwargs)
                return name, None
            except Exception as exc:     # every answer is collected, so one failure names all
                # The server's one budget refuses a heavy request while another runs: a visitor
                # is told to try again, which is no start-up failure. Anything else is.
                if "server is busy" not in str(exc):
                    return name, f"{type(exc).__name__}: {exc}"
                time.sleep(1.0)
        return name, "still busy after 120 tries"

    with ThreadPoolExecutor(len(REQUESTS)) as pool:
        answers = dict(pool.map(call, REQUESTS.items()))
    failed = {name: error for name, error in answers.items() if error is not None}
    assert failed == {}, failed
    log = log_path.read_text()
    assert "Something went wrong" not in log and "partially initialized module" not in log, log[-4000:]
    assert "warming up the engine failed" not in log, log[-4000:]
