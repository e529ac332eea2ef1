"""RetNet as a mechanism: the kernel recurrence with one fixed decay per head (``gates``)."""

from __future__ import annotations

import math

import torch

from ..linear.mechanism import PAPER_SWITCHES, KernelRecurrence
from ...text import Message
from .gates import head_gamma, retnet_log_decay
from . import STATE_KIND, WRITES


class RetNet(KernelRecurrence):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    params = ("log_decay", *PAPER_SWITCHES)
    required = ("log_decay",)
    reads = ("gamma",)

    def default_params(self, q, k, seed: int = 0) -> dict:
        """RetNet's own gamma for each of the H heads of (B, H, N, d) keys, (H, 1, 1)."""
        heads = k.shape[-3] if k.dim() >= 3 else 1
        return {"log_decay": retnet_log_decay(heads).to(k.dtype)}

    def decay_params(self, fq, fk, settings, head, should_stop, features) -> dict:
        """The drawer's gamma, or each head's own: (1, 1) for one, (H, 1, 1) for every head."""
        if settings.gamma is not None or fq.dim() == 2:
            gamma = settings.gamma if settings.gamma is not None else head_gamma(head or 0)
            return {"log_decay": torch.tensor(math.log(gamma), dtype=torch.float64).view(1, 1)}
        gammas = torch.tensor([head_gamma(h) for h in range(fq.shape[0])], dtype=torch.float64)
        return {"log_decay": torch.log(gammas).view(-1, 1, 1)}

    def settings_note(self, settings, head=None) -> Message:
        gamma = settings.gamma if settings.gamma is not None else (head_gamma(head) if head is not None else None)
        note = Message("maps.note_retnet_heads") if gamma is None else Message("maps.note_retnet", gamma=f"{gamma:.6g}")
        return self.in_paper_form(note, settings)

    def gate_preset(self, n, m, *, log_gamma, strength, seed, head, dtype):
        """log gamma at every step, one value for all features: ``log_gamma`` if given, else
        RetNet's value for head ``head``."""
        if log_gamma is None:
            log_gamma = float(retnet_log_decay(head + 1)[head])
        return torch.full((n, 1), log_gamma, dtype=dtype)


MECHANISM = RetNet()
