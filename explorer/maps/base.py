"""The base of every feature map, and the registry that names them.

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

Each class names its spec (``explorer.core.feature_maps``): its registry name, its feature
count for d and m, whether it is random and which keywords ``create`` accepts are read
from there, and the catalogue and the cost model read the same spec.
"""

from __future__ import annotations

import torch
from torch import nn

from ..checks import as_float_tensor, check_positive_int
from ..core.grad import records_grad
from ..core.feature_maps import SPECS, FeatureMapSpec  # noqa: F401  (SPECS: the classes name theirs from it)
from ..text import Message


class FeatureMap(nn.Module):
    """Base class: a map phi from (..., N, d) to (..., N, m).

    ``positional`` maps (cosFormer) depend on the token position, so the position of
    row n is ``offset + n`` and the total length M is ``max_len`` (default: N).

    ``nonfinite_rows`` is True for maps whose feature row of an input row with a NaN or
    infinite element always holds a NaN or infinite feature: the linear forms then find
    non-finite input in numbers they compute anyway (see ``explorer.mechanisms.linear.forms.noncausal``).
    """

    spec: FeatureMapSpec | None = None
    name = "base"
    positional = False
    nonfinite_rows = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.spec is not None:
            cls.name = cls.spec.name

    def __init__(self, head_dim: int):
        super().__init__()
        self.head_dim = check_positive_int(head_dim, "head_dim")

    @property
    def num_features(self) -> int:
        """The feature count of a map fixed by d; maps that take m count their own parameters."""
        if self.spec is None:
            raise NotImplementedError
        return self.spec.feature_count(self.head_dim)

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


def _softmax_scale(x: torch.Tensor) -> torch.Tensor:
    """x' = x / d^(1/4): then x'.y' = x.y / sqrt(d), the softmax logit."""
    return x / x.shape[-1] ** 0.25


_REGISTRY: dict[str, tuple[type, frozenset]] = {}


def register(cls: type) -> type:
    """Add a map class to the registry; the keyword arguments it accepts are its spec's options."""
    _REGISTRY[cls.name] = (cls, frozenset(cls.spec.options))
    return cls


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
        raise ValueError(Message("common.err_feature_map", name=repr(name), known=", ".join(names())))
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
