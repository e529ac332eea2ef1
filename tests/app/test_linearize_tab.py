"""The Linearize tab: bad input is refused before the model is read, the work is priced first,
the numbers follow k, and /generate streams the two continuations with the original's memory
growing and the all-linear model's flat."""

from __future__ import annotations

import gradio as gr
import pytest

from explorer.measure import cost
from explorer.text import say
from explorer.ui import linearize_tab
from explorer.views import linearize as views

# The tests marked slow read SmolLM2 and judge it on two held-out passages or generate twice: 5-30 s each.


def _no_model(*_, **__):
    raise AssertionError("the model was read before the input was checked")


@pytest.mark.parametrize("set_id, keep, words", [
    ("bogus:0", 6, "Feature maps: choose one of"),
    ("hedgehog:0", 31, "k must be a whole number from 0 to 30"),
    ("hedgehog:0", -1, "k must be a whole number"),
    ("hedgehog:0", 2.5, "k must be a whole number"),
    ("hedgehog:0", "6", "k must be a whole number"),
])
def test_the_judge_refuses_bad_input_before_reading_the_model(monkeypatch, set_id, keep, words):
    monkeypatch.setattr(views, "evaluate", _no_model)
    with pytest.raises(gr.Error, match=words):
        linearize_tab.run_linearize(set_id, keep, "en")


@pytest.mark.parametrize("prompt, new_tokens, words", [
    ("", 8, "Write a prompt first"),
    ("   ", 8, "Write a prompt first"),
    ("a" * 201, 8, "201 characters; at most 200"),
    ("Once", 65, "from 1 to 64"),
    ("Once", 0, "from 1 to 64"),
])
def test_generate_refuses_bad_input_before_reading_the_model(monkeypatch, prompt, new_tokens, words):
    monkeypatch.setattr(views, "generate", _no_model)
    with pytest.raises(gr.Error, match=words):
        list(linearize_tab.run_generate(prompt, new_tokens, "hedgehog:0", 6, False, "en"))


def test_refusals_speak_chinese(monkeypatch):
    monkeypatch.setattr(views, "evaluate", _no_model)
    with pytest.raises(gr.Error, match="k 必须是 0 到 30 之间的整数"):
        linearize_tab.run_linearize("hedgehog:0", 99, "zh")


def test_both_requests_are_priced_before_any_work(monkeypatch):
    monkeypatch.setattr(views, "evaluate", _no_model)
    monkeypatch.setattr(views, "generate", _no_model)
    monkeypatch.setattr(cost, "LIMIT_SECONDS", 0.001)
    with pytest.raises(gr.Error, match="judging 4 forwards of SmolLM2"):
        linearize_tab.run_linearize("hedgehog:0", 6, "en")
    with pytest.raises(gr.Error, match="generating 8 tokens twice"):
        list(linearize_tab.run_generate("Once", 8, "hedgehog:0", 6, False, "en"))


def test_the_choices_are_the_shipped_sets_and_elu1_each_named_in_both_languages():
    assert views.sets()[-1] == "elu1:0" and "hedgehog:0" in views.sets()
    for set_id in views.sets():
        for lang in ("en", "zh"):
            assert say(views.set_key(set_id), lang) != views.set_key(set_id)
    assert views.linear_layers(0) == list(range(30)) and views.linear_layers(30) == []
    assert len(views.linear_layers(6)) == 24


def test_the_tab_builds_with_both_endpoints():
    with gr.Blocks() as demo:
        lang = gr.Radio(["en", "zh"], value="en")
        linearize_tab.build(gr.Checkbox(False), lang)
    names = {fn.api_name for fn in demo.fns.values()}
    assert {"linearize", "generate"} <= names


@pytest.mark.slow
def test_the_numbers_change_with_k():
    rows = {}
    for keep in (0, 6, 30):
        table, summary = linearize_tab.run_linearize("hedgehog:64", keep, "en")
        rows[keep] = table.values.tolist()
    original = rows[0][0][2]
    assert rows[0][1][2] != rows[6][1][2]                 # perplexity moves with k
    assert rows[30][1][2] == pytest.approx(original, rel=1e-6) and rows[30][1][4] == pytest.approx(0, abs=1e-6)
    assert rows[0][1][4] > 0 and 0 <= rows[0][1][3] <= 1
    assert "Softmax kept in layers: 2, 7, 12, 17, 22, 27." in linearize_tab.run_linearize("hedgehog:64", 6, "en")[1]
    table, summary = linearize_tab.run_linearize("elu1:0", 0, "zh")
    assert list(table.columns)[2] == "困惑度" and "无（每一层都是线性的）" in summary


@pytest.mark.slow
def test_generate_streams_and_only_the_originals_memory_grows():
    steps = list(linearize_tab.run_generate("Once upon a time", 6, "hedgehog:0", 0, False, "en"))
    assert len(steps) == 12                                # every token of both models, one at a time
    originals = [step[0] for step in steps[:6]]
    assert all(len(a) <= len(b) for a, b in zip(originals, originals[1:])) and originals[-1]
    assert steps[5][1] == "" and steps[-1][1]              # the linearized model starts once the original ends
    traces = steps[-1][2].data
    kv, state = list(traces[0].y), list(traces[1].y)
    assert len(kv) == len(state) == 6
    assert all(a < b for a, b in zip(kv, kv[1:]))          # the KV cache grows with every token
    assert len(set(state)) == 1                            # all layers linear: the state is one size
    assert "linearized: 6 of 6 tokens" in steps[-1][3]


