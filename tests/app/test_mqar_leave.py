"""A live MQAR training stops when its visitor leaves: the section alone on a gradio server of
its own, one training joined over the queue's HTTP routes, its event stream read until the
progress bar moves and then closed. The training's batches are slowed (a pause as each is
drawn) so that a run left alone would go on for half a minute."""

from __future__ import annotations

import json
import time
import uuid

import gradio as gr
import httpx
import pytest

from explorer.experiments import mqar
from explorer.ui import mqar_tab
from helpers.server import free_port

pytestmark = pytest.mark.slow

STOP_WITHIN_S = 2.0


@pytest.fixture()
def recall_app():
    with gr.Blocks() as demo:
        mqar_tab.build(gr.Checkbox(False))
    demo.queue().launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    fn_index = next(i for i, dep in enumerate(demo.config["dependencies"]) if dep.get("api_name") == "mqar_train")
    try:
        yield demo.local_url, fn_index
    finally:
        demo.close()


def test_a_training_whose_client_disconnects_stops_within_2_s(recall_app, monkeypatch):
    drawn = []
    real = mqar.sequences

    def slow(task, count, generator):
        if count == 32:                                   # a training batch, not the held-out set
            drawn.append(time.monotonic())
            time.sleep(0.06)
        return real(task, count, generator)

    monkeypatch.setattr(mqar, "sequences", slow)
    url, fn_index = recall_app
    session = uuid.uuid4().hex
    data = ["linear", 32, 500, 0, False, "en", None, 0]         # 500 steps: about 30 s slowed
    body = {"data": data, "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None}
    with httpx.Client(timeout=60) as client:
        joined = client.post(f"{url}gradio_api/queue/join", content=json.dumps(body),
                             headers={"Content-Type": "application/json"})
        assert joined.status_code == 200, joined.text
        with client.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
            for line in stream.iter_lines():
                assert "process_completed" not in line, line
                if '"progress"' in line and len(drawn) >= 10:   # the bar moves: training runs
                    break
    left_at = time.monotonic()                                  # the stream is closed: the visitor left
    time.sleep(STOP_WITHIN_S + 1.0)
    after = [t for t in drawn if t > left_at + STOP_WITHIN_S]
    assert 10 <= len(drawn) < 200 and not after, f"{len(after)} batches drawn after the visitor had left"
