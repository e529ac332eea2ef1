"""What every chapter's figures share: the slide's nominal size and column, text widths for
wrapping, the title-and-note finish, and numbers written as people say them. Each chapter's
own figures are ``explorer.lecture.ch<i>_<name>.figures``; ``explorer.lecture.figures``
draws a view through them.

A slide's figure takes its height from the window (no fixed pixel height: ``autosize``), so
each figure holds one idea and stays readable from about 450 to 900 px of height; margins
grow to fit tick labels and axis titles (``automargin``) instead of cutting them.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import partial

from .numbers import Said, said_count, say_bytes, say_cosine, say_count, say_ratio  # noqa: F401  (the chapters' figures read them here)
from ..figures.style import CHAR_EM, NOMINAL_WIDTH_PX, finish
from ..text import said_throughout

# The height the margins are laid out for; the figure itself fills the height it is given.
NOMINAL_HEIGHT = 480
# Titles, notes and labels are fitted to the figure's width on a 1280-px window: in the tab,
# its column beside the controls (about two thirds of the page); on a slide, the whole page
# less its margins (the speaker's notes overlay it, so the slide never narrows). A wider
# window enlarges the slide as a whole and only adds air to the tab.
COLUMN_PX = 0.7 * 1280 - 40
SLIDE_PX = 1280 - 2 * 42 - 16


def column_px(style) -> float:
    """The width a lecture figure is fitted to: the slide's in presentation mode, else the tab's column."""
    return SLIDE_PX if getattr(style, "presentation", False) else COLUMN_PX


def _em(char: str) -> float:
    """Advance of one character in em, with margin: CJK is a full em, digits and capitals
    of DejaVu Sans run wider than ``CHAR_EM``, the rest fits it."""
    if unicodedata.east_asian_width(char) in "WF":
        return 1.0
    if char in "mwMW":
        return 1.0
    if char.isdigit():
        return 0.64
    if char.isupper():
        return 0.76
    return CHAR_EM


def text_px(text: str, font: float) -> float:
    """Estimated width of one line of ``text`` at ``font`` px (tags left out)."""
    plain = re.sub(r"<[^>]+>", "", text)
    return sum(_em(c) for c in plain) * font


_CJK_OR_WORD = re.compile(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]|[^\s\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]+\s*|\s+")


def wrap_px(text: str, font: float, px: float) -> str:
    """``text`` broken into lines of at most ``px`` at ``font`` px, joined by <br>: at spaces,
    or between CJK characters (a table cell that breaks a word mid-way cannot be read)."""
    lines, line = [], ""
    for piece in _CJK_OR_WORD.findall(text):
        if line and text_px(line + piece.rstrip(), font) > px:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    if line.strip():
        lines.append(line.rstrip())
    return "<br>".join(lines)


def _share(style, *texts: str) -> float:
    """``finish``'s width for a lecture figure: the column's share of the nominal width,
    narrowed where the text's Latin characters run wider than ``finish`` counts them (digits,
    capitals, symbols). A Chinese character ``finish`` counts a full em itself: it is left
    out here, or its lines would be narrowed twice (wrapped at 60 % of the column)."""
    latin = ["".join(c for c in t if unicodedata.east_asian_width(c) not in "WF") for t in texts]
    widest = max((text_px(t, 1.0) / len(t) for t in latin if t), default=CHAR_EM)
    return 0.96 * column_px(style) / NOMINAL_WIDTH_PX * min(1.0, CHAR_EM / widest)     # 4 %: the estimate's error


def finish_slide(fig, style, title, note="", then=None, **kw):
    """``finish`` (fonts, title, wrapped note, top margin), then the height left to the
    window and margins that grow to fit what the axes write; ``then(fig)`` after that (a
    figure's own margins). The title and note may be messages: each fitting (English here,
    another language where the figure is said) measures the words as said."""
    def slide(fig):
        fig.update_layout(height=None, autosize=True)
        props = getattr(fig.layout, "_props", None)     # a figure built unvalidated (said again) keeps
        if isinstance(props, dict) and "height" in props and props["height"] is None:   # a None: no height
            del props["height"]
        fig.update_xaxes(automargin=True)
        fig.update_yaxes(automargin=True)
        if then is not None:
            then(fig)
    return finish(fig, style, title, NOMINAL_HEIGHT, note, width=partial(_share, style), then=slide, **kw)


def margins(**margin):
    """A ``then`` for ``finish_slide``: the figure's own margins, kept after every fitting."""
    return lambda fig: fig.update_layout(margin=margin)


class Wrapped(str):
    """Words wrapped at ``font`` px to ``px`` of width (``wrap_px``), in whatever language
    they are said: a table cell that wraps the words it shows."""

    def __new__(cls, words, font: float, px: float):
        self = super().__new__(cls, wrap_px(str(words), font, px))
        self.words, self.font, self.px = words, font, px
        return self

    def say(self, lang: str = "en") -> str:
        return wrap_px(str(said_throughout(self.words, lang)), self.font, self.px)

    def __reduce__(self):
        return Wrapped, (self.words, self.font, self.px)


def n_label(n: float) -> Said:
    """A sequence length as a category label: 100K is 10 万 in Chinese."""
    n = int(n)
    zh = f"{n // 10_000:,} 万" if n >= 10_000 and n % 10_000 == 0 else f"{n:,}"
    return Said(f"{n:,}", zh)


