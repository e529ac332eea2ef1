"""The feature-map zoo: phi such that k(q, k) = phi(q) . phi(k).

Each map is a small class with a docstring that says which kernel it computes exactly or
estimates, and on which scaling of its input. Maps that approximate the softmax kernel
work on x' = x / d^(1/4), so the kernel they target is exp(q.k / sqrt(d)) = exp(s).

A map is called as ``phi(x)`` on a tensor shaped (..., N, d) and returns (..., N, m).
``phi(x, is_query=True)`` may multiply every feature of a row by one positive constant
(a per-query constant cancels in the normalised attention row); the random-feature maps
use this to keep exp() in range. Keys are never rescaled per row: a per-key constant
would change the attention weights, and a constant taken over all keys would let future
tokens change past outputs in causal mode.

Random maps are seeded: the same seed gives the same features, a new seed is a redraw.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .checks import as_float_tensor, check_positive_int


class FeatureMap(nn.Module):
    """Base class: a map phi from (..., N, d) to (..., N, m).

    ``positional`` maps (cosFormer) depend on the token position, so the position of
    row n is ``offset + n`` and the total length M is ``max_len`` (default: N).

    ``nonfinite_rows`` is True for maps whose feature row of an input row with a NaN or
    infinite element always holds a NaN or infinite feature: the linear forms then find
    non-finite input in numbers they compute anyway (see ``explorer.linear.noncausal``).
    """

    name = "base"
    positional = False
    nonfinite_rows = False

    def __init__(self, head_dim: int):
        super().__init__()
        self.head_dim = check_positive_int(head_dim, "head_dim")

    @property
    def num_features(self) -> int:
        raise NotImplementedError

    def features(self, x: torch.Tensor, is_query: bool) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, x, is_query: bool = False, offset: int = 0, total: int | None = None,
                out: torch.Tensor | None = None) -> torch.Tensor:
        """phi(x) for x shaped (..., N, d). ``offset`` and ``total`` matter to positional
        maps only: the rows of x sit at positions offset..offset+N-1 of a sequence of
        length ``total`` (default N), so a long sequence can be mapped block by block.

        ``out`` is an optional buffer shaped like the result, (..., N, m). Elementwise maps
        write into it (no allocation: the O(N) forms reuse one buffer for every block);
        the others ignore it, and so does every map while autograd is recording. Always
        use the returned tensor. Such maps define ``features_into(x, is_query, out,
        scratch=None)``, where ``scratch`` is a second buffer like ``out`` for temporaries.
        """
        x = self.check_input(x)
        if out is not None and hasattr(self, "features_into") and not records_grad(x, self):
            if out.shape != (*x.shape[:-1], self.num_features) or out.dtype != x.dtype or out.device != x.device:
                raise ValueError(f"out: expected a {x.dtype} buffer shaped {(*x.shape[:-1], self.num_features)}, "
                                 f"got {out.dtype} {tuple(out.shape)}")
            return self.features_into(x, is_query, out)
        if self.positional:
            return self.features(x, is_query, offset=offset, total=total)
        return self.features(x, is_query)

    def check_input(self, x) -> torch.Tensor:
        """x as a floating tensor shaped (..., N, d) for this map, or ValueError."""
        x = as_float_tensor(x, "x")
        if x.dim() < 2 or x.shape[-1] != self.head_dim:
            raise ValueError(
                f"x: expected shape (..., N, {self.head_dim}) for map {self.name!r}, got {tuple(x.shape)}"
            )
        return x

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, num_features={self.num_features}"


def records_grad(x: torch.Tensor, module: nn.Module | None = None) -> bool:
    """True when autograd is recording through ``x`` or ``module``'s parameters: in-place
    work and ``out=`` buffers are then off limits."""
    if not torch.is_grad_enabled():
        return False
    return x.requires_grad or (module is not None and any(p.requires_grad for p in module.parameters()))


def _softmax_scale(x: torch.Tensor) -> torch.Tensor:
    """x' = x / d^(1/4): then x'.y' = x.y / sqrt(d), the softmax logit."""
    return x / x.shape[-1] ** 0.25


class Identity(FeatureMap):
    """phi(x) = x'. Kernel k(q, k) = q.k / sqrt(d) = s exactly.

    Not a positive kernel: rows of the normalised map can sum to zero or below, where the
    map is ill-defined. ``explorer.attention.kernel_map`` flags those rows.
    """

    name = "identity"
    nonfinite_rows = True

    @property
    def num_features(self) -> int:
        return self.head_dim

    def features(self, x, is_query):
        return _softmax_scale(x)

    def features_into(self, x, is_query, out, scratch=None):
        return torch.mul(x, x.shape[-1] ** -0.25, out=out)


class Taylor1(FeatureMap):
    """phi(x) = [1, x']. Kernel k(q, k) = 1 + s exactly: exp(s) to first order.

    Negative where s < -1, so rows can be ill-defined as for ``identity``.
    """

    name = "taylor1"
    nonfinite_rows = True

    @property
    def num_features(self) -> int:
        return self.head_dim + 1

    def features(self, x, is_query):
        ones = torch.ones(*x.shape[:-1], 1, dtype=x.dtype, device=x.device)
        return torch.cat([ones, _softmax_scale(x)], dim=-1)


