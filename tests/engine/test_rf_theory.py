"""explorer.maps.rf_theory: the FAVOR+ variance formula, held to Monte-Carlo estimates made with
the app's own FAVOR+ map (IID features)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer import maps as feature_maps
from explorer.maps import rf_theory


def _per_feature_estimates(q, k, num_features, seed=0):
    """m * phi_f(q) phi_f(k) for each feature f of one IID FAVOR+ map: independent draws of
    one feature's kernel estimate, shaped (num_features, Nq, Nk)."""
    fmap = feature_maps.create("favor_plus", q.shape[-1], num_features=num_features, seed=seed, orthogonal=False)
    fq = fmap(q.double()).double()          # keys and queries mapped alike: the unbiased estimate
    fk = fmap(k.double()).double()
    return num_features * fq.T.unsqueeze(-1) * fk.T.unsqueeze(-2)


def test_relative_variance_matches_monte_carlo():
    gen = torch.Generator().manual_seed(1)
    d = 8
    q = 0.5 * torch.randn(3, d, generator=gen, dtype=torch.float64)
    k = 0.5 * torch.randn(2, d, generator=gen, dtype=torch.float64)
    z = _per_feature_estimates(q, k, 400_000)
    kernel = torch.exp(q @ k.T / math.sqrt(d))
    np.testing.assert_allclose(z.mean(0).numpy(), kernel.numpy(), rtol=0.03)          # unbiased
    measured = (z.var(0) / kernel ** 2).reshape(-1).numpy()
    theory = rf_theory.favor_relative_variance(q, k)
    assert theory.shape == (6,)
    np.testing.assert_allclose(measured, theory, rtol=0.1)


def test_required_features_give_the_asked_error():
    """With m = m_required for one pair, the estimate's relative error over redraws is the target."""
    gen = torch.Generator().manual_seed(2)
    d = 8
    q = 0.6 * torch.randn(1, d, generator=gen, dtype=torch.float64)
    k = 0.6 * torch.randn(1, d, generator=gen, dtype=torch.float64)
    for target in (0.1, 0.3):
        need = rf_theory.favor_required_features(q, k, rel_error=target)
        m = int(round(need["m_required"]))
        assert need["pairs"] == 1 and 10 < m < 5000
        groups = 2000
        z = _per_feature_estimates(q, k, groups * m, seed=3)[:, 0, 0]
        estimates = z.reshape(groups, m).mean(1)              # 2000 independent m-feature estimates
        kernel = float(torch.exp(q @ k.T / math.sqrt(d)))
        rel = float(estimates.std() / kernel)
        assert rel == pytest.approx(target, rel=0.1), target


def test_summary_is_the_median_over_pairs_and_norms_are_scaled():
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(2, 5, 16, generator=gen)       # two heads
    k = torch.randn(2, 7, 16, generator=gen)
    norms = rf_theory.favor_norms(q, k)
    np.testing.assert_allclose(norms["q_norms"], (q.double().norm(dim=-1) / 2.0).numpy())   # d^(1/4) = 2
    np.testing.assert_allclose(norms["k_norms"], (k.double().norm(dim=-1) / 2.0).numpy())
    out = rf_theory.favor_required_features(q, k, rel_error=0.2)
    qs, ks = q.double() / 2.0, k.double() / 2.0
    u2 = ((qs.unsqueeze(-2) + ks.unsqueeze(-3)) ** 2).sum(-1).reshape(-1).numpy()
    m = np.expm1(u2) / 0.2 ** 2
    assert out["pairs"] == 70
    assert out["m_required"] == pytest.approx(10 ** np.quantile(np.log10(m), 0.5), rel=1e-9)
    assert out["m_quantiles"][0.9] >= out["m_required"] >= out["m_quantiles"][0.1]
    assert out["sq_norm_sum"]["median"] == pytest.approx(np.median(u2), rel=1e-9)
    assert out["per_pair_rel_var"]["max"] == pytest.approx(np.expm1(u2.max()), rel=1e-9)


def test_causal_pairs_and_huge_norms():
    q = torch.ones(4, 8)
    k = torch.ones(4, 8)
    assert rf_theory.favor_required_features(q, k, causal=True)["pairs"] == 10
    big = rf_theory.favor_required_features(40 * q, 40 * k)          # |q'+k'|^2 = 4 * 1600 * 8 / sqrt(8)
    assert math.isfinite(big["log10_m_required"]) and big["log10_m_required"] > 1000
    assert big["m_required"] == math.inf                              # said as inf, not as a wrong number
    assert rf_theory.log_relative_variance(np.array([0.0]))[0] == -math.inf     # q' = -k': no variance at all


@pytest.mark.parametrize("args, message", [
    ((torch.ones(3, 4), torch.ones(3, 5)), "q, k"),
    ((torch.ones(3, 4), torch.full((3, 4), math.nan)), "NaN"),
])
def test_bad_input_is_named(args, message):
    with pytest.raises(ValueError, match=message):
        rf_theory.favor_required_features(*args)
    with pytest.raises(ValueError, match="rel_error"):
        rf_theory.favor_required_features(torch.ones(2, 4), torch.ones(2, 4), rel_error=0)
