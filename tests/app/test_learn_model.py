"""The learn tab reads any model: the packaged causal SmolLM2 trains its maps against its
causal softmax, a trained map is offered only on samples of the model it was trained on,
and a model that cannot be read is refused in one sentence before anything is loaded.

The SmolLM2 tests skip where it is not installed and converted; the rest need MiniLM only
(or no model at all) and use tiny settings: a few steps on one head and two texts.
"""

from __future__ import annotations

import inspect
import math

import gradio as gr
import numpy as np
import pytest
import torch

from explorer import views
from explorer.catalog import CAUSAL_MODEL, EMBEDDED_MODEL
from explorer.diagnostics import attention
from explorer.experiments import learning
from explorer.maps import learned
from explorer.maps.learned import Hedgehog
from explorer.sources import Sample, models, packaged
from explorer.text import say_error
from explorer.ui import hybrid_panel, learn_links, learn_tab
from explorer.views import common
from explorer.views import learn as lv

SMOLLM2 = CAUSAL_MODEL["name"]
HEDGEHOG = "hedgehog_trained"
TEXT = "The cat sat on the mat because it was warm."


def _smollm2_ready() -> bool:
    gguf = packaged.gguf_path(packaged.SMOLLM2)
    return gguf is not None and packaged.is_converted(packaged.converted_folder(packaged.SMOLLM2, gguf))


needs_smollm2 = pytest.mark.skipif(not _smollm2_ready(), reason="SmolLM2-135M is not installed and converted here")


@pytest.fixture(autouse=True)
def forget():
    yield
    for session in ("A", "B", None):
        common.forget_trained(session)


def row_kl_by_hand(a: torch.Tensor, approx: torch.Tensor, causal: bool) -> torch.Tensor:
    """KL(A_i || Â_i) of every row, summed over the keys row i may see (j <= i when causal)."""
    a, approx = a.double(), approx.double()
    n = a.shape[-1]
    out = torch.zeros(a.shape[:-1], dtype=torch.float64)
    for i in range(n):
        keys = slice(0, i + 1) if causal else slice(None)
        p, q = a[..., i, keys], approx[..., i, keys]
        terms = torch.where(p > 0, p * (p / q).log(), torch.zeros_like(p))
        out[..., i] = terms.sum(-1)
    return out


# --------------------------------------------------------------------------- causal training, no model needed

def test_a_causal_batch_normalises_each_row_over_the_keys_it_may_see():
    torch.manual_seed(0)
    q, k = torch.randn(1, 5, 8), torch.randn(1, 5, 8)
    valid = torch.ones(1, 5, dtype=torch.bool)
    fmap = Hedgehog(8, 8)
    with torch.no_grad():
        causal = learning.masked_log_map(fmap, q, k, valid, causal=True).exp()
        plain = learning.masked_log_map(fmap, q, k, valid).exp()
    mask = attention.causal_mask(5)
    assert torch.allclose(causal.sum(-1), torch.ones(1, 5), atol=1e-5)
    assert float(causal.masked_select(~mask).abs().max()) < 1e-20          # no weight on future keys
    assert torch.allclose(causal[0, -1], plain[0, -1], atol=1e-6)          # the last row sees every key
    assert not torch.allclose(causal[0, 0], plain[0, 0])                   # the first sees only itself
    samples = [Sample(q=q[None], k=k[None], v=k[None], tokens=[str(i) for i in range(5)],
                      model_attentions=attention.softmax_map(q, k, causal=True)[None], causal=c) for c in (True, False)]
    with pytest.raises(ValueError, match="causal and bidirectional"):
        learning.PaddedBatch.from_samples(samples)
    assert learning.PaddedBatch.from_samples(samples[:1]).causal


def test_heldout_quality_of_a_causal_sample_is_measured_against_causal_softmax():
    torch.manual_seed(1)
    q, k = torch.randn(1, 2, 7, 8), torch.randn(1, 2, 7, 8)
    a = attention.softmax_map(q, k, causal=True)
    sample = Sample(q=q, k=k, v=k, tokens=[str(i) for i in range(7)], model_attentions=a, causal=True)
    fmap = learning.baseline_maps(8, 8)["elu1"]
    quality = learning.heldout_quality([sample], {"elu1": fmap})
    # Row 0 (one key) is in no causal mean (rowwise.rows_in_means).
    by_hand = row_kl_by_hand(a, attention.kernel_map(q, k, fmap, causal=True), causal=True)[..., 1:].mean(-1)
    np.testing.assert_allclose(quality["elu1"]["kl"].numpy(), by_hand.numpy(), rtol=1e-9)
    # Against the bidirectional kernel map the same rows would look worse: the mask matters.
    loose = row_kl_by_hand(a, attention.kernel_map(q, k, fmap), causal=True)[..., 1:].mean(-1)
    assert (loose > by_hand + 1e-3).all()


