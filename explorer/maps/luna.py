"""A LUNA-style learned feature map, after "LUNA: Linear Universal Neural Attention with
Generalization Guarantees" (Shahbazi et al., 2025, arXiv 2512.08061).

LUNA learns the kernel's feature map instead of fixing it: learned input projections, a
bank of learned channel functions and a learned token-wise envelope,

    phi(x) = e(x) . [psi_c(w_c . x' + b_c)]_{c=1..m} / sqrt(m),     x' = x / d^(1/4),

with, in this implementation,

* projections w_c (the columns of a d x m matrix W) and offsets b_c;
* channel functions psi_c(t) = a_c1 exp(t) + a_c2 softplus(t) + a_c3 relu(t)^2: a positive
  combination (a_cb = softplus of a learned logit, so always > 0) of three fixed positive
  bases. Each channel mixes the bank in its own proportions;
* a token-wise envelope e(x) = exp(-gamma |x'|^2 / 2 + u . x'), gamma = softplus of a
  learned logit (> 0), u learned.

Every feature is positive (exp(t) > 0 and the other bases are >= 0), so every attention
weight is positive and every normaliser is > 0. The kernel it computes exactly is

    k(x, y) = phi(x) . phi(y) = e(x) e(y) / m . sum_c psi_c(w_c.x' + b_c) psi_c(w_c.y' + b_c),

one map for queries and keys alike, so k is an inner product of features: symmetric and
positive-definite (every Gram matrix is positive semi-definite), as LUNA requires.

It starts as FAVOR+: W is an orthogonal Gaussian projection (``random.gaussian_projection``),
b = 0, the exp basis has weight 1 and the others almost none, gamma = 1, u = 0, so at
initialisation k(x, y) is (up to the small extra bases) the positive random-feature
estimate of exp(x'.y') = exp(q.k / sqrt(d)), the softmax kernel. Training
(``explorer.maps.learned``) then fits every parameter so that the normalised attention
rows match the model's softmax rows (row cross-entropy, as for Hedgehog): the learned
kernel is the one whose rows best imitate this head's softmax on the training texts,
not an unbiased estimate of exp(s) any more.

Two details keep float32 finite. For keys the exp basis is taken as exp(t + log e(x)),
whose exponent is bounded by the parameters (by Cauchy-Schwarz, (w + u).x' + b -
gamma |x'|^2 / 2 <= |w + u|^2 / (2 gamma) + b); exponents are clipped at 60 all the same
(the shipped layer-2 maps reach about 11 on MiniLM's keys). For queries e(q) is left out and each row is divided by
exp(max(0, max_c t_c)): per-query constants, which cancel in the attention row (see
``base``). Keys are never rescaled per row.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..checks import check_positive_int
from .base import SPECS, FeatureMap, _softmax_scale, register
from .random import gaussian_projection

BASES = ("exp", "softplus", "relu2")
MAX_EXPONENT = 60.0                      # exp(60) ~ 1e26: far from float32's limit, even summed
_SOFTPLUS_INV_1 = math.log(math.e - 1)   # softplus(this) = 1
_SMALL_WEIGHT = -6.0                     # softplus(-6) ~ 0.0025: the extra bases start almost off


class Luna(FeatureMap):
    """Learned positive map e(x) [psi_c(w_c.x' + b_c)]_c / sqrt(m) (LUNA-style), m features.

    ``heads`` gives leading parameter dimensions, e.g. (6, 12) for every head of MiniLM, as
    for Hedgehog; untrained (FAVOR+-like, seeded projection) is the default. Queries and
    keys share one map, so the kernel is positive-definite.
    """

    spec = SPECS["luna"]

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0, heads: tuple = ()):
        super().__init__(head_dim)
        m = self.spec.feature_count(head_dim) if num_features is None else check_positive_int(num_features, "num_features")
        self.heads = tuple(int(h) for h in heads)
        w = gaussian_projection(m, head_dim, seed, orthogonal=True).T.to(torch.float32)   # (d, m)
        self.weight = nn.Parameter(w.expand(*self.heads, head_dim, m).clone())
        self.bias = nn.Parameter(torch.zeros(*self.heads, 1, m))
        mix = torch.full((len(BASES), m), _SMALL_WEIGHT)
        mix[0] = _SOFTPLUS_INV_1                                    # exp basis at weight 1: FAVOR+
        self.mix = nn.Parameter(mix.expand(*self.heads, len(BASES), m).clone())
        self.envelope_curvature = nn.Parameter(torch.full((*self.heads, 1, 1), _SOFTPLUS_INV_1))
        self.envelope_direction = nn.Parameter(torch.zeros(*self.heads, head_dim, 1))

    @property
    def num_features(self) -> int:
        return self.weight.shape[-1]

    def channel_weights(self) -> torch.Tensor:
        """a_cb > 0, shaped (*heads, bases, m)."""
        return nn.functional.softplus(self.mix)

    def log_envelope(self, xs: torch.Tensor) -> torch.Tensor:
        """log e(x) = -gamma |x'|^2 / 2 + u . x', shaped (..., N, 1)."""
        gamma = nn.functional.softplus(self.envelope_curvature).to(xs.dtype)
        return -0.5 * gamma * (xs * xs).sum(-1, keepdim=True) + xs @ self.envelope_direction.to(xs.dtype)

    def features(self, x, is_query):
        xs = _softmax_scale(x)
        t = xs @ self.weight.to(x.dtype) + self.bias.to(x.dtype)           # (..., N, m)
        if is_query:
            # The query's envelope and any other per-row constant cancel in the attention row:
            # drop e(q) and divide by exp(max(0, max_c t_c)), so every factor stays <= 1.
            log_scale = -t.amax(dim=-1, keepdim=True).clamp_min(0.0).detach()
        else:
            log_scale = self.log_envelope(xs).clamp(max=MAX_EXPONENT)
        exponent = (t + log_scale).clamp(max=MAX_EXPONENT)                # the exp basis times the scale
        scale = torch.exp(log_scale)
        a = self.channel_weights().to(x.dtype).unsqueeze(-2)              # (*heads, bases, 1, m)
        phi = (a[..., 0, :, :] * torch.exp(exponent)
               + a[..., 1, :, :] * nn.functional.softplus(t) * scale
               + a[..., 2, :, :] * torch.relu(t).square() * scale)
        return phi / math.sqrt(self.num_features)

    def select(self, *index) -> "Luna":
        """The map of one head (or a sub-block of heads), e.g. ``select(layer, head)``."""
        sub = Luna(self.head_dim, self.num_features, heads=())
        with torch.no_grad():
            for name, _ in self.named_parameters():
                getattr(sub, name).data = getattr(self, name)[index].detach().clone()
        sub.heads = tuple(sub.weight.shape[:-2])
        return sub


register(Luna)
