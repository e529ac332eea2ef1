"""Approximation-quality numbers: how far a kernel map A^ is from the softmax map A.

The article's claim is that a good linear attention reproduces softmax attention. "Good"
has several faces, and each number here shows one:

- error of the map and of the output (does A^ V land near A V?),
- KL(A_i || A^_i) per row (does the approximation put mass where softmax does?),
- entropy of both maps (softmax rows are spiky, elu+1 rows are flat: Hedgehog's point),
- monotonicity: Spearman correlation between the logit s_ij and A^_ij per row (softmax is
  monotone in s by construction; a kernel that is not ranks keys differently),
- negative weights and ill-defined rows (non-positive kernels cannot be normalised
  honestly everywhere; those rows are counted, never clamped away),
- FLOPs of the quadratic and the linear path.

Conventions. Maps are (..., N, N); the leading dimensions (heads, batch) are pooled: row
metrics are means over every defined row of every head, matrix errors are means of the
per-head relative errors. In a causal map the entries above the diagonal are structurally
zero in both maps and every row metric uses the allowed entries j <= i only. A row is
*ill-defined* when it is flagged by ``explorer.forms.attention.kernel_map_with_flags`` (pass the
flags as ``ill_defined``) or when any of its allowed entries is not finite. A map without a
normaliser (HGRN2's, the delta rule's: rows that do not sum to 1) is weights, not
distributions: it has no KL or entropy on any row (``weights_not_distributions``), only its
errors. Everything is computed in float64.
"""

from __future__ import annotations

import math

import numpy as np
import torch

# METRIC_INFO (key -> label with unit, one-sentence explanation) lives in the catalog,
# which the UI reads before the engine is imported; re-exported here.
from ..catalog import METRIC_INFO  # noqa: F401
from ..checks import as_float_tensor, check_finite, check_positive_int
from ..text import Message
from .cost import flop_counts


# ---------------------------------------------------------------------------------------
# Row helpers. Each takes tensors shaped (..., R, C) and an optional ``allowed`` (R, C) or
# (..., R, C) bool mask of the entries that belong to the row (default: all), and returns
# (values, defined): per-row values shaped (..., R), NaN where ``defined`` is False.
# ---------------------------------------------------------------------------------------

def _allowed(x: torch.Tensor, allowed) -> torch.Tensor:
    if allowed is None:
        return torch.ones(x.shape[-2:], dtype=torch.bool, device=x.device).expand(x.shape)
    return allowed.to(torch.bool).expand(x.shape)


