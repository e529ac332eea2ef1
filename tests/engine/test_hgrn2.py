"""HGRN2: forget gates with a lower bound, cumulative per-layer bounds, and the recurrence
S_t = diag(f_t) S_{t-1} + (1 - f_t) v_t^T held to a float64 loop in both forms."""

import math

import pytest
import torch

from explorer.mechanisms.hgrn2 import forms as hg
from explorer.mechanisms.hgrn2.gates import hgrn2_layer_bounds, hgrn2_log_forget

B, H, DK, DV, DIN = 2, 3, 16, 24, 8


def rel_err(out, ref):
    return float((out.double() - ref).abs().max() / ref.abs().max())


def inputs(n, lower_bound, seed=0, gate_scale=1.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, H, n, DIN, generator=g)
    w = gate_scale * torch.randn(DIN, DK, generator=g)
    f_log = hgrn2_log_forget(x, w, lower_bound)
    return torch.randn(B, H, n, DK, generator=g), f_log, torch.randn(B, H, n, DV, generator=g)


@pytest.mark.parametrize("lower_bound", [0.0, 0.9])
@pytest.mark.parametrize("n", [1, 37, 301])
def test_both_forms_equal_the_float64_loop(n, lower_bound):
    q, f_log, v = inputs(n, lower_bound)
    ref = hg.hgrn2_reference(q, f_log, v)
    out = hg.hgrn2(q, f_log, v, method="recurrent")
    assert out.shape == (B, H, n, DV) and rel_err(out, ref) <= 2e-5
    for chunk in (1, 16, 64, 500):
        out = hg.hgrn2(q, f_log, v, method="chunked", chunk_size=chunk)
        assert rel_err(out, ref) <= 2e-5, f"chunk {chunk}"


def test_chunked_carries_the_state_across_blocks(monkeypatch):
    """Blocks of 3 chunks here (the last one ending mid-chunk): the state must survive the seams."""
    from explorer.mechanisms.linear import unnormalised
    monkeypatch.setattr(unnormalised, "BLOCK_ELEMENTS", 3 * 32 * DV * B * H)
    q, f_log, v = inputs(250, 0.5, seed=7)
    ref = hg.hgrn2_reference(q, f_log, v)
    assert rel_err(hg.hgrn2(q, f_log, v, chunk_size=32), ref) <= 2e-5


@pytest.mark.parametrize("lower_bound, gate_scale", [(0.0, 40.0), (0.999999, 1.0)])
def test_extreme_gates_stay_exact(lower_bound, gate_scale):
    """Gates near 0 (everything forgotten at once, segments of a few tokens) and gates
    within 1e-6 of 1 (an input gate 1 - f that only -expm1 gets right)."""
    q, f_log, v = inputs(200, lower_bound, seed=5, gate_scale=gate_scale)
    ref = hg.hgrn2_reference(q, f_log, v)
    for method in hg.METHODS:
        out = hg.hgrn2(q, f_log, v, method=method, chunk_size=32)
        assert torch.isfinite(out).all() and rel_err(out, ref) <= 2e-5, method


def test_an_open_gate_copies_the_value_and_a_shut_one_keeps_the_state():
    """f = 0 replaces the state by 1 v^T; f = 1 (log f = 0) leaves it untouched."""
    v = torch.tensor([[1.0, 2.0], [5.0, 7.0], [9.0, 9.0]])
    q = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    f_log = torch.tensor([[-200.0, -200.0], [-200.0, 0.0], [0.0, 0.0]])
    for method in hg.METHODS:
        out = hg.hgrn2(q, f_log, v, method=method)
        # feature 0 holds v_2 after step 2; feature 1 still holds v_1.
        assert torch.allclose(out, torch.tensor([[1.0, 2.0], [5.0, 7.0], [1.0, 2.0]]), atol=1e-6)


