"""RetNet as a mechanism: the kernel recurrence with one fixed decay per head (``gates``)."""

from __future__ import annotations

import torch

from ..linear.mechanism import KernelRecurrence
from .gates import retnet_log_decay
from . import STATE_KIND, WRITES


class RetNet(KernelRecurrence):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    params = required = ("log_decay",)

    def default_params(self, q, k, seed: int = 0) -> dict:
        """RetNet's own gamma for each of the H heads of (B, H, N, d) keys, (H, 1, 1)."""
        heads = k.shape[-3] if k.dim() >= 3 else 1
        return {"log_decay": retnet_log_decay(heads).to(k.dtype)}

    def gate_preset(self, n, m, *, log_gamma, strength, seed, head, dtype):
        """log gamma at every step, one value for all features: ``log_gamma`` if given, else
        RetNet's value for head ``head``."""
        if log_gamma is None:
            log_gamma = float(retnet_log_decay(head + 1)[head])
        return torch.full((n, 1), log_gamma, dtype=dtype)


MECHANISM = RetNet()
