"""Chapter 5 on the packaged causal SmolLM2: when the model is installed and
converted, the chapter reads it by default, compares the maps with its *causal* softmax on a
head of its own, with a Hedgehog trained for that head shipped in assets/maps; the hybrid
build runs on the embedded MiniLM and says so; the layer and head controls take the range of
the model drawn. Tests that need the model skip where it is not installed and converted."""

import json
import re

import numpy as np
import pytest
import torch

from helpers.lecture import said_chapter_figures
from explorer.diagnostics import attention
from explorer.lecture import chapters
from explorer.lecture.ch5_closing_the_gap import maths as closing
from explorer.lecture import text as lecture_text
from explorer.experiments import learning
from explorer.maps import create, learned
from explorer.sources import packaged
from explorer.lecture import view as lecture
from explorer.views.common import load_sample
from helpers.models import SMOLLM2, needs_smollm2, smollm2_shape

pytestmark = pytest.mark.usefixtures("lecture_chapter_five")     # chapter 5 on SmolLM2, once a run (conftest)

MINILM = chapters.EMBEDDED_MODEL
TRAINED, ELU = "hedgehog_trained", "elu1"


@pytest.fixture
def without_smollm2(monkeypatch):
    monkeypatch.setattr(packaged, "gguf_path", lambda spec: None)


# ---------------------------------------------------------------------------------------
# The shipped map and the causal training path (no model needed)
# ---------------------------------------------------------------------------------------

def test_the_smollm2_map_ships_small_and_old_calls_still_read_minilms():
    layer, head = chapters.causal_lecture_head(SMOLLM2)
    assert chapters.SHIPPED_MAP_LAYERS[SMOLLM2] == layer         # the chapter's head is in the shipped layer
    path = learned.pretrained_path("hedgehog", layer, SMOLLM2)
    assert path.name == f"hedgehog-smollm2-layer{layer}.safetensors" and path.stat().st_size < 300 * 1024
    fmap = learned.load_map(path)
    assert fmap.name == "hedgehog" and fmap.head_dim == 64 and fmap.heads[0] > head
    assert json.loads(fmap.info["causal"]) is True and json.loads(fmap.info["model"]) == SMOLLM2
    one = learned.pretrained("hedgehog", layer, head, model=SMOLLM2)
    x = torch.randn(5, 64)
    torch.testing.assert_close(one(x), fmap.select(head)(x))
    # The old call is MiniLM's map, a different head dimension; unknown models ship nothing.
    assert learned.pretrained("hedgehog", 2, 0).head_dim == 32
    assert learned.pretrained("hedgehog", 2, 0, model=MINILM).head_dim == 32
    assert learned.pretrained("hedgehog", layer, head, model="no-such-model") is None
    assert learned.pretrained("hedgehog", layer + 1, head, model=SMOLLM2) is None
    # A map of the wrong head dimension is never offered for a head.
    assert lecture.shipped_map("hedgehog", layer, head, model=SMOLLM2, head_dim=32) is None


def test_causal_training_fits_causal_rows_and_repeats_itself():
    gen = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 12, 8, generator=gen) * 2, torch.randn(2, 12, 8, generator=gen) * 2
    target = attention.softmax_map(q, k, causal=True)
    batch = learning.PaddedBatch(q, k, target, torch.ones(2, 12, dtype=torch.bool), causal=True)
    fmap = create("hedgehog", 8, num_features=16)
    log_map = learning.masked_log_map(fmap, q, k, batch.valid, causal=True)
    torch.testing.assert_close(log_map.exp().sum(-1), torch.ones(2, 12))             # each row a distribution
    assert torch.all(log_map.exp().triu(1) < 1e-20)                                   # over keys j <= i only
    torch.testing.assert_close(log_map.exp(), attention.kernel_map(q, k, fmap, causal=True))
    runs = [learning.train_map(batch, "hedgehog", 16, steps=60, seed=0) for _ in range(2)]
    assert runs[0].losses[-1] < runs[0].losses[0] - 0.05
    assert runs[0].losses == runs[1].losses


# ---------------------------------------------------------------------------------------
# Chapter 5 on SmolLM2
# ---------------------------------------------------------------------------------------

