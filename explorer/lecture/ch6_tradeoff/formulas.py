"""Chapter 6's formulas: the trade-off's two axes (the linear path's cost per token, which
grows with m, and a row's distance to softmax), and the hybrid the article ends on: exact softmax
weights on the keys of a window W_i, the feature map's everywhere else, one normaliser."""

from __future__ import annotations

from .. import text
from ..mathml import big_o, exp, formula, frac, kl_row, o, phi, phi_t, row, scaled_logit, sub, total, words


def formulas(lang: str = "en") -> dict:
    q_i, k_j, v_j = sub("q", "i"), sub("k", "j"), sub("v", "j")
    inside, outside = row("j", o("∈"), sub("W", "i")), row("j", o("∉"), sub("W", "i"))

    def mixed(*value) -> str:
        return row(total(inside, exp(scaled_logit(q_i, k_j)), *value), o("+"),
                   total(outside, phi_t(q_i), phi(k_j), *value))
    return {
        "b0": [formula(words(text.t("formula.per_token", lang), a=big_o("m", "d"))), formula(kl_row())],
        "b6": [formula(row(sub("o", "i"), o("="), frac(mixed(v_j), mixed())))],
    }
