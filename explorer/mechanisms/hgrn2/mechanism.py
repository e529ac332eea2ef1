"""HGRN2 as a mechanism. Its key is not free: it is the input gate 1 - f_t, so ``k`` enters
only through the default gates, f_t = lb + (1 - lb) sigmoid(k_t W_f) (``gates``). Its map
is the decayed kernel map of q and 1 - f, unnormalised: M_ij = sum_f q_if (1 - f_jf)
exp(B_if - B_jf) for j <= i, B the cumulative log forget gate."""

from __future__ import annotations

import math

import torch

from ..linear.map import weights_from_features
from ...text import Message
from ..recurrence import Recurrence, seeded_projection, unit
from .forms import _check_inputs, hgrn2, hgrn2_reference
from .gates import hgrn2_log_forget
from . import STATE_KIND, WRITES

LOWER_BOUND = 0.9       # an upper layer's bound: f_t >= 0.9, a memory of tens of tokens


class HGRN2(Recurrence):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    has_normaliser = False
    params = required = ("f_log",)
    per_feature = True
    reads = ("seed", "lower_bound")

    def default_params(self, q, k, seed: int = 0) -> dict:
        """Forget gates from the keys through a seeded W_f (d_k, d_k), bound ``LOWER_BOUND``."""
        w = seeded_projection(k.shape[-1], k.shape[-1], seed, salt=1)
        return {"f_log": hgrn2_log_forget(k.double(), w, LOWER_BOUND).to(k.dtype)}

    def map_inputs(self, q, k, settings, head=None, should_stop=None) -> tuple:
        """Unit queries, and forget gates from the keys through a seeded W_f with the
        drawer's lower bound (its key is the input gate 1 - f: no normaliser)."""
        q, k = q.double(), k.double()
        weight = seeded_projection(q.shape[-1], q.shape[-1], settings.seed, salt=1)
        return unit(q), k, {"f_log": hgrn2_log_forget(k, weight, float(settings.lower_bound))}

    def settings_note(self, settings, head=None) -> Message:
        return Message("maps.note_hgrn2", seed=settings.seed, lb=f"{settings.lower_bound:.3g}")

    def _map(self, q, k, **params) -> torch.Tensor:
        q, f_log, _ = _check_inputs(q, params["f_log"], q)
        return weights_from_features(q, torch.expm1(f_log).neg(), True, f_log)

    def _reference(self, q, k, v, **params) -> torch.Tensor:
        return hgrn2_reference(q, params["f_log"], v)

    def _output(self, q, k, v, method, **params) -> torch.Tensor:
        return hgrn2(q, params["f_log"], v, method=method)

    # The step view: the key is the input gate of x's own forget gate.

    def gate_weight(self, head_dim, seed):
        # W_f stands in for the learned forget-gate projection: seeded, scaled so that
        # x W_f has unit variance for unit-variance keys.
        gen = torch.Generator().manual_seed(int(seed) + 1)
        return torch.randn(head_dim, head_dim, generator=gen, dtype=torch.float64) / math.sqrt(head_dim)

    def state_keys(self, x, rule, is_query=False, offset=0, total=None):
        log_f = hgrn2_log_forget(x, rule.gate_weight.to(x.dtype), rule.lower_bound)
        return -torch.expm1(log_f), log_f                     # the key 1 - f, exact for f near 1


MECHANISM = HGRN2()
