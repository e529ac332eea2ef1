"""Decoding a partly linearized model as an RNN: the article's "fixed-size state + O(1) per step".

Every softmax layer keeps its KV cache (keys and values of every token so far, growing by one
token per step); every linearized layer keeps only its state, per query head

    S = sum_{j <= t - w} phi(k_j) v_j^T   (m x d),      z = sum_{j <= t - w} phi(k_j)   (m),

plus, for a window of w exact softmax keys, the last w keys and values, and the first s (the
attention sinks): a size that does not depend on the length of the context. On each token a
linearized layer first adds the key that leaves its window to S and z, then reads the exact keys
and the state (``attention``'s definition).

``Decoder`` walks the model's own modules (embedding, per layer: norm, projections, RoPE,
attention, output projection, MLP; final norm, tied output) so that each layer can keep what
its kind needs. ``prefill`` reads a prompt at once (each layer in its parallel form, leaving
the same state a token-by-token walk would); ``step`` reads one more token.
"""

from __future__ import annotations

import torch

from .maps import LayerMaps
from .model import attention_modules, layer_output, output_weight, project


def grouped_softmax_step(q, k, v, scale: float) -> torch.Tensor:
    """Softmax attention of one new query per head, q (heads, 1, d), over a cache k, v
    (kv_heads, T, d): each key/value head's group of query heads read it together, so the
    cache is never copied per query head."""
    kv_heads, groups = k.shape[0], q.shape[0] // k.shape[0]
    weights = torch.softmax((q.view(kv_heads, groups, -1) @ k.transpose(-1, -2)) * scale, dim=-1)
    return (weights @ v).view(q.shape)


class SoftmaxCache:
    """A softmax layer's KV cache: keys and values (kv_heads, T, d) of every token so far."""

    def __init__(self, scale: float):
        self.scale = scale
        self.k = self.v = None

    def prefill(self, q, k, v) -> torch.Tensor:
        # The fused causal kernel: a long prompt never holds an N x N matrix of scores.
        self.k, self.v = k, v
        groups = q.shape[0] // k.shape[0]
        return torch.nn.functional.scaled_dot_product_attention(
            q, k.repeat_interleave(groups, 0), v.repeat_interleave(groups, 0), is_causal=True, scale=self.scale)

    def step(self, q, k, v) -> torch.Tensor:
        """q (heads, 1, d), k and v (kv_heads, 1, d) of the new token -> its output (heads, 1, d)."""
        self.k, self.v = torch.cat([self.k, k], 1), torch.cat([self.v, v], 1)
        return grouped_softmax_step(q, self.k, self.v, self.scale)

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.k, self.v))


class LinearState:
    """A linearized layer's state: S (heads, m, d) and z (heads, m, 1), the window's last w keys
    and values (kv_heads, <= w, d) and the s sink keys and values (kv_heads, <= s, d)."""

    def __init__(self, maps: LayerMaps, index: int):
        self.maps, self.index, self.window, self.sinks = maps, index, maps.window, maps.sinks
        self.s = self.z = self.k = self.v = self.sink_k = self.sink_v = None
        self.seen = 0

    def _features_of_keys(self, k):
        groups = self.maps.heads // k.shape[0]
        return self.maps.key(self.index, k.repeat_interleave(groups, 0))

    def _absorb(self, k, v):
        """Add keys (kv_heads, n, d) and their values to S and z."""
        groups = self.maps.heads // k.shape[0]
        fk = self._features_of_keys(k)
        self.s = self.s + fk.transpose(-1, -2) @ v.repeat_interleave(groups, 0)
        self.z = self.z + fk.sum(1).unsqueeze(-1)

    def prefill(self, q, k, v) -> torch.Tensor:
        out = layer_output(self.maps, self.index, q, k, v)
        m = self.maps.num_features
        self.s = q.new_zeros(self.maps.heads, m, v.shape[-1])
        self.z = q.new_zeros(self.maps.heads, m, 1)
        first = min(self.sinks, k.shape[1])
        split = max(first, k.shape[1] - self.window)
        self.sink_k, self.sink_v = k[:, :first], v[:, :first]
        self._absorb(k[:, first:split], v[:, first:split])
        self.k, self.v = k[:, split:], v[:, split:]
        self.seen = k.shape[1]
        return out

    def step(self, q, k, v) -> torch.Tensor:
        if self.seen < self.sinks:                           # a sink is still to come: this token
            self.sink_k, self.sink_v = torch.cat([self.sink_k, k], 1), torch.cat([self.sink_v, v], 1)
        elif self.window:
            self.k, self.v = torch.cat([self.k, k], 1), torch.cat([self.v, v], 1)
            if self.k.shape[1] > self.window:             # key t - w leaves the window
                self._absorb(self.k[:, :1], self.v[:, :1])
                self.k, self.v = self.k[:, 1:], self.v[:, 1:]
        else:
            self._absorb(k, v)
        self.seen += 1
        fq = self.maps.query(self.index, q)                  # (heads, 1, m)
        num, den = fq @ self.s, fq @ self.z
        if self.maps.exact:
            exact_k, exact_v = torch.cat([self.sink_k, self.k], 1), torch.cat([self.sink_v, self.v], 1)
            kv_heads, groups = k.shape[0], q.shape[0] // k.shape[0]
            logits = (q.view(kv_heads, groups, -1) @ exact_k.transpose(-1, -2)) * self.maps.scale
            weights = torch.exp(logits - logits.amax(-1, keepdim=True))          # (kv_heads, groups, <= s + w)
            num = num + (weights @ exact_v).view(q.shape)
            den = den + weights.sum(-1, keepdim=True).view(*q.shape[:-1], 1)
        return num / den

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.s, self.z, self.k, self.v, self.sink_k, self.sink_v))


