"""Chapter 5's LUNA build (b5): the shipped trained LUNA map beside the trained Hedgehog and
elu+1, query by query, as row KL to softmax. LUNA ships for the embedded MiniLM's layer 2 and
for SmolLM2's layer 3 (fitted to its causal softmax): each model's build reads its own head,
causal rows on the causal model. Its lines are the view's numbers, and those are a plain
float64 computation on the same q, k."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer import maps as feature_maps
from helpers.lecture import said_chapter_figures
from explorer.lecture import chapters
from explorer.lecture import text as lecture_text
from explorer.lecture.ch5_closing_the_gap import view as closing_view
from explorer.lecture.record import EMBEDDED_MODEL
from explorer.sources import packaged
from explorer.lecture import view as lecture
from explorer.views.common import load_sample
from explorer.lecture.view_common import new_view, shipped_map

pytestmark = pytest.mark.usefixtures("lecture_chapter_five")     # chapter 5 on SmolLM2, once a run (conftest)

LUNA, HEDGEHOG = "luna_trained", "hedgehog_trained"
SMOLLM2 = packaged.SMOLLM2.name


@pytest.fixture(scope="module")
def view():
    """The chapter as it opens: on SmolLM2 where it is installed (as CI installs it)."""
    return lecture.chapter_view(5)


@pytest.fixture(scope="module")
def minilm_view():
    return lecture.chapter_view(5, sample=load_sample("text", text=lecture_text.DEFAULT_TEXT))


def plain_row_kl(q, k, fmap, causal: bool) -> np.ndarray:
    """KL(softmax row || the map's normalised row) per query, float64 numpy; causal: both see
    keys j <= i only (the first row then has one key and a KL of 0)."""
    q64, k64 = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    n = q64.shape[0]
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    s = np.where(allowed, q64 @ k64.T / math.sqrt(q64.shape[-1]), -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    w = fmap(q.double(), is_query=True).double().numpy() @ fmap(k.double()).double().numpy().T
    w = np.where(allowed, w, 0.0)
    a = w / w.sum(axis=1, keepdims=True)
    terms = np.where(allowed, p * (np.log(np.where(allowed, p, 1.0)) - np.log(np.where(allowed, a, 1.0))), 0.0)
    return terms.sum(axis=1)


def test_the_luna_build_stands_before_the_hybrids(view):
    assert chapters.chapter(5).builds == ("b0", "b1", "b2", "b3", "b4", "b5", "b6")
    for lang in ("en", "zh"):
        figs = said_chapter_figures(view, lang, True)
        assert figs[5].layout.title.text == lecture_text.t("ch5.b5.title", lang)
        hybrid = "ch5.b6.title_linearized" if view.data["linearized"] else "ch5.b6.title"
        assert lecture_text.t(hybrid, lang).startswith(figs[6].layout.title.text)


def _check_row_kl(view, model: str, causal: bool):
    luna = view.data["luna"]
    assert luna is not None and list(luna["kl"]) == ["elu1", HEDGEHOG, LUNA]
    assert (luna["model"], luna["causal"]) == (model, causal)
    layer, head = luna["layer"], luna["head"]
    assert (layer, head) == (view.controls["layer"], view.controls["head"])          # the chapter's own head
    assert not any(key == "notice.luna_embedded" for key, _ in view.notice_items)
    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT, model=None if model == EMBEDDED_MODEL else model)
    assert luna["tokens"] == list(sample.tokens)
    q, k = sample.q[layer, head], sample.k[layer, head]
    maps = {"elu1": feature_maps.create("elu1", q.shape[-1]),
            HEDGEHOG: shipped_map("hedgehog", layer, head, model=model, head_dim=q.shape[-1]),
            LUNA: shipped_map("luna", layer, head, model=model, head_dim=q.shape[-1])}
    counted = slice(1 if causal else 0, None)           # a causal first row has one key: left out of means
    for name, fmap in maps.items():
        expected = plain_row_kl(q, k, fmap, causal)
        np.testing.assert_allclose(luna["kl"][name]["kl"], expected, rtol=1e-8, atol=1e-12)
        assert view.numbers[f"luna_mean_kl[{name}]"] == pytest.approx(float(expected[counted].mean()), rel=1e-8)
    below = plain_row_kl(q, k, maps[LUNA], causal)[counted] < plain_row_kl(q, k, maps[HEDGEHOG], causal)[counted]
    assert view.numbers["luna_queries_below_hedgehog"] == below.sum()
    assert view.numbers["luna_queries"] == len(sample.tokens) - (1 if causal else 0)
    assert f"{int(view.numbers['luna_queries'])} " in view.claim_in("b5", "en") + " "


@pytest.mark.skipif(not packaged.installed(packaged.SMOLLM2), reason="SmolLM2-135M is not installed")
def test_on_smollm2_the_build_reads_its_own_luna_on_causal_rows(view):
    _check_row_kl(view, SMOLLM2, True)
    for lang in ("en", "zh"):                     # the note says the rows are causal
        layout = said_chapter_figures(view, lang, True)[5].layout
        shown = (layout.title.text or "") + (layout.title.subtitle.text or "" if layout.title.subtitle else "")
        assert "j ≤ i" in shown


def test_on_minilm_the_build_reads_its_own_luna_on_full_rows(minilm_view):
    _check_row_kl(minilm_view, EMBEDDED_MODEL, False)


def test_a_head_no_luna_ships_for_reads_the_embedded_lecture_head_and_says_so():
    view = lecture.chapter_view(5, sample=load_sample("text", text=lecture_text.DEFAULT_TEXT), layer=4)
    luna = view.data["luna"]
    assert (luna["model"], luna["causal"], luna["layer"]) == (EMBEDDED_MODEL, False, 2)
    assert any(key == "notice.luna_embedded" for key, _ in view.notice_items)


def test_the_lines_are_the_views_row_kl(view):
    kl = view.data["luna"]["kl"]
    for lang in ("en", "zh"):
        fig = said_chapter_figures(view, lang, True)[5]
        assert [trace.name for trace in fig.data] == [lecture_text.map_words(name, lang) for name in kl]
        for trace, r in zip(fig.data, kl.values()):
            rows = np.asarray(r["kl"])
            shown = np.array([np.nan if v is None else v for v in trace.y], dtype=float)
            keep = np.isfinite(rows) & (rows > 0)
            np.testing.assert_array_equal(shown[keep], rows[keep])
            assert np.isnan(shown[~keep]).all()


def test_below_is_said_only_when_lunas_mean_is_lower_at_the_rounding_written():
    def claim(luna_mean, hedgehog_mean):
        view = new_view(5, {})
        rows = np.array([0.1, 0.2])
        view.data["luna"] = {"layer": 2, "head": 3, "tokens": ["a", "b"],
                             "kl": {"elu1": {"kl": rows, "mean": 1.1}, HEDGEHOG: {"kl": rows, "mean": hedgehog_mean},
                                    LUNA: {"kl": rows, "mean": luna_mean}}}
        view.numbers.update({"luna_queries_below_hedgehog": 1.0, "luna_queries": 2.0})
        closing_view._say_luna(view)
        return view.says["b5"]["claim"][0]

    assert claim(0.06, 0.08) == "ch5.b5.claim_below"
    assert claim(0.09, 0.08) == "ch5.b5.claim_not_below"
    assert claim(0.0799, 0.0801) == "ch5.b5.claim_not_below"     # equal as written: 0.08 and 0.08
    view = new_view(5, {})
    view.data["luna"] = None
    closing_view._say_luna(view)
    assert view.says["b5"]["claim"][0] == "ch5.b5.claim_none"


def test_random_data_has_no_luna_and_says_so():
    view = lecture.chapter_view(5, sample=load_sample("random", n=16, d=32))
    assert view.data["luna"] is None and view.says["b5"]["claim"][0] == "ch5.b5.claim_none"
    assert any(key == "notice.luna_no_text" for key, _ in view.notice_items)
    assert len(said_chapter_figures(view, "zh", True)) == 7
