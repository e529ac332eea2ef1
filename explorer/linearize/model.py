"""A causal LLM with chosen layers' softmax attention replaced by causal linear attention.

``linearized(loaded, layers, maps)`` is a context manager: inside it the attention modules of
the chosen layers of a Llama-layout model (SmolLM2) attend as ``maps`` say (per-layer feature
maps and a window of w exact softmax keys, LoLCATs-style; w = 0 is pure linear: see
``attention``), and on exit the model is exactly what it was. The replacement is an instance
attribute ``forward`` deleted again on exit; no weight is touched, so the logits afterwards
are bit-identical to the logits before.

A linearized layer keeps the model's own projections and RoPE, and changes only how the
rotated queries attend to the rotated keys. Grouped keys and values (SmolLM2-135M: 3 key/value
heads for 9 query heads) are repeated to the query heads before the map: every query head has
its own map and, when decoding, its own state.

Only forwards run by the thread that entered the block are changed: the app serves other
visitors from the same model at the same time, and they must see the original.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import torch

from .attention import windowed_attention
from ..sources.models import shown
from .maps import MODEL, LayerMaps, check_kind, check_model, check_sinks, check_window, layer_maps


def attention_modules(loaded) -> list:
    """The self-attention module of every layer of a Llama-layout model, in order."""
    if loaded.family != "llama":
        raise ValueError(f"model: linearizing needs a causal Llama-layout model (SmolLM2), not {loaded.family!r}")
    return [layer.self_attn for layer in loaded.model.layers]


def project(attn, hidden: torch.Tensor, position_embeddings) -> tuple[torch.Tensor, ...]:
    """Queries (B, H, N, d) and keys, values (B, Hkv, N, d) of one layer, RoPE applied as the model does."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    shape = (*hidden.shape[:-1], -1, attn.head_dim)
    q = attn.q_proj(hidden).view(shape).transpose(1, 2)
    k = attn.k_proj(hidden).view(shape).transpose(1, 2)
    v = attn.v_proj(hidden).view(shape).transpose(1, 2)
    cos, sin = position_embeddings
    q, k = apply_rotary_pos_emb(q, k, cos, sin)
    return q, k, v


def layer_output(maps: LayerMaps, index: int, q, k, v) -> torch.Tensor:
    """Output (heads, N, d) of linearized layer ``index`` for one sequence's rotated q (heads, N, d)
    and k, v (kv_heads, N, d): the maps' definition of windowed linear attention."""
    groups = q.shape[0] // k.shape[0]
    k, v = k.repeat_interleave(groups, 0), v.repeat_interleave(groups, 0)
    return windowed_attention(q, k, v, maps.query(index, q), maps.key(index, k), maps.window, maps.scale,
                              sinks=maps.sinks)


def _linear_forward(attn, maps: LayerMaps, index: int, original, owner: int):
    """A replacement for one LlamaAttention.forward: same projections and RoPE, linear attention."""

    def forward(hidden_states, position_embeddings=None, attention_mask=None, past_key_values=None, **kwargs):
        if threading.get_ident() != owner:
            return original(hidden_states, position_embeddings=position_embeddings,
                            attention_mask=attention_mask, past_key_values=past_key_values, **kwargs)
        if past_key_values is not None and past_key_values.get_seq_length() > 0:
            raise ValueError("past_key_values: a linearized layer keeps a state, not a KV cache; "
                             "decode with explorer.linearize.generate")
        if hidden_states.shape[0] != 1:
            raise ValueError(f"batch: a linearized layer reads one sequence at a time, got {hidden_states.shape[0]}")
        q, k, v = project(attn, hidden_states, position_embeddings)
        out = layer_output(maps, index, q[0], k[0], v[0])
        return attn.o_proj(out.transpose(0, 1).reshape(1, out.shape[1], -1)), None
    return forward


