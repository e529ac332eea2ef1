"""Tests for explorer.measure.metrics: each number against an independent computation."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from explorer.diagnostics import attention
from explorer.measure import metrics, rowwise
from explorer import maps as fm


def _qkv(*shape, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) for _ in range(3))


def _independent_kl(p, q):
    """KL(p || q) of one row with numpy, skipping p = 0 terms."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    s = p > 0
    return float(np.sum(p[s] * np.log(p[s] / q[s])))


# --- exact cases --------------------------------------------------------------------

def test_compare_identical_maps_is_exact():
    q, k, v = _qkv(2, 12, 8)
    s = attention.logits(q, k)
    a = torch.softmax(s, dim=-1)
    r = metrics.compare(a, a.clone(), v, s)
    assert r["map_rel_error"] == 0.0
    assert r["output_rel_error"] == 0.0
    assert r["kl_mean"] == pytest.approx(0.0, abs=1e-15)
    assert r["kl_rows_defined"] == 24 and r["kl_rows_undefined"] == 0
    assert r["monotonicity"] == pytest.approx(1.0, abs=1e-12)
    assert r["entropy_approx"] == pytest.approx(r["entropy_reference"])
    assert r["negative_fraction"] == 0.0 and r["ill_defined_rows"] == 0
    assert r["causal"] == 0


def test_compare_keys_match_metric_info_and_are_plain_numbers():
    q, k, v = _qkv(12, 8)
    a = attention.softmax_map(q, k)
    r = metrics.compare(a, a, v, attention.logits(q, k), feature_dim=8)
    assert set(r) == set(metrics.METRIC_INFO)
    for key, value in r.items():
        assert value is None or type(value) in (int, float), key
    for label, text in metrics.METRIC_INFO.values():
        assert label and text.endswith(".")


@pytest.mark.parametrize("n", [2, 5, 17])
def test_one_hot_against_uniform_gives_log_n(n):
    one_hot = torch.eye(n)[torch.randperm(n, generator=torch.Generator().manual_seed(n))]
    uniform = torch.full((n, n), 1.0 / n)
    r = metrics.compare(one_hot, uniform, causal=False)
    assert r["kl_mean"] == pytest.approx(math.log(n))
    assert r["entropy_approx"] == pytest.approx(math.log(n))
    assert r["entropy_reference"] == pytest.approx(0.0, abs=1e-12)
    # The other way round the uniform reference has mass where the one-hot map has none.
    back = metrics.compare(uniform, one_hot, causal=False)
    assert back["kl_mean"] is None
    # KL is +inf there (a value, not a gap): counted apart from the undefined rows.
    assert back["kl_rows_infinite"] == n and back["kl_rows_undefined"] == 0 and back["kl_rows_defined"] == 0


def test_relative_error_against_numpy():
    gen = torch.Generator().manual_seed(3)
    a, b = torch.randn(3, 6, 6, generator=gen), torch.randn(3, 6, 6, generator=gen)
    got = rowwise.relative_error(b, a)
    want = np.linalg.norm((b - a).numpy(), axis=(1, 2)) / np.linalg.norm(a.numpy(), axis=(1, 2))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    rows = torch.tensor([True, False, True, True, False, True])
    got_rows = rowwise.relative_error(b[0], a[0], rows=rows)
    an, bn = a[0].numpy()[rows.numpy()], b[0].numpy()[rows.numpy()]
    assert float(got_rows) == pytest.approx(np.linalg.norm(bn - an) / np.linalg.norm(an), rel=1e-6)
    assert torch.isnan(rowwise.relative_error(b[0], torch.zeros(6, 6)))


def test_row_kl_and_entropy_against_numpy():
    gen = torch.Generator().manual_seed(4)
    p = torch.softmax(torch.randn(5, 9, generator=gen), -1)
    q = torch.softmax(torch.randn(5, 9, generator=gen), -1)
    kl, ok = rowwise.row_kl(p, q)
    assert ok.all()
    for i in range(5):
        assert float(kl[i]) == pytest.approx(_independent_kl(p[i], q[i]), rel=1e-6)
    h, ok = rowwise.row_entropy(p)
    assert ok.all()
    np.testing.assert_allclose(h.numpy(), stats.entropy(p.numpy(), axis=-1), rtol=1e-6)


