"""Chapter 6: the trade-off. Each map is a point (cost, quality); the good ones lie on the
Pareto frontier, where nothing is both cheaper and closer to softmax. The roadmap measures
the article's steps: the maps by row KL (``roadmap``), the state updates by recall
(``state_roadmap``), two kinds of number that are never compared.

Cost is the linear path's FLOPs per token (4 m d_v + 4 m, ``explorer.measure.cost``); quality is
the median row KL(softmax || map) over every row of every head of one layer of the
current text. A row's KL is +inf where the map gives no weight to a key softmax uses (a
value, the worst one: it takes part in the median); rows where it is undefined are counted,
not hidden, and a map undefined on more than half of the rows has no median, so no point and
no bar (``showing.mostly_undefined``, the maps tab's rule). Causal medians leave out the
single-key row 0 (``rowwise.rows_in_means``).

The chapter ends the talk as the article does: its five-point recap measured here
(``kernel_split_error``), the hybrid future's cost at the article's long context
(``hybrid_costs``), and what each kind of attention keeps (``kept_numbers``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import mechanisms
from ...mechanisms.gla.fit import fit_gla_gates
from ...mechanisms.retnet.gates import head_gamma
from ...maps import create
from ...diagnostics import attention, state, state_probes
from ...measure import rowwise, showing
from ...measure.cost import flop_counts
from ..ch4_rnn import maths as rnn
from ..memo import memo, tensor_key

# The roadmap of the article, 2020 -> 2025, as points measured on one head. Each point is
# (id, year, map, reference): "softmax" for full attention, "causal softmax" for the points
# whose state forgets (decay and gates only exist in causal attention). The causal elu+1 is
# the 2020 baseline the causal points are read against. On a causal model every point is
# read against causal softmax (its own attention), and "2020" is then that one baseline.
# In time order, as the article tells it: a causal model's one panel reads 2020 to 2025, and a
# full-attention model's two panels each keep that order.
ROADMAP_POINTS = (
    ("2020", 2020, "elu1", "softmax"),
    ("2020_causal", 2020, "elu1", "causal softmax"),
    ("2021", 2021, "favor_plus_orthogonal", "softmax"),
    ("2023", 2023, "elu+1 + RetNet γ", "causal softmax"),
    ("2024_hedgehog", 2024, "Hedgehog", "softmax"),
    ("2024_gla", 2024, "elu+1 + GLA gates", "causal softmax"),
    ("2025_luna", 2025, "LUNA", "softmax"),
    ("2025", 2025, "sliding_window", "softmax"),
)
# The state updates' roadmap is measured apart: not a row KL but the recall probe's cosine
# (``explorer.diagnostics.state_probes.recall_probe``) for an early and a recent key after a stated lag.
# Each point is (id, year, the probe's update kind): every state update the registry holds,
# named by its kind, in the year of its paper.
STATE_ROADMAP_POINTS = tuple((kind, year, kind) for kind, year in mechanisms.state_kind_years())
# The lecture's one recall experiment, as in chapter 5's overwriting build.
STATE_ROADMAP_LAG = rnn.RECALL_KEYS
# The article's long context: the hybrid's costs and what each kind of attention keeps are
# read there (chapters 0 and 2 quote the same N).
ARTICLE_N = 100_000


def flops_per_token(feature_dim: int, value_dim: int) -> float:
    """The linear path's FLOPs per token for m features: ``cost.flop_counts`` at N = 1."""
    return float(flop_counts(1, value_dim, feature_dim=feature_dim, value_dim=value_dim)["linear_flops"])


def softmax_flops_per_token(n: int, head_dim: int, value_dim: int) -> float:
    """Full attention's FLOPs per query at N = ``n``: scores and values over every key,
    2 N (d + d_v) (``cost.flop_counts``' quadratic path over N)."""
    return flop_counts(n, head_dim, value_dim=value_dim)["quadratic_flops"] / int(n)


def window_flops_per_token(window: int, head_dim: int, value_dim: int) -> float:
    """The exact part of a non-causal sliding window: scores and values over the 2w - 1 keys
    with |i - j| < w (``maps.hybrid.SlidingWindow``), whatever N is."""
    return 2.0 * (2 * int(window) - 1) * (head_dim + value_dim)


def hybrid_costs(n: int, head_dim: int, value_dim: int, window: int, inner_features: int) -> dict:
    """FLOPs per token at N = ``n`` of full softmax, of the sliding-window hybrid (exact in
    its window, the inner kernel with ``inner_features`` features elsewhere) and of the
    inner kernel alone."""
    linear = flops_per_token(inner_features, value_dim)
    return {"softmax": softmax_flops_per_token(n, head_dim, value_dim),
            "hybrid": window_flops_per_token(window, head_dim, value_dim) + linear, "linear": linear}


