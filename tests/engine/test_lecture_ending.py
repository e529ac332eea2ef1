"""Chapter 6 ends the talk as the article does: the five-step recap (b3), the hologram against
the impression (b4), the retrieval caveat (b5) and the hybrid future (b6). Each build's figure holds the view's
numbers, and those numbers are the plain formulas written out here on the same head."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer import maps as feature_maps
from explorer.lecture.figures import build_count
from helpers.lecture import said_chapter_figures
from explorer.lecture.figure_common import floor_fonts
from explorer.lecture import text as lecture_text
from explorer.lecture.numbers import say_count
from explorer.lecture.ch6_tradeoff import view as ending
from explorer.lecture.ch6_tradeoff import maths as tradeoff
from explorer.lecture import view as lecture
from explorer.sources import packaged
from explorer.views.common import load_sample

pytestmark = pytest.mark.usefixtures("lecture_chapter_five")     # chapter 5 on SmolLM2, once a run (conftest)

LANGS = ("en", "zh")


@pytest.fixture(scope="module")
def six():
    return lecture.chapter_view(6)


@pytest.fixture(scope="module")
def head(six):
    """The head the chapter read: the lecture's sentence through the chapter's own model."""
    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT, model=lecture.default_model(6))
    layer, h = six.controls["layer"], six.controls["head"]
    q, k = sample.q[layer, h].double().numpy(), sample.k[layer, h].double().numpy()
    return sample, layer, h, q, k


def _softmax(q, k, causal: bool = False):
    s = q @ k.T / math.sqrt(q.shape[-1])
    if causal:                                  # keys j <= i only
        s = np.where(np.tril(np.ones_like(s, dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    return w / w.sum(-1, keepdims=True)


def test_the_talk_ends_with_the_recap_the_hologram_the_caveat_and_the_hybrid_future(six):
    assert build_count(6) == 7
    for lang in LANGS:
        figs = said_chapter_figures(six, lang)
        assert [fig.data[0].type for fig in figs[3:]] == ["table", "heatmap", "scatter", "bar"]
        claims = [six.claim_in(b, lang) for b in ("b3", "b4", "b5", "b6")]
        assert len(set(claims)) == 4


def test_the_recap_lists_the_articles_steps_with_numbers_measured_here(six, head):
    sample, layer, h, q, k = head
    recap = six.data["recap"]
    assert [step for step, _ in recap["rows"]] == [f"ch6.recap.{s}.step" for s in ending.RECAP_STEPS]
    assert len(recap["rows"]) == 5
    n = six.numbers
    own = sample.model_attentions[layer, h].double().numpy()
    causal = bool(getattr(sample, "causal", False))            # SmolLM2's own weights are causal
    assert n["recap_model_max_diff"] == pytest.approx(np.abs(_softmax(q, k, causal) - own).max(), abs=1e-6)
    assert n["recap_model_max_diff"] < 1e-5                          # the model's weights are exp-kernel weights
    d, dv = q.shape[-1], sample.v.shape[-1]
    assert n["recap_taylor2_features"] == 1 + d + d * (d + 1) // 2   # the compressed Taylor-2 map
    assert n["recap_taylor2_split_error"] < 1e-5
    # 2 N² (d + d) against 4 N d² + 4 N d at the article's N = 100K, d = 128: N / (d + 1)
    assert n["recap_article_flop_ratio"] == pytest.approx(100_000 / 129)
    assert n["state_numbers"] == d * dv + d                          # elu+1: m = d
    assert n["kv_numbers_article"] == 100_000 * (d + dv)
    finite = [p["median_kl"] for p in six.data["points"] if math.isfinite(p["median_kl"])]
    assert n["recap_best_kl"] == min(finite)
    for lang in LANGS:
        table = said_chapter_figures(six, lang)[3].data[0]
        steps, measured = table.cells.values
        assert len(steps) == len(measured) == 5
        assert f"{n['recap_best_kl']:.2f}" in measured[4].replace("<br>", " ")
        assert say_count(n["kv_numbers_article"], lang) in measured[3] and say_count(n["state_numbers"], lang) in measured[3]
        assert f"{n['recap_best_kl']:.2f}" in six.claim_in("b3", lang)


def test_the_hybrid_future_on_one_head_is_the_roadmaps_window_against_its_linear_part_alone(monkeypatch):
    """Without the causal model the hybrid future is measured on the chapter's head (of MiniLM)."""
    from explorer.lecture import view as lecture_views
    monkeypatch.setattr(lecture_views, "causal_model_ready", lambda: None)
    six = lecture.chapter_view(6)
    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT)
    layer, h = six.controls["layer"], six.controls["head"]
    q = sample.q[layer, h].double().numpy()
    future = six.data["future"]
    assert future["scope"] == "head"
    road = {r["id"]: r for r in six.data["roadmap"]}
    assert future["quality"]["hybrid"] == road["2025"]["median_kl"] and future["window"] == road["2025"]["window"]
    assert future["quality"]["softmax"] == 0.0
    from explorer.lecture.view_common import cached_map
    taylor = cached_map("taylor2", q.shape[-1], None, six.controls["seed"])
    qt, kt = sample.q[layer, h][None], sample.k[layer, h][None]
    alone = tradeoff.layer_quality(qt, kt, taylor)["median_kl"]
    assert future["quality"]["linear"] == pytest.approx(alone, rel=1e-9)
    d, dv, w, m = q.shape[-1], sample.v.shape[-1], future["window"], taylor.num_features
    n = 100_000
    assert future["flops"]["softmax"] == 2 * n * (d + dv)            # scores and values over every key
    assert future["flops"]["linear"] == 4 * m * dv + 4 * m
    assert future["flops"]["hybrid"] == 2 * (2 * w - 1) * (d + dv) + 4 * m * dv + 4 * m
    assert six.numbers["future_saving"] == pytest.approx(future["flops"]["softmax"] / future["flops"]["hybrid"])
    closer = round(future["quality"]["hybrid"], 2) < round(future["quality"]["linear"], 2)
    assert six.says["b6"]["claim"][0] == ("ch6.b6.claim_closer" if closer else "ch6.b6.claim_not_closer")
    for lang in LANGS:
        fig = said_chapter_figures(six, lang)[6]
        floor_fonts(fig)                                               # as the deck shows it
        quality, cost = fig.data
        assert quality.textposition == cost.textposition == "outside"   # softmax's 0.00 can be read
        assert list(quality.x) == [future["quality"][kind] for kind in ("linear", "hybrid", "softmax")]
        assert list(cost.x) == [future["flops"][kind] for kind in ("linear", "hybrid", "softmax")]
        assert f"{future['quality']['hybrid']:.2f}" in six.claim_in("b6", lang)


