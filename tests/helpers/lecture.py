"""The lecture's figures as the page shows them in one language: drawn once in messages
(``explorer.lecture.figures.chapter_figures``), then said (``said_figure``)."""

from __future__ import annotations

from explorer.figures.style import said_figure
from explorer.lecture.figures import chapter_figures


def said_chapter_figures(view, lang: str = "en", style=None) -> list:
    """The chapter's figures said in ``lang``, in ``style``."""
    return [said_figure(fig, lang) for fig in chapter_figures(view, style)]
