"""The lecture on the packaged causal model: chapter 4 reads SmolLM2 by default when it is
installed and converted (found on disk, nothing loaded), with a Chinese sentence for a
Chinese audience; chapter 1's check against the model's own output holds for it; without
it everything stays on the embedded MiniLM."""

import re

import numpy as np
import pytest

from explorer.lecture import text as lecture_text
from explorer.lecture.chapters import go_deeper
from explorer.sources import packaged
from explorer.lecture import view as lecture
from explorer.views.common import load_sample

SMOLLM2 = packaged.SMOLLM2.name


def _ready() -> bool:
    gguf = packaged.gguf_path(packaged.SMOLLM2)
    return gguf is not None and packaged.is_converted(packaged.converted_folder(packaged.SMOLLM2, gguf))


needs_smollm2 = pytest.mark.skipif(not _ready(), reason="SmolLM2-135M is not installed and converted here")


@pytest.fixture
def without_smollm2(monkeypatch):
    monkeypatch.setattr(packaged, "gguf_path", lambda spec: None)


@needs_smollm2
def test_chapter_four_reads_the_causal_model_by_default():
    assert lecture.default_model(4) == SMOLLM2
    # the same model and sentence, in the audience's language, to the talk's end
    assert [lecture.default_model(ch) for ch in (1, 2, 3, 5, 6)] == [SMOLLM2] * 5
    assert lecture.default_model(0) is None                 # the bottleneck chapter reads no text
    view = lecture.chapter_view(4)
    assert view.data["model"] == SMOLLM2
    assert view.numbers["max_rel_diff"] <= 1e-5                       # the RNN equals the parallel form
    assert view.numbers["model_attention_max_abs_diff"] <= 1e-5       # causal softmax is the model's own
    assert view.data["token"].startswith("it·")                       # the step lands on the pronoun
    for lang in ("en", "zh"):
        said = [n for n in view.notices_in(lang) if SMOLLM2 in n]
        assert len(said) == 1 and "e-0" in said[0]
    deeper = go_deeper(4, model=view.data["model"], **view.controls)
    assert deeper["model"] == SMOLLM2 and deeper["t"] == view.controls["t"]
    assert "model" not in go_deeper(4, model="all-MiniLM-L6-v2")


@needs_smollm2
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_three_sums_over_the_pairs_a_causal_head_computes(lang):
    view = lecture.chapter_view(3, lang=lang)
    text = lecture_text.DEFAULT_TEXT_ZH if lang == "zh" else lecture_text.DEFAULT_TEXT
    sample = load_sample("text", text=text, model=SMOLLM2)
    layer, head = view.controls["layer"], view.controls["head"]
    q, k = sample.q[layer, head].double().numpy(), sample.k[layer, head].double().numpy()
    n = q.shape[0]
    s = (q @ k.T / np.sqrt(q.shape[-1]))[np.tril_indices(n)]        # keys j <= i only
    assert view.numbers["pairs"] == n * (n + 1) // 2 == s.size
    assert view.numbers["s_max"] == pytest.approx(s.max()) and view.numbers["s_min"] == pytest.approx(s.min())
    assert view.numbers["taylor1_kept_share"] == pytest.approx((1 + s).sum() / np.exp(s).sum())
    assert view.numbers["negative_taylor1_pairs"] == np.sum(1 + s < 0)
    assert view.data["profiles"]["elu1"]["pairs"] == s.size
    deeper = go_deeper(3, model=SMOLLM2, **view.controls)
    assert deeper["model"] == SMOLLM2 and deeper["causal"] == "true"
    assert "causal" not in go_deeper(3, **view.controls)


@pytest.mark.slow
@needs_smollm2
def test_in_chinese_the_default_sentence_is_chinese_and_read_without_unk():
    view = lecture.chapter_view(4, lang="zh")
    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT_ZH, model=SMOLLM2)
    assert view.data["tokens"] == list(sample.tokens)
    assert lecture.unk_count(sample)[0] == 0 and not any("[UNK]" in n for n in view.notices_in("zh"))
    assert all(re.search(r"[\u4e00-\u9fff，。]", tok) for tok in view.data["tokens"])
    assert view.data["token"].startswith("它")
    assert view.numbers["model_attention_max_abs_diff"] <= 1e-5
    # Chapter 6 reads the same Chinese sentence through the same model (MiniLM would read [UNK]).
    six = lecture.chapter_view(6, lang="zh")
    assert six.numbers["tokens"] == len(sample.tokens) != lecture.chapter_view(6, lang="en").numbers["tokens"]
    assert not any("[UNK]" in n for n in six.notices_in("zh"))


