"""Chapter 5: closing the gap: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

from ... import maps as feature_maps
from .. import chapters, text
from ...catalog import FEATURE_MAPS
from ..record import EMBEDDED_MODEL, HEAD_DIM
from ...views.lecture_common import (
    ChapterView, cached_map, head_of, trained_hedgehog, model_of, new_view, reads_minilm,
)
from . import maths as closing

UNTRAINED_HEDGEHOG = FEATURE_MAPS["hedgehog"].pretty     # the catalogue's label: "Hedgehog (untrained: W = I)"


def compute(sample, c, progress) -> ChapterView:
    q, k, v, notes = head_of(sample, c)
    view = new_view(5, c, notes)
    d = q.shape[-1]
    view.data["head_dim"] = d         # the recall probes' dimension: the head's (32 on MiniLM, 64 on SmolLM2)
    view.data["model"] = model_of(sample)    # "Go deeper" opens the learn tab on the same model
    elu = feature_maps.create("elu1", d)
    curves = closing.decay_recall(elu, d, gamma=c["gamma"], strength=c["strength"])
    view.data["recall"] = curves
    view.notice_items.append(("notice.recall_synthetic", {"d": d}))
    gap = closing.recall_gap(curves, 256)
    view.numbers.update({f"recent_minus_early_at_256[{kind}]": g for kind, g in gap.items()})

    lag = closing.OVERWRITE_LAG
    overwrite = closing.overwrite_recall(elu, d, lag, gamma=c["gamma"], strength=c["strength"])
    view.data["overwrite"] = {"lag": lag, "kinds": overwrite}
    for kind, r in overwrite.items():
        view.numbers.update({f"recall_early_at_{lag}[{kind}]": r["early"], f"recall_recent_at_{lag}[{kind}]": r["recent"]})
    depth = closing.hgrn2_depth(elu, d)
    view.data["hgrn2"] = depth
    for layer, lb, mem in zip(depth["layers"], depth["lower_bound"], depth["memory_tokens"]):
        view.numbers.update({f"hgrn2_lower_bound_layer{layer}": float(lb), f"hgrn2_memory_layer{layer}": float(mem)})

    trained, origin = trained_hedgehog(sample, c, progress)
    causal = bool(getattr(sample, "causal", False))
    if trained is None:
        hh = feature_maps.create("hedgehog", d, num_features=c["m"] if c["m"] % 2 == 0 else c["m"] + 1)
        if reads_minilm(sample) or sample.model_attentions is None:
            view.notice_items.append(("notice.hedgehog_untrained", {"layer": c["layer"], "head": c["head"]}))
        elif model_of(sample) in chapters.SHIPPED_MAP_LAYERS:   # say where this model's maps ship
            view.notice_items.append(("notice.hedgehog_untrained_model",
                                      {"layer": c["layer"], "head": c["head"], "model": model_of(sample),
                                       "shipped": chapters.SHIPPED_MAP_LAYERS[model_of(sample)]}))
        else:       # training here is the embedded model's, and no map ships for this one
            view.notice_items.append(("notice.hedgehog_untrained_other", {"model": model_of(sample) or ""}))
        hh_label = UNTRAINED_HEDGEHOG
    else:
        hh, hh_label = trained, "Hedgehog (trained)"
        if origin == "shipped":
            view.notice_items.append(("notice.hedgehog_shipped", {"layer": c["layer"], "head": c["head"]}))
    maps = {"elu+1": elu, "FAVOR+ (orthogonal)": cached_map("FAVOR+ (orthogonal)", d, c["m"], 0),
            hh_label: hh}
    kl = closing.row_kl_by_map(q, k, maps, causal=causal)
    if causal:      # a causal head's softmax sees keys j <= i only: every map is held to that
        view.notice_items.append(("notice.causal_kl", {"model": model_of(sample) or ""}))
    view.data["kl"] = kl
    view.data["kl_causal"] = causal
    view.data["hedgehog_trained"] = trained is not None
    view.data["hedgehog_origin"] = origin
    view.numbers.update({f"mean_kl[{name}]": r["mean"] for name, r in kl.items()})

    view.data["hybrid"] = None
    if getattr(sample, "text", None) and getattr(sample, "model_attentions", None) is not None:
        from ...sources.text import get_model
        loaded = get_model()            # the embedded MiniLM: the hybrid swaps layers of a bert model
        if loaded.family == "bert":
            hybrid_text = sample.text
            if causal:
                # A causal model has no bert layers to swap: the build runs on the embedded
                # MiniLM, which reads English (the Chinese default sentence would be [UNK]).
                default = sample.text in (text.DEFAULT_TEXT, text.DEFAULT_TEXT_ZH)
                hybrid_text = text.DEFAULT_TEXT if default else sample.text
                view.notice_items.append(("notice.hybrid_embedded" if default else "notice.hybrid_embedded_text",
                                          {"model": model_of(sample) or "", "embedded": EMBEDDED_MODEL}))
            name = c["hybrid_map"]
            m = c["m"] if name == "favor_plus" else None
            path = closing.hybrid_curve(loaded, hybrid_text,
                                        lambda i: feature_maps.create(name, HEAD_DIM, num_features=m),
                                        f"{name}:{m}", c["hybrid"], progress=progress)
            view.data["hybrid"] = path
            view.data["hybrid_map"] = name
            view.data["hybrid_model"] = EMBEDDED_MODEL
            view.numbers.update({f"hybrid_cosine_k{p['k']}": p["cosine"] for p in path})
    if view.data["hybrid"] is None:
        view.notice_items.append(("notice.hybrid_no_model", {}))
    return view
