"""The state tab and its recall section compute without a language: a view and its figures
hold numbers and messages, and the page says them. One view serves English and Chinese; a
language switch on a drawn tab says its words again without computing anything; the Chinese
words hold no English (names, units and symbols aside)."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from explorer import views
from explorer.figures import mqar as mqar_figures, mqar_inspect as inspect_figures, state as state_figures
from explorer.text import said_throughout
from explorer.ui import mqar_tab, state_tab
from explorer.views import mqar as mqar_views, state as state_views
from conftest import shared_setup
from helpers.words import chinese_leftovers, english_words, figure_texts

ARGS = dict(source="random", n=24, d=8, kind="deltanet", t=6)


@pytest.fixture(scope="module")
def drawn():
    """The tab drawn once in English through its handler (the first draw loads the engine)."""
    with shared_setup("state tab drawn in English"):
        return state_tab.run_state(**ARGS, lang="en")


def _words(figs) -> list[str]:
    return [text for fig in figs for text in figure_texts(fig)]


def test_no_view_or_figure_of_the_tab_takes_a_language():
    functions = [state_views.state_view, state_views.state_step, state_views.check_controls,
                 state_views.check_step, state_views.kind_label, mqar_views.check_live, mqar_views.live_price,
                 mqar_views.train_live, mqar_views.trained_message, mqar_views.check_inspect,
                 mqar_views.inspect_live, mqar_views.shipped_status, state_figures.state_step,
                 state_figures.state_curves, state_figures.state_capacity, state_figures.memory_growth,
                 mqar_figures.mqar_figure, inspect_figures.recall_heatmap]
    taking = [fn.__qualname__ for fn in functions if "lang" in inspect.signature(fn).parameters]
    assert not taking, taking
    assert "lang" not in {f.name for f in fields(state_views.StateView)}


def test_one_view_is_said_in_both_languages_and_a_switch_computes_nothing(drawn, monkeypatch):
    view = drawn[4]
    english = [drawn[i] for i in (0, 1, 2, 7)]
    # The other language: the same view, said again; neither the view nor a probe runs.
    monkeypatch.setattr(views, "state_view", lambda *a, **k: pytest.fail("the view was computed again"))
    monkeypatch.setattr(views, "state_step", lambda *a, **k: pytest.fail("the step was computed again"))
    monkeypatch.setattr(state_views, "_measure_probes", lambda *a, **k: pytest.fail("the probes ran again"))
    said = state_tab.relanguage(view, drawn[-1], False, "zh")
    chinese = [said[i] for i in (0, 1, 2, 7)]
    assert said[-1] == state_tab.SaidIn("zh") and said[4] == said[5] == said[6]            # view, t and query left as they are
    # The same numbers, other words.
    for en, zh in zip(english, chinese):
        assert [t.name for t in en.data] != [t.name for t in zh.data] or en.layout.title.text != zh.layout.title.text
        assert [list(t.y) for t in en.data if t.type == "scatter"] == [list(t.y) for t in zh.data if t.type == "scatter"]
    leftovers = [(text, chinese_leftovers(text)) for text in _words(chinese) + [said[3]] if chinese_leftovers(text)]
    assert not leftovers, leftovers
    # The check can fail: the English draw is full of words it reports.
    assert any(chinese_leftovers(text) for text in _words(english) + [drawn[3]])
    # Back to English: the words of the first draw, from the same view.
    back = state_tab.relanguage(view, said[-1], False, "en")
    assert [f.layout.title.text for f in (back[0], back[1], back[2], back[7])] == \
        [f.layout.title.text for f in english] and back[3] == drawn[3]


def test_the_recall_section_is_said_in_chinese_from_the_same_figure():
    from explorer.experiments import mqar_table
    built = mqar_figures.mqar_figure(mqar_table.shipped())
    fig, status, _, _ = mqar_tab.show_mqar(False, "zh")
    assert [list(t.x) for t in fig.data] == [list(t.x) for t in built.data]
    assert [t.name for t in fig.data] == [said_throughout(t.name, "zh") for t in built.data]
    english = [(text, english_words(text)) for text in figure_texts(fig) + [status] if english_words(text)]
    assert not english, english
    assert any(english_words(text) for text in figure_texts(built))


def test_the_exported_tables_name_the_updates_in_the_pages_language(drawn):
    view = drawn[4]
    for table, column in ((state_tab.curves_table, "decay"), (state_tab.capacity_table, "update")):
        en, zh = table(view, "en"), table(view, "zh")
        assert list(en.columns) == list(zh.columns)                  # data keys, the same in both
        assert "no decay" in set(en[column]) and "无衰减" in set(zh[column])
        assert not [name for name in set(zh[column]) if chinese_leftovers(name)]
        numbers = [c for c in en.columns if c not in (column, "token")]
        assert en[numbers].equals(zh[numbers])
