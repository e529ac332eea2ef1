"""N x N reference attention maps: the plain, quadratic truth the O(N) forms are held to.

softmax_map:  A_ij = exp(s_ij) / sum_l exp(s_il), s = q.k / sqrt(d)   (Nadaraya-Watson with
              the exponential kernel).
kernel_map:   A^_ij = w_ij / sum_l w_il, w_ij = phi(q_i).phi(k_j) (times the decay
              exp(B_i - B_j) when there is one), sums over the allowed l (l <= i if causal).

A kernel that is not positive (identity, Taylor-1, trigonometric features) can give a row
whose normaliser is zero, negative or tiny next to its terms. Such rows are not clamped:
``normalisers`` reports them and the metrics count them.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from ..checks import check_qkv
from ..mechanisms.linear.decay import prepare_log_decay
from ..mechanisms.linear.map import causal_mask, weights_from_features  # noqa: F401  (part of this module's API)
from ..mechanisms.softmax.map import logits, masked_logits, softmax_map  # noqa: F401  (part of this module's API)

# A normaliser is "tiny" when it is this small next to the sum of the absolute terms that
# make it: the row's weights are then dominated by cancellation error.
TINY_RELATIVE = 1e-6


def kernel_weights(q, k, feature_map, causal: bool = False, log_decay=None) -> torch.Tensor:
    """Unnormalised kernel weights w_ij = phi(q_i).phi(k_j) [* exp(B_i - B_j)], (..., N, N).

    Masked entries are exactly 0. Decay requires ``causal=True`` (it is a statement about
    the order of tokens). With decay the weights are formed in float64, so that differences
    of cumulative log-decays keep their precision even when they reach -1000.
    """
    q, k, _ = check_qkv(q, k)
    if hasattr(feature_map, "pair_weights"):
        # Maps that are not a plain dot product of features (the sliding-window hybrid)
        # give their weights directly.
        if log_decay is not None:
            raise ValueError(f"log_decay: map {feature_map.name!r} does not take a decay")
        return feature_map.pair_weights(q, k, causal)
    fq = feature_map(q, is_query=True)
    fk = feature_map(k)
    decay = prepare_log_decay(log_decay, tuple(q.shape[:-2]), q.shape[-2], fq.shape[-1], q.dtype, q.device)
    return weights_from_features(fq, fk, causal, decay)


class Normalisers(NamedTuple):
    """Row sums of the kernel weights and which rows cannot be normalised honestly."""

    sums: torch.Tensor          # (..., N): sum_l w_il
    ill_defined: torch.Tensor   # (..., N) bool: sum <= 0, non-finite, or tiny next to sum |w_il|


def normalisers(weights: torch.Tensor) -> Normalisers:
    """Row normalisers of unnormalised weights, with the ill-defined rows flagged."""
    sums = weights.sum(-1)
    scale = weights.abs().sum(-1)
    bad = ~torch.isfinite(sums) | (sums <= 0) | (sums.abs() <= TINY_RELATIVE * scale)
    return Normalisers(sums, bad)


def kernel_map(q, k, feature_map, causal: bool = False, log_decay=None) -> torch.Tensor:
    """The normalised kernel attention map A^ = w / rowsum(w), (..., N, N).

    Ill-defined rows (see ``normalisers``) are left as the division gives them (possibly
    negative, inf or NaN), never clamped; use ``kernel_map_with_flags`` to know which.
    """
    return kernel_map_with_flags(q, k, feature_map, causal, log_decay)[0]


def kernel_map_with_flags(q, k, feature_map, causal: bool = False, log_decay=None):
    """(A^, ill_defined_rows): the normalised map and a (..., N) bool mask of flagged rows."""
    w = kernel_weights(q, k, feature_map, causal, log_decay)
    norm = normalisers(w)
    return w / norm.sums.unsqueeze(-1), norm.ill_defined
