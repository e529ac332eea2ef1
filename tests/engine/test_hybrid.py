"""Hybrids: the sliding-window map at its limits, and swapping layers of the real model."""

import pytest
import torch

from explorer.diagnostics import attention as at
from explorer import maps as fm
from explorer.experiments import hybrids
from explorer.mechanisms.linear import forms as li
from explorer.sources.text import get_model

TEXTS = ["The cat sat on the mat.", "Linear attention forgets nothing unless it decays.",
         "A hybrid keeps a few softmax layers."]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("inner", ["taylor2", "favor_plus"])
def test_sliding_window_limits(causal, inner):
    q, k = torch.randn(2, 17, 8), torch.randn(2, 17, 8)
    wide = fm.create("sliding_window", 8, window=17, inner=inner, num_features=16 if inner == "favor_plus" else None)
    torch.testing.assert_close(at.kernel_map(q, k, wide, causal), at.softmax_map(q, k, causal))
    # w = 0: the inner map alone. Normalisation is per row in both, so the maps are equal.
    none = fm.create("sliding_window", 8, window=0, inner=inner, num_features=16 if inner == "favor_plus" else None)
    torch.testing.assert_close(at.kernel_map(q, k, none, causal), at.kernel_map(q, k, none.inner, causal))


def test_sliding_window_mixes_inside_and_outside():
    q, k = torch.randn(9, 4), torch.randn(9, 4)
    phi = fm.create("sliding_window", 4, window=2)
    a = at.kernel_map(q, k, phi, causal=True)
    torch.testing.assert_close(a.sum(-1), torch.ones(9))
    s = q @ k.T / 2
    # inside the window the ratio of two weights is exactly the softmax ratio
    torch.testing.assert_close(a[5, 5] / a[5, 4], torch.exp(s[5, 5] - s[5, 4]))
    with pytest.raises(ValueError, match="window"):
        fm.create("sliding_window", 4, window=-1)
    with pytest.raises(ValueError, match="feature_map"):
        li.linear_attention(q, k, q, phi)


@pytest.fixture(scope="module")
def loaded():
    return get_model()


def test_swapping_and_restoring_is_bitwise(loaded):
    before, _ = hybrids.embed(loaded, TEXTS)
    with hybrids.linear_layers(loaded, {i: fm.create("elu1", 32) for i in range(6)}):
        swapped, _ = hybrids.embed(loaded, TEXTS)
    after, _ = hybrids.embed(loaded, TEXTS)
    assert torch.equal(before, after)
    assert (swapped * before).sum(-1).max() < 0.999


def test_evaluate_reports_drift_only_from_the_first_swapped_layer(loaded):
    report = hybrids.evaluate(loaded, TEXTS, {3: fm.create("elu1", 32)})
    assert report.linear_layers == (3,)
    assert report.drift[:3] == [0.0, 0.0, 0.0]
    assert all(d > 0 for d in report.drift[3:])
    assert -1 <= report.cosine_min <= report.cosine_mean < 1


def test_greedy_search_keeps_the_layer_that_helps_most(loaded):
    steps = hybrids.greedy_softmax_layers(loaded, TEXTS[:2], lambda i: fm.create("elu1", 32), budget=1)
    assert [len(kept) for kept, _ in steps] == [0, 1]
    best_kept, best = steps[1]
    # the greedy choice is at least as good as every other single softmax layer
    for layer in range(6):
        other = hybrids.evaluate(loaded, TEXTS[:2], {i: fm.create("elu1", 32) for i in range(6) if i != layer})
        assert best.cosine_mean >= other.cosine_mean - 1e-9
    with pytest.raises(ValueError, match="budget"):
        hybrids.greedy_softmax_layers(loaded, TEXTS, lambda i: fm.create("elu1", 32), budget=9)


def test_other_threads_see_the_original_model_during_a_swap(loaded):
    import threading
    before, _ = hybrids.embed(loaded, TEXTS[:1])
    seen = {}
    with hybrids.linear_layers(loaded, {i: fm.create("elu1", 32) for i in range(6)}):
        worker = threading.Thread(target=lambda: seen.setdefault("emb", hybrids.embed(loaded, TEXTS[:1])[0]))
        worker.start()
        worker.join()
        mine, _ = hybrids.embed(loaded, TEXTS[:1])
    assert torch.equal(seen["emb"], before)
    assert not torch.equal(mine, before)
