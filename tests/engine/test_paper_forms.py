"""The papers' own form of RetNet, GLA and the scalar gate, as flash-linear-attention writes
them: no feature map, no normaliser, the query scaled by d_k^-1/2,

    S_t = diag(exp(g_t)) S_{t-1} + k_t v_t^T,    o_t = S_t^T (q_t d_k^-1/2),

with g a fixed log gamma per head (RetNet), one log gate per key feature (GLA) or one per
token (the scalar gate). Each is written out below as a float64 loop in that convention, and
the mechanism's map, float64 loop and fast forms are held to it (lengths that are not a
multiple of the chunk, N = 1, d_k != d_v)."""

from __future__ import annotations

import math

import pytest
import torch

from explorer import mechanisms
from explorer.mechanisms.retnet.gates import head_gamma

B, H, DK, DV = 2, 3, 16, 12
PAPER = {"normalise": False, "scale": DK ** -0.5}


def _inputs(n, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(B, H, n, DK, generator=gen, dtype=torch.float64) for _ in range(2))
    return q, k, torch.randn(B, H, n, DV, generator=gen, dtype=torch.float64)


def _gates(name, q, k):
    """(log decay as the mechanism takes it, the same expanded to (B, H, N, DK))."""
    n = q.shape[-2]
    if name == "retnet":
        log_gamma = torch.tensor([math.log(head_gamma(h)) for h in range(H)], dtype=torch.float64)
        return log_gamma.view(H, 1, 1), log_gamma.view(1, H, 1, 1).expand(B, H, n, DK)
    gen = torch.Generator().manual_seed(1)
    width = DK if name == "gla" else 1
    g = torch.nn.functional.logsigmoid(torch.randn(B, H, n, width, generator=gen, dtype=torch.float64)) / 4
    return g, g.expand(B, H, n, DK)


def _fla_loop(q, k, v, g):
    """FLA's convention, token by token, in float64."""
    s = torch.zeros(B, H, DK, DV, dtype=torch.float64)
    out = []
    for t in range(q.shape[-2]):
        s = torch.exp(g[..., t, :, None]) * s + k[..., t, :, None] * v[..., t, None, :]
        out.append((s.transpose(-1, -2) @ (q[..., t, :, None] * DK ** -0.5))[..., 0])
    return torch.stack(out, dim=-2)


@pytest.mark.parametrize("name", ["retnet", "gla", "scalar_gate"])
@pytest.mark.parametrize("n", [1, 37, 130])
def test_the_papers_form_is_flash_linear_attentions_convention(name, n):
    mechanism = mechanisms.get(name)
    q, k, v = _inputs(n)
    log_decay, expanded = _gates(name, q, k)
    expected = _fla_loop(q, k, v, expanded)
    scale = expected.abs().max()
    assert (mechanism.reference(q, k, v, log_decay=log_decay, **PAPER) - expected).abs().max() <= 1e-12 * scale
    assert (mechanism.attention_map(q, k, log_decay=log_decay, **PAPER) @ v - expected).abs().max() <= 1e-12 * scale
    for method in ("recurrent", "chunked"):
        out = mechanism.output(q.float(), k.float(), v.float(), method=method, log_decay=log_decay.float(), **PAPER)
        assert (out.double() - expected).abs().max() <= 2e-5 * scale, method


def test_retnet_in_the_papers_form_is_the_decayed_product_of_q_and_k():
    # RetNet's parallel form: O = (Q K^T d^-1/2 (.) D) V with D_ij = gamma^(i - j) below the diagonal.
    q, k, v = _inputs(9)
    mechanism = mechanisms.get("retnet")
    i, j = torch.meshgrid(torch.arange(9), torch.arange(9), indexing="ij")
    for h in range(H):
        gamma = head_gamma(h)
        d = torch.where(j <= i, gamma ** (i - j).double(), torch.zeros(()))
        expected = ((q[:, h] @ k[:, h].transpose(-1, -2)) * DK ** -0.5 * d) @ v[:, h]
        got = mechanism.attention_map(q[:, h], k[:, h], log_decay=torch.tensor([[math.log(gamma)]], dtype=torch.float64), **PAPER) @ v[:, h]
        assert torch.allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["retnet", "gla", "scalar_gate"])
