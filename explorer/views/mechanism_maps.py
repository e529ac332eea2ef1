"""Decay, gates and the delta rule judged like a feature map: each registered mechanism's exact
N x N attention matrix (``Recurrence.attention_map``, with O = M V) beside softmax in the maps tab.

Each mechanism says what its map reads (``Recurrence.map_inputs``), so that its map is the one
its recurrence computes; today's:

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

from dataclasses import dataclass

import torch

from .. import mechanisms
from ..catalog import MAX_SEED, STATE_LOWER_BOUND_MAX
from ..mechanisms.gla.mechanism import GLA
from ..text import Joined, Message

GLA_GATES = GLA.GATES


def mechanism_maps() -> tuple[str, ...]:
    """The mechanisms the maps tab offers beside softmax, in the registry's order (softmax is
    the reference; "linear" is the elu+1 feature map the tab already has)."""
    return mechanisms.beside_softmax()


@dataclass(frozen=True)
class MechanismSettings:
    """The mechanisms' parameters as the maps tab's drawer sets them (a mechanism's ``reads``
    names those its map reads)."""

    gamma: float | None = None        # RetNet's decay; None: the head's own 1 - 2^(-5-h)
    gates: str = "seeded"             # GLA's gates: "seeded" or "fitted" on this head
    seed: int = 0                     # the seeded projections (W_g, W_f, beta's w_b, the forget gate)
    lower_bound: float = 0.9          # HGRN2's lower bound on the forget gate
    beta: float | None = None         # the delta rule's beta; None: seeded per token from the keys
    paper: bool = False               # the papers' form where a mechanism has one (RetNet, GLA, the
                                      # scalar gate): q and k as given, no normaliser, q scaled by d^-1/2

    def checked(self) -> "MechanismSettings":
        """The settings, or ValueError (a message) naming the one out of range."""
        if self.gamma is not None and not (isinstance(self.gamma, (int, float)) and 0 < self.gamma <= 1):
            raise ValueError(Message("maps.err_gamma", got=self.gamma))
        if self.gates not in GLA_GATES:
            raise ValueError(Message("maps.err_gates", got=str(self.gates)[:40], choices=", ".join(GLA_GATES)))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_SEED:
            raise ValueError(Message("maps.err_mechanism_seed", got=str(self.seed)[:40], top=f"{MAX_SEED:,}"))
        if not (isinstance(self.lower_bound, (int, float)) and 0 <= self.lower_bound <= STATE_LOWER_BOUND_MAX):
            raise ValueError(Message("maps.err_lower_bound", got=self.lower_bound, top=STATE_LOWER_BOUND_MAX))
        if self.beta is not None and not (isinstance(self.beta, (int, float)) and 0 < self.beta <= 1):
            raise ValueError(Message("maps.err_beta", got=self.beta))
        if not isinstance(self.paper, bool):
            raise ValueError(Message("maps.err_paper", got=str(self.paper)[:40]))
        return self


def _drawn(name: str):
    if name not in mechanism_maps():
        raise ValueError(f"mechanism: expected one of {', '.join(mechanism_maps())}, got {str(name)[:40]!r}")
    return mechanisms.get(name)


def mechanism_label(name: str, settings: MechanismSettings) -> Message:
    """What a person reads for a mechanism's map (a message the page says): the state tab's
    name, qualified where its settings say so (GLA's gates: seeded or fitted; the papers' form)."""
    mechanism = _drawn(name)
    label = Message(mechanism.label_key)
    for qualifier in mechanism.label_qualifiers(settings):
        label = Message("common.qualified", name=label, qualifier=Message(qualifier))
    return label


def cost_form(name: str) -> str:
    """How ``name``'s map is formed, as the cost model prices it (``cost.MECHANISM_FORMS``)."""
    return _drawn(name).cost_form


def mechanism_inputs(name: str, q: torch.Tensor, k: torch.Tensor, settings: MechanismSettings, head=None,
                     should_stop=None) -> tuple:
    """(queries, keys, params) that ``mechanisms.get(name).attention_map`` takes, in float64,
    for q, k (N, d) of head ``head`` (None: head 0) or (H, N, d) of every head."""
    return _drawn(name).map_inputs(q, k, settings, head, should_stop)


def mechanism_map(name: str, q, k, settings: MechanismSettings, head=None, should_stop=None) -> torch.Tensor:
    """The exact causal attention matrix of mechanism ``name`` on these queries and keys,
    float64 (..., N, N): zero above the diagonal, and its product with V is the output."""
    mq, mk, params = mechanism_inputs(name, q, k, settings, head, should_stop)
    return mechanisms.get(name).attention_map(mq, mk, **params).double()


def settings_note(names, settings: MechanismSettings, head=None) -> str:
    """One sentence per mechanism shown: what it read and which parameters it ran with."""
    return Joined([_drawn(name).settings_note(settings, head) for name in names], "maps.note_sep")
