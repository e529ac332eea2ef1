"""Live timings that say when they cannot be trusted.

A public Space or a lecturer's laptop shares its CPU with other work. A timing taken while
something else runs is not a property of the algorithm, and a figure must not present it
as one. So the complexity tab measures this way:

- at each N, the methods are timed in interleaved rounds (A B C, B C A, C A B, ...), so a
  burst of other load lands on every method alike instead of on whichever ran then;
  each sample is ``torch.utils.benchmark.Timer.timeit`` of a call repeated long enough to
  dwarf the timer's resolution;
- the dense-matmul rate is measured before and after the runs, and a tiny parallel
  operation is timed with torch's threads and with one: when the rate moved by more than
  RATE_SHIFT, when the threads stall (another process holds a core torch wants), or when
  the rounds of one method, its slowest round aside (one slow round does not move the
  median), spread wider than SPREAD, the result is ``disturbed`` and says
  why. The figure then shows every method's spread and the words "measurement disturbed
  by other load" instead of a clean-looking line.

The callables, FLOP counts and memory estimates are explorer.measure.bench's; only the order of the
measurements and the verdict live here. ``timer``, ``rate`` and ``stall`` are injectable,
so the tests decide what the clock says without timing anything.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

import torch

from . import bench, peak_memory
from .. import maps as feature_maps
from ..checks import check_positive_int
from ..text import Joined, Message

RATE_SHIFT = 0.25      # matmul rate after / before outside [1 - x, 1 / (1 - x)]: the load changed
SPREAD = 0.5           # (slowest - fastest) / median of one method's rounds above this: too noisy
STALL = 8.0            # a tiny op with all threads this many times slower than with one: cores are taken


def method_name(method: str):
    """A timed form as its sentences name it: its label's message (said in the page's language)."""
    return Message(f"complexity.method.{method}") if method in bench.METHOD_LABELS else method


# Shortest sample: bench's 5 ms is one call of the naive softmax at N = 512, which a single
# scheduler tick or a browser repainting beside the app moves by half; 20 ms samples keep
# the spread of a quiet machine well inside SPREAD, for about a second more per sweep.
MIN_SAMPLE_S = 0.02


def torch_timer(fn: Callable, number: int) -> float:
    """Seconds per call of ``fn`` over ``number`` calls (torch.utils.benchmark, torch's thread count)."""
    from torch.utils import benchmark
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    return timer.timeit(number).mean


def parallel_stall(size: int = 1 << 16, repeats: int = 30) -> float:
    """How much slower a tiny elementwise op runs on all of torch's threads than on one.

    Quiet, about 1 (a few microseconds either way). When another process holds a core that
    torch's thread pool wants, every parallel region waits for a descheduled thread, and the
    ratio reaches hundreds: the signature of timings that no longer scale with the work.
    """
    threads = torch.get_num_threads()
    if threads <= 1:
        return 1.0
    x = torch.randn(size)

    def median_time():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            torch.add(x, 1.0)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    try:
        torch.set_num_threads(1)
        single = median_time()
    finally:
        torch.set_num_threads(threads)
    return median_time() / max(single, 1e-9)


@dataclass
class Verdict:
    disturbed: bool
    reasons: list
    rate_before: float | None
    rate_after: float | None
    worst_spread: float


def judge(rate_before, rate_after, samples: dict, stall: float | None = None, rate_shift: float = RATE_SHIFT,
          spread: float = SPREAD, stall_limit: float = STALL) -> Verdict:
    """Whether a sweep's timings can be trusted. ``samples``: (method, N) -> seconds per round."""
    reasons = []
    if rate_before and rate_after:
        ratio = rate_after / rate_before
        if not (1 - rate_shift) <= ratio <= 1 / (1 - rate_shift):
            reasons.append(Message("complexity.reason_rate", a=f"{rate_before:.0f}", b=f"{rate_after:.0f}"))
    worst, where = 0.0, None
    for key, times in samples.items():
        if len(times) >= 2:
            # Other load only ever slows a round down, and one slow round of three or more
            # leaves the median where it was: the spread is taken without the slowest round.
            kept = sorted(times)[:-1] if len(times) >= 3 else sorted(times)
            width = (kept[-1] - kept[0]) / max(statistics.median(times), 1e-12)
            if width > worst:
                worst, where = width, key
    if worst > spread:
        method, n = where
        reasons.append(Message("complexity.reason_spread", method=method_name(method), n=f"{n:,}",
                               pct=f"{100 * worst:.0f}"))
    if stall is not None and stall > stall_limit:
        reasons.append(Message("complexity.reason_stall", x=f"{stall:.0f}"))
    return Verdict(bool(reasons), reasons, rate_before, rate_after, worst)


def interleaved(calls: dict, number: dict, rounds: int, timer: Callable = torch_timer,
                should_stop: Callable = lambda: False) -> dict:
    """Seconds per call of every callable, ``rounds`` samples each, in rotating order."""
    names = list(calls)
    samples = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(timer(calls[name], number[name]))
            if should_stop():
                raise bench._Stopped
    return samples


def prior_seconds(method: str, n: int, flops: int, rate_gflops: float) -> float:
    """bench's guess at one call's time before anything of this method was measured, never
    under what its FLOPs take at the linear forms' efficiency: the recurrent form's guess
    counts Python steps only, and a wide feature map (Taylor-2 at a large d) makes each
    step's outer product the cost."""
    guess = bench._prior_seconds(method, n, flops, rate_gflops)
    return max(guess, flops / (0.05 * rate_gflops * 1e9)) if method == "linear_recurrent" else guess


class OutOfTime(Exception):
    """The sweep reached its time budget: what was measured stays, the rest is not run."""


def run_seconds(per_call: float, warmup: int, rounds: int, memory: bool) -> float:
    """A run's predicted seconds from one call's: the warm-up, the memory probe and
    ``rounds`` samples, each ``number`` calls plus the Timer's own warm-up of
    max(number // 100, 2)."""
    calls_each = int(min(bench.MAX_CALLS_PER_SAMPLE, max(1, MIN_SAMPLE_S // max(per_call, 1e-9))))
    return per_call * (warmup + int(memory) + rounds * (calls_each + max(calls_each // 100, 2)))


class Budget:
    """A sweep's time budget: the whole plan priced before anything runs (runs predicted
    past the budget are skipped from the start), then a deadline asked at every step.

    ``probes_s``: what the rate probes took before the sweep; the same is kept back at the
    end for the probes after it, so the sweep with its probes ends within the budget."""

    def __init__(self, seconds: float | None, started: float, probes_s: float = 0.0):
        self.limited = seconds is not None and math.isfinite(seconds)
        self.seconds = seconds if self.limited else math.inf
        self.end = started + self.seconds
        self.probes_s = probes_s
        self.deadline = self.end - probes_s
        self.planned: dict = {}
        self.over_plan: set = set()

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def room_for_probes(self) -> bool:
        """Whether the probes after the sweep fit before the budget's end (they run slower
        under load than before it: half again as long is allowed for)."""
        return not self.limited or self.end - time.perf_counter() >= 1.5 * self.probes_s

    def check(self) -> None:
        if self.limited and time.perf_counter() > self.deadline:
            raise OutOfTime

    def plan(self, ns, methods, head_dim, m, causal, caps, budget_bytes, warmup, rounds, memory, chunk_size,
             rate_gflops) -> None:
        """Price every run of the sweep, in the order they run, at the prior guess of a call's
        time; the runs past the budget's end are marked to be skipped."""
        if not self.limited:
            return
        total, left = 0.0, self.left()
        for n in ns:
            for method in methods:
                is_causal = bench.effective_causal(method, causal)
                if is_causal is None or (method in caps and n > caps[method]) \
                        or bench.estimate_memory_bytes(method, n, head_dim, m) > budget_bytes:
                    continue
                flops = bench.method_flops(method, n, head_dim, m, bool(is_causal), chunk_size)
                seconds = run_seconds(prior_seconds(method, n, flops, rate_gflops or 50.0), warmup, rounds,
                                      memory)
                self.planned[(method, n)] = seconds
                if total + seconds > left:
                    self.over_plan.add((method, n))
                else:
                    total += seconds


@dataclass
class LiveSweep(bench.SweepResult):
    """A SweepResult measured in interleaved rounds, with the verdict on its trustworthiness."""

    rate_before: float | None = None
    rate_after: float | None = None
    stall: float | None = None
    disturbed: bool = False
    disturbance: list = field(default_factory=list)


def sweep(ns, head_dim: int = 64, feature_map: str = "elu1", feature_dim: int | None = None,
          methods=bench.METHODS, causal: bool = False, repeats: int = 5, warmup: int = 1, memory: bool = True,
          memory_budget_bytes: int = bench.DEFAULT_MEMORY_BUDGET, time_budget_s: float | None = None,
          progress=None, should_stop=None, seed: int = 0, max_n: dict | None = None,
          chunk_size: int = bench.CHUNK_SIZE, matmul_size: int = 2048, timer: Callable = torch_timer,
          rate: Callable | None = None, stall: Callable | None = parallel_stall) -> LiveSweep:
    """bench.sweep's measurements (same rows, skips and budgets), taken in interleaved rounds
    and judged. ``rate()`` gives the dense-matmul GFLOP/s (default: bench.matmul_gflops);
    ``stall()`` the thread-stall ratio (None: not probed)."""
    ns = sorted({check_positive_int(n, "ns") for n in (ns if not isinstance(ns, int) else [ns])})
    methods = tuple(m for m in bench.METHODS if m in tuple(methods))
    if not ns or not methods:
        raise ValueError("ns, methods: give at least one sequence length and one method")
    head_dim = check_positive_int(head_dim, "head_dim")
    rounds = check_positive_int(repeats, "repeats")
    caps = dict(bench.DEFAULT_MAX_N if max_n is None else max_n)
    fmap = feature_maps.create(feature_map, head_dim, num_features=feature_dim, seed=seed)
    m = fmap.num_features
    rate = rate or (lambda: bench.matmul_gflops(matmul_size))
    progress = progress or (lambda fraction, message: None)
    should_stop = should_stop or (lambda: False)
    result = LiveSweep(rows=[], head_dim=head_dim, feature_dim=m, feature_map=feature_map, causal=bool(causal),
                       chunk_size=chunk_size, repeats=rounds)
    result.notes += [
        Message("complexity.note_rounds", rounds=rounds, warmup=warmup, ms=f"{MIN_SAMPLE_S * 1e3:.0f}"),
        Message("complexity.note_setup", map=feature_map, m=m, chunk=chunk_size, torch=torch.__version__,
                threads=torch.get_num_threads()),
    ]
    started = time.perf_counter()
    if should_stop():
        result.cancelled = True
        return result
    result.stall = stall() if stall is not None else None
    result.rate_before = result.matmul_gflops = rate()
    progress(0.05, Message("complexity.progress_matmul", rate=f"{result.rate_before:.1f}"))
    samples_by_run, last_seen = {}, {}
    budget = Budget(time_budget_s, started, time.perf_counter() - started)
    budget.plan(ns, methods, result.head_dim, m, causal, caps, memory_budget_bytes, warmup, rounds, memory,
                chunk_size, result.rate_before)

    def stop_now() -> bool:
        if should_stop():
            return True
        budget.check()
        return False
    try:
        for index, n in enumerate(ns):
            _measure_n(result, n, methods, fmap, m, causal, caps, memory_budget_bytes, budget,
                       warmup, rounds, memory, chunk_size, seed, timer, stop_now, samples_by_run, last_seen)
            progress(0.05 + 0.9 * (index + 1) / len(ns), Message("complexity.progress_n", n=f"{n:,}"))
    except bench._Stopped:
        result.cancelled = True
        result.notes.append(Message("complexity.note_cancelled"))
    except OutOfTime:
        result.truncated = True
        result.notes.append(Message("complexity.note_out_of_time", budget=f"{time_budget_s:,.0f}"))
    if not result.cancelled and budget.room_for_probes():
        result.rate_after = rate()
        result.matmul_gflops = max(result.rate_before, result.rate_after)
        if stall is not None:
            result.stall = max(result.stall or 0.0, stall())
    verdict = judge(result.rate_before, result.rate_after, samples_by_run, result.stall)
    result.disturbed, result.disturbance = verdict.disturbed, verdict.reasons
    after = "n/a" if result.rate_after is None else f"{result.rate_after:.1f}"
    result.notes.append(Message("complexity.note_matmul", size=matmul_size, before=f"{result.rate_before:.1f}",
                                after=after))
    if result.disturbed:
        result.notes.append(Message("complexity.note_disturbed", reasons=Joined(verdict.reasons,
                                                                                "complexity.reason_sep")))
    progress(1.0, Message("complexity.disturbed" if result.disturbed else "complexity.progress_done"))
    return result


def _measure_n(result, n, methods, fmap, m, causal, caps, budget_bytes, budget, warmup, rounds,
               memory, chunk_size, seed, timer, should_stop, samples_by_run, last_seen):
    """Every method at one N: plan (skips as bench.sweep), warm up, interleaved rounds, memory.
    The runs taken at this N are priced together against the time left: each one's
    prediction adds to the ones before it."""
    rows, calls, number = {}, {}, {}
    gen = torch.Generator().manual_seed(seed + n)
    q, k, v = (torch.randn(1, 1, n, result.head_dim, generator=gen) for _ in range(3))
    committed = 0.0
    for method in methods:
        is_causal = bench.effective_causal(method, causal)
        flops = bench.method_flops(method, n, result.head_dim, m, bool(is_causal), chunk_size)
        row = {"method": method, "label": bench.METHOD_LABELS[method], "n": n, "causal": is_causal,
               "time_ms": None, "time_min_ms": None, "time_max_ms": None, "time_iqr_ms": None, "samples": 0,
               "calls_per_sample": 0, "peak_mem_bytes": None, "flops": flops, "gflops": None, "skipped": None}
        estimate = bench.estimate_memory_bytes(method, n, result.head_dim, m)
        if is_causal is None:
            row["skipped"] = Message("complexity.skip_causal")
        elif method in caps and n > caps[method]:
            row["skipped"] = Message("complexity.skip_cap", cap=caps[method])
        elif estimate > budget_bytes:
            row["skipped"] = Message("complexity.skip_memory", need=f"{estimate / 2**30:.2f}",
                                     budget=f"{budget_bytes / 2**30:.2f}")
        elif budget.limited:
            if method in last_seen:
                n0, t0 = last_seen[method]
                per_call = t0 * (n / n0) ** (2 if method in bench.QUADRATIC else 1)
            else:
                per_call = prior_seconds(method, n, flops, result.rate_before or 50.0)
            predicted = run_seconds(per_call, warmup, rounds, memory)
            left = budget.left() - committed
            planned_over = method not in last_seen and (method, n) in budget.over_plan   # nothing measured yet
            if planned_over or predicted > left:
                need = max(predicted, budget.planned.get((method, n), 0.0))
                row["skipped"] = Message("complexity.skip_time", need=f"{need:.1f}", left=f"{max(left, 0):.1f}")
                result.truncated = True
            else:
                committed += predicted
        result.rows.append(row)
        if row["skipped"] is None:
            fn = bench.method_function(method, fmap, bool(is_causal), chunk_size)
            calls[method] = (lambda fn=fn: fn(q, k, v))
            rows[method] = row
    try:
        _time_runs(result, n, calls, rows, number, warmup, rounds, memory, timer, should_stop, samples_by_run,
                   last_seen)
    except OutOfTime:
        for row in rows.values():                # what the deadline cut off at this N
            if row["time_ms"] is None:
                row["skipped"] = Message("complexity.skip_deadline")
        raise


def _time_runs(result, n, calls, rows, number, warmup, rounds, memory, timer, should_stop, samples_by_run,
               last_seen):
    with torch.inference_mode():
        for method, call in calls.items():
            first = None
            for _ in range(warmup):
                start = time.perf_counter()
                call()
                first = time.perf_counter() - start
            per = MIN_SAMPLE_S // max(first, 1e-9) if first is not None else 1
            number[method] = int(min(bench.MAX_CALLS_PER_SAMPLE, max(1, per)))
            if should_stop():
                raise bench._Stopped
        samples = interleaved(calls, number, rounds, timer, should_stop) if calls else {}
        for method, times in samples.items():
            row = rows[method]
            quartiles = statistics.quantiles(times, n=4, method="inclusive") if len(times) > 1 else [times[0]] * 3
            median = statistics.median(times)
            row.update(time_ms=median * 1e3, time_min_ms=min(times) * 1e3, time_max_ms=max(times) * 1e3,
                       time_iqr_ms=(quartiles[2] - quartiles[0]) * 1e3, samples=len(times),
                       calls_per_sample=number[method], gflops=row["flops"] / median / 1e9)
            samples_by_run[(method, n)] = times
            last_seen[method] = (n, median)
            if memory:
                row["peak_mem_bytes"] = peak_memory.measure_peak_bytes(calls[method])[1]