def _finite_rows(x: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Rows whose allowed entries are all finite (masked entries may hold anything)."""
    return (torch.isfinite(x) | ~allowed).all(-1)


def row_kl(p, q, allowed=None):
    """KL(p_i || q_i) = sum_j p_ij log(p_ij / q_ij) per row, in nats.

    +inf where q is zero at a key p gives weight to (q non-negative and finite there): the
    map misses a key softmax uses, and that is a value, the worst one, not a gap. NaN where
    the row itself is undefined: p not a finite non-negative row, q not finite, or q
    negative where p > 0 (entries with p = 0 contribute nothing, whatever q is there).
    ``defined`` is True on finite and infinite rows alike. q is not renormalised: it is
    compared as given.
    """
    p, q = p.double(), q.double()
    allowed = _allowed(p, allowed)
    support = allowed & (p > 0)
    p_valid = _finite_rows(p, allowed) & ((p >= 0) | ~allowed).all(-1)
    q_valid = _finite_rows(q, allowed) & ((q >= 0) | ~support).all(-1)
    defined = p_valid & q_valid
    missed = (support & (q == 0)).any(-1)
    safe_p = torch.where(support, p, torch.ones_like(p))
    safe_q = torch.where(support & (q > 0), q, torch.ones_like(q))
    terms = torch.where(support, p * (safe_p.log() - safe_q.log()), torch.zeros_like(p))
    kl = kl_rounded_to_zero(terms.sum(-1), terms.abs().sum(-1), torch.where(allowed, q, 0.0).sum(-1))
    kl = torch.where(missed, torch.full_like(kl, math.inf), kl)
    return torch.where(defined, kl, torch.full_like(kl, math.nan)), defined


def rows_in_means(n: int, causal: bool, device=None) -> torch.Tensor:
    """(N,) bool: the rows every mean over rows counts. A causal row 0 sees a single key, so
    every normalised map gives it weight 1 there: KL 0, entropy 0, no error, whatever the
    map. Counting it would pull each causal mean towards a perfect score (by 1/N: 4-5 % on a
    short text), so causal means leave it out; non-causal means count every row. The one
    rule for the maps and quality tabs and the lecture."""
    counted = torch.ones(int(n), dtype=torch.bool, device=device)
    if causal and n > 1:
        counted[0] = False
    return counted


def true_median(values) -> float:
    """The median of the values given (NaN left out, +inf kept: an infinite KL is a value):
    the middle one, or the mean of the two middle ones for an even count (torch's median is
    the lower of the two). NaN when there is none."""
    x = np.asarray(values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else values, dtype=np.float64)
    x = np.sort(x[~np.isnan(x)].ravel())
    if x.size == 0:
        return math.nan
    mid = x.size // 2
    if x.size % 2:
        return float(x[mid])
    lo, hi = x[mid - 1], x[mid]
    return float(hi) if lo == hi else float((lo + hi) / 2.0)


# Relative rounding of a float64 row sum of up to 2^14 terms, with room to spare.
KL_ROUNDING = 1e-12
# How far from 1 a row normalised in float32 may sum (N * 2^-24 for N up to ~160): beyond
# it a row's sum is the map's own, not rounding.
FLOAT32_NORMALISATION = 1e-5
# How far from 1 the weights of a normalised row may sum, relative to the sum of their sizes
# (at least 1). Dividing a float32 row by its own sum leaves at most about N * 2^-24 of that
# (1.2e-4 at N = 2,048, the largest map drawn); a map without a normaliser (HGRN2, DeltaNet)
# has rows off by tenths.
ROW_SUM_TOLERANCE = 1e-3


def kl_rounded_to_zero(kl: torch.Tensor, scale: torch.Tensor, q_row_sum: torch.Tensor) -> torch.Tensor:
    """Per-row KL with the negatives that are rounding set to exactly 0.

    For distributions KL(p || q) >= 0 (Gibbs); for q summing to s over the row,
    KL >= -log s ~ 1 - s. A negative KL no larger than the sums' float64 rounding
    (``KL_ROUNDING`` times ``scale``, the magnitude of what was summed) plus |1 - s| where
    that is float32 normalisation error (at most ``FLOAT32_NORMALISATION``) says "equal within
    rounding", and shows as 0 rather than -1.4e-17. A larger negative (a q that really
    sums to more than 1) is kept: it is what the map gives.
    """
    rounding = KL_ROUNDING * (1.0 + scale)
    off = (q_row_sum.double() - 1.0).abs()
    tolerance = rounding + torch.where(off <= FLOAT32_NORMALISATION, off, torch.zeros_like(off))
    zero = ((kl < 0) & (kl >= -tolerance)) | ((kl >= 0) & (kl <= rounding))
    return torch.where(zero, torch.zeros_like(kl), kl)


def weights_not_distributions(row_sum, row_size, considered):
    """(off, weights): ``off`` marks the considered rows whose weights do not sum to 1 (beyond
    ``ROW_SUM_TOLERANCE`` times their size, the sum of |weights|); ``weights`` marks every
    row of a head (a leading index) with any such row. A map that leaves one row unnormalised
    has no normaliser: its rows are weights, signed or not, and no row of it is a probability
    distribution, so KL and entropy have no value on any (a row that sums to 1 by chance is
    no exception)."""
    off = ((row_sum - 1.0).abs() > ROW_SUM_TOLERANCE * row_size.clamp(min=1.0)) & considered
    return off, off.any(-1, keepdim=True).expand(off.shape)


def row_entropy(p, allowed=None):
    """Shannon entropy -sum_j p_ij log p_ij per row, in nats (0 log 0 = 0).

    Defined where the allowed entries are finite and non-negative; p is not renormalised.
    """
    p = p.double()
    allowed = _allowed(p, allowed)
    defined = _finite_rows(p, allowed) & ((p >= 0) | ~allowed).all(-1)
    support = allowed & (p > 0)
    safe_p = torch.where(support, p, torch.ones_like(p))
    h = -torch.where(support, p * safe_p.log(), torch.zeros_like(p)).sum(-1)
    return torch.where(defined, h, torch.full_like(h, math.nan)), defined


def average_ranks(x, allowed=None) -> torch.Tensor:
    """1-based ranks of each row's allowed entries, ties sharing their average rank.

    Vectorised over rows with one sort: in sorted order, a run of equal values occupying
    positions first..last (0-based) all get rank (first + last) / 2 + 1; the ranks are then
    scattered back to the original order. Masked entries are pushed to +inf, so they never
    count below an allowed one; their own ranks are meaningless. Non-finite allowed entries
    make the row's ranks meaningless too (callers mark such rows undefined).
    """
    order, sorted_ranks = sorted_average_ranks(x, allowed)
    ranks = torch.empty(order.shape, dtype=torch.float64, device=order.device)
    return ranks.scatter_(-1, order, sorted_ranks)


def sorted_average_ranks(x, allowed=None):
    """(order, ranks in sorted order): ``average_ranks`` before it is scattered back, so that
    ``average_ranks(x)[..., order[..., k]] == sorted_ranks[..., k]``. Callers that only need
    sums over a row (``Reference.compare``) gather what they pair the ranks with instead."""
    # Sorted in the input's own precision: the maps are computed in float32, so ranking in
    # float64 would find no tie that float32 does not, and sorts half as fast.
    x = torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
    if allowed is not None:
        x = x.masked_fill(~allowed.to(torch.bool), math.inf)
    ordered, order = _sort_rows(x)
    n = x.shape[-1]
    sorted_ranks = torch.arange(1, n + 1, dtype=torch.float64, device=x.device).expand(order.shape)
    tied = torch.zeros(ordered.shape, dtype=torch.bool, device=x.device)
    # Equal to its left neighbour; the +inf of masked entries (sorted last) tie harmlessly.
    tied[..., 1:] = (ordered[..., 1:] == ordered[..., :-1]) & (ordered[..., 1:] != math.inf)
    rows = tied.any(-1)
    if bool(rows.any()):
        # Only rows that hold a tie pay for the run bookkeeping (float32 maps have few).
        sorted_ranks = sorted_ranks.clone()
        sorted_ranks[rows] = _tied_ranks(tied[rows])
    return order, sorted_ranks


def _sort_rows(x: torch.Tensor):
    """(values, indices) of each row sorted ascending. On the CPU numpy's introsort (order
    among equal values is irrelevant here: ties get their average rank) is 4-15x faster
    than torch.sort on (1024, 1024) rows; elsewhere torch sorts."""
    if x.device.type != "cpu":
        return x.sort(dim=-1)
    values = x.detach().contiguous().numpy()
    order = np.argsort(values, axis=-1)
    # Sorting the values again is faster than gathering them by ``order`` (a few ms against
    # tens at N = 1024), and gives the same array: equal keys are equal values.
    return torch.from_numpy(np.sort(values, axis=-1)), torch.from_numpy(order)


def gather_rows(values: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """``values[..., order]`` row by row: torch.take_along_dim on the CPU, through a flat
    numpy ``take`` (10-30x faster for (1024, 1024))."""
    if values.device.type != "cpu":
        return torch.take_along_dim(values, order, dim=-1)
    n = values.shape[-1]
    flat = order.reshape(-1, n).numpy() + (np.arange(order.numel() // n) * n)[:, None]
    return torch.from_numpy(values.detach().contiguous().numpy().ravel().take(flat)).reshape(order.shape)


def _tied_ranks(tied: torch.Tensor) -> torch.Tensor:
    """Average ranks in sorted order for rows (R, C), given which entries equal their left
    neighbour: a run occupying positions first..last gets (first + last) / 2 + 1."""
    n = tied.shape[-1]
    pos = torch.arange(n, device=tied.device, dtype=torch.int32).expand(tied.shape)
    starts = ~tied
    ends = torch.ones_like(starts)
    ends[..., :-1] = starts[..., 1:]                                   # last of its run
    first = torch.where(starts, pos, torch.zeros_like(pos)).cummax(-1).values
    last = torch.where(ends, pos, torch.full_like(pos, n - 1)).flip(-1).cummin(-1).values.flip(-1)
    return (first + last).double() / 2.0 + 1.0


def row_spearman(x, y, allowed=None, x_ranks=None):
    """Spearman's rank correlation between rows of x and y (Pearson on average ranks).

    Undefined for rows with fewer than two allowed entries, non-finite allowed values, or
    a constant x or y (zero rank variance): those rows are skipped, not given a value.
    ``x_ranks`` may hold ``average_ranks(x, allowed)`` already computed: the logits of a
    head are ranked once, however many maps are compared with them.
    """
    x, y = as_float_tensor(x, "x"), as_float_tensor(y, "y")
    allowed = _allowed(x, allowed)
    count = allowed.sum(-1)

    def constant(t):
        hi = torch.where(allowed, t, torch.full_like(t, -math.inf)).amax(-1)
        lo = torch.where(allowed, t, torch.full_like(t, math.inf)).amin(-1)
        return hi == lo

    defined = (count >= 2) & _finite_rows(x, allowed) & _finite_rows(y, allowed)
    defined = defined & ~constant(x) & ~constant(y)
    w = allowed.double()
    n = count.clamp(min=1).double().unsqueeze(-1)

    def centred(t, ranks=None):
        r = (average_ranks(t, allowed) if ranks is None else ranks) * w
        return (r - r.sum(-1, keepdim=True) / n) * w

    rx, ry = centred(x, x_ranks), centred(y)
    denom = ((rx * rx).sum(-1) * (ry * ry).sum(-1)).sqrt()
    rho = ((rx * ry).sum(-1) / torch.where(defined, denom, torch.ones_like(denom))).clamp(-1.0, 1.0)
    return torch.where(defined, rho, torch.full_like(rho, math.nan)), defined


def relative_error(approx, reference, rows=None) -> torch.Tensor:
    """||approx - reference||_F / ||reference||_F over the last two dimensions.

    Returns one value per leading index (a 0-d tensor for a single matrix). ``rows``, a
    (..., R) bool mask, restricts both norms to the selected rows. NaN where the reference
    has zero norm on the selected rows (the relative error is undefined there).
    """
    approx, reference = approx.double(), reference.double()
    diff = approx - reference
    if rows is not None:
        keep = rows.to(torch.bool).unsqueeze(-1)
        diff = torch.where(keep, diff, torch.zeros_like(diff))
        reference = torch.where(keep, reference, torch.zeros_like(reference))
    num = torch.linalg.matrix_norm(diff)
    den = torch.linalg.matrix_norm(reference)
    return torch.where(den > 0, num / torch.where(den > 0, den, torch.ones_like(den)),
                       torch.full_like(den, math.nan))


def _masked_rows(ref, approx, causal: bool, ill_defined):
    """What every per-row measure starts from: the entries a row may use (the lower triangle
    when causal), the rows whose approximation is finite there, the rows left out (not
    finite, or flagged ill-defined), and both maps with the masked entries set to zero
    (they are structurally zero; ill-defined causal rows may hold 0/0 there)."""
    n = ref.shape[-1]
    allowed = torch.ones(n, n, dtype=torch.bool, device=ref.device)
    if causal:
        allowed = allowed.tril()
    allowed = allowed.expand(ref.shape)
    finite = _finite_rows(approx, allowed)
    bad = ~finite
    flags = _row_flags(ill_defined, ref.shape, ref.device)
    if flags is not None:
        bad = bad | flags
    zero = torch.zeros_like(ref)
    return (allowed, finite, bad, torch.where(allowed, ref, zero),
            torch.where(allowed & finite.unsqueeze(-1), approx, zero))


def row_metrics(reference_map, approx_map, v=None, logits=None, *, causal=False, ill_defined=None) -> dict:
    """The per-row values behind ``compare``'s means, for export: {name: float64 (..., N)}
    with NaN where a row has no value (the same rows ``compare`` leaves out).

    map_error     ||a_i - p_i|| / ||p_i||, per row (``compare`` pools these rows)
    output_error  ||(a_i - p_i) V|| / ||p_i V||, per row (with ``v``)
    kl            KL(p_i || a_i) in nats (none on a map without a normaliser:
                  ``weights_not_distributions``)
    entropy       entropy of a_i in nats (``entropy_reference``: of p_i); none there either
    monotonicity  Spearman rho of a_i against the logits s_i (with ``logits``)
    """
    ref = _check_map(reference_map, "reference_map").double()
    approx = _check_map(approx_map, "approx_map").double()
    if approx.shape != ref.shape:
        raise ValueError(f"approx_map: shape {tuple(approx.shape)} does not match reference_map's {tuple(ref.shape)}")
    allowed, finite, bad, ref_z, approx_z = _masked_rows(ref, approx, bool(causal), ill_defined)
    nan = torch.full(ref.shape[:-1], math.nan, dtype=torch.float64, device=ref.device)

    def ratio(diff_sq, ref_sq, ok):
        ok = ok & (ref_sq > 0)
        return torch.where(ok, (diff_sq / torch.where(ok, ref_sq, torch.ones_like(ref_sq))).sqrt(), nan)

    counted = rows_in_means(ref.shape[-1], bool(causal), ref.device)
    out = {"map_error": ratio(_row_sq(approx_z - ref_z), _row_sq(ref_z), finite)}
    if v is not None:
        v = as_float_tensor(v, "v").double()
        out["output_error"] = ratio(_row_sq(approx_z @ v - ref_z @ v), _row_sq(ref_z @ v), finite)
    _, weights = weights_not_distributions(approx_z.sum(-1), approx_z.abs().sum(-1), finite & ~bad & counted)
    kl, kl_ok = row_kl(ref, approx, allowed)
    out["kl"] = torch.where(kl_ok & ~bad & ~weights, kl, nan)
    h, h_ok = row_entropy(approx, allowed)
    out["entropy"] = torch.where(h_ok & ~bad & ~weights, h, nan)
    h_ref, h_ref_ok = row_entropy(ref, allowed)
    out["entropy_reference"] = torch.where(h_ref_ok, h_ref, nan)
    if logits is not None:
        rho, rho_ok = row_spearman(as_float_tensor(logits, "logits"), approx, allowed)
        out["monotonicity"] = torch.where(rho_ok & ~bad, rho, nan)
    return out


# ---------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------

def _mean_or_none(values: torch.Tensor, defined: torch.Tensor):
    """Mean over the defined entries as a float; None when nothing is defined."""
    if not bool(defined.any()):
        return None
    return float(values[defined].mean())


def _upper_zero(x: torch.Tensor) -> bool:
    upper = torch.ones(x.shape[-2:], dtype=torch.bool, device=x.device).triu(1)
    vals = x[..., upper]
    return bool(((vals == 0) | ~torch.isfinite(vals)).all())


def _resolve_causal(causal, reference: torch.Tensor, approx: torch.Tensor) -> bool:
    """Use ``causal`` when given; otherwise causal iff both maps are zero above the diagonal.

    The approximate map may hold non-finite values there (a 0/0 ill-defined causal row).
    Requiring both maps (not the reference alone) keeps, say, a one-hot diagonal reference
    compared with a uniform map from being read as causal. Pass ``causal`` explicitly when
    a non-causal softmax might underflow to exact zeros above the diagonal.
    """
    if causal is not None:
        if not isinstance(causal, bool):
            raise ValueError(f"causal: expected True, False or None, got {causal!r}")
        return causal
    n = reference.shape[-1]
    if n < 2:
        return False
    return bool((reference.triu(1) == 0).all()) and _upper_zero(approx)


def _check_map(x, name: str) -> torch.Tensor:
    x = as_float_tensor(x, name)
    if x.dim() < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] == 0:
        raise ValueError(f"{name}: expected a square map shaped (..., N, N) with N >= 1, got {tuple(x.shape)}")
    return x


def compare(reference_map, approx_map, v=None, logits=None, *, ill_defined=None, feature_dim=None,
            causal=None, chunk_size=None, head_dim=None, logit_ranks=None, window=None) -> dict:
    """Every quality number for ``approx_map`` against ``reference_map`` (both (..., N, N)).

    reference_map: the softmax map, or a ``Reference`` prepared from it (then ``v``,
                 ``logits`` and ``logit_ranks`` are the Reference's and must not be given
                 again): the app compares several maps with one reference.
    v:           values (..., N, d_v) with the maps' leading dimensions, for the output error.
    logits:      s_ij (..., N, N) for the monotonicity score; entries above the diagonal may
                 be -inf in causal mode.
    ill_defined: (..., N) bool flags from ``kernel_map_with_flags``; non-finite rows are
                 added to them. Ill-defined rows are left out of KL, entropy and
                 monotonicity; their finite weights still count in the errors (that is
                 how badly the map does there), non-finite rows cannot.
    logit_ranks: ``average_ranks(logits, allowed)`` when the caller already has it.
    causal:      None reads it from the maps (zero above the diagonal in both).
    feature_dim, head_dim, chunk_size: for the FLOP counts (per head), which are None when
                 feature_dim is None; head_dim defaults to d_v, and without either the
                 counts are None as well.
    window:      a sliding-window hybrid's w: its exact softmax inside the window is added
                 to the linear path's FLOPs (``window_flops``).

    Returns a flat dict of plain Python numbers (None where a value is undefined): the keys
    of ``METRIC_INFO``. Equal to ``compare_plain`` up to float64 rounding.
    """
    if isinstance(reference_map, Reference):
        ref = reference_map
        if v is not None or logits is not None or logit_ranks is not None:
            raise ValueError("v, logits, logit_ranks: already part of the Reference; pass them to Reference()")
        if causal is not None and (not isinstance(causal, bool) or causal != ref.causal):
            raise ValueError(f"causal: the Reference was prepared with causal={ref.causal}, got {causal!r}")
    else:
        reference = _check_map(reference_map, "reference_map")
        approx = _check_map(approx_map, "approx_map")
        if approx.shape != reference.shape:
            raise ValueError(f"approx_map: shape {tuple(approx.shape)} does not match reference_map's "
                             f"{tuple(reference.shape)}")
        ref = Reference(reference, v, logits, _resolve_causal(causal, reference, approx), logit_ranks)
    return ref.compare(approx_map, ill_defined=ill_defined, feature_dim=feature_dim, chunk_size=chunk_size,
                       head_dim=head_dim, window=window)


class Reference:
    """The reference side of ``compare``, computed once and reused for every approximation.

    Whatever depends on the reference alone is kept here: the masked map, its row norms,
    p log p and entropy, A V, and the centred ranks of the logits. Each ``compare`` then
    makes a handful of float64 passes over the approximate map, where the plain form
    (``compare_plain``) makes several dozen (at N = 1024: about 60 ms against 250 ms).
    """

    def __init__(self, reference_map, v=None, logits=None, causal: bool = False, logit_ranks=None):
        if not isinstance(causal, bool):
            raise ValueError(f"causal: expected True or False, got {causal!r}")
        given = _check_map(reference_map, "reference_map")
        # A copy: what is derived below must not go stale if the caller changes the map.
        ref = given.double() if given.dtype != torch.float64 else given.clone()
        check_finite(ref, "reference_map")
        n = ref.shape[-1]
        self.shape, self.n, self.causal = ref.shape, n, causal
        # (N, N) mask of the entries that belong to a row, or None when all do.
        self.allowed = torch.ones(n, n, dtype=torch.bool, device=ref.device).tril() if causal else None
        # Allowed entries per row: N, or i + 1 in causal row i.
        self.counts = (torch.arange(1, n + 1, device=ref.device) if causal
                       else torch.full((n,), n, device=ref.device)).double()
        self.map = ref if self.allowed is None else ref.masked_fill(~self.allowed, 0.0)
        # The rows every mean counts (``rows_in_means``: not a causal row 0).
        self.counted = rows_in_means(n, causal, ref.device)
        self.row_sq = (self.map * self.map).sum(-1)
        self.support = self.map > 0
        self.unsupported = ~self.support
        # Masked entries sort last (they are +inf in the ranking): in sorted order the
        # allowed ones are the first c of row i.
        self.sorted_allowed = self.allowed
        self.plogp = torch.special.xlogy(self.map, self.map)
        self.nonnegative = (self.map >= 0).all(-1)
        self.plogp_sum = self.plogp.sum(-1)
        self.entropy = -self.plogp_sum

        self.value_dim = self.v = self.output = self.output_row_sq = None
        if v is not None:
            v = as_float_tensor(v, "v")
            if v.dim() != ref.dim() or v.shape[:-1] != ref.shape[:-1] or v.shape[-1] == 0:
                raise ValueError(
                    f"v: expected shape (..., N, d_v) = {tuple(ref.shape[:-1])} + (d_v,), got {tuple(v.shape)}"
                )
            check_finite(v, "v")
            self.value_dim, self.v = v.shape[-1], v.double() if v.dtype != torch.float64 else v.clone()
            self.output = self.map @ self.v
            self.output_row_sq = (self.output * self.output).sum(-1)

        self.logit_ranks = self.logit_rank_sq = None
        if logits is not None:
            s = as_float_tensor(logits, "logits")
            if s.shape != ref.shape:
                raise ValueError(f"logits: shape {tuple(s.shape)} does not match reference_map's {tuple(ref.shape)}")
            if not bool(_finite_rows(s, _allowed(s, self.allowed)).all()):
                raise ValueError("logits: contains NaN or infinite values at allowed positions")
            if logit_ranks is None:
                self.logit_ranks = self._centred(average_ranks(s, self.allowed))
            else:
                ranks = as_float_tensor(logit_ranks, "logit_ranks").double()
                if ranks.shape != ref.shape:
                    raise ValueError(f"logit_ranks: shape {tuple(ranks.shape)} does not match the logits' {tuple(s.shape)}")
                self.logit_ranks = self._centred(ranks, given=True)
            self.logit_rank_sq = (self.logit_ranks * self.logit_ranks).sum(-1)
            # Centred average ranks are multiples of 1/2 below N: exact in float32, which halves
            # the bytes every comparison gathers. (Ranks a caller gives may not be: kept as they are.)
            narrow = self.logit_ranks.float()
            self.logit_ranks_gather = narrow if torch.equal(narrow.double(), self.logit_ranks) else self.logit_ranks

    def _centred(self, ranks: torch.Tensor, given: bool = False) -> torch.Tensor:
        """Ranks minus their row mean over the allowed entries, zero at masked ones. Average
        ranks of c entries sum to c (c + 1) / 2 whatever the ties, so the mean is (c + 1) / 2
        exactly; ranks the caller ``given`` are centred on their actual mean instead."""
        if self.allowed is not None:
            ranks = ranks.masked_fill(~self.allowed, 0.0)
        mean = ranks.sum(-1, keepdim=True) / self.counts.unsqueeze(-1) if given else (self.counts.unsqueeze(-1) + 1.0) / 2.0
        centred = ranks - mean
        return centred if self.allowed is None else centred.masked_fill_(~self.allowed, 0.0)

    def _prepare(self, approx_map):
        """(given, a_z, finite): the map as given, in float64 with the masked entries and the
        non-finite rows zeroed (as the reference is: sums over whole rows are then sums over
        the entries that count), and which rows are finite."""
        given = _check_map(approx_map, "approx_map")
        if given.shape != self.shape:
            raise ValueError(f"approx_map: shape {tuple(given.shape)} does not match reference_map's {tuple(self.shape)}")
        a = given.double()
        allowed = self.allowed
        if allowed is not None:
            a = a.masked_fill(~allowed, 0.0)     # what lies there may be anything (0/0 in causal rows)
        if given.dtype in (torch.float32, torch.float16, torch.bfloat16):
            # A row of values within float32's range sums to a finite float64 exactly when
            # every value is finite (inf and NaN propagate, nothing finite overflows): one
            # pass instead of isfinite's two.
            finite = torch.isfinite(a.sum(-1))
        else:
            finite = torch.isfinite(a).all(-1)
        a_z = a if bool(finite.all()) else a.masked_fill(~finite.unsqueeze(-1), 0.0)
        return given, a_z, finite

    def map_error(self, approx_map) -> float | None:
        """``compare(...)["map_rel_error"]`` alone, for callers that need only it (the quality
        tab measures it for every m and seed)."""
        _, a_z, finite = self._prepare(approx_map)
        return _pooled_relative_error(_row_sq(a_z - self.map), self.row_sq, finite & self.counted)

    def compare(self, approx_map, ill_defined=None, feature_dim=None, chunk_size=None, head_dim=None,
                window=None) -> dict:
        """``compare(self, approx_map, ...)``: every metric of one approximation."""
        given, a_z, finite = self._prepare(approx_map)
        allowed = self.allowed
        bad = ~finite
        flags = _row_flags(ill_defined, self.shape, a_z.device)
        if flags is not None:
            bad = bad | flags

        counted = self.counted.expand(finite.shape)
        out: dict = {"causal": int(self.causal), "total_rows": int(counted.sum())}
        out["map_rel_error"] = _pooled_relative_error(_row_sq(a_z - self.map), self.row_sq, finite & counted)
        out["error_rows_excluded"] = int((~finite & counted).sum())
        if self.v is None:
            out["output_rel_error"] = None
        else:
            diff = (a_z @ self.v).sub_(self.output)
            out["output_rel_error"] = _pooled_relative_error(diff.square_().sum(-1), self.output_row_sq,
                                                             finite & counted)

        # KL(p || q) = sum over p > 0 of p log p - p log q. xlogy(0, q) = 0; a row with q = 0
        # where p > 0 has KL = +inf (counted apart, never averaged into the finite mean), a row
        # with q < 0 there is undefined, whatever its sum came to.
        # A map without a normaliser (rows that do not sum to 1) is weights, not distributions.
        row_sum = a_z.sum(-1)
        has_negative = a_z.amin(-1) < 0
        row_size = a_z.abs().sum(-1) if bool(has_negative.any()) else row_sum
        off, weights = weights_not_distributions(row_sum, row_size, finite & ~bad & counted)
        out["unnormalised_rows"] = int(off.sum())

        # One log serves KL and entropy: log a where a > 0, else 0 (xlogy's convention for
        # 0 log 0; rows with a <= 0 where it matters are undefined below). torch's xlogy is
        # not vectorised and costs ~8 plain logs.
        positive = a_z > 0
        log_a = torch.where(positive, a_z, 1.0).log_()
        kl_has_value = (self.nonnegative & finite & ((a_z >= 0) | self.unsupported).all(-1) & ~bad & counted
                        & ~weights)
        missed = (self.support & ~positive).any(-1)
        kl_ok = kl_has_value & ~missed
        cross = _row_dot(self.map, log_a)
        kl = kl_rounded_to_zero(self.plogp_sum - cross, self.plogp_sum.abs() + cross.abs(), row_sum)
        out["kl_mean"] = _mean_or_none(kl, kl_ok)
        out["kl_rows_defined"] = int(kl_ok.sum())
        out["kl_rows_infinite"] = int((kl_has_value & missed).sum())
        out["kl_rows_undefined"] = int((counted & ~kl_has_value).sum())

        h_apx_ok = ~has_negative & ~bad & ~weights
        h_apx = -_row_dot(a_z, log_a)
        out["entropy_reference"] = _mean_or_none(self.entropy, self.nonnegative & counted)
        out["entropy_approx"] = _mean_or_none(h_apx, h_apx_ok & counted)
        out["entropy_approx_rows_undefined"] = int((counted & ~h_apx_ok).sum())

        if self.logit_ranks is None:
            out["monotonicity"] = out["monotonicity_rows_defined"] = out["monotonicity_rows_undefined"] = None
        else:
            # Ranked in the map's own precision (ties as the map has them); a constant row
            # has all-equal ranks, so zero rank variance marks it, as it does a row with
            # fewer than two entries. Both sums are taken in sorted order, so the ranks are
            # never scattered back: sum_j L_j (r_j - mean) = sum_k L[order_k] r_k, because
            # the centred logit ranks L sum to zero over a row and vanish where masked; and
            # sum (r - mean)^2 = sum r^2 - c mean^2 over the c allowed entries, which sort
            # first. Ranks are multiples of 1/2 below 2^26: these sums are exact in float64.
            order, r = sorted_average_ranks(given, allowed)
            c = self.counts
            if allowed is not None:
                r = r.masked_fill(~self.sorted_allowed, 0.0)
            ry_sq = (r.unsqueeze(-2) @ r.unsqueeze(-1))[..., 0, 0] - c * ((c + 1.0) / 2.0) ** 2
            gathered = gather_rows(self.logit_ranks_gather, order).double()
            cross = (gathered.unsqueeze(-2) @ r.unsqueeze(-1))[..., 0, 0]
            rho_ok = (self.logit_rank_sq > 0) & (ry_sq > 0) & ~bad & counted
            denom = (self.logit_rank_sq * ry_sq).sqrt()
            rho = (cross / torch.where(rho_ok, denom, torch.ones_like(denom))).clamp(-1.0, 1.0)
            out["monotonicity"] = _mean_or_none(rho, rho_ok)
            out["monotonicity_rows_defined"] = int(rho_ok.sum())
            out["monotonicity_rows_undefined"] = int((counted & ~rho_ok).sum())

        considered = float(((finite & counted).double() * self.counts).sum())
        # Masked entries and non-finite rows are 0 in a_z; a causal row 0 holds one positive weight.
        negatives = int(((a_z < 0) & counted.unsqueeze(-1)).sum()) if bool(has_negative.any()) else 0
        out["negative_fraction"] = negatives / considered if considered else None
        # Of the rows the means count: a causal row 0 is in none of them, so not here either.
        out["ill_defined_rows"] = int((bad & counted).sum())
        out.update(_flops(self.n, feature_dim, head_dim, self.value_dim, self.causal, chunk_size, window))
        return out


def _row_dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """sum_j x_ij y_ij per row, as a batch of (1, N) @ (N, 1) products: one pass over both,
    no N x N temporary (3x faster than (x * y).sum(-1) in float64 at N = 1024)."""
    return (x.unsqueeze(-2) @ y.unsqueeze(-1))[..., 0, 0]


def _row_sq(x: torch.Tensor) -> torch.Tensor:
    return _row_dot(x, x)


def _pooled_relative_error(diff_row_sq, ref_row_sq, rows) -> float | None:
    """Per-head sqrt(sum of diff^2) / sqrt(sum of ref^2) over the selected rows, averaged
    over heads; heads whose reference has zero norm there have no relative error."""
    num = torch.where(rows, diff_row_sq, torch.zeros_like(diff_row_sq)).sum(-1).sqrt()
    den = torch.where(rows, ref_row_sq, torch.zeros_like(ref_row_sq)).sum(-1).sqrt()
    err = num / torch.where(den > 0, den, torch.ones_like(den))
    return _mean_or_none(err, (den > 0) & ~torch.isnan(err))     # inf / inf (float64 overflow): none


def _row_flags(ill_defined, shape, device):
    """``ill_defined`` as a (..., N) bool tensor (or None), with clear errors."""
    if ill_defined is None:
        return None
    try:
        flags = torch.as_tensor(ill_defined, device=device)
    except Exception as exc:
        raise ValueError(f"ill_defined: cannot be read as a boolean mask ({exc})") from None
    if flags.shape != shape[:-1]:
        raise ValueError(f"ill_defined: expected shape {tuple(shape[:-1])} (one flag per row), got {tuple(flags.shape)}")
    if flags.dtype != torch.bool:
        if flags.is_floating_point() or not ((flags == 0) | (flags == 1)).all():
            raise ValueError("ill_defined: expected a boolean mask (or 0/1 integers)")
        flags = flags.to(torch.bool)
    return flags


def compare_plain(reference_map, approx_map, v=None, logits=None, *, ill_defined=None, feature_dim=None,
                  causal=None, chunk_size=None, head_dim=None, logit_ranks=None, window=None) -> dict:
    """``compare`` written as the plain composition of the row helpers above, one full pass
    per quantity: the reference that tests hold the fast ``compare`` to. Same arguments
    (``reference_map`` a tensor only) and the same result; see ``compare``.
    """
    ref = _check_map(reference_map, "reference_map").double()
    check_finite(ref, "reference_map")
    approx = _check_map(approx_map, "approx_map").double()
    if approx.shape != ref.shape:
        raise ValueError(f"approx_map: shape {tuple(approx.shape)} does not match reference_map's {tuple(ref.shape)}")
    n = ref.shape[-1]
    is_causal = _resolve_causal(causal, ref, approx)
    allowed, finite, bad, ref_z, approx_z = _masked_rows(ref, approx, is_causal, ill_defined)
    counted = rows_in_means(n, is_causal, ref.device).expand(finite.shape)

    out: dict = {"causal": int(is_causal), "total_rows": int(counted.sum())}
    map_err = relative_error(approx_z, ref_z, rows=finite & counted)
    out["map_rel_error"] = _mean_or_none(map_err, ~torch.isnan(map_err))
    out["error_rows_excluded"] = int((~finite & counted).sum())

    value_dim = None
    if v is None:
        out["output_rel_error"] = None
    else:
        v = as_float_tensor(v, "v")
        if v.dim() != ref.dim() or v.shape[:-1] != ref.shape[:-1] or v.shape[-1] == 0:
            raise ValueError(
                f"v: expected shape (..., N, d_v) = {tuple(ref.shape[:-1])} + (d_v,), got {tuple(v.shape)}"
            )
        check_finite(v, "v")
        value_dim = v.shape[-1]
        v = v.double()
        out_err = relative_error(approx_z @ v, ref_z @ v, rows=finite & counted)
        out["output_rel_error"] = _mean_or_none(out_err, ~torch.isnan(out_err))

    off, weights = weights_not_distributions(approx_z.sum(-1), approx_z.abs().sum(-1), finite & ~bad & counted)
    out["unnormalised_rows"] = int(off.sum())

    kl, kl_has_value = row_kl(ref, approx, allowed)
    kl_has_value = kl_has_value & ~bad & counted & ~weights
    kl_ok = kl_has_value & torch.isfinite(kl)
    out["kl_mean"] = _mean_or_none(kl, kl_ok)
    out["kl_rows_defined"] = int(kl_ok.sum())
    out["kl_rows_infinite"] = int((kl_has_value & ~kl_ok).sum())
    out["kl_rows_undefined"] = int((counted & ~kl_has_value).sum())

    h_ref, h_ref_ok = row_entropy(ref, allowed)
    h_apx, h_apx_ok = row_entropy(approx, allowed)
    h_apx_ok = h_apx_ok & ~bad & ~weights
    out["entropy_reference"] = _mean_or_none(h_ref, h_ref_ok & counted)
    out["entropy_approx"] = _mean_or_none(h_apx, h_apx_ok & counted)
    out["entropy_approx_rows_undefined"] = int((counted & ~h_apx_ok).sum())

    if logits is None:
        out["monotonicity"] = out["monotonicity_rows_defined"] = out["monotonicity_rows_undefined"] = None
    else:
        s = as_float_tensor(logits, "logits")
        if s.shape != ref.shape:
            raise ValueError(f"logits: shape {tuple(s.shape)} does not match reference_map's {tuple(ref.shape)}")
        if not bool(_finite_rows(s, allowed).all()):
            raise ValueError("logits: contains NaN or infinite values at allowed positions")
        rho, rho_ok = row_spearman(s, approx, allowed, x_ranks=logit_ranks)
        rho_ok = rho_ok & ~bad & counted
        out["monotonicity"] = _mean_or_none(rho, rho_ok)
        out["monotonicity_rows_defined"] = int(rho_ok.sum())
        out["monotonicity_rows_undefined"] = int((counted & ~rho_ok).sum())

    considered = allowed & (finite & counted).unsqueeze(-1)
    total = int(considered.sum())
    out["negative_fraction"] = float(((approx < 0) & considered).sum()) / total if total else None
    out["ill_defined_rows"] = int((bad & counted).sum())

    out.update(_flops(n, feature_dim, head_dim, value_dim, is_causal, chunk_size, window))
    return out


def _flops(n, feature_dim, head_dim, value_dim, causal, chunk_size, window=None) -> dict:
    """FLOP counts per head from ``explorer.measure.cost``; None where the dimensions are unknown.
    A sliding window's exact part is added to the linear path (``window_flops``)."""
    if feature_dim is not None:
        feature_dim = check_positive_int(feature_dim, "feature_dim")
    if head_dim is not None:
        head_dim = check_positive_int(head_dim, "head_dim")
    if chunk_size is not None:
        chunk_size = check_positive_int(chunk_size, "chunk_size")
    d = head_dim if head_dim is not None else value_dim
    result = {"feature_dim": feature_dim, "quadratic_flops": None, "linear_flops": None, "flop_ratio": None}
    if feature_dim is None or d is None:
        return result
    dv = value_dim if value_dim is not None else d
    counts = flop_counts(n, d, feature_dim, dv, causal, chunk_size)
    linear = int(counts["linear_flops"])
    if window:
        linear += window_flops(n, window, d, dv, feature_dim, causal)
    result.update(quadratic_flops=int(counts["quadratic_flops"]), linear_flops=linear,
                  flop_ratio=float(counts["quadratic_flops"]) / linear)
    return result