def test_row_kl_infinite_where_q_is_zero_on_support_undefined_where_not_finite():
    p = torch.tensor([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.5, 0.5, 0.0]])
    q = torch.tensor([[0.5, 0.0, 0.5], [0.6, 0.6, -0.2], [0.2, float("nan"), 0.5], [1.2, -0.2, 0.0]])
    kl, ok = rowwise.row_kl(p, q)
    # Row 0: q = 0 where p > 0: KL = +inf, a value. Row 1: q < 0 only where p = 0, so it
    # is finite. Row 2: q is not finite. Row 3: q < 0 where p > 0: no distribution.
    assert ok.tolist() == [True, True, False, False]
    assert float(kl[0]) == math.inf
    assert float(kl[1]) == pytest.approx(_independent_kl([0.5, 0.5], [0.6, 0.6]))
    assert torch.isnan(kl[2]) and torch.isnan(kl[3])


# --- Spearman -----------------------------------------------------------------------

def test_row_spearman_matches_scipy_on_random_rows():
    gen = torch.Generator().manual_seed(5)
    x, y = torch.randn(2, 40, 30, generator=gen).double().unbind(0)
    rho, ok = rowwise.row_spearman(x, y)
    assert ok.all()
    for i in range(40):
        assert float(rho[i]) == pytest.approx(stats.spearmanr(x[i], y[i]).statistic, abs=1e-12)


def test_row_spearman_with_ties_matches_scipy():
    gen = torch.Generator().manual_seed(6)
    # Small integers give many ties in both rows.
    x = torch.randint(0, 4, (50, 12), generator=gen).double()
    y = torch.randint(0, 3, (50, 12), generator=gen).double()
    rho, ok = rowwise.row_spearman(x, y)
    for i in range(50):
        constant = x[i].unique().numel() == 1 or y[i].unique().numel() == 1
        assert bool(ok[i]) == (not constant)
        if not constant:
            assert float(rho[i]) == pytest.approx(stats.spearmanr(x[i], y[i]).statistic, abs=1e-12)


def test_average_ranks_match_scipy():
    x = torch.tensor([[3.0, 1.0, 3.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 1.0]])
    np.testing.assert_allclose(rowwise.average_ranks(x).numpy(), stats.rankdata(x.numpy(), axis=-1))


def test_row_spearman_causal_rows_use_allowed_entries_only():
    gen = torch.Generator().manual_seed(7)
    n = 10
    x, y = torch.randn(2, n, n, generator=gen).double().unbind(0)
    mask = attention.causal_mask(n)
    # Garbage above the diagonal must not matter.
    x_garbage = x.masked_fill(~mask, 1e9)
    y_garbage = y.masked_fill(~mask, float("nan"))
    rho, ok = rowwise.row_spearman(x_garbage, y_garbage, mask)
    assert not ok[0]          # a single allowed entry: undefined
    for i in range(1, n):
        assert ok[i]
        want = stats.spearmanr(x[i, : i + 1], y[i, : i + 1]).statistic
        assert float(rho[i]) == pytest.approx(want, abs=1e-12)


def test_constant_rows_are_skipped_and_counted():
    x = torch.tensor([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [1.0, 3.0, 2.0]])
    y = torch.tensor([[0.2, 0.3, 0.5], [0.1, 0.2, 0.7], [0.4, 0.4, 0.4]])
    rho, ok = rowwise.row_spearman(x, y)
    assert ok.tolist() == [True, False, False]
    assert torch.isnan(rho[1:]).all()
    r = metrics.compare(torch.softmax(x, -1), y, logits=x, causal=False)
    assert r["monotonicity_rows_defined"] == 1 and r["monotonicity_rows_undefined"] == 2
    assert r["monotonicity"] == pytest.approx(float(rho[0]))


def test_monotone_transform_of_logits_scores_one_and_reversed_scores_minus_one():
    q, k, _ = _qkv(16, 8, seed=8)
    s = attention.logits(q, k)
    a = torch.softmax(s, -1)
    assert metrics.compare(a, a, logits=s)["monotonicity"] == pytest.approx(1.0, abs=1e-12)
    flipped = torch.softmax(-s, -1)
    assert metrics.compare(a, flipped, logits=s)["monotonicity"] == pytest.approx(-1.0, abs=1e-12)


# --- negative weights and ill-defined rows ------------------------------------------

