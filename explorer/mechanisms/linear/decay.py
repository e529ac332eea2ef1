"""Forgetting: the decay applied to the recurrent state at each step, kept in log space.

With decay, S_t = exp(a_t) (.) S_{t-1} + phi(k_t) v_t^T, where a_t = log_decay_t <= 0 acts on
the key-feature rows of S. In map form the weight of key j for query i (j <= i) picks up
exp(sum_{t=j+1..i} a_t) = exp(B_i - B_j), with B the cumulative sum of a. Every exponent
the engine takes is such a difference and so is <= 0: nothing can overflow.

- none:  a = 0, the article's "never forgets".
- RetNet: a fixed per-head gamma_h = 1 - 2^(-5-h), a = log gamma_h.
- GLA:   data-dependent gates alpha_t = sigmoid(x_t W_g)^(1/tau), a = logsigmoid(x_t W_g) / tau.
- HGRN2: forget gates with a lower bound that rises with depth, f_t = lb + (1 - lb) sigmoid(x_t W_f),
         a = log f_t, and the input gate tied to 1 - f_t (the recurrence: ``explorer.mechanisms.hgrn2``).
"""

from __future__ import annotations

import math

import torch

from ...checks import as_float_tensor


def prepare_log_decay(log_decay, batch_shape: tuple, n: int, m: int, dtype, device) -> torch.Tensor | None:
    """Validate ``log_decay`` and return it as a tensor broadcastable to (*batch, N, m).

    Accepts None (no decay), a float, or a tensor broadcastable to (..., N, m). Values must
    be finite and <= 0. The result keeps size-1 dimensions (so a per-head gamma stays cheap)
    but always has the full rank of (*batch, N, m).
    """
    if log_decay is None:
        return None
    target = (*batch_shape, n, m)
    if isinstance(log_decay, (int, float)) and not isinstance(log_decay, bool):
        t = torch.tensor(float(log_decay), dtype=dtype, device=device)
    else:
        t = as_float_tensor(log_decay, "log_decay").to(dtype=dtype, device=device)
    # One pass: NaN propagates into both extremes, and -inf / +inf show up in them.
    low, high = (float(x) for x in torch.aminmax(t.detach())) if t.numel() else (0.0, 0.0)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("log_decay: contains NaN or infinite values; use a large negative number for a full reset")
    if high > 0:
        raise ValueError(f"log_decay: the log of a decay must be <= 0, got a maximum of {high:.4g}")
    if t.dim() > len(target):
        raise ValueError(f"log_decay: shape {tuple(t.shape)} has more dimensions than (..., N, m) = {target}")
    try:
        full = torch.broadcast_shapes(t.shape, target)
    except RuntimeError:
        full = None
    if full != torch.Size(target):
        raise ValueError(f"log_decay: shape {tuple(t.shape)} does not broadcast to (..., N, m) = {target}")
    return t.reshape((1,) * (len(target) - t.dim()) + tuple(t.shape))


def is_feature_dependent(log_decay: torch.Tensor) -> bool:
    """True when the decay differs between key features (GLA), False for one decay per step."""
    return log_decay.shape[-1] != 1
