"""Deterministic maps: identity, Taylor-1, elu+1, ReLU, Taylor-2 (Based), cosFormer."""

from __future__ import annotations

import math

import torch

from ..checks import check_positive_int
from .base import SPECS, FeatureMap, _softmax_scale, records_grad, register


class Identity(FeatureMap):
    """phi(x) = x'. Kernel k(q, k) = q.k / sqrt(d) = s exactly.

    Not a positive kernel: rows of the normalised map can sum to zero or below, where the
    map is ill-defined. ``explorer.diagnostics.attention.kernel_map`` flags those rows.
    """

    spec = SPECS["identity"]
    nonfinite_rows = True

    def features(self, x, is_query):
        return _softmax_scale(x)

    def features_into(self, x, is_query, out, scratch=None):
        return torch.mul(x, x.shape[-1] ** -0.25, out=out)


class Taylor1(FeatureMap):
    """phi(x) = [1, x']. Kernel k(q, k) = 1 + s exactly: exp(s) to first order.

    Negative where s < -1, so rows can be ill-defined as for ``identity``.
    """

    spec = SPECS["taylor1"]
    nonfinite_rows = True

    def features(self, x, is_query):
        ones = torch.ones(*x.shape[:-1], 1, dtype=x.dtype, device=x.device)
        return torch.cat([ones, _softmax_scale(x)], dim=-1)


class EluPlusOne(FeatureMap):
    """phi(x) = elu(x) + 1 on the raw input (Katharopoulos et al. 2020), m = d.

    Kernel k(q, k) = (elu(q) + 1).(elu(k) + 1) exactly; positive, but not close to exp(s).
    """

    spec = SPECS["elu1"]
    nonfinite_rows = True

    def features(self, x, is_query):
        # elu(x) + 1 = exp(min(x, 0)) + max(x, 0). Written this way it stays positive in
        # float32 where elu(x) + 1 = (exp(x) - 1) + 1 rounds to 0 (x < -17 or so), which
        # would leave a zero feature row, and it is about 15% faster. While autograd records,
        # the last add is out of place: exp's backward needs its own output intact.
        if records_grad(x):
            return x.clamp(max=0.0).exp_() + torch.relu(x)
        return self.features_into(x, is_query, torch.empty_like(x))

    def features_into(self, x, is_query, out, scratch=None):
        # With y = min(x, 0): exp(y) + (x - y). x - y is max(x, 0) exactly for finite x, and
        # NaN for x = -inf, so every non-finite input gives a non-finite feature
        # (``nonfinite_rows``). x - y is taken before the add: exp(y) + x - y would round
        # exp(y) away against a large negative x.
        y = x.clamp(max=0.0) if scratch is None else torch.clamp(x, max=0.0, out=scratch)
        torch.sub(x, y, out=out)
        return out.add_(y.exp_())


class Relu(FeatureMap):
    """phi(x) = relu(x) on the raw input, m = d. Kernel relu(q).relu(k) exactly.

    A row whose query has no positive coordinate in common with any key sums to zero:
    that row is flagged as ill-defined.
    """

    spec = SPECS["relu"]

    def features(self, x, is_query):
        return torch.relu(x)

    def features_into(self, x, is_query, out, scratch=None):
        return torch.clamp(x, min=0.0, out=out)


class Taylor2(FeatureMap):
    """Second-order Taylor features (Based, Arora et al. 2024).

    Kernel k(q, k) = 1 + s + s^2 / 2 exactly, with x' = x / d^(1/4). Compressed form:
    [1, x', x'_i^2 / sqrt(2), x'_i x'_j (i < j)], dimension 1 + d + d(d+1)/2, since
    (q'.k')^2 / 2 = sum_i q'_i^2 k'_i^2 / 2 + sum_{i<j} q'_i q'_j k'_i k'_j.
    The kernel is always positive (1 + s + s^2/2 > 0), so every row is well defined.
    """

    spec = SPECS["taylor2"]

    def __init__(self, head_dim: int):
        super().__init__(head_dim)
        iu = torch.triu_indices(head_dim, head_dim, offset=1)
        self.register_buffer("upper_i", iu[0], persistent=False)
        self.register_buffer("upper_j", iu[1], persistent=False)

    def features(self, x, is_query):
        xs = _softmax_scale(x)
        ones = torch.ones(*x.shape[:-1], 1, dtype=x.dtype, device=x.device)
        squares = xs * xs / math.sqrt(2.0)
        cross = xs[..., self.upper_i] * xs[..., self.upper_j]
        return torch.cat([ones, xs, squares, cross], dim=-1)


class CosFormer(FeatureMap):
    """cosFormer (Qin et al. 2022): relu features re-weighted by position.

    phi(x_i) = [relu(x_i) cos(pi i / 2M), relu(x_i) sin(pi i / 2M)], m = 2d, on the raw
    input, so k(q_i, k_j) = relu(q_i).relu(k_j) cos(pi (i - j) / 2M) exactly: a locality
    bias that favours nearby tokens. Positions are ``offset + n`` and M = ``max_len``
    (default: the sequence length N of the call).
    """

    spec = SPECS["cosformer"]
    positional = True

    def __init__(self, head_dim: int, max_len: int | None = None, offset: int = 0):
        super().__init__(head_dim)
        self.max_len = None if max_len is None else check_positive_int(max_len, "max_len")
        self.offset = int(offset)

    def features(self, x, is_query, offset=0, total=None):
        n = x.shape[-2]
        total = self.max_len or total or n
        start = self.offset + offset
        pos = torch.arange(start, start + n, dtype=x.dtype, device=x.device)
        angle = (math.pi / (2 * total)) * pos
        r = torch.relu(x)
        return torch.cat([r * torch.cos(angle).unsqueeze(-1), r * torch.sin(angle).unsqueeze(-1)], dim=-1)


register(Identity)
register(Taylor1)
register(EluPlusOne)
register(Relu)
register(Taylor2)
register(CosFormer)