@pytest.mark.slow
def test_generate_stops_when_asked(monkeypatch):
    from explorer import stopping

    with pytest.raises(stopping.Stopped):
        list(views.generation_steps("Once upon a time", 8, "hedgehog:0", 0, stop=lambda: True))


def test_the_tabs_choices_are_the_engines():
    from explorer.ui import linearize_tab
    from explorer.views import linearize as views
    assert linearize_tab.SETS == tuple(views.sets()) and linearize_tab.SETS[0] == views.default_set()
    assert (linearize_tab.LAYERS, linearize_tab.DEFAULT_KEEP, linearize_tab.MAX_PROMPT_CHARS,
            linearize_tab.MAX_NEW_TOKENS) == (views.LAYERS, views.DEFAULT_KEEP, views.MAX_PROMPT_CHARS,
                                              views.MAX_NEW_TOKENS)


def test_a_change_of_language_relabels_the_same_numbers_and_an_untouched_prompt():
    view = views.JudgeView("hedgehog:64", 6, [2, 7], [
        {"model": "original", "softmax": 30, "perplexity": 27.5, "top1_agreement": 1.0, "kl": 0.0},
        {"model": "hybrid", "softmax": 6, "perplexity": 31.25, "top1_agreement": 0.8, "kl": 0.125}], 254, 2)
    table, summary, prompt = linearize_tab.relabel(view, say("linearize.default_prompt", "en"), "zh")
    assert list(table.columns) == [say(header, "zh") for header in views.headers()]
    assert table.values.tolist() == [["原模型", 30, 27.5, 1.0, 0.0],
                                     ["Hedgehog（已训练），窗口 64，k = 6", 6, 31.25, 0.8, 0.125]]
    sunk = views.JudgeView("hedgehog:16:1", 6, [2, 7], view.rows, 254, 2)
    assert linearize_tab.relabel(sunk, "x", "zh")[0].values.tolist()[1][0] == "Hedgehog（已训练），窗口 16 + 注意力汇聚点，k = 6"
    assert "2, 7" in summary and summary == say(views.summary(view), "zh")
    assert prompt == say("linearize.default_prompt", "zh") != say("linearize.default_prompt", "en")
    assert linearize_tab.relabel(view, "My own prompt", "zh")[2] == "My own prompt"     # the visitor's stays
    empty, start, _ = linearize_tab.relabel(None, "x", "zh")                             # before any judging
    assert list(empty.columns) == linearize_tab._headers("zh") and empty.empty and start == say("linearize.start", "zh")


def test_the_learn_link_carries_the_sections_settings_in_the_order_of_its_controls():
    from urllib.parse import parse_qs

    from explorer.ui import learn_links
    with gr.Blocks():
        section = linearize_tab.build(gr.Checkbox(False), gr.Radio(["en", "zh"], value="en"))
    assert tuple(key for _, key, _ in section.link_keys) == learn_links.LINEARIZE_LINK_KEYS
    assert section.controls == [section.set_id, section.keep, section.prompt, section.new_tokens]
    q = parse_qs(learn_links.learn_query(2, "3", 64, 300, 0, 40, 16, "elu1", "greedy", [2, 3], 2, 64, "hedgehog", "",
                                         3, False, "hedgehog:64", 12, "Once", 8))
    assert {k: q[k][0] for k in learn_links.LINEARIZE_LINK_KEYS} == {"lset": "hedgehog:64", "lkeep": "12",
                                                                      "lprompt": "Once", "lnew": "8"}
    assert "lset" not in learn_links.learn_query(2, "3")    # a page without the section: the tab's own keys


def test_training_on_the_page_is_checked_and_priced_before_any_work(monkeypatch):
    from explorer.linearize import build
    monkeypatch.setattr(build, "training_data", _no_model)
    with pytest.raises(gr.Error, match="The window must be a whole number from 0 to 128"):
        list(linearize_tab.run_training("hedgehog", 500, 0, 10, "en"))
    with pytest.raises(gr.Error, match="每层步数必须是 1 到 200 之间的整数"):
        list(linearize_tab.run_training("hedgehog", 0, 0, 0, "zh"))
    with pytest.raises(gr.Error, match="would take about .* s; the limit on this server is 120 s: lower the steps"):
        list(linearize_tab.run_training("luna", 128, 4, 200, "en"))
    with pytest.raises(gr.Error, match="No set has been trained on this page yet"):
        linearize_tab.show_linearize(linearize_tab.LIVE_SET, 6, "en")


def test_the_training_controls_bounds_are_the_engines():
    from explorer.linearize import live
    assert (linearize_tab.TRAIN_KINDS, linearize_tab.MAX_TRAIN_WINDOW, linearize_tab.MAX_TRAIN_SINKS,
            linearize_tab.MAX_TRAIN_STEPS, linearize_tab.DEFAULT_TRAIN_STEPS, linearize_tab.LIVE_SET) == (
        views.TRAIN_KINDS, views.MAX_TRAIN_WINDOW, views.MAX_TRAIN_SINKS, live.MAX_STEPS, live.DEFAULT_STEPS,
        views.LIVE_SET)
    for lang in ("en", "zh"):
        assert say("linearize.set_live", lang) != "linearize.set_live"      # the choice is named in both languages