@pytest.mark.slow
@needs_smollm2
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_five_reads_smollm2_and_its_trained_map_halves_elu1s_causal_kl(lang):
    assert lecture.default_model(5) == SMOLLM2
    view = lecture.chapter_view(5, lang=lang)
    layer, head = chapters.causal_lecture_head(SMOLLM2)
    assert (view.controls["layer"], view.controls["head"]) == (layer, head)
    assert view.data["heads_shape"] == smollm2_shape()
    assert view.data["kl_causal"] and view.data["hedgehog_origin"] == "shipped"
    title = said_chapter_figures(view, lang=lang)[3].layout.title.text
    assert title == lecture_text.t("ch5.b3.title_causal", lang)                 # the figure says what it compares
    kl = view.data["kl"]
    assert kl[TRAINED]["undefined"] == 0
    assert kl[TRAINED]["mean"] < 0.5 * kl[ELU]["mean"]
    assert view.numbers[f"mean_kl[{TRAINED}]"] == kl[TRAINED]["mean"]
    # The comparison is with the model's own (causal) attention: recompute it from the sample.
    sample = load_sample("text", text=lecture_text.default_text(lang), model=SMOLLM2)
    q, k = sample.q[layer, head], sample.k[layer, head]
    own = sample.model_attentions[layer, head].double()
    assert float((attention.softmax_map(q, k, causal=True).double() - own).abs().max()) <= 1e-5
    again = closing.row_kl_by_map(q, k, {ELU: create("elu1", q.shape[-1]),
                                         TRAINED: learned.pretrained("hedgehog", layer, head, model=SMOLLM2)},
                                  causal=True)
    for name in (ELU, TRAINED):
        np.testing.assert_allclose(again[name]["kl"], kl[name]["kl"], rtol=1e-9, atol=1e-12)
    bidirectional = closing.row_kl_by_map(q, k, {ELU: create("elu1", q.shape[-1])})
    assert not np.allclose(bidirectional[ELU]["kl"], kl[ELU]["kl"])        # causal is not the default
    said = [n for n in view.notices_in(lang) if SMOLLM2 in n]
    assert any("softmax" in n for n in said)
    if lang == "zh":
        assert not any(re.search(r"\b(the|is|with|map)\b", n) for n in said)


@needs_smollm2
def test_in_chinese_chapter_five_reads_the_chinese_sentence_without_unk():
    view = lecture.chapter_view(5, lang="zh")
    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT_ZH, model=SMOLLM2)
    assert lecture.unk_count(sample)[0] == 0
    assert not any("[UNK]" in n for n in view.notices_in("zh"))
    english = lecture.chapter_view(5, lang="en")
    assert view.numbers[f"mean_kl[{ELU}]"] != english.numbers[f"mean_kl[{ELU}]"]    # another sentence was read


@needs_smollm2
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_hybrid_build_is_smollm2_itself_linearized_and_judged_by_perplexity(lang):
    from explorer.lecture.ch5_closing_the_gap import LINEARIZED_KS, LINEARIZED_SETS
    from explorer.views import linearize as lin

    view = lecture.chapter_view(5, lang=lang)
    linear = view.data["linearized"]
    assert view.data["hybrid"] is None and linear["layers"] == 30
    assert list(linear["curves"]) == list(LINEARIZED_SETS)
    for set_id, points in linear["curves"].items():
        assert [p["k"] for p in points] == list(LINEARIZED_KS)
        # every point is the Linearize section's own judging of the same hybrid
        judged = lin.judge(set_id, points[1]["k"])
        assert points[1]["perplexity"] == pytest.approx(judged.rows[1]["perplexity"], rel=1e-5)
        assert points[-1]["perplexity"] == pytest.approx(linear["original"], rel=1e-6)   # all softmax: the original
    claim = view.claim_in("b6", lang)
    assert f"{linear['original']:.1f}" in claim
    assert f"{linear['curves']['hedgehog:16:1'][0]['perplexity']:.1f}" in claim
    assert not any(key.startswith("notice.hybrid") for key, _ in view.notice_items)    # no other model stands in


# ---------------------------------------------------------------------------------------
# The layer and head controls follow the model
# ---------------------------------------------------------------------------------------

def _ranges(specs) -> dict:
    return {s.name: (s.min, s.max, s.default) for s in specs if s.name in ("layer", "head")}


