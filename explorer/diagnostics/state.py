"""Recurrent-state diagnostics: what the fixed-size memory of linear attention holds over time.

Causal linear attention is an RNN with state S_t = G_t (.) S_{t-1} + phi(k_t) v_t^T (m x d_v)
and normaliser z_t = G_t (.) z_{t-1} + phi(k_t). The article's argument about it, which
this module lets a lecturer show:

- without decay (G = 1) the state never forgets: ||S_t|| and ||z_t|| keep growing and
  every new pair is written on top of all old ones, so a stored value is recalled less
  and less cleanly as distractors pile up (``state_probes.recall_probe``);
- with decay (RetNet's fixed gamma, GLA's data-dependent gates) old content fades: the
  norms stay bounded and recent pairs are recalled cleanly, at the price of forgetting
  early ones faster;
- HGRN2 (Qin et al., "HGRN2: Gated Linear RNNs with State Expansion", 2024) writes with its
  input gate tied to the forget gate, S_t = diag(f_t) S_{t-1} + (1 - f_t) v_t^T, f_t bounded
  below by a bound that rises with the layer's depth;
- the delta rule (DeltaNet; Gated DeltaNet adds a forget gate) corrects the state instead of
  only adding to it: S_t = a_t (I - beta k_t k_t^T) S_{t-1} + beta k_t v_t^T erases what the
  state held under k_t before writing v_t there, so a stored pair is overwritten rather than
  buried under new ones (``state_probes.capacity_probe`` counts the pairs still recalled);
- the state is a fixed m x d_v matrix (``state_bytes``) whereas softmax keeps a KV cache
  that grows with t (``kv_cache_bytes``); its effective rank shows how much of that
  capacity is in use.

The updates and read-outs are the engine's: ``explorer.mechanisms.linear.forms.RecurrentState`` for the
additive and gated states, ``explorer.mechanisms.hgrn2.gates.hgrn2_log_forget`` for HGRN2's gates and
``explorer.mechanisms.deltanet.forms.delta_step`` for the delta rule; nothing here re-implements them.
Each update is a registered mechanism (``explorer.mechanisms``): it says how it writes a key,
which gates the presets give it, one step and its read-out. ``UpdateRule`` holds one with the
tab's parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import mechanisms
from ..checks import as_float_tensor, check_finite, check_positive_int
from ..mechanisms.hgrn2.mechanism import LOWER_BOUND as HGRN2_LOWER_BOUND
from ..mechanisms.linear.decay import prepare_log_decay
from ..mechanisms.linear.forms import RecurrentState
from ..mechanisms.recurrence import WRITES_FEATURES, WRITES_UNIT, Recurrence
from ..mechanisms.retnet.gates import gamma_to_log_decay

# Not a choice of the tab but the capacity panel's reference: the additive update (no decay)
# on the delta rule's own keys, L2-normalised, read S^T q without a normaliser. Beside the
# delta rule it shows what the correction alone changes.
UNIT_ADDITIVE = "unit_additive"


# ---------------------------------------------------------------------------------------
# State over time
# ---------------------------------------------------------------------------------------

@dataclass
class StateTrace:
    """Diagnostics of one head's state after each token t = 0..N-1.

    state_norm:      ||S_t||_F, (N,)
    normaliser_norm: ||z_t||_2, (N,)
    effective_rank:  exp(entropy of sigma / sum(sigma)) of S_t, (N,); 0 for a zero state
    states:          S_t stacked, (N, m, d_v), only with keep_states
    updates:         what step t writes, phi(k_t) v_t^T stacked, (N, m, d_v), only with keep_states
    erased:          what the delta rule's step t removes before the decay, beta k_t (k_t^T S_{t-1}), (N, m, d_v),
                     only with keep_states and a delta rule (``rule_trace``)

    normaliser_norm is None for an update without a normaliser (HGRN2, the delta rule).
    """

    state_norm: torch.Tensor
    normaliser_norm: torch.Tensor | None
    effective_rank: torch.Tensor
    states: torch.Tensor | None = None
    updates: torch.Tensor | None = None
    erased: torch.Tensor | None = None


def effective_rank(matrices) -> torch.Tensor:
    """Effective rank exp(H(p)), p = sigma / sum(sigma), of each matrix in (..., m, n).

    It counts the directions in use, weighted by their singular values: r for r equal
    singular values, 1 for a rank-one matrix, something in between when a few directions
    dominate. A zero matrix uses no direction and gets 0. Computed in float64 so that
    round-off singular values of a low-rank matrix barely move it.
    """
    x = as_float_tensor(matrices, "matrices")
    if x.dim() < 2:
        raise ValueError(f"matrices: expected shape (..., m, n), got {tuple(x.shape)}")
    sigma = torch.linalg.svdvals(x.double())
    total = sigma.sum(-1, keepdim=True)
    p = sigma / torch.where(total > 0, total, torch.ones_like(total))
    log_p = torch.log(torch.where(p > 0, p, torch.ones_like(p)))      # 0 log 0 = 0
    h = -(p * log_p).sum(-1)
    rank = torch.exp(h)
    return torch.where(total[..., 0] > 0, rank, torch.zeros_like(rank)).to(x.dtype)


def _check_sequence(k, v):
    k = as_float_tensor(k, "k")
    v = as_float_tensor(v, "v")
    if k.dim() != 2 or k.shape[0] == 0 or k.shape[1] == 0:
        raise ValueError(f"k: expected keys of one head shaped (N, d) with N, d >= 1, got {tuple(k.shape)}")
    if v.dim() != 2 or v.shape[0] != k.shape[0] or v.shape[1] == 0:
        raise ValueError(f"v: expected shape (N, d_v) with N = {k.shape[0]} as in k, got {tuple(v.shape)}")
    if v.dtype != k.dtype:
        raise ValueError(f"v: dtype {v.dtype} does not match k's dtype {k.dtype}")
    check_finite(k, "k")
    check_finite(v, "v")
    return k, v


def _check_map_dim(feature_map, head_dim: int) -> None:
    if getattr(feature_map, "head_dim", head_dim) != head_dim:
        raise ValueError(
            f"feature_map: built for head_dim {feature_map.head_dim}, but the keys have dimension {head_dim}"
        )


def state_trace(k, v, feature_map, log_decay=None, keep_states=False) -> StateTrace:
    """Step the recurrent state through one head's keys (N, d) and values (N, d_v).

    ``log_decay`` is anything ``explorer.mechanisms.linear.decay.prepare_log_decay`` accepts for (N, m): None,
    a float, or a tensor (N or 1, 1 or m), e.g. from ``decay_preset``. The states are
    recorded at every step (O(N m d_v) memory, which the batched SVD needs anyway);
    ``keep_states`` returns them with the per-step updates for the UI's heat maps.
    """
    k, v = _check_sequence(k, v)
    _check_map_dim(feature_map, k.shape[1])
    n, m = k.shape[0], feature_map.num_features
    decay = prepare_log_decay(log_decay, (), n, m, k.dtype, k.device)
    if decay is not None:
        decay = decay.expand(n, decay.shape[-1])
    return rule_trace(k, v, UpdateRule(mechanisms.get("linear").state_kind, feature_map, decay), keep_states)


# ---------------------------------------------------------------------------------------
# Decay presets
# ---------------------------------------------------------------------------------------

def decay_preset(kind, n, num_features, *, gamma=None, strength=1.0, seed=0, head=0):
    """A log-decay for a sequence of n tokens: None, (n, 1) or (n, num_features).

    Each mechanism's ``gate_preset`` says which: None for no decay, for HGRN2 (its gates
    depend on each token's own key, see ``UpdateRule``) and for plain DeltaNet; RetNet's
    log gamma at every step (gamma from ``gamma`` if given, else RetNet's value
    1 - 2^(-5-head) for head ``head``); GLA's seeded gates, one per key feature, and Gated
    DeltaNet's, one per token (``explorer.mechanisms.gla.gates.seeded_log_gates``).

    ``gamma`` applies to RetNet and ``strength`` to the gated updates; both are validated
    whatever the kind.
    """
    if kind not in mechanisms.state_kinds():
        raise ValueError(f"kind: expected one of {', '.join(mechanisms.state_kinds())}, got {kind!r}")
    return _preset(mechanisms.for_state_kind(kind), n, num_features, gamma=gamma, strength=strength, seed=seed,
                   head=head)


def _preset(mechanism, n, num_features, *, gamma, strength, seed, head):
    """``mechanism``'s gates for the preset's parameters, each validated whatever the kind."""
    n = check_positive_int(n, "n")
    m = check_positive_int(num_features, "num_features")
    log_gamma = None if gamma is None else gamma_to_log_decay(gamma)
    strength = float(strength)
    if not (math.isfinite(strength) and strength >= 0):
        raise ValueError(f"strength: must be a finite number >= 0, got {strength}")
    if isinstance(head, bool) or not isinstance(head, int) or head < 0:
        raise ValueError(f"head: expected a head index >= 0, got {head!r}")
    return mechanism.gate_preset(n, m, log_gamma=log_gamma, strength=strength, seed=seed, head=head,
                                 dtype=torch.get_default_dtype())


# ---------------------------------------------------------------------------------------
# Update rules: what each kind writes for a key, how it forgets, how it reads
# ---------------------------------------------------------------------------------------

DELTA_BETA = 1.0            # the delta rule's write strength: 1 overwrites the value under k_t fully


def check_fraction(value, name: str, *, low: float, high: float, low_open: bool, high_open: bool) -> float:
    """``value`` as a float inside the interval from low to high (open ends as given), or a
    ValueError naming ``name`` and the interval."""
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}: expected a number in {interval}, got {str(value)[:40]!r}") from None
    inside = (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
    if not (math.isfinite(x) and inside):
        raise ValueError(f"{name}: must lie in {interval}, got {x:g}")
    return x


@dataclass
class UpdateRule:
    """One state update of the state tab, on keys x of one head (..., d).

    The mechanism behind ``kind`` (``explorer.mechanisms.for_state_kind``) decides: the
    additive updates (no decay, RetNet, GLA) write phi(x), decay by the preset's gates and
    read phi(q) S / phi(q) z; HGRN2 writes the input gate 1 - f(x), tied to the forget gate
    f(x) = lb + (1 - lb) sigmoid(x W_f) that also decays the state's rows, and reads S^T q;
    the delta rule (plain and gated) writes x / ||x|| (DeltaNet L2-normalises q and k),
    corrects the state with strength beta and reads S^T q. Neither HGRN2 nor the delta rule
    has a normaliser z. ``UNIT_ADDITIVE``: the key x / ||x|| added as it is, read S^T q.
    """

    kind: str
    feature_map: object = None              # phi, additive kinds only
    log_decay: torch.Tensor | None = None   # per-position log gates (T, 1 or m)
    gate_weight: torch.Tensor | None = None  # HGRN2's W_f, (d, d)
    lower_bound: float = 0.0
    beta: float = DELTA_BETA

    @property
    def mechanism(self) -> Recurrence:
        return _UNIT if self.kind == UNIT_ADDITIVE else mechanisms.for_state_kind(self.kind)

    @property
    def has_normaliser(self) -> bool:
        return self.mechanism.has_normaliser

    def keys(self, x, is_query=False, offset=0, total=None):
        """What the state stores under key x (and reads with, for a query x): (..., width)."""
        return self.write(x, is_query=is_query, offset=offset, total=total)[0]

    def write(self, x, is_query=False, offset=0, total=None):
        """(keys, log gates) for tokens x (..., T, d) at positions offset..offset+T-1 of a
        stream of ``total``: keys (..., T, width) and gates (..., T, 1 or width) or None.
        One call per stream, so HGRN2's gates are computed once, not once per step."""
        keys, own_gates = self.mechanism.state_keys(x, self, is_query=is_query, offset=offset, total=total)
        if own_gates is not None:
            return keys, own_gates
        if self.log_decay is None:
            return keys, None
        return keys, self.log_decay[offset:offset + x.shape[-2]].to(x.dtype)

    def empty(self, batch: int, width: int, dv: int, dtype, device=None) -> RecurrentState:
        return RecurrentState.empty(batch, width, dv, dtype, device)

    def step(self, state: RecurrentState, key, v, gate):
        """Write one token per batch row; the delta rule returns (erased, written), the others None."""
        return self.mechanism.step(state, key, v, gate, self.beta)

    def read(self, state: RecurrentState, query):
        """The read-out for queries (B, width) or (B, P, width)."""
        return self.mechanism.read(state, query)


