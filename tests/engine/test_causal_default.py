"""Causal follows the model: a causal model's maps are causal unless asked otherwise, and
asking otherwise says that it is not what the model computes (no ✓ badge then)."""

from __future__ import annotations

import math

import pytest
import torch

from explorer import catalog, views
from explorer.sources.sample import Sample
from explorer.text import say


def _model_like(causal: bool, n: int = 9, d: int = 8, heads: int = 2, layers: int = 2, seed: int = 0) -> Sample:
    """A two-layer sample carrying its own softmax attention, as a model's does, causal or not."""
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(layers, heads, n, d, generator=gen) for _ in range(3))
    s = q @ k.transpose(-1, -2) / math.sqrt(d)
    if causal:
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    return Sample(q, k, v, [f"t{i}" for i in range(n)], model_attentions=torch.softmax(s, -1), causal=causal,
                  source="a test model")


def _entropy64(attn: torch.Tensor, causal: bool) -> float:
    """Mean row entropy in float64, over the rows every causal mean counts (not row 0)."""
    a = attn.double()
    h = -torch.special.xlogy(a, a).sum(-1)
    return float(h[1:].mean() if causal else h.mean())


def test_a_causal_models_maps_are_causal_by_default():
    sample = _model_like(causal=True)
    view = views.maps_view(sample, 1, 1, ["softmax", "elu1"])
    assert view.params["causal"] is True
    assert view.metrics[0]["causal"] == 1
    assert view.metrics[0]["entropy_reference"] == pytest.approx(_entropy64(sample.model_attentions[1, 1], True),
                                                                 rel=1e-6)
    assert view.model_mask and view.model_check < 1e-5
    assert not any("not what the model computes" in x for x in view.notices)
    # A bidirectional model stays bidirectional.
    other = views.maps_view(_model_like(causal=False), 1, 1, ["softmax"])
    assert other.params["causal"] is False and other.model_mask


def test_turning_causal_off_on_a_causal_model_says_so_in_both_languages_and_the_badge_claims_no_match():
    from explorer.ui import maps_tab

    sample = _model_like(causal=True)
    for lang in ("en", "zh"):
        view = views.maps_view(sample, 0, 0, ["softmax"], False)
        assert say("maps.not_model_causal", lang) in [say(n, lang) for n in view.notices]
        assert view.model_mask is False
        badge = say(maps_tab.badge(view), lang)
        assert badge.startswith("✗") and badge == say("maps.badge_other_mask", lang, diff=f"{view.model_check:.1e}")
    on = views.maps_view(sample, 0, 0, ["softmax"], True)
    assert maps_tab.badge(on).startswith("✓")


def test_quality_and_the_all_heads_overview_follow_the_model():
    sample = _model_like(causal=True)
    quality = views.quality_view(sample, 1, 0, ["favor_plus_iid"], ms=(4, 8), seeds=2, spread=0)
    assert all(row["causal"] == 1 for row in quality.shape_rows)
    assert quality.shape_rows[0]["entropy_reference"] == pytest.approx(
        _entropy64(sample.model_attentions[1, 0], True), rel=1e-6)
    off = views.quality_view(sample, 1, 0, ["favor_plus_iid"], ms=(4, 8), seeds=2, causal=False, spread=0)
    assert say("maps.not_model_causal") in off.notices
    # The overview's KL of softmax against itself is 0 either way: compare elu+1 with a causal recomputation.
    overview = views.head_overview(sample, "elu1", "kl_mean")
    causal = views.head_overview(sample, "elu1", "kl_mean", causal=True)
    bidirectional = views.head_overview(sample, "elu1", "kl_mean", causal=False)
    assert (overview.values == causal.values).all()
    assert not (overview.values == bidirectional.values).all()


def test_resolve_causal_reads_the_data_only_when_not_asked():
    causal, plain = _model_like(causal=True), _model_like(causal=False)
    assert views.resolve_causal(causal) is True and views.resolve_causal(plain) is False
    assert views.resolve_causal(causal, False) is False and views.resolve_causal(plain, True) is True


@pytest.mark.slow
@pytest.mark.skipif(not catalog.causal_model_installed(), reason="SmolLM2-135M is not installed")
def test_smollm2_maps_give_the_entropy_the_model_computes():
    from explorer.ui.source import DEFAULT_TEXT

    sample = views.load_sample("text", text=DEFAULT_TEXT, model=catalog.CAUSAL_MODEL["name"])
    view = views.maps_view(sample, 3, 4, ["softmax"])
    own = _entropy64(sample.model_attentions[3, 4], True)
    assert view.metrics[0]["entropy_reference"] == pytest.approx(own, rel=1e-5)
    assert view.metrics[0]["entropy_reference"] != pytest.approx(
        views.maps_view(sample, 3, 4, ["softmax"], False).metrics[0]["entropy_reference"], rel=1e-3)
