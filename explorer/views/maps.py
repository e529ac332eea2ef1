"""The maps tab: softmax beside every chosen kernel map, one head or the mean, with the numbers
that judge each map (computed at full resolution before any display reduction).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field

import torch

from .. import stopping
from ..core.cache import LRU
from ..diagnostics import attention
from ..measure import cost
from ..catalog import DEFAULT_MAPS, MAX_SEED, REFERENCE, map_label, map_specs
from ..text import ErrorWords, Joined, Message
from ..mechanisms import get as get_mechanism
from .mechanism_maps import MechanismSettings, mechanism_label, mechanism_map, mechanism_maps, settings_note
from .common import (DISPLAY_MAX, MAX_MAP_CELLS, _display, block_labels, clear_sample_cache, make_feature_map,
                     row_name, sample_model, select_head, trained_version, unk_count, view_title)

# Random-feature maps are one draw of W among many: beside the drawn one, the view reports
# the mean and standard deviation of these metrics over SPREAD_SEEDS draws.
SPREAD_SEEDS = 5
SPREAD_METRICS = ("map_rel_error", "output_rel_error", "kl_mean", "entropy_approx", "monotonicity")


@dataclass
class SeedSpread:
    """One random-feature map's metrics over several draws of its features: ``values[key]``
    holds one value per seed in ``seeds`` (None where the metric is undefined for a draw)."""

    seeds: list
    values: dict

    def defined(self, key) -> list:
        return [float(x) for x in self.values.get(key, []) if x is not None and math.isfinite(x)]

    def mean(self, key) -> float | None:
        xs = self.defined(key)
        return sum(xs) / len(xs) if xs else None

    def sd(self, key) -> float | None:
        """The sample standard deviation (n − 1); 0 for a single defined draw."""
        xs = self.defined(key)
        if not xs:
            return None
        mu = sum(xs) / len(xs)
        return math.sqrt(sum((x - mu) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0


def spread_seeds(seed: int, k: int) -> list[int]:
    """The k seeds of a spread: the drawn one first, then the next ones (modulo 2^32)."""
    return [(int(seed) + i) % (MAX_SEED + 1) for i in range(int(k))]


@dataclass
class MapsView:
    """Everything the maps tab shows. ``maps``/``errors`` are display arrays (possibly block
    means); ``metrics`` rows are computed on the full maps."""

    tokens: list[str]                 # display labels of the rows/columns shown
    maps: dict                        # map id (or mechanism name) -> (n, n) float32, softmax first
    errors: dict                      # id -> approx - softmax, (n, n); not for softmax
    ill_defined: dict                 # id -> count of ill-defined rows
    metrics: list                     # one dict per map: {"map": id, **compare(...)} (+ "label" for a mechanism)
    n_tokens: int                     # full N
    block: int = 1                    # side of the averaged blocks (1 = exact cells)
    model_check: float | None = None  # max |recomputed softmax - model attention|, with the model's own mask
    model_mask: bool = True           # the softmax shown has the model's own mask (causal or not)
    notices: list = field(default_factory=list)
    title: str = ""
    display_note: str = ""            # how the display differs from the computed maps
    params: dict = field(default_factory=dict)
    spread: dict = field(default_factory=dict)    # id -> SeedSpread, for the random-feature maps
    # id -> the query rows (0-based, of the full N) where the map's KL is +inf in some head:
    # it gives zero weight to a key softmax uses there. Only maps with such rows.
    infinite_kl: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)  # explorer.provenance.record of the data and settings
    # Mechanisms' maps on non-causal data: computed causally, judged against causal softmax.
    causal_only: list = field(default_factory=list)
    mechanism_note: str = ""          # what each mechanism read and its parameters, in words
    causal_reference: object = None   # causal softmax as displayed, beside those maps (else None)
    labels: dict = field(default_factory=dict)    # id -> what a person reads (a message: said by the page)


def resolve_causal(sample, causal=None) -> bool:
    """Whether a view of ``sample`` is causal: ``causal`` as asked, or, when None (the
    default everywhere), as the data is: a causal model's attention is causal."""
    return bool(getattr(sample, "causal", False)) if causal is None else bool(causal)


def causal_notices(sample, causal: bool) -> list[str]:
    """What to say when the softmax shown is not what the model computes: causal turned off
    on a causal model's data (or on for a bidirectional model's, which is a fair question
    but not the model's own attention)."""
    if getattr(sample, "model_attentions", None) is None:
        return []
    model_causal = bool(getattr(sample, "causal", False))
    if causal == model_causal:
        return []
    return [Message("maps.not_model_causal" if model_causal else "maps.not_model_bidirectional")]