@pytest.mark.skipif(not packaged.installed(packaged.SMOLLM2), reason="SmolLM2-135M is not installed")
def test_the_hybrid_future_is_measured_on_the_whole_linearized_smollm2(six):
    """The 2025 hybrid on the whole causal model: every layer linear with the shipped Hedgehog
    maps, alone and beside 16 recent keys and token 0, judged by perplexity on held-out text
    (the Linearize section's own numbers); one head's FLOPs per token at 100K tokens."""
    from explorer.views import linearize as lin
    future = six.data["future"]
    assert future["scope"] == "model" and (future["window"], future["sinks"]) == (16, 1)
    alone, hybrid = lin.judge("hedgehog:0", 0), lin.judge("hedgehog:16:1", 0)
    # float32 forwards, one thread in the chapter and several here: equal to rounding
    assert future["quality"]["linear"] == pytest.approx(alone.rows[1]["perplexity"], rel=1e-5)
    assert future["quality"]["hybrid"] == pytest.approx(hybrid.rows[1]["perplexity"], rel=1e-5)
    assert future["quality"]["softmax"] == pytest.approx(hybrid.rows[0]["perplexity"], rel=1e-5)
    d = dv = 64
    m, e, n = 64, 17, 100_000
    assert future["flops"]["softmax"] == 2 * n * (d + dv)
    assert future["flops"]["linear"] == 4 * m * dv + 4 * m
    assert future["flops"]["hybrid"] == 2 * e * (d + dv) + 4 * m * dv + 4 * m     # 16 recent keys and the sink
    closer = f"{future['quality']['hybrid']:.1f}" != f"{future['quality']['linear']:.1f}" and \
        future["quality"]["hybrid"] < future["quality"]["linear"]
    assert six.says["b6"]["claim"][0] == ("ch6.b6.claim_model_closer" if closer else "ch6.b6.claim_model_not_closer")
    for lang in LANGS:
        fig = said_chapter_figures(six, lang)[6]
        quality, cost = fig.data
        assert list(quality.x) == [future["quality"][kind] for kind in ("linear", "hybrid", "softmax")]
        assert list(cost.x) == [future["flops"][kind] for kind in ("linear", "hybrid", "softmax")]
        claim = six.claim_in("b6", lang)
        assert all(f"{future['quality'][kind]:.1f}" in claim for kind in ("linear", "hybrid", "softmax"))
        assert "SmolLM2" in fig.layout.title.text + claim


