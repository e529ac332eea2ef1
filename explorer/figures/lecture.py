"""Figures of the lecture: ``chapter_figures(view, lang, style)`` draws a ChapterView as its
builds, one figure each, in the order the speaker shows them.

Every number drawn is one the view computed (``view.data`` / ``view.numbers``); what is
decided here is the look and the words, in English or Chinese (``explorer.lecture.text``).
Each chapter's drawing is its package's ``figures`` module in ``explorer.lecture``; what
they share is ``explorer.figures.lecture_common``.
"""

from __future__ import annotations

import plotly.graph_objects as go

from ..lecture.ch0_bottleneck import figures as ch0_figures
from ..lecture.ch1_kernel_regression import figures as ch1_figures
from ..lecture.ch1_kernel_regression.figures import KEY_LABELS  # noqa: F401
from ..lecture.ch2_associativity import figures as ch2_figures
from ..lecture.ch3_kernels import figures as ch3_figures
from ..lecture.ch4_rnn import figures as ch4_figures
from ..lecture.ch5_closing_the_gap import figures as ch5_figures
from ..lecture.ch6_tradeoff import figures as ch6_figures
from .lecture_common import COLUMN_PX, NOMINAL_HEIGHT, text_px  # noqa: F401  (the slide's measures)
from .style import as_style


def chapter_figures(view, lang: str = "en", style=None) -> list[go.Figure]:
    """The chapter's builds, one figure each, titles and axis labels in ``lang``."""
    style = as_style(style)
    return _DRAW[view.ch](view, lang, style)


def build_count(ch: int) -> int:
    """How many builds chapter ``ch`` has (its figures, whatever the data)."""
    return BUILDS[int(ch)]


_DRAW = {0: ch0_figures.draw, 1: ch1_figures.draw, 2: ch2_figures.draw, 3: ch3_figures.draw,
         4: ch4_figures.draw, 5: ch5_figures.draw, 6: ch6_figures.draw}
BUILDS = {0: 3, 1: 3, 2: 2, 3: 6, 4: 3, 5: 5, 6: 3}
