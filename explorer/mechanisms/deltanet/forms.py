"""Forgetting by overwriting: the delta rule (DeltaNet) and its gated form (Gated DeltaNet).

Additive linear attention writes S_t = S_{t-1} + k_t v_t^T: once d_k keys are stored, new
pairs pile on top of old ones and recall blurs. The delta rule first reads what the state
already returns for k_t, then replaces it:

    S_t = exp(a_t) (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T,    o_t = S_t^T q_t,

with beta_t in (0, 1] the writing strength and a_t = log_decay_t <= 0 an optional forget
gate (a = 0: DeltaNet; a < 0: Gated DeltaNet). With beta = 1 and a unit key, the value
stored under k_t is overwritten by v_t exactly. Nothing is normalised or scaled here:
DeltaNet L2-normalises q and k, and the caller does that.

Three forms compute the same outputs:
- ``delta_rule_reference``: the formula above, I - beta k k^T written out, in float64.
- ``recurrent``: one token at a time with the rank-one update, O(d_k d_v) per token.
- ``chunked``: chunks of C tokens. Written as S_t = exp(a_t) S_{t-1} + k_t w_t^T, the
  update's corrected values w_t = beta_t (v_t - exp(a_t) S_{t-1}^T k_t) of one chunk solve
  the unit lower-triangular system (I + A) W = diag(beta) V - diag(beta gamma) K S_0, with
  A_ti = beta_t exp(G_t - G_i) k_t.k_i for i < t, G the cumulative log decay inside the
  chunk, gamma_t = exp(G_t) and S_0 the state before it. So W = U - W_k S_0 with
  U = T diag(beta) V and W_k = T diag(beta gamma) K, T = (I + A)^-1 (the WY / UT
  transform): T, U and W_k come out of batched products for all chunks at once, no loop
  over tokens. What runs in sequence, chunk by chunk, is W = U - W_k S_0 and
  S <- gamma_C S_0 + K_d^T W (K_d: the keys decayed to the chunk's end); the outputs
  O = gamma Q S_0 + P W, P_ti = exp(G_t - G_i) q_t.k_i (i <= t), are batched again at the
  end. Every exponent is a difference G_t - G_i with i <= t, or G_t itself, so it is <= 0:
  nothing can overflow, however strong the gates.

``delta_step`` is one step with its two parts apart (what it erases, what it writes), for
drawing the update.
"""

from __future__ import annotations

import math

import torch

from ...checks import as_float_tensor, check_finite, check_positive_int, check_qkv
from ...core.blocks import BLOCK_ELEMENTS

METHODS = ("chunked", "recurrent")

# Chunk length of the chunked form. At d = 64 on a CPU, 32 beats 64 by about 10%: the
# per-chunk products (C x C and C x d) shrink, and the loop over chunks, twice as long,
# is still cheap.
CHUNK_SIZE = 32


def delta_rule(q, k, v, beta, log_decay=None, *, method: str = "chunked",
               chunk_size: int = CHUNK_SIZE) -> torch.Tensor:
    """Outputs o_t = S_t^T q_t of the (gated) delta rule, shaped (B, H, N, d_v).

    q, k: (B, H, N, d_k); v: (B, H, N, d_v); beta: (B, H, N) or a number; log_decay: None
    (no forgetting), a number, or (B, H, N), every value <= 0. Any leading dimensions work
    in place of (B, H). The state starts at zero.
    """
    if method not in METHODS:
        raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {str(method)[:40]!r}")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    q, k, v, beta, log_decay = _check_inputs(q, k, v, beta, log_decay)
    lead, n = q.shape[:-2], q.shape[-2]
    flat = [t.reshape(-1, n, t.shape[-1]) for t in (q, k, v)]
    b = beta.reshape(-1, n)
    a = None if log_decay is None else log_decay.reshape(-1, n)
    if method == "recurrent":
        out = recurrent(*flat, b, a)
    else:
        out = chunked(*flat, b, a, chunk_size)
    return out.reshape(*lead, n, v.shape[-1])


