"""Reference N x N maps: softmax, kernel maps, decay in map form, flagged rows."""

import math

import pytest
import torch

from explorer.diagnostics import attention as at
from explorer import maps as fm
from explorer.mechanisms.linear.decay import prepare_log_decay
from explorer.mechanisms.retnet.gates import retnet_log_decay


@pytest.mark.slow
def test_softmax_map_is_row_softmax_of_scaled_logits():
    q, k = torch.randn(2, 7, 8), torch.randn(2, 7, 8)
    a = at.softmax_map(q, k)
    expect = torch.exp(q @ k.transpose(-1, -2) / math.sqrt(8))
    torch.testing.assert_close(a, expect / expect.sum(-1, keepdim=True))
    c = at.softmax_map(q, k, causal=True)
    assert torch.all(c.triu(1) == 0)
    torch.testing.assert_close(c.sum(-1), torch.ones(2, 7))


@pytest.mark.parametrize("causal", [False, True])
def test_kernel_map_normalises_positive_kernels(causal):
    q, k = torch.randn(3, 11, 8), torch.randn(3, 11, 8)
    phi = fm.create("elu1", 8)
    a, bad = at.kernel_map_with_flags(q, k, phi, causal=causal)
    w = phi(q) @ phi(k).transpose(-1, -2)
    if causal:
        w = w.tril()
    torch.testing.assert_close(a, w / w.sum(-1, keepdim=True))
    assert not bad.any()


def explicit_decayed_weights(fq, fk, log_decay):
    """w_ij = sum_f fq_if fk_jf exp(sum_{t=j+1..i} a_tf), by plain loops (float64)."""
    n, m = fq.shape
    a = log_decay.expand(n, m).double()
    w = torch.zeros(n, n, dtype=torch.float64)
    for i in range(n):
        for j in range(i + 1):
            w[i, j] = (fq[i].double() * fk[j].double() * torch.exp(a[j + 1:i + 1].sum(0))).sum()
    return w


@pytest.mark.parametrize("kind", ["scalar", "per_token", "per_feature"])
def test_decayed_map_matches_the_definition(kind):
    n, d = 9, 4
    q, k = torch.randn(n, d), torch.randn(n, d)
    phi = fm.create("elu1", d)
    decay = {"scalar": torch.tensor(math.log(0.8)).view(1, 1),
             "per_token": -torch.rand(n, 1),
             "per_feature": -torch.rand(n, d) * 2}[kind]
    w = at.kernel_weights(q, k, phi, causal=True, log_decay=decay)
    torch.testing.assert_close(w.double(), explicit_decayed_weights(phi(q), phi(k), decay), rtol=1e-5, atol=1e-6)


def test_retnet_decay_per_head():
    h = 3
    log_gamma = retnet_log_decay(h)
    gammas = torch.exp(log_gamma.flatten().double())
    torch.testing.assert_close(gammas, 1 - 2.0 ** (-5 - torch.arange(h, dtype=torch.float64)), rtol=1e-6, atol=0)
    q, k = torch.randn(h, 6, 4), torch.randn(h, 6, 4)
    phi = fm.create("relu", 4)
    w = at.kernel_weights(q, k, phi, causal=True, log_decay=log_gamma)
    base = (phi(q) @ phi(k).transpose(-1, -2)).tril()
    i = torch.arange(6)
    powers = (i[:, None] - i[None, :]).clamp(min=0).double()
    expect = base.double() * gammas.view(h, 1, 1) ** powers
    torch.testing.assert_close(w.double(), expect, rtol=1e-5, atol=1e-7)


def test_ill_defined_rows_are_flagged_not_clamped():
    d = 4
    k = torch.randn(5, d)
    q = -k[:1].repeat(5, 1)            # identity kernel: every logit against key 0 is negative
    q[2] = k[0]                        # except row 2
    a, bad = at.kernel_map_with_flags(q, k[:1].repeat(5, 1), fm.create("identity", d))
    assert bad.tolist() == [True, True, False, True, True]
    assert torch.isfinite(a[2]).all()
    # relu: a query with no positive coordinate gives an all-zero row
    qr = torch.randn(4, d).abs()
    qr[1] = -qr[1]
    a, bad = at.kernel_map_with_flags(qr, torch.randn(4, d).abs(), fm.create("relu", d))
    assert bad.tolist() == [False, True, False, False]
    assert torch.isnan(a[1]).all()     # 0 / 0 stays visible


def test_decay_requires_causal_and_valid_values():
    q = torch.randn(5, 4)
    phi = fm.create("elu1", 4)
    with pytest.raises(ValueError, match="log_decay"):
        at.kernel_map(q, q, phi, causal=False, log_decay=-0.1)
    with pytest.raises(ValueError, match="log_decay"):
        at.kernel_map(q, q, phi, causal=True, log_decay=0.5)
    with pytest.raises(ValueError, match="log_decay"):
        at.kernel_map(q, q, phi, causal=True, log_decay=torch.full((5, 3), -0.1))
    with pytest.raises(ValueError, match="log_decay"):
        at.kernel_map(q, q, phi, causal=True, log_decay=torch.tensor([float("nan")]))


def test_prepare_log_decay_keeps_cheap_shapes():
    t = prepare_log_decay(-0.2, (2, 3), 10, 4, torch.float32, None)
    assert t.shape == (1, 1, 1, 1)
    t = prepare_log_decay(torch.full((3, 1, 1), -0.1), (2, 3), 10, 4, torch.float32, None)
    assert t.shape == (1, 3, 1, 1)


@pytest.mark.parametrize("q,k,arg", [
    (torch.randn(5, 4), torch.randn(6, 4), "k"),
    (torch.randn(0, 4), torch.randn(0, 4), "q"),
    (torch.randn(5, 0), torch.randn(5, 0), "q"),
    (torch.full((5, 4), float("nan")), torch.randn(5, 4), "q"),
    (torch.randn(5, 4), torch.full((5, 4), float("inf")), "k"),
    (torch.randn(4), torch.randn(4), "q"),
])
def test_bad_input_names_the_argument(q, k, arg):
    with pytest.raises(ValueError, match=arg):
        at.softmax_map(q, k)
    with pytest.raises(ValueError, match=arg):
        at.kernel_map(q, k, fm.create("elu1", q.shape[-1] or 1))
