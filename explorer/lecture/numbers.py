"""Numbers as the lecture writes them, in a figure's labels and in the claims and notes that
quote it: one way of rounding each kind of number, so that a sentence and its figure show the
same digits (standard library only)."""

from __future__ import annotations

import math


def say_count(x: float, lang: str = "en") -> str:
    """A count or size as people say it: 1.0 × 10¹⁰, 262,144, 0.0123. In Chinese a count
    that is a whole number of 万 or 亿 is said in them (10 万, 100 亿), as a Chinese reader
    counts; any other is written as in English, so that both say the same digits."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if lang == "zh":
        chinese = _say_wan(x)
        if chinese is not None:
            return chinese
    ax = abs(x)
    if ax >= 1e7:
        exponent = int(math.floor(math.log10(ax)))
        return f"{x / 10 ** exponent:.2g} × 10{_superscript(exponent)}"
    if ax >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _say_wan(x: float) -> str | None:
    """``x`` in 亿 (10⁸) or 万 (10⁴) when it is an exact, round whole number of them (at most
    three significant digits) below 10¹² (100,000 -> "10 万", 1e10 -> "100 亿"), else None."""
    if not float(x).is_integer() or not 1e4 <= abs(x) < 1e12:
        return None
    for unit, size in (("亿", 10 ** 8), ("万", 10 ** 4)):
        # A round count only: "660,480 万" reads worse than 6.6 × 10⁹.
        if abs(x) >= size and int(x) % size == 0 and len(str(abs(int(x)) // size).rstrip("0")) <= 3:
            return f"{int(x) // size:,} {unit}"
    return None


class Said(str):
    """A number written once per language: as a ``str`` its English form; ``say(lang)`` the
    form of ``lang`` (what the lecture's text fills a placeholder with)."""

    def __new__(cls, en: str, zh: str | None = None):
        said = super().__new__(cls, en)
        said.zh = en if zh is None else zh
        return said

    def say(self, lang: str = "en") -> str:
        return self.zh if lang == "zh" else str.__str__(self)


def said_count(x: float) -> Said:
    """``say_count`` in both languages, for a claim or a note."""
    return Said(say_count(x), say_count(x, "zh"))


def say_power_of_ten(exponent: int) -> str:
    """10 to the ``exponent``, written as a power: 10⁵ (a log axis's decade)."""
    return f"10{_superscript(int(exponent))}"


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


def say_cosine(x: float) -> str:
    """A cosine to two decimals, never "-0.00"."""
    return f"{0.0 if abs(x) < 0.005 else x:.2f}"


def say_signed(x: float) -> str:
    """A difference to two decimals with its sign, "+0.12", "-0.04"; one that rounds to zero is
    "0.00" (never "-0.00" nor "+0.00")."""
    return "0.00" if abs(x) < 0.005 else f"{x:+.2f}"


def say_percent(share: float) -> str:
    """A share as a percentage to at most two decimals, trailing zeros dropped: 99.99, 4.8, 100."""
    text = f"{100 * share:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def say_fixed(x: float, digits: int = 1) -> str:
    """``x`` to ``digits`` decimals, never "-0.0" (a logit of -0.01 is written 0.0)."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def format_number(value: float) -> str:
    """A number of a chapter's numbers table: whole numbers with thousands separators, others
    to 4 significant digits (3 below 0.001 or from a million on), NaN as a dash."""
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    if value != value:
        return "—"
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-3 or magnitude >= 1e6):
        return f"{value:.3g}"
    return f"{value:.4g}"
