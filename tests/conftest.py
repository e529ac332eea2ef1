"""Shared test setup: everything runs offline and quiet, as the app does."""

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import ROOT
from helpers.server import APP_START_TIMEOUT_S, free_port

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The data tabs' tests were written on the embedded MiniLM (its heads, its [CLS]): the data
# panel opens on it here whatever is converted (tests/app/test_default_model.py covers the
# page's own default, SmolLM2 once converted). The lecture's chapters keep their own model.
os.environ.setdefault("EXPLORER_PANEL_MODEL", "all-MiniLM-L6-v2")
# As in app.py: OpenMP threads that spin while idle starve each other on a busy 2-core machine.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# Test modules import what they share from tests/helpers/ (this folder is on sys.path, as
# pytest puts the folder of a conftest.py without __init__.py there), never from each other.


# ---------------------------------------------------------------------------------------
# Markers (registered in pyproject.toml), set by each test module itself, never here:
#   browser  drives a page in Chromium: `pytestmark = pytest.mark.browser` for a browser/
#            module, `@pytest.mark.browser` on a test elsewhere that asks for `chromium`;
#   slow     takes seconds to minutes (starts the app, trains, reads SmolLM2, walks every
#            build): `@pytest.mark.slow`, or `pytestmark = pytest.mark.slow` for a module.
# `python -m pytest -m "not browser and not slow"` runs the rest, the fast part, and these
# rules keep it fast: a test marked neither fails when its setup and call take over
# FAST_LIMIT_S of wall time on a quiet machine (the limit grows with the load average per core
# above 1, so that other work on the machine does not fail a test that is fast on its own; a
# module-scoped fixture counts on the first test that uses it;
# a session-scoped one that times its work with shared_setup() is the run's shared set-up,
# left out and printed at the end); a test that asks for `chromium` must be browser, one
# that asks for `app_url` (the app's start takes half a minute or more) slow or browser.
# ---------------------------------------------------------------------------------------

FAST_LIMIT_S = 5.0

_SETUP_S = pytest.StashKey[float]()
_SHARED_S = pytest.StashKey[float]()
_setting_up: list = []                  # the test whose setup runs now, if any
SHARED_SETUP_S: dict[str, float] = {}   # shared set-up -> seconds it took


def pytest_addoption(parser):
    parser.addoption("--fast-limit", type=float, default=FAST_LIMIT_S, metavar="SECONDS",
                     help=f"fail a test marked neither slow nor browser whose setup and call take "
                          f"longer (default {FAST_LIMIT_S:g}; 0 turns the check off)")


def _marked_long(item) -> bool:
    return item.get_closest_marker("slow") is not None or item.get_closest_marker("browser") is not None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    fixtures = getattr(item, "fixturenames", ())
    if "chromium" in fixtures and item.get_closest_marker("browser") is None:
        pytest.fail(f"{item.nodeid} drives Chromium: mark it browser (@pytest.mark.browser)", pytrace=False)
    if "app_url" in fixtures and not _marked_long(item):
        pytest.fail(f"{item.nodeid} starts the app (app_url), which takes half a minute or more: "
                    "mark it slow (@pytest.mark.slow, or pytestmark = pytest.mark.slow for its module)",
                    pytrace=False)
    _setting_up[:] = [item]             # the test a shared set-up runs for (shared_setup)


