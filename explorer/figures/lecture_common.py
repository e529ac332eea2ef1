"""What every chapter's figures share: the slide's nominal size and column, text widths for
wrapping, the title-and-note finish, and numbers written as people say them. Each chapter's
own figures are ``explorer.lecture.ch<i>_<name>.figures``; ``explorer.figures.lecture``
draws a view through them.

A slide's figure takes its height from the window (no fixed pixel height: ``autosize``), so
each figure holds one idea and stays readable from about 450 to 900 px of height; margins
grow to fit tick labels and axis titles (``automargin``) instead of cutting them.
"""

from __future__ import annotations

import math
import re
import unicodedata

from .style import CHAR_EM, NOMINAL_WIDTH_PX, finish

# The height the margins are laid out for; the figure itself fills the height it is given.
NOMINAL_HEIGHT = 480
# Titles, notes and labels are fitted to this width: the slide's figure beside the speaker's
# notes on a 1280-px projector (about two thirds of it); the full width only adds air.
COLUMN_PX = 0.7 * 1280 - 40


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


def _share(*texts: str) -> float:
    """``finish``'s width for a lecture figure: the column's share of the nominal width,
    narrowed where the text's characters run wider than ``finish`` counts them (Chinese:
    a full em each), so that wrapped titles and notes stay inside the figure."""
    widest = max((text_px(t, 1.0) / len(t) for t in texts if t), default=CHAR_EM)
    return 0.96 * COLUMN_PX / NOMINAL_WIDTH_PX * min(1.0, CHAR_EM / widest)     # 4 %: the estimate's error


def finish_slide(fig, style, title, note="", **kw):
    """``finish`` (fonts, title, wrapped note, top margin), then the height left to the
    window and margins that grow to fit what the axes write."""
    fig = finish(fig, style, title, NOMINAL_HEIGHT, note, width=_share(title, note), **kw)
    fig.update_layout(height=None, autosize=True)
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def say_count(x: float) -> str:
    """A count or size as people say it: 1.0 × 10¹⁰, 262,144, 0.0123."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    ax = abs(x)
    if ax >= 1e7:
        exponent = int(math.floor(math.log10(ax)))
        return f"{x / 10 ** exponent:.2g} × 10{_superscript(exponent)}"
    if ax >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _superscript(n: int) -> str:
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def say_ratio(ratio: float) -> str:
    """A ratio as a multiplier; below 10 with two significant digits, so that a ratio under
    1 (the linear path costing more at short N) never reads as 0."""
    if ratio is None or not math.isfinite(ratio):
        return "—"
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.2g}"


def say_bytes(b: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


def n_label(n: float, lang: str) -> str:
    """A sequence length as a category label: 100K is 10 万 in Chinese."""
    n = int(n)
    if lang == "zh" and n >= 10_000 and n % 10_000 == 0:
        return f"{n // 10_000:,} 万"
    return f"{n:,}"


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
    0.25×10¹⁰): four or five steps of 1, 2 or 2.5 times a power of ten."""
    top = max([v for v in values if v is not None and math.isfinite(v)] or [1.0])
    exponent = math.floor(math.log10(top / 4))
    step = next(m * 10.0 ** exponent for m in (1, 2, 2.5, 5, 10) if top / (m * 10.0 ** exponent) <= 5)
    ticks = [i * step for i in range(int(top * 1.15 / step) + 1)]     # up to the axis top bar_room sets
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [say_count(x) if x else "0" for x in ticks]}


# Recall and cosines lie in [0, 1]: their axes are ticked in fifths.
UNIT_TICKS = {"tickmode": "array", "tickvals": [0, 0.2, 0.4, 0.6, 0.8, 1.0]}


def say_cosine(x: float) -> str:
    """A cosine to two decimals, never "-0.00"."""
    return f"{0.0 if abs(x) < 0.005 else x:.2f}"
