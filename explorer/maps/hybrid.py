"""Hybrids of softmax and linear attention, at the level of one map and of a whole model.

Map level (Based-style): exact softmax weights inside a sliding window of w keys, the
linear kernel phi(q).phi(k) for every key outside it, normalised together over the row:

    w_ij = exp(s_ij)          if key j is in the window of query i,
           phi(q_i).phi(k_j)  otherwise,                 A^_ij = w_ij / sum_l w_il.

The inner map should target exp(s) itself (Taylor-2 by default, or FAVOR+) so that the
two kinds of weight share a scale. w = 0 is the inner kernel map; w >= N is exact softmax.

Model level: replace the attention of chosen layers of the real model by kernel attention
and see what it costs the model's sentence embeddings; a greedy search answers "which k
layers should stay softmax". Swapping is done with forward hooks on the attention modules,
so removing the hooks gives back the original model exactly.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from .base import SPECS, FeatureMap, create, register


class SlidingWindow(FeatureMap):
    """Exact softmax over a window of ``window`` keys, the ``inner`` kernel elsewhere.

    Causal: the window of query i is keys i-w+1..i. Non-causal: keys with |i - j| < w.
    Its features are the inner map's (queries unscaled, so the linear part keeps the
    scale of exp(s)); ``pair_weights`` gives the mixed weights the reference map uses.
    """

    spec = SPECS["sliding_window"]

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0,
                 window: int = 4, inner: str = "taylor2"):
        super().__init__(head_dim)
        window = int(window)
        if window < 0:
            raise ValueError(f"window: must be 0 or more keys, got {window}")
        if inner == self.name:
            raise ValueError("inner: a sliding window cannot wrap another sliding window")
        self.window = window
        self.inner = create(inner, head_dim, num_features=num_features, seed=seed)

    @property
    def num_features(self) -> int:
        return self.inner.num_features

    def features(self, x, is_query):
        return self.inner(x)

    def pair_weights(self, q, k, causal: bool) -> torch.Tensor:
        """Unnormalised mixed weights (..., N, N), every row scaled by one positive constant."""
        n = q.shape[-2]
        s = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
        lin = self.inner(q) @ self.inner(k).transpose(-1, -2)
        i = torch.arange(n, device=q.device)
        offset = i.view(-1, 1) - i.view(1, -1)                         # i - j
        allowed = offset >= 0 if causal else torch.ones_like(offset, dtype=torch.bool)
        in_window = allowed & (offset.abs() < self.window)
        # One constant per query keeps exp() in range; it cancels in the normalised row.
        c = s.masked_fill(~in_window, float("-inf")).amax(-1, keepdim=True).clamp_min(0.0)
        w = torch.where(in_window, torch.exp(s - c), lin * torch.exp(-c))
        return w.masked_fill(~allowed, 0.0)


register(SlidingWindow)


# ---------------------------------------------------------------------------------------
# Model level


def _linear_attention_hook(fmap: FeatureMap, n_heads: int, store: dict, index: int):
    """A forward hook that replaces a BERT self-attention output by kernel attention.

    It recomputes q, k, v from the layer's input with the layer's own projections, so the
    model's weights are untouched; the kernel map (non-causal, as BERT is) replaces softmax.
    The model's own attention recorder may already have seen the softmax weights, so the
    kernel map of the last forward is kept in ``store[index]`` instead. Only forwards run
    by the thread that installed the hook are changed: the app serves other users from
    the same model at the same time, and their requests must see the original model.
    """
    owner = threading.get_ident()

    def hook(module, args, kwargs, output):
        if threading.get_ident() != owner:
            return output
        hidden = args[0] if args else kwargs["hidden_states"]
        b, n, width = hidden.shape
        split = lambda t: t.view(b, n, n_heads, width // n_heads).transpose(1, 2)
        q, k, v = split(module.query(hidden)), split(module.key(hidden)), split(module.value(hidden))
        fq, fk = fmap(q, is_query=True), fmap(k)
        w = fq @ fk.transpose(-1, -2)
        a = w / w.sum(-1, keepdim=True)
        out = (a @ v).transpose(1, 2).reshape(b, n, width)
        store[index] = a
        return (out, a)
    return hook


@contextmanager
def linear_layers(loaded, layer_maps: dict):
    """Within the block, the layers in ``layer_maps`` (index -> feature map) run linear.

    ``loaded`` is ``explorer.sources.text.get_model()``'s result (a BERT-family model).
    Yields a dict that holds, after each forward, the kernel maps of the swapped layers.
    On exit the hooks are removed and the model is exactly what it was.
    """
    if loaded.family != "bert":
        raise ValueError(f"model: layer swapping supports BERT-family models, not {loaded.family!r}")
    modules = [layer.attention.self for layer in loaded.model.encoder.layer]
    n_heads = loaded.model.config.num_attention_heads
    handles, store = [], {}
    try:
        for index, fmap in layer_maps.items():
            if not 0 <= index < len(modules):
                raise ValueError(f"layers: layer {index} does not exist (the model has {len(modules)})")
            handles.append(modules[index].register_forward_hook(
                _linear_attention_hook(fmap, n_heads, store, index), with_kwargs=True))
        yield store
    finally:
        for h in handles:
            h.remove()


def embed(loaded, texts, with_attentions: bool = False, swapped: dict | None = None):
    """Sentence embeddings (mean-pooled last hidden state, unit length), one text at a time
    so there is no padding; optionally every layer's attention maps per text (the kernel
    maps for swapped layers, from the dict ``linear_layers`` yields)."""
    embeddings, attentions = [], []
    with loaded.lock, torch.no_grad():
        for text in texts:
            ids = loaded.tokenizer.encode(text).ids[: loaded.position_limit]
            out = loaded.model(input_ids=torch.tensor([ids]), output_attentions=with_attentions)
            e = out.last_hidden_state[0].mean(0)
            embeddings.append(e / e.norm())
            if with_attentions:
                maps = [(swapped or {}).get(i, a)[0] for i, a in enumerate(out.attentions)]
                attentions.append(torch.stack(maps))
    return torch.stack(embeddings), attentions


@dataclass
class HybridReport:
    """What swapping some layers to linear does to the model, over a set of texts."""

    linear_layers: tuple
    cosine_mean: float            # mean cosine of sentence embeddings to the original model
    cosine_min: float
    drift: list                   # per layer: mean row total variation of attention vs original


def evaluate(loaded, texts, layer_maps: dict, reference=None) -> HybridReport:
    """Embedding cosine and per-layer attention drift with ``layer_maps`` made linear.

    ``reference`` is ``embed(loaded, texts, with_attentions=True)`` of the unmodified model
    (computed when not given; pass it to reuse it across many evaluations).
    """
    ref_emb, ref_att = reference or embed(loaded, texts, with_attentions=True)
    with linear_layers(loaded, layer_maps) as swapped:
        emb, att = embed(loaded, texts, with_attentions=True, swapped=swapped)
    cos = (emb * ref_emb).sum(-1)
    drift = torch.stack([0.5 * (a - r).abs().sum(-1).mean((-1, -2)) for a, r in zip(att, ref_att)]).mean(0)
    return HybridReport(tuple(sorted(layer_maps)), float(cos.mean()), float(cos.min()), drift.tolist())


def greedy_softmax_layers(loaded, texts, map_for_layer, budget: int, progress=None):
    """Start with every layer linear; add back, one at a time, the softmax layer that helps
    the embedding cosine most, up to ``budget`` layers. ``map_for_layer(i)`` gives layer i's map.

    Returns a list of (kept softmax layers, HybridReport), starting with k = 0.
    """
    n_layers = len(loaded.model.encoder.layer)
    if not 0 <= budget <= n_layers:
        raise ValueError(f"budget: must lie in 0..{n_layers}, got {budget}")
    reference = embed(loaded, texts, with_attentions=True)
    kept: list[int] = []
    maps = {i: map_for_layer(i) for i in range(n_layers)}
    steps = [((), evaluate(loaded, texts, maps, reference))]
    total = sum(n_layers - j for j in range(budget)) or 1
    done = 0
    for _ in range(budget):
        best = None
        for cand in range(n_layers):
            if cand in kept:
                continue
            trial = {i: f for i, f in maps.items() if i not in kept and i != cand}
            report = evaluate(loaded, texts, trial, reference)
            if best is None or report.cosine_mean > best[1].cosine_mean:
                best = (cand, report)
            done += 1
            if progress is not None:
                progress(done / total, f"trying softmax in layer {cand}")
        kept.append(best[0])
        steps.append((tuple(sorted(kept)), best[1]))
    return steps
