"""The causal model converted when a Space starts, before the lecture is warmed.

A Space assembled by ``python -m explorer space`` holds the causal model's GGUF file but no
converted copy: converting it takes about a minute. On a Space (``SPACE_ID`` set) ``app.py``
marks the conversion as expected before the server answers (``expect``) and runs it in its
warm-up thread (``convert``), before the lecture's chapters are drawn into the caches. A
lecture request that arrives meanwhile waits for it (``wait``), saying what it waits for in the
page's language, so the deck reads the causal model from its first slide instead of starting
on MiniLM. Standard library and the catalogue only until the conversion itself runs.
"""

from __future__ import annotations

import logging
import os
import threading

from .. import catalog
from ..text import Message, ModelName

POLL_S = 0.5

_lock = threading.Lock()
_state: dict = {"pending": False, "fraction": 0.0, "message": None}
_done = threading.Event()
_done.set()


def wanted() -> bool:
    """Whether this start converts the causal model: on a Space (SPACE_ID set) where it is
    installed (or its folder is in the Space's repository) but not yet converted."""
    return (bool(os.environ.get("SPACE_ID", "").strip()) and catalog.causal_model_installed()
            and not catalog.causal_model_ready())


def expect() -> bool:
    """Mark the conversion as coming, before the server answers its first request: a lecture
    request arriving before the warm-up thread has started it waits all the same."""
    if not wanted():
        return False
    with _lock:
        _state.update(pending=True, fraction=0.0, message=None)
        _done.clear()
    return True


def pending() -> bool:
    return bool(_state["pending"])


def convert(printed=True) -> bool:
    """Convert the causal model if ``expect`` marked it (run in the warm-up thread); its
    progress goes to the log and to whoever waits (``wait``). True when it converted it. A
    failure is logged and ends the wait: the lecture then reads the embedded model."""
    if not pending():
        return False
    from ..sources import packaged

    echo = packaged.printed_progress() if printed else None

    def tell(fraction, message):
        _state.update(fraction=float(fraction), message=message)
        if echo is not None:
            echo(fraction, message)
    try:
        packaged.ready_folder(packaged.SMOLLM2, progress=tell)
        return True
    except Exception:
        logging.getLogger("explorer").exception("converting the causal model at start failed")
        return False
    finally:
        give_up()


def give_up() -> None:
    """End the wait for a conversion that will not run (the warm-up failed before it)."""
    with _lock:
        _state["pending"] = False
        _done.set()


def waiting_message() -> Message:
    """What a request waits for, while the start's conversion runs."""
    return Message("sources.start_wait", name=ModelName(catalog.CAUSAL_MODEL["name"]),
                   converting=_state["message"] or "")


def wait(progress=None, poll_s: float = POLL_S) -> bool:
    """Wait until the start's conversion, if one is expected or running, has ended, telling
    ``progress(fraction, message)`` (a ``Message``) what it waits for every ``poll_s``
    seconds. True when it waited."""
    if not pending():
        return False
    while not _done.is_set():
        if progress is not None:
            progress(_state["fraction"], waiting_message())
        _done.wait(poll_s)
    return True
