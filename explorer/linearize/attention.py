"""Causal attention with a sliding window of exact softmax keys and a linear kernel outside it.

For query i, scaled logits s_ij = scale * q_i . k_j, a window of w keys, the first s keys
kept exact too (attention sinks) and the features phi_q = phi(q_i), phi_k = phi(k_j) of a
layer's map (``maps.LayerMaps``):

    W      = { j <= i : j < s  or  j > i - w }   the sinks and the w most recent keys
    L      = { j : s <= j <= i - w }             every other older key
    c_i    = max_{j in W} s_ij                   (only when W can hold a key: w > 0 or s > 0)
    y_i    = [ sum_{j in W} exp(s_ij - c_i) v_j + sum_{j in L} (phi_q . phi_k) v_j ]
             / [ sum_{j in W} exp(s_ij - c_i)     + sum_{j in L}  phi_q . phi_k     ]

w = s = 0 is pure causal linear attention (W empty, L = every j <= i, no c_i). This is the
LoLCATs-style hybrid: the window is softmax exactly; the kernel carries the long range. Most
heads of a trained LLM pour a large share of every row onto token 0 whatever it holds (an
attention sink); a kernel of smooth features cannot give one key that share, so s = 1 keeps it
exact (StreamingLLM's observation). The relative weight of the two parts is the map's to learn
(``maps`` folds a learned per-head factor into the query features, so nothing here needs to
know of it).

As a recurrence, which is how a linearized layer decodes: keep S = sum_{j in L} phi_k v_j^T
(m x d_v), z = sum_{j in L} phi_k (m), the s sink keys and values and the last w ones; on
token t, first add key t - w (the one leaving the window, unless it is a sink) to S and z,
then read the exact keys and the state.

``windowed_attention`` is the fast form: the linear part by chunks (a running state across
chunks, a masked product inside), the window part by query blocks that see only their band of
keys, so memory stays O(N (C + w)) rather than O(N^2). ``windowed_attention_reference`` is the
plain float64 double loop it is tested against. Both take q, k, v and the features of every
query head, shaped (heads, N, d) and (heads, N, m): keys and values of grouped-query models
already repeated over their group of query heads.
"""

from __future__ import annotations

import torch

from ..checks import check_positive_int

CHUNK = 64


def _count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name}: expected a whole number >= 0, got {str(value)[:40]}")
    return value


