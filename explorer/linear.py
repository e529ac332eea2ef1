"""O(N) linear attention: the same output as the N x N kernel map, without the N x N matrix.

Associativity is the whole trick: (phi(Q) phi(K)^T) V = phi(Q) (phi(K)^T V), and
phi(K)^T V is an m x d_v matrix whatever N is. Three forms compute it:

- ``parallel``: non-causal by associativity; causal by the masked quadratic form
  (the training-time "parallel" form, O(N^2), kept for comparison).
- ``chunked``: chunks of C tokens. Inside a chunk a masked C x C product, across chunks a
  running state S (m x d_v) and normaliser z (m). O(N C m + N m d) work, O(m d) state,
  and the sequence is walked in blocks of chunks so extra memory stays bounded.
- ``recurrent``: one token at a time, S_t = exp(a_t) S_{t-1} + phi(k_t) v_t^T: the RNN /
  decoding view with O(1) work per token.

``causal_cumsum`` (cumulative sum of outer products) is a reference only: it holds an
m x d_v matrix per token.

Decay a_t = log_decay_t <= 0 (see ``explorer.decay``) enters only through differences of
cumulative sums inside a chunk, exp(b_i - b_j) with j <= i, and through exp(b_i) and
exp(b_C - b_j), all with exponents <= 0: strong gates cannot overflow.
"""

from __future__ import annotations

import torch

from .attention import weights_from_features
from .checks import check_positive_int, check_qkv
from .decay import is_feature_dependent, prepare_log_decay

METHODS = ("parallel", "chunked", "recurrent")

# Upper bound on the elements of the largest temporary in one block of the chunked form.
# 2^18 float32 elements = 1 MiB: a long sequence runs in bounded extra memory, and the
# block's temporaries stay in cache (measured: 20 ms at N = 16K against 33 ms with 4 MiB).
BLOCK_ELEMENTS = 1 << 18


def linear_attention(q, k, v, feature_map, causal: bool = False, method: str = "chunked",
                     chunk_size: int = 64, log_decay=None) -> torch.Tensor:
    """Kernel attention output O = A^ V, shaped (..., N, d_v), computed in O(N).

    Rows whose normaliser is zero come out as inf/NaN, as in ``kernel_map``: they are
    reported, not hidden.
    """
    q, k, v = check_qkv(q, k, v, need_v=True)
    if method not in METHODS:
        raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {method!r}")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    if hasattr(feature_map, "pair_weights"):
        raise ValueError(f"feature_map: {feature_map.name!r} mixes exact softmax into the map and has no "
                         "linear form here; use explorer.attention.kernel_map")
    batch, n = tuple(q.shape[:-2]), q.shape[-2]
    decay = prepare_log_decay(log_decay, batch, n, feature_map.num_features, q.dtype, q.device)
    if decay is not None and not causal:
        raise ValueError("log_decay: decay and gates apply to causal attention only; set causal=True")

    if method == "chunked":
        flat = _flatten(q, k, v, decay)
        out = chunked(*flat, feature_map, causal, chunk_size)
        return out.reshape(*batch, n, v.shape[-1])
    fq, fk = feature_map(q, is_query=True), feature_map(k)
    if method == "parallel":
        return parallel(fq, fk, v, causal, decay)
    flat = _flatten(fq, fk, v, decay)
    return recurrent(*flat, causal).reshape(*batch, n, v.shape[-1])


def _flatten(a, b, v, decay):
    """Merge the leading (batch, head) dimensions into one, expanding the decay to match."""
    n = a.shape[-2]
    a2, b2, v2 = a.reshape(-1, n, a.shape[-1]), b.reshape(-1, n, b.shape[-1]), v.reshape(-1, n, v.shape[-1])
    if decay is not None:
        decay = decay.expand(*a.shape[:-2], n, decay.shape[-1]).reshape(-1, n, decay.shape[-1])
    return a2, b2, v2, decay


