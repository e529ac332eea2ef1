"""Where each family of models keeps Q, K and V, and how to read them out of a forward pass.

    capture(loaded, ids) -> (q, k, v, attentions, scales)     stacked over layers

Every family returns what its softmax really sees: q and k are the vectors whose scaled dot
products the model turns into attention probabilities, so softmax(q k^T * scale) reproduces
the model's own ``output_attentions`` (the text source checks it on every read).

- bert (BERT, RoBERTa; bidirectional): the outputs of ``attention.self.{query,key,value}``.
- gpt2 (causal): the fused ``c_attn`` projection, split into [q | k | v].
- llama (Llama, Qwen2, Mistral, SmolLM; causal): ``q_proj``, ``k_proj``, ``v_proj``, then the
  rotary position embedding applied to q and k exactly as the model applies it (the model's
  own ``apply_rotary_pos_emb`` with the cos/sin it was handed). Keys and values come in fewer
  heads than queries (grouped-query attention): query head h reads key/value head
  h // (heads / kv_heads), so each key/value head is repeated over its group of query heads.
"""

from __future__ import annotations

import sys

import torch


def attention_modules(loaded) -> list[torch.nn.Module]:
    """Each layer's self-attention module (it owns the projections and the scaling)."""
    if loaded.family == "gpt2":
        return [block.attn for block in loaded.model.h]
    if loaded.family == "llama":
        return [layer.self_attn for layer in loaded.model.layers]
    return [layer.attention.self for layer in loaded.model.encoder.layer]


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(1, N, heads*d) -> (heads, N, d)."""
    _, n, width = x.shape
    return x[0].reshape(n, n_heads, width // n_heads).transpose(0, 1)


def _keep_output(store: dict, name: str):
    def hook(_module, _inputs, output):
        store[name] = output.detach()
    return hook


def _keep_rotary(store: dict):
    def hook(_module, _args, kwargs):
        store["rotary"] = tuple(t.detach() for t in kwargs["position_embeddings"])
    return hook


def _hooks(loaded, attn: torch.nn.Module, store: dict) -> list:
    if loaded.family == "gpt2":           # c_attn is one fused Conv1D giving [q | k | v]
        return [attn.c_attn.register_forward_hook(_keep_output(store, "qkv"))]
    if loaded.family == "llama":
        handles = [getattr(attn, f"{x}_proj").register_forward_hook(_keep_output(store, x)) for x in "qkv"]
        handles.append(attn.register_forward_pre_hook(_keep_rotary(store), with_kwargs=True))
        return handles
    return [getattr(attn, name).register_forward_hook(_keep_output(store, name)) for name in ("query", "key", "value")]


def _llama_heads(attn: torch.nn.Module, store: dict, config) -> list[torch.Tensor]:
    """(q, k, v) of one layer, each (heads, N, d): rotated like the model does, KV heads repeated."""
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    q, k, v = split_heads(store["q"], heads), split_heads(store["k"], kv_heads), split_heads(store["v"], kv_heads)
    rotate = sys.modules[type(attn).__module__].apply_rotary_pos_emb   # the model's own RoPE
    cos, sin = store["rotary"]
    q, k = (x[0] for x in rotate(q[None], k[None], cos, sin))
    group = heads // kv_heads            # query head h reads key/value head h // group
    return [q, k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)]


def capture(loaded, ids: list[int]):
    """Forward pass with hooks: (q, k, v, attentions, per-layer logit scales), stacked over layers."""
    modules = attention_modules(loaded)
    config = loaded.model.config
    n_heads = config.num_attention_heads
    outputs: list[dict] = [{} for _ in modules]

    with loaded.lock, torch.no_grad():  # no_grad, not inference_mode: later code may train on q, k
        handles = []
        for attn, store in zip(modules, outputs):
            handles += _hooks(loaded, attn, store)
        try:
            out = loaded.model(input_ids=torch.tensor([ids]), output_attentions=True)
        finally:
            for handle in handles:
                handle.remove()

    if not out.attentions:  # pragma: no cover - only if eager attention was not honoured
        raise RuntimeError("the model returned no attention probabilities (is attn_implementation eager?)")
    qkv = []
    for attn, store in zip(modules, outputs):
        if loaded.family == "llama":
            qkv.append(_llama_heads(attn, store, config))
            continue
        parts = store["qkv"].chunk(3, dim=-1) if "qkv" in store else (store["query"], store["key"], store["value"])
        qkv.append([split_heads(p, n_heads) for p in parts])
    q, k, v = (torch.stack([layer[i] for layer in qkv]).float().contiguous() for i in range(3))
    attentions = torch.stack([a[0] for a in out.attentions]).float()
    # The logit scale each layer applies (GPT-2 can scale by 1/layer too); 1/sqrt(d) usually.
    scales = torch.tensor([float(getattr(m, "scaling", q.shape[-1] ** -0.5)) for m in modules])
    return q, k, v, attentions, scales
