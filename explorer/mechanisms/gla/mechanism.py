"""GLA as a mechanism: the kernel recurrence with gates alpha_t = sigmoid(x_t W_g)^(1/tau),
one per key feature (``gates``)."""

from __future__ import annotations

from ..linear.mechanism import PAPER_SWITCHES, KernelRecurrence
import torch

from ... import stopping
from ...maps import create
from ...text import Message
from ..recurrence import seeded_projection
from .fit import GLA_FIT_STEPS, fit_gla_gates
from .gates import TAU, gla_log_gates, seeded_log_gates
from . import STATE_KIND, WRITES


class GLA(KernelRecurrence):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    params = ("log_decay", *PAPER_SWITCHES)
    required = ("log_decay",)
    per_feature = True
    reads = ("gates", "seed")
    GATES = ("seeded", "fitted")      # how the maps tab makes its gates

    def default_params(self, q, k, seed: int = 0) -> dict:
        """Gates from the keys themselves through a seeded W_g (d_k, d_k), (..., N, d_k)."""
        w = seeded_projection(k.shape[-1], k.shape[-1], seed)
        return {"log_decay": gla_log_gates(k.double(), w, tau=TAU).to(k.dtype)}

    def map_inputs(self, q, k, settings, head=None, should_stop=None) -> tuple:
        """elu+1 features (or, in the papers' form, q and k as given), with seeded gates
        (``default_params``) or gates fitted on each head's own queries and keys with elu+1
        features (``fit_gla_gates``, the lecture's fit)."""
        fq, fk, params = super().map_inputs(q, k, settings, head, should_stop)
        if settings.gates == "seeded":
            return fq, fk, params           # (in the papers' form, seeded from the keys as given)
        features = create(self.map_features, q.shape[-1])
        q, k = q.double(), k.double()
        heads = [(q, k)] if q.dim() == 2 else [(q[h], k[h]) for h in range(q.shape[0])]
        fitted = []
        for hq, hk in heads:
            stopping.check(should_stop)
            fitted.append(fit_gla_gates(hq.unsqueeze(0), hk.unsqueeze(0), features)[0].double())
        return fq, fk, {**params, "log_decay": fitted[0] if q.dim() == 2 else torch.stack(fitted)}

    def fit_steps(self, settings) -> int:
        return GLA_FIT_STEPS if settings.gates == "fitted" else 0

    def label_qualifiers(self, settings) -> tuple[str, ...]:
        return (f"maps.gates_{settings.gates}", *super().label_qualifiers(settings))

    def settings_note(self, settings, head=None) -> Message:
        return self.in_paper_form(Message(f"maps.note_gla_{settings.gates}", seed=settings.seed), settings)

    def gate_preset(self, n, m, *, log_gamma, strength, seed, head, dtype):
        return seeded_log_gates(n, m, m, strength=strength, seed=seed).to(dtype)


MECHANISM = GLA()
