"""One stop signal per request: the visitor left (or cancelled), or the request ran past
its hard deadline.

Long loops (training steps, the complexity sweep, maps over many draws) ask the signal at
every step, so work nobody waits for ends within one step of being abandoned:

    stop = StopSignal(left=visitor_left, seconds=cost.LIMIT_SECONDS)
    for step in range(steps):
        stop.check()                 # raises Stopped, or PastDeadline with the limit in its words
        ...

``StopSignal()`` never stops (scripts and tests). Nothing here imports gradio: the edge
hands in ``left``, a function that turns true once the visitor has gone.
"""

from __future__ import annotations

import math
import time

from .text import Message


class Stopped(Exception):
    """The visitor left or asked to stop: nobody reads an answer, the work just ends."""


class PastDeadline(ValueError):
    """The request ran past the server's hard limit on one request's time."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.message = Message("cost.past_deadline", limit=f"{seconds:,.0f}")
        super().__init__(str(self.message))

    def say(self, lang: str = "en") -> str:
        return self.message.say(lang)


class StopSignal:
    """Whether a request's work should end now. ``left()``: the visitor has gone (None:
    never); ``seconds``: the hard deadline, counted from now (None or inf: none)."""

    def __init__(self, left=None, seconds: float | None = None):
        self.left = left
        self.seconds = math.inf if seconds is None else float(seconds)
        self.deadline = time.monotonic() + self.seconds

    def gone(self) -> bool:
        return self.left is not None and bool(self.left())

    def past_deadline(self) -> bool:
        return time.monotonic() > self.deadline

    def __call__(self) -> bool:
        """True when the work should end (the ``should_stop()`` the engine's loops accept)."""
        return self.gone() or self.past_deadline()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise ``Stopped`` when the visitor left, ``PastDeadline`` when time is up."""
        if self.gone():
            raise Stopped("the visitor left")
        if self.past_deadline():
            raise PastDeadline(self.seconds)


NEVER = StopSignal()


def check(should_stop) -> None:
    """``should_stop`` is a StopSignal, a plain function (true: stop) or None: raise as it says."""
    if should_stop is None:
        return
    if isinstance(should_stop, StopSignal):
        should_stop.check()
    elif should_stop():
        raise Stopped("stopped")
