"""Chapter 5's third way to forget (overwriting, the delta rule) and HGRN2's layer-wise
bounds, and chapter 6's measured points for them and for LUNA: every number drawn is the
engine's own, and each says what it measures."""

import math
import re

import numpy as np
import pytest
import torch

from explorer import maps as feature_maps
from explorer.lecture.figures import build_count
from helpers.lecture import said_chapter_figures
from explorer.diagnostics import state, state_probes
from explorer.mechanisms.hgrn2.gates import hgrn2_layer_bounds
from explorer.lecture.ch5_closing_the_gap import maths as closing
from explorer.lecture.ch4_rnn import maths as rnn
from explorer.lecture.ch6_tradeoff import maths as tradeoff
from explorer.lecture import text as lecture_text
from explorer.lecture.chapters import LECTURE_HEAD, LECTURE_LAYER
from explorer.maps.learned import pretrained
from explorer.lecture import view as lecture, view_common as lecture_common

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def five():
    return lecture.chapter_view(5)


@pytest.fixture(scope="module")
def six():
    return lecture.chapter_view(6)


def _probe(kind, position, dim=rnn.RECALL_DIM, **kw):
    """The engine's recall probe with the lecture's settings, as a plain array; ``dim`` the
    lecture's one recall experiment's (chapters 4, 5 and 6 quote the same)."""
    elu = feature_maps.create("elu1", dim)
    rc = state_probes.recall_probe(elu, dim, list(rnn.RECALL_LAGS), kind, position=position, trials=16, seed=0, **kw)
    return rc.cosine.numpy()


def _at(curve, lag):
    return float(curve[list(rnn.RECALL_LAGS).index(lag)])


def test_chapter_five_has_overwriting_and_hgrn2_between_gates_and_learned_maps(five):
    assert build_count(5) == 7
    for lang in ("en", "zh"):
        figs = said_chapter_figures(five, lang)
        assert len(figs) == 7
        titles = [f.layout.title.text for f in figs]
        assert titles[1] == lecture_text.t("ch5.b1.title", lang, lag=closing.OVERWRITE_LAG)
        assert titles[2] == lecture_text.t("ch5.b2.title", lang)
        causal = "_causal" if five.data.get("kl_causal") else ""          # against causal softmax on SmolLM2
        assert titles[3] == lecture_text.t("ch5.b3.title" + causal, lang)  # the trained map, as before
        assert titles[4] == lecture_text.t("ch5.b4.title", lang)           # then what it copies: spiky, monotone rows
        assert "HGRN2" in titles[2] and "DeltaNet" in lecture_text.t("ch5.claim", lang)


@pytest.mark.slow
def test_overwriting_recall_is_the_engines_probe(five):
    c = five.controls
    lag = five.data["overwrite"]["lag"]
    kinds = five.data["overwrite"]["kinds"]
    # Every update of the registry but HGRN2, whose bound has a build of its own.
    assert list(kinds) == list(closing.OVERWRITE_KINDS) and "hgrn2" not in kinds
    assert {"linear", "retnet", "gla", "deltanet", "gated_deltanet"} <= set(kinds)
    for kind in kinds:
        for pos in ("early", "recent"):
            expected = _at(_probe(kind, pos, five.data["head_dim"], gamma=c["gamma"], strength=c["strength"]), lag)
            assert kinds[kind][pos] == pytest.approx(expected, abs=1e-7), (kind, pos)
            assert five.numbers[f"recall_{pos}_at_{lag}[{kind}]"] == kinds[kind][pos]
    # What the build claims: the delta rule returns the latest key exactly and keeps the
    # early key better than the additive state, which cannot tell old from new.
    assert kinds["deltanet"]["recent"] > 0.99 and kinds["gated_deltanet"]["recent"] > 0.99
    assert kinds["deltanet"]["early"] > kinds["linear"]["early"] + 0.1
    assert kinds["linear"]["early"] == pytest.approx(kinds["linear"]["recent"], abs=1e-6)


