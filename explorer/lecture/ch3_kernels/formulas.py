"""Chapter 3's formulas: a kernel as an inner product of features (the kernel trick, used in
reverse), exp's Taylor series and its truncations over the logit s, the feature maps elu+1
and FAVOR+, and the random features' variance (``explorer.maps.rf_theory``: maps work on
x′ = x/d^¼, so that q′·k′ = s)."""

from __future__ import annotations

from ..mathml import (exp, fn, formula, frac, hat, i, norm, o, over, paren, phi, row, scaled_logit, sqrt, space, sub,
                      sup, t, total, words)



def primed(x: str) -> str:
    """x′ (the prime is a raised glyph of its own: not a superscript)."""
    return row(i(x), o("′", lspace="0", rspace="0"))


def formulas(lang: str = "en") -> dict:
    s_is = row("s", o("="), scaled_logit())
    series = row(exp("s"), o("="), total(row("n", o("="), "0"), frac(sup("s", "n"), row("n", o("!")))))
    taylor1 = row("1", o("+"), "s")
    taylor2 = row("1", o("+"), "s", o("+"), frac(sup("s", "2"), "2"))
    elu = row(words("elu+1: "), phi("x"), o("="), fn("elu"), paren("x"), o("+"), "1")
    omega_r = sub(i("ω"), "r")
    favor = row(words("FAVOR+: "), sub(i("φ"), "r"), paren("x"), o("="),
                frac(exp(row(t(omega_r), "x", o("−"), over(sup(norm("x"), "2"), "2"))), sqrt("m")),
                o(","), space(0.6), omega_r, o("∼"), i("𝒩"), paren("0", o(","), "I"))
    qk = row(primed("q"), o("+"), primed("k"))
    spread = row(exp(sup(norm(qk), "2")), o("−"), "1")
    real = i("ℝ", normal=True)
    primes = row(primed("x"), o("="), over("x", sup("d", over("1", "4"))))
    return {
        "b0": [formula(row("K", paren("x", o(","), "y"), o("="), o("⟨"), phi("x"), o(","), phi("y"), o("⟩"))),
               formula(row(i("φ"), o(":"), sup(real, "d"), o("→"), sup(real, "m")))],
        "b1": [formula(series, o("≈"), taylor1), formula(s_is)],
        "b2": [formula(row(exp("s"), o("="), "1", o("+"), "s", o("+"), frac(sup("s", "2"), row("2", o("!"))), o("+"),
                           frac(sup("s", "3"), row("3", o("!"))), o("+"), o("⋯")))],
        "b3": [formula(row(sub("K", "1"), o("="), taylor1)), formula(row(sub("K", "2"), o("="), taylor2)),
               formula(s_is)],
        "b4": [formula(elu), formula(favor)],
        "b5": [formula(row(frac(row(o("|", stretchy="false"), hat("K"), o("−"), exp("s"), o("|", stretchy="false")), exp("s")), o("≈"),
                           sqrt(frac(spread, "m"))))],
        "b6": [formula(row("m", o("="), frac(spread, sup(i("ε"), "2")))), formula(primes)],
    }
