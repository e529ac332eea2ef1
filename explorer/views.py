"""What each tab of the app shows, assembled from the engine: plain data, no gradio.

Each ``*_view`` function runs the engine (sources -> feature maps -> maps / states ->
metrics) and returns a small dataclass of numpy arrays and rows that ``explorer.figures``
draws and ``explorer.ui`` displays. Keeping this here means the API endpoints, the tests
and the command line can call exactly what the UI shows, and the UI stays free of math.

Display arrays may be reduced for the browser (block means of a large N x N map); every
metric is computed at full resolution before that, and the view says when it happened.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import torch

from . import attention, cost, feature_maps

# The map catalogue, labels and limits the UI shows live in explorer.catalog (no torch
# there, so the page is built without the engine); re-exported here for the engine's callers.
from .catalog import (  # noqa: F401
    DECAY_LABELS, DEFAULT_MAPS, DEFAULT_METHODS, FEATURE_MAPS, HEADLINE_METRICS, MAX_POINTS, METRIC_INFO,
    METRIC_SHORT, N_CAP, REFERENCE, MapSpec,
    default_maps, map_choices, map_specs, metric_help, metric_keys, random_map_labels,
)

# Guards: the N x N tabs hold several float64 copies of every map (metrics), so the
# number of attention cells per request is capped; long sequences belong to the
# complexity tab, which never forms what it does not need.
MAX_MAP_CELLS = 2048 * 2048            # heads x N x N for one maps view
MAX_OVERVIEW_CELLS = 24 * 2 ** 20      # layers x heads x N x N for the head overview
MAX_STATE_ELEMENTS = 16 * 2 ** 20      # N x m x d_v recorded states in the state tab

# Largest side of a heatmap sent to the browser. 1024 x 1024 x 10 panels is ~100 MB of
# JSON; 128 x 128 block means keep the picture and stay fast.
DISPLAY_MAX = 128


# ---------------------------------------------------------------------------------------
# Building the map behind a label of the catalogue
# ---------------------------------------------------------------------------------------

def make_feature_map(label: str, head_dim: int, m: int | None, seed: int, window: int = 4):
    """Build the map behind ``label``; returns (feature_map, notices). ``window`` is the
    sliding-window hybrid's w (ignored by every other map)."""
    specs = map_specs()
    if label not in specs:
        raise ValueError(f"maps: unknown map {label!r}; choose from {', '.join(map_choices())}")
    spec = specs[label]
    notices = []
    kwargs = dict(spec.options)
    if spec.takes_m and m is not None:
        m = int(m)
        if m < 1:
            raise ValueError(f"m: the number of features must be at least 1, got {m}")
        if spec.even_m and m % 2:
            notices.append(f"{label}: m rounded up from {m} to {m + 1} (features come in cos/sin pairs).")
            m += 1
        kwargs["num_features"] = m
    if spec.name == "sliding_window":
        window = int(window)
        if window < 0:
            raise ValueError(f"window: must be 0 or more keys, got {window}")
        kwargs["window"] = window
    return feature_maps.create(spec.name, head_dim, seed=int(seed), **kwargs), notices


# ---------------------------------------------------------------------------------------
# Samples: loading, cached so that re-drawing a view does not re-run the model.
# ---------------------------------------------------------------------------------------

_sample_cache: "OrderedDict[tuple, object]" = OrderedDict()
_sample_lock = threading.Lock()
SAMPLE_CACHE_SIZE = 8


def load_sample(source: str = "text", text: str = "", preset: str = "gaussian", n: int = 64, d: int = 32,
                data_seed: int = 0, temperature: float = 1.0, path: str | None = None, heads: int = 1):
    """A Sample from the chosen source. Errors are ValueErrors with a message for the user."""
    from . import sources  # lazy: importing the text source pulls in transformers

    if source == "text":
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text: the text is empty; type a sentence or pick an example")
        key = ("text", text)
        make = lambda: sources.from_text(text)  # noqa: E731
    elif source == "random":
        n, d, data_seed, heads = _int(n, "N"), _int(d, "d"), _int(data_seed, "data seed"), _int(heads, "heads")
        key = ("random", preset, n, d, data_seed, float(temperature), heads)
        make = lambda: sources.from_random(n, d, preset=preset, seed=data_seed,  # noqa: E731
                                           temperature=float(temperature), heads=heads)
    elif source == "file":
        if not path:
            raise ValueError("file: no file uploaded; upload a .npy, .npz or .pt file with q and k")
        key = None
        make = lambda: sources.load_file(path)  # noqa: E731
    else:
        raise ValueError(f"source: expected text, random or file, got {source!r}")
    if key is None:
        return make()
    with _sample_lock:
        if key in _sample_cache:
            _sample_cache.move_to_end(key)
            return _sample_cache[key]
    sample = make()
    with _sample_lock:
        _sample_cache[key] = sample
        while len(_sample_cache) > SAMPLE_CACHE_SIZE:
            _sample_cache.popitem(last=False)
    return sample


