"""The one-time conversion of the causal model reports its progress as a message, and the page's
bar says it in the page's language only (the English page read "… · 首次转换 …")."""

from __future__ import annotations

import re
import time

import pytest

from explorer import views
from explorer.sources import packaged
from explorer.text import Message, say
from explorer.ui import source as source_panel

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_the_conversion_reports_messages(tmp_path, monkeypatch):
    monkeypatch.setattr(packaged, "_write_float32", lambda spec, gguf, work: time.sleep(0.6))
    heard = []
    packaged._convert(packaged.SMOLLM2, tmp_path / "model.gguf", tmp_path / "converted",
                      lambda fraction, message: heard.append((fraction, message)))
    assert len(heard) >= 3 and heard[-1][0] == 1.0
    assert all(isinstance(message, Message) for _, message in heard)
    assert not any(CJK.search(say(message, "en")) for _, message in heard)
    assert all(CJK.search(say(message, "zh")) for _, message in heard)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_bar_says_it_in_the_pages_language(monkeypatch, lang):
    def loading(*args, progress=None, **kwargs):
        progress(0.5, Message("sources.converting", name="SmolLM2-135M", elapsed=3, total=40))
        return "a sample"
    monkeypatch.setattr(views, "load_sample", loading)
    bar = []
    sample = source_panel.load("text", "a text", "gaussian", 8, 8, 0, 1.0, None,
                               progress=lambda fraction, desc=None: bar.append(desc), lang=lang)
    assert sample == "a sample" and len(bar) == 2
    said = bar[-1]
    assert said == say("sources.converting", lang, name="SmolLM2-135M", elapsed=3, total=40)
    assert bool(CJK.search(said)) == (lang == "zh") and " · " not in said


def test_an_export_of_nothing_is_refused_in_the_pages_language():
    import gradio as gr

    from explorer.ui import common, downloads

    @common.guarded
    def export_nothing(lang="en"):
        return downloads.export_files("maps", {"grid": None}, {"metrics": None})

    for lang in ("en", "zh"):
        with pytest.raises(gr.Error) as refused:
            export_nothing(lang=lang)
        assert refused.value.message == say("common.toast_nothing", lang)
