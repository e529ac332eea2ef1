"""The quality tab: random-feature error against m (IID and orthogonal, over seeds, with the
IID variance formula), and one metric for one map over every head.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch

from .. import stopping
from ..core.cache import LRU
from ..diagnostics import attention
from ..measure import cost, metrics, showing
from ..catalog import OVERVIEW_METRICS, REFERENCE, map_choices, map_specs, random_map_ids
from ..catalog import map_label as catalog_label
from ..text import Joined, Message
from .common import (MAX_MAP_CELLS, MAX_OVERVIEW_CELLS, _compare, _int, make_feature_map, metric_label,
                     sample_model, select_head, trained_version, view_title)
from .mechanism_maps import mechanism_maps
from .maps import SPREAD_METRICS, SPREAD_SEEDS, causal_notices, maps_view, resolve_causal


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
    map_id: str                  # the catalogue id of the random map
    ms: list                     # feature counts
    flops: list                  # linear-path FLOPs per head at each m
    kernel_mse: np.ndarray       # (len(ms), seeds) relative MSE of the kernel estimate; NaN = seed not drawn
    map_error: np.ndarray        # (len(ms), seeds) map_rel_error from metrics; NaN = seed not drawn
    theory: list | None = None   # IID theory for the kernel MSE at each m (None if unknown)
    seeds_used: list = field(default_factory=list)   # redraws measured at each m


@dataclass
class QualityView:
    curves: list
    shape_rows: list             # metric rows for every map at the chosen m (entropy, monotonicity)
    n_tokens: int
    seeds: int
    notices: list = field(default_factory=list)
    title: str = ""
    norms: dict = field(default_factory=dict)       # rf_theory.favor_norms of the head: q_norms, k_norms
    favor_need: dict = field(default_factory=dict)  # rf_theory.favor_required_features at REQUIRED_ERROR
    seed_note: str = ""          # how many redraws each m got (a message)
    spread: dict = field(default_factory=dict)      # id -> maps.SeedSpread of the shape rows' random maps

    provenance: dict = field(default_factory=dict)  # explorer.provenance.record of the data and settings

QUALITY_MS = tuple(2 ** i for i in range(2, 13))      # 4 ... 4096
FULL_SEEDS_UP_TO = 512       # above this m, fewer redraws: the spread shrinks as 1/m anyway
MIN_SEEDS = 3
REQUIRED_ERROR = 0.1         # the relative error the FAVOR+ variance formula is asked about
MAX_QUALITY_WORK = 2.0e10    # multiply-adds of the kernel estimates across all curves (~0.2-0.5 s)
MIN_GRID_TOP = 64            # a request that cannot measure up to this m is refused, not cut


def seeds_at(m: int, seeds: int) -> int:
    """Redraws measured at m: all of them up to FULL_SEEDS_UP_TO, then proportionally fewer
    (never below MIN_SEEDS, never above ``seeds``), so that each m costs about the same."""
    if m <= FULL_SEEDS_UP_TO:
        return seeds
    return min(seeds, max(MIN_SEEDS, round(seeds * FULL_SEEDS_UP_TO / m)))


def _work(n_maps, ms, seeds, n, heads) -> float:
    return float(n_maps * sum(seeds_at(mm, seeds) * mm for mm in ms) * n * n * heads)


def _plan_curves(n, d, heads, maps, ms, seeds):
    """(seeds, random map ids, grid of m, notices, estimate) of the error curves of
    ``heads`` head(s) of N = ``n``: refused with a message when over a cap or the cost model."""
    seeds = _int(seeds, "seeds")
    if not 1 <= seeds <= 50:
        raise ValueError(Message("quality.err_seeds", seeds=seeds))
    labels = list(maps) if maps else random_map_ids()
    specs = map_specs()
    rand = [label for label in labels if label in specs and specs[label].random]
    if not rand:
        raise ValueError(Message("quality.err_maps"))
    ms = sorted({int(x) for x in ms})
    if not ms or ms[0] < 1:
        raise ValueError(Message("quality.err_ms", ms=ms[:8]))
    if n * n * heads > MAX_MAP_CELLS:
        raise ValueError(Message("quality.err_cells", cells=f"{n * n * heads:,}", cap=f"{MAX_MAP_CELLS:,}"))
    smallest = [mm for mm in ms if mm <= MIN_GRID_TOP] or ms[:1]
    if _work(len(rand), smallest, seeds, n, heads) > MAX_QUALITY_WORK:
        raise ValueError(Message("quality.err_work", n=n, seeds=seeds))
    asked, notices = ms, []
    while _work(len(rand), ms, seeds, n, heads) > MAX_QUALITY_WORK:
        ms = ms[:-1]
    if ms != asked:
        notices.append(Message("quality.grid_cut", n=n, top=ms[-1], asked=asked[-1]))
    estimate = cost.check(cost.estimate("quality", n=n, d=d, heads=heads, labels=rand, ms=ms, seeds=seeds))
    return seeds, rand, ms, notices, estimate


def _plan_overview(n, d, layers, heads, map_label, m):
    """The overview's estimate (every head of every layer at N = ``n``), refused with a
    message when over its cap or the cost model."""
    if map_label == REFERENCE:
        raise ValueError(Message("quality.err_softmax"))
    cells = layers * heads * n ** 2
    if cells > MAX_OVERVIEW_CELLS:
        raise ValueError(Message("quality.err_overview_cells", heads=layers * heads, n=n,
                                 cells=f"{cells:,}", cap=f"{MAX_OVERVIEW_CELLS:,}"))
    return cost.check(cost.estimate("overview", n=n, d=d, layers=layers, heads=heads, label=map_label, m=m))


def price_request(n, d, layers, heads, maps=None, ms=QUALITY_MS, seeds=10, m=64, overview_map="elu1",
                  mean_over_heads: bool = False):
    """Price a whole quality request before anything is computed, from the sample's shape
    alone (N tokens, head dim, layers, heads; for a text, from the tokenizer and the model's
    config, before the model reads it): the error curves over every seed and m, and the
    overview of every head, each within its caps and together within the cost model's limits.
    Returns the estimate; raises ValueError with one message when refused."""
    n, d, layers, heads = (_int(x, name) for x, name in ((n, "N"), (d, "d"), (layers, "layers"), (heads, "heads")))
    *_, estimate = _plan_curves(n, d, heads if mean_over_heads else 1, maps, ms, seeds)
    if layers * heads > 1:
        estimate = estimate + _plan_overview(n, d, layers, heads, overview_map, m)
    return cost.check(estimate)


def price_sample_request(source, text="", n=64, d=32, model=None, head=0, maps=None, seeds=10, m=64,
                         overview_map="elu1"):
    """``price_request`` for the sample the data panel would give, from its shape alone: a
    text is tokenized and its model's config read (the model does not read it), a random
    sample's shape is its N and d. Returns the estimate, or None where the shape is not
    known before loading (an uploaded file, an empty text: loading says what is wrong)."""
    if source == "text":
        if not isinstance(text, str) or not text.strip():
            return None
        from ..sources.text import text_shape   # lazy: the text source pulls in transformers
        model = model if isinstance(model, str) and model.strip() else None
        n, layers, heads, d = text_shape(text, model=model)
    elif source == "random":
        layers = heads = 1
    else:
        return None
    mean = head in (None, "mean", "mean over heads")
    return price_request(n, d, layers, heads, maps, seeds=seeds, m=m, overview_map=overview_map,
                         mean_over_heads=mean)


@torch.inference_mode()
def quality_view(sample, layer=0, head=0, maps=None, ms=QUALITY_MS, seeds=10, causal=None, m=64,
                 progress=None, spread: int = SPREAD_SEEDS, session=None,
                 should_stop=None) -> QualityView:
    """Error against m for every random-feature map (IID and orthogonal), over redraws
    (``seeds`` up to m = FULL_SEEDS_UP_TO, fewer beyond), with the IID theory, the norms
    ‖q'‖, ‖k'‖ of the head and the m the FAVOR+ variance formula asks for; the entropy and
    monotonicity of every map at ``m`` (random maps: one draw, and ``spread`` seeds for the
    mean and spread) and of every mechanism (``mechanism_maps``, its default settings). Title, notes and notices are messages:
    one view serves every language. ``should_stop`` (see
    ``explorer.stopping``) is asked before every redraw: the visitor left, or the request's
    deadline passed, and the work ends there. ``causal`` None follows the data (a causal
    model's attention is causal: ``maps.resolve_causal``)."""
    q, k, v, layer, head, notices = select_head(sample, layer, head)
    notices = list(getattr(sample, "notices", [])) + notices
    n, d = q.shape[-2], q.shape[-1]
    heads = 1 if q.dim() == 2 else q.shape[0]
    seeds, rand, ms, grid_notices, _ = _plan_curves(n, d, heads, maps, ms, seeds)
    notices += grid_notices
    specs = map_specs()
    causal = resolve_causal(sample, causal)
    notices += causal_notices(sample, causal)
    # The trained maps this session has (Hedgehog, LUNA) join the shape table beside the fixed ones.
    offered = [label for label in map_choices()
               if label not in specs or not specs[label].trained or trained_version(session, specs[label].name)]

    # The curves, the norms and the m the formula asks for depend on the sample and the settings
    # alone, not on the page's language: a link, the lecture's Go deeper or the other
    # language's page finds them kept. The shape table is the maps tab's (kept there per map).
    key = None if sample.cache_key is None else (sample.cache_key, layer, head, tuple(rand), tuple(ms), seeds, causal)
    measured = _VIEWS.copy_of(key, lambda: _measure_quality(q, k, rand, ms, seeds, causal, progress, should_stop))
    shape = maps_view(sample, layer, "mean" if head is None else head, offered, causal, m, 0, display_max=8,
                      spread=spread, session=session, should_stop=should_stop, mechanisms=mechanism_maps())
    return QualityView(curves=measured["curves"], shape_rows=copy.deepcopy(shape.metrics), n_tokens=n, seeds=seeds,
                       # (the bars' note says that the mechanisms are causal: not the maps tab's notice)
                       notices=notices + [x for x in shape.notices
                                          if x not in notices and x != Message("maps.mechanisms_causal")],
                       title=view_title(sample, layer, head),
                       norms=measured["norms"], favor_need=measured["favor_need"],
                       seed_note=seed_note(ms, seeds), spread=copy.deepcopy(dict(shape.spread)))


def _measure_quality(q, k, rand, ms, seeds, causal, progress, should_stop) -> dict:
    """quality_view's measurements, its settings checked and resolved: {"curves", "norms",
    "favor_need"}, nothing in the page's language (the progress hears messages)."""
    from ..measure import metrics
    from ..maps import rf_theory

    n, d = q.shape[-2], q.shape[-1]
    specs = map_specs()
    reference = metrics.Reference(attention.softmax_map(q, k, causal=causal), causal=causal)
    exact = torch.exp(attention.logits(q, k).double())     # the kernel every estimate aims at
    exact_sq_mean = float((exact * exact).mean())
    curves, total, done = [], len(rand) * len(ms), 0
    for label in rand:
        spec = specs[label]
        kmse = np.full((len(ms), seeds), np.nan)
        merr = np.full((len(ms), seeds), np.nan)
        used_ms, used_seeds = [], []
        for i, mm in enumerate(ms):
            mm = mm + 1 if spec.even_m and mm % 2 else mm
            used_ms.append(mm)
            count = seeds_at(mm, seeds)
            used_seeds.append(count)
            for sd in range(count):
                stopping.check(should_stop)
                fmap = _random_map(label, d, mm, sd)
                kmse[i, sd], merr[i, sd] = measure_redraw(q, k, fmap, reference, exact, exact_sq_mean, causal)
            done += 1
            if progress:
                progress(done / total, Message("quality.progress_step", label=catalog_label(label), m=mm))
        orth = dict(spec.options).get("orthogonal", False)
        theory = None
        if not orth:
            vals = [theory_relative_mse(q, k, spec.name, mm) for mm in used_ms]
            theory = None if any(x is None for x in vals) else vals
        flops = [cost.flop_counts(n, d, mm)["linear_flops"] for mm in used_ms]
        curves.append(QualityCurve(label, used_ms, flops, kmse, merr, theory, used_seeds))

    return {"curves": curves, "norms": rf_theory.favor_norms(q, k),
            "favor_need": rf_theory.favor_required_features(q, k, REQUIRED_ERROR, causal=causal)}


def quality_page(sample, layer, head, maps=None, seeds=10, causal=None, m=64, overview_map="elu1",
                 overview_metric="map_rel_error", session=None, progress=None, should_stop=None) -> tuple:
    """What the quality tab shows for these settings: (quality view, head overview or None,
    notices). The overview needs more than one head; a sample of one says so instead.
    ``progress(fraction, message)`` hears about both parts."""
    report = (lambda f, msg: progress(0.1 + 0.75 * f, msg)) if progress else None
    quality = quality_view(sample, layer, head, maps or None, seeds=int(seeds), causal=causal, m=int(m),
                           progress=report, session=session, should_stop=should_stop)
    if sample.n_layers * sample.n_heads == 1:
        return quality, None, page_notices(quality, None)
    if progress:
        progress(0.9, Message("quality.overview_progress"))
    overview = head_overview(sample, overview_map, overview_metric, causal, int(m), session=session)
    return quality, overview, page_notices(quality, overview)


def page_notices(quality: QualityView, overview) -> list:
    """The notices the page shows over ``quality_page``'s figures: the view's, and that the
    overview needs more than one head where there is none."""
    return list(quality.notices) + ([] if overview is not None else [Message("quality.overview_needs_heads")])


# Quality views (and head overviews) measured without a session's trained map, per sample
# and settings; a few hundred kB each.
_VIEWS = LRU(32)
_OVERVIEWS = LRU(64)


def shape_spread(view: QualityView) -> dict:
    """label -> {metric: (mean, sd)} of the entropy and monotonicity over the spread's seeds,
    for ``figures.metric_bars``."""
    keys = [key for key in ("entropy_approx", "monotonicity") if key in SPREAD_METRICS]
    return {label: {key: (spread.mean(key), spread.sd(key)) for key in keys} for label, spread in view.spread.items()}


# Random feature maps by (label, d, m, seed): a seed always draws the same W, so the next
# Measure (another head, another text) reuses them instead of drawing again; drawing the
# orthogonal ones (a QR per d x d block) was a quarter of a Measure. Bounded by bytes.
_RANDOM_MAPS_BYTES = 64 * 2 ** 20


def _map_bytes(fmap) -> int:
    return sum(b.numel() * b.element_size() for b in fmap.buffers())


_RANDOM_MAPS = LRU(max_weight=_RANDOM_MAPS_BYTES, weigh=_map_bytes)


def _random_map(label: str, d: int, m: int, seed: int):
    key = (label, int(d), int(m), int(seed))
    fmap = _RANDOM_MAPS.get(key)
    if fmap is None:
        fmap, _ = make_feature_map(label, d, m, seed)
        _RANDOM_MAPS.put(key, fmap)
    return fmap


def seed_note(ms, seeds: int) -> str:
    """'10 redraws per m up to 512, then 5 at 1024, 3 at 2048, 3 at 4096' (what was measured),
    as a message."""
    full = [mm for mm in ms if seeds_at(mm, seeds) == seeds]
    rest = [(mm, seeds_at(mm, seeds)) for mm in ms if seeds_at(mm, seeds) != seeds]
    parts = [Message("quality.seed_note_one") if seeds == 1 else Message("quality.seed_note", seeds=seeds)]
    if full and rest:
        parts.append(Message("quality.seed_note_upto", m=full[-1]))
    if rest:
        items = Joined((Message("quality.seed_note_item", count=count, m=mm) for mm, count in rest),
                       "quality.seed_note_sep")
        parts.append(Message("quality.seed_note_then", items=items))
    return parts[0] if len(parts) == 1 else Joined(parts)


def measure_redraw(q, k, fmap, reference, exact, exact_sq_mean: float, causal: bool) -> tuple[float, float]:
    """(relative kernel MSE, map error) of one draw of random features, from one N x N product.

    The attention map needs phi(q) as a query (which may carry a positive per-row constant:
    explorer.maps), the kernel estimate phi(q) as a key (unbiased). The map's
    product is formed once and the estimate derived from it by that row constant, read off
    as the ratio of the two feature rows' norms. ``measure_redraw_plain`` is the reference.
    """
    fq = fmap(q, is_query=True)
    fk = fmap(k)
    weights = fq @ fk.transpose(-1, -2)                       # float32: the error measured is >> 1e-7
    row_scale = fmap(q).norm(dim=-1) / fq.norm(dim=-1)        # phi_key(q_i) = c_i phi_query(q_i)
    estimate = weights.double() * row_scale.double().unsqueeze(-1)
    kernel_mse = float((estimate - exact).square_().mean() / exact_sq_mean)
    if causal:
        weights = weights.masked_fill(~attention.causal_mask(weights.shape[-1], weights.device), 0.0)
    norm = attention.normalisers(weights)
    err = reference.map_error(weights / norm.sums.unsqueeze(-1))
    return kernel_mse, (np.nan if err is None else err)


def measure_redraw_plain(q, k, fmap, causal: bool) -> tuple[float, float]:
    """``measure_redraw`` the plain way: the float64 kernel estimate, the map from
    ``attention.kernel_map_with_flags`` and the full ``metrics.compare``."""
    from ..measure import metrics
    reference = attention.softmax_map(q, k, causal=causal)
    approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
    err = metrics.compare(reference, approx, ill_defined=ill, causal=causal)["map_rel_error"]
    return kernel_estimate_mse(q, k, fmap), (np.nan if err is None else err)


@dataclass
class HeadOverview:
    values: np.ndarray          # (layers, heads)
    metric: str
    metric_label: str           # a message
    map_label: str              # the map's name (a message)
    layer_names: list


@torch.inference_mode()
def head_overview(sample, map_label="elu1", metric="map_rel_error", causal=None, m=64, seed=0,
                  session=None) -> HeadOverview:
    """One metric for one map on every (layer, head): which heads are hard to approximate.
    ``metric`` is one of catalog.OVERVIEW_METRICS (the judging numbers, not counts or flags).
    ``causal`` None follows the data, as in the maps tab."""
    if metric not in OVERVIEW_METRICS:
        raise ValueError(Message("quality.err_metric", metric=repr(str(metric)[:40]),
                                 choices=", ".join(OVERVIEW_METRICS)))
    q, k, v = sample.q, sample.k, sample.v
    d = q.shape[-1]
    _plan_overview(q.shape[2], d, q.shape[0], q.shape[1], map_label, m)
    causal = resolve_causal(sample, causal)
    measure = lambda: _measure_overview(sample, map_label, metric, causal, m, seed, session)  # noqa: E731
    spec = map_specs().get(map_label)
    kept = sample.cache_key is not None and spec is not None and not spec.trained   # a trained map may be the session's
    values = _OVERVIEWS.copy_of((sample.cache_key, map_label, metric, causal, int(m), seed) if kept else None, measure)
    return HeadOverview(values, metric, metric_label(metric), catalog_label(map_label),
                        list(sample.layer_names))


def _measure_overview(sample, map_label, metric, causal, m, seed, session) -> np.ndarray:
    """The overview's (layers, heads) values: numbers only, the same in every language."""
    q, k, v = sample.q, sample.k, sample.v
    d = q.shape[-1]
    fmap, _ = make_feature_map(map_label, d, m, seed, layer="all", session=session,
                               model=sample_model(sample))
    reference = attention.softmax_map(q, k, causal=causal)
    approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
    s = attention.masked_logits(q, k, causal)
    values = np.full(tuple(q.shape[:2]), np.nan)
    for layer in range(q.shape[0]):
        for h in range(q.shape[1]):
            row = _compare(reference[layer, h], approx[layer, h], v[layer, h], s[layer, h], ill[layer, h],
                           fmap.num_features, causal, d)
            x = row.get(metric)
            # A mean over fewer than half of the head's rows is no value (the maps tab's rule).
            values[layer, h] = np.nan if x is None or showing.mostly_undefined(row, metric) else float(x)
    return values
