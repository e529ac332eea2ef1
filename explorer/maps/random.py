"""Random-feature maps: Performer FAVOR+ (positive) and trigonometric random features.

Both are seeded: the same seed gives the same features, a new seed is a redraw.
"""

from __future__ import annotations

import math

import torch

from ..checks import check_positive_int
from .base import SPECS, FeatureMap, _softmax_scale, register


def gaussian_projection(
    num_features: int, head_dim: int, seed: int, orthogonal: bool
) -> torch.Tensor:
    """An m x d matrix W whose rows are (marginally) N(0, I_d).

    IID: plain Gaussian rows. Orthogonal: ceil(m/d) blocks, each the Q factor of a QR of a
    d x d Gaussian matrix (rows orthonormal within a block), every row rescaled by the norm
    of an independent Gaussian d-vector (chi(d) distributed) so that each row is still
    marginally N(0, I_d): this keeps the estimator unbiased. Rescaling by sqrt(d) instead
    would not.
    """
    gen = torch.Generator().manual_seed(int(seed))
    if not orthogonal:
        return torch.randn(num_features, head_dim, generator=gen, dtype=torch.float64)
    blocks = []
    for _ in range(math.ceil(num_features / head_dim)):
        g = torch.randn(head_dim, head_dim, generator=gen, dtype=torch.float64)
        qmat, r = torch.linalg.qr(g)
        # Fix the sign ambiguity of QR so that Q is Haar-distributed.
        qmat = qmat * torch.sign(torch.diagonal(r)).unsqueeze(0)
        blocks.append(qmat.T)
    w = torch.cat(blocks, dim=0)[:num_features]
    norms = torch.randn(num_features, head_dim, generator=gen, dtype=torch.float64).norm(dim=1)
    return w * norms.unsqueeze(1)


class FavorPlus(FeatureMap):
    """Performer FAVOR+ positive random features (Choromanski et al. 2021).

    phi(x) = m^(-1/2) exp(W x' - |x'|^2 / 2), x' = x / d^(1/4), W an m x d Gaussian matrix
    (IID rows, or orthogonal blocks with chi(d) norms). Unbiased: E[phi(q).phi(k)] = exp(s).
    Per-feature variance exp(2s) (exp(|q'+k'|^2) - 1), so the MSE of the IID estimate is
    that / m: small exactly where the kernel is small.

    With ``is_query=True`` each row is divided by its largest feature (a per-query
    constant, which cancels in the attention row) so exp() cannot overflow.
    """

    spec = SPECS["favor_plus"]

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0,
                 orthogonal: bool = True):
        super().__init__(head_dim)
        m = self.spec.feature_count(head_dim) if num_features is None else check_positive_int(num_features, "num_features")
        self.orthogonal = bool(orthogonal)
        self.seed = int(seed)
        self.register_buffer("projection", gaussian_projection(m, head_dim, seed, self.orthogonal))

    @property
    def num_features(self) -> int:
        return self.projection.shape[0]

    def log_features(self, x):
        xs = _softmax_scale(x)
        w = self.projection.to(dtype=x.dtype, device=x.device)
        return xs @ w.T - 0.5 * (xs * xs).sum(-1, keepdim=True) - 0.5 * math.log(self.num_features)

    def features(self, x, is_query):
        logits = self.log_features(x)
        if is_query:
            logits = logits - logits.amax(dim=-1, keepdim=True)
        return torch.exp(logits)


class TrigRFF(FeatureMap):
    """Trigonometric random Fourier features (Bochner's theorem), m features = 2 x draws.

    phi(x) = (m/2)^(-1/2) exp(|x'|^2 / 2) [cos(W x'), sin(W x')], W with IID N(0, I) rows
    (or orthogonal blocks). Unbiased: E[phi(q).phi(k)] = exp(s). Unlike FAVOR+ it can go
    negative, and its error is largest exactly where the kernel is small, so normalisers
    can cross zero; such rows are flagged. ``num_features`` must be even.

    With ``is_query=True`` the positive per-query factor exp(|q'|^2 / 2) is dropped (it
    cancels in the attention row).
    """

    spec = SPECS["trig_rff"]

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0,
                 orthogonal: bool = False):
        super().__init__(head_dim)
        m = self.spec.feature_count(head_dim) if num_features is None else check_positive_int(num_features, "num_features")
        if m % 2:
            raise ValueError(f"num_features: trig_rff needs an even count (cos and sin pairs), got {m}")
        self.orthogonal = bool(orthogonal)
        self.seed = int(seed)
        self.register_buffer("projection", gaussian_projection(m // 2, head_dim, seed, self.orthogonal))

    @property
    def num_features(self) -> int:
        return 2 * self.projection.shape[0]

    def features(self, x, is_query):
        xs = _softmax_scale(x)
        w = self.projection.to(dtype=x.dtype, device=x.device)
        proj = xs @ w.T
        scale = 1.0 / math.sqrt(self.projection.shape[0])
        feats = torch.cat([torch.cos(proj), torch.sin(proj)], dim=-1) * scale
        if is_query:
            return feats
        return feats * torch.exp(0.5 * (xs * xs).sum(-1, keepdim=True))


register(FavorPlus)
register(TrigRFF)
