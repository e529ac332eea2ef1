"""Feature maps: exact kernel identities, and random features judged statistically."""

import math

import numpy as np
import pytest
import torch

from explorer import maps as fm
from explorer.core.feature_maps import SPECS

D = 16


def pairs(n=64, d=D, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.float64) * scale, torch.randn(n, d, generator=g, dtype=torch.float64) * scale


def kernel(phi, q, k):
    """Row-wise phi(q_i) . phi(k_i) for paired rows."""
    return (phi(q) * phi(k)).sum(-1)


def logit(q, k):
    return (q * k).sum(-1) / math.sqrt(q.shape[-1])


def test_registry_lists_every_map():
    assert {"identity", "taylor1", "elu1", "relu", "favor_plus", "trig_rff", "taylor2", "cosformer"} <= set(fm.names())


@pytest.mark.parametrize("name", fm.names())
@pytest.mark.parametrize("d", [1, 7, 16])
def test_every_map_makes_as_many_features_as_its_spec_says(name, d):
    # The spec's count is what the catalogue shows and the cost model budgets: the tensor the
    # map really returns must have that width, for the default m and for a chosen one.
    spec = SPECS[name]
    phi = fm.create(name, d, seed=3)
    out = phi(torch.randn(2, 3, 7, d))
    assert out.shape == (2, 3, 7, spec.feature_count(d)) and phi.num_features == out.shape[-1]
    assert phi.name == name
    if spec.takes_m:
        m = spec.feature_count(d) + 4
        assert fm.create(name, d, num_features=m)(torch.randn(5, d)).shape[-1] == spec.feature_count(d, m) == m
    else:
        with pytest.raises(ValueError, match="num_features"):
            fm.create(name, d, num_features=spec.feature_count(d) + 4)


@pytest.mark.parametrize("name", fm.names())
def test_paired_maps_refuse_an_odd_m_that_the_spec_rounds_up(name):
    spec = SPECS[name]
    if not spec.takes_m:
        pytest.skip("m is fixed by d")
    if spec.even_m:
        with pytest.raises(ValueError, match="even"):
            fm.create(name, D, num_features=7)
        assert spec.feature_count(D, 7) == 8        # what the views build after rounding up
    else:
        assert fm.create(name, D, num_features=7).num_features == spec.feature_count(D, 7) == 7


@pytest.mark.parametrize("name", fm.names())
def test_random_maps_are_those_offered_as_iid_and_orthogonal(name):
    # The catalogue offers a random map twice (IID, orthogonal): both must be real and differ.
    x = torch.randn(4, D, generator=torch.Generator().manual_seed(0))
    if SPECS[name].random:
        iid, orthogonal = (fm.create(name, D, seed=0, orthogonal=o)(x) for o in (False, True))
        assert not torch.equal(iid, orthogonal)
        assert not torch.equal(iid, fm.create(name, D, seed=1, orthogonal=False)(x))   # a new seed redraws
    else:
        with pytest.raises(ValueError, match="orthogonal"):
            fm.create(name, D, orthogonal=False)


def test_a_label_per_map_and_per_trained_map():
    labels = [spec.pretty for spec in SPECS.values()] + [spec.trained_pretty for spec in SPECS.values() if spec.learned]
    assert len(set(labels)) == len(labels) and all(labels)
    assert {spec.name for spec in SPECS.values() if spec.learned} == {"hedgehog", "luna"}


def test_taylor2_is_exactly_second_order_exp():
    q, k = pairs(scale=1.5)
    s = logit(q, k)
    got = kernel(fm.create("taylor2", D), q.float(), k.float()).double()
    torch.testing.assert_close(got, 1 + s + s * s / 2, rtol=1e-5, atol=1e-5)
    assert fm.create("taylor2", D).num_features == 1 + D + D * (D + 1) // 2


