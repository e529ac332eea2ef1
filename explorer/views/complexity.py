"""The complexity tab: time and memory against N for softmax and the linear forms, measured
live, with fitted slopes, the FLOP model and the crossover.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..measure import budget, cost, live_timing
from .. import maps as feature_maps
from ..catalog import DEFAULT_METHODS, FEATURE_MAPS, MAX_POINTS, N_CAP, SWEEP_METHOD_LABELS, map_name
from ..text import TEXT, Message
from .common import _int
from .frames import with_headers


ARTICLE_N, ARTICLE_D = 100_000, 128
# The side of the dense matmul whose rate the sweep is judged against, probed before and after
# it: 1024² runs in about 6 ms on two cores, within 5-10 % of 2048²'s rate, where 2048² took
# 0.3 s a probe, half of a short sweep (the lecture's links open one).
ROOFLINE_MATMUL = 1024


def sweep_lengths(n_min, n_max, points) -> list[int]:
    """Geometrically spaced N from n_min to n_max (rounded to multiples of 16)."""
    n_min, n_max, points = _int(n_min, "N min"), _int(n_max, "N max"), _int(points, "points")
    if n_min < 16:
        raise ValueError(Message("complexity.err_nmin", n=n_min))
    if n_max > N_CAP:
        raise ValueError(Message("complexity.err_nmax", cap=f"{N_CAP:,}", n=f"{n_max:,}"))
    if n_max < n_min:
        raise ValueError(Message("complexity.err_order", nmax=n_max, nmin=n_min))
    if not 1 <= points <= MAX_POINTS:
        raise ValueError(Message("complexity.err_points", top=MAX_POINTS, points=points))
    if points == 1 or n_max == n_min:
        return [n_max]
    grid = np.geomspace(n_min, n_max, points)
    return sorted({max(16, int(round(x / 16)) * 16) for x in grid})


@dataclass
class ComplexityView:
    rows: list
    method_labels: dict            # method -> what the page calls it (a message)
    theory: dict                   # method -> (ns, ms) from the FLOP model at the matmul rate
    slopes: dict
    crossover: float | None
    crossover_text: str            # the crossover sentence (a message)
    claim: dict                    # article's FLOP ratio, and a measured ratio where both ran
    notes: list                    # messages
    matmul_gflops: float | None
    cancelled: bool = False
    truncated: bool = False
    csv: str = ""
    params: dict = field(default_factory=dict)
    disturbed: bool = False        # live_timing's verdict: other load moved the numbers
    disturbance: list = field(default_factory=list)

    provenance: dict = field(default_factory=dict)  # explorer.provenance.record of the data and settings

def plan_sweep(ns, head_dim, feature_dim, methods, budget_bytes):
    """Check the memory estimate of every run before anything starts.

    Returns notes (messages) for runs that will be skipped; raises ValueError (a message)
    when nothing would run.
    """
    notes, runnable, largest = [], 0, 0
    for method in methods:
        runs = {n: cost.estimate("complexity", ns=[n], d=head_dim, m=feature_dim, methods=[method]) for n in ns}
        over = [n for n, run in runs.items() if not cost.fits(run, budget_bytes, math.inf)]
        runnable += len(ns) - len(over)
        largest = max([largest] + [run.bytes for n, run in runs.items() if n not in over])
        if over:
            notes.append(Message("complexity.skipped_memory", method=live_timing.method_name(method),
                                 n=f"{min(over):,}", budget=f"{budget_bytes / 2**30:.1f}"))
    if runnable == 0:
        raise ValueError(Message("complexity.err_memory"))
    budget.claim(largest, math.inf)       # the runs go one at a time: the largest is the sweep's peak
    return notes


def method_label(method: str) -> str:
    """What the page calls a timed form (a message; never the internal id)."""
    key = f"complexity.method.{method}"
    return Message(key) if key in TEXT else SWEEP_METHOD_LABELS.get(method, method)


def named(sentence):
    """One of the timing engine's sentences (a message) as the page says it: the engine
    names a feature map by its id, the page by the map's name. Text that is not a message
    is kept as it is."""
    if not isinstance(sentence, Message):
        return sentence
    name = sentence.values.get("map")
    if name in FEATURE_MAPS:
        return Message(sentence.key, **{**sentence.values, "map": map_name(name)})
    return sentence


def _with_labels(sentence):
    """The benchmark's crossover sentence with its method ids as the page names them."""
    if not isinstance(sentence, Message):
        return sentence
    named = {name: live_timing.method_name(value) for name, value in sentence.values.items()
             if name in ("a", "b") and value in SWEEP_METHOD_LABELS}
    return Message(sentence.key, **{**sentence.values, **named})


