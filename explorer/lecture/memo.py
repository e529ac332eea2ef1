"""Small shared memos for chapter results that do not change while a speaker talks.

Redrawing a chapter with the same text and controls (a language switch, a window resize,
going back a chapter) must not redo seconds of work. Keys name the inputs by value: a
tensor enters a key as a digest of its bytes, so two samples with the same numbers share
results and a changed sample never reuses stale ones.

``memo(key, compute)`` uses the lecture's general memo; results that are large or few
(the model's attention outputs, hybrid curves) keep their own ``LRU`` of a size that fits them.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

MEMO_SIZE = 256


def tensor_key(*tensors) -> str:
    """A digest of the tensors' shapes, dtypes and bytes."""
    import torch            # here, not at the top: the page's caches (ui/lecture_tab.py) need no torch

    h = hashlib.blake2b(digest_size=16)
    for t in tensors:
        t = torch.as_tensor(t).detach().contiguous().cpu()
        h.update(f"{tuple(t.shape)}{t.dtype}".encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


class LRU:
    """At most ``size`` results, the least recently used dropped first; safe across threads.
    A key being computed is computed once: a second thread asking for it meanwhile waits
    for the first one's result (a page load can ask for the same chapter from several
    events at once, and two copies of a chapter's work would halve the speed of each)."""

    def __init__(self, size: int):
        self.size = int(size)
        self._items: "OrderedDict[tuple, object]" = OrderedDict()
        self._lock = threading.Lock()
        self._running: dict[tuple, threading.Event] = {}

    def get(self, key: tuple, compute):
        """``compute()`` once per ``key`` while it stays among the ``size`` most recent."""
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]
                running = self._running.get(key)
                if running is None:
                    done = self._running[key] = threading.Event()
                    break
            running.wait()          # the other thread's result, or its failure: then try again
        try:
            value = compute()
            with self._lock:
                self._items[key] = value
                self._items.move_to_end(key)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
            return value
        finally:
            with self._lock:
                del self._running[key]
            done.set()

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_memo = LRU(MEMO_SIZE)


def memo(key: tuple, compute):
    """``compute()`` once per ``key`` in the lecture's general memo."""
    return _memo.get(key, compute)


def clear() -> None:
    _memo.clear()