def test_overwriting_build_draws_those_numbers_with_their_labels(five):
    kinds = five.data["overwrite"]["kinds"]
    for lang in ("en", "zh"):
        fig = said_chapter_figures(five, lang)[1]
        assert [trace.type for trace in fig.data] == ["bar", "bar"]
        for trace, pos in zip(fig.data, ("early", "recent")):
            assert list(trace.x) == [lecture_text.state_label(k, lang) for k in kinds]
            assert np.allclose(trace.y, [kinds[k][pos] for k in kinds])
            assert list(trace.text) == [f"{0.0 if abs(v) < 0.005 else v:.2f}" for v in trace.y]
        assert str(five.data["overwrite"]["lag"]) in fig.layout.title.text
        if lang == "zh":
            assert CJK.search(fig.data[0].name) and CJK.search(fig.layout.yaxis.title.text)


@pytest.mark.slow
def test_hgrn2_bounds_rise_with_depth_and_the_memory_and_recall_follow(five):
    depth = five.data["hgrn2"]
    layers = closing.HGRN2_LAYERS
    expected = hgrn2_layer_bounds(torch.zeros(layers, dtype=torch.float64)).numpy()
    assert np.allclose(depth["lower_bound"], expected) and np.allclose(expected, np.arange(layers) / layers)
    assert np.allclose(depth["memory_tokens"], 1.0 / (1.0 - expected))
    assert np.all(np.diff(depth["lower_bound"]) > 0) and np.all(np.diff(depth["memory_tokens"]) > 0)
    for i, lb in enumerate(expected):
        for pos in ("early", "recent"):
            assert depth[pos][i] == pytest.approx(
                _at(_probe("hgrn2", pos, five.data["head_dim"], lower_bound=float(lb)), depth["lag"]), abs=1e-7)
    # Deeper layers keep the early key longer, at the price of a blurrier recent one (after the
    # lecture's 16 keys even the top floor, 6 tokens, has let most of the early key go).
    assert depth["early"][-1] > depth["early"][0] + 0.05
    assert depth["recent"][-1] < depth["recent"][0] - 0.1
    for i in range(layers):
        assert five.numbers[f"hgrn2_lower_bound_layer{i}"] == pytest.approx(expected[i])
        assert five.numbers[f"hgrn2_memory_layer{i}"] == pytest.approx(1 / (1 - expected[i]))
    for lang in ("en", "zh"):
        fig = said_chapter_figures(five, lang)[2]
        bars, early, recent = fig.data
        assert bars.type == "bar" and np.allclose(bars.y, expected)
        assert list(bars.text) == [f"≥ {m:.3g}" for m in 1 / (1 - expected)]
        assert np.allclose(early.y, depth["early"]) and np.allclose(recent.y, depth["recent"])
        assert early.yaxis != bars.yaxis            # cosine and bound on axes of their own
        note = fig.layout.title.subtitle.text
        assert "1/(1 − lb)" in note.replace("<br>", " ")


@pytest.mark.slow
def test_try_this_moves_the_overwriting_build(five):
    after = lecture.chapter_view(5, **lecture.try_this(5))
    before_y = [list(tr.y) for tr in said_chapter_figures(five, "en")[1].data]
    after_y = [list(tr.y) for tr in said_chapter_figures(after, "en")[1].data]
    assert before_y != after_y


def test_roadmap_adds_luna_beside_hedgehog_measured_as_row_kl(six):
    road = {r["id"]: r for r in six.data["roadmap"]}
    model = lecture.default_model(6)                    # the model the chapter reads (SmolLM2 where installed)
    layer, head = six.controls["layer"], six.controls["head"]
    luna = pretrained("luna", layer, head, **({"model": model} if model else {}))
    assert luna is not None, "the app ships a LUNA map for the chapter's head"
    causal = six.data["kl_causal"]                      # a causal model: every step against causal softmax
    assert "2025_luna" in road and road["2025_luna"]["causal"] == causal
    assert road["2025_luna"]["reference"] == ("causal softmax" if causal else "softmax")
    assert road["2025_luna"]["map"] == "luna_trained"
    # The engine's number: the layer-quality measure on the lecture's head with the shipped map.
    from explorer.views.common import load_sample
    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT, model=model)
    q = sample.q[layer, head].unsqueeze(0)
    k = sample.k[layer, head].unsqueeze(0)
    measured = tradeoff._layer_quality(q, k, luna, causal, None)
    assert road["2025_luna"]["median_kl"] == pytest.approx(measured["median_kl"], rel=1e-9)
    assert road["2025_luna"]["median_kl"] < road["2020"]["median_kl"]
    assert six.numbers["roadmap_kl[2025_luna]"] == road["2025_luna"]["median_kl"]
    for lang in ("en", "zh"):
        full = said_chapter_figures(six, lang)[1].data[0]
        label = lecture_text.t("road.2025_luna", lang)
        hedgehog = lecture_text.t("road.2024_hedgehog", lang)
        assert label in full.y and hedgehog in full.y          # in the full-attention panel, beside Hedgehog
        assert full.x[list(full.y).index(label)] == pytest.approx(road["2025_luna"]["median_kl"])


