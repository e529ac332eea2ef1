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

Non-causal, ``parallel`` and ``chunked`` are one computation: two passes over blocks of
rows (accumulate phi(K)^T V and z, then read every query), with the features of a block
written into one reused buffer, so the elementwise work stays in cache and nothing of size
N is allocated but the output. ``causal_cumsum`` (cumulative sum of outer products) is a
reference only: it holds an m x d_v matrix per token.

Decay (see ``explorer.mechanisms.linear.decay``) costs the chunked form almost nothing beyond the ungated
one: the weight exp(B_i - B_j) of key j for query i (B the cumulative log decay) is
factored as exp(B_i - c) on the query times exp(c - B_j) on the key, and the ungated
algorithm runs on the rescaled features. The sequence is cut into segments inside which
B falls by at most ``GATE_SPAN``, with c mid-way, so every factor lies in
[exp(-GATE_SPAN/2), exp(GATE_SPAN/2)]: far from float32's overflow (exp(88)) and from its
smallest normal number (exp(-87)), whatever the gates. Between segments the state is
rescaled by exponents <= 0. Strong gates only make segments shorter (down to one token),
never inexact.
"""

from __future__ import annotations

import numpy as np
import torch

from ...checks import check_finite, check_positive_int, check_qkv
from .decay import prepare_log_decay
from .map import weights_from_features
from ...core.grad import records_grad
from ...core.blocks import BLOCK_ELEMENTS

METHODS = ("parallel", "chunked", "recurrent")

# Upper bound on the elements of the largest temporary in one block of the chunked forms:

# Largest fall of the cumulative log decay inside one gated segment (see the module doc):
# factors stay within exp(+-30) = 1e(+-13).
GATE_SPAN = 60.0


def linear_attention(q, k, v, feature_map, causal: bool = False, method: str = "chunked",
                     chunk_size: int = 64, log_decay=None) -> torch.Tensor:
    """Kernel attention output O = A^ V, shaped (..., N, d_v), computed in O(N).

    Rows whose normaliser is zero come out as inf/NaN, as in ``kernel_map``: they are
    reported, not hidden. Inputs are validated here, once; the forms below trust them. The
    non-causal form checks finiteness itself, on each block while it sits in cache.
    """
    q, k, v = check_qkv(q, k, v, need_v=True, finite=False)
    if method not in METHODS:
        raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {method!r}")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    if hasattr(feature_map, "pair_weights"):
        raise ValueError(f"feature_map: {feature_map.name!r} mixes exact softmax into the map and has no "
                         "linear form here; use explorer.diagnostics.attention.kernel_map")
    batch, n = tuple(q.shape[:-2]), q.shape[-2]
    decay = prepare_log_decay(log_decay, batch, n, feature_map.num_features, q.dtype, q.device)
    if decay is not None and not causal:
        raise ValueError("log_decay: decay and gates apply to causal attention only; set causal=True")
    if causal or method == "recurrent":
        _check_finite(q, k, v)

    shape = (*batch, n, v.shape[-1])
    if method == "recurrent" or (method == "parallel" and causal):
        fq, fk = feature_map(q, is_query=True), feature_map(k)
        if method == "parallel":
            return parallel(fq, fk, v, True, decay)
        return recurrent(*_flatten(fq, fk, v, decay), causal).reshape(shape)
    return chunked(*_flatten(q, k, v, decay), feature_map, causal, chunk_size).reshape(shape)


def _check_finite(q, k, v):
    for t, name in ((q, "q"), (k, "k"), (v, "v")):
        check_finite(t, name)


def _flatten(a, b, v, decay):
    """Merge the leading (batch, head) dimensions into one, expanding the decay to match."""
    n = a.shape[-2]
    a2, b2, v2 = a.reshape(-1, n, a.shape[-1]), b.reshape(-1, n, b.shape[-1]), v.reshape(-1, n, v.shape[-1])
    if decay is not None:
        decay = decay.expand(*a.shape[:-2], n, decay.shape[-1]).reshape(-1, n, decay.shape[-1])
    return a2, b2, v2, decay


def parallel(fq, fk, v, causal: bool, decay=None) -> torch.Tensor:
    """The plain forms on whole feature tensors. Non-causal: phi(Q) (phi(K)^T V) / phi(Q) z.
    Causal: the masked quadratic form."""
    if causal:
        w = weights_from_features(fq, fk, True, decay)
        return (w @ v) / w.sum(-1, keepdim=True)
    kv = fk.transpose(-1, -2) @ v                   # (..., m, d_v): independent of N
    z = fk.sum(-2)                                  # (..., m)
    return (fq @ kv) / (fq @ z.unsqueeze(-1))


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


def _block_rows(bsz: int, width: int, chunk_size: int) -> int:
    """Rows per block: a multiple of the chunk size, with at most BLOCK_ELEMENTS per array."""
    return max(chunk_size, (BLOCK_ELEMENTS // (bsz * width)) // chunk_size * chunk_size)


def chunked(q, k, v, decay, feature_map, causal: bool, chunk_size: int) -> torch.Tensor:
    """The chunked form on (B, N, d) inputs; features are taken block by block."""
    if not causal:
        return noncausal(q, k, v, feature_map, chunk_size)
    bsz, n, _ = q.shape
    m, dv = feature_map.num_features, v.shape[-1]
    block_rows = _block_rows(bsz, max(chunk_size, m, dv), chunk_size)
    out = q.new_empty(bsz, n, dv)
    fq_buf, fk_buf = q.new_empty(bsz, min(block_rows, n), m), q.new_empty(bsz, min(block_rows, n), m)
    state = q.new_zeros(bsz, m, dv + 1)             # [S | z]: z rides along as one more column
    # Outside autograd each block's output is divided straight into ``out``.
    direct = not any(records_grad(t, feature_map) for t in (q, k, v, decay) if t is not None)

    # [v | 1] for every block, its column of ones written once (outside autograd).
    rows = -(-min(block_rows, n) // chunk_size) * chunk_size
    v1_buf = q.new_ones(bsz, rows, dv + 1) if direct else None

    features = _BlockFeatures(feature_map, n, fast=direct, like=fq_buf)
    # Gate factors are prepared for a range of tokens at a time: the whole sequence for one
    # gate per token (a few numbers per token), a block's worth for per-feature gates.
    gate_range = n if decay is None or decay.shape[-1] == 1 else block_rows
    for g0 in range(0, n, gate_range):
        g1 = min(g0 + gate_range, n)
        gates = None if decay is None else GateFactors(decay[:, g0:g1], chunk_size, block_rows)
        if gates is None:
            segments = [(s, min(s + block_rows, g1 - g0)) for s in range(0, g1 - g0, block_rows)]
        else:
            segments = gates.segments
        for i, (s, e) in enumerate(segments):
            start, stop = g0 + s, g0 + e
            fq = features(q[:, start:stop], start, fq_buf[:, :e - s], is_query=True)
            fk = features(k[:, start:stop], start, fk_buf[:, :e - s])
            if gates:
                fq, fk = _scaled(fq, gates.q_scale[:, s:e], fq_buf), _scaled(fk, gates.k_scale[:, s:e], fk_buf)
                state = state * gates.enter[i]
            dst = out[:, start:stop] if direct else None
            result, state = _causal_block(fq, fk, v[:, start:stop], state, chunk_size, dst, v1_buf)
            if not direct:
                out[:, start:stop] = result
            if gates:
                state = state * gates.leave[i]
    return out


def noncausal(q, k, v, feature_map, chunk_size: int = 64) -> torch.Tensor:
    """phi(Q) (phi(K)^T V) / phi(Q) z on (B, N, d) inputs, in two passes over row blocks.

    Non-finite inputs raise ValueError, checked on what the passes compute anyway (a
    separate check reads q, k and v from memory once more, as much again as the feature
    maps' own work): a non-finite v[j, b] makes column b of kv non-finite, since inf or NaN
    times any feature, zero included, is inf or NaN. For a map whose features of a
    non-finite input are non-finite (``nonfinite_rows``), the same holds for k through z
    and for q through phi(q).z; other maps have their k and q blocks summed while the block
    is in cache. Only when one of those numbers is not finite are q, k and v checked element
    by element: a non-finite input raises, else the inf/NaN belongs to the result."""
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or records_grad(v, feature_map)):
        # Autograd: the plain form (the fast one writes into reused buffers).
        _check_finite(q, k, v)
        return parallel(feature_map(q, is_query=True), feature_map(k), v, False)
    bsz, n, _ = q.shape
    m, dv = feature_map.num_features, v.shape[-1]
    rows = min(n, _block_rows(bsz, max(m, dv), chunk_size))
    starts = range(0, n, rows)
    # A single sequence is cut into one slice of rows per thread for the two big matmuls:
    # a batch of independent products keeps every thread busy without splitting one
    # product between them (about 10% faster at N = 16384 on 2 cores).
    split = torch.get_num_threads() if bsz == 1 else 1
    buf = q.new_empty(bsz, rows, m)                 # every block's features, keys then queries
    features = _BlockFeatures(feature_map, n, fast=True, like=buf)
    propagates = feature_map.nonfinite_rows
    probes = q.new_zeros(2, len(starts))            # per block: sums of q and k, for maps that need them
    kv_parts = q.new_zeros(max(bsz, split), m, dv)  # phi(K)^T V, per sequence or per slice of one
    z = q.new_zeros(bsz, 1, m)                      # phi(K)^T 1, as a row
    ones = q.new_ones(bsz, 1, rows)
    for i, s in enumerate(starts):
        k_b, v_b = k[:, s:s + rows], v[:, s:s + rows]
        fk = features(k_b, s, buf[:, :k_b.shape[1]])
        if not propagates:
            torch.sum(k_b, (0, 1, 2), out=probes[1, i])
        if split > 1 and k_b.shape[1] % split == 0:
            kv_parts.baddbmm_(fk.view(split, -1, m).transpose(1, 2), v_b.reshape(split, -1, dv))
        else:
            kv_parts[:bsz].baddbmm_(fk.transpose(1, 2), v_b)
        z.baddbmm_(ones[..., :fk.shape[1]], fk)
    kv = kv_parts.sum(0, keepdim=True) if bsz == 1 else kv_parts
    z = z.transpose(1, 2)
    out = q.new_empty(bsz, n, dv)
    dens = q.new_empty(bsz, n, 1)                   # phi(q).z of every query, summed once at the end
    for i, s in enumerate(starts):
        q_b, out_b = q[:, s:s + rows], out[:, s:s + rows]
        fq = features(q_b, s, buf[:, :q_b.shape[1]], is_query=True)
        den = torch.bmm(fq, z, out=dens[:, s:s + rows])
        if not propagates:
            torch.sum(q_b, (0, 1, 2), out=probes[0, i])
        if m > dv:
            torch.bmm(fq, kv, out=out_b).div_(den)
            continue
        # Normalise phi(q) while it sits in cache (no more columns than the output has),
        # then one matmul straight into out.
        fq = fq.div_(den) if fq.data_ptr() == buf.data_ptr() else fq / den
        if split > 1 and q_b.shape[1] % split == 0:
            torch.bmm(fq.reshape(split, -1, m), kv.expand(split, m, dv), out=out_b.view(split, -1, dv))
        else:
            torch.bmm(fq, kv, out=out_b)
    # A non-finite z makes every phi(q).z non-finite (inf or NaN times any feature), so the
    # probes cover it.
    if not torch.isfinite(probes.sum() + kv.sum() + dens.sum()):
        _check_finite(q, k, v)                      # raises on bad input; else inf/NaN is the result's
    return out


class _BlockFeatures:
    """phi on row blocks of one sequence of length n. When ``fast`` and the map writes in
    place, the input's shape is checked against the map once, on the first block, and every
    block goes straight to the map's writer with a reused scratch buffer: the same features
    as the public call, without its per-call checks and temporaries."""

    def __init__(self, feature_map, n: int, fast: bool, like: torch.Tensor):
        self.map, self.n = feature_map, n
        self.into = getattr(feature_map, "features_into", None) if fast else None
        self.scratch = torch.empty_like(like) if self.into is not None else None
        self.checked = False

    def __call__(self, x, start: int, out, is_query: bool = False):
        if self.into is None:
            return self.map(x, is_query=is_query, offset=start, total=self.n, out=out)
        if not self.checked:
            self.map.check_input(x)
            self.checked = True
        scratch = self.scratch if out.shape == self.scratch.shape else self.scratch[:, :out.shape[1]]
        return self.into(x, is_query, out, scratch)


class GateFactors:
    """One block's decay as factors on features, for a (B, G, r) log decay (r = 1 or m).

    The block is cut into ``segments`` [s, e) inside which the cumulative log decay C
    (inclusive, from the block's start) falls by at most GATE_SPAN after the first token,
    for every row and feature. With the reference c = (C_s + C_{e-1}) / 2 mid-way:
    - the weight of key j for query i is exp(C_i - C_j) = exp(C_i - c) exp(c - C_j):
      ``q_scale`` and ``k_scale``, both within exp(+-GATE_SPAN / 2);
    - the state before the segment (after token s - 1) reaches query i as
      exp(C_i - C_{s-1}) = exp(C_i - c) exp(c - C_{s-1}): ``enter``, exponent <= 0;
    - the state after it is exp(C_{e-1} - c) times what the ungated algorithm accumulates
      from the rescaled features: ``leave``, exponent <= 0.
    Everything is computed in float64, so each factor is exact to float32 rounding.
    ``enter`` and ``leave`` are (B, r, 1) per segment, to scale the state's rows.
    """

    def __init__(self, a: torch.Tensor, chunk_size: int, max_len: int):
        cum = a.double().cumsum(1)                                          # C, (B, G, r)
        self.segments = _segments(a, cum, chunk_size, max_len)
        starts = torch.tensor([s for s, _ in self.segments], device=a.device)
        ends = torch.tensor([e - 1 for _, e in self.segments], device=a.device)
        lengths = ends - starts + 1
        ref = (cum[:, starts] + cum[:, ends]) * 0.5                           # (B, S, r)
        before = torch.nn.functional.pad(cum, (0, 0, 1, 0))[:, starts]        # C_{s-1}, 0 at the start
        x = cum - ref.repeat_interleave(lengths, dim=1, output_size=cum.shape[1])
        self.q_scale = torch.exp(x).to(a.dtype)
        self.k_scale = self.q_scale.reciprocal()      # exact to rounding as well, and in range
        self.enter = torch.exp(ref - before).to(a.dtype).unsqueeze(-1).unbind(1)
        self.leave = torch.exp(cum[:, ends] - ref).to(a.dtype).unsqueeze(-1).unbind(1)


def _segments(a: torch.Tensor, cum: torch.Tensor, chunk: int, max_len: int) -> list[tuple[int, int]]:
    """Segments [s, e) covering the G tokens of ``a`` (B, G, r), C = ``cum``, none longer
    than ``max_len`` (a multiple of ``chunk``): whole chunks where they fit, single tokens'
    worth only where one chunk alone falls by more than GATE_SPAN. The fall is bounded from
    above, per chunk exactly (the largest fall over rows and features inside it, its first
    token included), and across chunks or tokens by adding those bounds: each segment is
    valid, and long where the gates are mild."""
    g = a.shape[1]
    full = g // chunk
    # Bounds on each chunk's fall and each token's, as running sums over the block.
    by_chunk = np.zeros(1)                                                   # bound before chunk j: [j]
    if full:
        ends = cum.detach()[:, chunk - 1:full * chunk:chunk]                 # C at chunk ends
        chunk_fall = (torch.nn.functional.pad(ends, (0, 0, 1, 0))[:, :-1] - ends).amax(dim=(0, 2))
        by_chunk = np.concatenate([by_chunk, chunk_fall.cumsum(0).cpu().numpy()])
    by_token = None
    segments, s = [], 0
    while s < g:
        j = s // chunk
        if s % chunk == 0 and j < full:
            fit = min(int(np.searchsorted(by_chunk, by_chunk[j] + GATE_SPAN, side="right")) - 1,
                      j + max_len // chunk)
            if fit > j:                                # chunks j .. fit-1 together fall <= GATE_SPAN
                segments.append((s, fit * chunk))
                s = fit * chunk
                continue
        if by_token is None:                           # only strong gates and the tail get here
            by_token = a.detach().amin(dim=(0, 2)).neg_().double().cumsum(0).cpu().numpy()
        e = int(np.searchsorted(by_token, by_token[s] + GATE_SPAN, side="right"))
        e = min(e, (j + 1) * chunk if j < full else g, s + max_len)
        segments.append((s, e))
        s = e
    return segments


def _scaled(features, factor, buf):
    """features * factor, in place when the features live in our own buffer."""
    if features.data_ptr() == buf.data_ptr():
        return features.mul_(factor)
    return features * factor


def _causal_block(fq, fk, v, state, c: int, dst=None, v1_buf=None):
    """Causal output of one block of G tokens (B, G, d_v), and the state after it.

    ``state`` is [S | z] (B, m, d_v + 1) before the block. The block is cut into chunks of
    c tokens (the last one zero-padded: a zero key adds nothing to any state, and padded
    queries are dropped). The output is written into ``dst`` when one is given.
    ``v1_buf``, when given, is a reusable [v | 1] buffer whose last column is already 1.
    """
    bsz, g, m = fq.shape
    dv = v.shape[-1]
    nc = -(-g // c)
    pad = nc * c - g
    # A column of ones appended to v makes every product below carry the normaliser too:
    # the last column of phi(q) S' is phi(q).z, so numerator and denominator come out of
    # the same matmuls, and S' = [S | z] is one state. Rows past G only meet zero keys and
    # masked scores, so they only need to be finite (a reused buffer holds earlier values).
    if v1_buf is None:
        v1 = fq.new_zeros(bsz, nc * c, dv + 1)
        v1[:, :g, :dv] = v
        v1[:, :g, dv] = 1.0
    else:
        v1 = v1_buf[:, :nc * c]
        v1[:, :g, :dv] = v
    if pad:
        fq, fk = (torch.nn.functional.pad(t, (0, 0, 0, pad)) for t in (fq, fk))
    fq, fk, v1 = fq.reshape(bsz, nc, c, m), fk.reshape(bsz, nc, c, m), v1.reshape(bsz, nc, c, dv + 1)

    scores = torch.matmul(fq, fk.transpose(-1, -2)).tril_()                 # (B, nc, c, c), causal
    # States before each chunk and after the last: the carry, then running sums of each
    # chunk's phi(K)^T [V | 1] (written in place outside autograd, else concatenated).
    if dst is None:
        kv = torch.matmul(fk.transpose(-1, -2), v1)                         # (B, nc, m, dv+1)
        states = torch.cat([state.unsqueeze(1), kv], dim=1)
    else:
        states = fq.new_empty(bsz, nc + 1, m, dv + 1)
        states[:, 0] = state
        torch.matmul(fk.transpose(-1, -2), v1, out=states[:, 1:])
    states.cumsum_(1)                                                       # (B, nc+1, m, dv+1)
    num = torch.matmul(fq, states[:, :-1])
    num.view(-1, c, dv + 1).baddbmm_(scores.view(-1, c, c), v1.reshape(-1, c, dv + 1))
    num = num.view(bsz, nc * c, dv + 1)[:, :g]       # padded queries are 0/0: never divide them
    if dst is None:
        return num[..., :dv] / num[..., dv:], states[:, -1]
    return torch.div(num[..., :dv], num[..., dv:], out=dst), states[:, -1]


def causal_cumsum(fq, fk, v) -> torch.Tensor:
    """Reference only: S_t = sum_{j<=t} phi(k_j) v_j^T held for every t, O(N m d_v) memory."""
    s = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)           # (..., N, m, dv)
    z = torch.cumsum(fk, dim=-2)
    return (fq.unsqueeze(-2) @ s).squeeze(-2) / (fq * z).sum(-1, keepdim=True)
