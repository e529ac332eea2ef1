"""Extra peak memory of one call (``measure_peak_bytes``). CUDA reads the allocator's peak.
On Linux CPUs torch has no peak counter, so the process's RSS high-water mark is reset and
read around the call, which runs in a fresh thread (``_in_fresh_thread``) with glibc's
mmap threshold lowered through ``mallopt`` (``_exact_heap``), so that the mark follows the
call's live buffers and not what earlier work left in the heap.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Callable

import torch

from .device import _device, _sync

_LIBC = None
_M_MMAP_THRESHOLD = -3            # glibc mallopt parameter
_MMAP_SMALL = 128 << 10           # glibc's initial threshold: every tensor buffer gets its own mmap
_MMAP_LARGE = 32 << 20            # the ceiling glibc's own dynamic threshold climbs to


def _glibc():
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL("libc.so.6")
            _LIBC.malloc_trim, _LIBC.mallopt  # noqa: B018 - both must exist
        except (OSError, AttributeError):
            _LIBC = False
    return _LIBC or None


def _exact_heap(on: bool) -> None:
    """Make the RSS high-water mark follow live tensor buffers during a measurement.

    glibc raises its mmap threshold (up to 32 MiB) after big buffers are freed, so later
    buffers come from the heap, where freed chunks stay resident and fragmentation inflates
    RSS (chunked N=65536: ~85 MB of RSS for a 45 MB live peak, varying run to run). While
    measuring, every buffer over 128 KiB is its own mmap, returned on free; afterwards the
    threshold is pinned at glibc's own ceiling, which a warm process reaches anyway, so
    timings keep reusing heap memory as before.
    """
    libc = _glibc()
    if libc is None:
        return  # not glibc: the measurement is just less strict
    libc.malloc_trim(0)  # hand back what earlier runs left resident before resetting the mark
    libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_SMALL if on else _MMAP_LARGE)


def _status_kb(field_name: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    raise OSError(f"{field_name} not in /proc/self/status")


def measure_peak_bytes(fn: Callable, device="cpu"):
    """Run ``fn()`` once; return (its result, extra peak bytes or None where unmeasurable).

    CUDA: the allocator's peak above what was allocated before the call. CPU (Linux): torch
    has no peak counter, so reset the process's RSS high-water mark (write 5 to
    /proc/self/clear_refs) and read VmHWM after the call; extra peak = VmHWM - VmRSS before.
    The call runs in a fresh thread, whose malloc arena holds none of the free chunks that
    earlier work left in the main heap, and every large buffer is its own mmap, handed back
    on free (``_exact_heap``): so the high-water mark follows this call's live buffers.
    Measured in the main thread after timing runs, the same call read up to 2x high
    (chunked at N=65536: 60-72 MB against 44 MB).
    """
    dev = _device(device)
    if dev.type == "cuda":
        _sync(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        base = torch.cuda.memory_allocated(dev)
        out = fn()
        _sync(dev)
        return out, max(0, torch.cuda.max_memory_allocated(dev) - base)
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        _status_kb("VmHWM")
    except OSError:
        return fn(), None
    return _in_fresh_thread(_rss_peak, fn)


def _rss_peak(fn: Callable):
    _exact_heap(True)
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        before = _status_kb("VmRSS")
        out = fn()
        return out, max(0, _status_kb("VmHWM") - before) * 1024
    finally:
        _exact_heap(False)


def _in_fresh_thread(work: Callable, *args):
    """``work(*args)`` in a new thread, under the caller's grad and inference modes
    (torch keeps those per thread); its exception, if any, is raised here."""
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
    box = {}

    def run():
        try:
            with torch.inference_mode(inference), torch.set_grad_enabled(grad):
                box["value"] = work(*args)
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc

    thread = threading.Thread(target=run, name="bench-memory")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