def _int(value, name: str) -> int:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a whole number, got {value!r}") from None
    if not math.isfinite(f) or f != int(f):
        raise ValueError(f"{name}: expected a whole number, got {value!r}")
    return int(f)


def select_head(sample, layer, head):
    """(q, k, v, layer, head_or_None, notices): one head (N, d), or all heads (H, N, d) for the mean.

    ``head`` is an int or "mean". Out-of-range picks are clamped with a notice, so a URL
    made for the text model still opens on a one-head random sample.
    """
    notices = []
    layer = _int(layer, "layer")
    if not 0 <= layer < sample.n_layers:
        fixed = min(max(layer, 0), sample.n_layers - 1)
        if sample.n_layers > 1:  # a one-layer sample has nothing else to show: no need to say so
            notices.append(f"Layer {layer} does not exist here (0..{sample.n_layers - 1}); showing layer {fixed}.")
        layer = fixed
    if head in (None, "mean", "mean over heads"):
        return sample.q[layer], sample.k[layer], sample.v[layer], layer, None, notices
    head = _int(head, "head")
    if not 0 <= head < sample.n_heads:
        fixed = min(max(head, 0), sample.n_heads - 1)
        if sample.n_heads > 1:
            notices.append(f"Head {head} does not exist here (0..{sample.n_heads - 1}); showing head {fixed}.")
        head = fixed
    return sample.q[layer, head], sample.k[layer, head], sample.v[layer, head], layer, head, notices


# ---------------------------------------------------------------------------------------
# Maps tab
# ---------------------------------------------------------------------------------------

@dataclass
class MapsView:
    """Everything the maps tab shows. ``maps``/``errors`` are display arrays (possibly block
    means); ``metrics`` rows are computed on the full maps."""

    tokens: list[str]                 # display labels of the rows/columns shown
    maps: dict                        # label -> (n, n) float32, softmax first
    errors: dict                      # label -> approx - softmax, (n, n); not for softmax
    ill_defined: dict                 # label -> count of ill-defined rows
    metrics: list                     # one dict per map: {"map": label, **compare(...)}
    n_tokens: int                     # full N
    block: int = 1                    # side of the averaged blocks (1 = exact cells)
    model_check: float | None = None  # max |recomputed softmax - model attention|
    notices: list = field(default_factory=list)
    title: str = ""
    display_note: str = ""            # how the display differs from the computed maps
    params: dict = field(default_factory=dict)


