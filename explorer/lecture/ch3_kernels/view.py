"""Chapter 3: choosing the kernel: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

import numpy as np

from ..numbers import said_count, say_fixed
from ..view_common import ChapterView, cached_map, head_of, new_view
from . import maths as kernels


def compute(sample, c, progress) -> ChapterView:
    q, k, v, notes = head_of(sample, c)
    view = new_view(3, c, notes)
    d = q.shape[-1]
    # A causal head (SmolLM2's) computes only the pairs j <= i: every sum and profile is over those.
    causal = bool(getattr(sample, "causal", False))
    logits = kernels.logit_summary(q, k, causal)
    view.data["taylor"] = kernels.taylor_curves(logits["s"])
    view.data["logits"] = logits["s"]            # one per (query, key) pair: N² of them
    view.data["series"] = kernels.series_shares(logits["s"])
    profiles = {}
    for label in ("taylor1", "elu1", f"favor_plus_{'orthogonal' if c['orthogonal'] else 'iid'}", "taylor2"):
        fmap = cached_map(label, d, c["m"] if label.startswith("favor_plus") else None, c["seed"])
        prof = kernels.kernel_profile(q, k, fmap, causal=causal)
        profiles[label] = prof
        if prof["nonpositive"]:
            view.notice_items.append(("notice.not_shown_log", {"map": label, "count": prof["nonpositive"],
                                                               "pairs": prof["pairs"]}))
    first = next(iter(profiles.values()))
    if first["shown"] < first["pairs"]:
        view.notice_items.append(("notice.profile_subset", {"shown": first["shown"], "pairs": first["pairs"]}))
    view.data["profiles"] = profiles
    n = q.shape[0]
    wq, wk, _ = kernels.well_conditioned(n, d, c["seed"])
    view.data["rf_well"] = kernels.rf_convergence(wq, wk, seeds=3, causal=causal)
    view.data["rf_real"] = kernels.rf_convergence(q, k, seeds=3, causal=causal)
    view.data["norms"] = {"q": kernels.scaled_norms(q), "k": kernels.scaled_norms(k),
                          "q_well": kernels.scaled_norms(wq), "k_well": kernels.scaled_norms(wk)}
    budget = kernels.favor_budget(q, k, 0.1, causal)
    if budget is None:
        view.notice_items.append(("notice.no_rf_theory", {}))
    else:
        well = kernels.favor_budget(wq, wk, 0.1, causal)
        view.numbers.update(m_required=budget["m_required"], m_required_well=well["m_required"],
                            log10_m_required=float(budget["details"]["log10_m_required"]),
                            log10_m_required_well=float(well["details"]["log10_m_required"]))
    view.data["reverse_kernel"] = [(f"rk.row.{row}.aspect", f"rk.row.{row}.svm", f"rk.row.{row}.linear")
                                   for row in ("goal", "works", "phi", "cost", "price")]
    view.numbers.update({
        "tokens": float(n), "pairs": float(logits["s"].size),
        "s_min": logits["s_min"], "s_max": logits["s_max"],
        "negative_taylor1_fraction": logits["negative_taylor1_fraction"],
        "taylor1_kept_share": view.data["series"]["kept"], "taylor1_dropped_share": view.data["series"]["dropped"],
        "series_tail_share": view.data["series"]["tail"],
        "q_norm_median": float(np.median(view.data["norms"]["q"])),
        "k_norm_median": float(np.median(view.data["norms"]["k"])),
        **{f"kernel_rel_error[{label}]": p["kernel_rel_error"] for label, p in profiles.items()},
        "rf_error_real_m_max_orthogonal": float(view.data["rf_real"]["orthogonal"][-1]),
        "rf_error_well_m_max_orthogonal": float(view.data["rf_well"]["orthogonal"][-1]),
    })
    n = view.numbers
    count = round(n["negative_taylor1_fraction"] * n["pairs"])
    n["negative_taylor1_pairs"] = float(count)
    logit = {"neg": f"{100 * n['negative_taylor1_fraction']:.0f}", "lo": say_fixed(n["s_min"]), "hi": say_fixed(n["s_max"]),
             "count": f"{count:,}", "pairs": f"{n['pairs']:,.0f}"}
    # "Stays positive" only where no pair lies below -1; a share under 1 % is said as a count,
    # so that "0 %" never stands for a few pairs.
    claim = ("ch3.b1.claim_none" if count == 0 else "ch3.b1.claim_count" if n["negative_taylor1_fraction"] < 0.01
             else "ch3.b1.claim")
    view.says["b1"] = {"claim": (claim, logit), "notes": [("ch3.b1.notes", logit)]}
    gap = {"kept": f"{100 * n['taylor1_kept_share']:.0f}", "dropped": f"{100 * n['taylor1_dropped_share']:.0f}",
           "pairs": f"{logits['s'].size:,}"}
    # "Most" only where orders 2 and up carry more than half of the sum.
    most = n["taylor1_dropped_share"] > 0.5 and gap["dropped"] != "50"
    view.says["b2"] = {"claim": ("ch3.b2.claim_most" if most else "ch3.b2.claim_less", gap),
                       "notes": [("ch3.b2.notes", gap)]}
    if "m_required" in n:
        need = {"real": said_count(n["m_required"]), "well": said_count(n["m_required_well"])}
        view.says["b6"] = {"claim": ("ch3.b6.claim", need), "notes": [("ch3.b6.notes", need)]}
    else:           # no variance formula in this build: the claim without its number
        view.says["b6"] = {"claim": ("ch3.b5.claim", {}), "notes": [("ch3.b5.notes", {})]}
    view.notice_builds = {"notice.not_shown_log": ("b3", "b4"), "notice.profile_subset": ("b3", "b4"),
                          "notice.no_rf_theory": ("b6",)}
    return view
