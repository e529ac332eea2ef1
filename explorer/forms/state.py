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
- the state is a fixed m x d_v matrix (``state_bytes``) whereas softmax keeps a KV cache
  that grows with t (``kv_cache_bytes``); its effective rank shows how much of that
  capacity is in use.

The update and the read-out are ``explorer.forms.linear.RecurrentState.step`` and ``.read``;
nothing here re-implements them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..checks import as_float_tensor, check_finite, check_positive_int
from .decay import gamma_to_log_decay, gla_log_gates, prepare_log_decay, retnet_log_decay
from .linear import RecurrentState

DECAY_KINDS = ("none", "retnet", "gla")
POSITIONS = ("early", "recent")
GLA_TAU = 16.0


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
    updates:         phi(k_t) v_t^T stacked, (N, m, d_v), only with keep_states
    """

    state_norm: torch.Tensor
    normaliser_norm: torch.Tensor
    effective_rank: torch.Tensor
    states: torch.Tensor | None = None
    updates: torch.Tensor | None = None


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

    ``log_decay`` is anything ``explorer.forms.decay.prepare_log_decay`` accepts for (N, m): None,
    a float, or a tensor (N or 1, 1 or m), e.g. from ``decay_preset``. The states are
    recorded at every step (O(N m d_v) memory, which the batched SVD needs anyway);
    ``keep_states`` returns them with the per-step updates for the UI's heat maps.
    """
    k, v = _check_sequence(k, v)
    _check_map_dim(feature_map, k.shape[1])
    n = k.shape[0]
    fk = feature_map(k)                                           # keys: no per-row rescaling
    m = fk.shape[-1]
    decay = prepare_log_decay(log_decay, (), n, m, k.dtype, k.device)
    if decay is not None:
        decay = decay.expand(n, decay.shape[-1])

    state = RecurrentState.empty(1, m, v.shape[1], k.dtype, k.device)
    states = torch.empty(n, m, v.shape[1], dtype=k.dtype, device=k.device)
    normalisers = torch.empty(n, m, dtype=k.dtype, device=k.device)
    for t in range(n):
        state.step(fk[t:t + 1], v[t:t + 1], None if decay is None else decay[t:t + 1])
        states[t], normalisers[t] = state.s[0], state.z[0]

    return StateTrace(
        state_norm=torch.linalg.matrix_norm(states),
        normaliser_norm=torch.linalg.vector_norm(normalisers, dim=-1),
        effective_rank=effective_rank(states),
        states=states if keep_states else None,
        updates=fk.unsqueeze(-1) * v.unsqueeze(-2) if keep_states else None,
    )


# ---------------------------------------------------------------------------------------
# Decay presets
# ---------------------------------------------------------------------------------------

def decay_preset(kind, n, num_features, *, gamma=None, strength=1.0, seed=0, head=0):
    """A log-decay for a sequence of n tokens: None, (n, 1) or (n, num_features).

    none:   None, the state never forgets.
    retnet: log gamma at every step, one value for all features; gamma from ``gamma`` if
            given, else RetNet's value 1 - 2^(-5-head) for head ``head``.
    gla:    log alpha_t = strength * logsigmoid(x_t W_g) / 16, one gate per key feature, with
            x and W_g seeded Gaussians standing in for the data (a gate that varies with t
            and between features, as GLA's does). strength 0 never forgets; larger values
            forget faster. The same seed gives the same gates, and the first rows do not
            depend on n.

    ``gamma`` applies to retnet and ``strength`` to gla; both are validated whatever the kind.
    """
    if kind not in DECAY_KINDS:
        raise ValueError(f"kind: expected one of {', '.join(DECAY_KINDS)}, got {kind!r}")
    n = check_positive_int(n, "n")
    m = check_positive_int(num_features, "num_features")
    log_gamma = None if gamma is None else gamma_to_log_decay(gamma)
    strength = float(strength)
    if not (math.isfinite(strength) and strength >= 0):
        raise ValueError(f"strength: must be a finite number >= 0, got {strength}")
    if isinstance(head, bool) or not isinstance(head, int) or head < 0:
        raise ValueError(f"head: expected a head index >= 0, got {head!r}")

    dtype = torch.get_default_dtype()
    if kind == "none":
        return None
    if kind == "retnet":
        if log_gamma is None:
            log_gamma = float(retnet_log_decay(head + 1)[head])
        return torch.full((n, 1), log_gamma, dtype=dtype)
    gen = torch.Generator().manual_seed(int(seed))
    # Drawn row by row so a longer sequence extends a shorter one instead of redrawing it.
    w = torch.randn(m, m, generator=gen, dtype=torch.float64) / math.sqrt(m)
    x = torch.stack([torch.randn(m, generator=gen, dtype=torch.float64) for _ in range(n)])
    gates = gla_log_gates(x, w, tau=GLA_TAU) * strength
    return gates.clamp(max=0.0).to(dtype)      # -0.0 and round-off stay <= 0


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


