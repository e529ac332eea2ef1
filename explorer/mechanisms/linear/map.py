"""The quadratic form of kernel attention from features: w_ij = phi(q_i).phi(k_j), times the
decay exp(B_i - B_j) when there is one (B the cumulative log decay), masked to j <= i when causal."""

from __future__ import annotations

import torch

from .decay import is_feature_dependent


def causal_mask(n: int, device=None) -> torch.Tensor:
    """Boolean (N, N) mask, True where key j may be seen by query i (j <= i)."""
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def weights_from_features(fq, fk, causal: bool, decay) -> torch.Tensor:
    """The quadratic form of kernel attention from features (..., N, m) and a prepared decay."""
    if decay is not None and not causal:
        raise ValueError("log_decay: decay and gates apply to causal attention only; set causal=True")
    n = fq.shape[-2]
    mask = causal_mask(n, fq.device) if causal else None
    if decay is None:
        w = fq @ fk.transpose(-1, -2)
        return w.masked_fill(~mask, 0.0) if causal else w
    decay = decay.expand(*decay.shape[:-2], n, decay.shape[-1])   # a per-head gamma has N = 1
    cum = decay.double().cumsum(dim=-2)                       # B_t, (..., N, m or 1)
    fq64, fk64 = fq.double(), fk.double()
    if is_feature_dependent(decay):
        diff = cum.unsqueeze(-2) - cum.unsqueeze(-3)          # B_i - B_j, (..., N, N, m)
        diff = diff.masked_fill(~mask.unsqueeze(-1), float("-inf"))
        w = torch.einsum("...if,...jf,...ijf->...ij", fq64, fk64, torch.exp(diff))
    else:
        diff = cum[..., :, 0].unsqueeze(-1) - cum[..., :, 0].unsqueeze(-2)   # (..., N, N)
        diff = diff.masked_fill(~mask, float("-inf"))
        w = (fq64 @ fk64.transpose(-1, -2)) * torch.exp(diff)
    return w.to(fq.dtype)
