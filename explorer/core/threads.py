"""Small work on one thread.

A chapter's arithmetic is small (a sentence of tokens, a few heads, 32-dimensional vectors):
split over torch's intra-op threads, each tiny op pays the threads' hand-over, and on a busy
two-core machine that made a chapter 10-25 times slower (the hybrid curve: 0.5 s on one
thread, 7-12 s on two, measured in the same process). ``one_thread()`` runs a block on one
thread. Torch keeps this count per calling thread (OpenMP's setting), so the block changes
its own thread only, and puts back what that thread had: a request running at the same
time in another thread keeps its own count. Work that is large or timed (chapter 2's
measured orders, the complexity tab) does not use it.
"""

from __future__ import annotations

import contextlib

import torch


@contextlib.contextmanager
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
