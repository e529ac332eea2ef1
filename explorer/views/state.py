"""The state tab: the recurrent state of causal linear attention step by step, with no decay,
RetNet decay or GLA gates, recall against lag, and state bytes against the KV cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..measure import cost
from ..catalog import DECAY_LABELS, REFERENCE
from .common import MAX_STATE_ELEMENTS, _int, make_feature_map, select_head


@dataclass
class StateView:
    ts: list                     # 0..N-1
    mem_ts: list                 # 1..max(N, MEMORY_HORIZON): tokens seen, for the memory plot
    tokens: list
    traces: dict                 # kind label -> dict(state_norm, normaliser_norm, effective_rank) arrays
    recall: dict                 # kind label -> dict(lags, cosine, cosine_std, recent_cosine, recent_cosine_std)
    kv_bytes: list               # softmax KV cache per head after each of mem_ts tokens
    state_bytes: int             # S and z per head, any t
    feature_dim: int
    step: dict                   # update, state, t, token, kind for the step heatmaps
    notices: list = field(default_factory=list)
    title: str = ""


def _state_inputs(sample, layer, head, map_label, m, seed):
    if head in (None, "mean", "mean over heads"):
        head = 0
        notes = ["The recurrent state belongs to one head: showing head 0 (mean over heads does not apply)."]
    else:
        notes = []
    q, k, v, layer, head, more = select_head(sample, layer, head)
    if map_label == REFERENCE:
        raise ValueError("map: softmax has no finite state; choose a feature map such as elu+1")
    cost.check(cost.estimate("state", n=k.shape[0], d=k.shape[-1], dv=v.shape[-1], label=map_label, m=m))
    fmap, extra = make_feature_map(map_label, k.shape[-1], m, seed, layer=layer, head=head)
    size = k.shape[0] * fmap.num_features * v.shape[-1]
    if size > MAX_STATE_ELEMENTS:
        raise ValueError(f"N: recording the state at every step is N × m × d_v = {size:,} numbers, over the cap of "
                         f"{MAX_STATE_ELEMENTS:,}; use a shorter sequence or a smaller m")
    return k, v, fmap, layer, head, notes + more + extra


def _decay(kind, n, fmap, gamma, strength, seed, head):
    from ..forms import state
    return state.decay_preset(kind, n, fmap.num_features, gamma=float(gamma), strength=float(strength),
                              seed=int(seed), head=int(head))


@torch.inference_mode()
def state_step(sample, layer=0, head=0, map_label="elu+1", m=64, seed=0, gamma=0.97, strength=1.0, t=0,
               kind="none") -> dict:
    """The update phi(k_t) v_t^T and the state S_t at step t, for one decay kind."""
    from ..forms import state

    if kind not in DECAY_LABELS:
        raise ValueError(f"kind: expected one of {', '.join(DECAY_LABELS)}, got {kind!r}")
    k, v, fmap, layer, head, _ = _state_inputs(sample, layer, head, map_label, m, seed)
    n = k.shape[0]
    t = min(max(_int(t, "t"), 0), n - 1)
    decay = _decay(kind, n, fmap, gamma, strength, seed, head)
    # The decay preset is drawn for the whole sequence (its first rows do not depend on n),
    # so stepping only up to t gives the same S_t as the full run.
    trace = state.state_trace(k[:t + 1], v[:t + 1], _prefix_map(fmap, n), None if decay is None else decay[:t + 1],
                              keep_states=True)
    return {"update": trace.updates[t].numpy(), "state": trace.states[t].numpy(), "t": t,
            "token": sample.tokens[t], "kind": DECAY_LABELS[kind]}


class _prefix_map(torch.nn.Module):
    """A feature map used on a prefix of a sequence of ``total`` tokens: positional maps
    (cosFormer) must see the full length, or S_t would differ from the full run's."""

    def __init__(self, fmap, total):
        super().__init__()
        self.fmap, self.total = fmap, total
        self.head_dim, self.num_features, self.name = fmap.head_dim, fmap.num_features, fmap.name

    def forward(self, x, is_query=False, offset=0, total=None):
        return self.fmap(x, is_query=is_query, offset=offset, total=self.total)


RECALL_LAGS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
RECALL_TRIALS = 16      # explorer.forms.state.recall_probe's default
MEMORY_HORIZON = 2048   # the memory plot runs at least this far: a short text never shows the cache outgrow the state


@torch.inference_mode()
def state_view(sample, layer=0, head=0, map_label="elu+1", m=64, seed=0, gamma=0.97, strength=1.0, t=None,
               kind="none", lags=RECALL_LAGS) -> StateView:
    """Causal linear attention as an RNN on one head: norms, rank and recall per decay kind."""
    from ..forms import state

    k, v, fmap, layer, head, notices = _state_inputs(sample, layer, head, map_label, m, seed)
    n, d, dv = k.shape[0], k.shape[1], v.shape[1]
    traces, recall = {}, {}
    for kd, label in DECAY_LABELS.items():
        decay = _decay(kd, n, fmap, gamma, strength, seed, head)
        tr = state.state_trace(k, v, fmap, decay)
        traces[label] = {key: getattr(tr, key).numpy() for key in ("state_norm", "normaliser_norm", "effective_rank")}
        # Synthetic (random Gaussian keys and values, not the text): recall needs a known
        # target value, and lags far beyond a short text. An early key (written first, then
        # `lag` others) is what decay forgets; a recent one (written last, after `lag` others)
        # is what it keeps clean.
        early = state.recall_probe(fmap, d, list(lags), kd, gamma=float(gamma), strength=float(strength),
                                   seed=int(seed), position="early", trials=RECALL_TRIALS)
        recent = state.recall_probe(fmap, d, list(lags), kd, gamma=float(gamma), strength=float(strength),
                                    seed=int(seed), position="recent", trials=RECALL_TRIALS)
        recall[label] = {"lags": early.lags.numpy(), "cosine": early.cosine.numpy(),
                         "cosine_std": early.cosine_std.numpy(), "recent_cosine": recent.cosine.numpy(),
                         "recent_cosine_std": recent.cosine_std.numpy()}
    if lags:
        notices.append(f"Recall is probed with synthetic random keys and values (lags {min(lags)}–{max(lags)} "
                       f"tokens, {RECALL_TRIALS} trials), not with the text: it needs a known target and lags "
                       "longer than a sentence.")
    t = n - 1 if t is None else t
    step = state_step(sample, layer, head, map_label, m, seed, gamma, strength, t, kind)
    return StateView(
        ts=list(range(n)), mem_ts=list(range(1, max(n, MEMORY_HORIZON) + 1)), tokens=list(sample.tokens),
        traces=traces, recall=recall,
        kv_bytes=[state.kv_cache_bytes(i, d, dv) for i in range(1, max(n, MEMORY_HORIZON) + 1)],
        state_bytes=state.state_bytes(fmap.num_features, dv), feature_dim=fmap.num_features, step=step,
        notices=list(getattr(sample, "notices", [])) + notices,
        title=f"{getattr(sample, 'source', '')} · layer {layer}, head {head} · {map_label}, m = {fmap.num_features}",
    )