def test_negative_fraction_on_hand_made_map():
    ref = torch.full((3, 3), 1 / 3)
    approx = torch.tensor([[0.5, 0.7, -0.2], [1 / 3, 1 / 3, 1 / 3], [-0.1, -0.1, 1.2]])
    r = metrics.compare(ref, approx, causal=False)
    assert r["negative_fraction"] == pytest.approx(3 / 9)
    assert r["entropy_approx_rows_undefined"] == 2
    assert r["entropy_approx"] == pytest.approx(math.log(3))


def test_ill_defined_rows_are_excluded_from_kl_and_counted():
    gen = torch.Generator().manual_seed(9)
    ref = torch.softmax(torch.randn(6, 6, generator=gen), -1)
    approx = torch.softmax(torch.randn(6, 6, generator=gen), -1)
    flags = torch.tensor([False, True, False, False, False, False])
    approx[4] = float("nan")                         # a 0/0 row: non-finite, flagged implicitly
    r = metrics.compare(ref, approx, ill_defined=flags, causal=False)
    keep = [0, 2, 3, 5]
    want = np.mean([_independent_kl(ref[i], approx[i]) for i in keep])
    assert r["kl_mean"] == pytest.approx(want, rel=1e-6)
    assert r["kl_rows_defined"] == 4 and r["kl_rows_undefined"] == 2
    assert r["ill_defined_rows"] == 2
    assert r["error_rows_excluded"] == 1             # only the NaN row cannot be measured
    rows = torch.ones(6, dtype=torch.bool)
    rows[4] = False
    assert r["map_rel_error"] == pytest.approx(float(rowwise.relative_error(approx, ref, rows)), rel=1e-6)


def test_every_row_undefined_gives_none_not_nan():
    ref = torch.full((4, 4), 0.25)
    approx = torch.full((4, 4), float("nan"))
    r = metrics.compare(ref, approx, torch.ones(4, 2), logits=torch.zeros(4, 4), causal=False)
    for key in ("kl_mean", "entropy_approx", "monotonicity", "map_rel_error", "output_rel_error",
                "negative_fraction"):
        assert r[key] is None, key
    assert r["ill_defined_rows"] == 4


def test_identity_map_flags_match_attention_module():
    q, k, v = _qkv(2, 30, 8, seed=10)
    fmap = fm.create("identity", 8)
    a = attention.softmax_map(q, k)
    ahat, flags = attention.kernel_map_with_flags(q, k, fmap)
    r = metrics.compare(a, ahat, v, attention.logits(q, k), ill_defined=flags)
    assert r["ill_defined_rows"] == int(flags.sum()) > 0
    assert r["kl_rows_defined"] + r["kl_rows_undefined"] == 60
    assert r["negative_fraction"] > 0


# --- causal vs non-causal -------------------------------------------------------------

def test_causal_is_read_from_the_maps_and_rows_use_allowed_entries():
    q, k, v = _qkv(9, 4, seed=11)
    fmap = fm.create("elu1", 4)
    a = attention.softmax_map(q, k, causal=True)
    ahat = attention.kernel_map(q, k, fmap, causal=True)
    s = attention.logits(q, k)
    r = metrics.compare(a, ahat, v, s)
    assert r["causal"] == 1
    # Row 0 has a single key (KL 0, entropy 0 for every map): causal means leave it out.
    assert r["total_rows"] == 8 and r["monotonicity_rows_undefined"] == 0
    want_kl = np.mean([_independent_kl(a[i, : i + 1], ahat[i, : i + 1]) for i in range(1, 9)])
    assert r["kl_mean"] == pytest.approx(want_kl, rel=1e-9)
    want_h = np.mean([stats.entropy(ahat[i, : i + 1].numpy()) for i in range(1, 9)])
    assert r["entropy_approx"] == pytest.approx(want_h, rel=1e-9)
    assert r["entropy_reference"] < math.log(9)           # short causal rows: low entropy
    # Masked logits (-inf above the diagonal) are accepted in causal mode.
    masked = s.masked_fill(~attention.causal_mask(9), float("-inf"))
    assert metrics.compare(a, ahat, v, masked)["monotonicity"] == pytest.approx(r["monotonicity"])


