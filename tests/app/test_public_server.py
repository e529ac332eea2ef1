"""One visitor cannot fill the server: a request body over the cap is
refused before it is read, and each session has a share of the queue, so 16 visitors
sending 5 events each leave room for a 17th. Loopback only, bounded."""

from __future__ import annotations

import json
import socket
import uuid
from urllib.parse import urlsplit

import httpx
import pytest

from explorer.ui import server
from helpers.server import held_server

pytestmark = pytest.mark.slow

FIFTY_MB = 50 * 2 ** 20


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_a_50_mb_body_is_refused_before_it_is_sent(app_url):
    parts = urlsplit(app_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(b"POST /gradio_api/queue/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {FIFTY_MB}\r\n\r\n".encode() + b'{"data": ["')
        head = _answer(sock)               # the server answers without waiting for the 50 MB
    assert head.startswith(b"HTTP/1.1 413"), head[:200]


def test_a_50_mb_body_sent_in_chunks_is_refused_once_past_the_cap(app_url):
    parts = urlsplit(app_url)
    chunk = b"x" * 2 ** 20
    sent = 0
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(b"POST /gradio_api/queue/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        try:
            while sent < FIFTY_MB:
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += len(chunk)
        except OSError:                    # the server stopped reading: it has answered
            pass
        head = _answer(sock)
    assert head.startswith(b"HTTP/1.1 413"), head[:200]
    assert b"larger than" in head or sent < FIFTY_MB


def test_an_ordinary_request_still_passes_the_guard(app_url):
    response = httpx.get(f"{app_url}gradio_api/info", timeout=60)
    assert response.status_code == 200
    assert "form-action 'self'" in response.headers["content-security-policy"]


@pytest.fixture()
def held_app():
    """A small app with the server's queue settings and guard, whose ``hold`` event keeps its
    worker: whatever is joined meanwhile waits in the queue (tests/helpers/server.py)."""
    with held_server() as demo:
        yield demo.local_url, demo


def _join(client: httpx.Client, url: str, fn_index: int, session: str) -> httpx.Response:
    body = {"data": ["x"], "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None}
    # Each session a visitor of its own address (the queue is also shared per address:
    # test_hostile_queue.py); uvicorn takes X-Forwarded-For from a proxy on this host.
    address = "10.0.%d.%d" % tuple(uuid.uuid5(uuid.NAMESPACE_OID, session).bytes[:2])
    return client.post(f"{url}gradio_api/queue/join", content=json.dumps(body),
                       headers={"Content-Type": "application/json", "X-Forwarded-For": address})


def test_sessions_joining_past_their_share_leave_room_for_a_late_one(held_app):
    url, demo = held_app
    fn_index = next(i for i, fn in demo.fns.items() if fn.api_name == "hold")
    joins = server.SESSION_SHARE + 2
    with httpx.Client(timeout=30) as client:
        answers = [_join(client, url, fn_index, f"visitor-{s}") for s in range(16) for _ in range(joins)]
        refused = [a for a in answers if a.status_code != 200]
        assert refused and all(a.status_code == 503 for a in refused)
        assert "requests waiting" in refused[0].text
        late = _join(client, url, fn_index, uuid.uuid4().hex)
        assert late.status_code == 200, late.text
