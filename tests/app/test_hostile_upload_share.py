"""Issue 40 (what to build, point 3): uploads on disk are bounded per visitor and for the
whole server. Gradio bounds one file and sweeps its folder every so often; between sweeps,
five distinct 100 MiB uploads were stored in 3.7 s. Here the bounds are shrunk so that a few
small files reach them. Loopback only."""

from __future__ import annotations

import gradio as gr
import httpx
import pytest

from explorer.ui import server

pytestmark = pytest.mark.slow          # starts a server

KB = 2 ** 10


@pytest.fixture()
def upload_app(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    with gr.Blocks() as demo:
        gr.File()
    server.configure_queue(demo, public=True)
    demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                app_kwargs=server.app_kwargs())
    try:
        yield demo.local_url
    finally:
        demo.close()


def _upload(url: str, address: str, size: int, name: str, lang: str = "en") -> httpx.Response:
    headers = {"X-Forwarded-For": address, "Referer": f"{url}?lang={lang}"}
    return httpx.post(f"{url}gradio_api/upload", files={"files": (name, b"x" * size)}, headers=headers, timeout=30)


def test_one_address_uploads_its_share_and_another_still_can(upload_app, monkeypatch):
    monkeypatch.setattr(server, "VISITOR_UPLOAD_BYTES", 300 * KB)
    first = _upload(upload_app, "203.0.113.7", 200 * KB, "a.npy")
    assert first.status_code == 200, first.text
    second = _upload(upload_app, "203.0.113.7", 200 * KB, "b.npy")
    assert second.status_code == 413 and "may upload 0 MB within 60 minutes" in second.json()["error"]
    chinese = _upload(upload_app, "203.0.113.7", 150 * KB, "c.npy", lang="zh")
    assert chinese.status_code == 413 and "最多可上传" in chinese.json()["error"]
    other = _upload(upload_app, "198.51.100.20", 200 * KB, "d.npy")
    assert other.status_code == 200, other.text


def test_no_upload_is_taken_while_the_folder_is_full(upload_app, monkeypatch):
    assert _upload(upload_app, "203.0.113.8", 100 * KB, "a.npy").status_code == 200
    monkeypatch.setattr(server, "ALL_UPLOADS_BYTES", server.stored_upload_bytes())
    full = _upload(upload_app, "198.51.100.21", 10 * KB, "b.npy")
    assert full.status_code == 413 and "as many uploaded files as it may keep" in full.json()["error"]
