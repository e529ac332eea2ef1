"""Gated DeltaNet as a mechanism: DeltaNet's forms and map with ``log_decay`` (..., N), every
value <= 0, one forget gate per token shared by the whole state."""

from __future__ import annotations

from ..deltanet.mechanism import DeltaRule
from ..gla.gates import TAU, gla_log_gates, seeded_log_gates
from ..recurrence import seeded_projection
from . import STATE_KIND, WRITES


class GatedDeltaNet(DeltaRule):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    params = ("beta", "log_decay")
    required = ("beta", "log_decay")

    def default_params(self, q, k, seed: int = 0) -> dict:
        """DeltaNet's beta, and a GLA-style gate from the keys with one column, (..., N)."""
        w = seeded_projection(k.shape[-1], 1, seed, salt=3)
        gate = gla_log_gates(k.double(), w, tau=TAU)[..., 0]
        return {**super().default_params(q, k, seed), "log_decay": gate.to(k.dtype)}

    def gate_preset(self, n, m, *, log_gamma, strength, seed, head, dtype):
        """GLA's recipe with W_g's first column only, (n, 1): one forget gate per token."""
        return seeded_log_gates(n, m, 1, strength=strength, seed=seed).to(dtype)


MECHANISM = GatedDeltaNet()
