"""Issue 40, break 1: one visitor is one client address, whatever session hashes it invents.
Before, the queue's share was per session hash: 22 invented hashes x 6 joins filled the
128-event queue in 3.1 s, and honest visitors then got "503 Queue is full". Now one address
may have VISITOR_SHARE events waiting or running; a flood from invented hashes at one address
is refused past that, in words, while another address still gets answers. Loopback only:
uvicorn takes X-Forwarded-For from a proxy on this host, so each test client names its
address there, as the proxy in front of a server would."""

from __future__ import annotations

import json
import types
import uuid

import httpx
import pytest
from starlette.datastructures import Headers

from explorer.ui import server
from helpers.server import held_server

FLOODER, HONEST = "203.0.113.7", "198.51.100.20"


@pytest.fixture()
def held_app():
    """The server's queue settings and guard, public; ``hold`` keeps its one worker, ``echo``
    answers at once (tests/helpers/server.py)."""
    with held_server(public=True) as demo:
        yield demo


def _join(client: httpx.Client, demo, api_name: str, session: str, address: str) -> httpx.Response:
    fn_index = next(i for i, fn in demo.fns.items() if fn.api_name == api_name)
    body = {"data": ["x"], "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None}
    return client.post(f"{demo.local_url}gradio_api/queue/join", content=json.dumps(body),
                       headers={"Content-Type": "application/json", "X-Forwarded-For": address})


@pytest.mark.slow                      # starts a server
def test_a_flood_from_invented_sessions_at_one_address_leaves_the_queue_to_others(held_app):
    demo = held_app
    with httpx.Client(timeout=30) as client:
        answers = [_join(client, demo, "hold", uuid.uuid4().hex, FLOODER)
                   for _ in range(40) for _ in range(server.SESSION_SHARE)]          # 240 joins, 40 sessions
        taken = [a for a in answers if a.status_code == 200]
        refused = [a for a in answers if a.status_code != 200]
        assert len(taken) == server.VISITOR_SHARE, len(taken)
        assert refused and "Your address already has 16 requests waiting or running" in refused[0].text
        assert not any("Queue is full" in a.text for a in refused)
        # Another address is answered, while the flood holds its share.
        session = uuid.uuid4().hex
        joined = _join(client, demo, "echo", session, HONEST)
        assert joined.status_code == 200, joined.text
        with client.stream("GET", f"{demo.local_url}gradio_api/queue/data", params={"session_hash": session},
                           headers={"X-Forwarded-For": HONEST}) as stream:
            completed = next(line for line in stream.iter_lines() if "process_completed" in line)
        assert '"success":true' in completed.replace(" ", "")
        # The flooder is still refused, whatever new session it invents.
        assert _join(client, demo, "hold", uuid.uuid4().hex, FLOODER).status_code == 503


def _request(client: str, *forwarded: str):
    headers = Headers(raw=[(b"x-forwarded-for", value.encode()) for value in forwarded])
    return types.SimpleNamespace(client=types.SimpleNamespace(host=client), headers=headers)


def test_on_a_space_the_address_is_the_one_the_proxy_appends(monkeypatch):
    monkeypatch.setenv("SPACE_ID", "someone/explorer")
    # What a client writes into the header itself stands left of what the proxy appends.
    assert server.visitor_address(_request("10.0.0.2", "6.6.6.6, 203.0.113.7")) == "203.0.113.7"
    assert server.visitor_address(_request("10.0.0.2", "6.6.6.6", "203.0.113.7")) == "203.0.113.7"
    assert server.visitor_address(_request("10.0.0.2")) == "10.0.0.2"


def test_elsewhere_the_address_is_the_sockets_peer(monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert server.visitor_address(_request("192.0.2.1", "6.6.6.6")) == "192.0.2.1"
    assert server.visitor_address(None) == "unknown"


def test_the_refusal_is_said_in_chinese_on_the_chinese_page():
    from explorer.text import say

    assert "网络地址" in say("common.queue_visitor_share", "zh", count=16)
