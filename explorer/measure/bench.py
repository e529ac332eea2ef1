"""Complexity measurements: time, peak memory and FLOPs of every attention form against N.

The point of the article's associativity trick is a claim about cost: the N x N map grows
as N^2, phi(Q) (phi(K)^T V) as N. ``sweep`` measures that claim on this machine and reports
it the way a lecturer can defend it:

- median wall time after warm-up (and its spread), for each method at each N;
- extra peak memory of one call (inputs already allocated, the output included);
- achieved GFLOP/s from the shared FLOP model (``explorer.measure.cost.flop_counts``) and its ratio
  to a dense matmul measured in the same run, so a number is never a bare time;
- a least-squares slope in log-log (about 2 for quadratic forms, about 1 for linear ones)
  and the N where a linear form overtakes the quadratic one.

Every timed function is the engine's own code path (``method_function``), and the tests
hold each one to the N x N reference, so the benchmark times what the app computes. The
peak-memory measurement is in ``peak_memory``; the device helpers in ``device``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import torch

from ..diagnostics import attention
from ..mechanisms.linear import forms as linear
from .. import maps as feature_maps
from ..catalog import SWEEP_METHOD_LABELS
from ..catalog import SWEEP_METHODS as METHODS  # one list for the benchmark and the UI's choices
from ..checks import check_positive_int
from ..text import Message
from .cost import (  # noqa: F401  (the cost model is the lower layer; these stay importable from here)
    CHUNK_SIZE, QUADRATIC, _check_method, estimate_memory_bytes, flop_counts, method_flops,
)
from .device import _device, _sync
from .peak_memory import measure_peak_bytes

# The page's names for the timed forms live in the catalogue (no torch there).
METHOD_LABELS = SWEEP_METHOD_LABELS

# Forms that only exist causally: with causal=False they are skipped, not faked.
CAUSAL_ONLY = frozenset({"linear_recurrent", "linear_cumsum"})
# The recurrent form is a Python loop per token: O(N), but ~tens of microseconds a token.
DEFAULT_MAX_N = {"linear_recurrent": 16384}
DEFAULT_MEMORY_BUDGET = 4 << 30

# Each timing sample repeats the call until it lasts at least this long, so that
# sub-millisecond runs at small N are not dominated by timer and scheduler noise.
MIN_SAMPLE_S = 0.005
MAX_CALLS_PER_SAMPLE = 200

ROW_FIELDS = ("method", "label", "n", "causal", "time_ms", "time_min_ms", "time_iqr_ms", "samples",
              "calls_per_sample", "peak_mem_bytes", "flops", "gflops", "skipped")


# --------------------------------------------------------------------------- the timed code


def effective_causal(method: str, causal: bool) -> bool | None:
    """The masking a method actually runs with for a sweep asked for ``causal``.

    softmax_naive, sdpa and linear_chunked follow ``causal``; linear_parallel is the
    non-causal associativity form whatever is asked (its causal variant is the quadratic
    masked product, which the softmax rows already show); recurrent and cumsum are causal
    forms and return None (not run) when ``causal`` is False.
    """
    _check_method(method)
    if method == "linear_parallel":
        return False
    if method in CAUSAL_ONLY:
        return True if causal else None
    return bool(causal)


def method_function(method: str, feature_map, causal: bool, chunk_size: int = CHUNK_SIZE) -> Callable:
    """The function ``f(q, k, v) -> output`` that the benchmark times for ``method``.

    ``causal`` is the effective masking (see ``effective_causal``). These are the engine's
    public code paths, validation included, so the times are what the app pays.
    """
    _check_method(method)
    if method == "softmax_naive":
        return lambda q, k, v: attention.softmax_map(q, k, causal) @ v
    if method == "sdpa":
        return lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    if method == "linear_parallel":
        return lambda q, k, v: linear.linear_attention(q, k, v, feature_map, False, "parallel")
    if method == "linear_chunked":
        return lambda q, k, v: linear.linear_attention(q, k, v, feature_map, causal, "chunked", chunk_size)
    if method == "linear_recurrent":
        return lambda q, k, v: linear.linear_attention(q, k, v, feature_map, True, "recurrent")

    def cumsum(q, k, v):
        return linear.causal_cumsum(feature_map(q, is_query=True), feature_map(k), v)
    return cumsum


# --------------------------------------------------------------------------- measurement


def matmul_gflops(size: int = 2048, repeats: int = 5, device="cpu") -> float:
    """Dense float32 matmul rate (median of ``repeats`` after one warm-up), in GFLOP/s:
    the roofline every other rate in a sweep is compared with."""
    size = check_positive_int(size, "size")
    repeats = check_positive_int(repeats, "repeats")
    dev = _device(device)
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=gen).to(dev)
    b = torch.randn(size, size, generator=gen).to(dev)
    torch.matmul(a, b)
    _sync(dev)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.matmul(a, b)
        _sync(dev)
        times.append(time.perf_counter() - start)
    return 2 * size ** 3 / statistics.median(times) / 1e9


class _Stopped(Exception):
    """should_stop() said so in the middle of a run."""


def _time_samples(call: Callable, dev, repeats: int, warmup: int, should_stop) -> tuple[list[float], int]:
    """Seconds per call for ``repeats`` samples, and the calls per sample."""
    first = None
    for _ in range(warmup):
        start = time.perf_counter()
        call()
        _sync(dev)
        first = time.perf_counter() - start
        if should_stop():
            raise _Stopped
    calls = 1 if first is None else int(min(MAX_CALLS_PER_SAMPLE, max(1, MIN_SAMPLE_S // max(first, 1e-9))))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        _sync(dev)
        samples.append((time.perf_counter() - start) / calls)
        if should_stop():
            raise _Stopped
    return samples, calls


# --------------------------------------------------------------------------- results


@dataclass
class SweepResult:
    """Rows of a sweep (one dict per method and N, see ``ROW_FIELDS``) and their context."""

    rows: list
    matmul_gflops: float | None = None
    device: str = "cpu"
    head_dim: int = 64
    feature_dim: int | None = None
    feature_map: str = "elu1"
    causal: bool = False
    chunk_size: int = CHUNK_SIZE
    repeats: int = 5
    notes: list = field(default_factory=list)
    cancelled: bool = False
    truncated: bool = False

    def _measured(self, method: str, n_min=None, n_max=None) -> list[tuple[int, float]]:
        pts = [(r["n"], r["time_ms"]) for r in self.rows
               if r["method"] == method and not r.get("skipped") and r.get("time_ms")
               and (n_min is None or r["n"] >= n_min) and (n_max is None or r["n"] <= n_max)]
        return sorted(pts)

    def row(self, method: str, n: int) -> dict | None:
        for r in self.rows:
            if r["method"] == method and r["n"] == n:
                return r
        return None

    def time_ms(self, method: str, n: int) -> float | None:
        r = self.row(method, n)
        return None if r is None or r.get("skipped") else r.get("time_ms")

    def slopes(self, n_min=None, n_max=None) -> dict:
        """Least-squares slope of log(time) against log(N) per method, over the measured
        points with n_min <= N <= n_max. Methods with fewer than two distinct N are left out."""
        out = {}
        for method in dict.fromkeys(r["method"] for r in self.rows):
            pts = self._measured(method, n_min, n_max)
            if len({n for n, _ in pts}) >= 2:
                x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
                out[method] = float(np.polyfit(x, y, 1)[0])
        return out

    def slope_fits(self, n_min=None, n_max=None) -> dict:
        """``slopes`` with the range each fit really covers: {method: {"slope", "n_min",
        "n_max", "points"}}, from the measured points with n_min <= N <= n_max. A label
        must say this range, not the window asked for: a sweep over N = 512..2048 fits
        over 512..2048 whatever window the caller had in mind."""
        out = {}
        for method, slope in self.slopes(n_min, n_max).items():
            ns = [n for n, _ in self._measured(method, n_min, n_max)]
            out[method] = {"slope": slope, "n_min": min(ns), "n_max": max(ns), "points": len(set(ns))}
        return out

    def crossover_info(self, a: str = "sdpa", b: str = "linear_chunked") -> tuple[float | None, str]:
        """(N where ``b`` becomes faster than ``a``, a sentence saying so or why there is none).

        The time ratio b/a is interpolated linearly in log-log between the two measured N
        (both methods measured) where it first drops below 1.
        """
        ta, tb = dict(self._measured(a)), dict(self._measured(b))
        ns = sorted(set(ta) & set(tb))
        if not ns:
            return None, Message("complexity.cross_none", a=a, b=b)
        ratio = [tb[n] / ta[n] for n in ns]
        if ratio[0] < 1:
            return None, Message("complexity.cross_already", a=a, b=b, n=ns[0])
        for (n1, r1), (n2, r2) in zip(zip(ns, ratio), zip(ns[1:], ratio[1:])):
            if r1 >= 1 > r2:
                x1, x2 = math.log(n1), math.log(n2)
                frac = math.log(r1) / (math.log(r1) - math.log(r2))
                n_star = math.exp(x1 + frac * (x2 - x1))
                return n_star, Message("complexity.cross_at", a=a, b=b, n=f"{n_star:,.0f}", n1=n1, n2=n2)
        return None, Message("complexity.cross_never", a=a, b=b, n=ns[-1])

    def crossover(self, a: str = "sdpa", b: str = "linear_chunked") -> float | None:
        """N where ``b`` becomes faster than ``a`` (see ``crossover_info`` for the reason
        when this is None)."""
        return self.crossover_info(a, b)[0]

    # ----------------------------------------------------------------- serialisation

    def to_dict(self) -> dict:
        data = asdict(self)
        data["slopes"] = self.slopes()  # derived, for readers of the file; ignored on load
        data["crossover"] = self.crossover_info()[1]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str) -> "SweepResult":
        data = json.loads(text)
        names = set(cls.__dataclass_fields__)
        return cls(**{key: value for key, value in data.items() if key in names})

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=ROW_FIELDS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for r in self.rows:
            writer.writerow({key: "" if r.get(key) is None else r.get(key) for key in ROW_FIELDS})
        return buf.getvalue()

    def table(self) -> str:
        """A fixed-width table: time, spread, GFLOP/s and its share of the matmul rate,
        speed against SDPA at the same N, extra peak memory."""
        head = (f"{'method':<18} {'N':>6} {'causal':>6} {'median ms':>10} {'IQR ms':>8} {'GFLOP/s':>8} "
                f"{'%matmul':>7} {'vs SDPA':>8} {'peak MB':>8}")
        lines = [head, "-" * len(head)]
        for r in self.rows:
            if r.get("skipped"):
                lines.append(f"{r['method']:<18} {r['n']:>6} {'':>6} skipped: {r['skipped']}")
                continue
            share = f"{100 * r['gflops'] / self.matmul_gflops:.1f}%" if self.matmul_gflops else "n/a"
            sdpa = self.time_ms("sdpa", r["n"])
            vs = f"{sdpa / r['time_ms']:.2f}x" if sdpa else "n/a"
            mem = "n/a" if r.get("peak_mem_bytes") is None else f"{r['peak_mem_bytes'] / 2**20:.1f}"
            causal = "yes" if r.get("causal") else "no"
            lines.append(f"{r['method']:<18} {r['n']:>6} {causal:>6} {r['time_ms']:>10.3f} "
                         f"{r['time_iqr_ms']:>8.3f} {r['gflops']:>8.1f} {share:>7} {vs:>8} {mem:>8}")
        lines.append("")
        rate = "n/a" if self.matmul_gflops is None else f"{self.matmul_gflops:.1f} GFLOP/s"
        lines.append(f"dense matmul (same run): {rate}; 'vs SDPA' = SDPA time / method time")
        return "\n".join(lines)


_INT_FIELDS = {"n", "samples", "calls_per_sample", "peak_mem_bytes", "flops"}
_FLOAT_FIELDS = {"time_ms", "time_min_ms", "time_iqr_ms", "gflops"}


def rows_from_csv(text: str) -> list[dict]:
    """Rows read back from ``SweepResult.to_csv``, with their types (empty cells -> None)."""
    rows = []
    for raw in csv.DictReader(io.StringIO(text)):
        row = {}
        for key, value in raw.items():
            if value == "":
                row[key] = None
            elif key in _INT_FIELDS:
                row[key] = int(value)
            elif key in _FLOAT_FIELDS:
                row[key] = float(value)
            elif key == "causal":
                row[key] = value == "True"
            else:
                row[key] = value
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- the sweep


def _prior_seconds(method: str, n: int, flops: int, rate_gflops: float) -> float:
    """A crude guess at one call's time before anything of this method was measured."""
    if method == "linear_recurrent":
        return 60e-6 * n                      # a Python step of a few tensor ops per token
    efficiency = 0.3 if method in QUADRATIC else 0.05
    return flops / (efficiency * rate_gflops * 1e9) + 1e-3


