"""The lecture computes and draws once for both languages: its caches hold no language, a
language switch finds the view and the figures already there, and only the words change
(the Chinese figures keep no English word; the English ones are the figures as drawn)."""

from __future__ import annotations

import json

import pytest

from explorer.lecture import view as lecture_views
from explorer.ui import lecture_handlers as handlers
from helpers.words import lecture_english_words


@pytest.fixture
def minilm(monkeypatch):
    """The chapters read the embedded MiniLM (no model that reads Chinese), with empty caches."""
    monkeypatch.setattr(lecture_views, "causal_model_ready", lambda: None)
    monkeypatch.setattr(handlers, "_views", handlers.LRU(handlers.VIEW_CACHE_SIZE))
    monkeypatch.setattr(handlers, "_figures", handlers.LRU(handlers.VIEW_CACHE_SIZE))


def _words(fig) -> str:
    """Every text a figure shows: titles, notes, names, labels, tick text, table cells."""
    out = []

    def walk(node, key=""):
        if isinstance(node, dict):
            for name, value in node.items():
                if name != "template":
                    walk(value, name)
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str) and key in ("text", "name", "ticktext", "values", "x", "y"):
            out.append(node)
    walk(json.loads(fig.to_json()))
    return " ".join(out)


# Chapter 0 counts (no model); chapter 2 reads the sentence through MiniLM and times its products.
@pytest.mark.parametrize("ch", [0, pytest.param(2, marks=pytest.mark.slow)])
def test_a_language_switch_computes_and_draws_nothing_again(minilm, ch):
    controls = handlers.default_controls(ch)
    en_key = handlers.chapter_key(ch, None, None, controls, "en")
    zh_key = handlers.chapter_key(ch, None, None, controls, "zh")
    assert en_key == zh_key and not {"en", "zh"} & set(map(str, en_key))
    en = handlers.compute(ch, None, None, controls, lang="en")
    zh = handlers.compute(ch, None, None, controls, lang="zh")
    assert zh is en                                                  # one view serves both
    english = handlers.chapter_figures(en, "en", False, en_key)
    chinese = handlers.chapter_figures(zh, "zh", False, zh_key)
    assert len(handlers._views._items) == 1 and list(handlers._figures._items) == [(en_key, False)]
    drawn = handlers._figures.peek((en_key, False))
    assert all(a is b for a, b in zip(english, drawn))              # English: the figures as drawn
    for en_fig, zh_fig in zip(english, chinese):
        assert [list(t.y) if t.y is not None else None for t in en_fig.data] == \
               [list(t.y) if t.y is not None else None for t in zh_fig.data]     # the same numbers
        assert not lecture_english_words(_words(zh_fig)), (en_fig.layout.title.text, _words(zh_fig))
        assert zh_fig.layout.title.text != en_fig.layout.title.text


def test_the_default_sentence_is_the_input_a_language_picks(monkeypatch):
    """Where the chapter's model reads Chinese, the key holds the sentence read, not a language."""
    from explorer.lecture import text
    monkeypatch.setattr(lecture_views, "default_model", lambda ch: "SmolLM2-135M")
    controls = handlers.default_controls(3)
    en = handlers.chapter_key(3, None, None, controls, "en")
    zh = handlers.chapter_key(3, None, None, controls, "zh")
    assert en[1] == text.DEFAULT_TEXT and zh[1] == text.DEFAULT_TEXT_ZH
    assert handlers.chapter_key(3, "Some text.", None, controls, "zh")[1] == "Some text."
    assert handlers.chapter_key(0, None, None, handlers.default_controls(0), "zh")[1] is None
