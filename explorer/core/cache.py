"""One bounded least-recently-used cache for every memo of the engine, the views and the page.

Bounded by a count, by a total weight (bytes, say), or both; the least recently used entry
goes first, and the newest always stays, even when it alone is over the weight bound (a
request larger than the bound is still answered twice in a row without recomputing).
Safe across threads. ``get(key, compute)`` computes a missing key once: a second thread
asking for it meanwhile waits for the first one's result (a page load can ask for the same
chapter from several events at once, and two copies of the work would halve the speed of
each); a computation that fails is not remembered.

Standard library only: the page's own caches use it before torch is imported.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from typing import Callable, Hashable


class LRU:
    """At most ``size`` entries (None: no count bound) and at most ``max_weight`` in total of
    ``weigh(value)`` (when both are given), least recently used dropped first.

    ``lock`` is held by every method (re-entrant): hold it too around a read-modify-write
    of one entry's value.
    """

    def __init__(self, size: int | None = None, *, max_weight: float | None = None,
                 weigh: Callable[[object], float] | None = None):
        if (max_weight is None) != (weigh is None):
            raise ValueError("max_weight and weigh go together")
        self.size = None if size is None else int(size)
        self.max_weight = max_weight
        self._weigh = weigh
        self._items: "OrderedDict[Hashable, object]" = OrderedDict()
        self._weights: dict[Hashable, float] = {}
        self._total = 0.0
        self.lock = threading.RLock()
        self._running: dict[Hashable, threading.Event] = {}

    # -- plain access ---------------------------------------------------------------------

    def get(self, key: Hashable, compute: Callable[[], object] | None = None):
        """The value of ``key`` (it becomes the most recent), or None when absent. With
        ``compute``: a missing value is ``compute()``, stored, and computed once per key
        while it stays in the cache, however many threads ask for it together."""
        if compute is not None:
            return self._get_or_compute(key, compute)
        with self.lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def copy_of(self, key: Hashable | None, compute: Callable[[], object]):
        """``get(key, compute)`` handed out as a deep copy: a caller may write into what it
        gets (a view's arrays) and the kept value stays as computed. ``key`` None: computed
        afresh and kept nowhere (a result that must not be shared, a session's own map)."""
        if key is None:
            return compute()
        return copy.deepcopy(self.get(key, compute))

    def peek(self, key: Hashable, default=None):
        """The value of ``key`` without making it more recent; ``default`` when absent."""
        with self.lock:
            return self._items.get(key, default)

    def put(self, key: Hashable, value) -> None:
        """Store ``value`` as the most recent entry, then drop the oldest beyond the bounds."""
        with self.lock:
            self._discard(key)
            self._items[key] = value
            if self._weigh is not None:
                weight = self._weigh(value)
                self._weights[key] = weight
                self._total += weight
            if self.size is not None:
                while len(self._items) > self.size:
                    self._discard(next(iter(self._items)))
            if self.max_weight is not None:
                while len(self._items) > 1 and self._total > self.max_weight:
                    self._discard(next(iter(self._items)))

    def pop(self, key: Hashable, default=None):
        with self.lock:
            value = self._items.get(key, default)
            self._discard(key)
            return value

    def clear(self) -> None:
        with self.lock:
            self._items.clear()
            self._weights.clear()
            self._total = 0.0

    def items(self) -> list[tuple[Hashable, object]]:
        """(key, value) pairs, least recent first: a snapshot."""
        with self.lock:
            return list(self._items.items())

    def values(self) -> list:
        with self.lock:
            return list(self._items.values())

    def __iter__(self):
        with self.lock:
            return iter(list(self._items))

    def __contains__(self, key) -> bool:
        with self.lock:
            return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    # -- internals ------------------------------------------------------------------------

    def _discard(self, key) -> None:
        if key in self._items:
            del self._items[key]
            self._total -= self._weights.pop(key, 0.0)

    def _get_or_compute(self, key, compute):
        while True:
            with self.lock:
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
            self.put(key, value)
            return value
        finally:
            with self.lock:
                del self._running[key]
            done.set()
