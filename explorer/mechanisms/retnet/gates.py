"""RetNet's fixed per-head decay gamma_h = 1 - 2^(-5-h), as the log decay the linear forms take."""

from __future__ import annotations

import math

import torch

from ...checks import check_positive_int


def head_gamma(head: int) -> float:
    """RetNet's decay of head ``head``: gamma_h = 1 - 2^(-5-h) (exact in float64)."""
    return 1.0 - 2.0 ** (-5 - int(head))


def retnet_log_decay(num_heads: int) -> torch.Tensor:
    """log gamma_h for RetNet's fixed per-head decay gamma_h = 1 - 2^(-5-h), shaped (H, 1, 1).

    Broadcasts against q shaped (H, N, d): one decay per head, the same for every token
    and feature.
    """
    gammas = [head_gamma(h) for h in range(check_positive_int(num_heads, "num_heads"))]
    return torch.log(torch.tensor(gammas, dtype=torch.float64)).to(torch.get_default_dtype()).view(-1, 1, 1)


def gamma_to_log_decay(gamma: float) -> float:
    """A scalar decay gamma in (0, 1] as log gamma, with a clear error outside that range."""
    gamma = float(gamma)
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma: decay must lie in (0, 1], got {gamma}")
    return math.log(gamma)
