"""Chapter 0's formulas: N tokens make N² pairs, and the two multiplication orders with
their costs (the article's (QKᵀ)V against Q(KᵀV), m = d)."""

from __future__ import annotations

from .. import text
from ..mathml import big_o, formula, o, paren, row, sup, t, words


def formulas(lang: str = "en") -> dict:
    costs = text.t("formula.costs", lang)
    left = row(paren("Q", t("K")), "V")
    right = row("Q", paren(t("K"), "V"))
    return {
        "b1": [formula(row("N", o("×"), "N", o("="), sup("N", "2")))],
        "b3": [formula(words(costs, a=left, b=big_o(sup("N", "2"), "d"))),
               formula(words(costs, a=right, b=big_o("N", sup("d", "2"))))],
    }
