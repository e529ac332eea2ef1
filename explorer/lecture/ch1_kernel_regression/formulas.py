"""Chapter 1's formulas: Nadaraya–Watson regression (1964) with the 1-D figure's Gaussian
kernel of bandwidth h, and softmax attention as the same estimate with the kernel
exp(q·k/√d)."""

from __future__ import annotations

from ..mathml import exp, fn, formula, frac, hat, o, over, paren, row, scaled_logit, sqrt, sub, sup, t, total


def _nw(x, xj, yj, kernel) -> str:
    return frac(total("j", kernel(x, xj), yj), total("j", kernel(x, xj)))


def formulas(lang: str = "en") -> dict:
    def big_k(x, xj):
        return row("K", paren(x, o(","), xj))

    def softmax_kernel(q, k):
        return exp(scaled_logit(q, k))

    x_j, q_i, k_j = sub("x", "j"), sub("q", "i"), sub("k", "j")
    gaussian = exp(o("−"), over(sup(paren("x", o("−"), x_j), "2"), row("2", sup("h", "2"))))
    attention = row(fn("softmax"), paren(frac(row("Q", t("K")), sqrt("d"))), "V")
    return {
        "b0": [formula(row(hat("f"), paren("x"), o("="), _nw("x", x_j, sub("y", "j"), big_k))),
               formula(row(big_k("x", x_j), o("="), gaussian))],
        "b1": [formula(row(sub("o", "i"), o("="), _nw(q_i, k_j, sub("v", "j"), softmax_kernel)))],
        "b2": [formula(row(sub("o", "i"), o("="), _nw(q_i, k_j, sub("v", "j"), big_k), o("="),
                           sub(paren(attention), "i")))],
    }