class EluPlusOne(FeatureMap):
    """phi(x) = elu(x) + 1 on the raw input (Katharopoulos et al. 2020), m = d.

    Kernel k(q, k) = (elu(q) + 1).(elu(k) + 1) exactly; positive, but not close to exp(s).
    """

    name = "elu1"
    nonfinite_rows = True

    @property
    def num_features(self) -> int:
        return self.head_dim

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

    name = "relu"

    @property
    def num_features(self) -> int:
        return self.head_dim

    def features(self, x, is_query):
        return torch.relu(x)

    def features_into(self, x, is_query, out, scratch=None):
        return torch.clamp(x, min=0.0, out=out)


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

    name = "favor_plus"

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0,
                 orthogonal: bool = True):
        super().__init__(head_dim)
        m = head_dim if num_features is None else check_positive_int(num_features, "num_features")
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

    name = "trig_rff"

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0,
                 orthogonal: bool = False):
        super().__init__(head_dim)
        m = 2 * head_dim if num_features is None else check_positive_int(num_features, "num_features")
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


class Taylor2(FeatureMap):
    """Second-order Taylor features (Based, Arora et al. 2024).

    Kernel k(q, k) = 1 + s + s^2 / 2 exactly, with x' = x / d^(1/4). Compressed form:
    [1, x', x'_i^2 / sqrt(2), x'_i x'_j (i < j)], dimension 1 + d + d(d+1)/2, since
    (q'.k')^2 / 2 = sum_i q'_i^2 k'_i^2 / 2 + sum_{i<j} q'_i q'_j k'_i k'_j.
    The kernel is always positive (1 + s + s^2/2 > 0), so every row is well defined.
    """

    name = "taylor2"

    def __init__(self, head_dim: int):
        super().__init__(head_dim)
        iu = torch.triu_indices(head_dim, head_dim, offset=1)
        self.register_buffer("upper_i", iu[0], persistent=False)
        self.register_buffer("upper_j", iu[1], persistent=False)

    @property
    def num_features(self) -> int:
        d = self.head_dim
        return 1 + d + d * (d + 1) // 2

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

    name = "cosformer"
    positional = True

    def __init__(self, head_dim: int, max_len: int | None = None, offset: int = 0):
        super().__init__(head_dim)
        self.max_len = None if max_len is None else check_positive_int(max_len, "max_len")
        self.offset = int(offset)

    @property
    def num_features(self) -> int:
        return 2 * self.head_dim

    def features(self, x, is_query, offset=0, total=None):
        n = x.shape[-2]
        total = self.max_len or total or n
        start = self.offset + offset
        pos = torch.arange(start, start + n, dtype=x.dtype, device=x.device)
        angle = (math.pi / (2 * total)) * pos
        r = torch.relu(x)
        return torch.cat([r * torch.cos(angle).unsqueeze(-1), r * torch.sin(angle).unsqueeze(-1)], dim=-1)


_REGISTRY: dict[str, tuple[type, frozenset]] = {}


def register(cls: type, options: tuple[str, ...] = ()) -> type:
    """Add a map class to the registry; ``options`` are the keyword arguments it accepts."""
    _REGISTRY[cls.name] = (cls, frozenset(options))
    return cls


register(Identity)
register(Taylor1)
register(EluPlusOne)
register(Relu)
register(FavorPlus, ("num_features", "seed", "orthogonal"))
register(TrigRFF, ("num_features", "seed", "orthogonal"))
register(Taylor2)
register(CosFormer, ("max_len", "offset"))


def names() -> list[str]:
    """Names of every registered feature map."""
    return list(_REGISTRY)


def create(name: str, head_dim: int, num_features: int | None = None, seed: int = 0, **options) -> FeatureMap:
    """Build the map ``name`` for inputs of dimension ``head_dim``.

    ``num_features`` and ``seed`` apply to maps that take them (random features); for the
    deterministic maps, whose dimension is fixed by ``head_dim``, a ``num_features`` that
    differs from that dimension is an error rather than silently ignored.
    """
    if name not in _REGISTRY:
        raise ValueError(f"name: unknown feature map {name!r}; known maps: {', '.join(names())}")
    head_dim = check_positive_int(head_dim, "head_dim")
    cls, accepted = _REGISTRY[name]
    unknown = set(options) - accepted
    if unknown:
        raise ValueError(f"options: map {name!r} does not take {sorted(unknown)}")
    kwargs = dict(options)
    if "seed" in accepted:
        kwargs["seed"] = seed
    if num_features is not None:
        num_features = check_positive_int(num_features, "num_features")
    if "num_features" in accepted:
        kwargs["num_features"] = num_features
    fmap = cls(head_dim, **kwargs)
    if num_features is not None and "num_features" not in accepted and num_features != fmap.num_features:
        raise ValueError(
            f"num_features: map {name!r} has a fixed feature count {fmap.num_features} for head_dim {head_dim}, got {num_features}"
        )
    return fmap


# The learned and hybrid maps live in their own modules; importing them registers them.
from . import hybrid, learned  # noqa: E402,F401
