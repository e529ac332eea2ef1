"""Long work handed on as it goes: ``streamed(work)`` runs ``work(emit, should_stop)`` on a
worker thread and yields each value it emits, so the caller (a page streaming tokens or a
training's progress) shows them as they come.

The worker's error is raised on the caller's thread. Closing the iterator (the visitor left,
or the page cancelled the event) makes ``should_stop()`` true, so the worker ends at its next
check; ``stop`` (a StopSignal or a function) is asked too.
"""

from __future__ import annotations

import queue
import threading

from ..measure import budget

_DONE, _ERROR, _VALUE = "done", "error", "value"


def streamed(work, stop=None, name: str = "streamed"):
    """Yield what ``work(emit, should_stop)`` emits, then end when it returns."""
    out: queue.Queue = queue.Queue()
    closed = threading.Event()

    def should_stop() -> bool:
        return closed.is_set() or (stop is not None and bool(stop()))

    def run():
        try:
            with budget.request():      # the work's memory is held from the server's budget while it runs
                work(lambda value: out.put((_VALUE, value)), should_stop)
            out.put((_DONE,))
        except BaseException as exc:    # handed to the caller's thread, raised there
            out.put((_ERROR, exc))

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    try:
        while True:
            item = out.get()
            if item[0] == _DONE:
                return
            if item[0] == _ERROR:
                raise item[1]
            yield item[1]
    finally:
        closed.set()