@pytest.mark.slow
def test_state_updates_have_a_roadmap_of_their_own_measured_as_recall(six):
    states = six.data["state_roadmap"]
    assert [s["id"] for s in states] == [p[0] for p in tradeoff.STATE_ROADMAP_POINTS]
    head = six.controls["head"]
    gamma = 1 - 2 ** (-5 - head)
    for s in states:
        assert s["measure"] == "recall" and s["lag"] == tradeoff.STATE_ROADMAP_LAG
        for pos in ("early", "recent"):
            expected = _at(_probe(s["kind"], pos, gamma=gamma, lower_bound=state.HGRN2_LOWER_BOUND), s["lag"])
            assert s[pos] == pytest.approx(expected, abs=1e-7), (s["id"], pos)
            assert six.numbers[f"roadmap_recall_{pos}_at_{s['lag']}[{s['id']}]"] == s[pos]
    by_kind = {s["kind"]: s for s in states}
    assert by_kind["deltanet"]["recent"] > 0.99 and by_kind["deltanet"]["early"] > by_kind["linear"]["early"]
    assert build_count(6) == 7          # the plane, two roadmaps, the recap, the hologram, retrieval, the future
    for lang in ("en", "zh"):
        figs = said_chapter_figures(six, lang)
        kl_fig, recall_fig = figs[1], figs[2]
        # Its own figure, bars only: no line joins it to the KL points, and no KL word on it.
        assert [tr.type for tr in recall_fig.data] == ["bar", "bar"]
        labels = list(recall_fig.data[0].y)
        assert labels == [lecture_text.state_road_label(s["kind"], lang, **_values(s)) for s in states][::-1]
        for year, name in (("2024", "HGRN2"), ("2024", "DeltaNet"), ("2025", "Gated DeltaNet")):
            assert any(year in lab and name in lab for lab in labels)
        assert recall_fig.layout.xaxis.title.text == lecture_text.t("axis.cosine", lang)
        title = recall_fig.layout.title.text + recall_fig.layout.title.subtitle.text
        assert str(tradeoff.STATE_ROADMAP_LAG) in title and "KL" in title    # says it is not the KL measure
        kl_labels = " ".join(str(y) for tr in kl_fig.data for y in tr.y)
        assert "DeltaNet" not in kl_labels and "HGRN2" not in kl_labels
        assert np.allclose(recall_fig.data[0].x, [s["early"] for s in states][::-1])
        assert np.allclose(recall_fig.data[1].x, [s["recent"] for s in states][::-1])


def _values(point):
    if point["id"] == "retnet":
        return {"gamma": f"{point['gamma']:.4g}"}
    if point["id"] == "hgrn2":
        return {"lb": f"{point['lower_bound']:g}"}
    return {}


def test_without_a_shipped_luna_the_point_is_left_out_and_said(monkeypatch):
    monkeypatch.setattr(lecture_common, "shipped_map", lambda kind, layer, head, **where: None)
    view = lecture.chapter_view(6, seed=1)
    assert "2025_luna" not in [r["id"] for r in view.data["roadmap"]]
    assert any("LUNA" in n for n in view.notices_in("en"))
    assert any("LUNA" in n and CJK.search(n) for n in view.notices_in("zh"))
    assert math.isfinite(view.data["roadmap"][0]["median_kl"])
