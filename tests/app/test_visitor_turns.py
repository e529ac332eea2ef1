"""Issue 40, item 1: a visitor's share of the heavy lanes. The queue's share bounds how many
events one address may have; within a group's line, visitors then take turns, so another
visitor's request runs as soon as a lane frees, not after the flooder's sixteen."""

from __future__ import annotations

import types
from collections import Counter

import gradio as gr

from explorer.ui import server

FLOODER, HONEST = "203.0.113.7", "198.51.100.20"


def _event(address, name, group="compute"):
    request = types.SimpleNamespace(headers=types.SimpleNamespace(getlist=lambda _: []),
                                    client=types.SimpleNamespace(host=address))
    fn = types.SimpleNamespace(concurrency_id=group, batch=False)
    return types.SimpleNamespace(request=request, fn=fn, name=name)


def test_visitors_take_turns_and_keep_their_own_order():
    line = [_event(FLOODER, f"f{i}") for i in range(6)] + [_event(HONEST, "h0"), _event(HONEST, "h1")]
    running = Counter({(FLOODER, "compute"): 2})
    order = [event.name for event in server.turn_order(line, running, "compute")]
    # The honest visitor runs nothing and the flooder two: the honest events' turns are 1 and 2,
    # the flooder's 3 to 8. Each visitor's own events stay in the order they came.
    assert order == ["h0", "h1", "f0", "f1", "f2", "f3", "f4", "f5"]
    # Both running as much: they alternate, the first to come first.
    mixed = [_event(FLOODER, "f0"), _event(FLOODER, "f1"), _event(HONEST, "h0"), _event(HONEST, "h1")]
    assert [e.name for e in server.turn_order(mixed, Counter(), "compute")] == ["f0", "h0", "f1", "h1"]
    assert [name for name in order if name.startswith("f")] == [f"f{i}" for i in range(6)]
    # One visitor alone: first come, first served, as gradio does.
    alone = [_event(FLOODER, f"f{i}") for i in range(4)]
    assert server.turn_order(alone, Counter(), "compute") == alone


def test_the_queue_picks_the_next_event_in_turn():
    with gr.Blocks() as demo:
        box = gr.Textbox()
        box.submit(lambda x: x, box, box, concurrency_id="compute")
    server.configure_queue(demo, public=True)
    queue = demo._queue
    flood = [_event(FLOODER, f"f{i}") for i in range(16)]
    honest = _event(HONEST, "h0")
    queue.event_queue_per_concurrency_id = {
        "compute": types.SimpleNamespace(queue=flood + [honest], concurrency_limit=server.LANES, current_concurrency=3)}
    queue.active_jobs = [[_event(FLOODER, "r0")], [_event(FLOODER, "r1")], [_event(FLOODER, "r2")], None]
    events, batch, group = queue.get_events()
    assert events == [honest] and group == "compute" and not batch
    assert queue.event_queue_per_concurrency_id["compute"].queue == flood      # the rest wait as they came
