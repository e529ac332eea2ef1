"""Each layer's own attention inputs and output, read from the original model.

    capture(loaded, ids, layers) -> {layer: LayerData}

For a Llama-layout causal model (SmolLM2), LayerData holds, for one token sequence:

- q: (heads, N, d) after RoPE, as the model rotates them (its own ``apply_rotary_pos_emb``);
- k, v: (kv_heads, N, d), k after RoPE: grouped, not yet repeated over the query heads;
- out: (heads, N, d) the softmax attention output the model computed, read at the input of
  ``o_proj`` (so it is the model's own number, not a recomputation).

These are what attention transfer matches: a layer's linear attention on (q, k, v) should give
``out``. Every layer sees the original model's hidden states (the rest is frozen and exact).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import torch


@dataclass
class LayerData:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    out: torch.Tensor

    def repeated(self) -> tuple[torch.Tensor, torch.Tensor]:
        """k and v repeated over their group of query heads: query head h reads head h // group."""
        group = self.q.shape[0] // self.k.shape[0]
        return self.k.repeat_interleave(group, dim=0), self.v.repeat_interleave(group, dim=0)


def _heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(1, N, heads*d) -> (heads, N, d)."""
    _, n, width = x.shape
    return x[0].reshape(n, n_heads, width // n_heads).transpose(0, 1)


def capture(loaded, ids: list[int], layers=None) -> dict:
    """One forward pass of ``loaded`` (a Llama-layout model) on ``ids``; the LayerData of each
    layer in ``layers`` (default: all)."""
    if loaded.family != "llama":
        raise ValueError(f"model: attention transfer reads Llama-layout causal models, got {loaded.model_type}")
    config = loaded.model.config
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    modules = [layer.self_attn for layer in loaded.model.layers]
    wanted = range(len(modules)) if layers is None else [int(layer) for layer in layers]
    stores = {layer: {} for layer in wanted}

    def keep(store, name):
        def hook(_module, _inputs, output):
            store[name] = output.detach()
        return hook

    def keep_rotary(store):
        def hook(_module, _args, kwargs):
            store["rotary"] = tuple(t.detach() for t in kwargs["position_embeddings"])
        return hook

    def keep_output(store):
        def hook(_module, args):
            store["out"] = args[0].detach()
        return hook

    handles = []
    with loaded.lock, torch.no_grad():
        try:
            for layer, store in stores.items():
                attn = modules[layer]
                handles += [getattr(attn, f"{x}_proj").register_forward_hook(keep(store, x)) for x in "qkv"]
                handles.append(attn.register_forward_pre_hook(keep_rotary(store), with_kwargs=True))
                handles.append(attn.o_proj.register_forward_pre_hook(keep_output(store)))
            loaded.model(input_ids=torch.tensor([list(ids)]))
        finally:
            for handle in handles:
                handle.remove()
    found = {}
    for layer, store in stores.items():
        rotate = sys.modules[type(modules[layer]).__module__].apply_rotary_pos_emb
        q, k, v = _heads(store["q"], heads), _heads(store["k"], kv_heads), _heads(store["v"], kv_heads)
        cos, sin = store["rotary"]
        q, k = (x[0] for x in rotate(q[None], k[None], cos, sin))
        found[layer] = LayerData(q.float().contiguous(), k.float().contiguous(), v.float().contiguous(),
                                 _heads(store["out"], heads).float().contiguous())
    return found