@torch.inference_mode()
def maps_view(sample, layer=0, head=0, maps=DEFAULT_MAPS, causal=False, m=64, seed=0,
              display_max: int = DISPLAY_MAX, window: int = 4) -> MapsView:
    """Softmax and every chosen kernel map for one head (or the mean over heads), with metrics.

    A map that fails (say, a new map that needs options) is reported in ``notices`` and
    left out; the others still show.
    """
    maps = list(maps or [])
    if not maps:
        raise ValueError("maps: choose at least one map")
    q, k, v, layer, head, notices = select_head(sample, layer, head)
    notices = list(getattr(sample, "notices", [])) + notices
    causal = bool(causal)
    d, n = q.shape[-1], q.shape[-2]
    cells = n * n * (q.shape[0] if q.dim() == 3 else 1)
    if cells > MAX_MAP_CELLS:
        raise ValueError(f"N: {cells:,} attention cells ({'heads × ' if q.dim() == 3 else ''}N × N, N = {n}) is over "
                         f"this tab's cap of {MAX_MAP_CELLS:,} (N = 2048 for one head); pick one head or a shorter "
                         "sequence (the complexity tab times long sequences)")
    block = max(1, math.ceil(n / display_max))
    specs = map_specs()
    lazy = _LazyReference(q, k, causal)

    shown, ill_counts, rows = {}, {}, []
    for label in [REFERENCE] + [x for x in maps if x != REFERENCE]:
        if label in shown:
            continue
        spec = specs.get(label)
        key = (id(sample), layer, head, label, causal, block,
               (int(m), int(seed)) if spec is not None and spec.takes_m else None,
               int(window) if spec is not None and spec.name == "sliding_window" else None)
        entry = _cache_get(key, sample)
        if entry is None:
            try:
                entry = _compute_map(label, lazy, q, k, v, d, m, seed, causal, block, window)
            except ValueError as exc:
                notices.append(f"{label}: not shown ({exc}).")
                continue
            _cache_put(key, sample, entry)
        shown[label], row, ill, extra = entry
        rows.append({"map": label, **row})
        notices.extend(extra)
        if label != REFERENCE:
            ill_counts[label] = ill

    model_check = None
    if getattr(sample, "model_attentions", None) is not None:
        own = sample.model_attentions[layer] if head is None else sample.model_attentions[layer, head]
        model_causal = bool(getattr(sample, "causal", False))
        plain = lazy.reference() if causal == model_causal else attention.softmax_map(q, k, causal=model_causal)
        model_check = float((plain - own).abs().max())

    ref_shown = shown[REFERENCE]
    errors = {label: (a - ref_shown) for label, a in shown.items() if label != REFERENCE}
    display_note = ""
    if block > 1:
        side = ref_shown.shape[0]
        display_note = (f"N = {n}: each cell is the mean of a {block}×{block} block ({side}×{side} shown); "
                        "the metrics table uses the full maps.")
    where = f"layer {layer}, " + ("mean over heads" if head is None else f"head {head}")
    title = f"{getattr(sample, 'source', '') or 'sample'} · {where}" + (" · causal" if causal else "")
    return MapsView(
        tokens=block_labels(list(sample.tokens), block), maps=shown, errors=errors, ill_defined=ill_counts,
        metrics=rows, n_tokens=n, block=block, model_check=model_check, notices=notices, title=title,
        display_note=display_note,
        params={"layer": layer, "head": "mean" if head is None else head, "causal": causal,
                "m": m, "seed": seed, "maps": list(shown)},
    )


class _LazyReference:
    """The softmax map and masked logits, computed once and only if some map needs them."""

    def __init__(self, q, k, causal):
        self.q, self.k, self.causal = q, k, causal
        self._ref = self._s = self._prepared = None

    def reference(self):
        if self._ref is None:
            self._ref = attention.softmax_map(self.q, self.k, causal=self.causal)
        return self._ref

    def logits(self):
        if self._s is None:
            self._s = attention.masked_logits(self.q, self.k, self.causal)
        return self._s

    def metrics(self, v):
        """The reference side of every map's metrics (``metrics.Reference``), prepared once."""
        if self._prepared is None:
            from . import metrics
            self._prepared = metrics.Reference(self.reference(), v, self.logits(), self.causal)
        return self._prepared


def _compute_map(label, lazy, q, k, v, d, m, seed, causal, block, window=4):
    """(display array, metric row, ill-defined row count, notices) of one map at full resolution."""
    reference = lazy.reference()
    if label == REFERENCE:
        row = lazy.metrics(v).compare(reference, head_dim=d)
        return _display(reference, block), row, 0, []
    fmap, extra = make_feature_map(label, d, m, seed, window=window)
    approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
    row = lazy.metrics(v).compare(approx, ill_defined=ill, feature_dim=fmap.num_features, head_dim=d)
    return _display(approx, block), row, int(ill.sum()), extra


# Per-map results, so that adding one map to the selection (or switching back to a head
# seen before) computes only what is new. Entries hold display arrays (<= 128 x 128) and
# metric rows, never full N x N maps. A weak reference to the sample tells a reused id()
# apart without keeping an evicted (possibly large, uploaded) sample alive.
_MAP_CACHE: "OrderedDict[tuple, tuple]" = OrderedDict()
_MAP_CACHE_SIZE = 96
_map_cache_lock = threading.Lock()


def _cache_get(key, sample):
    with _map_cache_lock:
        hit = _MAP_CACHE.get(key)
        if hit is None or hit[0]() is not sample:
            return None
        _MAP_CACHE.move_to_end(key)
        return hit[1]


