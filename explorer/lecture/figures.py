"""Figures of the lecture: ``chapter_figures(view, style)`` draws a ChapterView as its builds,
one figure each, in the order the speaker shows them.

Every number drawn is one the view computed (``view.data`` / ``view.numbers``); what is
decided here is the look and the words. The words are messages (keys and values: see
``explorer.lecture.text.words``): a figure is drawn once, whatever the audience's language,
and the page says it in theirs with ``explorer.figures.style.said_figure``.
Each chapter's drawing is its record's ``draw`` (``explorer.lecture.chapters``): its
package's ``figures`` module; what they share is ``explorer.lecture.figure_common``.
"""

from __future__ import annotations

import plotly.graph_objects as go

from . import chapters
from .figure_common import COLUMN_PX, NOMINAL_HEIGHT, column_px, text_px  # noqa: F401  (the slide's measures)
from ..figures.style import as_style


def chapter_figures(view, style=None) -> list[go.Figure]:
    """The chapter's builds, one figure each, their words as messages."""
    return chapters.chapter(view.ch).draw(view, as_style(style))


def build_count(ch: int) -> int:
    """How many builds chapter ``ch`` has (its figures, whatever the data): its record's."""
    return len(chapters.chapter(ch).builds)
