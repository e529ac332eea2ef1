"""Chapter 0: the bottleneck: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

from ...views.lecture_common import ChapterView, new_view
from . import maths as bottleneck


def compute(sample, c, progress=None) -> ChapterView:
    """The chapter on its controls alone: it reads no text (``sample`` is None)."""
    view = new_view(0, c)
    now = bottleneck.bottleneck(c["n"], c["d"])
    view.numbers.update({k: float(v) for k, v in now.items()})
    step = bottleneck.article_step(c["d"])
    view.numbers.update({f"article_{k}": float(v) for k, v in step.items()})
    view.data["ladder"] = bottleneck.ladder(c["n"], c["d"])
    view.data["current"] = now
    return view
