"""Hybrids at the level of a whole model: replace the attention of chosen layers of the real
model by kernel attention and see what it costs the model's sentence embeddings; a greedy
search answers "which k layers should stay softmax". Swapping is done with forward hooks on
the attention modules, so removing the hooks gives back the original model exactly.

The map-level hybrid (a sliding window of exact softmax) is a feature map:
``explorer.maps.hybrid``.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from ..maps.base import FeatureMap
from ..text import Message


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
        raise ValueError(Message("learn.err_hybrid_family", family=repr(loaded.family)))
    modules = [layer.attention.self for layer in loaded.model.encoder.layer]
    n_heads = loaded.model.config.num_attention_heads
    handles, store = [], {}
    try:
        for index, fmap in layer_maps.items():
            if not 0 <= index < len(modules):
                raise ValueError(Message("learn.err_hybrid_no_layer", layer=index, count=len(modules)))
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
        raise ValueError(Message("learn.err_hybrid_budget", top=n_layers, got=budget))
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