# --------------------------------------------------------------------------- SmolLM2 through the /learn handler

@pytest.mark.slow
@needs_smollm2
def test_the_learn_handler_trains_a_smollm2_head_against_its_causal_softmax():
    # MiniLM reads a held-out text first: the cache must not hand its sample to SmolLM2.
    assert lv.cached_sample(lv.heldout_texts()[0]).q.shape[:2] == (6, 12)
    *_, final = learn_tab.run_learn(3, "2", 8, 10, 1, 2, 2, "hedgehog", False, None, "en", model=SMOLLM2)
    loss, summary, table, comparison, tradeoff, heatmap, download, view, trained, status = final
    assert view.model == SMOLLM2 and view.causal and (view.layer, view.head) == (3, 2)
    assert view.feature_map.head_dim == 64 and view.feature_map.num_features == 8
    assert {row["name"]: row["features_m"] for row in view.rows}["elu1"] == 64
    assert len(view.losses) == 10 and all(math.isfinite(x) for x in view.losses)
    assert "causal" in summary and SMOLLM2 in summary
    assert trained is None and status is not None                 # one head: the hybrid's maps untouched
    assert learned.load_map(download).info["model"] == f'"{SMOLLM2}"'   # the file names its model

    # The held-out KL is the causal one, recomputed here from the same texts and the map.
    samples = [lv.cached_sample(t, SMOLLM2) for t in lv.heldout_texts()[:2]]
    assert all(s.causal and s.q.shape[:2] == (30, 9) for s in samples)
    rows, loose = [], []
    for s in samples:
        a, q, k = s.model_attentions[3, 2], s.q[3, 2], s.k[3, 2]
        rows.append(row_kl_by_hand(a, attention.kernel_map(q, k, view.feature_map, causal=True), causal=True)[1:])
        loose.append(row_kl_by_hand(a, attention.kernel_map(q, k, view.feature_map), causal=True)[1:])
    expected = float(torch.cat(rows).mean())
    assert float(view.quality["hedgehog"]["kl"][0, 0]) == pytest.approx(expected, rel=1e-6)
    assert float(torch.cat(loose).mean()) > expected              # a bidirectional judge would differ

    # The map is this session's, offered on SmolLM2's layer 3, head 2 ...
    entry = common.trained_entry(None, "hedgehog")
    assert entry.model == SMOLLM2 and (entry.layer, entry.head) == (3, 2)
    smol = views.load_sample("text", text=TEXT, model=SMOLLM2)
    shown = views.maps_view(smol, 3, 2, ["softmax", HEDGEHOG], True, 8, 0)
    assert HEDGEHOG in shown.maps, shown.notices
    # ... and not on MiniLM's: the notice names both models.
    mini = views.load_sample("text", text=TEXT)
    view_mini = views.maps_view(mini, 3, 2, ["softmax", HEDGEHOG], False, 8, 0)
    assert HEDGEHOG not in view_mini.maps
    assert any(SMOLLM2 in n and EMBEDDED_MODEL in n for n in view_mini.notices), view_mini.notices


@needs_smollm2
def test_the_layer_and_head_controls_follow_smollm2():
    layer, head = learn_tab.follow_model(SMOLLM2, 25, "3")
    assert layer["maximum"] == 29 and layer["value"] == 25
    assert [value for _, value in head["choices"]] == [str(h) for h in range(9)] + [learn_tab.ALL_HEADS]
    assert head["choices"][-1][0] == "all 270 heads" and head["value"] == "3"
    _, head_zh = learn_tab.follow_model(SMOLLM2, 2, "11", "zh")
    assert head_zh["choices"][-1][0] == "全部 270 个头" and head_zh["value"] == "3"   # head 11 is not SmolLM2's
    layer, head = learn_tab.follow_model(EMBEDDED_MODEL, 25, learn_tab.ALL_HEADS)
    assert layer["maximum"] == 5 and layer["value"] == 5 and head["value"] == learn_tab.ALL_HEADS
    with pytest.raises(gr.Error, match="head: must lie in 0..8"):
        list(learn_tab.run_learn(3, "9", 8, 10, 1, 2, 2, model=SMOLLM2))


