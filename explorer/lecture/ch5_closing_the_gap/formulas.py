"""Chapter 5's formulas: forgetting by decay or gates (S_t = γ_t ⊙ S_{t−1} + φ(k_t)v_tᵀ;
RetNet's γ is one number per head), forgetting by overwriting (the delta rule as the
figure's note writes it), and a row's distance to softmax, which the learned maps are
trained and judged on."""

from __future__ import annotations

from ..mathml import formula, i, kl_row, o, paren, phi, row, sub, t, words


def formulas(lang: str = "en") -> dict:
    s_t, s_prev = sub("S", "t"), sub("S", row("t", o("−"), "1"))
    k_t, v_t, gamma_t, beta_t = sub("k", "t"), sub("v", "t"), sub(i("γ"), "t"), sub(i("β"), "t")
    return {
        "b0": [formula(row(s_t, o("="), gamma_t, o("⊙"), s_prev, o("+"), phi(k_t), t(v_t))),
               formula(row(words("RetNet: "), gamma_t, o("="), i("γ")))],
        "b1": [formula(row(s_t, o("="), sub("a", "t"), paren(i("I", normal=True), o("−"), beta_t, k_t, t(k_t)),
                           s_prev, o("+"), beta_t, k_t, t(v_t)))],
        "b3": [formula(kl_row())],
    }
