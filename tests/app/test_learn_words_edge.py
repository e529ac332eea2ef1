"""The learn tab and the Linearize section compute in no language: a view is computed once and
serves both, and the page says it in its own words at the edge (no English left in Chinese)."""

from __future__ import annotations

import json

import gradio as gr
import numpy as np
import pandas as pd
import pytest

from explorer import catalog
from explorer.figures.style import said_figure
from explorer.maps.learned import Hedgehog
from explorer.ui import common, hybrid_panel, learn_tab, linearize_tab
from explorer.views import hybrid as hv
from explorer.views import learn as lv
from explorer.views import linearize as lin
from helpers.words import english_words, figure_texts

NAMES = ("hedgehog", "elu1", "favor_plus", "taylor2")


def _texts(value) -> list[str]:
    """Every word an output shows: a figure's texts, a table's headers and cells, text."""
    if value is None or isinstance(value, (int, float)):
        return []
    if hasattr(value, "layout"):
        return figure_texts(value)
    if isinstance(value, pd.DataFrame):
        return [str(c) for c in value.columns] + [str(x) for x in value.to_numpy().ravel() if isinstance(x, str)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _texts(item)]
    return [str(value)] if isinstance(value, str) else []


def _english_left(outputs) -> list[str]:
    return [word for text in _texts(outputs) for word in english_words(text)]


def _result(seeds=(0, 1, 2)) -> lv.LearnResult:
    """A result shaped like an all-heads run with three seeds (numbers only: no model read)."""
    g = np.random.default_rng(1)
    quality = {n: {"kl": g.uniform(0.01, 1, (6, 12)), "entropy": g.uniform(1, 3, (6, 12)),
                   "monotonicity": g.uniform(0, 1, (6, 12))} for n in NAMES}
    quality["softmax"] = {"entropy": g.uniform(1, 2, (6, 12))}
    rows = [{"name": n, "features_m": 64, "kl": float(quality[n]["kl"].mean()), "kl_sd": 0.01 * (i + 1),
             "kl_seeds": [float(quality[n]["kl"].mean()) + 0.01 * (i + 1) * s for s in (-1, 0, 1)],
             "kl_median": float(np.median(quality[n]["kl"])), "kl_median_sd": 0.02, "entropy": 2.0,
             "monotonicity": 0.5} for i, n in enumerate(NAMES)]
    ratio = quality["elu1"]["kl"] / quality["hedgehog"]["kl"]
    losses = [3.0, 2.5, 2.2]
    return lv.LearnResult(None, None, 64, 3, 0, losses, 1.0, 40, 16, quality, rows, 1.5, ratio,
                          Hedgehog(32, 64, heads=(6, 12)), seeds=seeds, losses_by_seed=[losses, [3.1, 2.4, 2.0], losses],
                          own_texts=True, same_every_seed=("hedgehog",))


def _hybrid() -> hv.HybridResult:
    path = [{"k": 0, "kept": (), "linear": (0, 1, 2, 3, 4, 5), "cosine_mean": 0.4, "cosine_min": 0.3},
            {"k": 1, "kept": (2,), "linear": (0, 1, 3, 4, 5), "cosine_mean": 0.8, "cosine_min": 0.7}]
    return hv.HybridResult("hedgehog", catalog.hybrid_map_label("hedgehog"), "greedy", (0, 1, 3, 4, 5), (2,), 0.8,
                           0.7, [0.1, 0.2, 0.05, 0.3, 0.2, 0.1], path, 6, 2, 1.5)


