"""A small shared memo for chapter results that do not change while a speaker talks.

Redrawing a chapter with the same text and controls (a language switch, a window resize,
going back a chapter) must not redo seconds of work. Keys name the inputs by value: a
tensor enters a key as a digest of its bytes, so two samples with the same numbers share
results and a changed sample never reuses stale ones.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import torch

MEMO_SIZE = 256

_memo: "OrderedDict[tuple, object]" = OrderedDict()
_lock = threading.Lock()


def tensor_key(*tensors) -> str:
    """A digest of the tensors' shapes, dtypes and bytes."""
    h = hashlib.blake2b(digest_size=16)
    for t in tensors:
        t = torch.as_tensor(t).detach().contiguous().cpu()
        h.update(f"{tuple(t.shape)}{t.dtype}".encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def memo(key: tuple, compute):
    """``compute()`` once per ``key`` (least recently used results are dropped)."""
    with _lock:
        if key in _memo:
            _memo.move_to_end(key)
            return _memo[key]
    value = compute()
    with _lock:
        _memo[key] = value
        while len(_memo) > MEMO_SIZE:
            _memo.popitem(last=False)
    return value


def clear() -> None:
    with _lock:
        _memo.clear()
