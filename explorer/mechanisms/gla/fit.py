"""GLA's gates fitted on one head: the gate weight that brings causal kernel attention with a
given feature map closest to causal softmax (Adam on the mean causal row KL). The lecture's
roadmap and the maps tab's "fitted" gates both read it."""

from __future__ import annotations

import math

import torch

from ...core.threads import one_thread
from ..linear.map import causal_mask
from ..softmax.map import softmax_map
from .gates import TAU

GLA_FIT_STEPS = 80


def gla_gates(k, weight) -> torch.Tensor:
    """GLA's log gates for keys k (..., N, d) and a gate weight (d + 1, m) whose last row is
    a bias: log alpha_t = logsigmoid([k_t, 1] W) / tau, one gate per key feature, <= 0."""
    x = torch.cat([k, torch.ones_like(k[..., :1])], dim=-1)
    return torch.nn.functional.logsigmoid(x @ weight) / TAU


def fit_gla_gates(q, k, fmap, steps: int = GLA_FIT_STEPS, lr: float = 0.2) -> torch.Tensor:
    """Log gates (1, N, m) for causal kernel attention with ``fmap``, with GLA's gate weight
    fitted on this head: Adam on the mean causal row KL to causal softmax. The bias starts at
    8 (gates near 1, nearly no forgetting), so the fit starts from the map without decay,
    and the gates returned are those of the best step seen.

    The weights are formed here in one broadcast product (N is a sentence, so N x N x m is
    small); ``attention.kernel_map`` measures the result."""
    with torch.inference_mode(False), torch.enable_grad(), one_thread():
        q, k = q.detach().clone().double(), k.detach().clone().double()
        fq, fk = fmap(q, is_query=True).detach(), fmap(k).detach()             # (1, N, m)
        n = q.shape[-2]
        allowed = causal_mask(n)
        reference = softmax_map(q, k, causal=True)
        weight = torch.zeros(k.shape[-1] + 1, fq.shape[-1], dtype=torch.float64)
        weight[-1] = 8.0
        weight.requires_grad_(True)
        optimiser = torch.optim.Adam([weight], lr=lr)
        pairs = fq.unsqueeze(-2) * fk.unsqueeze(-3)                             # (1, N, N, m)
        best, best_loss = None, math.inf
        for _ in range(int(steps)):
            gates = gla_gates(k, weight)
            cum = gates.cumsum(-2)
            diff = (cum.unsqueeze(-2) - cum.unsqueeze(-3)).masked_fill(~allowed.unsqueeze(-1), -math.inf)
            w = (pairs * torch.exp(diff)).sum(-1)
            approx = w / w.sum(-1, keepdim=True)
            support = allowed & (reference > 0)
            terms = torch.where(support, reference * (torch.log(reference.clamp_min(1e-300))
                                                      - torch.log(approx.clamp_min(1e-300))), 0.0)
            loss = terms.sum(-1).mean()
            if loss.item() < best_loss:
                best_loss, best = loss.item(), gates.detach().clone()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        return best.to(torch.get_default_dtype())