def test_the_normalised_form_stays_the_default_and_scale_cancels_in_it(name):
    mechanism = mechanisms.get(name)
    q, k, v = _inputs(21)
    q, k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    log_decay, _ = _gates(name, q, k)
    plain = mechanism.attention_map(q, k, log_decay=log_decay)
    assert torch.allclose(plain.sum(-1), torch.ones(()).double())
    assert torch.allclose(mechanism.attention_map(q, k, log_decay=log_decay, scale=0.25), plain)
    with pytest.raises(ValueError, match="normalise"):
        mechanism.output(q, k, v, log_decay=log_decay, normalise="no")
    with pytest.raises(ValueError, match="scale"):
        mechanism.output(q, k, v, log_decay=log_decay, scale=-1.0)
    with pytest.raises(ValueError, match="params"):
        mechanisms.get("hgrn2").output(q, k, v, f_log=log_decay.expand(q.shape).clamp(max=0), normalise=False)


def test_the_scalar_gate_is_one_gate_per_token():
    q, k, v = _inputs(11)
    params = mechanisms.get("scalar_gate").default_params(q, k, seed=3)
    assert params["log_decay"].shape == (B, H, 11, 1) and bool((params["log_decay"] <= 0).all())


def test_the_maps_tab_draws_the_papers_form_and_says_so():
    from explorer import views
    from explorer.sources.sample import Sample
    from explorer.text import said
    from explorer.views.mechanism_maps import MechanismSettings, mechanism_label

    gen = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(1, 2, 15, 8, generator=gen) for _ in range(3))
    sample = Sample(q, k, v, [f"t{i}" for i in range(15)], source="random")
    paper = MechanismSettings(gamma=0.8, paper=True)
    chosen = ["retnet", "gla", "scalar_gate", "deltanet"]
    view = views.maps_view(sample, 0, 1, ["softmax"], True, mechanisms=chosen, mechanism_settings=paper)
    labels = {name: mechanism_label(name, paper) for name in chosen}
    assert labels["retnet"] == "RetNet γ (paper's form)" and labels["gla"] == "GLA gates (seeded) (paper's form)"
    assert labels["deltanet"] == mechanism_label("deltanet", MechanismSettings())       # it has no such form
    assert said(labels["gla"], "zh") == "GLA 门控（种子生成）（论文原式）"
    # RetNet's parallel form on the head as given: (Q K^T / sqrt(d) (.) D) with D_ij = 0.8^(i - j).
    hq, hk = q[0, 1].double(), k[0, 1].double()
    i, j = torch.meshgrid(torch.arange(15), torch.arange(15), indexing="ij")
    d = torch.where(j <= i, 0.8 ** (i - j).double(), torch.zeros(()))
    expected = (hq @ hk.T) / math.sqrt(8) * d
    assert view.labels["retnet"] == labels["retnet"]
    assert torch.allclose(torch.from_numpy(view.maps["retnet"]).double(), expected, atol=1e-6)
    # Not a distribution: no KL, the errors only; the note says which form was drawn.
    row = next(r for r in view.metrics if r["map"] == "retnet")
    assert row["kl_mean"] is None and row["map_rel_error"] is not None
    assert "paper's form" in view.mechanism_note
    plain = views.maps_view(sample, 0, 1, ["softmax"], True, mechanisms=["retnet"],
                            mechanism_settings=MechanismSettings(gamma=0.8))
    assert "retnet" in plain.maps and plain.labels["retnet"] == "RetNet γ" and "paper's form" not in plain.mechanism_note
    with pytest.raises(ValueError, match="paper"):
        views.maps_view(sample, 0, 1, ["softmax"], True, mechanisms=["retnet"],
                        mechanism_settings=MechanismSettings(paper="yes"))