def _cache_put(key, sample, entry):
    with _map_cache_lock:
        _MAP_CACHE[key] = (weakref.ref(sample), entry)
        while len(_MAP_CACHE) > _MAP_CACHE_SIZE:
            _MAP_CACHE.popitem(last=False)


def clear_caches():
    """Forget cached samples and per-map results (tests, benchmarks)."""
    with _map_cache_lock:
        _MAP_CACHE.clear()
    with _sample_lock:
        _sample_cache.clear()


def _compare(reference, approx, v, s, ill, feature_dim, causal, head_dim) -> dict:
    from . import metrics
    return metrics.compare(reference, approx, v=v, logits=s, ill_defined=ill, feature_dim=feature_dim,
                           causal=causal, head_dim=head_dim)


def _display(t: torch.Tensor, block: int) -> np.ndarray:
    """The map as shown: mean over heads when there are several, then block means."""
    a = t.detach().double()
    if a.dim() == 3:
        a = a.mean(0)
    a = a.numpy()
    if block > 1:
        a = block_mean(a, block)
    return a.astype(np.float32)


def block_mean(a: np.ndarray, block: int) -> np.ndarray:
    """Means of block x block tiles of a 2-d array (the last tiles may be smaller).

    Non-finite entries (ill-defined rows) propagate, so a bad row stays visible.
    """
    n0, n1 = a.shape
    r0, r1 = math.ceil(n0 / block), math.ceil(n1 / block)
    padded = np.zeros((r0 * block, r1 * block))
    count = np.zeros_like(padded)
    padded[:n0, :n1] = a
    count[:n0, :n1] = 1
    sums = padded.reshape(r0, block, r1, block).sum(axis=(1, 3))
    counts = count.reshape(r0, block, r1, block).sum(axis=(1, 3))
    return sums / counts


def block_labels(tokens: list[str], block: int) -> list[str]:
    if block <= 1:
        return tokens
    out = []
    for start in range(0, len(tokens), block):
        stop = min(start + block, len(tokens)) - 1
        out.append(f"{start}–{stop}")
    return out


def metrics_table(rows: list, digits: int = 4, short: bool = False):
    """Metric rows as a DataFrame: one row per map, the headline numbers first, columns
    labelled from METRIC_INFO (``short``: the short headers of METRIC_SHORT)."""
    import pandas as pd

    present = {key for row in rows for key in row if key != "map"}
    order = [*HEADLINE_METRICS, *METRIC_INFO]
    keys = [key for key in dict.fromkeys(order) if key in present]
    keys += sorted(present - set(keys))           # anything not in the catalog, last
    data = {"map": [row["map"] for row in rows]}
    for key in keys:
        label = METRIC_SHORT.get(key, key) if short else METRIC_INFO.get(key, (key, ""))[0]
        data[label] = [_round(row.get(key), digits) for row in rows]
    return pd.DataFrame(data)


def _round(x, digits):
    if x is None or isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x
    if not math.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{digits}g}")


# ---------------------------------------------------------------------------------------
# Quality tab
# ---------------------------------------------------------------------------------------

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
    causal = bool(causal)
    from . import metrics
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


# ---------------------------------------------------------------------------------------
# State tab
# ---------------------------------------------------------------------------------------

@dataclass
class StateView:
    ts: list                     # 0..N-1
    mem_ts: list                 # 1..max(N, MEMORY_HORIZON): tokens seen, for the memory plot
    tokens: list
    traces: dict                 # kind label -> dict(state_norm, normaliser_norm, effective_rank) arrays
    recall: dict                 # kind label -> dict(lags, cosine, cosine_std)
    kv_bytes: list               # softmax KV cache per head after each of mem_ts tokens
    state_bytes: int             # S and z per head, any t
    feature_dim: int
    step: dict                   # update, state, t, token, kind for the step heatmaps
    notices: list = field(default_factory=list)
    title: str = ""


