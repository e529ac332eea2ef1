"""Chapter 6's plane gives each map one colour and symbol in both languages: the English and
the Chinese sentence leave out different maps (undefined on most rows), and the colours were
counted over the points drawn, so a speaker switching language saw Hedgehog change colour."""

from __future__ import annotations

import pytest

from helpers.lecture import said_chapter_figures
from explorer.lecture.text import map_words
from explorer.lecture import view as lecture


@pytest.fixture(scope="module")
def planes():
    return {lang: said_chapter_figures(lecture.chapter_view(6, lang=lang), lang)[0] for lang in ("en", "zh")}


def test_a_map_keeps_its_colour_and_symbol_in_both_languages(planes):
    views = {lang: lecture.chapter_view(6, lang=lang) for lang in planes}
    labels = {lang: [p["label"] for p in views[lang].data["points"]] for lang in planes}
    assert labels["en"] == labels["zh"]                       # the same maps, in the same order
    style_of = {}
    for lang, fig in planes.items():
        traces = {t.name: (t.marker.color, t.marker.symbol) for t in fig.data if t.mode == "markers"}
        for p in views[lang].data["points"]:
            name = f"{map_words(p['label'], lang)} (m = {p['m']})"
            if name in traces:
                style_of.setdefault(p["label"], {})[lang] = traces[name]
    both = {label: s for label, s in style_of.items() if len(s) == 2}
    assert len(both) >= 3, style_of
    for label, s in both.items():
        assert s["en"] == s["zh"], (label, s)
    # Different maps, different markers.
    assert len({s["en"] for s in both.values()}) == len(both)
