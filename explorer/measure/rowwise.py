"""Row helpers: per-row KL, entropy, Spearman correlation and relative error, the ranks
behind them, and which rows every mean counts. ``explorer.measure.metrics`` builds the
comparison of two maps from them.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..checks import as_float_tensor


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