def _state_inputs(sample, layer, head, map_label, m, seed):
    if head in (None, "mean", "mean over heads"):
        head = 0
        notes = ["The recurrent state belongs to one head: showing head 0 (mean over heads does not apply)."]
    else:
        notes = []
    q, k, v, layer, head, more = select_head(sample, layer, head)
    if map_label == REFERENCE:
        raise ValueError("map: softmax has no finite state; choose a feature map such as elu+1")
    fmap, extra = make_feature_map(map_label, k.shape[-1], m, seed)
    size = k.shape[0] * fmap.num_features * v.shape[-1]
    if size > MAX_STATE_ELEMENTS:
        raise ValueError(f"N: recording the state at every step is N × m × d_v = {size:,} numbers, over the cap of "
                         f"{MAX_STATE_ELEMENTS:,}; use a shorter sequence or a smaller m")
    return k, v, fmap, layer, head, notes + more + extra


def _decay(kind, n, fmap, gamma, strength, seed, head):
    from . import state
    return state.decay_preset(kind, n, fmap.num_features, gamma=float(gamma), strength=float(strength),
                              seed=int(seed), head=int(head))


@torch.inference_mode()
def state_step(sample, layer=0, head=0, map_label="elu+1", m=64, seed=0, gamma=0.97, strength=1.0, t=0,
               kind="none") -> dict:
    """The update phi(k_t) v_t^T and the state S_t at step t, for one decay kind."""
    from . import state

    if kind not in DECAY_LABELS:
        raise ValueError(f"kind: expected one of {', '.join(DECAY_LABELS)}, got {kind!r}")
    k, v, fmap, layer, head, _ = _state_inputs(sample, layer, head, map_label, m, seed)
    n = k.shape[0]
    t = min(max(_int(t, "t"), 0), n - 1)
    decay = _decay(kind, n, fmap, gamma, strength, seed, head)
    # The decay preset is drawn for the whole sequence (its first rows do not depend on n),
    # so stepping only up to t gives the same S_t as the full run.
    trace = state.state_trace(k[:t + 1], v[:t + 1], _prefix_map(fmap, n), None if decay is None else decay[:t + 1],
                              keep_states=True)
    return {"update": trace.updates[t].numpy(), "state": trace.states[t].numpy(), "t": t,
            "token": sample.tokens[t], "kind": DECAY_LABELS[kind]}


class _prefix_map(torch.nn.Module):
    """A feature map used on a prefix of a sequence of ``total`` tokens: positional maps
    (cosFormer) must see the full length, or S_t would differ from the full run's."""

    def __init__(self, fmap, total):
        super().__init__()
        self.fmap, self.total = fmap, total
        self.head_dim, self.num_features, self.name = fmap.head_dim, fmap.num_features, fmap.name

    def forward(self, x, is_query=False, offset=0, total=None):
        return self.fmap(x, is_query=is_query, offset=offset, total=self.total)


RECALL_LAGS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
MEMORY_HORIZON = 2048   # the memory plot runs at least this far: a short text never shows the cache outgrow the state


@torch.inference_mode()
def state_view(sample, layer=0, head=0, map_label="elu+1", m=64, seed=0, gamma=0.97, strength=1.0, t=None,
               kind="none", lags=RECALL_LAGS) -> StateView:
    """Causal linear attention as an RNN on one head: norms, rank and recall per decay kind."""
    from . import state

    k, v, fmap, layer, head, notices = _state_inputs(sample, layer, head, map_label, m, seed)
    n, d, dv = k.shape[0], k.shape[1], v.shape[1]
    traces, recall = {}, {}
    for kd, label in DECAY_LABELS.items():
        decay = _decay(kd, n, fmap, gamma, strength, seed, head)
        tr = state.state_trace(k, v, fmap, decay)
        traces[label] = {key: getattr(tr, key).numpy() for key in ("state_norm", "normaliser_norm", "effective_rank")}
        rc = state.recall_probe(fmap, d, list(lags), kd, gamma=float(gamma), strength=float(strength), seed=int(seed),
                                position="early")
        recall[label] = {"lags": rc.lags.numpy(), "cosine": rc.cosine.numpy(), "cosine_std": rc.cosine_std.numpy()}
    t = n - 1 if t is None else t
    step = state_step(sample, layer, head, map_label, m, seed, gamma, strength, t, kind)
    return StateView(
        ts=list(range(n)), mem_ts=list(range(1, max(n, MEMORY_HORIZON) + 1)), tokens=list(sample.tokens),
        traces=traces, recall=recall,
        kv_bytes=[state.kv_cache_bytes(i, d, dv) for i in range(1, max(n, MEMORY_HORIZON) + 1)],
        state_bytes=state.state_bytes(fmap.num_features, dv), feature_dim=fmap.num_features, step=step,
        notices=list(getattr(sample, "notices", [])) + notices,
        title=f"{getattr(sample, 'source', '')} · layer {layer}, head {head} · {map_label}, m = {fmap.num_features}",
    )


