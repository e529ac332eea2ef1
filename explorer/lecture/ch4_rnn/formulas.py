"""Chapter 4's formulas: causal linear attention as an RNN, in the figure's symbols (step t):
the state S_t and the normaliser z_t, each one sum that grows by one term a step, and the
read-out o_t; the state's size against a KV cache's; the state as the sum it never forgets."""

from __future__ import annotations

from ..mathml import formula, frac, i, o, phi, phi_t, row, sub, sup, t, total


def formulas(lang: str = "en") -> dict:
    before = row("t", o("−"), "1")
    s_t, s_prev, z_t, z_prev = sub("S", "t"), sub("S", before), sub("z", "t"), sub("z", before)
    k_t, v_t, q_t = sub("k", "t"), sub("v", "t"), sub("q", "t")
    real = i("ℝ", normal=True)
    return {
        "b0": [formula(row(s_t, o("="), s_prev, o("+"), phi(k_t), t(v_t))),
               formula(row(z_t, o("="), z_prev, o("+"), phi(k_t))),
               formula(row(sub("o", "t"), o("="), frac(row(phi_t(q_t), s_t), row(phi_t(q_t), z_t))))],
        "b1": [formula(row(s_t, o("∈"), sup(real, row("m", o("×"), "d")), o(","), z_t, o("∈"), sup(real, "m"))),
               formula(row("K", o(","), "V", o("∈"), sup(real, row("t", o("×"), "d"))))],
        "b2": [formula(row(s_t, o("="), total(row("j", o("≤"), "t"), phi(sub("k", "j")), t(sub("v", "j")))))],
    }
