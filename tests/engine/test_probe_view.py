"""The probe page's engine half: the corpus bounds, the summary that never flatters, the
heads x maps grid (the mean of the table's cells), and every word in both languages."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.catalog import PROBE_MAX_TEXT_CHARS, PROBE_MAX_TEXTS
from explorer.figures.probe import probe_grid
from explorer.text import say_error
from explorer.views import probe as probe_views
from helpers.words import english_words, figure_texts

pytestmark = pytest.mark.slow      # every head of two texts, shared

TEXTS = "The cat sat on the mat.\n\nKernels weigh every key by its similarity to the query.\n"


@pytest.fixture(scope="module")
def view():
    return probe_views.probe_view(probe_views.read_corpus(TEXTS), maps=["relu", "elu1"], metric="kl_mean")


def test_the_corpus_is_bounded_in_lines_and_characters():
    assert [i for i, _ in probe_views.read_corpus(TEXTS).texts] == [0, 2]
    with pytest.raises(ValueError, match="no text"):
        probe_views.read_corpus("\n \n")
    with pytest.raises(ValueError, match="over this page's limit"):
        probe_views.read_corpus("a\n" * (PROBE_MAX_TEXTS + 1))
    with pytest.raises(ValueError, match="line 2 has"):
        probe_views.read_corpus("a\n" + "b" * (PROBE_MAX_TEXT_CHARS + 1))
    with pytest.raises(ValueError) as refused:
        probe_views.read_corpus("a\n" * (PROBE_MAX_TEXTS + 1))
    assert "超过本页上限" in say_error(refused.value, "zh")


def test_every_layer_and_head_of_every_text(view):
    assert len(view.table) == 2 * 6 * 12 * 2 and len(view.heads) == 72 and view.texts == 2
    assert view.grid.shape == (72, 2) and view.maps == ["relu", "elu1"]


def test_the_grid_is_the_mean_over_texts_of_the_cells_that_have_a_value(view):
    t = view.table
    cell = t[(t["layer"] == 3) & (t["head"] == 7) & (t["map_id"] == "elu1")]
    assert view.grid[3 * 12 + 7, 1] == pytest.approx(cell["kl_mean"].mean(), rel=1e-12)


def test_infinite_kl_is_counted_beside_the_mean_not_dropped(view):
    relu = view.summary[0]
    assert relu["map"] == "relu" and relu["kl_inf_rows"] == int(view.table[view.table["map_id"] == "relu"]
                                                                 ["kl_rows_infinite"].sum()) > 0
    table = probe_views.summary_table(view)
    assert f"on {relu['kl_inf_rows']} of {relu['rows']} rows" in set(table["KL = ∞"])


def test_chinese_page_has_no_english_words(view):
    from explorer.catalog import map_label
    from explorer.figures.style import said_figure
    from explorer.ui.common import said_outputs
    table = said_outputs(probe_views.summary_table(view), "zh")
    words = [w for column in table.columns for w in english_words(column)]
    words += [w for value in table.astype(str).values.ravel() for w in english_words(value)]
    fig = said_figure(probe_grid(view.grid, probe_views.head_labels(view), [map_label(x) for x in view.maps], "KL",
                                 texts=view.texts), "zh")
    words += [w for text in figure_texts(fig) for w in english_words(text)]
    assert words == []
    assert not np.isfinite(probe_grid(np.full((1, 1), math.nan), ["h"], ["elu1"]).data[0].z).any()


def test_an_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="metric"):
        probe_views.probe_view(probe_views.read_corpus("a b c"), metric="nope")
