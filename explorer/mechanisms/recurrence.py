"""What every mechanism says about itself: ``Recurrence``.

A mechanism is causal attention over queries q, keys k (B, H, N, d_k) and values v
(B, H, N, d_v), written as an RNN where it has a fixed-size state:

    S_t = update(S_{t-1}, k_t, v_t, gates_t),    o_t = read(S_t, q_t).

Each one gives the same outputs four ways, and the tests hold them together:

- ``attention_map(q, k, **params)``: the exact N x N matrix M with O = M V;
- ``reference(q, k, v, **params)``: the update written out token by token, in float64;
- ``output(q, k, v, method="recurrent" | "chunked", **params)``: the fast forms.

Keys and queries are used as given: a caller that wants phi(k), or unit keys for the delta
rule, applies them first. ``default_params(q, k, seed)`` gives valid parameters for those
shapes (decays, gates, beta), drawn from seeded projections of the keys where a real model
computes them from the token.

For the state tab's step view a mechanism also says how a key is written (``writes``),
which gates the tab's presets give it (``gate_preset``), one step (``step``) and the
read-out (``read``), on ``explorer.mechanisms.linear.forms.RecurrentState``.

For the maps tab it says what its map reads from a head's queries and keys and from the
tab's drawer (``map_inputs``, ``reads``), how the cost model prices that map (``cost_form``,
with ``per_feature``), how long a fit takes (``fit_steps``) and what it ran with, as a
message (``settings_note``, the key ``maps.note_<name>``). No view switches on a name.
"""

from __future__ import annotations

import torch

from ..checks import check_qkv
from ..text import Message
from . import WRITES_FEATURES, WRITES_FORGET_GATE, WRITES_UNIT  # noqa: F401  (the values of ``writes``)

METHODS = ("recurrent", "chunked")


