"""Chapter 4: causal linear attention is an RNN.

    S_t = S_{t-1} + phi(k_t) v_t^T,   z_t = z_{t-1} + phi(k_t),   o_t = phi(q_t) S_t / phi(q_t) z_t

``step_to`` walks the engine's own ``linear.RecurrentState`` to token t and returns what
the chapter draws (the update, S_t, z_t, o_t); ``recurrent_vs_parallel`` runs the whole
sequence both ways through ``linear.linear_attention``; ``memory`` compares the fixed state
with the KV cache softmax keeps; ``recall`` wraps ``state_probes.recall_probe`` with a cache,
since the probe does not depend on the text (random keys of the head's dimension);
``generation_memory`` has the causal model itself, every layer linearized with its shipped
Hedgehog maps, continue a held-out passage token by token, and records what it keeps.
"""

from __future__ import annotations

import numpy as np
import torch

from ...diagnostics import state, state_probes
from ...mechanisms.linear import forms as linear
from ...checks import check_positive_int
from ..memo import LRU

RECALL_LAGS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
# The lecture's one recall experiment, quoted in chapters 4, 5 and 6: random keys and values
# of dimension RECALL_DIM (SmolLM2's head), and the cosine read back after RECALL_KEYS other
# keys (a quarter of d: the delta rule's d x d state still holds the early key there, the
# additive one has blurred it). Every chapter that quotes recall quotes this one.
RECALL_DIM = 64
RECALL_KEYS = 16
MEMORY_TOKENS = (1, 16, 64, 256, 1024, 4096, 16384, 65536)


@torch.inference_mode()
def step_to(q, k, v, feature_map, t: int) -> dict:
    """The recurrent state after token t (0-based) of one causal head (q, k: (N, d), v: (N, d_v))."""
    n = q.shape[0]
    t = int(t)
    if not 0 <= t < n:
        raise ValueError(f"t: token {t} does not exist (0..{n - 1})")
    fq, fk = feature_map(q[: t + 1], is_query=True), feature_map(k[: t + 1])
    rs = linear.RecurrentState.empty(1, fk.shape[-1], v.shape[-1], q.dtype)
    for i in range(t + 1):
        rs.step(fk[i:i + 1], v[i:i + 1])
    out = rs.read(fq[t:t + 1])[0]
    update = fk[t].unsqueeze(-1) * v[t].unsqueeze(-2)
    return {"t": t, "update": update.numpy(), "state": rs.s[0].numpy(), "normaliser": rs.z[0].numpy(),
            "phi_q": fq[t].numpy(), "phi_k": fk[t].numpy(), "output": out.numpy(),
            "numerator": (fq[t] @ rs.s[0]).numpy(), "denominator": float(fq[t] @ rs.z[0])}


@torch.inference_mode()
def recurrent_vs_parallel(q, k, v, feature_map) -> dict:
    """Causal outputs by the recurrent loop and by the parallel (masked quadratic) form, and
    their max |difference| (absolute and relative to max |O|)."""
    rec = linear.linear_attention(q, k, v, feature_map, causal=True, method="recurrent")
    par = linear.linear_attention(q, k, v, feature_map, causal=True, method="parallel")
    diff = float((rec.double() - par.double()).abs().max())
    scale = float(par.double().abs().max()) or 1.0
    return {"recurrent": rec.numpy(), "parallel": par.numpy(), "max_abs_diff": diff, "max_rel_diff": diff / scale}


def memory(head_dim: int, feature_dim: int, value_dim: int | None = None, tokens=MEMORY_TOKENS,
           layers: int = 1, heads: int = 1) -> dict:
    """KV-cache bytes after each t in ``tokens`` against the (constant) state bytes, float32."""
    dv = head_dim if value_dim is None else check_positive_int(value_dim, "d_v")
    ts = np.array(tokens, dtype=np.int64)
    kv = np.array([state.kv_cache_bytes(int(x), head_dim, dv, layers, heads) for x in ts], dtype=np.float64)
    st = state.state_bytes(feature_dim, dv, layers, heads)
    crossing = next((int(x) for x, b in zip(ts, kv) if b > st), None)
    return {"tokens": ts, "kv_bytes": kv, "state_bytes": float(st),
            "break_even_tokens": _break_even(head_dim, dv, feature_dim), "first_listed_above": crossing}


def _break_even(head_dim: int, dv: int, feature_dim: int) -> float:
    """t at which the KV cache t (d + d_v) equals the state m d_v + m."""
    return (feature_dim * dv + feature_dim) / (head_dim + dv)


_recalls = LRU(64)        # curves per setting: a few hundred floats each


def recall(feature_map, head_dim: int, kind: str = "linear", position: str = "early", lags=RECALL_LAGS,
           gamma: float = 0.97, strength: float = 1.0, seed: int = 0, trials: int = 16,
           lower_bound: float = state.HGRN2_LOWER_BOUND) -> dict:
    """``state_probes.recall_probe`` as plain arrays, remembered per setting (the probe does not
    depend on the text, so a redraw with a new text reuses it). ``kind`` is any update of
    ``mechanisms.state_kinds()``; ``lower_bound`` is HGRN2's forget-gate bound."""
    key = (feature_map.name, getattr(feature_map, "seed", None), getattr(feature_map, "orthogonal", None),
           feature_map.num_features, head_dim, kind, position, tuple(lags), float(gamma), float(strength),
           int(seed), int(trials), float(lower_bound))
    def probe():
        rc = state_probes.recall_probe(feature_map, head_dim, list(lags), kind, gamma=gamma, strength=strength, seed=seed,
                                position=position, trials=trials, lower_bound=lower_bound)
        return {"lags": rc.lags.numpy(), "cosine": rc.cosine.numpy(), "cosine_std": rc.cosine_std.numpy(),
                "kind": kind, "position": position}

    if feature_map.name == "hedgehog":         # learned maps differ with their weights: never remembered
        return probe()
    return _recalls.get(key, probe)


# The generation build: a held-out passage in the language of the sentence read, read at
# once, then GENERATED_TOKENS more decoded as an RNN by SmolLM2 with every layer linearized.
GENERATED_TOKENS = 24
_generations = LRU(4)


def generation_memory(corpus: str, new_tokens: int = GENERATED_TOKENS) -> dict:
    """Bytes kept after each generated token: the linearized model's states, and what the
    original model's KV cache holds at the same length (``explorer.linearize.generate``).
    ``corpus``: the language of the held-out texts the prompt comes from ("en", "zh"), that of
    the sentence read: an input like the sentence; the page's language only says the result."""
    return _generations.get((corpus, int(new_tokens)), lambda: _generation_memory(corpus, int(new_tokens)))


def _generation_memory(corpus: str, new_tokens: int) -> dict:
    from ...linearize import generate, texts
    prompt = texts.load(corpus, "heldout")[0]
    out = generate(prompt, new_tokens, "all", kind="hedgehog", window=0, mode="recurrent")
    start = len(out.prompt_ids)
    return {"context": [start + i + 1 for i in range(len(out.tokens))], "kv_bytes": list(out.kv_cache_bytes),
            "state_bytes": list(out.memory_bytes), "prompt_tokens": start, "new_tokens": len(out.tokens)}
