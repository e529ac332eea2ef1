"""The exact softmax attention map: A_ij = exp(s_ij) / sum_l exp(s_il), s = q.k / sqrt(d)
(Nadaraya-Watson with the exponential kernel)."""

from __future__ import annotations

import torch

from ...checks import check_qkv


def logits(q, k) -> torch.Tensor:
    """s_ij = q_i . k_j / sqrt(d), shaped (..., N, N)."""
    q, k, _ = check_qkv(q, k)
    return (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5


def masked_logits(q, k, causal: bool = False) -> torch.Tensor:
    """The logits with -inf where a causal query may not look (j > i), (..., N, N)."""
    s = logits(q, k)
    if causal:
        future = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu_(1)
        s.masked_fill_(future, float("-inf"))
    return s


def softmax_map(q, k, causal: bool = False) -> torch.Tensor:
    """Exact softmax attention weights, (..., N, N); future keys get weight 0 when causal."""
    s = masked_logits(q, k, causal)
    # In place on the one N x N buffer: at long N the map is the memory, and a second and
    # third copy (mask, softmax output) would cost more than the arithmetic.
    s.sub_(s.amax(-1, keepdim=True)).exp_()
    return s.div_(s.sum(-1, keepdim=True))
