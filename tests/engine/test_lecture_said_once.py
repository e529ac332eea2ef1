"""Chapters 4-6 are computed and drawn once for every language: their figures hold messages,
and saying them in another language changes words only. The Chinese figures hold no English
word but names (those the Chinese language file keeps in Latin letters), units and the
sentence's own tokens."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from explorer.figures.style import Style, said_figure
from explorer.lecture import chapters
from explorer.lecture import text as lecture_text
from explorer.lecture import view as lecture
from explorer.lecture.figures import chapter_figures
from explorer.text import Message

from helpers.words import english_words, figure_texts

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("lecture_chapter_five")]   # chapters 4-6 read SmolLM2

CHAPTERS = (4, 5, 6)
CJK = __import__("re").compile(r"[\u4e00-\u9fff]")


def _words(fig) -> list[str]:
    """What a figure writes: its texts (helpers.words) and a table's header and cells."""
    out = figure_texts(fig)
    for trace in fig.data:
        if trace.type == "table":
            out += [str(v) for v in trace.header.values] + [str(v) for column in trace.cells.values for v in column]
        elif trace.type == "bar" and trace.text is not None and not isinstance(trace.text, str):
            out += [str(v) for v in trace.text]
    return out


def _numbers(fig) -> str:
    """Every number a figure draws, trace by trace (what no language may change), as JSON
    (NaN written as such, so that equal drawings compare equal)."""
    drawn = []
    for trace in fig.data:
        values = [getattr(trace, key, None) for key in ("x", "y", "z")]
        drawn.append([np.asarray(v).tolist() for v in values
                      if v is not None and not isinstance(next(iter(np.ravel(v)), 0), str)])
    return json.dumps(drawn)


def test_the_chapters_draw_without_a_language():
    for ch in CHAPTERS:
        draw = chapters.chapter(ch)._module("figures").draw
        assert list(inspect.signature(draw).parameters) == ["view", "style"], ch


@pytest.mark.parametrize("presentation", [False, True])
def test_one_view_and_one_drawing_serve_both_languages(monkeypatch, presentation):
    """A Chinese page's views (the Chinese sentence where the model reads it), each computed
    once and drawn once: English is the drawing itself, Chinese says its words and draws the
    same numbers, with no English word left."""
    for ch in CHAPTERS:
        record = chapters.chapter(ch)
        computed, drawn = [], []
        compute, draw = record._module("view").compute, record._module("figures").draw
        monkeypatch.setattr(record._module("view"), "compute", lambda *a, **k: computed.append(1) or compute(*a, **k))
        monkeypatch.setattr(record._module("figures"), "draw", lambda *a, **k: drawn.append(1) or draw(*a, **k))
        view = lecture.chapter_view(ch, lang="zh")
        figures = chapter_figures(view, style=Style(presentation))
        before = [fig.to_json() for fig in figures]
        said = {lang: [said_figure(fig, lang) for fig in figures] for lang in ("en", "zh")}
        assert (len(computed), len(drawn)) == (1, 1), ch
        assert all(en is fig for en, fig in zip(said["en"], figures))
        assert [fig.to_json() for fig in figures] == before, "saying changed the drawing"
        # Every title is a message, said in Chinese; the numbers are the drawing's.
        tokens = set(view.data.get("tokens") or ()) | set((view.data.get("luna") or {}).get("tokens") or ())
        for build, (fig, zh) in enumerate(zip(figures, said["zh"])):
            assert isinstance(fig._draft["title"], Message), (ch, build)
            assert zh.layout.title.text.replace("<br>", "") in lecture_text.said(fig._draft["title"], "zh"), (ch, build)
            assert CJK.search(zh.layout.title.text), (ch, build, zh.layout.title.text)
            assert _numbers(zh) == _numbers(fig), (ch, build)
            english = [word for text in _words(zh) if text not in tokens for word in english_words(text)]
            assert not english, (ch, build, english)
        # The English drawing writes English: a message's text is its English form.
        assert not any(CJK.search(fig.layout.title.text) for fig in said["en"] if "word" not in fig._draft["title"].values)


def test_the_recap_said_in_chinese_keeps_the_slides_layout():
    """Said in Chinese, the recap's cells wrap to their Chinese words and its rows take the
    height of the most lines a Chinese cell takes; the margins and the height left to the
    window, set after the title was fitted, stay as they were drawn."""
    view = lecture.chapter_view(6)
    fig = chapter_figures(view, style=Style(True))[3]        # the recap: a table of wrapped cells
    zh = said_figure(fig, "zh")
    assert CJK.search(" ".join(_words(zh)))
    assert json.loads(fig.to_json()) != json.loads(zh.to_json())
    cells = [str(v) for column in zh.data[0].cells.values for v in column]
    rows = max(cell.count("<br>") + 1 for cell in cells)
    assert zh.data[0].cells.height == pytest.approx(Style(True).tick_font * 1.35 * rows + 12)
    assert (zh.layout.margin.l, zh.layout.margin.r, zh.layout.margin.b) == (20, 20, 10)
    assert zh.layout.height is None and zh.layout.autosize is True
