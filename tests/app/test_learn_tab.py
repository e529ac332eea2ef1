"""Learned maps & hybrids tab: the glue returns the engine's numbers, the figures draw
exactly those, and the tab's handlers give figures or a clear gr.Error.

Settings are tiny (a few steps, one head, two texts) so that the whole file runs in well
under a minute on two shared cores; the texts are read through the model once and cached.
"""

from __future__ import annotations

import json
import socket

import gradio as gr
import numpy as np
import pytest

from explorer.figures import learn as fl
from explorer.views import hybrid as hv
from explorer.views import learn as lv
from explorer.maps import learned
from explorer.maps.learned import Hedgehog
from explorer.ui import hybrid_panel, learn_tab

TINY = dict(num_features=8, steps=10, seed=1, train_count=2, heldout_count=2)


@pytest.fixture(scope="module")
def one_head():
    return lv.learn_view(1, 4, **TINY)


def axis_titles(fig) -> list[str]:
    layout = fig.to_plotly_json()["layout"]
    return [v["title"]["text"] for k, v in layout.items() if k.startswith(("xaxis", "yaxis")) and "title" in v]


# --------------------------------------------------------------------------- glue

def test_embedded_shape_and_text_files():
    assert lv.model_shape() == lv.EMBEDDED_SHAPE
    assert len(lv.training_texts()) == 40 and len(lv.heldout_texts()) == 16
    assert not set(lv.training_texts()) & set(lv.heldout_texts())