class Recurrence:
    """One mechanism. Subclasses set the facts and the forms; see the module docstring."""

    name: str = ""
    state_kind: str | None = None       # the state tab's id for the update; None: no fixed-size state
    has_normaliser: bool = False        # read phi(q) S / phi(q) z (True) or S^T q (False)
    params: tuple[str, ...] = ()        # the keyword parameters of output() and attention_map()
    required: tuple[str, ...] = ()      # those without which it is not this mechanism
    writes: str = WRITES_FEATURES
    erases: bool = False                # the delta rule: a step removes beta k (k^T S) before writing
    per_feature: bool = False           # one decay per key feature: its map forms an N x N x d_k tensor
    reads: tuple[str, ...] = ("seed",)  # the maps tab's drawer settings its map reads (MechanismSettings)

    def __repr__(self) -> str:
        return f"<mechanism {self.name}>"

    # ----------------------------------------------------------------- the outputs

    def default_params(self, q, k, seed: int = 0) -> dict:
        """Valid parameters for queries and keys shaped like ``q``, ``k``."""
        return {}

    def attention_map(self, q, k, **params) -> torch.Tensor:
        """The exact (..., N, N) matrix whose product with V is the output."""
        self._check_params(params)
        q, k, _ = check_qkv(q, k)
        return self._map(q, k, **params)

    def reference(self, q, k, v, **params) -> torch.Tensor:
        """The recurrence as written, one token at a time, in float64: (..., N, d_v)."""
        self._check_params(params)
        q, k, v = check_qkv(q, k, v, need_v=True)
        return self._reference(q, k, v, **params)

    def output(self, q, k, v, method: str = "recurrent", **params) -> torch.Tensor:
        """The output (..., N, d_v) by one of the fast forms, ``METHODS``."""
        if method not in METHODS:
            raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {str(method)[:40]!r}")
        self._check_params(params)
        q, k, v = check_qkv(q, k, v, need_v=True)
        return self._output(q, k, v, method, **params)

    def _check_params(self, params: dict) -> None:
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise ValueError(f"params: {self.name} takes {', '.join(self.params) or 'no parameters'}, "
                             f"got {', '.join(unknown)}")
        missing = [p for p in self.required if params.get(p) is None]
        if missing:
            raise ValueError(f"params: {self.name} needs {', '.join(missing)} (see default_params)")

    def _map(self, q, k, **params) -> torch.Tensor:
        raise NotImplementedError

    def _reference(self, q, k, v, **params) -> torch.Tensor:
        raise NotImplementedError

    def _output(self, q, k, v, method, **params) -> torch.Tensor:
        raise NotImplementedError

    # ----------------------------------------------------------------- the maps tab

    @property
    def cost_form(self) -> str:
        """How the cost model prices its map (``cost.MECHANISM_FORMS``)."""
        if self.erases:
            return "delta"
        return "per_feature" if self.per_feature else "per_token"

    def map_inputs(self, q, k, settings, head=None, should_stop=None) -> tuple:
        """(queries, keys, params), float64, that ``attention_map`` takes for one head's q, k
        (N, d) (``head`` its index, None: head 0) or every head's (H, N, d), with the maps
        tab's drawer ``settings`` (``views.mechanism_maps.MechanismSettings``). Here: q and
        k as given, parameters seeded from the keys."""
        q, k = q.double(), k.double()
        return q, k, as_float64(self.default_params(q, k, settings.seed))

    def fit_steps(self, settings) -> int:
        """Optimiser steps ``map_inputs`` takes per head with ``settings`` (the cost model's)."""
        return 0

    @property
    def label_key(self) -> str:
        """The key of its name's words (the state tab's label)."""
        return f"state.kind.{self.state_kind or self.name}"

    def label_qualifiers(self, settings) -> tuple[str, ...]:
        """The keys of the words that qualify its label with ``settings`` (GLA: how its gates
        were made; the papers' form), in order."""
        return ()

    def settings_note(self, settings, head=None) -> Message:
        """What its map read and ran with: ``maps.note_<name>`` with the settings it reads."""
        return Message(f"maps.note_{self.name}", **{name: getattr(settings, name) for name in self.reads})

    # ----------------------------------------------------------------- the step view

    def gate_preset(self, n: int, m: int, *, log_gamma, strength: float, seed: int, head: int, dtype):
        """The state tab's log gates for n tokens and m key features: None, (n, 1) or (n, m)."""
        return None

    def gate_weight(self, head_dim: int, seed: int):
        """A seeded projection the update computes its gates with (HGRN2's W_f), or None."""
        return None

    def state_keys(self, x, rule, is_query=False, offset=0, total=None):
        """(keys, log gates from the keys themselves or None) for tokens x (..., T, d).

        ``rule`` is the state tab's ``UpdateRule`` (its feature map, gate weight, bound)."""
        if self.writes == WRITES_UNIT:
            return torch.nn.functional.normalize(x, dim=-1), None
        return rule.feature_map(x, is_query=is_query, offset=offset, total=total), None

    def step(self, state, key, v, gate, beta):
        """Write one token per batch row into ``state``; an erasing update returns
        (erased, written), the others None."""
        state.step(key, v, gate)
        return None

    def read(self, state, query):
        """The read-out for queries (B, width) or (B, P, width)."""
        if self.has_normaliser:
            return state.read(query)
        if query.dim() == 2:
            return (query.unsqueeze(-2) @ state.s).squeeze(-2)
        return query @ state.s


def as_float64(params: dict) -> dict:
    """Every tensor of ``params`` in float64 (the maps are formed and judged in float64)."""
    return {key: value.double() if isinstance(value, torch.Tensor) else value for key, value in params.items()}


def unit(x: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit length (the delta rule's keys, HGRN2's and the delta rule's queries)."""
    return torch.nn.functional.normalize(x, dim=-1)


def seeded_projection(d_in: int, d_out: int, seed: int, salt: int = 0) -> torch.Tensor:
    """A (d_in, d_out) Gaussian projection scaled so that x W has unit variance for
    unit-variance x: the stand-in for a learned gate projection."""
    gen = torch.Generator().manual_seed(int(seed) * 7919 + salt)
    return torch.randn(d_in, d_out, generator=gen, dtype=torch.float64) / d_in ** 0.5
