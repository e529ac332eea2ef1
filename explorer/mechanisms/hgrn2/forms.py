"""HGRN2's recurrence: GLA whose key is tied to its forget gate.

"HGRN2: Gated Linear RNNs with State Expansion" (Qin et al., 2024) keeps, per head, the
state

    S_t = diag(f_t) S_{t-1} + (1 - f_t) v_t^T,    o_t = S_t^T q_t,

with f_t in (0, 1]^{d_k} the forget gate (``explorer.mechanisms.hgrn2.gates.hgrn2_log_forget``) and
1 - f_t the input gate: what a feature forgets, it makes room for. That is gated linear
attention with per-feature log decay log f_t and the key k_t = 1 - f_t, without the
normaliser. The chunked form therefore runs on the gated machinery of
``explorer.mechanisms.linear.forms`` (``GateFactors``: segments inside which every exponent is
bounded, factors on queries and keys, rescaled states between segments); only the block
product differs, since HGRN2 reads the state without dividing by q.z.

1 - f is computed as -expm1(log f), exact even when f is within rounding of 1.
"""

from __future__ import annotations

import torch

from ...checks import as_float_tensor, check_positive_int, check_qkv
from ...core.blocks import BLOCK_ELEMENTS
from ..linear.decay import prepare_log_decay
from ..linear.forms import GateFactors

METHODS = ("chunked", "recurrent")


def hgrn2(q, f_log, v, *, method: str = "chunked", chunk_size: int = 64) -> torch.Tensor:
    """Outputs o_t = S_t^T q_t of HGRN2's recurrence, shaped (..., N, d_v).

    q: (..., N, d_k); f_log: log forget gates, <= 0, broadcastable to q's shape;
    v: (..., N, d_v). The state starts at zero.
    """
    if method not in METHODS:
        raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {str(method)[:40]!r}")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    q, f_log, v = _check_inputs(q, f_log, v)
    lead, n = q.shape[:-2], q.shape[-2]
    q2, a, v2 = (t.reshape(-1, n, t.shape[-1]) for t in (q, f_log, v))
    k = torch.expm1(a).neg_()                                            # 1 - f
    out = recurrent(q2, k, v2, a) if method == "recurrent" else chunked(q2, k, v2, a, chunk_size)
    return out.reshape(*lead, n, v.shape[-1])


def _check_inputs(q, f_log, v):
    if f_log is None:
        raise ValueError("f_log: HGRN2 needs its log forget gates, one per token and key feature")
    q, _, v = check_qkv(q, q, v, need_v=True)
    try:
        f_log = prepare_log_decay(as_float_tensor(f_log, "f_log"), tuple(q.shape[:-2]), q.shape[-2],
                                  q.shape[-1], q.dtype, q.device)
    except ValueError as exc:                   # the same checks as any log decay, under this name
        raise ValueError("f_log:" + str(exc).removeprefix("log_decay:")) from None
    return q, f_log.expand(q.shape), v


def hgrn2_reference(q, f_log, v) -> torch.Tensor:
    """The recurrence as written, diag(f) as a matrix, in float64: a reference for tests."""
    q, f_log, v = (t.double() for t in _check_inputs(q, f_log, v))
    f = torch.exp(f_log)
    s = torch.zeros(*q.shape[:-2], q.shape[-1], v.shape[-1], dtype=torch.float64)
    out = []
    for t in range(q.shape[-2]):
        ft = f[..., t, :]
        s = torch.diag_embed(ft) @ s + (1 - ft).unsqueeze(-1) * v[..., t, None, :]
        out.append((s.transpose(-1, -2) @ q[..., t, :, None])[..., 0])
    return torch.stack(out, dim=-2)


def recurrent(q, k, v, log_forget) -> torch.Tensor:
    """Token by token on (B, N, d) inputs with k = 1 - f: the decoding view."""
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