# --------------------------------------------------------------------------- a map is offered on its own model only

def test_a_smollm2_map_is_not_offered_on_minilm_heads_and_the_notice_says_so():
    mini = views.load_sample("text", text=TEXT)
    fmap = Hedgehog(32, 8)        # MiniLM's head_dim: only the model tells the two apart
    common.set_trained("A", "hedgehog", fmap, 2, 7, "trained", model=SMOLLM2)
    view = views.maps_view(mini, 2, 7, ["softmax", HEDGEHOG], False, 8, 0, session="A")
    assert HEDGEHOG not in view.maps
    assert any(f"trained on {SMOLLM2}" in n and EMBEDDED_MODEL in n for n in view.notices), view.notices
    from explorer.text import said_throughout
    zh = said_throughout(views.maps_view(mini, 2, 7, ["softmax", HEDGEHOG], False, 8, 0, session="A").notices, "zh")
    assert any(SMOLLM2 in n and "上训练的" in n for n in zh), zh     # named in full there
    with pytest.raises(ValueError, match=SMOLLM2):
        common.trained_map_for("A", "hedgehog", 32, 2, 7, model=EMBEDDED_MODEL)
    # The same map recorded as MiniLM's is offered there: the model, nothing else, kept it out.
    common.set_trained("B", "hedgehog", fmap, 2, 7, "trained", model=EMBEDDED_MODEL)
    assert HEDGEHOG in views.maps_view(mini, 2, 7, ["softmax", HEDGEHOG], False, 8, 0, session="B").maps


def test_a_minilm_training_records_its_model_and_keeps_its_numbers():
    tiny = dict(num_features=8, steps=5, seed=3, train_count=2, heldout_count=1)
    default = lv.learn_view(1, 4, session="A", **tiny)
    named = lv.learn_view(1, 4, session="B", model=EMBEDDED_MODEL, **tiny)
    blank = lv.learn_view(1, 4, model="", **tiny)
    assert named is default and blank is default               # one model, one cached result
    assert default.model == EMBEDDED_MODEL and not default.causal and default.feature_map.head_dim == 32
    assert common.trained_entry("A", "hedgehog").model == EMBEDDED_MODEL
    assert lv.cached_sample(lv.heldout_texts()[0]) is lv.cached_sample(lv.heldout_texts()[0], EMBEDDED_MODEL)


def test_a_saved_map_of_another_model_is_refused_before_it_is_judged(tmp_path):
    path = learned.save_map(Hedgehog(64, 8), tmp_path / "smol.safetensors", layer=3, head=2, model=SMOLLM2)
    fmap = lv.load_map(path)
    for lang, words in (("en", f"trained on {SMOLLM2}, not on {EMBEDDED_MODEL}"), ("zh", f"是在 {SMOLLM2} 上训练的")):
        with pytest.raises(ValueError) as refused:
            lv.evaluate_map(fmap, 3, 2, heldout_count=1)
        assert words in say_error(refused.value, lang)


# --------------------------------------------------------------------------- refusals and the API