class _UnitAdditive(Recurrence):
    """The capacity panel's reference (``UNIT_ADDITIVE``): unit keys added, read S^T q."""

    name = state_kind = UNIT_ADDITIVE
    has_normaliser = False
    writes = WRITES_UNIT


_UNIT = _UnitAdditive()


def make_rule(kind, feature_map, head_dim, total, *, gamma=None, strength=1.0, lower_bound=HGRN2_LOWER_BOUND,
              beta=DELTA_BETA, seed=0, head=0) -> UpdateRule:
    """The update rule of ``kind`` for keys of dimension ``head_dim`` over ``total`` steps.

    The additive kinds need ``feature_map``; the others ignore it. Every parameter is
    validated whatever the kind, so a bad value is refused even where it would not be used.
    """
    if kind not in mechanisms.state_kinds() and kind != UNIT_ADDITIVE:
        raise ValueError(f"kind: expected one of {', '.join(mechanisms.state_kinds())}, got {kind!r}")
    mechanism = _UNIT if kind == UNIT_ADDITIVE else mechanisms.for_state_kind(kind)
    head_dim = check_positive_int(head_dim, "head_dim")
    lower_bound = check_fraction(lower_bound, "lower_bound", low=0.0, high=1.0, low_open=False, high_open=True)
    beta = check_fraction(beta, "beta", low=0.0, high=1.0, low_open=True, high_open=False)
    adds_features = mechanism.writes == WRITES_FEATURES
    if adds_features:
        if feature_map is None:
            raise ValueError(f"feature_map: the update {kind!r} adds phi(k) v^T and needs a feature map phi")
        _check_map_dim(feature_map, head_dim)
        width = feature_map.num_features
    else:
        width = head_dim
    log_decay = _preset(mechanism, total, width, gamma=gamma, strength=strength, seed=seed, head=head)
    return UpdateRule(kind, feature_map if adds_features else None, log_decay, mechanism.gate_weight(head_dim, seed),
                      lower_bound, beta)


