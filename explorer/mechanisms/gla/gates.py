"""GLA's data-dependent gates alpha_t = sigmoid(x_t W_g)^(1/tau), kept in log space."""

from __future__ import annotations

import math

import torch

from ...checks import as_float_tensor


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


TAU = 16.0      # GLA's gate temperature


def seeded_log_gates(n: int, m: int, columns: int, *, strength: float = 1.0, seed: int = 0) -> torch.Tensor:
    """GLA-style gates standing in for a model's: log alpha_t = strength * logsigmoid(x_t W_g) / 16,
    with x (n, m) and W_g (m, columns) seeded Gaussians, in float64, shaped (n, columns).

    A gate that varies with t and between features, as GLA's does: strength 0 never forgets,
    larger values forget faster. The same seed gives the same gates, and the first rows do
    not depend on n (x is drawn row by row)."""
    gen = torch.Generator().manual_seed(int(seed))
    w = torch.randn(m, m, generator=gen, dtype=torch.float64) / math.sqrt(m)
    x = torch.stack([torch.randn(m, generator=gen, dtype=torch.float64) for _ in range(n)])
    gates = gla_log_gates(x, w[:, :columns], tau=TAU) * strength
    return gates.clamp(max=0.0)                 # -0.0 and round-off stay <= 0