def _check_lags(lags) -> list[int]:
    if isinstance(lags, int) and not isinstance(lags, bool):
        lags = [lags]
    try:
        values = list(lags)
    except TypeError:
        raise ValueError(f"lags: expected a list of integers >= 0, got {lags!r}") from None
    if not values:
        raise ValueError("lags: give at least one lag")
    out = []
    for lag in values:
        if isinstance(lag, torch.Tensor) and lag.numel() == 1:
            lag = lag.item()
        is_integer = hasattr(lag, "__index__") and not isinstance(lag, bool)
        if not is_integer or int(lag) < 0:
            raise ValueError(f"lags: expected integers >= 0, got {lag!r}")
        out.append(int(lag))
    return out


def recall_probe(feature_map, head_dim, lags, log_decay_kind="none", *, gamma=None, strength=1.0,
                 num_distractors=None, seed=0, value_dim=None, position="early", trials=16) -> RecallCurve:
    """Associative recall from the linear-attention state, as a function of lag.

    Each trial writes random Gaussian (key, value) pairs into the state: one target pair
    and some distractors. Then it queries with the target key, reads
    phi(q) S / phi(q) z (the causal linear-attention output right after the last write)
    and scores cosine(retrieved, target value). Trials are independent draws, run as one
    batch; the same distractor stream serves every lag, so the curve is not jittered by
    redraws, and one pass over it serves every lag (dense lag lists stay cheap).

    position="early" (the target is old): the target is written at t = 0 and ``lag``
    distractors follow. Without decay the curve falls as the distractors pile up: each adds
    its value to the read-out with a weight phi(q).phi(k_j) next to the target's, and the
    noise swamps the signal. With decay it falls *faster*: the target's own weight shrinks
    as gamma^lag, so the early key is forgotten.

    position="recent" (the target is new): ``lag`` distractors come first and the target
    is written last. Without decay it is just as swamped as an early target (a state
    without decay does not know order). With decay the old distractors have faded, so
    recall stays high at large lag: decay trades old memories for clean recent ones.

    num_distractors fixes the load instead: every trial writes that many distractors and
    the lag is the target's age, i.e. the target sits ``lag`` steps before the end with
    the other distractors before it (lag <= num_distractors). Without decay such a curve is
    flat (only the load matters, not the age); with decay it falls with age. Only
    position="early" is meaningful there.

    Decay presets are those of ``decay_preset`` (``gamma``, ``strength``, ``seed``); the
    GLA gates are one seeded sequence shared by all trials.
    """
    head_dim = check_positive_int(head_dim, "head_dim")
    _check_map_dim(feature_map, head_dim)
    dv = head_dim if value_dim is None else check_positive_int(value_dim, "value_dim")
    lag_list = _check_lags(lags)
    trials = check_positive_int(trials, "trials")
    if position not in POSITIONS:
        raise ValueError(f"position: expected one of {', '.join(POSITIONS)}, got {position!r}")
    if log_decay_kind not in DECAY_KINDS:
        raise ValueError(f"log_decay_kind: expected one of {', '.join(DECAY_KINDS)}, got {log_decay_kind!r}")
    if num_distractors is not None:
        num_distractors = _count(num_distractors, "num_distractors", allow_zero=True)
        if position != "early":
            raise ValueError("position: with num_distractors set the lag is the target's age; use position='early'")
        if max(lag_list) > num_distractors:
            raise ValueError(f"lags: a lag cannot exceed num_distractors={num_distractors}, got {max(lag_list)}")
    total = (num_distractors if num_distractors is not None else max(lag_list)) + 1

    dtype = torch.get_default_dtype()
    decay = decay_preset(log_decay_kind, total, feature_map.num_features, gamma=gamma, strength=strength,
                         seed=seed)
    gen = torch.Generator().manual_seed(int(seed))
    target_k = torch.randn(trials, 1, head_dim, generator=gen, dtype=dtype)
    target_v = torch.randn(trials, dv, generator=gen, dtype=dtype)
    noise_k = torch.randn(trials, total - 1, head_dim, generator=gen, dtype=dtype)
    noise_v = torch.randn(trials, total - 1, dv, generator=gen, dtype=dtype)

    read = _readouts(feature_map, target_k, target_v, noise_k, noise_v, decay, lag_list, position,
                     num_distractors)
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