# The pair the headline times against each other: SDPA and the linear form that does the same
# task. Causal: causal SDPA against the causal chunked form (the recurrent one where chunked
# did not run); non-causal: against the associativity form (chunked where it did not run).
# linear_parallel is non-causal whatever is asked, so it never stands in for a causal run.
HEADLINE_LINEAR = {True: ("linear_chunked", "linear_recurrent"), False: ("linear_parallel", "linear_chunked")}


def _pair_name(method: str, causal: bool) -> Message:
    return Message(f"complexity.pair.{method}" + ("_causal" if causal else ""))


def measured_headline(result, causal: bool) -> dict:
    """The headline's measured comparison: at the largest N where SDPA and the linear form
    of the same task (``HEADLINE_LINEAR``) both ran, their times, the time ratio and the
    FLOP ratio of the same two runs (the cost model's count for each, masking included).

    Returns {"measured": dict or None, "pair": (softmax name, linear name)}; the names are
    messages, said in the page's language."""
    causal = bool(causal)
    pair = (_pair_name("sdpa", causal), _pair_name(HEADLINE_LINEAR[causal][0], causal))
    for linear in HEADLINE_LINEAR[causal]:
        for n in sorted({r["n"] for r in result.rows}, reverse=True):
            quadratic_row, linear_row = result.row("sdpa", n), result.row(linear, n)
            tq, tl = result.time_ms("sdpa", n), result.time_ms(linear, n)
            if not (tq and tl) or quadratic_row.get("causal") != causal or linear_row.get("causal") != causal:
                continue
            names = (_pair_name("sdpa", causal), _pair_name(linear, causal))
            return {"pair": names, "measured": {
                "n": n, "quadratic_ms": tq, "linear_ms": tl, "ratio": tq / tl,
                "quadratic_method": "sdpa", "linear_method": linear, "causal": causal,
                "quadratic_name": names[0], "linear_name": names[1],
                "flop_ratio": quadratic_row["flops"] / linear_row["flops"], "disturbed": result.disturbed}}
    return {"pair": pair, "measured": None}


