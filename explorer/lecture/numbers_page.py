"""docs/lecture-numbers.md: every number the deck's chapters compute, labelled, for the English
and the Chinese sentence, as a fresh run of the lecture gives them.

    python -m explorer lecture --numbers docs/lecture-numbers.md

The docs quote the deck from this page rather than copy numbers into prose, which drifted
from the deck as the chapters changed; a test computes the page again and holds the docs'
copy equal to it. Timings are left out: they are the machine's and the moment's (chapter 2
draws them beside the dense-matmul rate it measured), not the lecture's.
"""

from __future__ import annotations

from pathlib import Path

from . import chapters
from .numbers import format_number
from .text import default_text, number_label, t

# Chapter 2's live timing: seconds, their ratio and the matmul rate measured beside them.
TIMINGS = frozenset({"left_seconds", "right_seconds", "time_ratio", "matmul_gflops"})
LANGS = ("en", "zh")
SENTENCE = {"en": "the English sentence", "zh": "the Chinese sentence"}


def _shown(value: float) -> str:
    """A whole number as it is; another to 3 significant digits (whole from 100 on), so that
    the last digit of float32 work on another CPU does not change the page; below 10^-6 (an
    agreement between two forms, to rounding) "≈ 0"."""
    value = float(value)
    if value != value or abs(value) == float("inf"):
        return "—"
    if abs(value) < 1e-6:
        return "≈ 0"                                # 0, or float rounding's size: the same on any CPU
    if value.is_integer() and abs(value) < 1e15:
        return f"{value:,.0f}"                      # a count, a size, a setting: exact
    if abs(value) >= 1e6:
        return f"{value:.3g}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return format_number(float(f"{value:.3g}"))


def _cell(text: str) -> str:
    """A table cell's text: a label's own bars ("max |difference|") escaped."""
    return text.replace("|", "\\|")


def _where(view) -> str:
    """What a chapter read: its model and, where it has them, its layer and head."""
    model = (view.provenance or {}).get("model")
    parts = [f"`{model[0]}`"] if model else []
    parts += [f"{name} {view.controls[name]}" for name in ("layer", "head") if name in view.controls]
    return ", ".join(parts)


def page(views: dict) -> str:
    """The page, from ``views`` {(chapter, lang): ChapterView} of every chapter in both
    languages at the deck's defaults."""
    lines = ["# The lecture's numbers", "",
             "Every number the deck's chapters compute at their defaults, as `python -m explorer lecture "
             "--numbers docs/lecture-numbers.md` wrote it (a test computes it again and holds this "
             "copy equal). Chapter 2's timings are left out: they depend on the machine.", ""]
    for lang in LANGS:
        lines += [f"## Read on {SENTENCE[lang]}: “{default_text(lang)}”", ""]
        for ch in chapters.CHAPTERS:
            view = views[(ch, lang)]
            where = _where(view)
            lines += [f"### {t(f'ch{ch}.title')}" + (f" ({where})" if where else ""), "",
                      "| number | value |", "|---|---:|"]
            lines += [f"| {_cell(number_label(key))} | {_shown(value)} |"
                      for key, value in view.numbers.items() if key not in TIMINGS]
            lines.append("")
    return "\n".join(lines)


def write(path, progress=None) -> Path:
    """Compute every chapter in both languages and write the page to ``path``."""
    from .view import chapter_view

    views = {}
    for i, (lang, ch) in enumerate((lang, ch) for lang in LANGS for ch in chapters.CHAPTERS):
        if progress is not None:
            progress(i / (len(LANGS) * len(chapters.CHAPTERS)), f"chapter {ch} ({lang})")
        views[(ch, lang)] = chapter_view(ch, lang=lang)
    path = Path(path)
    path.write_text(page(views), encoding="utf-8")
    return path
