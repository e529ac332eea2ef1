"""HGRN2's forget gates, bounded below by a bound that rises with depth."""

from __future__ import annotations

import torch

from ...checks import as_float_tensor


# ---------------------------------------------------------------------------------------
# HGRN2 ("HGRN2: Gated Linear RNNs with State Expansion", Qin et al., 2024)
# ---------------------------------------------------------------------------------------
#
# HGRN2's forget gate is f_t = lb + (1 - lb) sigmoid(x_t W_f), one per key feature, and
# its input gate is tied to it: the state is S_t = diag(f_t) S_{t-1} + (1 - f_t) v_t^T, GLA
# with the key 1 - f_t (the form is ``explorer.mechanisms.hgrn2.forms``). The lower bound lb keeps f
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
