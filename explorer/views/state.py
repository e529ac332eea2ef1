"""The state tab: the recurrent state of one head step by step under six updates (no decay,
RetNet decay, GLA gates, HGRN2's gates, DeltaNet, Gated DeltaNet), recall against lag, the
capacity of each update, and state bytes against the KV cache.

Every control is checked here, once, with one sentence (a message, said in the page's
language at the edge) naming the control and its allowed values: the ``/state`` endpoint and
the page share this path. The view holds numbers and messages, no language: one view serves
both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .. import mechanisms
from ..catalog import MAX_SEED, REFERENCE, STATE_DEFAULTS, STATE_LOWER_BOUND_MAX, map_choices, map_label, map_specs
from ..core.cache import LRU
from ..measure import cost
from ..text import Joined, Message
from .common import MAX_STATE_ELEMENTS, echoed, make_feature_map, select_head, unk_count, whole_in

M_RANGE = (1, 1024)


def kind_label(kind: str) -> Message:
    """The update's name ("no decay", "无衰减", "DeltaNet" ...), a message."""
    return Message(f"state.kind.{kind}")


@dataclass
class StateView:
    ts: list                     # 0..N-1
    mem_ts: list                 # 1..max(N, MEMORY_HORIZON): tokens seen, for the memory plot
    tokens: list
    traces: dict                 # update label (a message) -> dict(state_norm, normaliser_norm or None, effective_rank)
    recall: dict                 # update label -> dict(lags, cosine, cosine_std, recent_cosine, recent_cosine_std)
    kv_bytes: list               # softmax KV cache per head after each of mem_ts tokens
    state_bytes: int             # S and z per head, any t
    feature_dim: int
    step: dict                   # written, state, erased (delta rule) or None, t, token, kind, kind_id
    notices: list = field(default_factory=list)     # messages (and a source's text as it is)
    title: str = ""                                 # a Joined of messages and names
    capacity: dict = field(default_factory=dict)   # update label -> dict(pairs, recalled, recalled_std)
    head_dim: int = 0            # d: where the capacity panel marks P = d
    capacity_trials: int = 0
    threshold: float = 0.5

    provenance: dict = field(default_factory=dict)  # explorer.provenance.record of the data and settings

# ---------------------------------------------------------------------------------------
# The controls, checked once for the page and the API
# ---------------------------------------------------------------------------------------

_shown = echoed


def _number(value, name_key, low, high, *, low_open=False):
    """A finite float in [low, high] (or (low, high]), else one sentence naming the control."""
    try:
        x = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        x = math.nan
    inside = math.isfinite(x) and (x > low if low_open else x >= low) and x <= high
    if not inside:
        raise ValueError(Message("state.error_number", name=Message(name_key), low=low, high=high,
                                 value=_shown(value)))
    return x


def _whole(value, name_key, low, high) -> int:
    """A whole number in [low, high] (7.0 counts as 7), else one sentence naming the control."""
    return whole_in(value, low, high, "state.error_whole", name_key)


@dataclass(frozen=True)
class StateControls:
    """The tab's own controls, checked: see ``check_controls``."""

    map_id: str
    m: int
    seed: int
    gamma: float
    strength: float
    lower_bound: float
    beta: float
    kind: str


