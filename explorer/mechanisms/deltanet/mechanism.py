"""The delta rule as a mechanism (DeltaNet; Gated DeltaNet adds a forget gate per token).

Its map is the triangular inverse of the UT transform (``forms``' chunked form, over one
chunk as long as the sequence, starting from an empty state): with G the cumulative log
decay, A_ti = beta_t exp(G_t - G_i) k_t.k_i for i < t and P_ti = exp(G_t - G_i) q_t.k_i
for i <= t, the output is O = P (I + A)^-1 diag(beta) V, so M = P (I + A)^-1 diag(beta).
Formed in float64 by a unit lower-triangular solve."""

from __future__ import annotations

import torch

from ...text import Message
from ..recurrence import WRITES_UNIT, Recurrence, as_float64, seeded_projection, unit
from .forms import _check_inputs, delta_rule, delta_rule_reference, delta_step
from . import STATE_KIND, WRITES


class DeltaRule(Recurrence):
    has_normaliser = False
    writes = WRITES_UNIT
    erases = True
    reads = ("seed", "beta")

    def map_inputs(self, q, k, settings, head=None, should_stop=None) -> tuple:
        """Unit queries and keys (the delta rule's), its parameters seeded from the keys, and
        beta one fixed value where the drawer sets one."""
        qn, kn = unit(q.double()), unit(k.double())
        params = self.default_params(qn, kn, settings.seed)
        if settings.beta is not None:
            params["beta"] = torch.full_like(params["beta"], float(settings.beta))
        return qn, kn, as_float64(params)

    def settings_note(self, settings, head=None) -> Message:
        beta = (Message("maps.note_beta_seeded", seed=settings.seed) if settings.beta is None
                else Message("maps.note_beta_fixed", beta=f"{settings.beta:.3g}"))
        return Message(f"maps.note_{self.name}", beta=beta, seed=settings.seed)

    def default_params(self, q, k, seed: int = 0) -> dict:
        """beta_t = sigmoid(k_t . w_b) with a seeded w_b, (..., N), in (0, 1)."""
        w = seeded_projection(k.shape[-1], 1, seed, salt=2)
        return {"beta": torch.sigmoid(k.double() @ w)[..., 0].to(k.dtype)}

    def _map(self, q, k, **params) -> torch.Tensor:
        v = q[..., :1]                                           # only its shape is checked
        q, k, _, beta, log_decay = _check_inputs(q, k, v, params["beta"], params.get("log_decay"))
        q, k, beta = q.double(), k.double(), beta.double()
        n = q.shape[-2]
        lower = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        if log_decay is None:
            within = lower.double()
        else:
            cum = log_decay.double().cumsum(-1)
            within = torch.exp((cum.unsqueeze(-1) - cum.unsqueeze(-2)).masked_fill(~lower, float("-inf")))
        a = (beta.unsqueeze(-1) * (k @ k.transpose(-1, -2)) * within).tril(-1)
        p = (q @ k.transpose(-1, -2)) * within
        eye = torch.eye(n, dtype=torch.float64, device=q.device)
        t_beta = torch.linalg.solve_triangular(eye + a, torch.diag_embed(beta), upper=False, unitriangular=True)
        return (p @ t_beta).to(v.dtype)

    def _reference(self, q, k, v, **params) -> torch.Tensor:
        return delta_rule_reference(q, k, v, params["beta"], params.get("log_decay"))

    def _output(self, q, k, v, method, **params) -> torch.Tensor:
        return delta_rule(q, k, v, params["beta"], params.get("log_decay"), method=method)

    def step(self, state, key, v, gate, beta):
        log_a = 0.0 if gate is None else gate[..., 0].expand(key.shape[0])
        beta = torch.full((key.shape[0],), beta, dtype=key.dtype, device=key.device)
        state.s, erased, written = delta_step(state.s, key, v, beta, log_a)
        return erased, written


class DeltaNet(DeltaRule):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    params = required = ("beta",)


MECHANISM = DeltaNet()