@contextmanager
def linearized(loaded, layers, maps: LayerMaps):
    """Within the block, every layer index in ``layers`` runs linear attention with ``maps``.

    ``loaded`` is ``explorer.sources.models.get_model()``'s result for a Llama-layout model.
    The caller holds ``loaded.lock`` (one forward at a time per model). On exit each swapped
    module's own forward is back, whatever happened inside.
    """
    modules = attention_modules(loaded)
    for index in layers:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(modules):
            raise ValueError(f"layers: layer {index!r} does not exist (the model has {len(modules)}, 0 to {len(modules) - 1})")
    owner = threading.get_ident()
    swapped = []
    try:
        for index in sorted(set(layers)):
            attn = modules[index]
            if "forward" in vars(attn):
                raise RuntimeError(f"layers: layer {index} is already linearized by another block")
            attn.forward = _linear_forward(attn, maps, index, attn.forward, owner)
            swapped.append(attn)
        yield
    finally:
        for attn in swapped:
            del attn.forward


MAX_TOKENS = 2048       # the longest text one call reads (longer ones are cut): bounded work


def resolve(model: str, layers, kind, window: int, sinks: int = 0):
    """(loaded model, sorted layer indices, maps) for the entry points, every argument checked.

    ``layers``: [] is the original model, "all" every layer, else layer indices. ``kind`` is a
    map kind (``maps.LINEARIZE_KINDS``) or a ``LayerMaps`` itself (its own window and sinks then)."""
    from ..sources.models import get_model

    check_model(model)
    loaded = get_model(model)
    count = len(attention_modules(loaded))
    if isinstance(layers, str):
        if layers != "all":
            raise ValueError(f"layers: expected 'all' or a list of layer indices, got {shown(layers)}")
        layers = range(count)
    chosen = sorted(set(layers))
    for index in chosen:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise ValueError(f"layers: layer {shown(index)} does not exist (the model has {count}, 0 to {count - 1})")
    if isinstance(kind, LayerMaps):
        return loaded, chosen, kind
    check_kind(kind)
    check_window(window)
    check_sinks(sinks)
    return loaded, chosen, layer_maps(kind, window, model, sinks) if chosen else None


def token_ids(loaded, text: str, max_tokens: int = MAX_TOKENS) -> torch.Tensor:
    """The token ids (N,) of ``text``, cut to ``max_tokens``; ValueError when it has none."""
    if not isinstance(text, str):
        raise ValueError(f"text: expected a string, got {type(text).__name__}")
    ids = loaded.tokenizer.encode(text).ids[:max_tokens]
    if not ids:
        raise ValueError("text: it has no tokens")
    return torch.tensor(ids)


def logits(text: str, layers, kind="hedgehog", window: int = 0, model: str = MODEL,
           max_tokens: int = MAX_TOKENS, sinks: int = 0) -> torch.Tensor:
    """Next-token logits (N, vocab) of ``text`` through the model with ``layers`` linearized
    (their parallel forward); ``layers=[]`` is the original model, "all" every layer."""
    loaded, chosen, maps = resolve(model, layers, kind, window, sinks)
    ids = token_ids(loaded, text, max_tokens)
    with loaded.lock, torch.no_grad(), linearized(loaded, chosen, maps):
        return logits_of(loaded, ids)


def logits_of(loaded, ids: torch.Tensor) -> torch.Tensor:
    """Next-token logits (N, vocab) of one sequence of token ids (N,), with whatever layers are
    linearized around the call. SmolLM2 ties its output to its input embedding."""
    net = loaded.model
    hidden = net(input_ids=ids.view(1, -1), use_cache=False).last_hidden_state[0]
    return hidden @ output_weight(loaded).T


def output_weight(loaded) -> torch.Tensor:
    """The language-model head's weight: the input embedding, which the Llama-layout models
    read here tie to their output (the base model is loaded without a separate head)."""
    if not getattr(loaded.model.config, "tie_word_embeddings", False):
        raise ValueError(f"model: {loaded.name} has a separate output head, which is not loaded here; "
                         "linearizing reads models whose output is tied to their embedding (SmolLM2)")
    return loaded.model.embed_tokens.weight
