"""The scalar gate as a mechanism: the kernel recurrence with one gate per token,
log alpha_t = logsigmoid(x_t w) / tau, shared by every feature of the state (GLA's gate
with one column instead of one per feature: an (N, 1) log decay)."""

from __future__ import annotations

from ..gla.gates import TAU, gla_log_gates, seeded_log_gates
from ..linear.mechanism import PAPER_SWITCHES, KernelRecurrence
from ..recurrence import seeded_projection
from . import STATE_KIND, WRITES


class ScalarGate(KernelRecurrence):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    params = ("log_decay", *PAPER_SWITCHES)
    required = ("log_decay",)

    def default_params(self, q, k, seed: int = 0) -> dict:
        """One gate per token from the keys through a seeded w (d_k, 1), (..., N, 1)."""
        w = seeded_projection(k.shape[-1], 1, seed, salt=4)
        return {"log_decay": gla_log_gates(k.double(), w, tau=TAU).to(k.dtype)}

    def gate_preset(self, n, m, *, log_gamma, strength, seed, head, dtype):
        """GLA's recipe with one column of W_g, (n, 1): one gate per token for every feature."""
        return seeded_log_gates(n, m, 1, strength=strength, seed=seed).to(dtype)


MECHANISM = ScalarGate()
