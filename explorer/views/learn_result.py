"""What a run of the learn tab returns: ``LearnResult`` (a trained or loaded map and its
held-out comparison), its rows summarised over seeds, and which map comes closest to softmax.
``explorer.views.learn`` builds it; the learn tab, its figures and its exports read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..experiments import learning
from ..sources.models import EMBEDDED_NAME


@dataclass
class LearnResult:
    """One trained (or loaded) learned map and its held-out comparison.

    ``quality`` is the engine's per-head dict (map -> {"kl", "kl_median", "entropy",
    "monotonicity"} as numpy arrays shaped (layers, heads) of the covered block), the mean
    over seeds; ``by_seed`` the same per seed. ``rows`` summarise it per map: per seed the
    mean over covered heads (for "kl_median", the median row over all their rows), then the mean and
    sample sd over seeds ("kl", "kl_sd", ..., and "kl_seeds", the per-seed values).
    ``kl_ratio`` is KL(elu+1) / KL(learned map) per head (seed means). ``losses`` is the
    first seed's curve, ``losses_by_seed`` every seed's.
    """

    layer: int | None             # None: every layer
    head: int | None              # None: every head
    num_features: int
    steps: int
    seed: int
    losses: list
    seconds: float
    train_count: int
    heldout_count: int
    quality: dict
    rows: list
    softmax_entropy: float
    kl_ratio: np.ndarray
    feature_map: object           # learned.Hedgehog or Luna
    origin: str = "trained"       # or the uploaded file's name
    notices: list = field(default_factory=list)
    kind: str = "hedgehog"
    model: str = EMBEDDED_NAME    # the model whose softmax it imitates (read the texts)
    causal: bool = False          # that model's attention is causal: trained and judged on keys j <= i
    seeds: tuple = (0,)           # one trained map (and one FAVOR+ draw) per seed; the first's map is handed on
    losses_by_seed: list = field(default_factory=list)
    by_seed: list = field(default_factory=list)   # per seed: the per-head quality dict, as ``quality``
    own_texts: bool = False       # trained or judged on texts the visitor sent, not the built-in ones
    feature_maps: list = field(default_factory=list)   # per seed (a loaded map: just it)
    same_every_seed: tuple = ()   # kinds every seed started (so trained) identically: trained once
    texts: tuple = ((), ())       # (training, held-out) texts as used, for the record of a saved map

    @property
    def all_heads(self) -> bool:
        return self.layer is None and self.head is None

    @property
    def whole_layer(self) -> bool:
        """A map for every head of one layer (a shipped or uploaded layer map)."""
        return self.layer is not None and self.head is None

    @property
    def scope(self) -> str:
        if self.all_heads:
            layers, heads = self.kl_ratio.shape
            return f"all {layers * heads} heads ({layers} layers × {heads})"
        return f"layer {self.layer}, head {self.head}"


ROW_ORDER = ("luna", "hedgehog", "elu1", "favor_plus", "taylor2")


SUMMARY_KEYS = ("kl", "kl_median", "entropy", "monotonicity")


def _numpy(quality: dict) -> dict:
    return {name: {key: v.detach().cpu().numpy().astype(np.float64) for key, v in vals.items()}
            for name, vals in quality.items()}


def _over_heads(quality: dict, key: str) -> float:
    """One seed's ``key`` over the covered heads: the mean of the per-head means, which is
    the mean over their rows (every head has the same rows); for "kl_median", the median
    row KL over every row of every covered head (``kl_median_pooled``), the column's "median
    row", not a median of the heads' medians."""
    if key == "kl_median":
        return float(quality["kl_median_pooled"])
    return float(np.nanmean(quality[key]))


def _summarise(by_seed: list, kind: str, num_features: int, head_dim: int, rival_features: int | None = None,
               fixed: tuple = ()) -> tuple[dict, list, float, np.ndarray, list]:
    """Per-head arrays as numpy (mean over seeds), one row per map (the trained one first),
    softmax entropy, the KL ratio elu+1 / trained map per head, and the per-seed arrays.

    A row's value per seed is the mean over the covered heads (for "kl_median", the median
    row over every covered head's rows: ``_over_heads``); the row holds the mean over seeds, its sample sd ("<key>_sd") and the
    per-seed values ("<key>_seeds"). ``fixed`` names maps that are one map whatever the
    seed (a loaded file): they get one value, so no spread (sd NaN)."""
    seeds = [_numpy(q) for q in by_seed]
    per_head = {name: {key: np.mean([q[name][key] for q in seeds], axis=0) for key in vals}
                for name, vals in seeds[0].items()}
    dims = {kind: num_features, **{name: f.num_features
                                   for name, f in learning.baseline_maps(head_dim, num_features, 0).items()}}
    if rival_features is not None:
        dims["hedgehog"] = rival_features
    rows = []
    for name in (kind, *(n for n in ROW_ORDER if n != kind)):
        if name not in per_head:
            continue
        row = {"map": name, "name": name, "features_m": dims[name]}
        for key in SUMMARY_KEYS:
            values = [_over_heads(q[name], key) for q in (seeds[:1] if name in fixed else seeds)]
            mean, sd = learning.spread(values)
            row.update({key: mean, f"{key}_sd": sd, f"{key}_seeds": values})
        rows.append(row)
    softmax_entropy = float(np.nanmean(per_head["softmax"]["entropy"]))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = per_head["elu1"]["kl"] / per_head[kind]["kl"]
    return per_head, rows, softmax_entropy, ratio, seeds


def ranking(rows: list, key: str = "kl") -> tuple[dict, dict | None, bool]:
    """(closest map, the next one, whether they are apart): the two maps with the lowest mean
    ``key`` over seeds, and whether the gap between them is outside seed noise (the means
    differ by more than the sum of their sds, ``learning.apart``). Only then may a text say
    that the first is closer to softmax."""
    order = sorted(rows, key=lambda r: (not np.isfinite(r[key]), r[key]))
    best = order[0]
    second = order[1] if len(order) > 1 else None
    return best, second, second is not None and learning.apart(best[f"{key}_seeds"], second[f"{key}_seeds"])
