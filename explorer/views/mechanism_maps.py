"""Decay, gates and the delta rule judged like a feature map: each registered mechanism's exact
N x N attention matrix (``Recurrence.attention_map``, with O = M V) beside softmax in the maps tab.

What each mechanism reads, so that its map is the one its recurrence computes:

- RetNet and GLA: elu+1 features of the queries and keys (a normalised kernel map), with
  RetNet's fixed decay gamma (the head's own 1 - 2^(-5-h), or the one asked for) or GLA's
  gates, one per feature: seeded (from the keys through a seeded W_g, as a model computes
  them from the token) or fitted on this head (Adam on the causal row KL, the lecture's fit);
- HGRN2: unit queries, and forget gates from the keys through a seeded W_f with a lower bound;
  its key is the input gate 1 - f; no normaliser;
- DeltaNet and Gated DeltaNet: unit queries and keys (the delta rule's), beta per token seeded
  from the keys or one fixed value, and Gated DeltaNet's forget gate seeded from the keys;
  no normaliser.

Every mechanism is causal attention: the maps are always causal and compared with causal
softmax, whatever the tab's Causal box says (the view says so when they differ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import mechanisms
from ..catalog import MAX_SEED, STATE_LOWER_BOUND_MAX
from ..text import say

# The mechanisms the maps tab offers beside softmax (softmax is the reference; "linear" is
# the elu+1 feature map the tab already has).
MECHANISM_MAPS = tuple(name for name in mechanisms.names() if name not in ("softmax", "linear"))
GLA_GATES = ("seeded", "fitted")
NORMALISED = ("retnet", "gla")            # a kernel map with a normaliser: rows sum to 1
PER_FEATURE = ("gla", "hgrn2")            # one decay per key feature: an N x N x d tensor of decays
FEATURES = "elu1"                         # the feature map RetNet and GLA read


@dataclass(frozen=True)
class MechanismSettings:
    """The mechanisms' parameters as the maps tab's drawer sets them."""

    gamma: float | None = None        # RetNet's decay; None: the head's own 1 - 2^(-5-h)
    gates: str = "seeded"             # GLA's gates: "seeded" or "fitted" on this head
    seed: int = 0                     # the seeded projections (W_g, W_f, beta's w_b, the forget gate)
    lower_bound: float = 0.9          # HGRN2's lower bound on the forget gate
    beta: float | None = None         # the delta rule's beta; None: seeded per token from the keys

    def checked(self, lang: str = "en") -> "MechanismSettings":
        """The settings, or ValueError in ``lang`` naming the one out of range."""
        if self.gamma is not None and not (isinstance(self.gamma, (int, float)) and 0 < self.gamma <= 1):
            raise ValueError(say("maps.err_gamma", lang, got=self.gamma))
        if self.gates not in GLA_GATES:
            raise ValueError(say("maps.err_gates", lang, got=str(self.gates)[:40], choices=", ".join(GLA_GATES)))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_SEED:
            raise ValueError(say("maps.err_mechanism_seed", lang, got=str(self.seed)[:40], top=f"{MAX_SEED:,}"))
        if not (isinstance(self.lower_bound, (int, float)) and 0 <= self.lower_bound <= STATE_LOWER_BOUND_MAX):
            raise ValueError(say("maps.err_lower_bound", lang, got=self.lower_bound, top=STATE_LOWER_BOUND_MAX))
        if self.beta is not None and not (isinstance(self.beta, (int, float)) and 0 < self.beta <= 1):
            raise ValueError(say("maps.err_beta", lang, got=self.beta))
        return self


def mechanism_label(name: str, settings: MechanismSettings) -> str:
    """The label of a mechanism's map (English, as catalogue labels are; ``map_name`` shows
    it in another language): the state tab's name, GLA's with how its gates were made."""
    if name not in MECHANISM_MAPS:
        raise ValueError(f"mechanism: expected one of {', '.join(MECHANISM_MAPS)}, got {str(name)[:40]!r}")
    label = say(f"state.kind.{name}", "en")
    if name == "gla":
        label = say("common.qualified", "en", name=label, qualifier=say(f"maps.gates_{settings.gates}", "en"))
    return label


def cost_form(name: str) -> str:
    """How ``name``'s map is formed, as the cost model prices it (``cost.MECHANISM_FORMS``)."""
    if mechanisms.get(name).erases:
        return "delta"
    return "per_feature" if name in PER_FEATURE else "per_token"


