"""Recurrent-state diagnostics: what the fixed-size memory of linear attention holds over time.

Causal linear attention is an RNN with state S_t = G_t (.) S_{t-1} + phi(k_t) v_t^T (m x d_v)
and normaliser z_t = G_t (.) z_{t-1} + phi(k_t). The article's argument about it, which
this module lets a lecturer show:

- without decay (G = 1) the state never forgets: ||S_t|| and ||z_t|| keep growing and
  every new pair is written on top of all old ones, so a stored value is recalled less
  and less cleanly as distractors pile up (``recall_probe``);
- with decay (RetNet's fixed gamma, GLA's data-dependent gates) old content fades: the
  norms stay bounded and recent pairs are recalled cleanly, at the price of forgetting
  early ones faster;
- HGRN2 (Qin et al., "HGRN2: Gated Linear RNNs with State Expansion", 2024) writes with its
  input gate tied to the forget gate, S_t = diag(f_t) S_{t-1} + (1 - f_t) v_t^T, f_t bounded
  below by a bound that rises with the layer's depth;
- the delta rule (DeltaNet; Gated DeltaNet adds a forget gate) corrects the state instead of
  only adding to it: S_t = a_t (I - beta k_t k_t^T) S_{t-1} + beta k_t v_t^T erases what the
  state held under k_t before writing v_t there, so a stored pair is overwritten rather than
  buried under new ones (``capacity_probe`` counts the pairs still recalled);
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
POSITIONS = ("early", "recent")
RECALL_THRESHOLD = 0.5                                # a pair counts as recalled above this cosine


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
# Associative recall
# ---------------------------------------------------------------------------------------

@dataclass
class RecallCurve:
    """Recall quality against lag: cosine(retrieved value, stored value), mean over trials.

    lags:       (T,) the lags probed
    cosine:     (T,) mean cosine over the trials whose read-out was finite
    cosine_std: (T,) standard deviation over those trials
    trials:     (T,) how many trials were finite (all of them for a positive map)
    position:   "early" or "recent"; kind: the decay preset used
    """

    lags: torch.Tensor
    cosine: torch.Tensor
    cosine_std: torch.Tensor
    trials: torch.Tensor
    position: str = "early"
    kind: str = "none"


def _check_lags(lags, name: str = "lags") -> list[int]:
    if isinstance(lags, int) and not isinstance(lags, bool):
        lags = [lags]
    try:
        values = list(lags)
    except TypeError:
        raise ValueError(f"{name}: expected a list of integers >= 0, got {str(lags)[:40]!r}") from None
    if not values:
        raise ValueError(f"{name}: give at least one value")
    out = []
    for lag in values:
        if isinstance(lag, torch.Tensor) and lag.numel() == 1:
            lag = lag.item()
        is_integer = hasattr(lag, "__index__") and not isinstance(lag, bool)
        if not is_integer or int(lag) < 0:
            raise ValueError(f"{name}: expected integers >= 0, got {str(lag)[:40]!r}")
        out.append(int(lag))
    return out


def recall_probe(feature_map, head_dim, lags, log_decay_kind="none", *, gamma=None, strength=1.0,
                 lower_bound=HGRN2_LOWER_BOUND, beta=DELTA_BETA, num_distractors=None, seed=0, value_dim=None,
                 position="early", trials=16, dtype=None) -> RecallCurve:
    """Associative recall from the recurrent state, as a function of lag.

    Each trial writes random Gaussian (key, value) pairs into the state: one target pair
    and some distractors. Then it queries with the target key, reads the state (for the
    additive kinds phi(q) S / phi(q) z, the causal linear-attention output right after the
    last write; see ``UpdateRule``) and scores cosine(retrieved, target value). Trials are
    independent draws, run as one batch; the same distractor stream serves every lag, so
    the curve is not jittered by redraws, and one pass over it serves every lag (dense lag
    lists stay cheap).

    position="early" (the target is old): the target is written at t = 0 and ``lag``
    distractors follow. Without decay the curve falls as the distractors pile up: each adds
    its value to the read-out with a weight phi(q).phi(k_j) next to the target's, and the
    noise swamps the signal. With decay it falls *faster*: the target's own weight shrinks
    as gamma^lag, so the early key is forgotten. The delta rule forgets it too, more
    gently: each later write erases the part of it that lies along the new key.

    position="recent" (the target is new): ``lag`` distractors come first and the target
    is written last. Without decay it is just as swamped as an early target (a state
    without decay does not know order). With decay the old distractors have faded, so
    recall stays high at large lag: decay trades old memories for clean recent ones. The
    delta rule with beta = 1 recalls the last pair exactly: its write first erases what the
    state held under that key.

    num_distractors fixes the load instead: every trial writes that many distractors and
    the lag is the target's age, i.e. the target sits ``lag`` steps before the end with
    the other distractors before it (lag <= num_distractors). Without decay such a curve is
    flat (only the load matters, not the age); with decay it falls with age. Only
    position="early" is meaningful there.

    Gates are those of ``make_rule`` (``gamma``, ``strength``, ``lower_bound``, ``beta``,
    ``seed``); the GLA and Gated DeltaNet gates are one seeded sequence shared by all
    trials. ``dtype`` defaults to torch's default dtype.
    """
    head_dim = check_positive_int(head_dim, "head_dim")
    dv = head_dim if value_dim is None else check_positive_int(value_dim, "value_dim")
    lag_list = _check_lags(lags)
    trials = check_positive_int(trials, "trials")
    if position not in POSITIONS:
        raise ValueError(f"position: expected one of {', '.join(POSITIONS)}, got {position!r}")
    if log_decay_kind not in mechanisms.state_kinds():
        raise ValueError(f"log_decay_kind: expected one of {', '.join(mechanisms.state_kinds())}, got {log_decay_kind!r}")
    if num_distractors is not None:
        num_distractors = _count(num_distractors, "num_distractors", allow_zero=True)
        if position != "early":
            raise ValueError("position: with num_distractors set the lag is the target's age; use position='early'")
        if max(lag_list) > num_distractors:
            raise ValueError(f"lags: a lag cannot exceed num_distractors={num_distractors}, got {max(lag_list)}")
    total = (num_distractors if num_distractors is not None else max(lag_list)) + 1
    rule = make_rule(log_decay_kind, feature_map, head_dim, total, gamma=gamma, strength=strength,
                     lower_bound=lower_bound, beta=beta, seed=seed)

    dtype = dtype or torch.get_default_dtype()
    gen = torch.Generator().manual_seed(int(seed))
    target_k = torch.randn(trials, 1, head_dim, generator=gen, dtype=dtype)
    target_v = torch.randn(trials, dv, generator=gen, dtype=dtype)
    noise_k = torch.randn(trials, total - 1, head_dim, generator=gen, dtype=dtype)
    noise_v = torch.randn(trials, total - 1, dv, generator=gen, dtype=dtype)

    read = _readouts(rule, target_k, target_v, noise_k, noise_v, lag_list, position, num_distractors)
    means, stds, counts = [], [], []
    for lag in lag_list:
        cos = torch.nn.functional.cosine_similarity(read[lag], target_v, dim=-1)
        good = cos[torch.isfinite(cos)]
        counts.append(good.numel())
        means.append(float(good.mean()) if good.numel() else math.nan)
        stds.append(float(good.std(unbiased=False)) if good.numel() else math.nan)

    return RecallCurve(
        lags=torch.tensor(lag_list, dtype=torch.long),
        cosine=torch.tensor(means, dtype=dtype),
        cosine_std=torch.tensor(stds, dtype=dtype),
        trials=torch.tensor(counts, dtype=torch.long),
        position=position,
        kind=log_decay_kind,
    )


def _readouts(rule, target_k, target_v, noise_k, noise_v, lags, position, num_distractors):
    """Read-outs of the state for each lag, the query being the target key.

    target_k (B, 1, d), target_v (B, d_v), noise_k (B, D, d), noise_v (B, D, d_v) with D the
    largest number of distractors needed. Returns {lag: (B, d_v)}. Early and recent targets
    take one pass over the distractor stream; a fixed load (``num_distractors``) takes one
    stream per lag.
    """
    trials, total, head_dim = noise_k.shape[0], noise_k.shape[1] + 1, noise_k.shape[2]
    dv, dtype = target_v.shape[-1], target_v.dtype

    def write(x, offset=0):
        # Rows sit at positions offset.. of one stream of ``total`` tokens (this matters to
        # positional maps such as cosFormer only).
        keys, gates = rule.write(x, offset=offset, total=total)
        return keys, _batched(gates)

    def at(gates, t):
        return None if gates is None else gates[:, t]

    everywhere = target_k.expand(trials, total, head_dim)                # the target at any position
    target_f, target_g = write(everywhere)
    query_f = rule.keys(everywhere, is_query=True, total=total)
    width = target_f.shape[-1]
    wanted = set(lags)
    read = {}
    if num_distractors is None and position == "early":
        # One pass: target at t = 0, distractor j at t = j; reading after step t gives lag t.
        fk, gk = write(torch.cat([target_k, noise_k], dim=1))
        vs = torch.cat([target_v.unsqueeze(1), noise_v], dim=1)
        state = rule.empty(trials, width, dv, dtype)
        for t in range(total):
            rule.step(state, fk[:, t], vs[:, t], at(gk, t))
            if t in wanted:
                read[t] = rule.read(state, query_f[:, t])
    elif num_distractors is None:
        # One pass over the distractors; at lag t the target is written (on a copy) after them.
        fk, gk = write(noise_k)
        state = rule.empty(trials, width, dv, dtype)
        for t in range(total):
            if t in wanted:
                probe = RecurrentState(state.s, state.z)      # step() rebinds, never writes in place
                rule.step(probe, target_f[:, t], target_v, at(target_g, t))
                read[t] = rule.read(probe, query_f[:, t])
            if t < total - 1:
                rule.step(state, fk[:, t], noise_v[:, t], at(gk, t))
    else:
        # Fixed load: one stream per lag, the target ``lag`` steps before the end.
        for lag in wanted:
            before = num_distractors - lag
            ks = torch.cat([noise_k[:, :before], target_k, noise_k[:, before:]], dim=1)
            vs = torch.cat([noise_v[:, :before], target_v.unsqueeze(1), noise_v[:, before:]], dim=1)
            fk, gk = write(ks)
            state = rule.empty(trials, width, dv, dtype)
            for t in range(total):
                rule.step(state, fk[:, t], vs[:, t], at(gk, t))
            read[lag] = rule.read(state, query_f[:, -1])

    return read


def _batched(gates):
    """Gates of a stream as (B or 1, T, 1 or m): a preset (T, 1 or m) is shared by the batch."""
    return gates.unsqueeze(0) if gates is not None and gates.dim() == 2 else gates


# ---------------------------------------------------------------------------------------
# Capacity: how many stored pairs are still recalled
# ---------------------------------------------------------------------------------------

@dataclass
class CapacityCurve:
    """How many of P stored key -> value pairs the state recalls, against P.

    pairs:        (P,) how many pairs were written
    recalled:     (P,) mean over trials of the number of them recalled above ``threshold``
    recalled_std: (P,) standard deviation over the trials
    threshold:    the cosine above which a read-out counts as the stored value
    kind:         the update rule
    """

    pairs: torch.Tensor
    recalled: torch.Tensor
    recalled_std: torch.Tensor
    threshold: float = RECALL_THRESHOLD
    kind: str = "none"


def capacity_probe(feature_map, head_dim, pairs, kind="none", *, gamma=None, strength=1.0,
                   lower_bound=HGRN2_LOWER_BOUND, beta=DELTA_BETA, seed=0, value_dim=None, trials=8,
                   threshold=RECALL_THRESHOLD, dtype=None) -> CapacityCurve:
    """Write P random Gaussian key -> value pairs one after another, then query the state with
    every stored key: how many read-outs have cosine > ``threshold`` with their value?

    One stream serves every P: after its P-th write the state is queried with keys 1..P.
    A read-out that is not finite (a normaliser of 0) does not count. The query sits at
    the last written position (for positional maps).

    An additive state recalls almost every pair while P is small, then the pairs pile up on
    each other: with unit keys the read-out's cosine falls like 1/sqrt(1 + P/d) for every
    pair alike, and past a few d only the pairs that happen to land above the threshold
    are left (measured at d = 32: 50 at P = 2d, 35 at 8d, 25 at 32d). The delta rule keeps
    recalling its most recent pairs however many were written: each write corrects the
    state under its key, so the count levels off (at d = 32: about 27 for beta = 1, 42 for
    beta = 0.5) instead of falling. Decay and gates keep the recent pairs too, at a rate set
    by the gate.
    """
    head_dim = check_positive_int(head_dim, "head_dim")
    dv = head_dim if value_dim is None else check_positive_int(value_dim, "value_dim")
    counts = _check_lags(pairs, "pairs")
    if min(counts) < 1:
        raise ValueError(f"pairs: expected integers >= 1, got {min(counts)}")
    trials = check_positive_int(trials, "trials")
    threshold = check_fraction(threshold, "threshold", low=-1.0, high=1.0, low_open=False, high_open=True)
    total = max(counts)
    rule = make_rule(kind, feature_map, head_dim, total, gamma=gamma, strength=strength, lower_bound=lower_bound,
                     beta=beta, seed=seed)

    dtype = dtype or torch.get_default_dtype()
    gen = torch.Generator().manual_seed(int(seed))
    xs = torch.randn(trials, total, head_dim, generator=gen, dtype=dtype)
    vs = torch.randn(trials, total, dv, generator=gen, dtype=dtype)
    fk, gk = rule.write(xs, total=total)
    gk = _batched(gk)
    state = rule.empty(trials, fk.shape[-1], dv, dtype)
    found = {}
    wanted = set(counts)
    for t in range(total):
        rule.step(state, fk[:, t], vs[:, t], None if gk is None else gk[:, t])
        p = t + 1
        if p in wanted:
            # Every stored key as a query at the current position, one row each.
            fq = rule.keys(xs[:, :p].reshape(trials * p, 1, head_dim), is_query=True, offset=t, total=total)
            out = rule.read(state, fq.reshape(trials, p, -1))
            cos = torch.nn.functional.cosine_similarity(out, vs[:, :p], dim=-1)
            found[p] = (cos > threshold).sum(-1).to(torch.float64)      # NaN is never above it
    return CapacityCurve(
        pairs=torch.tensor(counts, dtype=torch.long),
        recalled=torch.tensor([float(found[p].mean()) for p in counts], dtype=torch.float64),
        recalled_std=torch.tensor([float(found[p].std(unbiased=False)) for p in counts], dtype=torch.float64),
        threshold=threshold,
        kind=kind,
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
