"""How many random features FAVOR+ needs on given queries and keys: the IID variance formula.

FAVOR+ (design.md, section 2) estimates the softmax kernel exp(q'.k') with x' = x / d^(1/4).
One positive feature of it is Z = exp(w.(q' + k') - |q'|^2/2 - |k'|^2/2) with w ~ N(0, I):

    E[Z]   = exp(q'.k')                              (unbiased: E exp(w.u) = exp(|u|^2 / 2))
    E[Z^2] = exp(2 |q' + k'|^2 - |q'|^2 - |k'|^2)
    Var[Z] / E[Z]^2 = exp(|q' + k'|^2) - 1           (the relative variance of one feature)

m IID features average m such draws, so the estimate's relative variance is
(exp(|q' + k'|^2) - 1) / m, and a relative error (standard deviation over the kernel) of
eps needs m = (exp(|q' + k'|^2) - 1) / eps^2 features. The exponent is what decides: with
|q' + k'|^2 = 2 a pair needs ~640 features for 10 %; with 20 (common on trained heads,
whose |q|, |k| are large) it needs ~5e10. That is why random features converge visibly on
small-norm data and not on real heads. Orthogonal features do better than this formula
(it is an upper bound for them at small norms), but not by the orders of magnitude a
large norm costs.

Everything is computed in float64, in logarithms where the counts overflow.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..checks import as_float_tensor

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def _scaled(q, k):
    q = as_float_tensor(q, "q").double()
    k = as_float_tensor(k, "k").double()
    if q.dim() < 2 or k.dim() < 2 or q.shape[-1] != k.shape[-1] or q.shape[:-2] != k.shape[:-2]:
        raise ValueError(f"q, k: expected shapes (..., N, d) and (..., M, d) with the same leading dimensions "
                         f"and d, got {tuple(q.shape)} and {tuple(k.shape)}")
    if q.shape[-1] == 0 or q.shape[-2] == 0 or k.shape[-2] == 0:
        raise ValueError(f"q, k: need at least one row and one dimension, got {tuple(q.shape)} and {tuple(k.shape)}")
    if not (torch.isfinite(q).all() and torch.isfinite(k).all()):
        raise ValueError("q, k: contain NaN or infinite values")
    scale = q.shape[-1] ** 0.25
    return q / scale, k / scale


def favor_norms(q, k) -> dict:
    """Norms of q' = q / d^(1/4) and k' = k / d^(1/4), each row: dict(q_norms, k_norms) as
    numpy arrays shaped like q and k without their last dimension."""
    qs, ks = _scaled(q, k)
    return {"q_norms": qs.norm(dim=-1).numpy(), "k_norms": ks.norm(dim=-1).numpy()}


def pair_sq_norms(q, k, causal: bool = False) -> np.ndarray:
    """|q'_i + k'_j|^2 for every allowed pair (j <= i when causal), flattened over heads."""
    qs, ks = _scaled(q, k)
    qq = (qs * qs).sum(-1).unsqueeze(-1)
    kk = (ks * ks).sum(-1).unsqueeze(-2)
    u2 = (qq + kk + 2.0 * (qs @ ks.transpose(-1, -2))).clamp_(min=0.0)
    if causal:
        if qs.shape[-2] != ks.shape[-2]:
            raise ValueError("causal: queries and keys must have the same length")
        keep = torch.ones(u2.shape[-2:], dtype=torch.bool).tril()
        return u2[..., keep].reshape(-1).numpy()
    return u2.reshape(-1).numpy()


def log_relative_variance(u2) -> np.ndarray:
    """log(exp(u2) - 1), the log of one feature's relative variance, without overflow."""
    u2 = np.asarray(u2, dtype=np.float64)
    with np.errstate(divide="ignore"):
        small = np.log(np.expm1(np.minimum(u2, 30.0)))          # exact where expm1 cannot overflow
    large = u2 + np.log1p(-np.exp(-np.maximum(u2, 30.0)))       # exp(u2) (1 - exp(-u2)), in logs
    return np.where(u2 < 30.0, small, large)


def favor_relative_variance(q, k, causal: bool = False) -> np.ndarray:
    """Per-feature relative variance exp(|q' + k'|^2) - 1 of every allowed pair (inf where
    it overflows float64)."""
    with np.errstate(over="ignore"):
        return np.exp(log_relative_variance(pair_sq_norms(q, k, causal)))


def favor_required_features(q, k, rel_error: float = 0.1, causal: bool = False) -> dict:
    """The number of IID FAVOR+ features m at which the kernel estimate of a pair has relative
    error ``rel_error`` (standard deviation / kernel), summarised over all (q_i, k_j) pairs.

    Returns a dict:
      m_required        the median over pairs (a float; inf only if it overflows float64),
      log10_m_required  its log10 (always finite),
      m_quantiles       {quantile: m} for QUANTILES, over pairs,
      per_pair_rel_var  {"median", "q10", "q90", "max"} of exp(|q'+k'|^2) - 1 per feature,
      sq_norm_sum       {"median", "q10", "q90"} of |q' + k'|^2,
      rel_error, pairs  the target and the number of pairs summarised.

    Quantiles are taken of log10 m (numpy's linear interpolation between neighbouring
    pairs), so they are exact pair values wherever they fall on a pair.
    """
    try:
        rel_error = float(rel_error)
    except (TypeError, ValueError):
        raise ValueError(f"rel_error: expected a number, got {rel_error!r}") from None
    if not 0.0 < rel_error < math.inf:
        raise ValueError(f"rel_error: must be a positive number, got {rel_error}")
    u2 = pair_sq_norms(q, k, causal)
    log_var = log_relative_variance(u2)
    log10_m = (log_var - 2.0 * math.log(rel_error)) / math.log(10.0)
    levels = np.quantile(log10_m, QUANTILES)
    var_q = np.quantile(log_var, (0.1, 0.5, 0.9))
    with np.errstate(over="ignore"):
        m_quantiles = {float(p): float(10.0 ** x) for p, x in zip(QUANTILES, levels)}
        rel_var = {"q10": float(np.exp(var_q[0])), "median": float(np.exp(var_q[1])), "q90": float(np.exp(var_q[2])),
                   "max": float(np.exp(log_var.max()))}
    median_log10 = float(levels[QUANTILES.index(0.5)])
    return {
        "m_required": m_quantiles[0.5],
        "log10_m_required": median_log10,
        "m_quantiles": m_quantiles,
        "per_pair_rel_var": rel_var,
        "sq_norm_sum": {"q10": float(np.quantile(u2, 0.1)), "median": float(np.median(u2)),
                        "q90": float(np.quantile(u2, 0.9))},
        "rel_error": rel_error,
        "pairs": int(u2.size),
    }
