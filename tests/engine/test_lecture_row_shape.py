"""Chapter 5's spiky-and-monotone build (b4): Hedgehog's argument that softmax's rows are
spiky (low entropy) and monotone in q·k, measured on the chapter's head for softmax, elu+1 and
the chapter's learned map. Its bars are the view's numbers, and those are what a plain float64
computation on the same q, k gives (numpy entropies, scipy's Spearman rank correlation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from explorer import maps as feature_maps
from helpers.lecture import said_chapter_figures
from explorer.lecture import chapters
from explorer.lecture import text as lecture_text
from explorer.lecture.ch5_closing_the_gap import view as closing_view
from explorer.lecture import view as lecture
from explorer.views.common import load_sample
from explorer.lecture.view_common import new_view, trained_hedgehog

pytestmark = pytest.mark.usefixtures("lecture_chapter_five")     # chapter 5 on SmolLM2, once a run (conftest)


@pytest.fixture(scope="module")
def sample():
    return load_sample("text", text=lecture_text.DEFAULT_TEXT, model=lecture.default_model(5))


@pytest.fixture(scope="module")
def view(sample):
    return lecture.chapter_view(5, sample=sample)


def plain_shape(q, k, fmap, causal):
    """(mean row entropy, mean Spearman rho of weight with logit) of one map's rows (softmax's
    when ``fmap`` is None) over the rows a mean counts, in float64 numpy."""
    q64, k64 = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    n, d = q64.shape
    s = q64 @ k64.T / math.sqrt(d)
    if fmap is None:
        w = np.exp(s - s.max(axis=1, keepdims=True))
    else:
        fq = fmap(q.double(), is_query=True).double().numpy()
        fk = fmap(k.double()).double().numpy()
        w = fq @ fk.T
    entropies, rhos = [], []
    for i in range(1 if causal else 0, n):
        keys = slice(0, i + 1) if causal else slice(0, n)
        p = w[i, keys] / w[i, keys].sum()
        entropies.append(float(-(p[p > 0] * np.log(p[p > 0])).sum()))
        if p.size >= 2 and np.ptp(p) > 0:
            rhos.append(float(stats.spearmanr(p, s[i, keys]).statistic))
    return float(np.mean(entropies)), float(np.mean(rhos))


def test_the_build_follows_the_kl_and_the_hybrids_stay_last(view):
    record = chapters.chapter(5)
    assert record.builds[4] == "b4"
    for lang in ("en", "zh"):
        figs = said_chapter_figures(view, lang, True)
        assert figs[4].layout.title.text == lecture_text.t("ch5.b4.title", lang)
        # The hybrids, last (a long title leaves its tail to the subtitle); on the causal model,
        # the model itself linearized.
        key = "ch5.b6.title_linearized" if view.data["linearized"] else "ch5.b6.title"
        assert lecture_text.t(key, lang).startswith(figs[-1].layout.title.text)


def test_entropy_and_rank_correlation_are_a_plain_float64_computation(view, sample):
    c = view.controls
    q, k = sample.q[c["layer"], c["head"]], sample.k[c["layer"], c["head"]]
    causal = bool(view.data["kl_causal"])
    learned, _ = trained_hedgehog(sample, dict(c), None)
    assert learned is not None and view.data["hedgehog_trained"]     # a trained map ships for this head
    label = view.data["row_shape_hedgehog"]
    maps = {"softmax": None, "elu1": feature_maps.create("elu1", q.shape[-1]), label: learned}
    shape = view.data["row_shape"]
    assert list(shape)[:2] == ["softmax", "elu1"] and label in shape
    for name, fmap in maps.items():
        entropy, rho = plain_shape(q, k, fmap, causal)
        assert shape[name]["entropy"] == pytest.approx(entropy, rel=1e-9, abs=1e-12), name
        assert shape[name]["spearman"] == pytest.approx(rho, rel=1e-9, abs=1e-12), name
        assert view.numbers[f"row_entropy[{name}]"] == shape[name]["entropy"]
        assert view.numbers[f"row_spearman[{name}]"] == shape[name]["spearman"]
    assert shape["softmax"]["spearman"] == pytest.approx(1.0)          # exp is increasing
    assert shape["softmax"]["rows"] == q.shape[0] - (1 if causal else 0)


def test_the_bars_are_the_views_numbers(view):
    shape = view.data["row_shape"]
    for lang in ("en", "zh"):
        fig = said_chapter_figures(view, lang, True)[4]
        entropy, spearman = fig.data
        names = list(shape)[::-1]                      # lying bars: softmax at the top
        assert list(entropy.y) == [lecture_text.map_words(name, lang) for name in names]
        assert list(entropy.x) == [shape[name]["entropy"] for name in names]
        assert list(spearman.x) == [shape[name]["spearman"] for name in names]
        assert list(entropy.text) == [f"{shape[name]['entropy']:.2f}" for name in names]


def test_spikier_and_more_monotone_is_said_only_when_both_are_true():
    label = "hedgehog_trained"

    def claim(hh_entropy, hh_rho):
        view = new_view(5, {})
        shape = {"softmax": {"entropy": 0.42, "spearman": 1.0}, "elu1": {"entropy": 1.87, "spearman": -0.40},
                 label: {"entropy": hh_entropy, "spearman": hh_rho}}
        closing_view._say_shape(view, shape, label)
        return view.says["b4"]["claim"][0]

    assert claim(0.67, 0.84) == "ch5.b4.claim_both"
    assert claim(1.95, 0.84) == "ch5.b4.claim_values"        # not spikier
    assert claim(0.67, -0.50) == "ch5.b4.claim_values"       # not more monotone
    assert claim(1.8701, 0.84) == "ch5.b4.claim_values"      # equal at the written rounding