def test_taylor1_identity_elu_relu_kernels():
    q, k = pairs()
    qf, kf = q.float(), k.float()
    s = logit(q, k)
    torch.testing.assert_close(kernel(fm.create("identity", D), qf, kf).double(), s, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(kernel(fm.create("taylor1", D), qf, kf).double(), 1 + s, rtol=1e-5, atol=1e-5)
    elu = lambda x: torch.where(x > 0, x, torch.expm1(x)) + 1
    torch.testing.assert_close(kernel(fm.create("elu1", D), qf, kf).double(), (elu(q) * elu(k)).sum(-1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(kernel(fm.create("relu", D), qf, kf).double(), (q.clamp(min=0) * k.clamp(min=0)).sum(-1), rtol=1e-5, atol=1e-5)


def test_elu1_features_are_relatively_exact_and_stay_positive_far_below_zero():
    x = torch.tensor([[-80.0, -30.0, -17.5, -1.0, -1e-3, 0.0, 1e-3, 2.0, 40.0]], dtype=torch.float64)
    want = torch.where(x > 0, x + 1, torch.exp(x))          # elu(x) + 1 in float64
    got = fm.create("elu1", x.shape[-1])(x.float()).double()
    torch.testing.assert_close(got[:, 1:], want[:, 1:], rtol=1e-6, atol=0)  # exp(-80) is below float32's range
    assert (got[:, 1:] > 0).all()      # elu(x) + 1 written naively rounds to 0 below about -17


def test_elu1_gradient_is_that_of_elu():
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: fm.create("elu1", 3)(t), (x,))
    fm.create("elu1", 3)(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.where(x > 0, torch.ones_like(x), torch.exp(x)).detach())


def test_cosformer_kernel_has_the_cosine_locality_term():
    n = 9
    q, k = torch.randn(n, D, dtype=torch.float64), torch.randn(n, D, dtype=torch.float64)
    phi = fm.create("cosformer", D)
    w = phi(q) @ phi(k).T
    i = torch.arange(n, dtype=torch.float64)
    expect = (q.clamp(min=0) @ k.clamp(min=0).T) * torch.cos(math.pi * (i[:, None] - i[None, :]) / (2 * n))
    torch.testing.assert_close(w, expect)
    # A block of the same sequence mapped with its offset gives the same features.
    torch.testing.assert_close(phi(q[4:], offset=4, total=n), phi(q)[4:])


def test_query_rescaling_is_a_per_row_positive_constant():
    x = torch.randn(5, D, dtype=torch.float64) * 3
    for name in ["favor_plus", "trig_rff"]:
        phi = fm.create(name, D, num_features=32, seed=1)
        ratio = phi(x, is_query=True) / phi(x)
        assert (ratio > 0).all()
        torch.testing.assert_close(ratio, ratio[:, :1].expand_as(ratio))


def estimates(name, m, seeds, q, k, orthogonal):
    """phi(q).phi(k) for every seed: (len(seeds), n_pairs)."""
    return torch.stack([kernel(fm.create(name, D, num_features=m, seed=s, orthogonal=orthogonal), q, k) for s in seeds])


@pytest.mark.parametrize("name,orthogonal", [("favor_plus", False), ("favor_plus", True), ("trig_rff", False), ("trig_rff", True)])
def test_random_features_are_unbiased(name, orthogonal):
    q, k = pairs(n=8, scale=0.8, seed=1)
    est = estimates(name, 32, range(300), q, k, orthogonal)
    mean, se = est.mean(0), est.std(0) / math.sqrt(est.shape[0])
    truth = torch.exp(logit(q, k))
    z = (mean - truth).abs() / se
    assert (z < 3.5).all(), f"bias z-scores {z.tolist()}"  # 3 SE per pair; 3.5 for 8 pairs at once


@pytest.mark.parametrize("name", ["favor_plus", "trig_rff"])
def test_iid_mse_falls_like_one_over_m(name):
    q, k = pairs(n=16, scale=0.4, seed=2)  # moderate norms: the estimate is not heavy-tailed
    truth = torch.exp(logit(q, k))
    ms = [8, 16, 32, 64, 128]
    mse = [((estimates(name, m, range(200), q, k, False) - truth) ** 2).mean().item() for m in ms]
    slope = np.polyfit(np.log(ms), np.log(mse), 1)[0]
    assert -1.2 <= slope <= -0.8, f"slope {slope:.3f}, mse {mse}"


def test_favor_plus_iid_mse_matches_theory():
    """MSE of the IID estimate is exp(2s) (exp(|q'+k'|^2) - 1) / m (design notes)."""
    q, k = pairs(n=16, scale=0.4, seed=4)
    m = 64
    est = estimates("favor_plus", m, range(1000), q, k, False)
    s = logit(q, k)
    qs, ks = q / D ** 0.25, k / D ** 0.25
    theory = torch.exp(2 * s) * (torch.exp(((qs + ks) ** 2).sum(-1)) - 1) / m
    measured = ((est - torch.exp(s)) ** 2).mean(0)
    # The squared error is heavy-tailed, so judge the median pair rather than the sum.
    ratio = (measured / theory).median().item()
    assert 0.85 < ratio < 1.15, ratio


@pytest.mark.parametrize("name", ["favor_plus", "trig_rff"])
def test_orthogonal_features_no_worse_than_iid(name):
    q, k = pairs(n=32, scale=0.4, seed=5)
    truth = torch.exp(logit(q, k))
    for m in (16, 32):
        iid = ((estimates(name, m, range(200), q, k, False) - truth) ** 2).mean().item()
        orth = ((estimates(name, m, range(200), q, k, True) - truth) ** 2).mean().item()
        assert orth <= iid * 1.02, (m, orth, iid)


def test_seed_is_deterministic_and_a_new_seed_redraws():
    a, b, c = (fm.create("favor_plus", D, num_features=8, seed=s) for s in (7, 7, 8))
    assert torch.equal(a.projection, b.projection)
    assert not torch.equal(a.projection, c.projection)


def test_orthogonal_projection_rows_are_orthogonal_within_a_block():
    w = fm.create("favor_plus", D, num_features=2 * D, seed=0, orthogonal=True).projection
    block = w[:D] / w[:D].norm(dim=1, keepdim=True)
    torch.testing.assert_close(block @ block.T, torch.eye(D, dtype=w.dtype), atol=1e-10, rtol=0)


@pytest.mark.parametrize("call,arg", [
    (lambda: fm.create("nope", D), "name"),
    (lambda: fm.create("elu1", 0), "head_dim"),
    (lambda: fm.create("favor_plus", D, num_features=0), "num_features"),
    (lambda: fm.create("favor_plus", D, num_features=-3), "num_features"),
    (lambda: fm.create("trig_rff", D, num_features=7), "num_features"),
    (lambda: fm.create("elu1", D, num_features=5), "num_features"),
    (lambda: fm.create("elu1", D, bogus=1), "options"),
    (lambda: fm.create("elu1", D)(torch.randn(4, D + 1)), "x"),
])
def test_bad_input_names_the_argument(call, arg):
    with pytest.raises(ValueError, match=arg):
        call()


@pytest.mark.parametrize("name", ["identity", "elu1", "relu", "favor_plus", "taylor2"])
def test_out_buffer_gives_the_same_features(name):
    """``out=``: elementwise maps write into the buffer, the others ignore it; either way the
    returned features are those of the plain call, and the input is left untouched."""
    phi = fm.create(name, D)
    x = torch.randn(3, 40, D, generator=torch.Generator().manual_seed(4))
    x0 = x.clone()
    want = phi(x, is_query=True)
    buf = torch.full((3, 40, phi.num_features), float("nan"))
    got = phi(x, is_query=True, out=buf)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert torch.equal(x, x0)
    if name in ("identity", "elu1", "relu"):
        assert got.data_ptr() == buf.data_ptr()


def test_out_buffer_is_checked_and_ignored_while_autograd_records():
    phi = fm.create("elu1", D)
    x = torch.randn(5, D)
    with pytest.raises(ValueError, match="out"):
        phi(x, out=torch.empty(5, D + 1))
    xg = x.clone().requires_grad_()
    buf = torch.empty(5, D)
    y = phi(xg, out=buf)
    assert y.data_ptr() != buf.data_ptr() and y.requires_grad