@torch.inference_mode()
def maps_view(sample, layer=0, head=0, maps=DEFAULT_MAPS, causal=None, m=64, seed=0,
              display_max: int = DISPLAY_MAX, window: int = 4, spread: int = SPREAD_SEEDS,
              session=None, should_stop=None, mechanisms=(), mechanism_settings=None) -> MapsView:
    """Softmax and every chosen kernel map for one head (or the mean over heads), with metrics.
    A trained map (Hedgehog, LUNA) is the one ``session`` trained, on the heads it covers.

    A map that fails (say, a new map that needs options) is reported in ``notices`` and
    left out; the others still show. Every random-feature map is also drawn with ``spread``
    seeds (``seed`` and the next ones) for the mean and spread of its metrics (0 or 1: none).
    Title, notes and notices are messages (the page says them). ``should_stop`` (see
    ``explorer.stopping``) is asked before every map and every draw of a spread.
    ``causal`` None follows the data (``resolve_causal``). ``mechanisms`` (names of
    ``mechanism_maps.mechanism_maps()``) add each mechanism's exact map with ``mechanism_settings``,
    always causal and judged against causal softmax (``mechanism_maps``).
    """
    maps = list(maps or [])
    chosen = list(dict.fromkeys(mechanisms or ()))
    offered = mechanism_maps()
    unknown = [str(x)[:40] for x in chosen if x not in offered]
    if unknown:
        raise ValueError(Message("maps.err_mechanism", got=", ".join(unknown), choices=", ".join(offered)))
    settings = (mechanism_settings or MechanismSettings()).checked()
    if not maps and chosen:
        maps = [REFERENCE]
    if not maps:
        raise ValueError(Message("maps.err_no_maps"))
    q, k, v, layer, head, notices = select_head(sample, layer, head)
    notices = list(getattr(sample, "notices", [])) + notices
    unknown, total = unk_count(sample)
    if unknown:
        notices.insert(0, Message("maps.unk", count=unknown, total=total))
    causal = resolve_causal(sample, causal)
    notices += causal_notices(sample, causal)
    spread = max(0, int(spread or 0))
    d, n = q.shape[-1], q.shape[-2]
    cells = n * n * (q.shape[0] if q.dim() == 3 else 1)
    if cells > MAX_MAP_CELLS:
        raise ValueError(Message("maps.err_cells", cells=f"{cells:,}", n=n, cap=f"{MAX_MAP_CELLS:,}"))
    cost.check(cost.estimate("maps", n=n, d=d, heads=q.shape[0] if q.dim() == 3 else 1))
    block = max(1, math.ceil(n / display_max))
    specs = map_specs()
    lazy = _LazyReference(q, k, causal)

    shown, labels, ill_counts, rows, spreads, infinite = {}, {}, {}, [], {}, {}
    for map_id in [REFERENCE] + [x for x in maps if x != REFERENCE]:
        if map_id in shown:
            continue
        spec = specs.get(map_id)
        draws = spread if spec is not None and spec.random and spread > 1 else 0
        key = (id(sample), layer, head, map_id, causal, block,
               (int(m), int(seed)) if spec is not None and spec.takes_m else None,
               int(window) if spec is not None and spec.name == "sliding_window" else None,
               trained_version(session, spec.name) if spec is not None and spec.trained else None, draws)
        entry = _cache_get(key, sample)
        if entry is None:
            stopping.check(should_stop)
            try:
                entry = _compute_map(map_id, lazy, q, k, v, d, m, seed, causal, block, window, layer, head, session,
                                     sample_model(sample))
            except ValueError as exc:
                if map_id == REFERENCE:      # every other map is judged against it: its refusal is the answer
                    raise
                notices.append(Message("maps.not_shown", label=map_label(map_id), why=ErrorWords(exc)))
                continue
            if draws:
                # The map with its spread is priced (draws times the map's time) before any draw.
                try:
                    cost.check(cost.estimate("maps", n=n, d=d, heads=q.shape[0] if q.dim() == 3 else 1, maps=[map_id],
                                             m=m, seeds=draws))
                    entry = entry + (seed_spread(map_id, lazy, q, k, v, d, m, seed, causal, draws,
                                                      should_stop),)
                except stopping.PastDeadline:
                    raise
                except ValueError as exc:
                    notices.append(Message("maps.no_spread", label=map_label(map_id), k=draws, why=ErrorWords(exc)))
            _cache_put(key, sample, entry)
        shown[map_id], row, ill, extra, inf_rows = entry[:5]
        labels[map_id] = map_label(map_id)
        if len(entry) > 5:
            spreads[map_id] = entry[5]
        if inf_rows:
            infinite[map_id] = inf_rows
        rows.append({"map": map_id, **row})
        notices.extend(extra)
        if map_id != REFERENCE:
            ill_counts[map_id] = ill

    # The mechanisms: causal attention, judged against causal softmax whatever the box says.
    causal_lazy = lazy if causal else _LazyReference(q, k, True)
    own_reference = {}
    for name in chosen:
        label = mechanism_label(name, settings)
        key = (id(sample), layer, head, "mechanism", name, settings, block)
        entry = _cache_get(key, sample)
        if entry is None:
            stopping.check(should_stop)
            try:
                entry = _compute_mechanism(name, label, causal_lazy, q, k, v, settings, block, head, should_stop)
            except stopping.PastDeadline:
                raise
            except ValueError as exc:
                notices.append(Message("maps.not_shown", label=label, why=ErrorWords(exc)))
                continue
            _cache_put(key, sample, entry)
        shown[name], row, ill, extra, inf_rows = entry
        labels[name] = label
        rows.append({"map": name, "label": label, **row})
        ill_counts[name] = ill
        if inf_rows:
            infinite[name] = inf_rows
        own_reference[name] = None if causal else REFERENCE
    shown_mechanisms = [name for name in chosen if name in shown]
    if shown_mechanisms and not causal:
        notices.append(Message("maps.mechanisms_causal"))

    model_check, model_mask = None, True
    if getattr(sample, "model_attentions", None) is not None:
        own = sample.model_attentions[layer] if head is None else sample.model_attentions[layer, head]
        model_causal = bool(getattr(sample, "causal", False))
        plain = lazy.reference() if causal == model_causal else attention.softmax_map(q, k, causal=model_causal)
        model_check = float((plain - own).abs().max())
        model_mask = causal == model_causal

    ref_shown = shown[REFERENCE]
    errors = {map_id: (a - ref_shown) for map_id, a in shown.items() if map_id != REFERENCE and map_id not in own_reference}
    causal_shown = None
    if own_reference:
        causal_shown = ref_shown if causal else _display(causal_lazy.reference(), block)
        errors.update({name: shown[name] - causal_shown for name in own_reference})
    display_note = ""
    if block > 1:
        side = ref_shown.shape[0]
        display_note = Message("maps.block_note", n=n, block=block, side=side)
    title = view_title(sample, layer, head, causal)
    return MapsView(
        tokens=block_labels(list(sample.tokens), block), maps=shown, labels=labels, errors=errors, ill_defined=ill_counts,
        metrics=rows, n_tokens=n, block=block, model_check=model_check, model_mask=model_mask, notices=notices,
        title=title,
        display_note=display_note,
        params={"layer": layer, "head": "mean" if head is None else head, "causal": causal,
                "m": m, "seed": seed, "maps": list(shown), "mechanisms": shown_mechanisms,
                "mechanism_settings": settings},
        spread=spreads, infinite_kl=infinite,
        causal_only=[name for name, ref in own_reference.items() if ref is not None],
        mechanism_note=settings_note(shown_mechanisms, settings, head) if shown_mechanisms else "",
        causal_reference=None if causal else causal_shown,
    )


