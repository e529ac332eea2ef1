"""Causal softmax attention as a mechanism: the exact map, a float64 loop, and two forms that
never hold the N x N matrix (token by token over the KV cache, and key chunks with a running
maximum)."""

from __future__ import annotations

import torch

from ..recurrence import Recurrence
from .map import softmax_map
from . import STATE_KIND, WRITES

CHUNK_SIZE = 64


class Softmax(Recurrence):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES
    has_normaliser = True

    def _map(self, q, k, **params) -> torch.Tensor:
        return softmax_map(q, k, causal=True)

    def _reference(self, q, k, v, **params) -> torch.Tensor:
        q, k, v = q.double(), k.double(), v.double()
        scale = q.shape[-1] ** -0.5
        out = []
        for i in range(q.shape[-2]):
            s = (k[..., :i + 1, :] @ q[..., i, :, None])[..., 0] * scale          # (..., i + 1)
            w = torch.exp(s - s.amax(-1, keepdim=True))
            out.append((w.unsqueeze(-1) * v[..., :i + 1, :]).sum(-2) / w.sum(-1, keepdim=True))
        return torch.stack(out, dim=-2)

    def _output(self, q, k, v, method, **params) -> torch.Tensor:
        return recurrent(q, k, v) if method == "recurrent" else chunked(q, k, v)


def recurrent(q, k, v) -> torch.Tensor:
    """One query at a time against the keys seen so far: decoding with a KV cache."""
    scale = q.shape[-1] ** -0.5
    out = v.new_empty(*v.shape)
    for i in range(q.shape[-2]):
        s = (k[..., :i + 1, :] @ q[..., i, :, None]) * scale                        # (..., i + 1, 1)
        out[..., i, :] = (torch.softmax(s, dim=-2) * v[..., :i + 1, :]).sum(-2)
    return out


def chunked(q, k, v, chunk_size: int = CHUNK_SIZE) -> torch.Tensor:
    """Queries in chunks of C; each chunk reads the keys chunk by chunk, keeping a running
    maximum of its logits, the sum of exp(s - max) and the weighted values (rescaled when
    the maximum grows), so no more than C x C logits exist at a time."""
    n = q.shape[-2]
    scale = q.shape[-1] ** -0.5
    out = v.new_empty(*v.shape)
    for a in range(0, n, chunk_size):
        b = min(a + chunk_size, n)
        qc = q[..., a:b, :] * scale
        top = q.new_full((*q.shape[:-2], b - a, 1), float("-inf"))
        total = q.new_zeros(*q.shape[:-2], b - a, 1)
        acc = v.new_zeros(*v.shape[:-2], b - a, v.shape[-1])
        for c in range(0, b, chunk_size):
            e = min(c + chunk_size, b)
            s = qc @ k[..., c:e, :].transpose(-1, -2)                                # (..., b - a, e - c)
            if e > a:                                                                # the diagonal chunk
                rows = torch.arange(a, b, device=q.device).unsqueeze(-1)
                cols = torch.arange(c, e, device=q.device).unsqueeze(0)
                s = s.masked_fill(cols > rows, float("-inf"))
            new_top = torch.maximum(top, s.amax(-1, keepdim=True))
            keep = torch.exp(top - new_top)
            w = torch.exp(s - new_top)
            total = total * keep + w.sum(-1, keepdim=True)
            acc = acc * keep + w @ v[..., c:e, :]
            top = new_top
        out[..., a:b, :] = acc / total
    return out


MECHANISM = Softmax()
