"""The LUNA-style learned map: positive, shaped like its heads, a positive-definite kernel,
trainable (gradients reach every parameter) and reproducible by seed."""

import pytest
import torch

from explorer import catalog
from explorer import maps as fm
from explorer.diagnostics import attention
from explorer.maps.luna import Luna


def perturbed(phi: Luna, seed: int = 0, size: float = 0.5) -> Luna:
    """The map with every parameter moved at random, as training would move it."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in phi.parameters():
            p.add_(size * torch.randn(p.shape, generator=g))
    return phi


@pytest.mark.parametrize("scale", [0.1, 1.0, 4.0])
def test_features_are_positive_and_finite(scale):
    phi = perturbed(Luna(8, 12, seed=2))
    x = torch.randn(3, 7, 8, generator=torch.Generator().manual_seed(1)) * scale
    for is_query in (False, True):
        out = phi(x, is_query=is_query)
        assert out.shape == (3, 7, 12)
        assert torch.isfinite(out).all() and (out > 0).all()
    rows = attention.kernel_map(x[0], x[1], phi)
    assert torch.isfinite(rows).all()
    torch.testing.assert_close(rows.sum(-1), torch.ones(7))


def test_huge_inputs_stay_finite():
    """Far out, a key's envelope exp(-gamma |x'|^2 / 2) underflows to 0 in float32 (as
    FAVOR+'s does): features stay finite and never negative, and nothing overflows."""
    phi = perturbed(Luna(8, 12, seed=2))
    x = torch.randn(3, 7, 8, generator=torch.Generator().manual_seed(1)) * 30
    for is_query in (False, True):
        out = phi(x, is_query=is_query)
        assert torch.isfinite(out).all() and (out >= 0).all()
    assert (phi(x, is_query=True) > 0).any(-1).all()      # a query row always keeps a feature


def test_head_dimensions_broadcast_and_select_one_head():
    phi = perturbed(fm.create("luna", 8, num_features=10, heads=(2, 3)))
    x = torch.randn(4, 2, 3, 5, 8)
    out = phi(x)
    assert out.shape == (4, 2, 3, 5, 10)
    one = phi.select(1, 2)
    assert one.heads == () and one.num_features == 10
    torch.testing.assert_close(one(x[:, 1, 2]), out[:, 1, 2])
    with pytest.raises(ValueError, match="x"):
        phi(torch.randn(5, 7))


def test_one_map_for_queries_and_keys_gives_a_positive_definite_kernel():
    phi = perturbed(Luna(6, 16, seed=4), seed=3)
    x = torch.randn(20, 6, dtype=torch.float64) * 2
    phi = phi.double()
    keys, queries = phi(x), phi(x, is_query=True)
    # the query's features differ from the key's by one positive constant per row (it cancels)
    ratio = queries / keys
    torch.testing.assert_close(ratio, ratio[:, :1].expand_as(ratio), rtol=1e-9, atol=0)
    gram = keys @ keys.T                                     # k(x_i, x_j)
    torch.testing.assert_close(gram, gram.T)
    assert torch.linalg.eigvalsh(gram).min() > -1e-9 * gram.abs().max()


def test_untrained_map_starts_near_favor_plus():
    q, k = torch.randn(2, 9, 16) * 0.8
    luna = attention.kernel_map(q, k, fm.create("luna", 16, num_features=64, seed=5))
    favor = attention.kernel_map(q, k, fm.create("favor_plus", 16, num_features=64, seed=5, orthogonal=True))
    elu = attention.kernel_map(q, k, fm.create("elu1", 16))
    gap = (luna - favor).abs().max()
    assert gap < 0.05 and gap < (elu - favor).abs().max()


def test_registered_and_offered_in_the_catalogue():
    assert "luna" in fm.names()
    assert isinstance(fm.create("luna", 8, num_features=6, seed=1), Luna)
    assert "luna" in catalog.FEATURE_MAPS
    labels = {spec.name: spec.label for spec in catalog.map_specs().values() if spec.trained}
    assert set(labels) == {"hedgehog", "luna"}


def test_gradients_reach_every_parameter():
    phi = Luna(8, 12, seed=0)
    q, k = torch.randn(2, 6, 8), torch.randn(2, 6, 8)
    target = torch.softmax(q @ k.transpose(-1, -2) / 8 ** 0.5, -1)
    rows = attention.kernel_map(q, k, phi)
    (-(target * rows.log()).sum(-1).mean()).backward()
    for name, p in phi.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        assert p.grad.abs().sum() > 0, name


def test_same_seed_same_map_new_seed_new_map():
    a, b, c = (Luna(8, 16, seed=s) for s in (7, 7, 8))
    x = torch.randn(5, 8)
    assert torch.equal(a(x), b(x))
    assert not torch.allclose(a(x), c(x))
