"""Input validation shared by the engine: every public function rejects bad input with a
ValueError that names the offending argument, and nothing is broadcast silently."""

from __future__ import annotations

import torch


def as_float_tensor(x, name: str) -> torch.Tensor:
    """Return ``x`` as a floating tensor, or raise ValueError naming ``name``."""
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(x)
        except Exception as exc:  # numbers, lists, numpy arrays all go through here
            raise ValueError(f"{name}: cannot be read as a tensor ({exc})") from None
    if not x.is_floating_point():
        x = x.to(torch.get_default_dtype())
    return x


def check_qkv(q, k, v=None, *, need_v: bool = False, finite: bool = True):
    """Validate query/key/(value) tensors shaped (..., N, d).

    q and k must share every dimension; v must share the leading dimensions and N with k.
    Empty sequences, zero head dimension and non-finite numbers are refused. With
    ``finite=False`` the caller takes over the finiteness check (``check_finite``), e.g. to
    fold it into a pass over the data it makes anyway.
    """
    q = as_float_tensor(q, "q")
    k = as_float_tensor(k, "k")
    for name, t in (("q", q), ("k", k)):
        if t.dim() < 2:
            raise ValueError(f"{name}: expected shape (..., N, d), got {tuple(t.shape)}")
        if t.shape[-2] == 0:
            raise ValueError(f"{name}: sequence length N must be at least 1, got 0")
        if t.shape[-1] == 0:
            raise ValueError(f"{name}: head dimension d must be at least 1, got 0")
    if q.shape != k.shape:
        raise ValueError(f"k: shape {tuple(k.shape)} does not match q's shape {tuple(q.shape)}")
    if q.dtype != k.dtype:
        raise ValueError(f"k: dtype {k.dtype} does not match q's dtype {q.dtype}")
    if finite:
        check_finite(q, "q")
        check_finite(k, "k")
    if v is None:
        if need_v:
            raise ValueError("v: values are required here")
        return q, k, None
    v = as_float_tensor(v, "v")
    if v.dim() != k.dim() or v.shape[:-1] != k.shape[:-1]:
        raise ValueError(
            f"v: shape {tuple(v.shape)} must match k's {tuple(k.shape)} in every dimension but the last"
        )
    if v.shape[-1] == 0:
        raise ValueError("v: value dimension must be at least 1, got 0")
    if v.dtype != q.dtype:
        raise ValueError(f"v: dtype {v.dtype} does not match q's dtype {q.dtype}")
    if finite:
        check_finite(v, "v")
    return q, k, v


def check_finite(x: torch.Tensor, name: str) -> None:
    # A finite sum proves every element finite at the cost of one reduction; only when the
    # sum is not finite (a NaN/inf, or a sum that overflowed) do we look element by element.
    if torch.isfinite(x.sum()):
        return
    if not torch.isfinite(x).all():
        bad = int((~torch.isfinite(x)).sum())
        raise ValueError(f"{name}: contains {bad} NaN or infinite value(s)")


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
        hasattr(value, "__index__")
    ):
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    value = int(value)
    if value <= 0:
        raise ValueError(f"{name}: must be a positive integer, got {value}")
    return value
