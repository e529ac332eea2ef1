"""Hybrids of softmax and linear attention, at the level of one map and of a whole model.

Map level (Based-style): exact softmax weights inside a sliding window of w keys, the
linear kernel phi(q).phi(k) for every key outside it, normalised together over the row:

    w_ij = exp(s_ij)          if key j is in the window of query i,
           phi(q_i).phi(k_j)  otherwise,                 A^_ij = w_ij / sum_l w_il.

The inner map should target exp(s) itself (Taylor-2 by default, or FAVOR+) so that the
two kinds of weight share a scale. w = 0 is the inner kernel map; w >= N is exact softmax.

The model level (chosen layers of the real model made linear) is an experiment:
``explorer.experiments.hybrids``.
"""

from __future__ import annotations

import torch

from .base import SPECS, FeatureMap, create, register


class SlidingWindow(FeatureMap):
    """Exact softmax over a window of ``window`` keys, the ``inner`` kernel elsewhere.

    Causal: the window of query i is keys i-w+1..i. Non-causal: keys with |i - j| < w.
    Its features are the inner map's (queries unscaled, so the linear part keeps the
    scale of exp(s)); ``pair_weights`` gives the mixed weights the reference map uses.
    """

    spec = SPECS["sliding_window"]

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0,
                 window: int = 4, inner: str = "taylor2"):
        super().__init__(head_dim)
        window = int(window)
        if window < 0:
            raise ValueError(f"window: must be 0 or more keys, got {window}")
        if inner == self.name:
            raise ValueError("inner: a sliding window cannot wrap another sliding window")
        self.window = window
        self.inner = create(inner, head_dim, num_features=num_features, seed=seed)

    @property
    def num_features(self) -> int:
        return self.inner.num_features

    def features(self, x, is_query):
        return self.inner(x)

    def pair_weights(self, q, k, causal: bool) -> torch.Tensor:
        """Unnormalised mixed weights (..., N, N), every row scaled by one positive constant."""
        n = q.shape[-2]
        s = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
        lin = self.inner(q) @ self.inner(k).transpose(-1, -2)
        i = torch.arange(n, device=q.device)
        offset = i.view(-1, 1) - i.view(1, -1)                         # i - j
        allowed = offset >= 0 if causal else torch.ones_like(offset, dtype=torch.bool)
        in_window = allowed & (offset.abs() < self.window)
        # One constant per query keeps exp() in range; it cancels in the normalised row.
        c = s.masked_fill(~in_window, float("-inf")).amax(-1, keepdim=True).clamp_min(0.0)
        w = torch.where(in_window, torch.exp(s - c), lin * torch.exp(-c))
        return w.masked_fill(~allowed, 0.0)


register(SlidingWindow)