def exact_keys_costs(n: int, head_dim: int, value_dim: int, exact_keys: int, features: int) -> dict:
    """FLOPs per token at N = ``n`` of full causal softmax, of a linearized layer that reads
    ``exact_keys`` keys exactly (its window and sinks) and the kernel with ``features``
    features for the rest, and of the kernel alone."""
    linear = flops_per_token(features, value_dim)
    return {"softmax": softmax_flops_per_token(n, head_dim, value_dim),
            "hybrid": softmax_flops_per_token(exact_keys, head_dim, value_dim) + linear, "linear": linear}


def kernel_split_error(q, k, fmap, kernel) -> float:
    """max |phi(q).phi(k) - kernel(s)| / max |kernel(s)| over every pair of q, k (..., N, d),
    s = q.k / sqrt(d): how exactly ``fmap`` splits ``kernel`` into an inner product."""
    s = (q @ k.transpose(-1, -2)).double() / q.shape[-1] ** 0.5
    split = (fmap(q, is_query=True) @ fmap(k).transpose(-1, -2)).double()
    exact = kernel(s)
    return float((split - exact).abs().max() / exact.abs().max())


def kept_numbers(n: int, head_dim: int, feature_dim: int, value_dim: int) -> dict:
    """What one head holds after ``n`` tokens: softmax's N x N weights (every pair) and its KV
    cache N (d + d_v), against the linear state S (m x d_v) and z (m), whatever N is."""
    n, d, m, dv = (int(x) for x in (n, head_dim, feature_dim, value_dim))
    return {"pairs": n * n, "kv_cache": n * (d + dv), "state": m * dv + m}


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
    kl, defined = rowwise.row_kl(reference, approx, allowed)
    counted = rowwise.rows_in_means(q.shape[-2], causal, kl.device).expand(kl.shape)
    kl = kl[counted]
    defined = defined[counted]
    infinite = torch.isinf(kl)
    finite = kl[defined & ~infinite].numpy()
    row = {"kl_mean": float(finite.mean()) if finite.size else None, "kl_rows_undefined": int((~defined).sum()),
           "kl_rows_infinite": int(infinite.sum()), "total_rows": int(kl.numel())}
    mostly_undefined = showing.mostly_undefined(row, "kl_mean")
    return {"median_kl": float("nan") if mostly_undefined else rowwise.true_median(kl[defined]),
            "mean_kl": float(finite.mean()) if finite.size else float("nan"),
            "undefined_rows": row["kl_rows_undefined"], "infinite_rows": row["kl_rows_infinite"],
            "rows": row["total_rows"], "mostly_undefined": mostly_undefined}


def on_log_axis(kl: float) -> bool:
    """Whether a median KL can be drawn on the plane's log axis (finite and positive); the
    others are named in the notes, and the slide counts them."""
    return math.isfinite(kl) and kl > 0


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


def untrained_hedgehog(head_dim: int):
    """Hedgehog as it starts (W = I, 2d features): what the roadmap measures without a trained one."""
    from ...maps import create
    return create("hedgehog", head_dim, num_features=2 * head_dim)


def roadmap(q, k, maps: dict, hedgehog=None, head: int = 0, keys: dict | None = None, luna=None,
            causal_model: bool = False) -> list[dict]:
    """Every roadmap point measured on one head, q, k (1, N, d): median row KL to softmax
    (full attention) or to causal softmax (points that forget; with ``causal_model``, every
    point, and "2020" is the one baseline: "2020_causal" would repeat it). ``maps`` holds "elu1",
    "favor_plus_orthogonal" and "sliding_window"; ``hedgehog`` is the trained map (None: the
    untrained one, W = I, is measured and says so); ``luna`` the trained LUNA map (None: the
    point is left out, as there is none to measure). RetNet's gamma is the head's own
    (1 - 2^(-5-h)); GLA's gates are fitted on this head (``fit_gla_gates``). ``keys`` names
    each map of ``maps`` with what it depends on, so that results are remembered per q, k
    and only what a new setting changes is measured again."""
    d = q.shape[-1]
    gamma = head_gamma(head)
    trained = hedgehog is not None
    if hedgehog is None:
        hedgehog = untrained_hedgehog(d)
    elu = maps["elu1"]
    out = []
    for pid, year, name, reference in ROADMAP_POINTS:
        if causal_model:
            if pid == "2020_causal":
                continue
            reference = "causal softmax"
        causal = reference == "causal softmax"
        if name == "LUNA":
            if luna is None:
                continue
            fmap, decay, label = luna, None, "luna_trained"
        elif name == "Hedgehog":
            fmap, decay, label = hedgehog, None, "hedgehog_trained" if trained else "hedgehog"
        elif name == "elu+1 + RetNet γ":
            fmap, decay, label = elu, torch.tensor(math.log(gamma)).view(1, 1, 1), name
        elif name == "elu+1 + GLA gates":
            fmap, label = elu, name
            decay = memo(("gla gates", tensor_key(q, k)), lambda: fit_gla_gates(q, k, elu))
        else:
            fmap, decay, label = maps[name], None, name
        known = (keys or {}).get(name) if name in maps else (("fixed", name) if "+ " in name else None)
        if name == "LUNA":          # the shipped map: fixed weights, named by what it was trained for
            known = (keys or {}).get("LUNA")
        qual = layer_quality(q, k, fmap, causal=causal, log_decay=decay,
                             key=None if known is None else ("roadmap", pid, known, causal))
        out.append({"id": pid, "year": year, "map": label, "reference": reference, "causal": causal,
                    "m": int(fmap.num_features), "gamma": gamma if "RetNet" in name else None,
                    "window": getattr(fmap, "window", None), "trained": trained if name == "Hedgehog" else None,
                    **qual})
    return out


