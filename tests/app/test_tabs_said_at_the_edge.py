"""The quality and complexity tabs compute once for both languages: their views hold
messages, not words, so the other language's page reads the same view back (nothing measured
or timed again) and says it; the Chinese page has no English word outside names and units."""

from __future__ import annotations

import re

import gradio as gr
import numpy as np
import pytest

from explorer.figures.style import said_figure
from explorer.ui import common, complexity_tab, quality_tab
from explorer.views import complexity as cx_views, quality as quality_views
from helpers.words import english_words, figure_texts
from helpers import counted_calls

SETTINGS = dict(source="random", n=24, d=8, data_seed=11, layer=0, head="0", maps=["favor_plus_iid"], seeds=3, m=8,
                overview_map="elu1")


def no_english(texts, where=""):
    bad = {text: english_words(text) for text in texts if english_words(text)}
    assert not bad, (where, bad)


@pytest.fixture
def measured(monkeypatch):
    """The quality tab's measurements, counted by name."""
    return counted_calls(monkeypatch, quality_views, ("_measure_quality", "_measure_overview"))


@pytest.mark.slow          # two pages of the tab, each with the shape table of every map and mechanism
def test_the_quality_view_is_measured_once_and_said_in_either_language(measured):
    quality_views._VIEWS.clear()
    english = quality_tab.run_quality(**SETTINGS, lang="en")
    assert measured == ["_measure_quality"]
    chinese = quality_tab.run_quality(**SETTINGS, lang="zh")
    assert measured == ["_measure_quality"], "the other language's page measured the view again"
    (quality, overview), (again, _) = english[6], chinese[6]
    # One view: the same messages and numbers, whatever the page's language.
    assert again.title == quality.title and again.seed_note == quality.seed_note and again.notices == quality.notices
    assert np.array_equal(again.curves[0].kernel_mse, quality.curves[0].kernel_mse, equal_nan=True)
    assert not hasattr(quality, "lang")
    # Said in the language of each page.
    assert english[0].layout.title.text != chinese[0].layout.title.text
    for fig in chinese[:3]:
        no_english(figure_texts(fig), fig.layout.title.text)
    no_english([chinese[5]], "notices")
    # The page's language switch says the view it holds: the figures as the Chinese page drew them.
    switched = quality_tab.render((quality, overview), False, "m", "zh")
    assert [f.layout.title.text for f in switched[:3]] == [f.layout.title.text for f in chinese[:3]]
    assert measured == ["_measure_quality"]


def test_a_sweep_is_timed_once_and_said_in_either_language(monkeypatch):
    view = cx_views.complexity_view(64, 128, 2, 16, None, True, "elu1", ["sdpa", "linear_chunked"], repeats=1)
    monkeypatch.setattr(cx_views, "complexity_view", lambda *a, **k: pytest.fail("timed again"))
    plot, claim, kept, summary, table = complexity_tab.relang(view, "zh")
    assert isinstance(kept, type(gr.skip()))          # the view stays as it is: it has no language
    for fig in (plot, claim):
        no_english(figure_texts(fig), fig.layout.title.text)
    no_english([re.sub(r"</?(details|summary)>", " ", summary)], "summary")
    no_english([str(c) for c in table.columns] + [str(x) for x in table.iloc[:, 0]], "table")
    english = complexity_tab.relang(view, "en")
    assert "Crossover" in english[3] and "method" in list(english[4].columns)
    # An English figure is the figure as built; said again, it is the Chinese one.
    built = complexity_tab.render(view)[0]
    assert said_figure(built, "zh").layout.title.text == plot.layout.title.text
    assert common.said_outputs(built, "en") is built
