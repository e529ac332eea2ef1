"""A figure is built in messages and said at the edge: the words of another language, fitted
again to their own length, with nothing drawn changed."""

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.style import Style, finish, said_figure
from explorer.text import Joined, Message, say, said_throughout


def _figure(presentation=False):
    fig = make_subplots(rows=1, cols=2, subplot_titles=(Message("maps.bars_entropy"), Message("maps.bars_mono")))
    fig.add_trace(go.Bar(x=["a", "b"], y=[1.0, 2.0], name=Message("maps.bars_entropy_name")), row=1, col=1)
    fig.add_trace(go.Bar(x=["a", "b"], y=[0.5, 0.25], hovertext=[Message("maps.inf_marker")] * 2), row=1, col=2)
    fig.update_yaxes(title_text=Message("maps.bars_entropy_axis"), row=1, col=1)
    title = Joined([Message("maps.bars_title"), " · n = 64"])
    return finish(fig, Style(presentation), title, 400, note=Message("maps.bars_title"))


def test_english_is_the_figure_as_built():
    fig = _figure()
    assert said_figure(fig, "en") is fig
    assert fig.layout.title.text.startswith(say("maps.bars_title", "en")[:10])


def test_chinese_says_every_word_and_keeps_the_data():
    fig = _figure()
    zh = said_figure(fig, "zh")
    texts = [zh.layout.title.text, zh.layout.title.subtitle.text, zh.data[0].name, zh.layout.yaxis.title.text,
             *(a.text.replace("<br>", "") for a in zh.layout.annotations), *zh.data[1].hovertext]
    expected = [say("maps.bars_entropy", "zh"), say("maps.bars_mono", "zh"), say("maps.bars_entropy_name", "zh"),
                say("maps.bars_entropy_axis", "zh"), say("maps.inf_marker", "zh")]
    for words in expected:
        assert any(words.replace(" ", "") in text.replace(" ", "") for text in texts), words
    assert "Spiky" not in " ".join(texts)
    assert np.allclose(zh.data[0].y, fig.data[0].y) and np.allclose(zh.data[1].y, fig.data[1].y)
    # Said twice over (a language switch back and forth) is the same figure.
    assert said_figure(said_figure(fig, "zh"), "zh").layout.title.text == zh.layout.title.text


def test_the_top_margin_follows_the_said_note():
    """Fitting happens after saying: a note that wraps to another number of lines in Chinese
    gets a top margin for those lines, not for the English ones."""
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    note = Joined([Message("maps.not_shown", label="FAVOR+", why=Message("maps.bars_title"))] * 8, " ")
    finished = finish(fig, Style(True), Message("maps.title"), 300, note=note)
    zh = said_figure(finished, "zh")
    lines_en = finished.layout.title.subtitle.text.count("<br>")
    lines_zh = zh.layout.title.subtitle.text.count("<br>")
    assert lines_en != lines_zh
    per_line = (zh.layout.margin.t - finished.layout.margin.t) / (lines_zh - lines_en)
    assert per_line > 0


def test_messages_said_throughout_containers():
    value = {"a": [Message("common.na"), ("x", Message("maps.title"))], "b": np.array([Message("common.na")], dtype=object)}
    zh = said_throughout(value, "zh")
    assert zh["a"][0] == say("common.na", "zh") and zh["a"][1][1] == say("maps.title", "zh")
    assert zh["b"][0] == say("common.na", "zh")
    assert value["a"][0] == say("common.na", "en")       # the original is left as it was
