"""Gated linear attention read without a normaliser, o_t = S_t^T q_t with
S_t = diag(exp(a_t)) S_{t-1} + k_t v_t^T: HGRN2's recurrence (its key is 1 - f), and the
papers' own form of RetNet, GLA and the scalar gate (no feature map, no normaliser).

Both forms take (B, N, d_k) queries and keys, (B, N, d_v) values and the log decay
expanded to (B, N, d_k). The chunked form runs on the gated machinery of
``explorer.mechanisms.linear.forms`` (``GateFactors``: segments inside which every exponent is
bounded, factors on queries and keys, rescaled states between segments); only the block
product differs from the normalised form, since the state is read without dividing by q.z.
"""

from __future__ import annotations

import torch

from ...core.blocks import BLOCK_ELEMENTS
from .forms import GateFactors


def recurrent(q, k, v, log_forget) -> torch.Tensor:
    """Token by token on (B, N, d) inputs: the decoding view."""
    bsz, n, dk = q.shape
    s = q.new_zeros(bsz, dk, v.shape[-1])
    out = v.new_empty(bsz, n, v.shape[-1])
    forget = torch.exp(log_forget)
    for t in range(n):
        s = torch.baddbmm(s * forget[:, t, :, None], k[:, t, :, None], v[:, t, None, :])
        out[:, t] = (q[:, t, None, :] @ s).squeeze(-2)
    return out


def chunked(q, k, v, log_forget, chunk_size: int = 64) -> torch.Tensor:
    """The chunked form on (B, N, d) inputs, walked in blocks of whole chunks; inside a
    block, ``GateFactors`` turns the gates into bounded factors on q and k."""
    bsz, n, dk = q.shape
    dv = v.shape[-1]
    # Blocks of whole chunks, each array of a block within BLOCK_ELEMENTS numbers.
    rows = max(chunk_size, (BLOCK_ELEMENTS // (bsz * max(chunk_size, dk, dv))) // chunk_size * chunk_size)
    out = v.new_empty(bsz, n, dv)
    state = q.new_zeros(bsz, dk, dv)
    for g0 in range(0, n, rows):
        g1 = min(g0 + rows, n)
        gates = GateFactors(log_forget[:, g0:g1], chunk_size, rows)
        for i, (s, e) in enumerate(gates.segments):
            a, b = g0 + s, g0 + e
            fq = q[:, a:b] * gates.q_scale[:, s:e]
            fk = k[:, a:b] * gates.k_scale[:, s:e]
            out[:, a:b], state = _causal_sum(fq, fk, v[:, a:b], state * gates.enter[i], chunk_size)
            state = state * gates.leave[i]
    return out


def _causal_sum(fq, fk, v, state, c: int):
    """Unnormalised causal output of one segment, q_t^T (S + sum_{j <= t} k_j v_j^T), and
    the state after it: chunks of c tokens, the last one zero-padded (a zero key adds
    nothing; padded queries are dropped)."""
    bsz, g, m = fq.shape
    dv = v.shape[-1]
    nc = -(-g // c)
    pad = nc * c - g
    if pad:
        fq, fk, v = (torch.nn.functional.pad(t, (0, 0, 0, pad)) for t in (fq, fk, v))
    fq, fk, v = fq.reshape(bsz, nc, c, m), fk.reshape(bsz, nc, c, m), v.reshape(bsz, nc, c, dv)
    scores = torch.matmul(fq, fk.transpose(-1, -2)).tril_()                  # (B, nc, c, c)
    states = torch.cat([state.unsqueeze(1), torch.matmul(fk.transpose(-1, -2), v)], dim=1).cumsum_(1)
    out = torch.matmul(fq, states[:, :-1]).add_(torch.matmul(scores, v))
    return out.reshape(bsz, nc * c, dv)[:, :g], states[:, -1]