def check_controls(map_id="elu1", m=32, seed=0, gamma=STATE_DEFAULTS["gamma"],
                   strength=STATE_DEFAULTS["strength"], lower_bound=STATE_DEFAULTS["lower_bound"],
                   beta=STATE_DEFAULTS["beta"], kind="linear") -> StateControls:
    """Every control of the tab, or a ValueError carrying one sentence (a message)."""
    kinds = mechanisms.state_kinds()
    if not isinstance(kind, str) or kind not in kinds:
        raise ValueError(Message("state.error_kind", choices=", ".join(f"“{k}”" for k in kinds), value=_shown(kind)))
    if map_id == REFERENCE:
        raise ValueError(Message("state.error_softmax"))
    if not isinstance(map_id, str) or map_id not in map_choices():
        raise ValueError(Message("state.error_map", value=_shown(map_id)))
    m = _whole(m, "state.name_m", *M_RANGE)
    seed = _whole(0 if seed is None else seed, "state.name_seed", 0, MAX_SEED)
    gamma = _number(gamma, "state.kind.retnet", 0.0, 1.0, low_open=True)
    strength = _number(strength, "state.name_strength", 0.0, 8.0)
    lower_bound = _number(lower_bound, "state.name_lower_bound", 0.0, STATE_LOWER_BOUND_MAX)
    beta = _number(beta, "state.kind.deltanet", 0.0, 1.0, low_open=True)
    return StateControls(map_id, m, seed, gamma, strength, lower_bound, beta, kind)


def check_step(t) -> int:
    """The step t: a whole number >= 0 (a step past the text's end shows its last token)."""
    return _whole(t, "state.name_t", 0, 2 ** 53)


def _state_inputs(sample, layer, head, c: StateControls):
    if head in (None, "mean", "mean over heads"):
        head = 0
        notes = [Message("state.notice_head")]
    else:
        notes = []
    q, k, v, layer, head, more = select_head(sample, layer, head)
    cost.check(cost.estimate("state", n=k.shape[0], d=k.shape[-1], dv=v.shape[-1], label=c.map_id, m=c.m,
                             kinds=len(mechanisms.state_kinds()), lags=max(RECALL_LAGS), pairs=max(capacity_pairs(k.shape[-1]))))
    fmap, extra = make_feature_map(c.map_id, k.shape[-1], c.m, c.seed, layer=layer, head=head)
    size = k.shape[0] * max(fmap.num_features, k.shape[-1]) * v.shape[-1]
    if size > MAX_STATE_ELEMENTS:
        raise ValueError(Message("state.error_size", size=f"{size:,}", cap=f"{MAX_STATE_ELEMENTS:,}"))
    return k, v, fmap, layer, head, notes + more + list(extra)


def _rule(kind, fmap, d, n, c: StateControls, head):
    from ..diagnostics import state
    return state.make_rule(kind, fmap, d, n, gamma=c.gamma, strength=c.strength, lower_bound=c.lower_bound,
                           beta=c.beta, seed=c.seed, head=int(head))


# ---------------------------------------------------------------------------------------
# One step
# ---------------------------------------------------------------------------------------

@torch.inference_mode()
def state_step(sample, layer=0, head=0, map_id="elu1", m=64, seed=0, gamma=0.97, strength=1.0, t=0,
               kind="linear", *, lower_bound=STATE_DEFAULTS["lower_bound"], beta=STATE_DEFAULTS["beta"]) -> dict:
    """Step t of one update: what it writes, what it erases (the delta rule), and S_t."""
    from ..diagnostics import state

    c = check_controls(map_id, m, seed, gamma, strength, lower_bound, beta, kind)
    k, v, fmap, layer, head, _ = _state_inputs(sample, layer, head, c)
    n = k.shape[0]
    t = min(check_step(t), n - 1)     # a shorter text moves the last step
    # The gates are drawn for the whole sequence (their first rows do not depend on n), and
    # positional maps see its full length: stepping only up to t gives the full run's S_t.
    rule = _rule(kind, _prefix_map(fmap, n), k.shape[-1], n, c, head)
    trace = state.rule_trace(k[:t + 1], v[:t + 1], rule, keep_states=True)
    return {"update": trace.updates[t].numpy(), "state": trace.states[t].numpy(),
            "erased": None if trace.erased is None else trace.erased[t].numpy(),
            "t": t, "token": sample.tokens[t], "kind": kind_label(kind), "kind_id": kind}