@needs_smollm2
def test_the_controls_take_the_range_of_the_model_the_chapter_reads():
    layers, heads = smollm2_shape()
    layer, head = chapters.causal_lecture_head(SMOLLM2)
    assert _ranges(lecture.chapter_controls(5)) == {"layer": (0, layers - 1, layer), "head": (0, heads - 1, head)}
    assert _ranges(lecture.chapter_controls(4))["layer"][:2] == (0, layers - 1)
    minilm = _ranges(lecture.chapter_controls(5, model=MINILM))
    assert minilm == _ranges(chapters.chapter_controls(5)) == {"layer": (0, 5, 2), "head": (0, 11, 3)}
    assert _ranges(lecture.chapter_controls(3))["layer"][:2] == (0, layers - 1)   # chapter 3 reads it too
    assert _ranges(lecture.chapter_controls(6)) == {"layer": (0, layers - 1, layer), "head": (0, heads - 1, head)}  # to the end


@needs_smollm2
def test_after_a_draw_the_sliders_reach_the_model_drawn():
    gr = pytest.importorskip("gradio")
    from explorer.ui import lecture_checks

    specs = {ch: chapters.chapter_controls(ch) for ch in chapters.CHAPTERS}     # as the page is built
    layers, heads = smollm2_shape()
    for view, last in ((lecture.chapter_view(5), (layers - 1, heads - 1)),
                       (lecture.chapter_view(5, sample=load_sample("text", text=lecture_text.DEFAULT_TEXT)),
                        (5, 11))):
        out = lecture_checks.controls_as_drawn(view, specs)
        offset = sum(len(specs[ch]) for ch in chapters.CHAPTERS if ch < 5)
        drawn = {spec.name: out[offset + i] for i, spec in enumerate(specs[5])}
        assert (drawn["layer"]["maximum"], drawn["head"]["maximum"]) == last
        assert (drawn["layer"]["value"], drawn["head"]["value"]) == (view.controls["layer"], view.controls["head"])
        assert drawn["m"] == view.controls["m"]
        assert all(o is gr.skip() or isinstance(o, dict) and o.get("__type__") == "update" for o in out[:offset])


@needs_smollm2
def test_link_and_api_values_past_the_model_are_clamped_with_a_notice():
    pytest.importorskip("gradio")
    from explorer.ui import lecture_checks, validate

    layers, heads = smollm2_shape()
    specs = {s.name: s for s in lecture.chapter_controls(5)}
    notices = []
    assert lecture_checks.link_control(specs["layer"], "99", notices, "c_layer") == layers - 1
    assert lecture_checks.link_control(specs["head"], str(heads + 3), notices, "c_head") == heads - 1
    assert lecture_checks.link_control(specs["layer"], "20", notices, "c_layer") == 20     # inside SmolLM2, past MiniLM
    assert len(notices) == 2 and f"0..{layers - 1}" in notices[0]
    assert f"0..{heads - 1}" in validate.in_language(notices[1], "zh")
    # The API passes a layer past the model to the chapter, which clamps it and says so.
    from explorer.lecture import chapters as plan
    ch, _, _, values, _ = lecture_checks.lecture_request(plan, 5, "", "zh", '{"layer": 40, "head": 20}', False,
                                                   specs_for=lecture.chapter_controls)
    assert values["layer"] == 40 and values["m"] == specs["m"].default
    view = lecture.chapter_view(ch, lang="zh", **values)
    assert (view.controls["layer"], view.controls["head"]) == (layers - 1, heads - 1)
    said = view.notices_in("zh")
    assert f"这里没有第 40 层（只有 0..{layers - 1}）" in said[0] and "第 20 头" in said[1]
    with pytest.raises(ValueError, match="layer"):
        lecture_checks.lecture_request(plan, 5, "", "en", '{"layer": -1}', False, specs_for=lecture.chapter_controls)


# ---------------------------------------------------------------------------------------
# Without SmolLM2: chapter 5 as before
# ---------------------------------------------------------------------------------------

def test_without_smollm2_chapter_five_stays_on_minilm(without_smollm2):
    assert lecture.default_model(5) is None
    assert _ranges(lecture.chapter_controls(5)) == {"layer": (0, 5, 2), "head": (0, 11, 3)}
    view = lecture.chapter_view(5, lang="zh")
    assert view.data["heads_shape"] == (6, 12) and not view.data["kl_causal"]
    assert view.data["hedgehog_origin"] == "shipped" and view.data["hybrid"]
    assert (view.controls["layer"], view.controls["head"]) == (2, 3)
    assert not any(SMOLLM2 in n for n in view.notices_in("en"))


