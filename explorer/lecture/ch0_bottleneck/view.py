"""Chapter 0: the bottleneck: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

from ..numbers import said_count, say_bytes, say_ratio
from ..view_common import ChapterView, new_view
from . import CHAPTER
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
    # The opening: the article's teacher, on class sizes from the N control's own range.
    teacher = bottleneck.teacher()
    view.numbers.update({f"teacher_{k}": float(v) for k, v in teacher.items()})
    spec = next(spec for spec in CHAPTER.controls if spec.name == "n")
    view.data["class_curve"] = bottleneck.class_curve(int(spec.min), int(spec.step))
    n = view.numbers
    opening = {"s": f"{n['teacher_students']:,.0f}", "c": f"{n['teacher_comparisons']:,.0f}",
               "s2": f"{n['teacher_double_students']:,.0f}", "c2": f"{n['teacher_double_comparisons']:,.0f}",
               "g": f"{n['teacher_double_growth']:,.0f}"}
    # Counts as each language says them: 10 万个 token 有 100 亿对.
    step = {"a": said_count(int(n['article_n_from'])), "pa": said_count(n["article_pairs_from"]),
            "b": said_count(int(n['article_n_to'])), "pb": said_count(n["article_pairs_to"]),
            "g": f"{n['article_growth']:,.0f}"}
    size = {"n": said_count(int(n['n'])), "f32": say_bytes(n["bytes_f32"]), "f16": say_bytes(n["bytes_f16"])}
    work = {"n": said_count(int(n['n'])), "d": f"{n['d']:.0f}", "ratio": say_ratio(n["flop_ratio"])}
    for build, values in (("b0", opening), ("b1", step), ("b2", size), ("b3", work)):
        view.says[build] = {"claim": (f"ch0.{build}.claim", values), "notes": [(f"ch0.{build}.notes", values)]}
    return view