# ---------------------------------------------------------------------------------------
# Complexity tab
# ---------------------------------------------------------------------------------------

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


def plan_sweep(ns, head_dim, feature_dim, methods, budget_bytes):
    """Check the memory estimate of every run before anything starts.

    Returns notes for runs that will be skipped; raises ValueError when nothing would run.
    """
    from . import bench

    notes, runnable = [], 0
    for method in methods:
        over = [n for n in ns if bench.estimate_memory_bytes(method, n, head_dim, feature_dim) > budget_bytes]
        runnable += len(ns) - len(over)
        if over:
            notes.append(f"{bench.METHOD_LABELS.get(method, method)}: skipped at N ≥ {min(over):,} "
                         f"(estimated memory over the {budget_bytes / 2**30:.1f} GiB budget)")
    if runnable == 0:
        raise ValueError("memory: every run is over the memory budget; lower N max")
    return notes


def complexity_view(n_min=256, n_max=4096, points=5, head_dim=64, feature_dim=None, causal=True,
                    feature_map="elu1", methods=DEFAULT_METHODS, repeats=3, memory_budget_bytes=2 << 30,
                    time_budget_s=60.0, progress=None, should_stop=None) -> ComplexityView:
    """Run a guarded sweep and assemble what the complexity tab draws."""
    from . import bench

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
    result = bench.sweep(ns, head_dim=head_dim, feature_map=feature_map, feature_dim=feature_dim,
                         methods=methods, causal=bool(causal), repeats=repeats, warmup=1,
                         memory_budget_bytes=memory_budget_bytes, time_budget_s=time_budget_s,
                         progress=progress, should_stop=should_stop)
    theory = {}
    if result.matmul_gflops:
        for method in dict.fromkeys(r["method"] for r in result.rows):
            measured = [r for r in result.rows if r["method"] == method and not r.get("skipped")]
            if measured:
                pts = [(r["n"], r["flops"] / (result.matmul_gflops * 1e9) * 1e3) for r in measured]
                theory[method] = ([p[0] for p in pts], [p[1] for p in pts])
    cross, cross_text = result.crossover_info("sdpa", "linear_chunked")
    counts = cost.flop_counts(ARTICLE_N, ARTICLE_D)
    claim = {"n": ARTICLE_N, "head_dim": ARTICLE_D, "quadratic_flops": counts["quadratic_flops"],
             "linear_flops": counts["linear_flops"], "ratio": counts["ratio"], "measured": None}
    for n in sorted({r["n"] for r in result.rows}, reverse=True):
        tq, tl = result.time_ms("sdpa", n), result.time_ms("linear_parallel", n)
        if tq and tl:
            claim["measured"] = {"n": n, "quadratic_ms": tq, "linear_ms": tl, "ratio": tq / tl,
                                 "flop_ratio": cost.flop_counts(n, head_dim, m)["ratio"]}
            break
    return ComplexityView(
        rows=result.rows, method_labels=dict(bench.METHOD_LABELS), theory=theory, slopes=result.slopes(),
        crossover=cross, crossover_text=cross_text, claim=claim, notes=notes + list(result.notes),
        matmul_gflops=result.matmul_gflops, cancelled=result.cancelled, truncated=result.truncated,
        csv=result.to_csv(),
        params={"ns": ns, "d": head_dim, "m": m, "causal": bool(causal), "map": feature_map},
    )


def complexity_table(view: ComplexityView):
    import pandas as pd
    cols = ["label", "n", "causal", "time_ms", "time_iqr_ms", "gflops", "peak_mem_bytes", "flops", "skipped"]
    frame = pd.DataFrame([{c: r.get(c) for c in cols} for r in view.rows], columns=cols)
    frame = frame.rename(columns={"label": "method", "n": "N", "time_ms": "time (ms, median)",
                                  "time_iqr_ms": "IQR (ms)", "gflops": "GFLOP/s", "peak_mem_bytes": "extra peak (bytes)",
                                  "flops": "FLOPs (model)", "skipped": "skipped because"})
    return frame.round(4)
