"""An upload goes when the session that used it ends (the page's unload, or the server
forgetting an idle session), unless another live session used the same file; nothing outside
gradio's upload folder is ever removed."""

from __future__ import annotations

import asyncio
import datetime
import threading
import types

import pytest

from explorer.ui import server, upload_sweep


@pytest.fixture
def folder(tmp_path, monkeypatch):
    root = (tmp_path / "gradio").resolve()
    root.mkdir()
    monkeypatch.setattr(upload_sweep, "upload_folder", lambda: root)
    monkeypatch.setattr(upload_sweep, "_files", {})
    return root


def _upload(root, digest: str, name: str = "qk.npz", size: int = 64):
    path = root / digest / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    return path


def _payload(path):
    """An event's file argument as gradio receives it."""
    return {"path": str(path), "orig_name": path.name, "meta": {"_type": "gradio.FileData"}}


def test_a_sessions_uploads_go_when_it_ends(folder):
    mine, theirs = _upload(folder, "aaa"), _upload(folder, "bbb")
    assert upload_sweep.remember("s1", ["random", None, _payload(mine), 3]) == 1
    assert upload_sweep.remember("s2", [[_payload(theirs)]]) == 1
    assert upload_sweep.sweep("s1") == 1
    assert not mine.exists() and not mine.parent.exists()       # the content hash's folder too
    assert theirs.exists() and upload_sweep.remembered("s2") == {str(theirs)}


def test_a_file_two_sessions_used_stays_until_both_end(folder):
    shared = _upload(folder, "same-content")
    upload_sweep.remember("s1", [_payload(shared)])
    upload_sweep.remember("s2", [_payload(shared)])
    assert upload_sweep.sweep("s1") == 0 and shared.exists()
    assert upload_sweep.sweep("s2") == 1 and not shared.exists()


def test_nothing_outside_the_upload_folder_is_touched(folder, tmp_path):
    outside = tmp_path / "notes.txt"
    outside.write_text("keep me")
    sneaky = folder / ".." / "notes.txt"
    assert upload_sweep.remember("s1", [str(outside), {"path": str(sneaky)}, str(folder)]) == 0
    upload_sweep.sweep("s1")
    assert outside.read_text() == "keep me"


def test_the_server_forgetting_an_idle_session_sweeps_its_uploads(folder):
    old = _upload(folder, "old")
    upload_sweep.remember("idle", [_payload(old)])
    now = datetime.datetime.now()
    holder = types.SimpleNamespace(lock=threading.Lock(), session_data={"idle": {}, "busy": {}},
                                   time_last_used={"idle": now - datetime.timedelta(hours=2), "busy": now})
    assert server.forget_idle_sessions(holder, idle_s=3600, now=now) == 1
    assert not old.exists() and "busy" in holder.session_data


def test_the_page_wires_the_sweep_to_its_events_and_its_unload(folder):
    import app  # noqa: F401  (the environment the app sets before gradio is imported)
    from explorer.ui import build_app

    demo = build_app()
    assert any(fn.fn is upload_sweep.on_unload and any(t[1] == "unload" for t in fn.targets)
               for fn in demo.fns.values())
    # Every event's arguments pass the checks, which note its uploads before gradio runs it.
    path = _upload(folder, "ccc")
    block_fn = next(fn for fn in demo.fns.values() if fn.api_name == "maps")
    with pytest.raises(Exception):     # the arguments are not the event's: only the noting matters here
        asyncio.run(demo.process_api(block_fn=block_fn, inputs=[_payload(path)], state=None, session_hash="page"))
    assert upload_sweep.remembered("page") == {str(path)}
    upload_sweep.on_unload(types.SimpleNamespace(session_hash="page"))
    assert not path.exists()
