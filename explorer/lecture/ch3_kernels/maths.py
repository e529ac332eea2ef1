"""Chapter 3: choosing the kernel. exp(s) has no finite feature map, so it is approximated.

- ``taylor``: exp(s) truncated after order 1, 2, 3, on the logits s of the current head
  (1 + s goes negative below s = -1: a kernel that is not a kernel any more).
- ``series_shares``: the Taylor gap on the same logits: how the head's sum of exp(s) over
  its pairs splits over the series' orders, and the share orders 2 and up carry (all of it
  is what the first-order map 1 + s drops).
- ``kernel_profile``: phi(q).phi(k) against exp(q.k/sqrt d) for every (q, k) pair of a
  head, the unnormalised kernel each map computes.
- ``rf_convergence``: FAVOR+'s map error as m grows, IID against orthogonal features,
  on a well-conditioned sample (small |x'|) and on the real head; ``favor_budget`` says
  why the real head converges slowly (``explorer.maps.rf_theory``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...diagnostics import attention
from ...measure import rowwise
from ...checks import check_positive_int
from ...maps import create
from ..memo import memo, tensor_key

TAYLOR_ORDERS = (1, 2, 3)
SERIES_ORDERS = 10                     # orders drawn one by one; the rest of the series is one share
RF_FEATURES = (4, 8, 16, 32, 64, 128, 256, 512, 1024)
WELL_CONDITIONED_NORM2 = 0.25          # E|x'|^2 of the well-conditioned sample
MAX_PROFILE_PAIRS = 4096               # pairs drawn per map (a seeded subset beyond this)


def taylor(s, order: int) -> np.ndarray:
    """sum_{k=0..order} s^k / k!, elementwise (float64)."""
    order = check_positive_int(order, "order")
    s = np.asarray(s, dtype=np.float64)
    total, term = np.ones_like(s), np.ones_like(s)
    for k in range(1, order + 1):
        term = term * s / k
        total = total + term
    return total


# The grid reaches this far left whatever the logits: the span s < -1, where order 1 is
# negative, is on the figure even for a head whose logits all lie above it.
TAYLOR_LEFT = -3.0


def taylor_curves(s_values, points: int = 200, margin: float = 0.5) -> dict:
    """exp and its truncations on a grid spanning the observed logits (plus a margin), and
    at least down to ``TAYLOR_LEFT`` (where 1 + s < 0)."""
    s_values = np.asarray(s_values, dtype=np.float64).ravel()
    lo = min(float(s_values.min()) - margin, TAYLOR_LEFT)
    hi = float(s_values.max()) + margin
    grid = np.linspace(lo, hi, points)
    return {"s": grid, "exp": np.exp(grid), **{f"order{o}": taylor(grid, o) for o in TAYLOR_ORDERS}}


def series_shares(s_values, orders: int = SERIES_ORDERS) -> dict:
    """The Taylor gap on a head's logits s (one per pair): exp(s) = sum_n s^n / n!, and summed
    over the pairs, sum exp(s) = sum_n T_n with T_n = sum s^n / n!. Returns the shares
    T_n / sum exp(s) for n = 0..``orders`` ("shares"), the share of the orders beyond
    ("tail"), what the first-order map 1 + s keeps (orders 0 and 1, "kept") and what it drops
    (orders 2 and up, "dropped" = 1 - kept, never negative: exp(s) >= 1 + s for every s).
    The remainders are summed as exp(s) - partial sum, not as 1 - the shares, so that no
    cancellation hides a small one. Odd orders of negative logits give negative shares."""
    orders = check_positive_int(orders, "orders")
    s = np.asarray(s_values, dtype=np.float64).ravel()
    exp = np.exp(s)
    total = float(exp.sum())
    terms, term = [], np.ones_like(s)
    for n in range(orders + 1):
        if n:
            term = term * s / n
        terms.append(float(term.sum()))
    return {"orders": np.arange(orders + 1), "shares": np.array(terms) / total,
            "tail": float((exp - taylor(s, orders)).sum()) / total,
            "kept": float((1.0 + s).sum()) / total, "dropped": float((exp - 1.0 - s).sum()) / total,
            "pairs": int(s.size)}


def pair_mask(n: int, causal: bool) -> np.ndarray:
    """(N, N) bool: the (query, key) pairs the head computes, every one, or j <= i when causal
    (a causal model never forms the others, so no sum or profile counts them)."""
    return np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)


def logit_summary(q, k, causal: bool = False) -> dict:
    """The logits of one head over the pairs it computes (``pair_mask``), flattened, with the
    share where 1 + s < 0 and the range: in float64 from the head's q, k, so that the sums over
    every pair (``series_shares``) are not float32's."""
    s = attention.logits(torch.as_tensor(q).double(), torch.as_tensor(k).double()).numpy()
    s = s[pair_mask(s.shape[0], causal)]
    return {"s": s, "s_min": float(s.min()), "s_max": float(s.max()),
            "negative_taylor1_fraction": float(np.mean(1.0 + s < 0))}