def sweep(ns, head_dim: int = 64, feature_map: str = "elu1", feature_dim: int | None = None,
          methods=METHODS, causal: bool = False, device="cpu", repeats: int = 5, warmup: int = 1,
          memory: bool = True, memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET,
          time_budget_s: float | None = None, progress=None, should_stop=None, seed: int = 0,
          max_n: dict | None = None, chunk_size: int = CHUNK_SIZE, matmul_size: int = 2048) -> SweepResult:
    """Time (and measure memory of) each method at each N, on random float32 Q, K, V.

    Runs go N by N, methods in order, so a cancelled or time-limited sweep keeps its small
    N. A run is skipped, with the reason in its row, when it is causal-only and
    ``causal`` is False, when its N is above ``max_n[method]`` (default: recurrent capped at
    16384), when ``estimate_memory_bytes`` exceeds ``memory_budget_bytes``, or when it is
    predicted to overrun ``time_budget_s`` (then ``truncated`` is set). ``progress(fraction,
    message)`` is called after each matmul probe and after every run, ending at 1.0;
    ``should_stop()`` is polled between samples and ends the sweep with ``cancelled`` set.
    ``matmul_size`` is the side of the dense matmul whose rate every run is compared with.
    """
    ns = sorted({check_positive_int(n, "ns") for n in (ns if not isinstance(ns, int) else [ns])})
    if not ns:
        raise ValueError("ns: give at least one sequence length")
    methods = tuple(methods)
    if not methods:
        raise ValueError("methods: give at least one method")
    for method in methods:
        if method not in METHODS:
            raise ValueError(f"methods: expected a subset of {', '.join(METHODS)}, got {method!r}")
    methods = tuple(m for m in METHODS if m in methods)
    head_dim = check_positive_int(head_dim, "head_dim")
    repeats = check_positive_int(repeats, "repeats")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup: expected a non-negative integer, got {warmup!r}")
    memory_budget_bytes = check_positive_int(memory_budget_bytes, "memory_budget_bytes")
    if time_budget_s is not None and not time_budget_s > 0:
        raise ValueError(f"time_budget_s: expected a positive number of seconds or None, got {time_budget_s!r}")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    caps = dict(DEFAULT_MAX_N if max_n is None else max_n)
    for key, cap in caps.items():
        _check_method(key)
        check_positive_int(cap, "max_n")
    dev = _device(device)
    fmap = feature_maps.create(feature_map, head_dim, num_features=feature_dim, seed=seed).to(dev)
    m = fmap.num_features
    progress = progress or (lambda fraction, message: None)
    should_stop = should_stop or (lambda: False)

    result = SweepResult(rows=[], device=str(dev), head_dim=head_dim, feature_dim=m,
                         feature_map=feature_map, causal=bool(causal), chunk_size=chunk_size,
                         repeats=repeats)
    result.notes += [
        "causal: softmax_naive, sdpa and linear_chunked follow the sweep's causal flag; "
        "linear_parallel is always non-causal; linear_recurrent and linear_cumsum are causal "
        "forms, skipped when causal=False.",
        "FLOPs from explorer.measure.cost.flop_counts (multiply-add = 2, elementwise work ignored); a "
        "causal quadratic form counts the lower triangle only, though naive softmax computes all of it.",
        f"time: median of {repeats} samples after {warmup} warm-up call(s); a sample repeats "
        f"the call until it lasts {MIN_SAMPLE_S * 1e3:.0f} ms (calls_per_sample). Timed "
        "functions are the engine's public paths, input validation included.",
        "peak memory: extra over the inputs for one separate call, output included (CUDA: "
        "allocator peak; Linux CPU: VmHWM after resetting it via /proc/self/clear_refs, the "
        "call run in a fresh thread with every large buffer mmap'd, so heap reuse cannot hide "
        "or inflate it).",
        f"float32, batch*heads = 1, {feature_map} with m = {m}, chunk {chunk_size}, "
        f"torch {torch.__version__}, {torch.get_num_threads()} CPU thread(s).",
    ]

    started = time.perf_counter()
    plan = [(n, method) for n in ns for method in methods]
    units = len(plan) + 2          # a matmul probe before and after the runs
    if should_stop():
        result.cancelled = True
        progress(1.0, "cancelled before starting")
        return result
    result.matmul_gflops = matmul_gflops(matmul_size, device=dev)
    progress(1 / units, f"dense matmul: {result.matmul_gflops:.1f} GFLOP/s")

    last_seen: dict[str, tuple[int, float]] = {}   # method -> (N, seconds per call)
    inputs_n, q = None, None
    for index, (n, method) in enumerate(plan, start=2):
        if should_stop():
            result.cancelled = True
            break
        is_causal = effective_causal(method, causal)
        flops = method_flops(method, n, head_dim, m, bool(is_causal), chunk_size)
        row = {"method": method, "label": METHOD_LABELS[method], "n": n, "causal": is_causal,
               "time_ms": None, "time_min_ms": None, "time_iqr_ms": None, "samples": 0,
               "calls_per_sample": 0, "peak_mem_bytes": None, "flops": flops, "gflops": None,
               "skipped": None}
        estimate = estimate_memory_bytes(method, n, head_dim, m)
        if is_causal is None:
            row["skipped"] = "causal form only; run with causal=True"
        elif method in caps and n > caps[method]:
            row["skipped"] = f"N above this method's cap {caps[method]}"
        elif estimate > memory_budget_bytes:
            row["skipped"] = (f"estimated {estimate / 2**30:.2f} GiB > memory budget "
                              f"{memory_budget_bytes / 2**30:.2f} GiB")
        elif time_budget_s is not None:
            if method in last_seen:
                n0, t0 = last_seen[method]
                per_call = t0 * (n / n0) ** (2 if method in QUADRATIC else 1)
            else:
                per_call = _prior_seconds(method, n, flops, result.matmul_gflops)
            predicted = per_call * (warmup + repeats + int(memory))
            left = time_budget_s - (time.perf_counter() - started)
            if predicted > left:
                row["skipped"] = f"time budget: predicted {predicted:.1f} s, {max(left, 0):.1f} s left"
                result.truncated = True

        if row["skipped"] is None:
            if inputs_n != n:
                q = k = v = None  # free the previous N's inputs before making new ones
                gen = torch.Generator().manual_seed(seed + n)
                # (batch, heads, N, d): SDPA takes its flash path on CPU only for 4-D inputs.
                q, k, v = (torch.randn(1, 1, n, head_dim, generator=gen).to(dev) for _ in range(3))
                inputs_n = n
            fn = method_function(method, fmap, bool(is_causal), chunk_size)
            try:
                with torch.inference_mode():
                    samples, calls = _time_samples(lambda: fn(q, k, v), dev, repeats, warmup, should_stop)
                    if memory:
                        row["peak_mem_bytes"] = measure_peak_bytes(lambda: fn(q, k, v), dev)[1]
            except _Stopped:
                result.cancelled = True
                break
            quartiles = statistics.quantiles(samples, n=4, method="inclusive") if len(samples) > 1 else [samples[0]] * 3
            median = statistics.median(samples)
            row.update(time_ms=median * 1e3, time_min_ms=min(samples) * 1e3,
                       time_iqr_ms=(quartiles[2] - quartiles[0]) * 1e3, samples=len(samples),
                       calls_per_sample=calls, gflops=flops / median / 1e9)
            last_seen[method] = (n, median)
            message = f"{method} N={n}: {median * 1e3:.3f} ms"
        else:
            message = f"{method} N={n}: skipped ({row['skipped']})"
        result.rows.append(row)
        progress(index / units, message)

    if not result.cancelled:
        # Probe again at the end and keep the faster rate: a probe that met a busy moment
        # would otherwise flatter every ratio against it.
        probes = (result.matmul_gflops, matmul_gflops(matmul_size, device=dev))
        result.matmul_gflops = max(probes)
        result.notes.append(f"dense matmul {matmul_size}^2 probed before and after the runs: "
                            f"{probes[0]:.1f} and {probes[1]:.1f} GFLOP/s; ratios use the higher")
        if result.truncated:
            result.notes.append(f"time budget {time_budget_s} s: some runs were skipped (see their rows)")
        progress(1.0, f"done; dense matmul {result.matmul_gflops:.1f} GFLOP/s")
    else:
        result.notes.append(f"cancelled after {len(result.rows)} of {len(plan)} runs")
        progress(1.0, "cancelled")
    return result


