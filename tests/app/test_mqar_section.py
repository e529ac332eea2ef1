"""The state tab's recall (MQAR) section through its handlers, as the page and the API call
them: the shipped figure in both languages (``/mqar``), one point trained live on a tiny
setting (``/mqar_train``), a refusal over the price before anything trains, the trained
model's inspection, and every refusal said in Chinese without an English sentence."""

from __future__ import annotations

import base64
import math
from pathlib import Path

import gradio as gr
import numpy as np
import pytest

from explorer.experiments import mqar, mqar_table
from explorer.text import say, say_error
from explorer.ui import mqar_tab
from explorer.views import mqar as views
from conftest import shared_setup
from helpers.words import english_words, figure_texts

ROOT = Path(__file__).resolve().parents[2]
STEPS = 20                      # the slider's least: a live point in a few seconds


def test_the_page_repeats_the_engines_choices_and_bounds():
    assert mqar_tab.MIXERS == mqar.MIXERS
    assert mqar_tab.WIDTHS == views.WIDTHS == mqar_table.WIDTHS
    assert (mqar_tab.STEPS, mqar_tab.DEFAULT_STEPS, mqar_tab.MAX_SEED, mqar_tab.SEQUENCES) == \
        (views.STEPS, views.DEFAULT_STEPS, views.MAX_SEED, views.SEQUENCES)
    assert mqar_tab.LIVE_SECONDS == views.LIVE_SECONDS
    assert mqar_tab.MAX_HEADS == max(mqar_table.WIDTHS) // mqar.ModelShape().head_dim


def _plotted(values) -> np.ndarray:
    """A trace's numbers as the page gets them: a figure said in another language carries its
    arrays as plotly's typed arrays (base64 bytes, a dtype and a shape), as plotly.js reads them."""
    if isinstance(values, dict) and "bdata" in values:
        shape = [int(n) for n in str(values.get("shape", "-1")).split(",")]
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"])).reshape(shape)
    return np.asarray(values)


def _no_english(texts) -> None:
    english = [(t, english_words(t)) for t in texts if english_words(t)]
    assert not english, english


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_endpoint_returns_the_shipped_figure(lang):
    fig, status, inspection, session = mqar_tab.show_mqar(False, lang)
    table = mqar_table.shipped()
    assert inspection is None and session.points == [] and session.last is None
    drawn = {t.name: t for t in fig.data}
    for s in mqar_table.summarise(table):
        trace = drawn[say(f"mqar.mixer.{s.mixer}", lang)]
        i = list(trace.x).index(s.state_bytes)
        assert trace.y[i] == pytest.approx(s.mean)
    assert fig.layout.title.text.startswith(say("mqar.title", lang).split(":")[0][:10])
    assert str(len(table["points"])) in status
    if lang == "zh":
        _no_english(figure_texts(fig) + [t.name for t in fig.data] + [status])
    # In presentation mode the same figure, in the projector's sizes.
    big = mqar_tab.show_mqar(True, lang)[0]
    assert big.layout.font.size > fig.layout.font.size


@pytest.fixture(scope="module")
def trained():
    """One live point through the page's handler, as the train button sends it (Chinese)."""
    with shared_setup("mqar live point"):
        _, _, _, session = mqar_tab.show_mqar(False, "zh")
        return mqar_tab.train_mqar("gla", 32, STEPS, 3, False, "zh", session, 5)


def test_a_live_point_is_trained_and_joins_the_figure(trained):
    fig, status, inspection, session, head, layer = trained
    point = session.points[-1]
    assert (point["mixer"], point["width"], point["steps"], point["seed"]) == ("gla", 32, STEPS, 3)
    assert isinstance(point["accuracy"], float) and 0.0 <= point["accuracy"] <= 1.0
    task = mqar_table.settings(mqar_table.shipped())[0]
    assert point["state_bytes"] == mqar.state_bytes(mqar.ModelShape("gla", 32), task) == 1792
    live = [t for t in fig.data if t.name == say("mqar.live_name", "zh", mixer=say("mqar.mixer.gla", "zh"),
                                                  width=32, steps=STEPS, seed=3)]
    assert len(live) == 1 and list(live[0].x) == [point["state_bytes"]] and list(live[0].y) == [point["accuracy"]]
    assert f"{point['accuracy']:.3f}" in status and head == "best"
    _no_english([status] + figure_texts(fig) + figure_texts(inspection) + [t.name for t in fig.data])


