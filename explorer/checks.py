"""Input validation shared by the engine: every public function rejects bad input with a
ValueError that names the offending argument, and nothing is broadcast silently."""

from __future__ import annotations

import torch

from .text import Message


def as_float_tensor(x, name: str) -> torch.Tensor:
    """Return ``x`` as a floating tensor, or raise ValueError naming ``name``."""
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(x)
        except Exception as exc:  # numbers, lists, numpy arrays all go through here
            raise ValueError(Message("common.err_not_tensor", name=name, kind=type(exc).__name__)) from None
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
            raise ValueError(Message("common.err_qk_rank", name=name, shape=str(tuple(t.shape))))
        if t.shape[-2] == 0:
            raise ValueError(Message("common.err_n_zero", name=name))
        if t.shape[-1] == 0:
            raise ValueError(Message("common.err_d_zero", name=name))
    if q.shape != k.shape:
        raise ValueError(Message("common.err_k_shape", k=str(tuple(k.shape)), q=str(tuple(q.shape))))
    if q.dtype != k.dtype:
        raise ValueError(Message("common.err_k_dtype", k=str(k.dtype), q=str(q.dtype)))
    if finite:
        check_finite(q, "q")
        check_finite(k, "k")
    if v is None:
        if need_v:
            raise ValueError(Message("common.err_v_required"))
        return q, k, None
    v = as_float_tensor(v, "v")
    if v.dim() != k.dim() or v.shape[:-1] != k.shape[:-1]:
        raise ValueError(Message("common.err_v_shape", v=str(tuple(v.shape)), k=str(tuple(k.shape))))
    if v.shape[-1] == 0:
        raise ValueError(Message("common.err_v_zero"))
    if v.dtype != q.dtype:
        raise ValueError(Message("common.err_v_dtype", v=str(v.dtype), q=str(q.dtype)))
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
        raise ValueError(Message("common.err_not_finite", name=name, count=bad))


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
        hasattr(value, "__index__")
    ):
        raise ValueError(Message("common.err_positive_int", name=name, value=repr(value)))
    value = int(value)
    if value <= 0:
        raise ValueError(Message("common.err_positive", name=name, value=value))
    return value
