"""Work stops when its visitor leaves: one stop signal per request,
asked at every step of the long loops, set when gradio lets the event go.

The training's steps are slowed (a pause inside each step) so that the gap between two
progress reports, where the old code first noticed a stop, is far longer than the time
allowed here; nothing else is changed."""

from __future__ import annotations

import json
import threading
import time
import uuid

import gradio as gr
import httpx
import pytest

from explorer import stopping
from explorer.experiments import learning
from explorer.views import learn as lv
from helpers.server import free_port, slow_steps, training_threads

TINY = dict(num_features=8, seed=1, train_count=2, heldout_count=1)
STOP_WITHIN_S = 2.0


def test_the_stop_signal_ends_an_experiment_within_one_step(monkeypatch):
    lv.learn_view(0, 1, steps=2, **TINY)           # the texts read through the model, cached
    texts = TINY["train_count"] + TINY["heldout_count"]
    steps, asked = [], []
    real = learning.masked_log_map
    monkeypatch.setattr(learning, "masked_log_map", lambda *a, **k: steps.append(1) or real(*a, **k))

    def after_three_steps():                        # reading asks once a text, training once a step
        asked.append(1)
        return len(asked) > texts + 3

    with pytest.raises(stopping.Stopped):
        learning.experiment(lv.training_texts()[:2], lv.heldout_texts()[:1], num_features=8, steps=1000,
                            source=lambda text: lv.cached_sample(text), layer=0, head=1,
                            should_stop=after_three_steps)
    assert len(steps) == 4                          # the step after which it turned true was the last


def test_the_deadline_refuses_in_words_that_name_it():
    signal = stopping.StopSignal(seconds=0)
    time.sleep(0.01)
    with pytest.raises(stopping.PastDeadline) as caught:
        signal.check()
    assert "limit of 0 s" in str(caught.value) and "0 秒" in caught.value.say("zh")
    assert not stopping.StopSignal()()                # no deadline, nobody to leave: never stops


@pytest.mark.slow
def test_a_learn_whose_client_disconnects_stops_within_2_s(learn_app, monkeypatch):
    lv.learn_view(0, 2, steps=2, **TINY)           # the texts read through the model, cached
    slow_steps(monkeypatch)
    url, fn_index = learn_app
    session = uuid.uuid4().hex
    data = [0, "2", 8, 1000, 1, 2, 1, "hedgehog", False, None, "en", "", 1, "", ""]
    body = {"data": data, "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None}
    with httpx.Client(timeout=60) as client:
        joined = client.post(f"{url}gradio_api/queue/join", content=json.dumps(body),
                             headers={"Content-Type": "application/json"})
        assert joined.status_code == 200, joined.text
        with client.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
            for line in stream.iter_lines():
                if "process_generating" in line:          # the live loss curve: training runs
                    break
                assert "process_completed" not in line, line
            assert training_threads()                      # still connected: training runs
    left_at = time.monotonic()                             # the stream is closed: the visitor left
    while training_threads() and time.monotonic() - left_at < 30:
        time.sleep(0.05)
    stopped_after = time.monotonic() - left_at
    assert not training_threads()
    assert stopped_after < STOP_WITHIN_S, f"training ran on {stopped_after:.1f} s after its visitor left"


def test_a_disconnect_sets_the_signal_of_a_plain_handler():
    """The signal a handler gets from server.visitor_left turns true when its client goes,
    although gradio tells a plain (non-generator) handler nothing."""
    from explorer.ui import server
    started, noticed = threading.Event(), threading.Event()

    def long_work(x, request: gr.Request):
        left = server.visitor_left(request)
        started.set()
        until = time.monotonic() + 30
        while time.monotonic() < until:
            if left():
                noticed.set()
                return "stopped"
            time.sleep(0.02)
        return "ran to the end"

    with gr.Blocks() as demo:
        box = gr.Textbox()
        box.submit(long_work, box, box, api_name="long_work")
    demo.queue().launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        url = demo.local_url
        fn_index = next(i for i, dep in enumerate(demo.config["dependencies"]) if dep.get("api_name") == "long_work")
        session = uuid.uuid4().hex
        body = {"data": ["x"], "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None}
        with httpx.Client(timeout=60) as client:
            assert client.post(f"{url}gradio_api/queue/join", content=json.dumps(body),
                               headers={"Content-Type": "application/json"}).status_code == 200
            with client.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
                for line in stream.iter_lines():
                    if "process_starts" in line:
                        break
                # still connected: the handler runs and has not been told to stop (checked
                # before the stream closes, since closing it is the disconnect itself)
                assert started.wait(10) and not noticed.is_set()
        assert noticed.wait(STOP_WITHIN_S), "the handler was not told its visitor left"
    finally:
        demo.close()


def test_quality_redraws_stop_at_the_deadline_with_the_limit_in_words():
    from explorer import views
    sample = views.load_sample("random", n=32, d=8)
    with pytest.raises(stopping.PastDeadline, match="limit of 0 s"):
        views.quality_view(sample, 0, 0, seeds=2, should_stop=stopping.StopSignal(seconds=0))
    with pytest.raises(stopping.Stopped):
        views.quality_view(sample, 0, 0, seeds=2, should_stop=lambda: True)


def test_a_maps_draw_stops_before_its_next_map_and_its_next_spread_draw():
    from explorer import views
    sample = views.load_sample("random", n=48, d=8, data_seed=3)
    asked = []

    def after(k):
        return lambda: asked.append(1) or len(asked) > k

    with pytest.raises(stopping.Stopped):
        views.maps_view(sample, 0, 0, ["softmax", "favor_plus_orthogonal", "elu1"], False, 16, 7,
                        should_stop=after(2))
    assert len(asked) == 3               # softmax, FAVOR+, then its first spread draw: stopped there
    with pytest.raises(stopping.PastDeadline, match="limit of 0 s"):
        views.maps_view(sample, 0, 0, ["softmax", "elu1"], False, 16, 8, should_stop=stopping.StopSignal(seconds=0))
