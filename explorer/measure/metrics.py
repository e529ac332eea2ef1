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
*ill-defined* when it is flagged by ``explorer.diagnostics.attention.kernel_map_with_flags`` (pass the
flags as ``ill_defined``) or when any of its allowed entries is not finite. A map without a
normaliser (HGRN2's, the delta rule's: rows that do not sum to 1) is weights, not
distributions: it has no KL or entropy on any row (``weights_not_distributions``), only its
errors. Everything is computed in float64.
"""

from __future__ import annotations

import math

import torch

# METRIC_INFO (key -> label with unit, one-sentence explanation) lives in the catalog,
# which the UI reads before the engine is imported; re-exported here.
from ..catalog import METRIC_INFO  # noqa: F401
from ..checks import as_float_tensor, check_finite, check_positive_int
from .cost import flop_counts
from .rowwise import (_allowed, _finite_rows, average_ranks, gather_rows, kl_rounded_to_zero, relative_error,
                      row_entropy, row_kl, row_spearman, rows_in_means, sorted_average_ranks,
                      weights_not_distributions)


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
    """``compare`` written as the plain composition of the row helpers (``rowwise``), one full pass
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
