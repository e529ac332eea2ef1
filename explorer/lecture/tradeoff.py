"""Chapter 6: the trade-off. Each map is a point (cost, quality); the good ones lie on the
Pareto frontier, where nothing is both cheaper and closer to softmax.

Cost is the linear path's FLOPs per token (4 m d_v + 4 m, ``explorer.measure.cost``); quality is
the median row KL(softmax || map) over every row of every head of one layer of the
current text (rows where a map's KL is undefined are counted, not hidden).
"""

from __future__ import annotations

import numpy as np
import torch

from ..forms import attention
from ..measure import metrics
from ..measure.cost import flop_counts
from .memo import memo, tensor_key

# The roadmap of the article, 2020 -> 2025: (year, what, the map measured here for it).
ROADMAP = (
    (2020, "Linear Transformer", "elu+1"),
    (2021, "Performer", "FAVOR+ (orthogonal)"),
    (2023, "RetNet", "elu+1 + RetNet γ"),
    (2024, "GLA / Hedgehog", "Hedgehog"),
    (2025, "hybrid", "sliding window"),
)


def flops_per_token(feature_dim: int, value_dim: int) -> float:
    """The linear path's FLOPs per token for m features: ``cost.flop_counts`` at N = 1."""
    return float(flop_counts(1, value_dim, feature_dim=feature_dim, value_dim=value_dim)["linear_flops"])


def layer_quality(q, k, fmap, causal: bool = False, log_decay=None, key=None) -> dict:
    """Median (and mean) row KL(softmax || kernel map) over all heads of a layer, q, k (H, N, d).

    With ``key`` (anything that names the map and its settings exactly) the result is
    remembered for these q, k."""
    if key is None:
        return _layer_quality(q, k, fmap, causal, log_decay)
    return memo(("layer_quality", tensor_key(q, k), key, bool(causal)),
                lambda: _layer_quality(q, k, fmap, causal, log_decay))


@torch.inference_mode()
def _layer_quality(q, k, fmap, causal, log_decay) -> dict:
    reference = attention.softmax_map(q, k, causal=causal).double()
    approx = attention.kernel_map(q, k, fmap, causal=causal, log_decay=log_decay).double()
    allowed = attention.causal_mask(q.shape[-2]) if causal else None
    kl, defined = metrics.row_kl(reference, approx, allowed)
    good = kl[defined].numpy()
    return {"median_kl": float(np.median(good)) if good.size else float("nan"),
            "mean_kl": float(good.mean()) if good.size else float("nan"),
            "undefined_rows": int((~defined).sum()), "rows": int(defined.numel())}


def pareto_frontier(costs, losses) -> list[int]:
    """Indices of the points no other point dominates (cost <= and loss <= with one <),
    sorted by cost. Points with a non-finite value are never on the frontier."""
    costs, losses = np.asarray(costs, dtype=np.float64), np.asarray(losses, dtype=np.float64)
    if costs.shape != losses.shape:
        raise ValueError("costs, losses: need one loss per cost")
    ok = np.flatnonzero(np.isfinite(costs) & np.isfinite(losses))
    front = []
    for i in ok:
        dominated = any((costs[j] <= costs[i] and losses[j] <= losses[i]
                         and (costs[j] < costs[i] or losses[j] < losses[i])) for j in ok if j != i)
        if not dominated:
            front.append(int(i))
    return sorted(front, key=lambda i: (costs[i], losses[i]))