def test_log_forget_is_the_formula_and_stays_finite():
    g = torch.Generator().manual_seed(2)
    x, w = torch.randn(5, 40, DIN, generator=g, dtype=torch.float64), torch.randn(DIN, DK, generator=g, dtype=torch.float64)
    for lb in (0.0, 0.3, 0.9):
        want = torch.log(lb + (1 - lb) * torch.sigmoid(x @ w))
        assert torch.allclose(hgrn2_log_forget(x, w, lb), want, rtol=1e-12, atol=1e-14)
    # sigmoid underflows at x W = -200: log f is -200 without a bound and log lb with one.
    x1, w1 = torch.ones(1, 1), torch.full((1, 3), -200.0)
    assert hgrn2_log_forget(x1, w1, 0.0).flatten().tolist() == pytest.approx([-200.0] * 3)
    assert hgrn2_log_forget(x1, w1, 0.5).flatten().tolist() == pytest.approx([math.log(0.5)] * 3)
    per_feature = hgrn2_log_forget(x1, w1, torch.tensor([0.0, 0.5, 1.0]))
    assert per_feature.flatten().tolist() == pytest.approx([-200.0, math.log(0.5), 0.0])
    assert (hgrn2_log_forget(torch.randn(50, DIN) * 30, w.float(), 0.9) <= 0).all()


def test_layer_bounds_are_cumulative_softmax_shares():
    raw = torch.tensor([0.5, -1.0, 2.0, 0.0])
    lb = hgrn2_layer_bounds(raw)
    share = torch.softmax(raw, 0)
    assert lb[0] == 0 and torch.all(lb[1:] > lb[:-1])
    assert torch.allclose(lb[1:] - lb[:-1], share[1:])
    assert lb[-1] == pytest.approx(1 - share[0].item())
    assert torch.allclose(hgrn2_layer_bounds(torch.zeros(6)), torch.arange(6) / 6)
    per_feature = hgrn2_layer_bounds(torch.randn(3, DK))              # one bound per layer and feature
    assert per_feature.shape == (3, DK) and (per_feature[0] == 0).all()


@pytest.mark.parametrize("call, needle", [
    (lambda: hgrn2_log_forget(torch.randn(4, DIN), torch.randn(DIN, 3), 1.5), "lower_bound"),
    (lambda: hgrn2_log_forget(torch.randn(4, DIN), torch.randn(DIN, 3), -0.1), "lower_bound"),
    (lambda: hgrn2_log_forget(torch.randn(4, DIN), torch.randn(DIN, 3), float("nan")), "lower_bound"),
    (lambda: hgrn2_log_forget(torch.randn(4, DIN), torch.randn(DIN, 3), torch.zeros(5)), "lower_bound"),
    (lambda: hgrn2_log_forget(torch.randn(4, DIN), torch.randn(DIN + 1, 3), 0.0), "gate_weight"),
    (lambda: hgrn2_layer_bounds(torch.tensor([1.0, float("inf")])), "raw"),
    (lambda: hgrn2_layer_bounds(torch.tensor(1.0)), "raw"),
    (lambda: hg.hgrn2(torch.randn(5, DK), torch.full((5, DK), 0.1), torch.randn(5, DV)), "f_log"),
    (lambda: hg.hgrn2(torch.randn(5, DK), None, torch.randn(5, DV)), "f_log"),
    (lambda: hg.hgrn2(torch.randn(5, DK), torch.full((5, DK), float("nan")), torch.randn(5, DV)), "f_log"),
    (lambda: hg.hgrn2(torch.randn(5, DK), torch.zeros(4, DK), torch.randn(5, DV)), "f_log"),
    (lambda: hg.hgrn2(torch.randn(5, DK), torch.zeros(5, DK), torch.randn(6, DV)), "v"),
    (lambda: hg.hgrn2(torch.randn(5, DK), torch.zeros(5, DK), torch.randn(5, DV), method="parallel"), "method"),
])
def test_bad_input_is_refused_with_a_sentence_naming_it(call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value).startswith(needle + ":") and len(str(err.value)) < 200
