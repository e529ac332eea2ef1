"""The complexity tab: time and memory against N for softmax and the linear forms, measured
live, with fitted slopes, the FLOP model and the crossover.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..measure import cost, live_timing
from .. import maps as feature_maps
from ..catalog import DEFAULT_METHODS, FEATURE_MAPS, MAX_POINTS, N_CAP
from .common import _int


ARTICLE_N, ARTICLE_D = 100_000, 128


def sweep_lengths(n_min, n_max, points) -> list[int]:
    """Geometrically spaced N from n_min to n_max (rounded to multiples of 16)."""
    n_min, n_max, points = _int(n_min, "N min"), _int(n_max, "N max"), _int(points, "points")
    if n_min < 16:
        raise ValueError(f"N min: at least 16 tokens, got {n_min}")
    if n_max > N_CAP:
        raise ValueError(f"N max: at most {N_CAP:,} tokens on this server, got {n_max:,}")
    if n_max < n_min:
        raise ValueError(f"N max ({n_max}) must be at least N min ({n_min})")
    if not 1 <= points <= MAX_POINTS:
        raise ValueError(f"points: between 1 and {MAX_POINTS}, got {points}")
    if points == 1 or n_max == n_min:
        return [n_max]
    grid = np.geomspace(n_min, n_max, points)
    return sorted({max(16, int(round(x / 16)) * 16) for x in grid})


@dataclass
class ComplexityView:
    rows: list
    method_labels: dict
    theory: dict                   # method -> (ns, ms) from the FLOP model at the matmul rate
    slopes: dict
    crossover: float | None
    crossover_text: str
    claim: dict                    # article's FLOP ratio, and a measured ratio where both ran
    notes: list
    matmul_gflops: float | None
    cancelled: bool = False
    truncated: bool = False
    csv: str = ""
    params: dict = field(default_factory=dict)
    disturbed: bool = False        # live_timing's verdict: other load moved the numbers
    disturbance: list = field(default_factory=list)


def plan_sweep(ns, head_dim, feature_dim, methods, budget_bytes):
    """Check the memory estimate of every run before anything starts.

    Returns notes for runs that will be skipped; raises ValueError when nothing would run.
    """
    from ..measure import bench

    notes, runnable = [], 0
    for method in methods:
        over = [n for n in ns if not cost.fits(cost.estimate("complexity", ns=[n], d=head_dim, m=feature_dim,
                                                             methods=[method]), budget_bytes, math.inf)]
        runnable += len(ns) - len(over)
        if over:
            notes.append(f"{bench.METHOD_LABELS.get(method, method)}: skipped at N ≥ {min(over):,} "
                         f"(estimated memory over the {budget_bytes / 2**30:.1f} GiB budget)")
    if runnable == 0:
        raise ValueError("memory: every run is over the memory budget; lower N max")
    return notes


def complexity_view(n_min=256, n_max=4096, points=5, head_dim=64, feature_dim=None, causal=True,
                    feature_map="elu1", methods=DEFAULT_METHODS, repeats=3, memory_budget_bytes=2 << 30,
                    time_budget_s=60.0, progress=None, should_stop=None, **timing) -> ComplexityView:
    """Run a guarded sweep and assemble what the complexity tab draws. ``timing``: live_timing.sweep's
    injectable timer, rate and stall probes (tests)."""
    from ..measure import bench

    ns = sweep_lengths(n_min, n_max, points)
    head_dim = _int(head_dim, "d")
    if not 1 <= head_dim <= 512:
        raise ValueError(f"d: between 1 and 512, got {head_dim}")
    if feature_dim in (None, "", 0):
        feature_dim = None
    else:
        feature_dim = _int(feature_dim, "m")
        if not 1 <= feature_dim <= 2048:
            raise ValueError(f"m: between 1 and 2048, got {feature_dim}")
    repeats = _int(repeats, "repeats")
    if not 1 <= repeats <= 20:
        raise ValueError(f"repeats: between 1 and 20, got {repeats}")
    methods = [x for x in (methods or []) if x]
    if not methods:
        raise ValueError("methods: choose at least one method")
    if feature_map in FEATURE_MAPS and not FEATURE_MAPS[feature_map].takes_m and feature_dim is not None:
        feature_dim = None  # fixed-size maps (elu+1, Taylor-2) decide m themselves
    fm = feature_maps.create(feature_map, head_dim, num_features=feature_dim)
    m = fm.num_features
    notes = plan_sweep(ns, head_dim, m, methods, memory_budget_bytes)
    result = live_timing.sweep(ns, head_dim=head_dim, feature_map=feature_map, feature_dim=feature_dim,
                               methods=methods, causal=bool(causal), repeats=repeats, warmup=1,
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
    for method, label in bench.METHOD_LABELS.items():     # the page shows labels, never internal ids
        cross_text = cross_text.replace(method, label)
    counts = cost.flop_counts(ARTICLE_N, ARTICLE_D)
    claim = {"n": ARTICLE_N, "head_dim": ARTICLE_D, "quadratic_flops": counts["quadratic_flops"],
             "linear_flops": counts["linear_flops"], "ratio": counts["ratio"], "measured": None}
    for n in sorted({r["n"] for r in result.rows}, reverse=True):
        tq, tl = result.time_ms("sdpa", n), result.time_ms("linear_parallel", n)
        if tq and tl:
            claim["measured"] = {"n": n, "quadratic_ms": tq, "linear_ms": tl, "ratio": tq / tl,
                                 "flop_ratio": cost.flop_counts(n, head_dim, m)["ratio"], "disturbed": result.disturbed}
            break
    return ComplexityView(
        rows=result.rows, method_labels=dict(bench.METHOD_LABELS), theory=theory, slopes=result.slopes(),
        crossover=cross, crossover_text=cross_text, claim=claim, notes=notes + list(result.notes),
        matmul_gflops=result.matmul_gflops, cancelled=result.cancelled, truncated=result.truncated,
        csv=result.to_csv(),
        params={"ns": ns, "d": head_dim, "m": m, "causal": bool(causal), "map": feature_map},
        disturbed=result.disturbed, disturbance=list(result.disturbance),
    )


def complexity_table(view: ComplexityView):
    import pandas as pd
    cols = ["label", "n", "causal", "time_ms", "time_min_ms", "time_max_ms", "time_iqr_ms", "gflops", "peak_mem_bytes", "flops", "skipped"]
    frame = pd.DataFrame([{c: r.get(c) for c in cols} for r in view.rows], columns=cols)
    frame = frame.rename(columns={"label": "method", "n": "N", "time_ms": "time (ms, median)",
                                  "time_min_ms": "fastest round (ms)",
                                  "time_max_ms": "slowest round (ms)", "time_iqr_ms": "IQR (ms)", "gflops": "GFLOP/s", "peak_mem_bytes": "extra peak (bytes)",
                                  "flops": "FLOPs (model)", "skipped": "skipped because"})
    return frame.round(4)