@pytest.fixture
def nothing_loads(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded")
    monkeypatch.setattr(models, "_load", refuse)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_model_names_are_refused_in_one_sentence_before_loading(nothing_loads, lang):
    long_name = "no such model " + "x" * 400
    for bad in (long_name, "../../etc/passwd?", "not/a/hub/id"):
        with pytest.raises(gr.Error) as caught:
            list(learn_tab.run_learn(2, "3", 8, 10, 1, 2, 2, "hedgehog", False, None, lang, model=bad))
        message = caught.value.message
        assert message.startswith("model:" if lang == "en" else "模型："), message
        assert "x" * 81 not in message and "Traceback" not in message
        assert message.count("\n") == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_model_the_server_does_not_allow_is_refused(nothing_loads, monkeypatch, lang):
    monkeypatch.setenv("EXPLORER_ALLOW_MODELS", "none")
    with pytest.raises(gr.Error) as caught:
        list(learn_tab.run_learn(2, "3", 8, 10, 1, 2, 2, "hedgehog", False, None, lang, model="gpt2"))
    assert ("not offered on this server" if lang == "en" else "本服务器不允许") in caught.value.message


@pytest.mark.parametrize("lang, words", [("en", "hybrids run on the embedded"), ("zh", "混合模型只支持内置的")])
def test_hybrids_stay_minilm_only_and_shipped_maps_name_their_layer(nothing_loads, lang, words):
    with pytest.raises(gr.Error, match=words):
        hybrid_panel.run_hybrid("elu1", "chosen layers", [2], heldout_count=1, lang=lang, model=SMOLLM2)
    for kind in ("hedgehog", "luna"):                  # SmolLM2's shipped maps are for layer 3 only
        with pytest.raises(gr.Error, match="layer 3" if lang == "en" else "第 3 层"):
            learn_tab.show_shipped(kind, 1, lang=lang, model=SMOLLM2, layer=5)


def test_the_learn_endpoint_takes_a_model_and_links_carry_it():
    assert inspect.signature(learn_tab.run_learn).parameters["model"].default == ""
    with gr.Blocks() as demo:
        tab = learn_tab.build(gr.Checkbox(False))
    learn = next(d for d in demo.config["dependencies"] if d.get("api_name") == "learn")
    assert tab.model._id in learn["inputs"]
    assert (tab.model, "model", str) in tab.link_keys and tab.model.value == EMBEDDED_MODEL
    values = [choice[1] for choice in tab.model.choices]
    assert values[:2] == [EMBEDDED_MODEL, SMOLLM2]
    link = learn_links.learn_query(2, "3", model=SMOLLM2)
    assert f"model={SMOLLM2}" in link and "tab=learn" in link
    assert "model=" not in learn_links.learn_query(2, "3", model=EMBEDDED_MODEL)
    assert "model=" not in learn_links.learn_query(2, "3")


# --------------------------------------------------------------------------- in a browser: a link carries the model

@pytest.mark.browser
@pytest.mark.slow
@needs_smollm2
def test_a_learn_link_with_smollm2_restores_its_layer_and_heads(chromium, app_url):
    from helpers.page import TIMEOUT_MS, Watched
    context = chromium.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    slider = "#learn-layer input[type=range]"
    try:
        page.goto(app_url + f"?tab=learn&model={SMOLLM2}&llayer=20&lhead=8")
        page.wait_for_function("(s) => document.querySelector(s) && document.querySelector(s).max === '29'",
                               arg=slider)
        assert page.locator(slider).input_value() == "20"
        assert SMOLLM2 in page.locator("#learn-model input").input_value()
        page.wait_for_function("() => [...document.querySelectorAll('textarea, input')].some("
                               "e => e.value.includes('tab=learn') && e.value.includes('model=SmolLM2-135M'))")
        app.check_clean()
        # The embedded model's page narrows the same slider to MiniLM's six layers (a page of
        # its own: leaving the first one aborts its requests in flight, which is no error of it).
        page.close()
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        app = Watched(page)
        page.goto(app_url + "?tab=learn&llayer=20")
        page.wait_for_function("(s) => document.querySelector(s) && document.querySelector(s).max === '5'",
                               arg=slider)
        assert page.locator(slider).input_value() == "5"
        app.check_clean()
    finally:
        context.close()


@needs_smollm2
def test_a_link_to_the_learn_tab_opens_on_the_map_shipped_for_its_model_and_layer():
    shown = learn_tab.show_shipped("hedgehog", 1, model=SMOLLM2, layer=3)
    view = shown[7]
    assert view.model == SMOLLM2 and view.layer == 3 and view.whole_layer and view.kind == "hedgehog"
    assert "hedgehog-smollm2-layer3" in shown[1]
    opened = learn_links.shipped_on_open("hedgehog", 1, model=SMOLLM2, layer=3)
    assert opened[7].model == SMOLLM2 and opened[7].layer == 3
    skipped = learn_links.shipped_on_open("hedgehog", 1, model=SMOLLM2, layer=5)  # nothing ships there: no change
    assert len(skipped) == len(shown) and all(out == gr.skip() for out in skipped)
    assert learn_tab.show_shipped("hedgehog", 1)[7].layer == 2                    # MiniLM's, as before