def test_causal_and_non_causal_differ_and_flops_follow():
    q, k, v = _qkv(20, 8, seed=12)
    fmap = fm.create("elu1", 8)
    rc = metrics.compare(attention.softmax_map(q, k, True), attention.kernel_map(q, k, fmap, True), v,
                         feature_dim=8)
    rn = metrics.compare(attention.softmax_map(q, k), attention.kernel_map(q, k, fmap), v, feature_dim=8)
    assert rc["causal"] == 1 and rn["causal"] == 0
    from explorer.measure.cost import flop_counts
    assert rc["quadratic_flops"] == flop_counts(20, 8, 8, 8, causal=True)["quadratic_flops"]
    assert rn["quadratic_flops"] == flop_counts(20, 8, 8, 8)["quadratic_flops"]
    assert rc["quadratic_flops"] < rn["quadratic_flops"]
    assert metrics.compare(attention.softmax_map(q, k), attention.softmax_map(q, k))["quadratic_flops"] is None


def test_one_hot_diagonal_against_uniform_is_not_read_as_causal():
    r = metrics.compare(torch.eye(4), torch.full((4, 4), 0.25))
    assert r["causal"] == 0
    assert r["kl_mean"] == pytest.approx(math.log(4))


def test_heads_are_pooled():
    q, k, v = _qkv(3, 10, 4, seed=13)
    fmap = fm.create("elu1", 4)
    a, ahat = attention.softmax_map(q, k), attention.kernel_map(q, k, fmap)
    whole = metrics.compare(a, ahat, v)
    per_head = [metrics.compare(a[h], ahat[h], v[h]) for h in range(3)]
    assert whole["map_rel_error"] == pytest.approx(np.mean([r["map_rel_error"] for r in per_head]))
    assert whole["kl_mean"] == pytest.approx(np.mean([r["kl_mean"] for r in per_head]))
    assert whole["total_rows"] == 30


# --- validation -----------------------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(approx_map=torch.full((3, 4, 4), 0.25)), "approx_map"),
        (dict(reference_map=torch.full((4, 3), 0.25)), "reference_map"),
        (dict(reference_map=torch.full((4, 4), float("nan"))), "reference_map"),
        (dict(v=torch.ones(5, 2)), "v"),
        (dict(v=torch.ones(4)), "v"),
        (dict(logits=torch.zeros(4, 5)), "logits"),
        (dict(logits=torch.full((4, 4), float("inf"))), "logits"),
        (dict(ill_defined=torch.zeros(3, dtype=torch.bool)), "ill_defined"),
        (dict(ill_defined=torch.full((4,), 0.5)), "ill_defined"),
        (dict(causal="yes"), "causal"),
        (dict(feature_dim=0), "feature_dim"),
    ],
)
def test_validation_names_the_argument(kwargs, name):
    args = dict(reference_map=torch.full((4, 4), 0.25), approx_map=torch.full((4, 4), 0.25))
    args.update(kwargs)
    ref, approx = args.pop("reference_map"), args.pop("approx_map")
    with pytest.raises(ValueError, match=name):
        metrics.compare(ref, approx, **args)


def test_precomputed_logit_ranks_give_the_same_monotonicity():
    from explorer.diagnostics import attention
    from explorer import maps as feature_maps
    q, k = torch.randn(2, 40, 8), torch.randn(2, 40, 8)
    for causal in (False, True):
        ref = attention.softmax_map(q, k, causal)
        approx = attention.kernel_map(q, k, feature_maps.create("elu1", 8), causal)
        s = attention.logits(q, k)
        allowed = attention.causal_mask(40) if causal else None
        plain = metrics.compare(ref, approx, logits=s, causal=causal)
        ranked = metrics.compare(ref, approx, logits=s, causal=causal, logit_ranks=rowwise.average_ranks(s, allowed))
        assert plain["monotonicity"] == ranked["monotonicity"]


# --- the prepared Reference against the plain composition ----------------------------

def _assert_same_metrics(fast, plain):
    assert set(fast) == set(plain)
    for key, want in plain.items():
        got = fast[key]
        if want is None or got is None:
            assert got is None and want is None, (key, got, want)
        elif isinstance(want, int):
            assert got == want, (key, got, want)
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (key, got, want)


def _hard_maps(q, k, causal, seed):
    """Kernel maps that exercise every branch: negative weights and ill-defined rows
    (identity), exact zeros and ties (relu), a random-feature map, and rows made
    non-finite or flagged by hand."""
    out = []
    for name, m in (("identity", None), ("relu", None), ("favor_plus", 16), ("elu1", None)):
        fmap = fm.create(name, q.shape[-1], num_features=m, seed=seed)
        out.append(attention.kernel_map_with_flags(q, k, fmap, causal=causal))
    approx, flags = out[-1]
    broken = approx.clone()
    broken[..., 0, 0] = math.nan
    if broken.shape[-1] > 2:
        broken[..., 2, 0] = math.inf
    extra_flags = flags.clone()
    extra_flags[..., -1] = True
    out.append((broken, extra_flags))
    return out