def _check(q, k, v, fq, fk, window) -> int:
    window = _count(window, "window")
    if q.dim() != 3 or k.shape != q.shape or v.shape[:2] != q.shape[:2]:
        raise ValueError(f"q, k, v: expected (heads, N, d) with equal heads and N, got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if fq.shape[:2] != q.shape[:2] or fk.shape != fq.shape:
        raise ValueError(f"fq, fk: expected (heads, N, m) matching q, got {tuple(fq.shape)}, {tuple(fk.shape)}")
    return window


def windowed_attention_reference(q, k, v, fq, fk, window: int, scale: float, sinks: int = 0) -> torch.Tensor:
    """The definition above, one query and one key at a time, in float64: (heads, N, d_v)."""
    window, sinks = _check(q, k, v, fq, fk, window), _count(sinks, "sinks")
    q, k, v, fq, fk = (t.double() for t in (q, k, v, fq, fk))
    heads, n, _ = q.shape
    out = torch.zeros(heads, n, v.shape[-1], dtype=torch.float64)
    for h in range(heads):
        for i in range(n):
            inside = [j for j in range(i + 1) if j < sinks or j > i - window]
            logits = [scale * float(q[h, i] @ k[h, j]) for j in inside]
            top = max(logits) if logits else 0.0
            num = torch.zeros(v.shape[-1], dtype=torch.float64)
            den = 0.0
            for j, s in zip(inside, logits):
                weight = torch.exp(torch.tensor(s - top, dtype=torch.float64))
                num += weight * v[h, j]
                den += float(weight)
            for j in range(sinks, i - window + 1):
                weight = fq[h, i] @ fk[h, j]
                num += weight * v[h, j]
                den += float(weight)
            out[h, i] = num / den
    return out


def windowed_attention(q, k, v, fq, fk, window: int, scale: float, chunk_size: int = CHUNK,
                       sinks: int = 0) -> torch.Tensor:
    """The same output in O(N (C + w + s)) memory: (heads, N, d_v) in the inputs' dtype."""
    window, sinks = _check(q, k, v, fq, fk, window), _count(sinks, "sinks")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    if sinks:                   # sink keys never enter the kernel: zero features
        fk = torch.cat([fk.new_zeros(fk.shape[0], min(sinks, fk.shape[1]), fk.shape[2]), fk[:, sinks:]], dim=1)
    num, den = _linear_part(fq, fk, v, window, chunk_size)
    if window or sinks:
        w_num, w_den = _window_part(q, k, v, window, sinks, scale, chunk_size)
        num, den = num + w_num, den + w_den
    return num / den


def _linear_part(fq, fk, v, window, chunk):
    """sum_{j <= i - w} (phi_q . phi_k) [v_j, 1]: the kernel's numerator and normaliser.

    Keys shifted right by w (w zero-feature keys in front) turn "j <= i - w" into plain
    causality, so the chunked causal form applies unchanged."""
    heads, n, m = fq.shape
    if window:
        pad = fk.new_zeros(heads, min(window, n), m)
        fk = torch.cat([pad, fk[:, : n - pad.shape[1]]], dim=1)
        v = torch.cat([v.new_zeros(heads, pad.shape[1], v.shape[-1]), v[:, : n - pad.shape[1]]], dim=1)
    state = fq.new_zeros(heads, m, v.shape[-1])
    norm = fq.new_zeros(heads, m)
    num = torch.empty(heads, n, v.shape[-1], dtype=fq.dtype)
    den = torch.empty(heads, n, 1, dtype=fq.dtype)
    lower = torch.ones(chunk, chunk, dtype=torch.bool).tril()
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        a, b, vv = fq[:, start:stop], fk[:, start:stop], v[:, start:stop]
        scores = (a @ b.transpose(-1, -2)).masked_fill(~lower[: stop - start, : stop - start], 0.0)
        num[:, start:stop] = scores @ vv + a @ state
        den[:, start:stop] = scores.sum(-1, keepdim=True) + (a @ norm.unsqueeze(-1))
        state = state + b.transpose(-1, -2) @ vv
        norm = norm + b.sum(1)
    return num, den


def _window_part(q, k, v, window, sinks, scale, chunk):
    """sum_{j in W} exp(s_ij - c_i) [v_j, 1], by query blocks over the sinks and their band of keys."""
    heads, n, _ = q.shape
    num = torch.empty(heads, n, v.shape[-1], dtype=q.dtype)
    den = torch.empty(heads, n, 1, dtype=q.dtype)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        first = max(0, start - window + 1)
        cols = torch.cat([torch.arange(min(sinks, first)), torch.arange(first, stop)])
        rows = torch.arange(start, stop).unsqueeze(-1)
        inside = (cols <= rows) & ((cols > rows - window) | (cols < sinks))
        logits = (q[:, start:stop] @ k[:, cols].transpose(-1, -2)) * scale
        logits = logits.masked_fill(~inside, float("-inf"))
        c = logits.amax(-1, keepdim=True)
        weights = torch.exp(logits - c)
        num[:, start:stop] = weights @ v[:, cols]
        den[:, start:stop] = weights.sum(-1, keepdim=True)
    return num, den


def softmax_attention(q, k, v, scale: float) -> torch.Tensor:
    """Causal softmax attention, (heads, N, d_v): what a linearized layer imitates."""
    n = q.shape[-2]
    logits = (q @ k.transpose(-1, -2)) * scale
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    return torch.softmax(logits.masked_fill(future, float("-inf")), dim=-1) @ v