def parallel(fq, fk, v, causal: bool, decay=None) -> torch.Tensor:
    """Non-causal: phi(Q) (phi(K)^T V) / phi(Q) z. Causal: the masked quadratic form."""
    if causal:
        w = weights_from_features(fq, fk, True, decay)
        return (w @ v) / w.sum(-1, keepdim=True)
    kv = fk.transpose(-1, -2) @ v                   # (..., m, d_v): independent of N
    z = fk.sum(-2)                                  # (..., m)
    return (fq @ kv).div_(fq @ z.unsqueeze(-1))


def recurrent(fq, fk, v, decay, causal: bool = True) -> torch.Tensor:
    """Token by token on (B, N, m) features; a plain loop that is its own reference."""
    bsz, n, m = fq.shape
    state = RecurrentState.empty(bsz, m, v.shape[-1], fq.dtype, fq.device)
    out = torch.empty(bsz, n, v.shape[-1], dtype=fq.dtype, device=fq.device)
    for t in range(n):
        state.step(fk[:, t], v[:, t], None if decay is None else decay[:, t])
        if causal:
            out[:, t] = state.read(fq[:, t])
    if not causal:
        out = state.read(fq)
    return out


class RecurrentState:
    """The RNN state of causal linear attention: S (B, m, d_v) and z (B, m)."""

    def __init__(self, s: torch.Tensor, z: torch.Tensor):
        self.s, self.z = s, z

    @classmethod
    def empty(cls, batch: int, m: int, dv: int, dtype=torch.float32, device=None):
        return cls(torch.zeros(batch, m, dv, dtype=dtype, device=device),
                   torch.zeros(batch, m, dtype=dtype, device=device))

    def step(self, fk_t, v_t, log_decay_t=None):
        """S <- exp(a_t) (.) S + phi(k_t) v_t^T; z <- exp(a_t) (.) z + phi(k_t).

        ``fk_t`` is (B, m), ``v_t`` (B, d_v), ``log_decay_t`` (B, 1 or m) or None.
        """
        if log_decay_t is not None:
            g = torch.exp(log_decay_t)
            self.s = self.s * g.unsqueeze(-1)
            self.z = self.z * g
        self.s = self.s + fk_t.unsqueeze(-1) * v_t.unsqueeze(-2)
        self.z = self.z + fk_t

    def step_block(self, fk, v):
        """Add every token of a block (B, G, m) at once: the non-causal sum, no decay."""
        self.s = self.s + fk.transpose(-1, -2) @ v
        self.z = self.z + fk.sum(-2)

    def read(self, fq):
        """o = phi(q) S / phi(q) z for fq shaped (B, m) or (B, N, m)."""
        if fq.dim() == 2:
            return (fq.unsqueeze(-2) @ self.s).squeeze(-2) / (fq * self.z).sum(-1, keepdim=True)
        return (fq @ self.s) / (fq @ self.z.unsqueeze(-1))