def _subset(n_pairs: int, limit: int, seed: int = 0) -> np.ndarray | None:
    if n_pairs <= limit:
        return None
    return np.sort(np.random.default_rng(seed).choice(n_pairs, size=limit, replace=False))


def pair_kernel(q, k, feature_map) -> torch.Tensor:
    """phi(q_i).phi(k_j) for every pair, (N, N), float64.

    Queries go through the map's key side (``is_query=False``) except for maps with
    separate query parameters (Hedgehog): the random-feature maps only rescale a query row
    by a constant on the query side, which is harmless in attention but would hide the
    kernel value this panel shows.
    """
    separate = getattr(feature_map, "name", "") == "hedgehog"
    fq = feature_map(q, is_query=separate).double()
    fk = feature_map(k).double()
    return fq @ fk.T


def kernel_profile(q, k, feature_map, limit: int = MAX_PROFILE_PAIRS, causal: bool = False) -> dict:
    """(exp(s), phi(q).phi(k)) per pair the head computes (``pair_mask``), the pairs the log
    axes cannot show (value <= 0), and the relative error of the kernel over those pairs."""
    keep_pairs = pair_mask(q.shape[0], causal)
    exact = torch.exp(attention.logits(q, k).double()).numpy()[keep_pairs]
    approx = pair_kernel(q, k, feature_map).numpy()[keep_pairs]
    rel = float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))
    nonpositive = int(np.sum(~(approx > 0)))
    keep = _subset(exact.size, limit)
    if keep is not None:
        exact, approx = exact[keep], approx[keep]
    return {"exact": exact, "approx": approx, "nonpositive": nonpositive, "pairs": int(keep_pairs.sum()),
            "shown": int(exact.size), "kernel_rel_error": rel, "m": int(feature_map.num_features)}


def well_conditioned(n: int, head_dim: int, seed: int = 0, norm2: float = WELL_CONDITIONED_NORM2):
    """Seeded Gaussian q, k, v (N, d) scaled so that E|x'|^2 = ``norm2`` for x' = x / d^(1/4):
    the regime in which FAVOR+'s variance e^{|q'+k'|^2} stays small."""
    gen = torch.Generator().manual_seed(int(seed))
    scale = math.sqrt(norm2 * math.sqrt(head_dim) / head_dim)
    q, k = (torch.randn(n, head_dim, generator=gen) * scale for _ in range(2))
    return q, k, torch.randn(n, head_dim, generator=gen)


def favor_map(head_dim: int, m: int, seed: int, orthogonal: bool):
    """FAVOR+ with these settings, built once (an orthogonal draw costs m/d QR factorisations)."""
    return memo(("favor_map", head_dim, int(m), int(seed), bool(orthogonal)),
                lambda: create("favor_plus", head_dim, num_features=int(m), seed=int(seed), orthogonal=orthogonal))


def rf_convergence(q, k, ms=RF_FEATURES, seeds: int = 4, causal: bool = False) -> dict:
    """Relative Frobenius error of FAVOR+'s normalised map to softmax (causal softmax for a
    causal head), per m, IID and orthogonal features, mean and spread over ``seeds`` redraws
    (remembered per input)."""
    seeds = check_positive_int(seeds, "seeds")
    key = ("rf_convergence", tensor_key(q, k), tuple(int(m) for m in ms), seeds, bool(causal))
    return memo(key, lambda: _rf_convergence(q, k, ms, seeds, causal))


