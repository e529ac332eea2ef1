"""A training nobody waits for gives everything back: it stops within 2 s of its visitor
leaving, its memory returns to the system and its grant to the server's budget; and a
training that runs past its hard deadline is stopped at a step, in words that name it.

The steps are slowed (a pause inside each) as in test_public_leave.py, so that the stop can
only come from the signal asked at every step."""

from __future__ import annotations

import json
import time
import uuid

import gradio as gr
import httpx
import pytest

from explorer import memory
from explorer.experiments import learning
from explorer.measure import budget, cost
from explorer.ui import learn_tab
from explorer.views import learn as lv
from helpers.server import STEP_PAUSE_S, slow_steps, training_threads

pytestmark = pytest.mark.slow      # trains every head, on a server of its own

STOP_WITHIN_S = 2.0
# Every head of MiniLM at m = 256 on 16 texts: a training of a few hundred MB.
HEAVY = dict(layer=0, head=learn_tab.ALL_HEADS, num_features=256, steps=1000, seed=1, train_count=16, heldout_count=2)
FREED_SLACK_BYTES = 80 * 10 ** 6


def _settled_rss() -> int:
    memory.trim()
    return memory.rss_bytes()


def _abandon_a_training(url: str, fn_index: int, pool) -> tuple[int, int, float]:
    """Start the heavy all-heads training, close its stream once it reports a loss, and wait
    for it to end: (bytes granted while it ran, peak resident size, seconds it ran on)."""
    session = uuid.uuid4().hex
    data = [HEAVY["layer"], HEAVY["head"], HEAVY["num_features"], HEAVY["steps"], HEAVY["seed"],
            HEAVY["train_count"], HEAVY["heldout_count"], "hedgehog", False, None, "en", "",
            1, "", ""]   # one seed, the built-in texts
    body = {"data": data, "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None}
    peak_rss, granted = memory.rss_bytes(), 0
    with httpx.Client(timeout=120) as client:
        joined = client.post(f"{url}gradio_api/queue/join", content=json.dumps(body),
                             headers={"Content-Type": "application/json"})
        assert joined.status_code == 200, joined.text
        with client.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
            for line in stream.iter_lines():
                assert "process_completed" not in line, line
                if "process_generating" in line and "loss" in line:     # the live loss curve: training runs
                    break
            granted = pool.granted
            peak_rss = max(peak_rss, memory.rss_bytes())
            assert training_threads()                      # still connected: training runs
    left_at = time.monotonic()                             # the stream is closed: the visitor left
    while training_threads() and time.monotonic() - left_at < 30:
        time.sleep(0.05)
    assert not training_threads()
    return granted, peak_rss, time.monotonic() - left_at


def test_a_learn_whose_client_disconnects_stops_within_2_s_and_frees_its_memory(learn_app, monkeypatch):
    if memory.rss_bytes() is None:
        pytest.skip("no /proc here to read the resident size from")
    lv.learn_view(0, 2, steps=2, num_features=8, seed=1, train_count=HEAVY["train_count"],
                  heldout_count=HEAVY["heldout_count"])        # the texts read through the model, cached
    slow_steps(monkeypatch)
    url, fn_index = learn_app
    pool = budget.server_budget()
    # The first abandoned training fills what the process keeps for good (the texts' Q/K/V of
    # every head, allocator arenas); the second must give back all it took.
    _abandon_a_training(url, fn_index, pool)
    start_rss = _settled_rss()
    granted, peak_rss, stopped_after = _abandon_a_training(url, fn_index, pool)
    assert granted >= cost.estimate("learn", n=8, m=256, steps=1000, texts=16, all_heads=True).bytes // 4
    assert stopped_after < STOP_WITHIN_S, f"training ran on {stopped_after:.1f} s after its visitor left"
    assert pool.granted == 0 and pool.heavy == 0           # its grant is back in the server's budget
    end_rss = _settled_rss()
    # (The peak is read once, at the first loss: the second training may reuse the first's
    # pages, so it is reported, not required to rise; the grant above says the work was large.)
    assert end_rss - start_rss < FREED_SLACK_BYTES, (
        f"resident size {start_rss / 1e6:.0f} MB before, {peak_rss / 1e6:.0f} MB training, "
        f"{end_rss / 1e6:.0f} MB after it stopped")


def test_a_training_past_its_hard_deadline_stops_at_a_step_and_says_the_limit(monkeypatch):
    lv.learn_view(0, 2, steps=2, num_features=8, seed=1, train_count=2, heldout_count=1)
    slow_steps(monkeypatch)
    monkeypatch.setattr(cost, "TRAINING_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(gr.Error) as caught:
        list(learn_tab.run_learn(0, "2", 8, 1000, 1, 2, 1, "hedgehog", False, None, "en", ""))
    assert "limit of 1 s" in caught.value.message
    assert time.monotonic() - started < 1.0 + 5 * STEP_PAUSE_S + 5     # at a step, not at the end
    until = time.monotonic() + 10
    while training_threads() and time.monotonic() < until:
        time.sleep(0.05)
    assert not training_threads()
    with pytest.raises(gr.Error) as caught:
        list(learn_tab.run_learn(0, "2", 8, 1000, 1, 2, 1, "hedgehog", False, None, "zh", ""))
    assert "1 秒" in caught.value.message