def _compute_mechanism(name, label, lazy, q, k, v, settings, block, head, should_stop=None):
    """(display array, metric row, ill-defined row count, notices, rows where KL = +inf) of one
    mechanism's exact map, priced before it is formed; ``lazy`` is the causal reference."""
    n, d = q.shape[-2], q.shape[-1]
    mechanism = get_mechanism(name)
    cost.check(cost.estimate("mechanism", n=n, d=d, form=mechanism.cost_form, heads=q.shape[0] if q.dim() == 3 else 1,
                             fit_steps=mechanism.fit_steps(settings), label=label))
    approx = mechanism_map(name, q, k, settings, head, should_stop)
    ill = ~torch.isfinite(approx).all(-1)
    row = lazy.metrics(v).compare(approx, ill_defined=ill, feature_dim=d, head_dim=d)
    inf_rows = infinite_kl_rows(lazy.reference(), approx, ill, True) if row.get("kl_rows_infinite") else []
    return _display(approx, block), row, int(ill.sum()), [], inf_rows


def seed_spread(map_id, lazy, q, k, v, d, m, seed, causal, k_seeds=SPREAD_SEEDS, should_stop=None) -> SeedSpread:
    """The SPREAD_METRICS of map ``map_id`` drawn with ``k_seeds`` seeds (``spread_seeds``), one
    N x N map at a time. ``metrics.compare`` on each draw, as for the drawn map itself; a
    mean over fewer than half of the rows is no value for that draw (None), as in the tables."""
    from ..measure.showing import mostly_undefined

    seeds = spread_seeds(seed, k_seeds)
    values = {key: [] for key in SPREAD_METRICS}
    for s in seeds:
        stopping.check(should_stop)
        fmap, _ = make_feature_map(map_id, d, m, s)
        approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
        row = lazy.metrics(v).compare(approx, ill_defined=ill, feature_dim=fmap.num_features, head_dim=d)
        del approx, ill
        for key in SPREAD_METRICS:
            values[key].append(None if mostly_undefined(row, key) else row.get(key))
    return SeedSpread(seeds, values)


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


