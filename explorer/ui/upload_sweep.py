"""Uploads removed when the session that used them ends.

Gradio keeps every uploaded file in its folder (``gradio.utils.get_upload_folder()``, one
sub-folder per content hash) until its hourly ``delete_cache`` sweep finds it an hour old, so a
visitor who uploads a 100 MB array and closes the tab leaves it on disk for up to two hours,
within the per-visitor and global bounds of ``server.py``. Here every event's arguments are
read as gradio receives them (``gradio_checks`` calls ``remember``); the uploaded files among
them are noted against the event's session, and when that session ends (the page's unload
event, or the server forgetting an idle session) its files go, unless another live session
used the same file (identical content shares one path).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import gradio as gr

log = logging.getLogger("explorer")

MAX_SESSIONS = 4096          # sessions remembered at once; the oldest are swept first beyond it

_lock = threading.Lock()
_files: dict[str, set[str]] = {}      # session hash -> the uploaded files its events read


def upload_folder() -> Path:
    return Path(gr.utils.get_upload_folder()).resolve()


def _uploaded(value, folder: Path) -> list[str]:
    """The paths inside ``folder`` among an event's arguments (a file's payload is a dict with
    its "path"; lists of them for several files)."""
    found = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str) and item and len(item) < 4096 and os.sep in item:
            try:
                path = Path(item).resolve()
            except (OSError, ValueError):
                continue
            if path.is_relative_to(folder) and path != folder:
                found.append(str(path))
    return found


def remember(session_hash, inputs) -> int:
    """Note the uploaded files among ``inputs`` as used by ``session_hash``; how many."""
    if not session_hash:
        return 0
    paths = _uploaded(inputs, upload_folder())
    if not paths:
        return 0
    with _lock:
        _files.setdefault(str(session_hash), set()).update(paths)
        while len(_files) > MAX_SESSIONS:          # dicts keep order: the oldest session first
            oldest = next(iter(_files))
            _remove(oldest)
    return len(paths)


def sweep(session_hash) -> int:
    """Delete the files ``session_hash`` uploaded that no other live session uses; how many."""
    with _lock:
        return _remove(str(session_hash))


def _remove(session: str) -> int:
    paths = _files.pop(session, set())
    still_used = set().union(*_files.values()) if _files else set()
    folder = upload_folder()
    removed = 0
    for name in paths - still_used:
        path = Path(name)
        if not path.resolve().is_relative_to(folder):      # only ever gradio's own folder
            continue
        try:
            path.unlink()
            removed += 1
            if path.parent != folder and not any(path.parent.iterdir()):
                path.parent.rmdir()                         # the content hash's folder, now empty
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("could not remove an upload of an ended session: %s", exc)
    return removed


def remembered(session_hash) -> set[str]:
    with _lock:
        return set(_files.get(str(session_hash), ()))


def on_unload(request: gr.Request = None) -> None:
    """The page's unload event: its session's uploads go."""
    session = getattr(request, "session_hash", None)
    if session:
        sweep(session)