@torch.inference_mode()
def _rf_convergence(q, k, ms, seeds: int, causal: bool = False) -> dict:
    """Per m, every redraw at once: the seeds' projections stacked (S, m, d), so features,
    weights and errors of all S maps come from a few batched operations instead of S
    passes through ``attention.kernel_map``. Same formula as the engine's FAVOR+
    (phi(x) = m^(-1/2) exp(W x' - |x'|^2 / 2), each query row divided by its largest
    feature); ``rf_convergence_reference`` is the plain loop it is held to."""
    reference = attention.softmax_map(q, k, causal=causal).double()
    d = q.shape[-1]
    xq, xk = q / d ** 0.25, k / d ** 0.25
    half_q, half_k = 0.5 * (xq * xq).sum(-1, keepdim=True), 0.5 * (xk * xk).sum(-1, keepdim=True)
    keep = torch.from_numpy(pair_mask(q.shape[-2], causal)) if causal else None
    return _summarise(ms, lambda m, orthogonal: _stacked_errors(xq, xk, half_q, half_k, m, seeds, orthogonal,
                                                                reference, keep))


def _stacked_errors(xq, xk, half_q, half_k, m: int, seeds: int, orthogonal: bool, reference,
                    keep=None) -> np.ndarray:
    w = torch.stack([favor_map(xq.shape[-1], m, b, orthogonal).projection for b in range(seeds)]).to(xq.dtype)
    w_t = w.transpose(-1, -2)                                      # (S, d, m)
    shift = 0.5 * math.log(m)
    log_q = xq @ w_t - half_q - shift                             # (S, N, m)
    fq = torch.exp(log_q - log_q.amax(-1, keepdim=True))
    fk = torch.exp(xk @ w_t - half_k - shift)
    weights = fq @ fk.transpose(-1, -2)                           # (S, N, N)
    if keep is not None:                                           # causal: keys j <= i only
        weights = weights * keep
    approx = weights / weights.sum(-1, keepdim=True)
    return rowwise.relative_error(approx, reference).numpy()


@torch.inference_mode()
def rf_convergence_reference(q, k, ms=RF_FEATURES, seeds: int = 4, causal: bool = False) -> dict:
    """``rf_convergence`` the plain way: every (m, seed) map through ``attention.kernel_map``."""
    reference = attention.softmax_map(q, k, causal=causal).double()

    def errors(m, orthogonal):
        return np.array([float(rowwise.relative_error(
            attention.kernel_map(q, k, favor_map(q.shape[-1], m, b, orthogonal), causal=causal).double(),
            reference))
            for b in range(seeds)])
    return _summarise(ms, errors)


def _summarise(ms, errors) -> dict:
    """{"m", "iid", "iid_std", "orthogonal", "orthogonal_std"} from errors(m, orthogonal) -> (seeds,)."""
    out = {"m": np.array(ms, dtype=np.int64)}
    for kind, orthogonal in (("iid", False), ("orthogonal", True)):
        errs = np.array([errors(int(m), orthogonal) for m in ms])
        out[kind] = errs.mean(1)
        out[f"{kind}_std"] = errs.std(1)
    return out


def favor_budget(q, k, rel_error: float = 0.1, causal: bool = False) -> dict | None:
    """Norms of q', k' and the m FAVOR+'s own variance formula asks for on this head, over the
    pairs it computes (``explorer.maps.rf_theory``); None when that module is not available in
    this build."""
    try:
        from ...maps import rf_theory
    except ImportError:
        return None
    norms = rf_theory.favor_norms(q, k)
    need = rf_theory.favor_required_features(q, k, rel_error=rel_error, causal=causal)
    return {"q_norms": np.asarray(norms["q_norms"], dtype=np.float64),
            "k_norms": np.asarray(norms["k_norms"], dtype=np.float64),
            "m_required": float(need["m_required"]), "rel_error": float(rel_error),
            "details": {key: value for key, value in need.items() if key != "m_required"}}


def scaled_norms(x) -> np.ndarray:
    """|x'| = |x| / d^(1/4) per row: what FAVOR+'s variance grows with."""
    x = torch.as_tensor(x).double()
    return (x.norm(dim=-1) / x.shape[-1] ** 0.25).numpy()