@needs_smollm2
@pytest.mark.parametrize("layer,head,query", [(0, 0, 4), (2, 3, 8), (5, 8, 12)])
def test_chapter_one_checks_against_the_causal_models_own_output(layer, head, query):
    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT, model=SMOLLM2)
    view = lecture.chapter_view(1, sample=sample, layer=layer, head=head, query=query)
    head_data = view.data["head"]
    assert head_data["reference_kind"] == "model"
    assert view.numbers["max_abs_diff"] <= 1e-5
    weights = head_data["weights"]
    assert np.all(weights[query + 1:] == 0) and weights[: query + 1].sum() == pytest.approx(1.0)
    assert not any("no model behind it" in n for n in view.notices_in("en"))


def test_without_the_causal_model_chapter_four_stays_on_minilm(without_smollm2):
    assert lecture.default_model(4) is None
    view = lecture.chapter_view(4, lang="zh")
    assert view.data["model"] == "all-MiniLM-L6-v2"
    assert view.data["tokens"][0] == "[CLS]·0" or "[CLS]" in view.data["tokens"][0]
    assert "model_attention_max_abs_diff" not in view.numbers
    assert not any(SMOLLM2 in n for n in view.notices_in("en"))
    assert "model" not in go_deeper(4, model=view.data["model"], **view.controls)


@pytest.mark.slow
def test_without_the_causal_model_chapter_five_keeps_minilm_for_its_trained_map(without_smollm2):
    """Without SmolLM2, chapter 5's trained Hedgehog is the one shipped for MiniLM's head
    (with it, chapter 5 reads SmolLM2: tests/app/test_lecture_smollm2.py)."""
    assert lecture.default_model(5) is None
    view = lecture.chapter_view(5, lang="zh")
    assert view.data["hedgehog_trained"] and view.data["hedgehog_origin"] == "shipped"


@needs_smollm2
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_six_plane_reads_the_causal_model_on_its_causal_rows(lang):
    """The trade-off plane on SmolLM2's own head: every map held to causal rows, the Hedgehog
    shipped for that head on it (and on the frontier), LUNA on the roadmap; the roadmap reads
    the same head against the same causal softmax, so its 2020 bar is elu+1's point (the deck
    read 1.09 on the plane and 1.75 on the roadmap)."""
    import statistics

    from explorer.diagnostics import attention
    from explorer.maps import create
    from explorer.measure import rowwise

    view = lecture.chapter_view(6, lang=lang)
    assert view.data["kl_causal"] is True and view.controls["layer"] == 3
    points = {p["label"]: p for p in view.data["points"]}
    hedgehog = points["hedgehog_trained"]
    assert hedgehog["undefined_rows"] == 0 and hedgehog["median_kl"] < points["elu1"]["median_kl"] / 5
    assert "hedgehog_trained" in [view.data["points"][i]["label"] for i in view.data["frontier"]]
    road = {r["id"]: r for r in view.data["roadmap"]}
    assert "2025_luna" in road
    # One reference for the whole roadmap (the model's causal softmax), one 2020 baseline, and
    # the plane's numbers where the two figures share a map.
    assert all(r["causal"] and r["reference"] == "causal softmax" for r in road.values()), road
    assert "2020_causal" not in road
    assert road["2020"]["median_kl"] == points["elu1"]["median_kl"]
    assert road["2024_hedgehog"]["median_kl"] == hedgehog["median_kl"]
    # elu+1's median, recomputed plainly in float64 over the causal rows past the first of the head
    from explorer.views.common import load_sample
    sample = load_sample("text", text=lecture.text_words.default_text(lang), model=SMOLLM2)
    h = view.controls["head"]
    q, k = sample.q[3, h].double(), sample.k[3, h].double()
    exact = attention.softmax_map(q, k, causal=True)
    approx = attention.kernel_map(q, k, create("elu1", q.shape[-1]), causal=True)
    rows = [float(rowwise.row_kl(exact[i:i + 1, :i + 1], approx[i:i + 1, :i + 1])[0][0])
            for i in range(1, q.shape[-2])]
    assert points["elu1"]["median_kl"] == pytest.approx(statistics.median(rows), rel=1e-6)   # the true median