class _prefix_map(torch.nn.Module):
    """A feature map used on a prefix of a sequence of ``total`` tokens: positional maps
    (cosFormer) must see the full length, or S_t would differ from the full run's."""

    def __init__(self, fmap, total):
        super().__init__()
        self.fmap, self.total = fmap, total
        self.head_dim, self.num_features, self.name = fmap.head_dim, fmap.num_features, fmap.name

    def forward(self, x, is_query=False, offset=0, total=None):
        return self.fmap(x, is_query=is_query, offset=offset, total=self.total)


# ---------------------------------------------------------------------------------------
# The whole tab
# ---------------------------------------------------------------------------------------

RECALL_LAGS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
RECALL_TRIALS = 16      # explorer.diagnostics.state_probes.recall_probe's default
CAPACITY_TRIALS = 8
# Pairs written, as multiples of d: from well below d (every update recalls almost all) to
# 16 d, where an additive state on unit keys (mean cosine ~ 1/sqrt(1 + P/d) = 0.24) keeps
# fewer pairs than the delta rule.
CAPACITY_FACTORS = (0.125, 0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 12, 16)
MEMORY_HORIZON = 2048   # the memory plot runs at least this far: a short text never shows the cache outgrow the state


def capacity_pairs(d: int) -> list[int]:
    """The numbers of pairs P the capacity panel writes, for key dimension d."""
    return sorted({max(1, round(f * d)) for f in CAPACITY_FACTORS})


@torch.inference_mode()
def state_view(sample, layer=0, head=0, map_id="elu1", m=64, seed=0, gamma=0.97, strength=1.0, t=None,
               kind="linear", lags=RECALL_LAGS, *, lower_bound=STATE_DEFAULTS["lower_bound"],
               beta=STATE_DEFAULTS["beta"]) -> StateView:
    """One head as an RNN under every update: norms, rank, recall and capacity, and step t of
    ``kind``; its words are messages (the same view serves every language)."""
    from ..diagnostics import state, state_probes

    c = check_controls(map_id, m, seed, gamma, strength, lower_bound, beta, kind)
    k, v, fmap, layer, head, notices = _state_inputs(sample, layer, head, c)
    n, d, dv = k.shape[0], k.shape[1], v.shape[1]
    traces, recall, capacity = {}, {}, {}
    probes = _probes(fmap, d, tuple(lags or ()), c)
    for kd in mechanisms.state_kinds():
        label = kind_label(kd)
        tr = state.rule_trace(k, v, _rule(kd, fmap, d, n, c, head))
        traces[label] = {"state_norm": tr.state_norm.numpy(), "effective_rank": tr.effective_rank.numpy(),
                         "normaliser_norm": None if tr.normaliser_norm is None else tr.normaliser_norm.numpy()}
        if lags:
            recall[label] = probes["recall"][kd]
        capacity[label] = probes["capacity"][kd]
    capacity[kind_label(state.UNIT_ADDITIVE)] = probes["capacity"][state.UNIT_ADDITIVE]
    if lags:
        notices.append(Message("state.notice_synthetic", low=min(lags), high=max(lags), trials=RECALL_TRIALS))
    notices.append(Message("state.notice_keys", lower_bound=f"{c.lower_bound:g}", beta=f"{c.beta:g}"))
    unknown, total = unk_count(sample)
    if unknown:        # MiniLM reads emoji and most Chinese as [UNK]: the state cannot tell them apart
        notices.insert(0, Message("state.unk", count=unknown, total=total))
    t = n - 1 if t is None else t
    step = state_step(sample, layer, head, c.map_id, c.m, c.seed, c.gamma, c.strength, t, c.kind,
                      lower_bound=c.lower_bound, beta=c.beta)
    return StateView(
        ts=list(range(n)), mem_ts=list(range(1, max(n, MEMORY_HORIZON) + 1)), tokens=list(sample.tokens),
        traces=traces, recall=recall,
        kv_bytes=[state.kv_cache_bytes(i, d, dv) for i in range(1, max(n, MEMORY_HORIZON) + 1)],
        state_bytes=state.state_bytes(fmap.num_features, dv), feature_dim=fmap.num_features, step=step,
        notices=list(getattr(sample, "notices", [])) + notices,
        title=Joined([getattr(sample, "source", ""), " · ", Message("common.layer"), f" {layer}, ", Message("common.head"),
                      f" {head} · ", map_label(c.map_id), f", m = {fmap.num_features}"]),
        capacity=capacity, head_dim=d, capacity_trials=CAPACITY_TRIALS, threshold=state_probes.RECALL_THRESHOLD,
    )


