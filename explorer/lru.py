"""One bounded cache for every memo of the app: samples read by a model, per-map results,
random feature maps, trained maps and the sessions that hold them.

``LRU`` keeps at most ``max_items`` entries and, when it is given ``size_of``, at most
``max_bytes`` in all; the least recently used entry goes first. The newest entry always
stays, even alone over the byte bound (a sample larger than the bound is still read once,
not on every redraw). Limits may be numbers or functions returning one, so a module's
constant stays the one place a limit is written. Safe across threads. Standard library only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

_MISSING = object()


class LRU:
    """A mapping bounded in entries and, optionally, in bytes; least recently used first out."""

    def __init__(self, max_items=None, max_bytes=None, size_of=None):
        self._max_items, self._max_bytes, self._size_of = max_items, max_bytes, size_of
        self._items: "OrderedDict[object, object]" = OrderedDict()
        self.lock = threading.RLock()         # callers hold it around a look-up and its update

    @staticmethod
    def _limit(limit):
        return limit() if callable(limit) else limit

    def get(self, key, default=None):
        """The value of ``key`` (now the most recently used), or ``default``."""
        with self.lock:
            value = self._items.get(key, _MISSING)
            if value is _MISSING:
                return default
            self._items.move_to_end(key)
            return value

    def peek(self, key, default=None):
        """The value of ``key`` without counting it as used."""
        with self.lock:
            return self._items.get(key, default)

    def put(self, key, value) -> None:
        """Keep ``value`` as the most recently used; drop the oldest entries over the bounds."""
        with self.lock:
            self._items[key] = value
            self._items.move_to_end(key)
            max_items, max_bytes = self._limit(self._max_items), self._limit(self._max_bytes)
            while len(self._items) > 1 and (
                    (max_items is not None and len(self._items) > max_items)
                    or (max_bytes is not None and self._size_of is not None
                        and sum(map(self._size_of, self._items.values())) > max_bytes)):
                self._items.popitem(last=False)

    def pop(self, key, default=None):
        with self.lock:
            return self._items.pop(key, default)

    def clear(self) -> None:
        with self.lock:
            self._items.clear()

    def keys(self) -> list:
        with self.lock:
            return list(self._items)

    def values(self) -> list:
        with self.lock:
            return list(self._items.values())

    def items(self) -> list:
        with self.lock:
            return list(self._items.items())

    def __iter__(self):
        return iter(self.keys())

    def __contains__(self, key) -> bool:
        with self.lock:
            return key in self._items

    def __len__(self) -> int:
        with self.lock:
            return len(self._items)