@contextlib.contextmanager
def shared_setup(name: str):
    """Time the work of a session-scoped fixture: the run's shared set-up, which the test
    that happens to ask first is not charged for (it is printed at the end of the run)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        took = time.perf_counter() - start
        SHARED_SETUP_S[name] = SHARED_SETUP_S.get(name, 0.0) + took
        if _setting_up:
            item = _setting_up[-1]
            item.stash[_SHARED_S] = item.stash.get(_SHARED_S, 0.0) + took


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.when == "setup":
        item.stash[_SETUP_S] = call.duration - item.stash.get(_SHARED_S, 0.0)
        _setting_up.clear()
    limit = item.config.getoption("fast_limit")
    if (call.when == "call" and report.passed and not hasattr(report, "wasxfail") and limit > 0
            and not _marked_long(item)):
        setup_s = item.stash.get(_SETUP_S, 0.0)
        took = setup_s + call.duration
        load = _load_per_core()
        if took > limit * max(1.0, load):
            report.outcome = "failed"
            report.longrepr = (f"{item.name} took {took:.1f} s (setup {setup_s:.1f} s, call {call.duration:.1f} s), "
                               f"over the {limit:g} s a test marked neither slow nor browser may take "
                               f"(x {max(1.0, load):.1f} for the machine's load): mark it slow "
                               "(@pytest.mark.slow, or pytestmark = pytest.mark.slow for its module), or make it faster")
    return report


def _load_per_core() -> float:
    """The one-minute load average per core (0 where the system does not say)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 0.0


def pytest_terminal_summary(terminalreporter):
    shared = {name: s for name, s in SHARED_SETUP_S.items() if s >= 1.0}
    if shared:
        terminalreporter.write_line("shared set-up (session fixtures, left out of the tests' own times): " +
                                    ", ".join(f"{name} {s:.1f} s" for name, s in sorted(shared.items())))


# ---------------------------------------------------------------------------------------
# Work the engine keeps in its caches and many fast tests read: computed once for the run by
# a session-scoped fixture, which a module asks for with
# `pytestmark = pytest.mark.usefixtures("lecture_chapter_five")`. Otherwise whichever test
# came first paid it, and marking that one slow only handed the bill to the next.
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def lecture_chapter_five():
    """Chapter 5 of the lecture as it opens: on SmolLM2 it judges SmolLM2 linearized with the
    shipped maps (15 forwards of the model, 15-30 s on the 2-core machine), which every
    chapter-5 view on SmolLM2 then reads from the engine's cache."""
    with shared_setup("lecture_chapter_five"):
        from explorer.lecture import view as lecture
        return lecture.chapter_view(5)


# ---------------------------------------------------------------------------------------
# A running app for the API and browser tests: `python app.py` in a subprocess on a free
# port, one per group of tests (app/, browser/), started when the group's first test asks
# and stopped when the next group starts, or at the end. The browser tests then see a page
# served as a visitor finds it, not a server that has just taken hundreds of hostile and
# abandoned API requests (those are the app group's to judge). On a wait that times out,
# tests/helpers/page.py reads EXPLORER_TEST_APP_PID/_LOG to say what the server does.
# ---------------------------------------------------------------------------------------

def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status == 200
    except OSError:
        return False


def _start_app(log_path: Path):
    port = free_port()
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
    os.environ["EXPLORER_TEST_APP_PID"], os.environ["EXPLORER_TEST_APP_LOG"] = str(proc.pid), str(log_path)
    return proc, url


def _stop_app(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def _apps(tmp_path_factory):
    """The running app of the current group: {group: (process, url)}, at most one at a time."""
    running: dict = {}
    yield running, tmp_path_factory
    for proc, _ in running.values():
        _stop_app(proc)


@pytest.fixture(scope="module")
def app_url(_apps, request):
    running, factory = _apps
    group = request.path.parent.name
    if group not in running:
        for proc, _ in running.values():
            _stop_app(proc)
        running.clear()
        running[group] = _start_app(factory.mktemp(f"app-{group}") / "app.log")
    return running[group][1]


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


@pytest.fixture(scope="module")
def browser(chromium):
    """The module's Chromium, under the name the browser tests use."""
    return chromium


# ---------------------------------------------------------------------------------------
# The learn tab alone on a gradio server of its own, for the tests of a training whose
# visitor leaves: (its address, the learn endpoint's fn_index).
# ---------------------------------------------------------------------------------------

@pytest.fixture()
def learn_app():
    import gradio as gr

    from explorer.ui import learn_tab

    with gr.Blocks() as demo:
        learn_tab.build(gr.Checkbox(False))
    demo.queue().launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    fn_index = next(i for i, dep in enumerate(demo.config["dependencies"]) if dep.get("api_name") == "learn")
    try:
        yield demo.local_url, fn_index
    finally:
        demo.close()