def chunked(q, k, v, decay, feature_map, causal: bool, chunk_size: int) -> torch.Tensor:
    """The chunked form on (B, N, d) inputs; features are taken block by block."""
    bsz, n, _ = q.shape
    m, dv = feature_map.num_features, v.shape[-1]
    per_token = max(chunk_size, m, dv) * (m if decay is not None and is_feature_dependent(decay) else 1)
    block = max(chunk_size, (BLOCK_ELEMENTS // (bsz * per_token)) // chunk_size * chunk_size)
    out = torch.empty(bsz, n, dv, dtype=q.dtype, device=q.device)

    def features(start, stop):
        fq = feature_map(q[:, start:stop], is_query=True, offset=start, total=n)
        fk = feature_map(k[:, start:stop], offset=start, total=n)
        return fq, fk

    carry = RecurrentState.empty(bsz, m, dv, q.dtype, q.device)
    if not causal:
        # Two passes: accumulate phi(K)^T V and z over all blocks, then read every query.
        for start in range(0, n, block):
            _, fk = features(start, start + block)
            carry.step_block(fk, v[:, start:start + block])
        for start in range(0, n, block):
            fq, _ = features(start, start + block)
            out[:, start:start + block] = carry.read(fq)
        return out

    for start in range(0, n, block):
        stop = min(start + block, n)
        fq, fk = features(start, stop)
        a = None if decay is None else decay[:, start:stop]
        out[:, start:stop] = _causal_block(fq, fk, v[:, start:stop], a, carry, chunk_size)
    return out


def _causal_block(fq, fk, v, a, carry: RecurrentState, c: int) -> torch.Tensor:
    """Causal output of one block of G tokens, given the state ``carry`` before it.

    The block is cut into chunks of c tokens (the last one zero-padded: a zero key adds
    nothing to any state, and padded queries are dropped). ``carry`` is advanced past the
    block.
    """
    bsz, g, m = fq.shape
    dv = v.shape[-1]
    nc = -(-g // c)
    pad = nc * c - g
    if pad:
        fq, fk, v = (torch.nn.functional.pad(t, (0, 0, 0, pad)) for t in (fq, fk, v))
        if a is not None:
            a = torch.nn.functional.pad(a, (0, 0, 0, pad))
    # A column of ones appended to v makes every product below carry the normaliser too:
    # the last column of phi(q) S' is phi(q).z, so numerator and denominator come out of
    # the same matmuls, and S' = [S | z] is one state.
    v1 = torch.cat([v, torch.ones_like(v[..., :1])], dim=-1).view(bsz, nc, c, dv + 1)
    fq, fk = fq.view(bsz, nc, c, m), fk.view(bsz, nc, c, m)
    state = torch.cat([carry.s, carry.z.unsqueeze(-1)], dim=-1)                # (B, m, dv+1)

    if a is None:
        scores = (fq @ fk.transpose(-1, -2)).tril_()                       # (B, nc, c, c), causal
        kv = fk.transpose(-1, -2) @ v1                                      # (B, nc, m, dv+1)
        # State before each chunk: the carry plus every earlier chunk of this block.
        s_before = kv.cumsum(1).sub_(kv).add_(state.unsqueeze(1))
        state = s_before[:, -1] + kv[:, -1]
        q_in = fq
    else:
        r = a.shape[-1]
        mask = torch.ones(c, c, dtype=torch.bool, device=fq.device).tril()
        b = a.view(bsz, nc, c, r).double().cumsum(2)                        # inclusive, <= 0
        b_end = b[:, :, -1:, :]                                             # (B, nc, 1, r)
        if r == 1:
            diff = (b[..., 0].unsqueeze(-1) - b[..., 0].unsqueeze(-2)).masked_fill(~mask, float("-inf"))
            scores = (fq @ fk.transpose(-1, -2)) * torch.exp(diff).to(fq.dtype)
        else:
            diff = (b.unsqueeze(3) - b.unsqueeze(2)).masked_fill(~mask.unsqueeze(-1), float("-inf"))
            scores = torch.einsum("bnif,bnjf,bnijf->bnij", fq, fk, torch.exp(diff).to(fq.dtype))
        q_in = fq * torch.exp(b).to(fq.dtype)                               # exp(b_i) <= 1
        k_out = fk * torch.exp(b_end - b).to(fk.dtype)                       # exp(b_C - b_j) <= 1
        kv = k_out.transpose(-1, -2) @ v1
        chunk_decay = torch.exp(b_end[:, :, 0, :]).to(fq.dtype).unsqueeze(-1)  # (B, nc, r, 1)
        s_before = torch.empty_like(kv)
        for j in range(nc):       # a short scan over chunks: S' <- g S' + local state
            s_before[:, j] = state
            state = chunk_decay[:, j] * state + kv[:, j]

    carry.s, carry.z = state[..., :dv].contiguous(), state[..., dv].contiguous()
    num = torch.matmul(q_in, s_before).add_(scores @ v1)                   # (B, nc, c, dv+1)
    out = (num[..., :dv] / num[..., dv:]).reshape(bsz, nc * c, dv)
    return out[:, :g]


def causal_cumsum(fq, fk, v) -> torch.Tensor:
    """Reference only: S_t = sum_{j<=t} phi(k_j) v_j^T held for every t, O(N m d_v) memory."""
    s = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)           # (..., N, m, dv)
    z = torch.cumsum(fk, dim=-2)
    return (fq.unsqueeze(-2) @ s).squeeze(-2) / (fq * z).sum(-1, keepdim=True)