def test_the_hologram_is_the_exact_map_and_the_impressions_are_the_kernel_maps(six, head):
    sample, layer, h, q, k = head
    road = {r["id"]: r for r in six.data["roadmap"]}
    elu = lambda x: np.where(x > 0, x + 1.0, np.exp(x))           # elu + 1
    causal = six.data["kl_causal"]          # a causal model's maps: keys j <= i, as the roadmap measured them
    n = q.shape[0]
    fq, fk = elu(q), elu(k)
    kernel = fq @ fk.T * (np.tril(np.ones((n, n))) if causal else 1.0)
    kernel /= kernel.sum(-1, keepdims=True)
    assert six.numbers["pairs_here"] == (n * (n + 1) // 2 if causal else n * n) and six.numbers["pairs_article"] == 1e10
    assert six.numbers["tokens"] == n
    for lang in LANGS:
        exact, first, learned = said_chapter_figures(six, lang)[4].data
        assert np.allclose(np.asarray(exact.z), _softmax(q, k, causal), atol=1e-6)
        assert np.allclose(np.asarray(first.z), kernel, atol=1e-5)
        assert np.asarray(learned.z).shape == (n, n)
        assert np.allclose(np.asarray(learned.z).sum(-1), 1.0, atol=1e-5)
        assert exact.zmax == first.zmax == learned.zmax                 # one colour scale for the three
        fig = said_chapter_figures(six, lang)[4]
        titles = [fig.layout[f"xaxis{i if i > 1 else ''}"].title.text for i in (1, 2, 3)]
        assert f"{road['2020']['median_kl']:.2f}" in titles[1]
        assert f"{road['2024_hedgehog']['median_kl']:.2f}" in titles[2]
        claim = six.claim_in("b4", lang)
        assert f"{six.numbers['state_numbers']:,.0f}" in claim and f"{road['2020']['median_kl']:.2f}" in claim


def _plain_recall(keys, values, read) -> float:
    """Share of the pairs whose read-out has cosine above 0.5 with the stored value."""
    cos = (read * values).sum(-1) / (np.linalg.norm(read, axis=-1) * np.linalg.norm(values, axis=-1))
    return float(np.mean(cos > 0.5))


def test_retrieval_is_softmax_over_every_pair_against_a_state_of_the_same_pairs(six):
    found = six.data["retrieval"]
    pairs, d = found["pairs"], found["d"]
    assert d == 64 and pairs[0] <= d < pairs[-1]        # the caveat's point: more pairs than the state's d
    gen = torch.Generator().manual_seed(0)
    trials = 8
    keys = torch.randn(trials, max(pairs), d, generator=gen, dtype=torch.float64).numpy()
    values = torch.randn(trials, max(pairs), d, generator=gen, dtype=torch.float64).numpy()
    elu = lambda x: np.where(x > 0, x + 1.0, np.exp(x))
    for i, p in enumerate(pairs[:3]):                   # the plain loops, on the smaller haystacks
        k, v = keys[:, :p], values[:, :p]
        s = k @ k.transpose(0, 2, 1) / math.sqrt(d)
        w = np.exp(s - s.max(-1, keepdims=True))
        soft = (w / w.sum(-1, keepdims=True)) @ v
        assert found["recalled"]["softmax"][i] == pytest.approx(_plain_recall(k, v, soft))
        phi = elu(k)
        additive = np.einsum("tpf,tpe->tfe", phi, v)          # S = sum phi(k) v^T, z = sum phi(k)
        z = phi.sum(1)
        read = np.einsum("tqf,tfe->tqe", phi, additive) / np.einsum("tqf,tf->tq", phi, z)[..., None]
        # the same haystack as softmax's: the state reads the very pairs drawn above
        assert found["recalled"]["linear"][i] == pytest.approx(_plain_recall(k, v, read))
    last = {reader: shares[-1] for reader, shares in found["recalled"].items()}
    assert last["softmax"] > 0.99 > 0.1 > max(last["linear"], last["deltanet"])   # the needle stays softmax's
    assert six.says["b5"]["claim"][0] == "ch6.b5.claim"
    for lang in LANGS:
        fig = said_chapter_figures(six, lang)[5]
        assert [list(trace.x) for trace in fig.data] == [pairs] * 3
        assert [list(trace.y) for trace in fig.data] == [[100 * s for s in found["recalled"][r]]
                                                        for r in ("softmax", "linear", "deltanet")]


def test_the_kept_numbers_and_the_costs_are_the_formulas():
    assert tradeoff.kept_numbers(1000, 32, 32, 32) == {"pairs": 1_000_000, "kv_cache": 64_000, "state": 32 * 32 + 32}
    costs = tradeoff.hybrid_costs(4096, 64, 64, 4, 64)
    assert costs["softmax"] == 2 * 4096 * 128 and costs["hybrid"] - costs["linear"] == 2 * 7 * 128
    q = torch.randn(1, 12, 8, dtype=torch.float64)
    k = torch.randn(1, 12, 8, dtype=torch.float64)
    assert tradeoff.kernel_split_error(q, k, feature_maps.create("taylor2", 8), lambda s: 1 + s + s * s / 2) < 1e-9
    assert tradeoff.kernel_split_error(q, k, feature_maps.create("elu1", 8), torch.exp) > 1e-3     # no split of exp