def log_ticks(values) -> dict:
    """Ticks for a log axis over ``values`` with at least three labels: 1-2-5 steps where
    the values span few decades (a single "10⁴" cannot be read), decades otherwise."""
    values = [v for v in values if v > 0 and math.isfinite(v)]
    if not values:
        return {}
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo > 3:
        return {"dtick": 1}
    ticks = [m * 10.0 ** e for e in range(math.floor(lo) - 1, math.ceil(hi) + 2) for m in (1, 2, 5)]
    ticks = [x for x in ticks if 10 ** lo / 2.2 <= x <= 10 ** hi * 2.2]
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [say_count(x) for x in ticks]}


def bar_room(values, factor: float = 1.18) -> list[float]:
    """A linear axis from 0 with room above the tallest bar for its label."""
    top = max([v for v in values if v is not None and math.isfinite(v)] or [1.0])
    return [0.0, top * factor]


def count_ticks(values) -> dict:
    """Linear-axis ticks for large counts written as people say them (2.5 × 10⁹, not
    0.25×10¹⁰; in Chinese 25 亿): four or five steps of 1, 2 or 2.5 times a power of ten."""
    top = max([v for v in values if v is not None and math.isfinite(v)] or [1.0])
    exponent = math.floor(math.log10(top / 4))
    step = next(m * 10.0 ** exponent for m in (1, 2, 2.5, 5, 10) if top / (m * 10.0 ** exponent) <= 5)
    ticks = [i * step for i in range(int(top * 1.15 / step) + 1)]     # up to the axis top bar_room sets
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [said_count(x) if x else "0" for x in ticks]}


def whole_ticks(values, most: int = 6) -> dict:
    """Linear-axis ticks for whole numbers (tokens, counts): steps of 1, 2 or 5 times a power
    of ten, at most ``most`` of them, never under 1, so no axis reads "0.5 tokens"."""
    top = max([abs(v) for v in values if v is not None and math.isfinite(v)] or [1.0])
    step, power = 1, 1
    while top / step > most:
        step = next(m * power for m in (1, 2, 5, 10) if m * power > step)
        power = power * 10 if step == 10 * power else power
    return {"tick0": 0, "dtick": step}


# Recall and cosines lie in [0, 1]: their axes are ticked in fifths.
UNIT_TICKS = {"tickmode": "array", "tickvals": [0, 0.2, 0.4, 0.6, 0.8, 1.0]}


# The smallest text a slide shows, in CSS px at 1280 × 720 (a larger window enlarges the
# whole slide: assets/deck.js zooms the page by its size over 1280 × 720).
MIN_SLIDE_FONT_PX = 16
_FONT_KEYS = ("font", "tickfont", "textfont", "insidetextfont", "outsidetextfont")


def _raise_fonts(node, floor: float) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _FONT_KEYS and isinstance(value, dict):
                size = value.get("size")
                if isinstance(size, (int, float)) and size < floor:
                    value["size"] = floor
                elif isinstance(size, list):
                    value["size"] = [max(s, floor) if isinstance(s, (int, float)) else s for s in size]
            if key != "hoverlabel":               # what the pointer shows is no slide text
                _raise_fonts(value, floor)
    elif isinstance(node, list):
        for item in node:
            _raise_fonts(item, floor)


def floor_fonts(fig, floor: float = MIN_SLIDE_FONT_PX):
    """Every text of a slide's figure at ``floor`` px or more: fonts set smaller are raised,
    and labels inside bars are never shrunk below it to fit (plotly's ``uniformtext``).
    Layout only; nothing drawn changes."""
    layout = fig.layout.to_plotly_json()
    _raise_fonts(layout, floor)
    base = (layout.get("font") or {}).get("size")
    if not isinstance(base, (int, float)) or base < floor:
        layout.setdefault("font", {})["size"] = floor
    layout["uniformtext"] = {"minsize": floor, "mode": "show"}
    fig.layout = layout
    _thick_grouped_bars(fig)
    for trace in fig.data:
        data = trace.to_plotly_json()
        _raise_fonts(data, floor)
        for key in (*_FONT_KEYS, "colorbar", "marker", "legendgrouptitle"):
            if isinstance(data.get(key), dict):
                trace[key] = data[key]
    return fig


def _thick_grouped_bars(fig) -> None:
    """Grouped bars with labels outside them: the gaps narrowed, so that each bar is as
    thick as the axis allows. Lying bars (horizontal) of one group can still be thinner than
    a label at the floor's size is tall: the first series then writes its labels inside its
    bars, at their start, and the others outside, at their end, so that two bars of nearly
    the same length never put their labels in one place."""
    labelled = [t for t in fig.data if t.type == "bar" and t.text is not None and t.textposition == "outside"]
    if len(labelled) < 2 or fig.layout.barmode not in (None, "group"):
        return
    # A group: two series over the same categories (series of one bar each are no group).
    categories = [set(map(str, (t.y if t.orientation == "h" else t.x) or ())) for t in labelled]
    if not any(a & b for i, a in enumerate(categories) for b in categories[i + 1:]):
        return
    fig.update_layout(bargap=min(fig.layout.bargap if fig.layout.bargap is not None else 0.2, 0.1),
                      bargroupgap=0.0)
    lying = [t for t in labelled if t.orientation == "h"]
    if len(lying) >= 2:
        lying[0].update(textposition="inside", insidetextanchor="start")
