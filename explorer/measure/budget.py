"""One budget for the whole server: the memory the cost model grants at once, and how many
heavy requests run at once, whatever tab or event group they come from.

Every view prices its work with ``cost.check(cost.estimate(...))`` before allocating; inside
a request (the UI's handlers open one) that check also takes the estimate's bytes from this
budget, and the request gives them back when it ends:

    with budget.request():           # the handler wrapper, once per request
        ...
        cost.check(estimate)         # claims estimate.bytes (and a heavy slot) here
        ...                          # the work
                                     # leaving the block gives everything back

A request's grant is the largest estimate it claimed (a view's steps run one after another).
A claim that does not fit waits up to ``WAIT_S`` for others to finish, then is refused with
one plain sentence, before anything is allocated; a claim larger than the whole budget is
refused at once. Light requests (a short text's maps) need no heavy slot and may use the
reserve that heavy ones leave free, so a crowd of large requests never starves a small one.

Sizing: ``EXPLORER_MEMORY_GB`` when set, else half of the machine's memory (the container's
limit where it has one); heavy slots ``EXPLORER_HEAVY_REQUESTS``, else half the CPUs (at
least one). Outside a request (scripts, tests calling a view) nothing is claimed.
Standard library only.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import threading
import time

from ..text import Message

MACHINE_SHARE = 0.5              # of the machine's memory, when EXPLORER_MEMORY_GB is not set
RESERVE_SHARE = 0.125            # kept for light requests: heavy ones never take it
LIGHT_BYTES = 64 * 10 ** 6       # a claim at most this large, and this short, is light
LIGHT_SECONDS = 2.0
WAIT_S = 0.5                     # how long a claim that does not fit waits before it is refused
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def machine_memory_bytes() -> int | None:
    """The memory this process can have: the machine's, or its container's limit if lower."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        total = None
    for path in CGROUP_LIMITS:
        try:
            with open(path) as fh:
                raw = fh.read().strip()
        except OSError:
            continue
        if raw.isdigit() and (total is None or int(raw) < total):
            total = int(raw)
    return total


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _env_number(env, name: str) -> float | None:
    try:
        value = float(env.get(name, ""))
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def sized_memory_bytes(env=None) -> int:
    """The budget's bytes: EXPLORER_MEMORY_GB (decimal GB), else MACHINE_SHARE of the machine."""
    env = os.environ if env is None else env
    given = _env_number(env, "EXPLORER_MEMORY_GB")
    if given is not None:
        return int(given * 1e9)
    machine = machine_memory_bytes()
    return int((machine or 8e9) * MACHINE_SHARE)


def sized_heavy_slots(env=None) -> int:
    """How many heavy requests run at once: EXPLORER_HEAVY_REQUESTS, else half the CPUs."""
    env = os.environ if env is None else env
    given = _env_number(env, "EXPLORER_HEAVY_REQUESTS")
    if given is not None:
        return max(1, int(given))
    return max(1, cpu_count() // 2)


def _gb(nbytes: float) -> str:
    return f"{nbytes / 1e9:,.1f} GB"


class BudgetRefusal(ValueError):
    """A claim the server's budget cannot grant (now, or ever): one sentence, in the page's language."""

    def __init__(self, key: str, **values):
        self.message = Message(key, **values)
        super().__init__(str(self.message))

    def say(self, lang: str = "en") -> str:
        return self.message.say(lang)


def is_light(nbytes: int, seconds: float) -> bool:
    return nbytes <= LIGHT_BYTES and seconds <= LIGHT_SECONDS


class Budget:
    """Bytes granted and heavy slots taken, across every thread of the server."""

    def __init__(self, memory_bytes: int, heavy_slots: int, wait_s: float = WAIT_S):
        self.memory_bytes = int(memory_bytes)
        self.heavy_slots = max(1, int(heavy_slots))
        self.wait_s = float(wait_s)
        self.reserve = int(self.memory_bytes * RESERVE_SHARE)
        self.granted = 0
        self.heavy = 0
        self.peak_granted = 0
        self._cond = threading.Condition()

    def take(self, nbytes: int, heavy: bool, slot: bool) -> None:
        """Add ``nbytes`` to the granted total (and a heavy slot when ``slot``), waiting up to
        ``wait_s`` for room; BudgetRefusal when there is none, or never can be."""
        nbytes = max(0, int(nbytes))
        ceiling = self.memory_bytes - (self.reserve if heavy else 0)
        if nbytes > ceiling:
            raise BudgetRefusal("cost.over_budget", need=_gb(nbytes), limit=_gb(ceiling))
        deadline = time.monotonic() + self.wait_s
        with self._cond:
            while self.granted + nbytes > ceiling or (slot and self.heavy >= self.heavy_slots):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BudgetRefusal("cost.budget_busy", need=_gb(nbytes), used=_gb(self.granted),
                                        limit=_gb(self.memory_bytes), running=self.heavy)
                self._cond.wait(left)
            self.granted += nbytes
            self.heavy += int(slot)
            self.peak_granted = max(self.peak_granted, self.granted)

    def give(self, nbytes: int, slot: bool) -> None:
        with self._cond:
            self.granted -= max(0, int(nbytes))
            self.heavy -= int(slot)
            self._cond.notify_all()


class Grant:
    """One request's share of a Budget: the largest claim so far, given back at ``close``."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.bytes = 0
        self.slot = False
        self.closed = False
        self._lock = threading.Lock()

    def claim(self, nbytes: int, seconds: float) -> None:
        with self._lock:
            if self.closed:
                return
            heavy = not is_light(nbytes, seconds) or self.slot
            extra = max(0, int(nbytes) - self.bytes)
            slot = heavy and not self.slot
            if extra or slot:
                self.budget.take(extra, heavy, slot)
                self.bytes += extra
                self.slot = self.slot or slot

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                self.budget.give(self.bytes, self.slot)


_server: Budget | None = None
_server_lock = threading.Lock()
_current: contextvars.ContextVar[Grant | None] = contextvars.ContextVar("explorer_budget_grant", default=None)


def server_budget() -> Budget:
    """The process's budget, sized on first use."""
    global _server
    with _server_lock:
        if _server is None:
            _server = Budget(sized_memory_bytes(), sized_heavy_slots())
        return _server


@contextlib.contextmanager
def request(budget: Budget | None = None):
    """The scope of one request: claims inside it are one grant, given back on leaving.
    Nested scopes (a handler calling another) share the outer one."""
    if _current.get() is not None:
        yield _current.get()
        return
    grant = Grant(budget or server_budget())
    token = _current.set(grant)
    try:
        yield grant
    finally:
        grant.close()
        try:
            _current.reset(token)
        except ValueError:       # left from another context (a generator resumed elsewhere)
            pass


def claim(nbytes: int, seconds: float) -> None:
    """Take ``nbytes`` for the current request (cost.check calls this); nothing outside one."""
    grant = _current.get()
    if grant is not None:
        grant.claim(nbytes, seconds)
