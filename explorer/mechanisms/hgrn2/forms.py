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
from ..linear.decay import prepare_log_decay
from ..linear.unnormalised import chunked, recurrent

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