def test_learn_view_one_head(one_head):
    r = one_head
    assert (r.layer, r.head, r.train_count, r.heldout_count) == (1, 4, 2, 2)
    assert len(r.losses) == 10 and all(np.isfinite(r.losses))
    assert [row["name"] for row in r.rows] == ["hedgehog", "elu1", "favor_plus", "taylor2"]
    dims = {row["name"]: row["features_m"] for row in r.rows}
    assert dims == {"hedgehog": 8, "elu1": 32, "favor_plus": 8, "taylor2": 1 + 32 + 32 * 33 // 2}
    for row in r.rows:
        assert row["kl"] >= 0 and 0 < row["entropy"] and -1 <= row["monotonicity"] <= 1
        assert row["kl"] == pytest.approx(float(r.quality[row["name"]]["kl"].mean()))
    assert r.kl_ratio.shape == (1, 1) and not r.all_heads
    assert lv.learn_view(1, 4, **TINY) is r          # cached: same settings, no new training
    table = lv.comparison_table(r)
    assert list(table["map"])[-1] == "softmax (reference)" and len(table) == 5


def test_learn_stream_shows_the_loss_while_training():
    items = list(lv.learn_stream(0, 0, num_features=8, steps=40, train_count=2, heldout_count=2, poll_s=0.02))
    live, result = [i for i in items if isinstance(i, lv.LiveTraining)], items[-1]
    assert isinstance(result, lv.LearnResult) and live
    seen = [(s, x) for i in live for s, x in zip(i.steps, i.losses)]
    assert seen
    for step, loss in seen:   # the live preview is the run's own loss at that step (3 decimals)
        assert loss == pytest.approx(result.losses[step - 1], abs=6e-4)


@pytest.mark.parametrize("kwargs, word", [(dict(layer=6, head=0), "layer"), (dict(layer=0, head=12), "head"),
                                           (dict(layer=0, head=0, steps=0), "steps"),
                                           (dict(layer=0, head=0, train_count=41), "train_count")])
def test_learn_view_rejects_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        lv.learn_view(**{**TINY, **kwargs})


def test_saved_map_loads_and_gives_the_same_heldout_numbers(one_head, tmp_path):
    path = lv.save_map(one_head, tmp_path)
    back = lv.load_map(path)
    again = lv.evaluate_map(back, 1, 4, heldout_count=2, origin=path.name)
    assert again.origin == path.name and again.losses == []
    np.testing.assert_allclose(again.quality["hedgehog"]["kl"], one_head.quality["hedgehog"]["kl"], rtol=1e-6)
    (tmp_path / "junk.pt").write_bytes(b"not a map")
    with pytest.raises(ValueError, match="file"):
        lv.load_map(tmp_path / "junk.pt")


def test_hybrid_chosen_layers_and_hedgehog_needs_all_heads():
    r = hv.hybrid_view("elu1", [3], heldout_count=1)
    assert r.linear_layers == (3,) and r.kept_softmax == (0, 1, 2, 4, 5) and len(r.path) == 1
    assert r.drift[:3] == [0.0, 0.0, 0.0] and all(d > 0 for d in r.drift[3:])
    assert -1 <= r.cosine_min <= r.cosine_mean < 1
    with pytest.raises(ValueError, match="no trained Hedgehog"):
        hv.hybrid_view("hedgehog", [3], heldout_count=1)
    with pytest.raises(ValueError, match="every head"):
        hv.hybrid_view("hedgehog", [3], trained_map=Hedgehog(32, 8, heads=(1, 1)), heldout_count=1)
    with pytest.raises(ValueError, match="layer 7"):
        hv.hybrid_view("elu1", [7], heldout_count=1)
    # an (untrained) all-heads map has the right shape: each layer gets its 12 heads' maps
    h = hv.hybrid_view("hedgehog", [5], trained_map=Hedgehog(32, 8, heads=(6, 12)), heldout_count=1)
    assert h.linear_layers == (5,) and h.map_label == "Hedgehog (trained)"
    from explorer.sources.text import get_model
    # the shared model is used (other threads never see the swap) and is left without the
    # swap's hooks (they are the only ones registered with kwargs)
    assert all(not layer.attention.self._forward_hooks_with_kwargs for layer in get_model().model.encoder.layer)


def test_greedy_path_starts_all_linear():
    r = hv.hybrid_view("elu1", "greedy", budget=1, heldout_count=1)
    assert [p["k"] for p in r.path] == [0, 1]
    assert r.path[0]["linear"] == (0, 1, 2, 3, 4, 5) and len(r.kept_softmax) == 1
    assert r.cosine_mean == r.path[-1]["cosine_mean"]
    assert list(hv.hybrid_table(r)["softmax layers k"]) == [0, 1]


# --------------------------------------------------------------------------- figures

def fake_all_heads() -> lv.LearnResult:
    """A result shaped like an all-heads run, without the model: figures only draw numbers."""
    g = np.random.default_rng(0)
    quality = {name: {"kl": g.uniform(0.01, 1, (6, 12)), "entropy": g.uniform(1, 3, (6, 12)),
                      "monotonicity": g.uniform(0, 1, (6, 12))} for name in ("hedgehog", "elu1", "favor_plus", "taylor2")}
    quality["softmax"] = {"entropy": g.uniform(1, 2, (6, 12))}
    rows = [{"map": n, "name": n, "features_m": 64, "kl": float(quality[n]["kl"].mean()),
             "entropy": float(quality[n]["entropy"].mean()), "monotonicity": float(quality[n]["monotonicity"].mean())}
            for n in ("hedgehog", "elu1", "favor_plus", "taylor2")]
    ratio = quality["elu1"]["kl"] / quality["hedgehog"]["kl"]
    return lv.LearnResult(None, None, 64, 150, 0, [3.0, 2.5, 2.2], 1.0, 40, 16, quality, rows,
                          float(quality["softmax"]["entropy"].mean()), ratio, Hedgehog(32, 64, heads=(6, 12)))


def test_loss_curve_draws_the_losses(one_head):
    fig = fl.loss_curve(range(1, 11), one_head.losses, total_steps=10)
    assert list(fig.data[0].y) == one_head.losses and list(fig.data[0].x) == list(range(1, 11))
    assert axis_titles(fig) == ["training step (Adam)", "row cross-entropy (nats)"]
    big = fl.loss_curve([1], [1.0], style=True)
    assert big.layout.font.size > fig.layout.font.size and big.data[0].line.width > fig.data[0].line.width


def test_heldout_comparison_bars_and_boxes(one_head):
    bars = fl.heldout_comparison(one_head.quality, one_head.rows, one_head.softmax_entropy)
    kl_bars = [t for t in bars.data if t.xaxis == "x"]
    assert [t.y[0] for t in kl_bars] == [r["kl"] for r in one_head.rows]
    assert set(axis_titles(bars)) >= {"held-out KL(A‖Â) (nats)", "row entropy (nats)", "Spearman ρ(logit, weight)",
                                      "feature map"}
    line = [s for s in bars.layout.shapes if s.type == "line"][0]
    assert line.y0 == line.y1 == one_head.softmax_entropy
    fake = fake_all_heads()
    boxes = fl.heldout_comparison(fake.quality, fake.rows, fake.softmax_entropy)
    assert all(t.type == "box" for t in boxes.data) and len(boxes.data) == 12
    np.testing.assert_array_equal(boxes.data[0].y, fake.quality["hedgehog"]["kl"].ravel())


def test_kl_ratio_heatmap_and_hybrid_figures():
    fake = fake_all_heads()
    heat = fl.kl_ratio_heatmap(fake.kl_ratio)
    np.testing.assert_array_equal(np.asarray(heat.data[0].z), fake.kl_ratio)
    assert axis_titles(heat) == ["head", "layer"] and "KL" in heat.data[0].colorbar.title.text
    path = [{"k": 0, "kept": (), "linear": (0, 1, 2, 3, 4, 5), "cosine_mean": 0.4, "cosine_min": 0.3},
            {"k": 1, "kept": (0,), "linear": (1, 2, 3, 4, 5), "cosine_mean": 0.8, "cosine_min": 0.75}]
    cos = fl.hybrid_cosine(path, 6, "elu1")
    assert list(cos.data[0].y) == [0.4, 0.8] and list(cos.data[0].error_y.arrayminus) == pytest.approx([0.1, 0.05])
    assert "softmax layers kept" in axis_titles(cos)[0] and "cosine" in axis_titles(cos)[1]
    drift = [0.0, 0.3, 0.5, 0.2, 0.1, 0.4]
    bars = fl.hybrid_drift(drift, (1, 2, 3, 4, 5), "elu1")
    drawn = {x: y for t in bars.data for x, y in zip(t.x, t.y)}
    assert drawn == dict(enumerate(drift))
    assert axis_titles(bars) == ["layer", "attention drift<br>(mean row total variation, 0–1)"]


# --------------------------------------------------------------------------- the tab

def test_tab_builds_and_handlers_answer(one_head):
    with gr.Blocks() as demo:
        presentation = gr.Checkbox(False)
        tab = learn_tab.build(presentation)
    names = {dep.get("api_name") for dep in demo.config["dependencies"]}
    assert {"learn", "hybrid"} <= names
    assert tab.hybrid_map.value == "elu1"

    with pytest.raises(gr.Error, match="layer"):
        list(learn_tab.run_learn(9, "0", 8, 10, 1, 2, 2))
    with pytest.raises(gr.Error, match="Hedgehog"):
        hybrid_panel.run_hybrid("hedgehog", "chosen layers", [2], trained=None)
    with pytest.raises(gr.Error, match="at least one layer"):
        hybrid_panel.run_hybrid("elu1", "chosen layers", [], heldout_count=1)

    # settings already trained by the fixture: the generator finishes at once from the cache
    *_, final = learn_tab.run_learn(1, "4", 8, 10, 1, 2, 2)
    loss, summary, table, comparison, tradeoff, heatmap, download, view, trained, status = final
    assert view is one_head and "held-out texts only" in summary and len(table) == 5
    assert list(loss.data[0].y) == one_head.losses and trained is None
    assert heatmap["value"] is None and heatmap["visible"] is False          # one head: no per-head ratio
    assert [d.x[0] for d in tradeoff.data] == [r["features_m"] for r in one_head.rows]
    assert download.endswith(".safetensors") and learned.load_map(download).num_features == 8

    # a saved map loads back through the upload handler and is judged on the head it names
    loaded = learn_tab.load_trained(download, 3, "0", 2)
    assert "Loaded Hedgehog from" in loaded[1] and loaded[7].origin.endswith(".safetensors") and loaded[8] is None
    assert (loaded[7].layer, loaded[7].head) == (1, 4)
    with pytest.raises(gr.Error, match="file"):
        learn_tab.load_trained(__file__, 1, "4", 2)

    cosine, drift, htable, hsummary, hview = hybrid_panel.run_hybrid("elu1", "chosen layers", [3], heldout_count=1)
    assert list(drift.data[0].x) + list(drift.data[1].x) and "cosine" in hsummary and len(htable) == 1


def test_the_shipped_map_shows_with_its_per_head_ratio():
    out = learn_tab.show_shipped("luna", 1)
    heatmap, view = out[5], out[7]
    assert view.whole_layer and view.kind == "luna" and view.kl_ratio.shape == (1, 12)
    assert heatmap["visible"] and list(heatmap["value"].data[0].y) == [2]   # the row is layer 2, not 0
    assert "LUNA" in out[1] and "layer 2, all 12 heads" in out[1]
    with pytest.raises(gr.Error, match="kind"):
        learn_tab.show_shipped("performer", 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_endpoints_through_gradio_client(one_head):
    from gradio_client import Client
    with gr.Blocks() as demo:
        learn_tab.build(gr.Checkbox(False))
    demo.queue().launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        loss, summary, table, comparison, tradeoff, heatmap, download, status = client.predict(
            1, "4", 8, 10, 1, 2, 2, "hedgehog", False, "en", api_name="/learn")
        assert json.loads(loss["plot"])["data"][0]["y"] == pytest.approx(one_head.losses)
        assert "held-out" in summary and download.endswith(".safetensors")
        cosine, drift, htable, hsummary = client.predict("elu1", "chosen layers", [3], 0, 64, 1, 1, False, "en",
                                                         api_name="/hybrid")
        assert json.loads(cosine["plot"])["data"][0]["y"] and "cosine" in hsummary
        from gradio_client.exceptions import AppError
        with pytest.raises(AppError, match="Hedgehog"):
            client.predict("hedgehog", "chosen layers", [3], 0, 64, 1, 2, False, "en", api_name="/hybrid")
    finally:
        demo.close()


def test_stop_button_ends_training_without_keeping_it():
    run = learn_tab.run_learn(0, "1", 8, 1000, 1, 2, 1)
    first = next(run)                       # training has started (texts are cached)
    assert first[1].startswith("⏳")
    learn_tab.stop_learn()
    *_, last = run
    assert "stopped" in last[1]
    assert not [k for k in lv._trained if k[:5] == ("hedgehog", 0, 1, 8, 1000)]


# --------------------------------------------------------------------------- in a browser, in Chinese

LEARN_WORDS_EN = ("Closest to softmax", "held-out", "Training loss", "training step", "feature map",
                  "softmax (reference)", "luna_trained", "hedgehog_trained", "Learned map", "Train",
                  "Held-out", "Cost against error", "all 72 heads")


@pytest.mark.browser
@pytest.mark.slow
def test_learn_tab_in_chinese_at_1600x900(chromium, app_url):
    """LUNA trained from a Chinese page: labels, summary, table and figure text in Chinese."""
    from explorer.ui import i18n
    from helpers.page import ARTIFACTS, TIMEOUT_MS, Watched
    context = chromium.new_context(viewport={"width": 1600, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    try:
        page.goto(app_url + "?tab=learn&lang=zh&lkind=luna&steps=20&llayer=2&lhead=3")
        page.wait_for_function("(text) => document.querySelector('#learn-train') && "
                               "document.querySelector('#learn-train').innerText.includes(text)",
                               arg=i18n.ZH["learn_train"])
        for key in ("learn_kind", "learn_shipped", "learn_part1", "learn_help"):
            page.wait_for_function("([t]) => document.querySelector('#tab-learn').innerText.includes(t)",
                                   arg=[i18n.ZH[key].lstrip("# ").split("·")[-1].strip()])
        assert page.locator("#learn-kind input[value=luna]").is_checked()
        page.get_by_role("button", name=i18n.ZH["learn_texts"]).click()
        page.get_by_label(f"number input for {i18n.ZH['learn_train_count']}").fill("6")
        page.get_by_label(f"number input for {i18n.ZH['learn_heldout_count']}").fill("3")
        page.click("#learn-train")
        page.wait_for_function("() => document.querySelector('#learn-summary').innerText.includes('只在')")
        page.wait_for_selector("#learn-tradeoff .js-plotly-plot .scatterlayer .trace")
        page.wait_for_selector("#learn-table table")
        page.wait_for_timeout(800)
        summary = page.inner_text("#learn-summary")
        assert "LUNA" in summary and "20 步" in summary and "6 篇训练文本" in summary and "3 篇留出文本" in summary
        table = page.inner_text("#learn-table")
        assert "LUNA（已训练）" in table and "Hedgehog（已训练）" in table and "softmax（参照）" in table
        figures = page.evaluate("""() => [...document.querySelectorAll('#tab-learn .js-plotly-plot')]
            .map(g => JSON.stringify([g.layout.title, Object.entries(g.layout).filter(([k]) => /axis/.test(k))
            .map(([, v]) => v.title), (g.layout.annotations || []).map(a => a.text), g.data.map(d => d.name)]))
            .join(' ')""")
        assert "训练损失" in figures and "留出" in figures and "代价与误差" in figures
        text = page.inner_text("#tab-learn") + figures
        left = [word for word in LEARN_WORDS_EN if word in text]
        assert not left, left
        # The same page, unchanged, fits the window's width: nothing overflows sideways.
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "learn-zh-1600x900.png"), full_page=True)
        app.check_clean()
    finally:
        context.close()