def _compute_map(map_id, lazy, q, k, v, d, m, seed, causal, block, window=4, layer=None, head=None, session=None,
                 model=None):
    """(display array, metric row, ill-defined row count, notices (messages), rows where KL =
    +inf) of one map at full resolution: nothing in it depends on the page's language."""
    cost.check(cost.estimate("maps", n=q.shape[-2], d=d, heads=q.shape[0] if q.dim() == 3 else 1, maps=[map_id], m=m))
    reference = lazy.reference()
    if map_id == REFERENCE:
        row = lazy.metrics(v).compare(reference, head_dim=d)
        return _display(reference, block), row, 0, [], []
    fmap, extra = make_feature_map(map_id, d, m, seed, window=window, layer=layer, head=head, session=session,
                                   model=model)
    approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
    row = lazy.metrics(v).compare(approx, ill_defined=ill, feature_dim=fmap.num_features, head_dim=d,
                                  window=getattr(fmap, "window", None))
    inf_rows = infinite_kl_rows(reference, approx, ill, causal) if row.get("kl_rows_infinite") else []
    return _display(approx, block), row, int(ill.sum()), extra, inf_rows


def infinite_kl_rows(reference, approx, ill, causal: bool) -> list[int]:
    """The query rows (0-based) where KL(softmax || map) is +inf in some head, counted as
    ``compare`` counts them (ill-defined rows and the causal row 0 are not). Only computed
    when ``compare`` found such rows: one more pass over the map."""
    from ..measure import rowwise
    n = reference.shape[-1]
    kl, _ = rowwise.row_kl(reference, approx, attention.causal_mask(n, reference.device) if causal else None)
    hit = torch.isinf(kl) & ~ill.to(torch.bool) & rowwise.rows_in_means(n, causal, kl.device)
    if hit.dim() > 1:
        hit = hit.reshape(-1, n).any(0)
    return [int(i) for i in torch.nonzero(hit).flatten()]


# Per-map results, so that adding one map to the selection (or switching back to a head
# seen before) computes only what is new. Entries hold display arrays (<= 128 x 128) and
# metric rows, never full N x N maps. A weak reference to the sample tells a reused id()
# apart without keeping an evicted (possibly large, uploaded) sample alive.
_MAP_CACHE_SIZE = 96
_MAP_CACHE = LRU(_MAP_CACHE_SIZE)


def _cache_get(key, sample):
    with _MAP_CACHE.lock:
        hit = _MAP_CACHE.peek(key)
        if hit is None or hit[0]() is not sample:
            return None
        return _MAP_CACHE.get(key)[1]


def _cache_put(key, sample, entry):
    _MAP_CACHE.put(key, (weakref.ref(sample), entry))


def clear_caches():
    """Forget cached samples and per-map results (tests, benchmarks)."""
    _MAP_CACHE.clear()
    clear_sample_cache()


# ---------------------------------------------------------------------------------------
# The spread over seeds in words (messages) and table cells
# ---------------------------------------------------------------------------------------

def spread_note(view: MapsView) -> str:
    """One sentence naming, for each random-feature map, its map error with the drawn seed
    and the mean ± sd over the seeds of its spread; "" when no such map is shown."""
    items = []
    for row in view.metrics:
        spread = view.spread.get(row["map"])
        mean = spread.mean("map_rel_error") if spread is not None else None
        if mean is None:
            continue
        single = row.get("map_rel_error")
        items.append(Message("maps.spread_item", name=row_name(row),
                       single=Message("common.na") if single is None else f"{single:.3g}", seed=spread.seeds[0],
                       mean=f"{mean:.3g}", sd=f"{spread.sd('map_rel_error'):.2g}", k=len(spread.seeds)))
    return Message("maps.spread_note", items=Joined(items, "maps.spread_sep")) if items else ""


def maps_table(view: MapsView, digits: int = 3):
    """The table beside the grid: ``metrics_table`` with short headers in the view's
    language, and after the map error the mean ± sd of the map error over the seeds of
    each random-feature map's spread (empty for the other maps)."""
    from .common import metrics_table

    table = metrics_table(view.metrics, digits=digits, short=True)
    counts = {len(s.seeds) for s in view.spread.values()}
    if not counts:
        return table
    cells = []
    for row in view.metrics:
        spread = view.spread.get(row["map"])
        mean = spread.mean("map_rel_error") if spread is not None else None
        cells.append("" if mean is None else f"{mean:.{digits}g} ± {spread.sd('map_rel_error'):.2g}")
    import pandas as pd
    table.insert(2, Message("maps.spread_column", k=max(counts)), pd.Series(cells, dtype=object))
    return table