def window_pairs(n: int, window: int, causal: bool) -> int:
    """(query, key) pairs inside a sliding window of ``window`` keys: causal keys i-w+1..i,
    non-causal keys with |i - j| < w, cut at the sequence's ends."""
    n, w = int(n), int(window)
    if w <= 0:
        return 0
    if causal:
        c = min(w, n)
        return c * (c + 1) // 2 + (n - c) * c
    c = min(w - 1, n - 1)                       # keys on one side of the query
    one_side = c * (c + 1) // 2 + (n - 1 - c) * c
    return n + 2 * one_side


def window_flops(n: int, window: int, head_dim: int, value_dim: int, feature_dim: int, causal: bool) -> int:
    """The window's own cost in a linear-time sliding-window hybrid, by the shared FLOP model
    (multiply-add = 2): per pair in the window, the exact logit q.k (2 d), its weight times
    the value (2 d_v), and the inner kernel phi(q).phi(k) (2 m), which the window replaces
    and so must be taken out of the linear part's sums."""
    return 2 * window_pairs(n, window, causal) * (int(head_dim) + int(value_dim) + int(feature_dim))


# ---------------------------------------------------------------------------------------
# Showing a metric honestly: a mean over rows says how many rows had no value
# ---------------------------------------------------------------------------------------