def complexity_view(n_min=256, n_max=4096, points=5, head_dim=64, feature_dim=None, causal=True,
                    feature_map="elu1", methods=DEFAULT_METHODS, repeats=3, memory_budget_bytes=2 << 30,
                    time_budget_s=60.0, progress=None, should_stop=None, **timing) -> ComplexityView:
    """Run a guarded sweep and assemble what the complexity tab draws, with labels, notes and
    the crossover sentence as messages: one sweep serves every language. ``progress``
    hears the engine's sentences as they are (``named`` says which map). ``timing``:
    live_timing.sweep's injectable timer, rate and stall probes (tests)."""
    ns = sweep_lengths(n_min, n_max, points)
    head_dim = _int(head_dim, "d")
    if not 1 <= head_dim <= 512:
        raise ValueError(Message("complexity.err_d", d=head_dim))
    if feature_dim in (None, "", 0):
        feature_dim = None
    else:
        feature_dim = _int(feature_dim, "m")
        if not 1 <= feature_dim <= 2048:
            raise ValueError(Message("complexity.err_m", m=feature_dim))
    repeats = _int(repeats, "repeats")
    if not 1 <= repeats <= 20:
        raise ValueError(Message("complexity.err_repeats", repeats=repeats))
    methods = [x for x in (methods or []) if x]
    if not methods:
        raise ValueError(Message("complexity.err_methods"))
    if feature_map in FEATURE_MAPS and not FEATURE_MAPS[feature_map].takes_m and feature_dim is not None:
        feature_dim = None  # fixed-size maps (elu+1, Taylor-2) decide m themselves
    fm = feature_maps.create(feature_map, head_dim, num_features=feature_dim)
    m = fm.num_features
    notes = plan_sweep(ns, head_dim, m, methods, memory_budget_bytes)
    result = live_timing.sweep(ns, head_dim=head_dim, feature_map=feature_map, feature_dim=feature_dim,
                               methods=methods, causal=bool(causal), repeats=repeats, warmup=1,
                               matmul_size=timing.pop("matmul_size", ROOFLINE_MATMUL),
                               memory_budget_bytes=memory_budget_bytes, time_budget_s=time_budget_s,
                               progress=progress, should_stop=should_stop, **timing)
    theory = {}
    if result.matmul_gflops:
        for method in dict.fromkeys(r["method"] for r in result.rows):
            measured = [r for r in result.rows if r["method"] == method and not r.get("skipped")]
            if measured:
                pts = [(r["n"], r["flops"] / (result.matmul_gflops * 1e9) * 1e3) for r in measured]
                theory[method] = ([p[0] for p in pts], [p[1] for p in pts])
    cross, cross_text = result.crossover_info("sdpa", "linear_chunked")
    cross_text = named(_with_labels(cross_text))  # the page shows labels, never internal ids

    counts = cost.flop_counts(ARTICLE_N, ARTICLE_D)
    claim = {"n": ARTICLE_N, "head_dim": ARTICLE_D, "quadratic_flops": counts["quadratic_flops"],
             "linear_flops": counts["linear_flops"], "ratio": counts["ratio"], "measured": None}
    claim.update(measured_headline(result, bool(causal)))
    # The view keeps the engine's sentences as messages, so the same sweep is shown in either
    # language without timing it again.
    return ComplexityView(
        rows=result.rows, method_labels={method: method_label(method) for method in SWEEP_METHOD_LABELS},
        theory=theory, slopes=result.slopes(),
        crossover=cross, crossover_text=cross_text, claim=claim, notes=[named(x) for x in notes + list(result.notes)],
        matmul_gflops=result.matmul_gflops, cancelled=result.cancelled, truncated=result.truncated,
        csv=result.to_csv(),
        params={"ns": ns, "d": head_dim, "m": m, "causal": bool(causal), "map": feature_map},
        disturbed=result.disturbed, disturbance=[named(x) for x in result.disturbance],
    )


TABLE_COLUMNS = ("method", "n", "causal", "time_ms", "time_min_ms", "time_max_ms", "time_iqr_ms", "gflops",
                 "peak_mem_bytes", "flops", "skipped")


def complexity_table(view: ComplexityView):
    """Every run, one row each, headers and method labels as messages (the page says them)."""
    import pandas as pd
    cols = list(TABLE_COLUMNS)
    frame = pd.DataFrame([{c: r.get(c) for c in cols} for r in view.rows], columns=cols)
    # (words as objects: pandas' own text columns would keep only the English of a message)
    frame["method"] = pd.Series([method_label(method) for method in frame["method"]], dtype=object)
    frame["skipped"] = pd.Series([named(reason) if isinstance(reason, str) else reason for reason in frame["skipped"]],
                                 dtype=object)
    frame["causal"] = pd.Series([Message("common.yes" if flag else "common.no") if isinstance(flag, bool) else flag
                                 for flag in frame["causal"]], dtype=object)
    frame = with_headers(frame, {c: Message(f"complexity.col.{c}") for c in cols})
    return frame.round(4)