@pytest.mark.slow
@needs_smollm2
def test_the_lecture_endpoint_clamps_a_head_past_the_model_and_fills_the_models_defaults():
    pytest.importorskip("gradio")
    from explorer.ui import lecture_handlers

    layers, heads = smollm2_shape()
    out = lecture_handlers.lecture_api(chapter=5, lang="en", controls='{"layer": 40, "head": 2}')
    assert (out["controls"]["layer"], out["controls"]["head"]) == (layers - 1, 2)
    assert any(f"Layer 40 does not exist here (0..{layers - 1})" in n for n in out["notices"])
    assert "c_layer=" + str(layers - 1) in out["query"]
    plain = lecture_handlers.lecture_api(chapter=5, lang="en")
    assert (plain["controls"]["layer"], plain["controls"]["head"]) == chapters.causal_lecture_head(SMOLLM2)
    # Chapter 3 reads MiniLM by default; naming SmolLM2 gives its range, and a head past it is clamped.
    named = lecture_handlers.lecture_api(chapter=3, lang="zh", model=SMOLLM2, controls='{"layer": 20, "head": 11}')
    assert (named["controls"]["layer"], named["controls"]["head"]) == (20, heads - 1)
    assert any(f"这里没有第 11 头（只有 0..{heads - 1}）" in n for n in named["notices"])


@needs_smollm2
def test_a_smollm2_head_without_a_shipped_map_says_so_in_both_languages(monkeypatch):
    from explorer.views import learn

    monkeypatch.setattr(learn, "cached_result", lambda *a, **k: None)
    layer = chapters.SHIPPED_MAP_LAYERS[SMOLLM2]
    view = lecture.chapter_view(5, layer=layer + 1, head=0)
    assert view.data["hedgehog_origin"] is None and "hedgehog" in view.data["kl"]
    for lang in ("en", "zh"):
        said = [n for n in view.notices_in(lang) if SMOLLM2 in n]
        assert any(f"{layer}" in n and "W = I" in n for n in said), said
    assert lecture.shipped_map("hedgehog", layer, 4, model=SMOLLM2, head_dim=32) is None


@needs_smollm2
def test_train_in_chapter_five_trains_on_the_model_it_reads(monkeypatch):
    """"Train" fits the head of the model the chapter reads (the learn tab's training, given
    the model), not the embedded MiniLM's; "Go deeper" opens the learn tab on that model."""
    from explorer.views import learn

    calls = []
    monkeypatch.setattr(learn, "cached_result", lambda *a, **k: None)

    def fake_learn(layer, head, m, steps, progress=None, model=None):
        calls.append((layer, head, model))
        return type("Result", (), {"feature_map": create("hedgehog", 64, num_features=m)})()

    monkeypatch.setattr(learn, "learn_view", fake_learn)
    layer = chapters.SHIPPED_MAP_LAYERS[SMOLLM2]
    view = lecture.chapter_view(5, layer=layer + 1, head=0, train=True)
    assert calls == [(layer + 1, 0, SMOLLM2)] and view.data["hedgehog_origin"] == "trained here"
    deeper = chapters.go_deeper(5, model=view.data["model"], **view.controls)
    assert deeper["tab"] == "learn" and deeper["model"] == SMOLLM2 and deeper["llayer"] == layer + 1




@pytest.mark.slow
@needs_smollm2
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_go_deeper_opens_the_full_tab_on_the_model_and_sentence_the_chapter_read(lang):
    from explorer.ui import lecture_handlers

    sentence = lecture_text.DEFAULT_TEXT_ZH if lang == "zh" else lecture_text.DEFAULT_TEXT
    for ch in (1, 3, 4, 5, 6):                                # one model and sentence to the talk's end
        view = lecture.chapter_view(ch, lang=lang)
        assert view.data["model"] == SMOLLM2 and view.data["text"] == sentence
        panel = ("text", lecture_text.DEFAULT_TEXT, "clustered", 128, 32, 0, 1.0, None, None)
        params = lecture_handlers.deeper_params(view, lang, True, None, None, panel)
        assert params["model"] == SMOLLM2 and params["text"] == sentence and params["lang"] == lang, ch
        if params["tab"] == "quality":       # the chapter's head, against causal softmax as the chapter reads it
            assert (params["layer"], params["head"]) == (view.controls["layer"], str(view.controls["head"])), ch
            assert params["causal"] == "true", ch
