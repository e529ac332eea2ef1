"""GLA as a mechanism: the kernel recurrence with gates alpha_t = sigmoid(x_t W_g)^(1/tau),
one per key feature (``gates``)."""

from __future__ import annotations

from ..linear.mechanism import KernelRecurrence
from ..recurrence import seeded_projection
from .gates import TAU, gla_log_gates, seeded_log_gates
from . import STATE_KIND, WRITES


class GLA(KernelRecurrence):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    params = required = ("log_decay",)

    def default_params(self, q, k, seed: int = 0) -> dict:
        """Gates from the keys themselves through a seeded W_g (d_k, d_k), (..., N, d_k)."""
        w = seeded_projection(k.shape[-1], k.shape[-1], seed)
        return {"log_decay": gla_log_gates(k.double(), w, tau=TAU).to(k.dtype)}

    def gate_preset(self, n, m, *, log_gamma, strength, seed, head, dtype):
        return seeded_log_gates(n, m, m, strength=strength, seed=seed).to(dtype)


MECHANISM = GLA()
