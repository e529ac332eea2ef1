"""The quality tab: random-feature error against m (IID and orthogonal, over seeds, with the
IID variance formula), and one metric for one map over every head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .. import attention, cost
from ..catalog import METRIC_INFO, REFERENCE, map_choices, map_specs, random_map_labels
from .common import MAX_OVERVIEW_CELLS, _compare, _int, make_feature_map, select_head
from .maps import maps_view


def kernel_estimate_mse(q, k, feature_map) -> float:
    """Relative MSE of the raw kernel estimate phi(q).phi(k) against exp(s) over all pairs.

    Both rows are mapped as keys (no per-query rescaling), so the estimate is the unbiased
    one; divided by mean(exp(s)^2) so that heads of different scales compare.
    """
    s = attention.logits(q, k).double()
    exact = torch.exp(s)
    est = (feature_map(q).double() @ feature_map(k).double().transpose(-1, -2))
    return float(((est - exact) ** 2).mean() / (exact ** 2).mean())


def theory_relative_mse(q, k, kind: str, m: int) -> float | None:
    """Theoretical relative MSE of an IID random-feature estimate of exp(s), for m features.

    FAVOR+ (positive features): per-feature variance exp(2s) (exp(|q'+k'|^2) - 1), MSE = that / m.
    Trigonometric (m/2 cos/sin draws): per-draw variance exp(2s) e^{|q'-k'|^2}(1 - e^{-|q'-k'|^2})^2 / 2,
    so MSE = exp(2s) e^{D}(1 - e^{-D})^2 / m with D = |q'-k'|^2.
    Normalised by mean(exp(2s)) as ``kernel_estimate_mse`` is. None for other maps.
    """
    q = q.double() / q.shape[-1] ** 0.25
    k = k.double() / k.shape[-1] ** 0.25
    s = q @ k.transpose(-1, -2)
    qq = (q * q).sum(-1, keepdim=True)
    kk = (k * k).sum(-1).unsqueeze(-2)
    sq2 = torch.exp(2 * s)
    if kind == "favor_plus":
        var = sq2 * torch.expm1(qq + kk + 2 * s)
    elif kind == "trig_rff":
        dist = qq + kk - 2 * s
        var = sq2 * torch.exp(dist) * (-torch.expm1(-dist)) ** 2
    else:
        return None
    return float(var.mean() / sq2.mean() / m)


@dataclass
class QualityCurve:
    label: str
    ms: list                     # feature counts
    flops: list                  # linear-path FLOPs per head at each m
    kernel_mse: np.ndarray       # (len(ms), seeds) relative MSE of the kernel estimate
    map_error: np.ndarray        # (len(ms), seeds) map_rel_error from metrics.compare
    theory: list | None = None   # IID theory for the kernel MSE at each m (None if unknown)


@dataclass
class QualityView:
    curves: list
    shape_rows: list             # metric rows for every map at the chosen m (entropy, monotonicity)
    n_tokens: int
    seeds: int
    notices: list = field(default_factory=list)
    title: str = ""


QUALITY_MS = (4, 8, 16, 32, 64, 128, 256)
MAX_QUALITY_WORK = 4.0e9     # multiply-adds across all curves: keeps a request near a few seconds


@torch.inference_mode()
def quality_view(sample, layer=0, head=0, maps=None, ms=QUALITY_MS, seeds=10, causal=False, m=64,
                 progress=None) -> QualityView:
    """Error against m for every random-feature map (IID and orthogonal), over ``seeds`` redraws."""
    q, k, v, layer, head, notices = select_head(sample, layer, head)
    notices = list(getattr(sample, "notices", [])) + notices
    seeds = _int(seeds, "seeds")
    if not 1 <= seeds <= 50:
        raise ValueError(f"seeds: choose between 1 and 50 redraws, got {seeds}")
    labels = list(maps) if maps else random_map_labels()
    specs = map_specs()
    rand = [label for label in labels if label in specs and specs[label].random]
    if not rand:
        raise ValueError("maps: choose at least one random-feature map (FAVOR+, trig RFF)")
    ms = sorted({int(x) for x in ms})
    n, d = q.shape[-2], q.shape[-1]
    heads = 1 if q.dim() == 2 else q.shape[0]
    work = len(rand) * seeds * sum(ms) * n * n * heads
    if work > MAX_QUALITY_WORK:
        raise ValueError(f"quality: N = {n} with {seeds} seeds is too much work for one request; "
                         "lower N, the seeds or the largest m")
    cost.check(cost.estimate("quality", n=n, d=d, heads=heads, labels=rand, ms=ms, seeds=seeds))
    causal = bool(causal)
    from .. import metrics
    reference = metrics.Reference(attention.softmax_map(q, k, causal=causal), causal=causal)
    curves, total, done = [], len(rand) * len(ms), 0
    for label in rand:
        spec = specs[label]
        kmse = np.full((len(ms), seeds), np.nan)
        merr = np.full((len(ms), seeds), np.nan)
        used_ms = []
        for i, mm in enumerate(ms):
            mm = mm + 1 if spec.even_m and mm % 2 else mm
            used_ms.append(mm)
            for sd in range(seeds):
                fmap, _ = make_feature_map(label, d, mm, sd)
                kmse[i, sd] = kernel_estimate_mse(q, k, fmap)
                approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
                err = reference.compare(approx, ill_defined=ill)["map_rel_error"]
                merr[i, sd] = np.nan if err is None else err
            done += 1
            if progress:
                progress(done / total, f"{label}, m = {mm}")
        orth = dict(spec.options).get("orthogonal", False)
        theory = None
        if not orth:
            vals = [theory_relative_mse(q, k, spec.name, mm) for mm in used_ms]
            theory = None if any(x is None for x in vals) else vals
        flops = [cost.flop_counts(n, d, mm)["linear_flops"] for mm in used_ms]
        curves.append(QualityCurve(label, used_ms, flops, kmse, merr, theory))

    shape = maps_view(sample, layer, "mean" if head is None else head, [label for label in map_choices()],
                      causal, m, 0, display_max=8)
    where = f"layer {layer}, " + ("mean over heads" if head is None else f"head {head}")
    return QualityView(curves=curves, shape_rows=shape.metrics, n_tokens=n, seeds=seeds,
                       notices=notices + [x for x in shape.notices if x not in notices],
                       title=f"{getattr(sample, 'source', '')} · {where}")


@dataclass
class HeadOverview:
    values: np.ndarray          # (layers, heads)
    metric: str
    metric_label: str
    map_label: str
    layer_names: list


@torch.inference_mode()
def head_overview(sample, map_label="elu+1", metric="map_rel_error", causal=False, m=64, seed=0) -> HeadOverview:
    """One metric for one map on every (layer, head): which heads are hard to approximate."""
    if metric not in METRIC_INFO:
        raise ValueError(f"metric: unknown {metric!r}; choose from {', '.join(METRIC_INFO)}")
    if map_label == REFERENCE:
        raise ValueError("map: choose an approximation, not softmax itself")
    q, k, v = sample.q, sample.k, sample.v
    d = q.shape[-1]
    cells = q.shape[0] * q.shape[1] * q.shape[2] ** 2
    if cells > MAX_OVERVIEW_CELLS:
        raise ValueError(f"N: the overview of {q.shape[0] * q.shape[1]} heads at N = {q.shape[2]} is "
                         f"{cells:,} attention cells, over the cap of {MAX_OVERVIEW_CELLS:,}; use a shorter text")
    cost.check(cost.estimate("overview", n=q.shape[2], d=d, layers=q.shape[0], heads=q.shape[1], label=map_label, m=m))
    fmap, _ = make_feature_map(map_label, d, m, seed)
    causal = bool(causal)
    reference = attention.softmax_map(q, k, causal=causal)
    approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
    s = attention.masked_logits(q, k, causal)
    values = np.full(tuple(q.shape[:2]), np.nan)
    for layer in range(q.shape[0]):
        for h in range(q.shape[1]):
            row = _compare(reference[layer, h], approx[layer, h], v[layer, h], s[layer, h], ill[layer, h],
                           fmap.num_features, causal, d)
            x = row.get(metric)
            values[layer, h] = np.nan if x is None else float(x)
    return HeadOverview(values, metric, METRIC_INFO[metric][0], map_label, list(sample.layer_names))
