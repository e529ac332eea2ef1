"""Issue 40, break 4: in public mode the direct REST route (POST /gradio_api/run/<name>) is
closed to queued events. It ran an event at once, outside the queue, its shares and lanes,
and noticed no disconnect: a complexity sweep whose client left after 6 s computed 53.5 s
more. The queue's own routes, and the page's unqueued events, still answer. Loopback only."""

from __future__ import annotations

import json

import gradio as gr
import httpx
import pytest

from explorer.ui import server

pytestmark = pytest.mark.slow          # starts a server


@pytest.fixture(scope="module")
def public_app():
    """A queued event that counts its runs (a heavy one's stand-in) and an unqueued one, on
    a queue configured as a public server's."""
    runs = []

    def sweep(n):
        runs.append(n)
        return n

    with gr.Blocks() as demo:
        box = gr.Textbox()
        shown = gr.Textbox()
        box.submit(sweep, box, box, api_name="complexity")
        box.change(lambda x: x, box, shown, queue=False, api_name="show")
    server.configure_queue(demo, public=True)
    demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                app_kwargs=server.app_kwargs())
    try:
        yield demo, runs
    finally:
        demo.close()


def _post(url: str, path: str, body: dict) -> httpx.Response:
    return httpx.post(f"{url}{path}", content=json.dumps(body), headers={"Content-Type": "application/json"},
                      timeout=60)


def test_the_direct_route_is_refused_and_runs_nothing(public_app):
    demo, runs = public_app
    for path in ("gradio_api/run/complexity", "gradio_api/api/complexity"):
        answer = _post(demo.local_url, path, {"data": ["16"]})
        assert answer.status_code == 404 and "join the queue" in answer.text, answer.text
    assert runs == []


def test_the_queue_and_the_pages_unqueued_events_still_answer(public_app):
    demo, runs = public_app
    joined = _post(demo.local_url, "gradio_api/call/complexity", {"data": ["32"]})
    assert joined.status_code == 200, joined.text
    answer = httpx.get(f"{demo.local_url}gradio_api/call/complexity/{joined.json()['event_id']}", timeout=60)
    assert "event: complete" in answer.text and runs == ["32"]
    index = next(i for i, fn in demo.fns.items() if fn.api_name == "show")
    shown = _post(demo.local_url, "gradio_api/run/predict",
                  {"data": ["x"], "fn_index": index, "session_hash": "page", "event_data": None, "trigger_id": None})
    assert shown.status_code == 200 and shown.json()["data"] == ["x"]


@pytest.mark.parametrize("env, public", [({}, False), ({"EXPLORER_PUBLIC": "1"}, True), ({"SPACE_ID": "me/explorer"}, True)])
def test_public_mode_is_read_from_the_flag_or_the_space(monkeypatch, env, public):
    for name in ("EXPLORER_PUBLIC", "SPACE_ID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with gr.Blocks() as demo:
        gr.Textbox().submit(lambda: None, None, None)
    server.configure_queue(demo)
    assert demo.api_open is (not public)