# metric key -> (key of the count of rows that have no value for it, why such a row has none)
UNDEFINED_ROWS = {
    "map_rel_error": ("error_rows_excluded", "their weights are not finite (a zero normaliser)"),
    "output_rel_error": ("error_rows_excluded", "their weights are not finite (a zero normaliser)"),
    "kl_mean": ("kl_rows_undefined", "the map gives negative or non-finite weight to a key softmax attends "
                                     "to, or the row is ill-defined"),
    "entropy_approx": ("entropy_approx_rows_undefined", "they hold negative or non-finite weights, or are "
                                                        "ill-defined: not probability distributions"),
    "monotonicity": ("monotonicity_rows_undefined", "they have a single key (the first causal row), constant "
                                                    "weights or logits, or are ill-defined"),
}


# metric key -> key of the count of rows where it is +inf (a value, the worst one: the mean
# beside it is over the finite rows, and the count is shown with it, never dropped).
INFINITE_ROWS = {"kl_mean": "kl_rows_infinite"}


# The means that only a probability distribution has: none for a map without a normaliser.
DISTRIBUTION_METRICS = ("kl_mean", "entropy_approx")


def why_key(row: dict, key: str) -> str:
    """The key of the words that say why ``key`` has no value on some rows of ``row``: for
    KL and entropy of a map without a normaliser, that its rows are weights; otherwise the
    metric's own reason (``common.why.<key>``; the output error shares the map error's)."""
    if key in DISTRIBUTION_METRICS and row.get("unnormalised_rows"):
        return "metrics.why_weights"
    return f"common.why.{'map_rel_error' if key == 'output_rel_error' else key}"