class Decoder:
    """One sequence through a Llama-layout model whose ``layers`` run with ``maps``, the rest softmax."""

    def __init__(self, loaded, layers, maps: LayerMaps | None):
        self.loaded, self.net = loaded, loaded.model
        modules = attention_modules(loaded)
        linear = set(layers)
        if linear and maps is None:
            raise ValueError("maps: linearized layers need their feature maps")
        self.memory = [LinearState(maps, i) if i in linear else SoftmaxCache(attn.scaling)
                       for i, attn in enumerate(modules)]
        self.length = 0
        self.head = output_weight(loaded)

    def _run(self, ids: torch.Tensor, fill: bool) -> torch.Tensor:
        positions = torch.arange(self.length, self.length + ids.shape[0]).view(1, -1)
        h = self.net.embed_tokens(ids.view(1, -1))
        rope = self.net.rotary_emb(h, positions)
        for layer, memory in zip(self.net.layers, self.memory):
            attn = layer.self_attn
            q, k, v = project(attn, layer.input_layernorm(h), rope)
            out = (memory.prefill if fill else memory.step)(q[0], k[0], v[0])
            h = h + attn.o_proj(out.transpose(0, 1).reshape(1, out.shape[1], -1))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        self.length += ids.shape[0]
        return self.net.norm(h)[0, -1] @ self.head.T

    @torch.no_grad()
    def prefill(self, ids: torch.Tensor) -> torch.Tensor:
        """Read a prompt (N,) at once; the next-token logits (vocab,) after its last token."""
        if self.length:
            raise ValueError("prefill: this decoder has already read a prompt")
        return self._run(ids, fill=True)

    @torch.no_grad()
    def step(self, token: int) -> torch.Tensor:
        """Read one more token; the next-token logits (vocab,) after it."""
        return self._run(torch.tensor([int(token)]), fill=False)

    def nbytes(self) -> int:
        """Bytes every layer keeps now: KV caches and states."""
        return sum(memory.nbytes() for memory in self.memory)


def kv_cache_bytes(loaded, length: int, layers=range(0)) -> int:
    """Bytes the KV caches of every softmax layer (all but ``layers``) hold after ``length`` tokens."""
    config = loaded.model.config
    softmax_layers = config.num_hidden_layers - len(set(layers))
    return softmax_layers * 2 * config.num_key_value_heads * config.head_dim * length * 4


def state_bytes(loaded, length: int, layers, maps: LayerMaps | None) -> int:
    """Bytes a decoder with ``layers`` linearized keeps after ``length`` tokens (float32):
    softmax layers' KV caches, and per linearized layer S, z and the exact keys and values
    (the window's and the sinks')."""
    layers = set(layers)
    if not layers:
        return kv_cache_bytes(loaded, length)
    config = loaded.model.config
    per_linear = (maps.heads * maps.num_features * (config.head_dim + 1)
                  + 2 * config.num_key_value_heads * config.head_dim * min(length, maps.window + maps.sinks)) * 4
    return kv_cache_bytes(loaded, length, layers) + len(layers) * per_linear