def rule_trace(k, v, rule: UpdateRule, keep_states=False) -> StateTrace:
    """Step ``rule``'s state through one head's keys (N, d) and values (N, d_v).

    As ``state_trace``; without a normaliser (HGRN2, the delta rule) ``normaliser_norm`` is
    None, and with ``keep_states`` the delta rule's erased part of each step is kept too.
    """
    k, v = _check_sequence(k, v)
    n = k.shape[0]
    keys, gates = rule.write(k)
    width = keys.shape[-1]
    state = rule.empty(1, width, v.shape[1], k.dtype, k.device)
    states = torch.empty(n, width, v.shape[1], dtype=k.dtype, device=k.device)
    normalisers = torch.empty(n, width, dtype=k.dtype, device=k.device)
    erases = rule.mechanism.erases
    erased = torch.empty_like(states) if keep_states and erases else None
    for t in range(n):
        out = rule.step(state, keys[t:t + 1], v[t:t + 1], None if gates is None else gates[t:t + 1])
        states[t], normalisers[t] = state.s[0], state.z[0]
        if erased is not None:
            erased[t] = out[0][0]
    if keep_states and erases:
        updates = rule.beta * keys.unsqueeze(-1) * v.unsqueeze(-2)          # beta k_t v_t^T, written
    elif keep_states:
        updates = keys.unsqueeze(-1) * v.unsqueeze(-2)
    else:
        updates = None
    return StateTrace(
        state_norm=torch.linalg.matrix_norm(states),
        normaliser_norm=torch.linalg.vector_norm(normalisers, dim=-1) if rule.has_normaliser else None,
        effective_rank=effective_rank(states),
        states=states if keep_states else None,
        updates=updates,
        erased=erased,
    )


# ---------------------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------------------

def _count(value, name: str, allow_zero: bool = False) -> int:
    if allow_zero and value == 0 and not isinstance(value, bool):
        return 0
    return check_positive_int(value, name)


def kv_cache_bytes(t, head_dim, value_dim=None, layers=1, heads=1, bytes_per=4) -> int:
    """Softmax attention's KV cache after t tokens: K (t x d) and V (t x d_v) per head and
    layer. It grows linearly with t; that growth is what linear attention removes."""
    t = _count(t, "t", allow_zero=True)
    d = _count(head_dim, "head_dim")
    dv = d if value_dim is None else _count(value_dim, "value_dim")
    return t * (d + dv) * _count(layers, "layers") * _count(heads, "heads") * _count(bytes_per, "bytes_per")


def state_bytes(feature_dim, value_dim, layers=1, heads=1, bytes_per=4) -> int:
    """Linear attention's recurrent state: S (m x d_v) plus z (m) per head and layer,
    the same at every t."""
    m = _count(feature_dim, "feature_dim")
    dv = _count(value_dim, "value_dim")
    return (m * dv + m) * _count(layers, "layers") * _count(heads, "heads") * _count(bytes_per, "bytes_per")