# The recall and capacity probes run on random keys and values, not on the text: for a map
# that no session trained they depend on its settings alone, so a page that measures the
# tab again (a link, the lecture's Go deeper, the other language, another head) finds them
# here instead of running every update through its probes (most of the tab's time).
_PROBES = LRU(64)


def _probes(fmap, d: int, lags: tuple, c: StateControls) -> dict:
    """{"recall": {kind: curves}, "capacity": {kind: curve}} of every update with ``fmap`` at
    key dimension ``d`` (a copy: the caller's view owns its arrays)."""
    # Kept per setting and per set of updates (a mechanism registered later joins them).
    key = None if map_specs()[c.map_id].trained else \
        (c.map_id, c.m, c.seed, int(d), lags, c.gamma, c.strength, c.lower_bound, c.beta, mechanisms.state_kinds())
    return _PROBES.copy_of(key, lambda: _measure_probes(fmap, d, lags, c))


def warm_probes(map_id: str, m: int, seed: int, head_dim: int) -> None:
    """Measure into the cache the probes a view with these settings (and the other controls
    at their defaults) reads: what a start-up does for the links it knows will be opened."""
    c = check_controls(map_id, m, seed)
    fmap, _ = make_feature_map(c.map_id, int(head_dim), c.m, c.seed)
    _probes(fmap, int(head_dim), tuple(RECALL_LAGS), c)


def _measure_probes(fmap, d: int, lags: tuple, c: StateControls) -> dict:
    from ..diagnostics import state, state_probes

    pairs = capacity_pairs(d)
    probe = dict(gamma=c.gamma, strength=c.strength, lower_bound=c.lower_bound, beta=c.beta, seed=c.seed)
    recall, capacity = {}, {}
    for kd in mechanisms.state_kinds():
        # Synthetic (random Gaussian keys and values, not the text): recall needs a known
        # target value, and lags far beyond a short text. An early key (written first, then
        # `lag` others) is what decay forgets; a recent one (written last, after `lag` others)
        # is what it keeps clean.
        if lags:
            early = state_probes.recall_probe(fmap, d, list(lags), kd, position="early", trials=RECALL_TRIALS, **probe)
            recent = state_probes.recall_probe(fmap, d, list(lags), kd, position="recent", trials=RECALL_TRIALS, **probe)
            recall[kd] = {"lags": early.lags.numpy(), "cosine": early.cosine.numpy(),
                          "cosine_std": early.cosine_std.numpy(), "recent_cosine": recent.cosine.numpy(),
                          "recent_cosine_std": recent.cosine_std.numpy()}
        capacity[kd] = _capacity(state_probes.capacity_probe(fmap, d, pairs, kd, trials=CAPACITY_TRIALS, **probe))
    # The additive update on the delta rule's own keys: what the correction alone changes.
    capacity[state.UNIT_ADDITIVE] = _capacity(
        state_probes.capacity_probe(None, d, pairs, state.UNIT_ADDITIVE, trials=CAPACITY_TRIALS, **probe))
    return {"recall": recall, "capacity": capacity}


def _capacity(curve) -> dict:
    return {"pairs": curve.pairs.numpy(), "recalled": curve.recalled.numpy(),
            "recalled_std": curve.recalled_std.numpy()}
