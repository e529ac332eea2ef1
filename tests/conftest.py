"""Shared test setup: everything runs offline and quiet, as the app does."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# As in app.py: OpenMP threads that spin while idle starve each other on a busy 2-core machine.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------
# A running app for the API and browser tests: `python app.py` in a subprocess on a free
# port, started once per test session (both modules share it) and stopped at the end.
# ---------------------------------------------------------------------------------------

APP_START_TIMEOUT_S = 300   # cold imports on a busy 2-core machine can take a while


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status == 200
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    port = _free_port()
    log_path = tmp_path_factory.mktemp("app") / "app.log"
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1",
               EXPLORER_SWEEP_BUDGET_S="20")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + APP_START_TIMEOUT_S
    while not _answers(url):
        try:
            proc.wait(timeout=0.5)                # returns only when the app has exited
        except subprocess.TimeoutExpired:
            pass
        else:
            raise RuntimeError(f"app.py exited with {proc.returncode}:\n{log_path.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"app.py did not answer within {APP_START_TIMEOUT_S} s:\n{log_path.read_text()}")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def server_alive():
    """A check that the server still answers a plain page request."""
    def alive(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status == 200
        except OSError:
            return False
    return alive


# ---------------------------------------------------------------------------------------
# Chromium for the browser test modules (Debian's chromium through playwright, offline),
# one per module: two sync playwright sessions cannot be open at once in one thread.
# Under CI (CI=true) a missing browser fails the run; elsewhere it skips.
# ---------------------------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _browser_missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "python playwright is not installed"
    return None


@pytest.fixture(scope="module")
def chromium():
    missing = _browser_missing()
    if missing:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser tests must run under CI: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