def test_the_live_models_inspection_marks_each_asked_pair(trained):
    _, _, inspection, session, _, shown_layer = trained
    found, layer, head = views.inspect_live(session, 5, 2, "mean")
    assert (layer, head, found.seed) == (1, None, 5)
    np.testing.assert_allclose(found.rows(1).sum(1), 1.0, atol=1e-5)     # GLA with its normaliser: rows of 1
    # After training: the layer and head that read the asked pairs most.
    weights = [found.pair_weight(i) for i in range(2)]
    best_layer = int(np.argmax([w.max() for w in weights]))
    best = int(np.argmax(weights[best_layer]))
    assert shown_layer == best_layer + 1 and views.inspect_live(session, 5, "best", "best")[1:] == (best_layer, best)
    assert views.inspect_live(session, 5, 2, "best")[2] == found.reading_head(1)
    heat = inspection.data[0]
    np.testing.assert_allclose(_plotted(heat.z), found.maps[best_layer][best])
    np.testing.assert_allclose(_plotted(heat.z).sum(1), 1.0, atol=1e-5)
    boxes = [(s.x0, s.y0) for s in inspection.layout.shapes]
    assert boxes == [(p - 0.5, i - 0.5) for i, p in enumerate(found.pair_positions)]
    assert all(found.tokens[p] == k for p, k in zip(found.pair_positions, found.asked))
    # Another layer and head redraw from the kept model, nothing trained again.
    other = mqar_tab.inspect_mqar(session, 5, 1, "3", False, "en")
    np.testing.assert_allclose(np.asarray(other.data[0].z), found.maps[0][2])
    # A language switch redraws the figure, the live point and the inspection in English.
    fig, status, again, kept = mqar_tab.show_mqar(False, "en", session, 5, 2, "mean")
    assert kept is session and again is not None and any(t.name.startswith("GLA, d=32, now") for t in fig.data)


def test_a_language_switch_says_the_section_again_without_reading_the_model_again(trained, monkeypatch):
    from explorer.experiments import mqar_inspect
    fig, status, inspection, session, _, layer = trained
    monkeypatch.setattr(mqar_inspect, "inspect", lambda *a, **k: pytest.fail("the model read the sequence again"))
    en_fig, en_status, en_inspection, kept = mqar_tab.show_mqar(False, "en", session, 5, layer, "best")
    assert kept is session and en_status != status and english_words(en_status)
    np.testing.assert_allclose(np.asarray(en_inspection.data[0].z), _plotted(inspection.data[0].z))
    assert en_inspection.layout.title.text != inspection.layout.title.text
    assert [t.name for t in en_fig.data] != [t.name for t in fig.data]


def test_a_run_over_its_price_is_refused_before_it_trains(monkeypatch):
    started = []
    monkeypatch.setattr(mqar, "RecallModel", lambda *a, **k: started.append(a))
    estimate = views.live_price("softmax", 64, 500, 0)
    assert estimate.seconds > views.LIVE_SECONDS
    with pytest.raises(gr.Error) as caught:
        mqar_tab.train_mqar("softmax", 64, 500, 0, False, "zh", None)
    assert started == [] and str(math.floor(estimate.seconds)) in caught.value.message
    assert say("mqar.lower_live", "zh") in caught.value.message and "批" not in caught.value.message
    _no_english([caught.value.message, str(caught.value.title)])
    # The same run with fewer steps is within the price.
    assert views.live_price("softmax", 64, 250, 0).seconds <= views.LIVE_SECONDS


REFUSED = [
    lambda: mqar_tab.train_mqar("nosuch", 32, STEPS, 0, False, "zh"),
    lambda: mqar_tab.train_mqar("gla", 48, STEPS, 0, False, "zh"),
    lambda: mqar_tab.train_mqar("gla", 32, 10, 0, False, "zh"),
    lambda: mqar_tab.train_mqar("gla", 32, 12.5, 0, False, "zh"),
    lambda: mqar_tab.train_mqar("gla", 32, STEPS, -1, False, "zh"),
    lambda: views.inspect_live(views.RecallSession(), 0, 2, "mean"),
]


@pytest.mark.parametrize("call", REFUSED, ids=["mixer", "width", "steps", "steps-whole", "seed", "untrained"])
def test_every_refusal_speaks_chinese(call):
    try:
        call()
    except gr.Error as exc:
        shown = [str(exc.title or ""), str(exc.message)]
    except ValueError as exc:                   # the engine's refusal, said where it is shown
        shown = [say_error(exc, "zh")]
    else:
        pytest.fail("not refused")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in shown[-1]), shown
    _no_english([t.replace("nosuch", "") for t in shown])


def test_a_head_the_model_lacks_is_refused_in_chinese(trained):
    session = trained[3]
    with pytest.raises(gr.Error) as caught:
        mqar_tab.inspect_mqar(session, 0, 2, "12", False, "zh")
    assert "8" in caught.value.message
    _no_english([caught.value.message])


def test_both_endpoints_are_in_the_api_docs():
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "`/mqar(" in api and "`/mqar_train(" in api
    assert "state tab" in (ROOT / "docs" / "mqar.md").read_text(encoding="utf-8")