def weights_note(row: dict, lang: str, name=None) -> str:
    """The sentence under a table that has a map without a normaliser: its rows are weights,
    not distributions, so no KL or entropy; its map and output errors are what judge it."""
    from ..text import say

    def number(x):
        return say("common.na", lang) if x is None else f"{x:.3g}"

    negative = row.get("negative_fraction")
    return say("metrics.weights_note", lang, map=row["map"] if name is None else name,
               rows=int(row.get("unnormalised_rows") or 0), total=int(row.get("total_rows") or 0),
               negative=say("metrics.weights_negative", lang, share=f"{negative:.0%}") if negative else "",
               map_error=number(row.get("map_rel_error")), output_error=number(row.get("output_rel_error")))


def infinite_count(row: dict, key: str) -> int:
    """Rows of one ``compare`` row where ``key`` is +inf (0 for metrics that cannot be)."""
    count_key = INFINITE_ROWS.get(key)
    return int(row.get(count_key) or 0) if count_key else 0


def undefined_share(row: dict, key: str) -> tuple[int, int]:
    """(rows without a value for ``key``, rows compared) of one ``compare`` row; (0, total)
    for metrics that are not means over rows."""
    total = int(row.get("total_rows") or 0)
    count_key = UNDEFINED_ROWS.get(key, (None, ""))[0]
    count = int(row.get(count_key) or 0) if count_key else 0
    return count, total