def state_roadmap(feature_map, head_dim: int, head: int = 0, lag: int = STATE_ROADMAP_LAG) -> list[dict]:
    """The state updates' roadmap: for each point of ``STATE_ROADMAP_POINTS``, the recall
    cosine of an early and of a recent key after ``lag`` other keys, from the engine's
    recall probe on random keys and values of dimension ``head_dim`` (``rnn.recall``, the
    same cached curves chapter 5 reads). The additive updates write phi(k) with
    ``feature_map`` (elu+1); RetNet's gamma is the head's own (``head_gamma``), HGRN2's
    lower bound the state tab's (``state.HGRN2_LOWER_BOUND``, an upper layer's), the gates
    at strength 1. These are recall numbers, not row KL: they are drawn on a panel of
    their own and never set against the KL points."""
    gamma = head_gamma(head)
    lower_bound = state.HGRN2_LOWER_BOUND
    out = []
    for pid, year, kind in STATE_ROADMAP_POINTS:
        point = {"id": pid, "year": year, "kind": kind, "lag": int(lag), "measure": "recall",
                 "gamma": gamma if kind == "retnet" else None,
                 "lower_bound": lower_bound if kind == "hgrn2" else None}
        for pos in ("early", "recent"):
            curve = rnn.recall(feature_map, head_dim, kind, pos, gamma=gamma, lower_bound=lower_bound)
            at = np.flatnonzero(curve["lags"] == int(lag))
            if not at.size:
                raise ValueError(f"lag: expected one of {', '.join(map(str, rnn.RECALL_LAGS))}, got {lag}")
            point[pos] = float(curve["cosine"][at[0]])
        out.append(point)
    return out


# The retrieval caveat (the article: "for a precise quote from far back, softmax stays"): P random
# key -> value pairs stored, every stored key asked back. Softmax reads its KV cache, all P pairs
# kept; the linear states read what their m x d matrix holds. Random keys and values of the
# lecture's one recall dimension (``rnn.RECALL_DIM``), the state tab's threshold.
RETRIEVAL_PAIRS = (4, 16, 64, 256, 1024)
RETRIEVAL_READERS = ("softmax", "linear", "deltanet")      # the KV cache; the additive state; the delta rule's


def softmax_recalled(keys, values, pairs, threshold: float = state_probes.RECALL_THRESHOLD) -> list[float]:
    """Mean count, over the trials (the leading dimension), of stored pairs whose value softmax
    attention reads back with cosine above ``threshold`` when asked with their own key, after
    the first P pairs of ``keys``, ``values`` (trials, total, d) are stored, for each P."""
    out = []
    for p in pairs:
        k, v = keys[:, :p], values[:, :p]
        read = torch.softmax(k @ k.transpose(-1, -2) / math.sqrt(k.shape[-1]), dim=-1) @ v
        cos = torch.nn.functional.cosine_similarity(read, v, dim=-1)
        out.append(float((cos > threshold).sum(-1).double().mean()))
    return out


def retrieval(head_dim: int = rnn.RECALL_DIM, pairs=RETRIEVAL_PAIRS, trials: int = 8, seed: int = 0) -> dict:
    """{"pairs", "recalled": {reader: share of the P pairs recalled, per P}, "threshold", "d"}:
    softmax over every stored pair against the elu+1 state with and without the delta rule.
    The states see the very keys and values softmax sees (``state_probes.capacity_probe`` draws them
    from the same seeded generator, in the same order)."""
    def compute():
        total = max(pairs)
        gen = torch.Generator().manual_seed(int(seed))
        keys = torch.randn(trials, total, head_dim, generator=gen, dtype=torch.float64)
        values = torch.randn(trials, total, head_dim, generator=gen, dtype=torch.float64)
        counts = {"softmax": softmax_recalled(keys, values, pairs)}
        elu = create("elu1", head_dim)
        for kind in RETRIEVAL_READERS[1:]:
            curve = state_probes.capacity_probe(elu, head_dim, list(pairs), kind, seed=seed, trials=trials,
                                         dtype=torch.float64)
            counts[kind] = [float(x) for x in curve.recalled]
        return {"pairs": list(pairs), "d": head_dim, "threshold": state_probes.RECALL_THRESHOLD,
                "recalled": {r: [c / p for c, p in zip(counts[r], pairs)] for r in RETRIEVAL_READERS}}
    return memo(("retrieval", head_dim, tuple(pairs), trials, seed), compute)
