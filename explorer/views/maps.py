"""The maps tab: softmax beside every chosen kernel map, one head or the mean, with the numbers
that judge each map (computed at full resolution before any display reduction).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

import torch

from ..forms import attention
from ..measure import cost
from ..catalog import DEFAULT_MAPS, REFERENCE, map_specs
from .common import (DISPLAY_MAX, MAX_MAP_CELLS, _display, block_labels, clear_sample_cache, make_feature_map,
                     select_head, trained_hedgehog_version)


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
    cost.check(cost.estimate("maps", n=n, d=d, heads=q.shape[0] if q.dim() == 3 else 1))
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
               int(window) if spec is not None and spec.name == "sliding_window" else None,
               trained_hedgehog_version() if spec is not None and spec.trained else None)
        entry = _cache_get(key, sample)
        if entry is None:
            try:
                entry = _compute_map(label, lazy, q, k, v, d, m, seed, causal, block, window, layer, head)
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
            from ..measure import metrics
            self._prepared = metrics.Reference(self.reference(), v, self.logits(), self.causal)
        return self._prepared


def _compute_map(label, lazy, q, k, v, d, m, seed, causal, block, window=4, layer=None, head=None):
    """(display array, metric row, ill-defined row count, notices) of one map at full resolution."""
    cost.check(cost.estimate("maps", n=q.shape[-2], d=d, heads=q.shape[0] if q.dim() == 3 else 1, maps=[label], m=m))
    reference = lazy.reference()
    if label == REFERENCE:
        row = lazy.metrics(v).compare(reference, head_dim=d)
        return _display(reference, block), row, 0, []
    fmap, extra = make_feature_map(label, d, m, seed, window=window, layer=layer, head=head)
    approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
    row = lazy.metrics(v).compare(approx, ill_defined=ill, feature_dim=fmap.num_features, head_dim=d,
                                  window=getattr(fmap, "window", None))
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
    clear_sample_cache()