# --------------------------------------------------------------------------- targets


def targets(result: SweepResult, n_target: int = 16384, n_memory: int = 65536,
            slope_range: tuple[int | None, int | None] = (None, 16384)) -> list[dict]:
    """The performance targets, each as {name, value, passed} (passed None when the sweep
    did not measure what the target needs). Slopes are fitted over the measured points in
    ``slope_range`` and each slope target names the N range its fit really covers."""
    out = []

    def add(name, value, passed, fmt="{:.2f}"):
        out.append({"name": name, "value": None if value is None else fmt.format(value),
                    "passed": None if value is None else bool(passed)})

    par = result.row("linear_parallel", n_target)
    share = None
    if par and not par.get("skipped") and result.matmul_gflops:
        share = par["gflops"] / result.matmul_gflops
    add(f"non-causal linear >= 40% of matmul GFLOP/s at N={n_target}", share,
        share is not None and share >= 0.4, "{:.1%}")

    chunk = result.row("linear_chunked", n_target)
    chunk_causal = chunk is not None and chunk.get("causal") is True
    t_chunk = result.time_ms("linear_chunked", n_target) if chunk_causal else None
    t_par = result.time_ms("linear_parallel", n_target)
    t_cum = result.time_ms("linear_cumsum", n_target)
    ratio = t_chunk / t_par if t_chunk and t_par else None
    add(f"causal chunked within 3x of non-causal at N={n_target} (chunked/non-causal)", ratio,
        ratio is not None and ratio <= 3, "{:.2f}x")
    speedup = t_cum / t_chunk if t_chunk and t_cum else None
    add(f"causal chunked >= 20x faster than cumsum at N={n_target}", speedup,
        speedup is not None and speedup >= 20, "{:.1f}x")
    long = result.row("linear_chunked", n_memory)
    mem = None
    if long and long.get("causal") and not long.get("skipped") and long.get("peak_mem_bytes") is not None:
        mem = long["peak_mem_bytes"] / 2**20
    add(f"causal chunked extra peak < 64 MB at N={n_memory}", mem, mem is not None and mem < 64, "{:.1f} MB")

    fits = result.slope_fits(*slope_range)
    for method, (lo, hi) in (("softmax_naive", (1.8, 2.2)), ("linear_parallel", (0.8, 1.2)),
                             ("linear_chunked", (0.8, 1.2)), ("linear_recurrent", (0.8, 1.2)),
                             ("linear_cumsum", (0.8, 1.2))):
        fit = fits.get(method)
        span = "over fewer than two measured N" if fit is None else f"over N={fit['n_min']}..{fit['n_max']}"
        s = None if fit is None else fit["slope"]
        add(f"slope {method} in [{lo}, {hi}] {span}", s, s is not None and lo <= s <= hi)
    return out


def format_targets(rows: list[dict]) -> str:
    width = max(len(r["name"]) for r in rows)
    lines = []
    for r in rows:
        verdict = "n/a" if r["passed"] is None else ("PASS" if r["passed"] else "MISS")
        lines.append(f"  {r['name']:<{width}}  {r['value'] or 'not measured':>14}  {verdict}")
    return "\n".join(lines)
