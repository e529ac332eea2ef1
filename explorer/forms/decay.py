"""Forgetting: the decay applied to the recurrent state at each step, kept in log space.

With decay, S_t = exp(a_t) (.) S_{t-1} + phi(k_t) v_t^T, where a_t = log_decay_t <= 0 acts on
the key-feature rows of S. In map form the weight of key j for query i (j <= i) picks up
exp(sum_{t=j+1..i} a_t) = exp(B_i - B_j), with B the cumulative sum of a. Every exponent
the engine takes is such a difference and so is <= 0: nothing can overflow.

- none:  a = 0, the article's "never forgets".
- RetNet: a fixed per-head gamma_h = 1 - 2^(-5-h), a = log gamma_h.
- GLA:   data-dependent gates alpha_t = sigmoid(x_t W_g)^(1/tau), a = logsigmoid(x_t W_g) / tau.
- HGRN2: forget gates with a lower bound that rises with depth, f_t = lb + (1 - lb) sigmoid(x_t W_f),
         a = log f_t, and the input gate tied to 1 - f_t (the recurrence: ``explorer.forms.hgrn2``).
"""

from __future__ import annotations

import math

import torch

from ..checks import as_float_tensor, check_positive_int


def retnet_log_decay(num_heads: int) -> torch.Tensor:
    """log gamma_h for RetNet's fixed per-head decay gamma_h = 1 - 2^(-5-h), shaped (H, 1, 1).

    Broadcasts against q shaped (H, N, d): one decay per head, the same for every token
    and feature.
    """
    h = torch.arange(check_positive_int(num_heads, "num_heads"), dtype=torch.float64)
    return torch.log1p(-(2.0 ** (-5.0 - h))).to(torch.get_default_dtype()).view(-1, 1, 1)


def gamma_to_log_decay(gamma: float) -> float:
    """A scalar decay gamma in (0, 1] as log gamma, with a clear error outside that range."""
    gamma = float(gamma)
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma: decay must lie in (0, 1], got {gamma}")
    return math.log(gamma)


def gla_log_gates(x: torch.Tensor, gate_weight: torch.Tensor, tau: float = 16.0) -> torch.Tensor:
    """GLA gates in log space: log alpha_t = logsigmoid(x_t W_g) / tau, shaped (..., N, m).

    ``x`` is (..., N, d_in) and ``gate_weight`` is (d_in, m), one gate per key feature.
    logsigmoid keeps the value exact and <= 0 even when x W_g is very negative.
    """
    if tau <= 0:
        raise ValueError(f"tau: gate temperature must be positive, got {tau}")
    x = as_float_tensor(x, "x")
    gate_weight = as_float_tensor(gate_weight, "gate_weight").to(x.dtype)
    if gate_weight.dim() != 2 or gate_weight.shape[0] != x.shape[-1]:
        raise ValueError(f"gate_weight: expected shape ({x.shape[-1]}, m), got {tuple(gate_weight.shape)}")
    return torch.nn.functional.logsigmoid(x @ gate_weight) / tau


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


# ---------------------------------------------------------------------------------------
# HGRN2 ("HGRN2: Gated Linear RNNs with State Expansion", Qin et al., 2024)
# ---------------------------------------------------------------------------------------
#
# HGRN2's forget gate is f_t = lb + (1 - lb) sigmoid(x_t W_f), one per key feature, and
# its input gate is tied to it: the state is S_t = diag(f_t) S_{t-1} + (1 - f_t) v_t^T, GLA
# with the key 1 - f_t (the form is ``explorer.forms.hgrn2``). The lower bound lb keeps f
# away from 0, so a layer cannot forget faster than lb allows; it rises with depth (see
# ``hgrn2_layer_bounds``), so low layers forget fast and high layers keep long memories.


def hgrn2_log_forget(x, gate_weight, lower_bound) -> torch.Tensor:
    """log f_t = log(lb + (1 - lb) sigmoid(x_t W_f)), shaped (..., N, m), every value <= 0.

    ``x`` is (..., N, d_in), ``gate_weight`` (d_in, m) and ``lower_bound`` a number or a
    tensor broadcastable to (..., N, m) (one bound per feature, say), with values in [0, 1].
    Computed in log space, log f = logaddexp(log lb, log(1 - lb) + logsigmoid(x W_f)), so it
    stays exact where sigmoid underflows, at lb = 0 (log lb = -inf drops out) and at lb
    near 1 (log1p(-lb)).
    """
    x = as_float_tensor(x, "x")
    gate_weight = as_float_tensor(gate_weight, "gate_weight").to(x.dtype)
    if x.dim() < 2:
        raise ValueError(f"x: expected shape (..., N, d_in), got {tuple(x.shape)}")
    if gate_weight.dim() != 2 or gate_weight.shape[0] != x.shape[-1]:
        raise ValueError(f"gate_weight: expected shape ({x.shape[-1]}, m), got {tuple(gate_weight.shape)}")
    if isinstance(lower_bound, (int, float)) and not isinstance(lower_bound, bool):
        lb = torch.tensor(float(lower_bound), dtype=x.dtype)     # no float32 rounding on the way
    else:
        lb = as_float_tensor(lower_bound, "lower_bound").to(x.dtype)
    low, high = (float(t) for t in torch.aminmax(lb.detach())) if lb.numel() else (0.0, 0.0)
    if not (0.0 <= low and high <= 1.0):      # NaN fails both comparisons
        raise ValueError(f"lower_bound: must lie in [0, 1], got values from {low:.4g} to {high:.4g}")
    target = (*x.shape[:-1], gate_weight.shape[1])
    try:
        fits = torch.broadcast_shapes(lb.shape, target) == torch.Size(target)
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(f"lower_bound: shape {tuple(lb.shape)} does not broadcast to (..., N, m) = {target}")
    log_open = torch.log1p(-lb) + torch.nn.functional.logsigmoid(x @ gate_weight)
    log_f = torch.logaddexp(torch.log(lb), log_open)
    # f is a convex combination of 1 and sigmoid <= 1; rounding alone could push log f
    # a hair above 0.
    return log_f.clamp_max(0.0)


def hgrn2_layer_bounds(raw) -> torch.Tensor:
    """HGRN2's per-layer lower bounds of the forget gate, cumulative in depth.

    ``raw`` is (L, ...) learned numbers, one row per layer (a trailing dimension gives one
    bound per feature). With p = softmax(raw) over layers, layer l's bound is
    lb_l = p_1 + ... + p_l: layer 0 has no bound, every layer adds its learned share, and
    the top layer's bound 1 - p_0 stays below 1. With equal raw values lb_l = l / L.
    """
    raw = as_float_tensor(raw, "raw")
    if raw.dim() < 1 or raw.shape[0] < 1:
        raise ValueError(f"raw: expected shape (L, ...) with at least one layer, got {tuple(raw.shape)}")
    if not torch.isfinite(raw).all():
        raise ValueError("raw: contains NaN or infinite values")
    share = torch.softmax(raw, dim=0)
    return share.cumsum(0) - share[:1]