def rows_in_mean(row: dict, key: str) -> int:
    """How many rows the mean ``row[key]`` is over: the rows compared, less those without a
    value and those where it is +inf (counted apart, never averaged in)."""
    count, total = undefined_share(row, key)
    return total - count - infinite_count(row, key)


def mostly_undefined(row: dict, key: str) -> bool:
    """No value on more than half of the rows, or no row with a value at all: not a number
    to show bare, no point on a plane, no bar. (The 'needle' preset with the identity map:
    KL defined on 1 row of 128 and 0 there.) Rows where the value is +inf have one."""
    count, total = undefined_share(row, key)
    if total > 0 and 2 * count > total:
        return True
    return row.get(key) is None and not infinite_count(row, key)


def shown_value(row: dict, key: str, digits: int = 4):
    """What a table shows for ``key``: the number when every row has a finite one; "0.123 (5
    of 128 rows n/a)" when most rows do; "n/a (127 of 128 rows)" when most do not (or none
    does). Rows where the value is +inf are said beside the finite mean: "0.123 (∞ on 4 of
    128 rows)", or "∞ (on 128 of 128 rows)" when no row is finite."""
    value = row.get(key)
    count, total = undefined_share(row, key)
    inf = infinite_count(row, key)
    if mostly_undefined(row, key):
        if count and inf:
            return Message("common.na_rows_inf", count=count, total=total, inf=inf)
        if count:
            return Message("common.na_rows", count=count, total=total)
        return Message("common.na") if value is None else value
    if value is None:
        return Message("common.inf_only", inf=inf, total=total)
    number = round_significant(value, digits)
    shown = f"{number:.{digits}g}"
    if inf:
        if count:
            return Message("common.inf_mean_na", number=shown, inf=inf, count=count, total=total)
        return Message("common.inf_mean", number=shown, inf=inf, total=total)
    return Message("common.na_some", number=shown, count=count, total=total) if count else number


