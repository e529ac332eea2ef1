"""Small shared memos for chapter results that do not change while a speaker talks.

Redrawing a chapter with the same text and controls (a language switch, a window resize,
going back a chapter) must not redo seconds of work. Keys name the inputs by value: a
tensor enters a key as a digest of its bytes, so two samples with the same numbers share
results and a changed sample never reuses stale ones.

``memo(key, compute)`` uses the lecture's general memo; results that are large or few
(the model's attention outputs, hybrid curves) keep their own ``LRU`` (``explorer.core.cache``)
of a size that fits them.
"""

from __future__ import annotations

import hashlib

from ..core.cache import LRU  # noqa: F401  (the chapters' own memos are LRUs too)

MEMO_SIZE = 256


def tensor_key(*tensors) -> str:
    """A digest of the tensors' shapes, dtypes and bytes."""
    import torch            # here, not at the top: the page's caches (ui/lecture_handlers.py) need no torch

    h = hashlib.blake2b(digest_size=16)
    for t in tensors:
        t = torch.as_tensor(t).detach().contiguous().cpu()
        h.update(f"{tuple(t.shape)}{t.dtype}".encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


_memo = LRU(MEMO_SIZE)


def memo(key: tuple, compute):
    """``compute()`` once per ``key`` in the lecture's general memo."""
    return _memo.get(key, compute)


def clear() -> None:
    _memo.clear()