def head_gamma(head: int) -> float:
    """RetNet's decay of head ``head``: 1 - 2^(-5-h)."""
    return 1.0 - 2.0 ** (-5 - int(head))


def _unit(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.normalize(x, dim=-1)


def mechanism_inputs(name: str, q: torch.Tensor, k: torch.Tensor, settings: MechanismSettings, head=None,
                     should_stop=None) -> tuple:
    """(queries, keys, params) that ``mechanisms.get(name).attention_map`` takes, in float64,
    for q, k (N, d) of head ``head`` (None: head 0) or (H, N, d) of every head (each its
    own RetNet gamma and its own fitted gates)."""
    from ..maps import create
    from ..mechanisms.recurrence import seeded_projection

    q, k = q.double(), k.double()
    d = q.shape[-1]
    mechanism = mechanisms.get(name)
    if name in NORMALISED:
        features = create(FEATURES, d)
        fq, fk = features(q, is_query=True).double(), features(k).double()
        if name == "retnet":
            if settings.gamma is not None:
                log_decay = torch.tensor(math.log(settings.gamma), dtype=torch.float64).view(1, 1)
            elif q.dim() == 2:
                log_decay = torch.tensor(math.log(head_gamma(head or 0)), dtype=torch.float64).view(1, 1)
            else:
                log_decay = torch.log(torch.tensor([head_gamma(h) for h in range(q.shape[0])],
                                                   dtype=torch.float64)).view(-1, 1, 1)
            return fq, fk, {"log_decay": log_decay}
        if settings.gates == "seeded":
            return fq, fk, mechanism.default_params(fq, fk, settings.seed)
        from .. import stopping
        from ..mechanisms.gla.fit import fit_gla_gates
        heads = [(q, k)] if q.dim() == 2 else [(q[h], k[h]) for h in range(q.shape[0])]
        fitted = []
        for hq, hk in heads:
            stopping.check(should_stop)
            fitted.append(fit_gla_gates(hq.unsqueeze(0), hk.unsqueeze(0), features)[0].double())
        gates = fitted[0] if q.dim() == 2 else torch.stack(fitted)
        return fq, fk, {"log_decay": gates}
    if name == "hgrn2":
        from ..mechanisms.hgrn2.gates import hgrn2_log_forget
        weight = seeded_projection(d, d, settings.seed, salt=1)
        return _unit(q), k, {"f_log": hgrn2_log_forget(k, weight, float(settings.lower_bound))}
    qn, kn = _unit(q), _unit(k)
    params = mechanism.default_params(qn, kn, settings.seed)
    if settings.beta is not None:
        params["beta"] = torch.full_like(params["beta"], float(settings.beta))
    return qn, kn, {key: value.double() for key, value in params.items()}


def mechanism_map(name: str, q, k, settings: MechanismSettings, head=None, should_stop=None) -> torch.Tensor:
    """The exact causal attention matrix of mechanism ``name`` on these queries and keys,
    float64 (..., N, N): zero above the diagonal, and its product with V is the output."""
    mq, mk, params = mechanism_inputs(name, q, k, settings, head, should_stop)
    return mechanisms.get(name).attention_map(mq, mk, **params).double()


def settings_note(names, settings: MechanismSettings, head=None, lang: str = "en") -> str:
    """One sentence per mechanism shown: what it read and which parameters it ran with."""
    parts = []
    for name in names:
        if name == "retnet":
            gamma = settings.gamma if settings.gamma is not None else (head_gamma(head) if head is not None else None)
            parts.append(say("maps.note_retnet", lang, gamma=f"{gamma:.6g}") if gamma is not None
                         else say("maps.note_retnet_heads", lang))
        elif name == "gla":
            parts.append(say(f"maps.note_gla_{settings.gates}", lang, seed=settings.seed))
        elif name == "hgrn2":
            parts.append(say("maps.note_hgrn2", lang, seed=settings.seed, lb=f"{settings.lower_bound:.3g}"))
        else:
            beta = (say("maps.note_beta_seeded", lang, seed=settings.seed) if settings.beta is None
                    else say("maps.note_beta_fixed", lang, beta=f"{settings.beta:.3g}"))
            parts.append(say(f"maps.note_{name}", lang, beta=beta, seed=settings.seed))
    return say("maps.note_sep", lang).join(parts)