@pytest.mark.parametrize("shape", [(1, 4), (7, 4), (33, 8), (2, 17, 4), (2, 3, 9, 4)])
@pytest.mark.parametrize("causal", [False, True])
def test_compare_equals_the_plain_composition(shape, causal):
    q, k, v = _qkv(*shape, seed=sum(shape))
    q, k, v = q.float(), k.float(), v.float()
    ref = attention.softmax_map(q, k, causal=causal)
    s = attention.masked_logits(q, k, causal)
    prepared = metrics.Reference(ref, v, s, causal)
    for approx, flags in _hard_maps(q, k, causal, seed=len(shape)) + [(ref, None)]:
        plain = metrics.compare_plain(ref, approx, v, s, ill_defined=flags, causal=causal, feature_dim=8)
        _assert_same_metrics(metrics.compare(ref, approx, v, s, ill_defined=flags, causal=causal, feature_dim=8),
                             plain)
        _assert_same_metrics(prepared.compare(approx, ill_defined=flags, feature_dim=8), plain)


def test_compare_equals_plain_on_ties_constant_rows_and_negative_maps():
    gen = torch.Generator().manual_seed(3)
    ref = torch.softmax(torch.randn(6, 6, generator=gen, dtype=torch.float64), -1)
    approx = torch.randint(-1, 3, (6, 6), generator=gen).double()   # ties, zeros and negatives
    approx[1] = 0.25                                                  # a constant row
    logits = torch.randint(0, 3, (6, 6), generator=gen).double()     # tied logits
    logits[4] = 1.0                                                   # a constant logit row
    v = torch.randn(6, 2, generator=gen, dtype=torch.float64)
    for causal in (False, True):
        _assert_same_metrics(metrics.compare(ref, approx, v, logits, causal=causal),
                             metrics.compare_plain(ref, approx, v, logits, causal=causal))


def test_reference_refuses_what_it_already_holds():
    q, k, v = _qkv(5, 4)
    ref = attention.softmax_map(q, k)
    prepared = metrics.Reference(ref, v, causal=False)
    with pytest.raises(ValueError, match="v, logits"):
        metrics.compare(prepared, ref, v)
    with pytest.raises(ValueError, match="causal"):
        metrics.compare(prepared, ref, causal=True)
    with pytest.raises(ValueError, match="causal"):
        metrics.Reference(ref, causal=None)
    with pytest.raises(ValueError, match="approx_map"):
        prepared.compare(ref[:4, :4])
    assert metrics.compare(prepared, ref)["map_rel_error"] == 0.0


def test_reference_edge_cases_match_the_plain_form():
    # float64 overflow of the squared norms: no relative error, as in the plain form
    huge = torch.rand(4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 1e300
    assert metrics.compare(huge, huge * 1.5)["map_rel_error"] is None
    assert metrics.compare_plain(huge, huge * 1.5)["map_rel_error"] is None
    # ranks handed in by the caller are centred on their own mean, as the plain form does
    q, k, v = _qkv(9, 4, seed=5)
    ref, approx = attention.softmax_map(q, k, True), attention.kernel_map(q, k, fm.create("elu1", 4), True)
    s = attention.masked_logits(q, k, True)
    odd_ranks = rowwise.average_ranks(s)      # ranked without the causal mask
    assert metrics.compare(ref, approx, logits=s, causal=True, logit_ranks=odd_ranks)["monotonicity"] == \
        pytest.approx(metrics.compare_plain(ref, approx, logits=s, causal=True, logit_ranks=odd_ranks)["monotonicity"])


def test_reference_keeps_its_own_copy_and_wants_a_real_bool():
    q, k, v = _qkv(6, 4, seed=2)
    ref = attention.softmax_map(q, k)
    prepared = metrics.Reference(ref, v, causal=False)
    same = ref.clone()
    ref.mul_(2.0)
    v.mul_(3.0)
    r = prepared.compare(same)
    assert r["map_rel_error"] == 0.0 and r["output_rel_error"] == 0.0
    with pytest.raises(ValueError, match="causal"):
        metrics.compare(prepared, same, causal=0)