def _check_inputs(q, k, v, beta, log_decay):
    """Shapes, dtypes and values, with beta and log_decay expanded to q.shape[:-1]."""
    q, k, v = check_qkv(q, k, v, need_v=True)
    target = q.shape[:-1]
    beta = _per_token(beta, "beta", target, q)
    if log_decay is not None:
        log_decay = _per_token(log_decay, "log_decay", target, q)
        high = float(log_decay.max())
        if high > 0:
            raise ValueError(f"log_decay: the log of a decay must be <= 0, got a maximum of {high:.4g}")
    return q, k, v, beta, log_decay


def _per_token(x, name: str, target: torch.Size, like: torch.Tensor) -> torch.Tensor:
    """A number or a tensor broadcastable to (..., N), as a finite tensor of that shape."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        t = torch.tensor(float(x), dtype=like.dtype, device=like.device)   # no float32 rounding
    else:
        t = as_float_tensor(x, name).to(dtype=like.dtype, device=like.device)
    try:
        full = torch.broadcast_shapes(t.shape, target)
    except RuntimeError:
        full = None
    if full != target:
        raise ValueError(f"{name}: shape {tuple(t.shape)} does not match (..., N) = {tuple(target)}, "
                         "one value per token")
    check_finite(t, name)
    return t.expand(target)


# ---------------------------------------------------------------------------------------
# One step, and the plain forms
# ---------------------------------------------------------------------------------------

def delta_step(state, k, v, beta, log_decay=0.0):
    """One update with its parts apart: (new_state, erased, written).

    state: (..., d_k, d_v); k: (..., d_k); v: (..., d_v); beta and log_decay: numbers or
    (...). erased = beta k (k^T S) is what the state returned for k, scaled by beta: the
    part the update removes. written = beta k v^T is the part it adds. Then
    new_state = exp(log_decay) (S - erased) + written.
    """
    s = as_float_tensor(state, "state")
    k = as_float_tensor(k, "k").to(s.dtype)
    v = as_float_tensor(v, "v").to(s.dtype)
    if s.dim() < 2 or k.shape != s.shape[:-1] or v.shape != s.shape[:-2] + s.shape[-1:]:
        raise ValueError(f"state, k, v: expected shapes (..., d_k, d_v), (..., d_k), (..., d_v), got "
                         f"{tuple(s.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    beta = as_float_tensor(beta, "beta").to(s.dtype)
    a = as_float_tensor(log_decay, "log_decay").to(s.dtype)
    for t, name in ((s, "state"), (k, "k"), (v, "v"), (beta, "beta"), (a, "log_decay")):
        check_finite(t, name)
    if a.numel() and float(a.max()) > 0:
        raise ValueError(f"log_decay: the log of a decay must be <= 0, got a maximum of {float(a.max()):.4g}")
    b = beta[..., None, None]
    erased = b * k.unsqueeze(-1) * (k.unsqueeze(-2) @ s)            # beta k (k^T S)
    written = b * k.unsqueeze(-1) * v.unsqueeze(-2)                 # beta k v^T
    return torch.exp(a)[..., None, None] * (s - erased) + written, erased, written


def delta_rule_reference(q, k, v, beta, log_decay=None) -> torch.Tensor:
    """The update exactly as written, I - beta k k^T formed as a matrix, in float64.

    Same arguments as ``delta_rule``; returns float64 outputs (..., N, d_v). A reference for
    the tests, O(N d_k^2 d_v).
    """
    q, k, v, beta, log_decay = _check_inputs(q, k, v, beta, log_decay)
    q, k, v, beta = q.double(), k.double(), v.double(), beta.double()
    decay = torch.ones_like(beta) if log_decay is None else torch.exp(log_decay.double())
    dk, n = k.shape[-1], k.shape[-2]
    eye = torch.eye(dk, dtype=torch.float64)
    s = torch.zeros(*k.shape[:-2], dk, v.shape[-1], dtype=torch.float64)
    out = []
    for t in range(n):
        kt, vt, bt = k[..., t, :, None], v[..., t, None, :], beta[..., t, None, None]
        s = decay[..., t, None, None] * ((eye - bt * kt @ kt.transpose(-1, -2)) @ s) + bt * kt @ vt
        out.append((s.transpose(-1, -2) @ q[..., t, :, None])[..., 0])
    return torch.stack(out, dim=-2)


def recurrent(q, k, v, beta, log_decay=None) -> torch.Tensor:
    """Token by token on (B, N, d) inputs, beta and log_decay (B, N): the decoding view.

    S_t = exp(a_t) S_{t-1} + k_t u_t^T with u_t = beta_t (v_t - exp(a_t) S_{t-1}^T k_t),
    the same update as the formula, one rank-one correction per token.
    """
    bsz, n, dk = k.shape
    s = k.new_zeros(bsz, dk, v.shape[-1])
    out = v.new_empty(bsz, n, v.shape[-1])
    decay = None if log_decay is None else torch.exp(log_decay)
    for t in range(n):
        kt = k[:, t].unsqueeze(-1)                                   # (B, d_k, 1)
        if decay is not None:
            s = s * decay[:, t, None, None]
        recalled = (kt.transpose(-1, -2) @ s)                        # k^T S: (B, 1, d_v)
        u = beta[:, t, None, None] * (v[:, t].unsqueeze(-2) - recalled)
        s = torch.baddbmm(s, kt, u)
        out[:, t] = (q[:, t].unsqueeze(-2) @ s).squeeze(-2)
    return out


# ---------------------------------------------------------------------------------------
# The chunked form
# ---------------------------------------------------------------------------------------

def chunked(q, k, v, beta, log_decay, chunk_size: int = CHUNK_SIZE) -> torch.Tensor:
    """The chunked form on (B, N, d) inputs, beta and log_decay (B, N).

    The sequence is walked in blocks of whole chunks, so temporaries stay bounded whatever
    N is; the state is carried from block to block.
    """
    bsz, n, dk = k.shape
    dv = v.shape[-1]
    c = min(chunk_size, n)
    # Blocks of whole chunks, each array of a block within BLOCK_ELEMENTS numbers (1 MiB in
    # float32: a block's arrays stay in cache between the products; 4x larger blocks ran
    # about 20% slower).
    rows = max(c, (BLOCK_ELEMENTS // (bsz * max(c, dk + dv))) // c * c)
    out = v.new_empty(bsz, n, dv)
    state = k.new_zeros(bsz, dk, dv)
    for s in range(0, n, rows):
        e = min(s + rows, n)
        a = None if log_decay is None else log_decay[:, s:e]
        state = _block(q[:, s:e], k[:, s:e], v[:, s:e], beta[:, s:e], a, state, c, out[:, s:e])
    return out


def _block(q, k, v, beta, log_decay, state, c: int, dst) -> torch.Tensor:
    """Outputs of one block of G tokens into ``dst`` (B, G, d_v); returns the state after it.

    The block is cut into chunks of c tokens, the last one zero-padded: a padded token has
    k = 0, beta = 0 and no decay, so it changes no state, and its output is dropped.
    """
    bsz, g, dk = k.shape
    dv = v.shape[-1]
    nc = -(-g // c)
    pad = nc * c - g
    if pad:
        q, k, v = (torch.nn.functional.pad(t, (0, 0, 0, pad)) for t in (q, k, v))
        beta = torch.nn.functional.pad(beta, (0, pad))
        if log_decay is not None:
            log_decay = torch.nn.functional.pad(log_decay, (0, pad))
    q, k, v = q.reshape(bsz, nc, c, dk), k.reshape(bsz, nc, c, dk), v.reshape(bsz, nc, c, dv)
    b = beta.reshape(bsz, nc, c, 1)
    kt = k.transpose(-1, -2)

    # Decay inside each chunk, every exponent <= 0 (see the module doc).
    if log_decay is None:
        within = gamma = tail = None
    else:
        cum = log_decay.reshape(bsz, nc, c).double().cumsum(-1)                  # G_t
        diff = cum.unsqueeze(-1) - cum.unsqueeze(-2)                              # G_t - G_i
        upper = torch.ones(c, c, dtype=torch.bool, device=k.device).triu_(1)
        within = diff.masked_fill_(upper, -math.inf).to(k.dtype).exp_()         # exp(G_t - G_i), i <= t
        gamma = cum.exp().to(k.dtype).unsqueeze(-1)                              # exp(G_t)
        tail = (cum[..., -1:] - cum).exp().to(k.dtype).unsqueeze(-1)             # exp(G_C - G_i)

    # A_ti = beta_t exp(G_t - G_i) k_t.k_i and P_ti = exp(G_t - G_i) q_t.k_i. Only A's
    # strictly lower part is ever read, so its upper part is left as it comes; P is masked
    # to i <= t (the decay weights are already 0 above the diagonal).
    a = torch.matmul(k * b, kt)
    p = torch.matmul(q, kt)
    if within is None:
        p.tril_()
    else:
        a.mul_(within)
        p.mul_(within)

    # The WY / UT transform: U = (I + A)^-1 diag(beta) V, W_k = (I + A)^-1 diag(beta) (gamma K),
    # diag(beta) folded into the inverse's columns.
    t_beta = unit_lower_inverse(a).mul_(b.transpose(-1, -2))
    u = torch.matmul(t_beta, v)
    wk = torch.matmul(t_beta, k if gamma is None else k * gamma)

    # In sequence, chunk by chunk: W = U - W_k S (the values corrected by what the state
    # already holds), then S <- gamma_C S + K_d^T W with K_d = exp(G_C - G_i) k_i, the keys
    # as seen from the chunk's end. Two small products per chunk; the rest is batched.
    kd_t = kt if tail is None else (k * tail).transpose(-1, -2)
    g_end = None if gamma is None else gamma[:, :, -1:]
    states = k.new_empty(nc + 1, bsz, dk, dv)                # chunk-major, so each step writes
    w = k.new_empty(nc, bsz, c, dv)                          # one contiguous block
    states[0] = state
    # Per-chunk views taken once (indexing inside the loop costs as much as the products).
    u_j, wk_j, kd_j, w_j, s_j = u.unbind(1), wk.unbind(1), kd_t.unbind(1), w.unbind(0), states.unbind(0)
    g_j = None if g_end is None else g_end.unbind(1)
    for j in range(nc):
        torch.baddbmm(u_j[j], wk_j[j], s_j[j], alpha=-1.0, out=w_j[j])
        kept = s_j[j] if g_j is None else s_j[j] * g_j[j]
        torch.baddbmm(kept, kd_j[j], w_j[j], out=s_j[j + 1])

    # O = gamma Q S_0 + P W for the state S_0 before each chunk.
    qg = q if gamma is None else q * gamma
    out = torch.matmul(qg, states[:-1].transpose(0, 1)).add_(torch.matmul(p, w.transpose(0, 1)))
    dst.copy_(out.reshape(bsz, nc * c, dv)[:, :g])
    return states[-1]


def unit_lower_inverse(a: torch.Tensor, base: int = 16) -> torch.Tensor:
    """(I + tril(a, -1))^-1 for a (..., c, c), mostly by matmuls: only the strictly lower
    part of ``a`` is read.

    The diagonal blocks of size ``base`` are inverted by one batched triangular solve;
    then blocks are merged pairwise: for [[L11, 0], [L21, L22]] with inverted halves T11,
    T22 the inverse is [[T11, 0], [-T22 L21 T11, T22]], all blocks of one size at once, so
    each of the log2(c / base) levels is two batched products. (A triangular solve against
    the whole right-hand side costs about twice as much at c = 64, d = 64.) c is padded up
    to a power-of-two multiple of ``base``; the padding is the identity.
    """
    c = a.shape[-1]
    base = min(base, 1 << (c - 1).bit_length())
    size = base * (1 << (-(-c // base) - 1).bit_length())
    if size != c:
        a = torch.nn.functional.pad(a, (0, size - c, 0, size - c))
    lead = a.shape[:-2]
    t = a.new_zeros(a.shape)

    def diagonal_blocks(x, s):                                  # (..., size/s, s, s) views
        nb = size // s
        return x.view(*lead, nb, s, nb, s).diagonal(dim1=-4, dim2=-2).movedim(-1, -3)

    eye = torch.eye(base, dtype=a.dtype, device=a.device)
    blocks = diagonal_blocks(a, base)
    diagonal_blocks(t, base).copy_(
        torch.linalg.solve_triangular(blocks + eye, eye.expand(blocks.shape), upper=False, unitriangular=True))
    s = base
    while s < size:
        tb, ab = diagonal_blocks(t, 2 * s), diagonal_blocks(a, 2 * s)
        tb[..., s:, :s] = -torch.matmul(tb[..., s:, s:], torch.matmul(ab[..., s:, :s], tb[..., :s, :s]))
        s *= 2
    return t[..., :c, :c]
