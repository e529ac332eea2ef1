"""Chapter 2's formulas: a kernel that splits as φ(q)ᵀφ(k), the rewrite that takes φ(q_i)
out of the sum, and the two orders of the product with their costs."""

from __future__ import annotations

from .. import text
from ..mathml import big_o, formula, frac, o, paren, phi, phi_t, row, sub, sup, t, total, words


def formulas(lang: str = "en") -> dict:
    q_i, k_j, v_j = sub("q", "i"), sub("k", "j"), sub("v", "j")
    kernel = row("K", paren("q", o(","), "k"), o("="), phi_t("q"), phi("k"))
    rewrite = row(sub("o", "i"), o("="),
                  frac(row(phi_t(q_i), total("j", phi(k_j), t(v_j))), row(phi_t(q_i), total("j", phi(k_j)))))
    costs = text.t("formula.costs", lang)
    left = row(paren(phi("Q"), t(phi("K"))), "V")
    right = row(phi("Q"), paren(t(phi("K")), "V"))
    return {
        "b0": [formula(kernel), formula(rewrite)],
        "b1": [formula(words(costs, a=left, b=big_o(sup("N", "2"), paren("m", o("+"), "d")))),
               formula(words(costs, a=right, b=big_o("N", "m", "d")))],
    }
