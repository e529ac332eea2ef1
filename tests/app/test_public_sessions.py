"""Sessions expire: every tab's view state has gradio's time_to_live, at
most SESSION_CAPACITY sessions are kept, and a session unused for an hour is forgotten.
Loopback only, bounded."""

from __future__ import annotations

import datetime
import json

import gradio as gr
import httpx
import pytest

from explorer.ui import build_app, server


def test_every_view_state_of_the_app_expires():
    demo = build_app()
    count = server.expire_states(demo)
    states = [b for b in demo.blocks.values() if isinstance(b, gr.State)]
    assert count == len(states) >= 6                       # a view per tab, the trained maps ...
    assert all(s.time_to_live <= server.STATE_TTL_S for s in states)


@pytest.fixture()
def small_app():
    """An app with the server's session settings, whose one event stores a value in its State."""
    with gr.Blocks() as demo:
        box = gr.Textbox()
        kept = gr.State(None)
        box.submit(lambda x: (x, x * 1000), box, [box, kept], api_name="keep")
    server.configure_queue(demo)
    server.expire_states(demo)
    demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                app_kwargs=server.app_kwargs(), state_session_capacity=server.SESSION_CAPACITY)
    try:
        yield demo
    finally:
        demo.close()


def _visit(client, demo, session):
    fn_index = next(i for i, fn in demo.fns.items() if fn.api_name == "keep")
    body = {"data": ["x", None], "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None}
    joined = client.post(f"{demo.local_url}gradio_api/queue/join", content=json.dumps(body),
                         headers={"Content-Type": "application/json"})
    assert joined.status_code == 200, joined.text
    with client.stream("GET", f"{demo.local_url}gradio_api/queue/data", params={"session_hash": session}) as r:
        for line in r.iter_lines():
            if "process_completed" in line:
                break


@pytest.mark.slow
def test_sessions_are_bounded_and_an_idle_one_is_forgotten(small_app):
    demo = small_app
    with httpx.Client(timeout=60) as client:
        for i in range(server.SESSION_CAPACITY + 20):
            _visit(client, demo, f"visitor-{i}")
    holder = demo.state_holder
    assert len(holder.session_data) <= server.SESSION_CAPACITY
    assert "visitor-0" not in holder.session_data             # the least recently used went first
    newest = f"visitor-{server.SESSION_CAPACITY + 19}"
    assert newest in holder.session_data
    # An hour without a request: forgotten; one used just now stays.
    hour_ago = datetime.datetime.now() - datetime.timedelta(seconds=server.SESSION_IDLE_S + 1)
    holder.time_last_used["visitor-30"] = hour_ago
    assert server.forget_idle_sessions(holder) == 1
    assert "visitor-30" not in holder.session_data and newest in holder.session_data