def test_the_learn_tabs_outputs_are_built_once_and_said_in_chinese_without_english():
    view, hybrid = _result(), _hybrid()
    trained = {"hedgehog": view.feature_map}
    built = (*learn_tab.render_learn(view), *hybrid_panel.render_hybrid(hybrid), learn_tab.learn_summary(view),
             lv.comparison_table(view), hv.hybrid_table(hybrid), hybrid_panel.hybrid_summary(hybrid),
             learn_tab.map_status(trained, "x.safetensors"), *learn_tab.empty_tables())
    english = common.said_outputs(built, "en")
    chinese = common.said_outputs(built, "zh")
    assert english is built                                  # English is what was built, as it was
    assert not _english_left(chinese), _english_left(chinese)
    assert _english_left(english)                            # the check can fail: English has its words
    # Said, the numbers are the ones built: only the words differ.
    for en, zh in zip(built[:6], chinese[:6]):
        data_en, data_zh = json.loads(en.to_json())["data"], json.loads(zh.to_json())["data"]
        assert [trace.get("y") for trace in data_en] == [trace.get("y") for trace in data_zh]
        assert [trace.get("z") for trace in data_en] == [trace.get("z") for trace in data_zh]
    table_en, table_zh = built[7], chinese[7]
    assert table_en.shape == table_zh.shape and list(table_en.columns) != list(table_zh.columns)
    assert np.allclose(table_en.iloc[:, 2].astype(float), table_zh.iloc[:, 2].astype(float))
    # Said twice over (a language switch back and forth) gives the same words.
    again = common.said_outputs(built, "zh")
    assert _texts(again) == _texts(chinese)


def test_a_language_switch_on_a_drawn_learn_tab_says_the_kept_views_again(monkeypatch):
    """The tab's restyle (the language switch and presentation mode) draws the views it keeps
    and says them: nothing is trained, judged or run through a model again."""
    with gr.Blocks() as demo:
        learn_tab.build(gr.Checkbox(False), gr.Radio(["en", "zh"], value="en"))
    restyle = next(block.fn for block in demo.fns.values() if getattr(block.fn, "__name__", "") == "restyle")

    def measured(*args, **kwargs):
        raise AssertionError("a language switch measured again")
    for name in ("learn_view", "evaluate_map", "pretrained_result"):
        monkeypatch.setattr(lv, name, measured)
    monkeypatch.setattr(hv, "hybrid_view", measured)
    view, hybrid = _result(), _hybrid()
    trained = {"hedgehog": view.feature_map}
    chinese = restyle(False, view, hybrid, "zh", trained)
    english = restyle(False, view, hybrid, "en", trained)
    assert len(chinese) == len(english) == 11
    assert not _english_left(chinese), _english_left(chinese)
    assert _english_left(english)
    def kinds(outputs):
        return [str if isinstance(out, str) else type(out) for out in outputs]
    assert kinds(chinese) == kinds(english)


def test_a_chinese_learn_figure_is_the_english_one_said():
    """The figure a Chinese page shows is the language-free one said: built the same whatever
    the page's language, and fitted again to the Chinese words."""
    view = _result()
    first, second = learn_tab.render_learn(view), learn_tab.render_learn(view)
    for a, b in zip(first, second):
        assert a.to_plotly_json() == b.to_plotly_json()
    zh = said_figure(first[1], "zh")
    assert "留出" in zh.layout.title.text and not english_words(zh.layout.title.text)


@pytest.fixture
def judged(monkeypatch):
    """The section's engine counted: the judge's forwards are a fake that counts its calls."""
    calls = []

    def evaluate(texts, layers, **kwargs):
        calls.append(tuple(layers))
        return {"original_perplexity": 20.0, "perplexity": 25.0 + len(layers), "top1_agreement": 0.75, "kl": 0.25,
                "tokens": 254}
    monkeypatch.setattr(lin, "evaluate", evaluate)
    monkeypatch.setattr(linearize_tab, "_needs", lambda: None)
    lin._judged.clear()
    yield calls
    lin._judged.clear()


def test_the_linearize_view_is_judged_once_for_both_languages(judged):
    table_en, summary_en, view_en = linearize_tab.show_linearize("hedgehog:64", 6, "en")
    table_zh, summary_zh, view_zh = linearize_tab.show_linearize("hedgehog:64", 6, "zh")
    assert len(judged) == 1                                  # the second language read the kept view
    assert view_en == view_zh and not hasattr(view_en, "lang")
    assert table_en.values[:, 1:].tolist() == table_zh.values[:, 1:].tolist()
    assert not _english_left([table_zh, summary_zh]) and _english_left([table_en, summary_en])
    # A change of language says the kept view again; nothing is judged.
    relabelled, said_summary, _ = linearize_tab.relabel(view_en, "x", "zh")
    assert len(judged) == 1 and said_summary == summary_zh
    assert relabelled.values.tolist() == table_zh.values.tolist() and list(relabelled.columns) == list(table_zh.columns)
    assert not _english_left([relabelled, linearize_tab.relabel(None, "x", "zh")[:2]])
