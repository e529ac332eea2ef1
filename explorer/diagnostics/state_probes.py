"""Probes of the recurrent state: associative recall against lag (``recall_probe``) and how
many stored pairs are still recalled against how many were written (``capacity_probe``).

Each writes random Gaussian (key, value) pairs with an update rule of
``explorer.diagnostics.state`` (``make_rule``), reads the state with a stored key and scores the
read-out's cosine with the stored value. What the curves show, and why, is told in that
module and beside each probe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import mechanisms
from ..checks import check_positive_int
from ..mechanisms.hgrn2.mechanism import LOWER_BOUND as HGRN2_LOWER_BOUND
from ..mechanisms.linear.forms import RecurrentState
from .state import DELTA_BETA, _count, check_fraction, make_rule

POSITIONS = ("early", "recent")
RECALL_THRESHOLD = 0.5                                # a pair counts as recalled above this cosine


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
    kind: str = "linear"


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


def recall_probe(feature_map, head_dim, lags, log_decay_kind="linear", *, gamma=None, strength=1.0,
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
    kind: str = "linear"


def capacity_probe(feature_map, head_dim, pairs, kind="linear", *, gamma=None, strength=1.0,
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