def _readouts(feature_map, target_k, target_v, noise_k, noise_v, decay, lags, position, num_distractors):
    """Read-outs phi(q) S / phi(q) z for each lag, the query being the target key.

    target_k (B, 1, d), target_v (B, d_v), noise_k (B, D, d), noise_v (B, D, d_v) with D the
    largest number of distractors needed; decay (D + 1, 1 or m) or None. Returns
    {lag: (B, d_v)}. Early and recent targets take one pass over the distractor stream;
    a fixed load (``num_distractors``) takes one stream per lag.
    """
    trials, total, head_dim = noise_k.shape[0], noise_k.shape[1] + 1, noise_k.shape[2]
    dv, dtype = target_v.shape[-1], target_v.dtype

    def features(x, is_query=False, offset=0):
        # Rows sit at positions offset.. of one stream of ``total`` tokens (this matters to
        # positional maps such as cosFormer only).
        return feature_map(x, is_query=is_query, offset=offset, total=total)

    target_f = features(target_k.expand(trials, total, head_dim))           # the target at any position
    query_f = features(target_k.expand(trials, total, head_dim), is_query=True)
    wanted = set(lags)
    gate = (lambda t: None) if decay is None else (lambda t: decay[t:t + 1])
    read = {}
    if num_distractors is None and position == "early":
        # One pass: target at t = 0, distractor j at t = j; reading after step t gives lag t.
        fk = torch.cat([target_f[:, :1], features(noise_k, offset=1)], dim=1)
        vs = torch.cat([target_v.unsqueeze(1), noise_v], dim=1)
        state = RecurrentState.empty(trials, fk.shape[-1], dv, dtype)
        for t in range(total):
            state.step(fk[:, t], vs[:, t], gate(t))
            if t in wanted:
                read[t] = state.read(query_f[:, t])
    elif num_distractors is None:
        # One pass over the distractors; at lag t the target is written (on a copy) after them.
        fk = features(noise_k)
        state = RecurrentState.empty(trials, fk.shape[-1], dv, dtype)
        for t in range(total):
            if t in wanted:
                probe = RecurrentState(state.s, state.z)      # step() rebinds, never writes in place
                probe.step(target_f[:, t], target_v, gate(t))
                read[t] = probe.read(query_f[:, t])
            if t < total - 1:
                state.step(fk[:, t], noise_v[:, t], gate(t))
    else:
        # Fixed load: one stream per lag, the target ``lag`` steps before the end.
        for lag in wanted:
            before = num_distractors - lag
            ks = torch.cat([noise_k[:, :before], target_k, noise_k[:, before:]], dim=1)
            vs = torch.cat([noise_v[:, :before], target_v.unsqueeze(1), noise_v[:, before:]], dim=1)
            fk = features(ks)
            state = RecurrentState.empty(trials, fk.shape[-1], dv, dtype)
            for t in range(total):
                state.step(fk[:, t], vs[:, t], gate(t))
            read[lag] = state.read(query_f[:, -1])

    return read


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
