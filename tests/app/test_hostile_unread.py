"""Issue 40, break 2: no work without a reader. One POST /gradio_api/call/complexity of a
16...131,072 sweep whose result stream was never opened kept the server at 80-136 % CPU for
about 60 s; a stream opened and then closed stopped the work only after 9-10 s. Now an event
with no result stream open (by session or by event id) for a second stops at its next check
(server.visitor_left), and one that waited in the queue unread is not run at all.
The stand-in for a heavy loop burns the CPU and asks the same stop signal as the app's
sweeps, trainings and maps. Loopback only, bounded."""

from __future__ import annotations

import json
import time

import gradio as gr
import httpx
import pytest

from explorer.stopping import Stopped, StopSignal
from explorer.ui import server

pytestmark = pytest.mark.slow          # starts a server; waits out the grace


@pytest.fixture(scope="module")
def burning_app():
    """``burn`` works the CPU for the seconds it is asked, asking the stop signal as it goes,
    and records what it used; one at a time, so that a second one waits in the queue."""
    runs: dict = {}

    def burn(tag, request: gr.Request):
        seconds = float(tag.split(":")[0])
        stop = StopSignal(left=server.visitor_left(request), seconds=60)
        record = runs.setdefault(tag, {"ended": None})
        cpu, start = time.thread_time(), time.monotonic()
        try:
            while time.monotonic() - start < seconds:
                sum(range(20_000))
                stop.check()
            record["ended"] = "done"
        except Stopped:
            record["ended"] = "stopped"
        record["cpu_s"] = time.thread_time() - cpu
        return tag

    with gr.Blocks() as demo:
        box = gr.Textbox()
        box.submit(burn, box, box, api_name="burn", concurrency_limit=1, concurrency_id="burn")
    server.configure_queue(demo, public=True)
    demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                app_kwargs=server.app_kwargs())
    try:
        yield demo.local_url, runs
    finally:
        demo.close()


def _post(client: httpx.Client, url: str, tag: str) -> str:
    answer = client.post(f"{url}gradio_api/call/burn", content=json.dumps({"data": [tag]}),
                         headers={"Content-Type": "application/json"})
    assert answer.status_code == 200, answer.text
    return answer.json()["event_id"]


def _ended(runs: dict, tag: str, within_s: float = 60) -> dict:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if runs.get(tag, {}).get("ended"):
            return runs[tag]
        time.sleep(0.1)
    raise AssertionError(f"{tag} did not end within {within_s} s: {runs.get(tag)}")


def test_a_post_never_read_costs_under_2_s_of_cpu(burning_app):
    url, runs = burning_app
    with httpx.Client(timeout=30) as client:
        _post(client, url, "20:never-read")
    run = _ended(runs, "20:never-read")
    assert run["ended"] == "stopped" and run["cpu_s"] < 2.0, run


def test_a_stream_opened_and_closed_stops_the_work(burning_app):
    url, runs = burning_app
    with httpx.Client(timeout=30) as client:
        event_id = _post(client, url, "20:left")
        with client.stream("GET", f"{url}gradio_api/call/burn/{event_id}"):
            time.sleep(0.5)                                   # read a while, then go
    run = _ended(runs, "20:left")
    assert run["ended"] == "stopped" and run["cpu_s"] < 2.5, run


def test_a_read_result_runs_to_its_end_and_an_unread_one_waiting_behind_it_never_starts(burning_app):
    url, runs = burning_app
    with httpx.Client(timeout=60) as client:
        read = _post(client, url, "3:read")
        _post(client, url, "0.5:unread behind")                # waits 3 s in the queue, nobody reading
        answer = client.get(f"{url}gradio_api/call/burn/{read}").text
    assert "event: complete" in answer and runs["3:read"]["ended"] == "done"
    time.sleep(1.5)                                            # what is left in the queue has its turn
    assert "0.5:unread behind" not in runs