def undefined_notes(rows: list) -> list[str]:
    """One sentence per table cell that is n/a or partly so: which map, how many rows and why
    (the explanation a hover would give; the table cell has room for the count only)."""
    from ..catalog import METRIC_SHORT
    from ..text import say
    notes = []
    for row in rows:
        for key, (_, why) in UNDEFINED_ROWS.items():
            count, total = undefined_share(row, key)
            if key not in row or not count:
                continue
            if key in DISTRIBUTION_METRICS and row.get("unnormalised_rows"):
                why = say(why_key(row, key), "en")
            defined_mean = row.get(key)
            tail = "" if defined_mean is None else f"; over the other {total - count}: {defined_mean:.4g}"
            verdict = "n/a" if mostly_undefined(row, key) else "partly n/a"
            notes.append(f"{row['map']}, {METRIC_SHORT.get(key, key)} {verdict}: no value on {count} of {total} "
                         f"rows because {why}{tail}.")
    for row in rows:
        for key in INFINITE_ROWS:
            inf = infinite_count(row, key)
            if key in row and inf:
                notes.append(infinite_note(row, key, "en"))
    notes += [weights_note(row, "en") for row in rows if row.get("unnormalised_rows")]
    return notes


def infinite_tail(row: dict, key: str, lang: str) -> str:
    from ..text import say
    mean = row.get(key)
    return "" if mean is None else say("common.inf_tail", lang, mean=f"{mean:.4g}", rest=rows_in_mean(row, key))


def infinite_note(row: dict, key: str, lang: str, name=None, metric=None) -> str:
    """The sentence that says on how many rows ``key`` is +inf, and what the mean beside it covers."""
    from ..catalog import METRIC_SHORT
    from ..text import say
    return say("common.inf_note", lang, map=row["map"] if name is None else name,
               metric=METRIC_SHORT.get(key, key) if metric is None else metric, inf=infinite_count(row, key),
               total=row.get("total_rows") or 0, tail=infinite_tail(row, key, lang))


def round_significant(x, digits):
    """A float rounded to ``digits`` significant figures; None, flags, integers, zero and
    non-finite values as they are."""
    if x is None or isinstance(x, bool) or isinstance(x, int):
        return x
    if not math.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{digits}g}")
