"""A page opened on an address does its tab's work once: the page's load fires every tab's
first draw, and only the open tab's reaches the server (``only_on``, a chain stopped in the
browser); of the draws the page fires by itself, only the first with the same inputs runs
(``OpenDraws``)."""

from __future__ import annotations

import hashlib
import threading
import time

from ..core.cache import LRU


def only_on(dependency, wanted: str, which):
    """A step after ``dependency`` that lets its chain go on only where ``which`` (a hidden
    box the page's restore filled: the open tab) holds ``wanted``. It runs in the browser,
    and a script that throws stops gradio's chain there (neither ``then`` nor ``success`` steps
    after it are sent): a page opened on one tab sends nothing for the others."""
    return dependency.then(None, which, None,
                           js=f"(which) => {{ if (which !== {wanted!r}) {{ throw new Error('another tab'); }} }}")


class OpenDraws:
    """A page opened on a data tab's address draws that tab twice by itself: once from its
    load, once from the tab select the load's restore makes. Both read the same inputs
    before either has drawn, so each computed the view and the browser drew every figure
    twice. The second of two such draws with the same inputs for the same page, within
    ``WINDOW_S``, sends nothing: the first one's figures land. A person's own redraws (the
    panel, the controls, Run) are not counted here, and after the window a draw runs again
    (a first draw that failed)."""
    WINDOW_S = 30.0

    def __init__(self, size: int = 512):
        self._seen, self._lock = LRU(size), threading.Lock()    # (page, tab) -> (inputs' digest, when)

    def first(self, request, tab_id: str, args) -> bool:
        session = getattr(request, "session_hash", None)
        if not session:
            return True
        key, digest, now = (session, tab_id), hashlib.sha1(repr(args).encode()).hexdigest(), time.monotonic()
        with self._lock:
            seen = self._seen.peek(key)
            if seen is not None and seen[0] == digest and now - seen[1] < self.WINDOW_S:
                return False
            self._seen.put(key, (digest, now))
        return True


OPEN_DRAWS = OpenDraws()
