"""Giving memory back to the system between requests (glibc only; elsewhere a no-op).

A request of the N x N tabs allocates and frees hundreds of MB of tensor buffers. glibc
keeps freed heap memory resident, and every server thread gets its own malloc arena, so a
long-running server's RSS climbs towards (threads x largest request) and stays there.
Two remedies, both through ctypes and both guarded (musl, macOS: nothing happens):

- ``limit_arenas``: at start-up, before the server's threads exist, cap the number of
  arenas (the MALLOC_ARENA_MAX variable, set from inside the process);
- ``release_after_request``: after a request, ``malloc_trim(0)`` returns the free pages of
  every arena; throttled, since a trim walks the whole heap.

Standard library only: the UI calls this before the engine (torch) is imported.
"""

from __future__ import annotations

import ctypes
import threading
import time

M_ARENA_MAX = -8                 # glibc mallopt parameter
TRIM_INTERVAL_S = 1.0            # at most one trim a second, whatever the request rate

_libc = None
_lock = threading.Lock()
_last_trim = 0.0


def _glibc():
    global _libc
    if _libc is None:
        try:
            lib = ctypes.CDLL("libc.so.6")
            lib.malloc_trim.argtypes = [ctypes.c_size_t]
            lib.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
            _libc = lib
        except (OSError, AttributeError):
            _libc = False
    return _libc or None


def limit_arenas(count: int = 2) -> bool:
    """Cap glibc's malloc arenas at ``count``; True when it was applied."""
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, int(count)) == 1)


def trim() -> bool:
    """Hand free heap pages back to the system now; True when glibc released any."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))


def release_after_request(now: float | None = None) -> bool:
    """Trim after a request, at most once per TRIM_INTERVAL_S; True when a trim ran."""
    global _last_trim
    now = time.monotonic() if now is None else now
    with _lock:
        if now - _last_trim < TRIM_INTERVAL_S:
            return False
        _last_trim = now
    trim()
    return True


def rss_bytes() -> int | None:
    """This process's resident set size (Linux), or None."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * _page_size()
    except (OSError, ValueError, IndexError):
        return None


def _page_size() -> int:
    import os
    return os.sysconf("SC_PAGE_SIZE")
