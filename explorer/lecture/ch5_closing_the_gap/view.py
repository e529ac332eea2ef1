"""Chapter 5: closing the gap: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

from ... import maps as feature_maps
from .. import chapters, text
from ...catalog import CAUSAL_MODEL
from ..record import EMBEDDED_MODEL, HEAD_DIM, LECTURE_HEAD, LECTURE_LAYER
from ..view_common import (
    ChapterView, cached_map, head_of, trained_hedgehog, model_of, new_view, reads_minilm, shipped_map,
)
from ..ch4_rnn import maths as rnn
from . import LINEARIZED_KS, LINEARIZED_SETS

WINDOW_SET = LINEARIZED_SETS[-1]          # the set with exact keys: its window and sinks are said
from ..memo import LRU
from ..numbers import say_cosine
from . import maths as closing

UNTRAINED_HEDGEHOG = "hedgehog"      # the catalogue's id of the untrained map, W = I


def compute(sample, c, progress) -> ChapterView:
    q, k, v, notes = head_of(sample, c)
    view = new_view(5, c, notes)
    d = q.shape[-1]
    probe_d = rnn.RECALL_DIM
    view.data["head_dim"] = probe_d   # the recall probes' dimension: the lecture's one recall experiment
    view.data["model"] = model_of(sample)    # "Go deeper" opens the learn tab on the same model
    elu = feature_maps.create("elu1", d)
    probe = feature_maps.create("elu1", probe_d)
    curves = closing.decay_recall(probe, probe_d, gamma=c["gamma"], strength=c["strength"])
    view.data["recall"] = curves
    view.notice_items.append(("notice.recall_synthetic", {"d": probe_d}))
    gap = closing.recall_gap(curves, 256)
    view.numbers.update({f"recent_minus_early_at_256[{kind}]": g for kind, g in gap.items()})

    lag = closing.OVERWRITE_LAG
    overwrite = closing.overwrite_recall(probe, probe_d, lag, gamma=c["gamma"], strength=c["strength"])
    view.data["overwrite"] = {"lag": lag, "kinds": overwrite}
    for kind, r in overwrite.items():
        view.numbers.update({f"recall_early_at_{lag}[{kind}]": r["early"], f"recall_recent_at_{lag}[{kind}]": r["recent"]})
    depth = closing.hgrn2_depth(probe, probe_d)
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
        hh, hh_label = trained, "hedgehog_trained"
        if origin == "shipped":
            view.notice_items.append(("notice.hedgehog_shipped", {"layer": c["layer"], "head": c["head"]}))
    maps = {"elu1": elu, "favor_plus_orthogonal": cached_map("favor_plus_orthogonal", d, c["m"], 0),
            hh_label: hh}
    kl = closing.row_kl_by_map(q, k, maps, causal=causal)
    if causal:      # a causal head's softmax sees keys j <= i only: every map is held to that
        view.notice_items.append(("notice.causal_kl", {"model": model_of(sample) or ""}))
    view.data["kl"] = kl
    view.data["kl_causal"] = causal
    view.data["hedgehog_trained"] = trained is not None
    view.data["hedgehog_origin"] = origin
    view.numbers.update({f"mean_kl[{name}]": r["mean"] for name, r in kl.items()})
    # What Hedgehog copies from softmax, on the same head: spiky and monotone rows.
    shape = closing.row_shape_by_map(q, k, {"elu1": elu, hh_label: hh}, causal=causal)
    view.data["row_shape"] = shape
    view.data["row_shape_hedgehog"] = hh_label
    view.numbers["shape_rows"] = float(shape["softmax"]["rows"])
    for name, r in shape.items():
        view.numbers.update({f"row_entropy[{name}]": r["entropy"], f"row_spearman[{name}]": r["spearman"]})

    _luna(view, sample, c, q, k, causal)

    view.data["hybrid"] = None
    view.data["linearized"] = None
    if causal and model_of(sample) == CAUSAL_MODEL["name"]:
        _linearized(view)
    elif getattr(sample, "text", None) and getattr(sample, "model_attentions", None) is not None:
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
    # Hybrids drawn on MiniLM because SmolLM2 is absent: the build says so, not only a notice.
    from ..view import causal_model_ready
    view.data["model_missing"] = view.data["linearized"] is None and causal_model_ready() is None
    if view.data["hybrid"] is None and view.data["linearized"] is None:
        view.notice_items.append(("notice.hybrid_no_model", {}))
    _say(view, lag, probe_d, kl, hh_label)
    _say_shape(view, shape, hh_label)
    _say_luna(view)
    return view


def _linearized(view) -> None:
    """The hybrid build on the causal model itself: SmolLM2 with k of its layers kept softmax
    (evenly spaced) and the rest linearized with the shipped maps, judged by perplexity on
    held-out English and Chinese text (the learn tab's Linearize section, the same numbers)."""
    from ...views import linearize as lin
    curves, first = _LINEARIZED.get("curves", _linearized_curves)
    view.data["linearized"] = {"curves": curves, "original": first.rows[0]["perplexity"], "layers": lin.LAYERS,
                               "tokens": first.tokens, "texts": first.texts, "max_tokens": lin.SAMPLE_TOKENS,
                               "window": WINDOW_SET}
    view.numbers["linearized_original"] = first.rows[0]["perplexity"]
    _, window, sinks = WINDOW_SET.split(":")
    view.numbers.update({"linearized_window": float(window), "linearized_sinks": float(sinks)})
    for set_id, points in curves.items():
        view.numbers.update({f"linearized_ppl_k{p['k']}[{set_id}]": p["perplexity"] for p in points})


# The curves depend on no control of the chapter: judged once (15 forwards of the model), not
# again each time a control redraws the chapter.
_LINEARIZED = LRU(1)


def _linearized_curves():
    from ...views import linearize as lin
    curves = {}
    for set_id in LINEARIZED_SETS:
        judged = [lin.judge(set_id, k) for k in LINEARIZED_KS]
        curves[set_id] = [{"k": j.keep, "perplexity": j.rows[1]["perplexity"]} for j in judged]
    return curves, judged[0]


def _within(curves: dict, original: float) -> dict:
    """Per set (kelu, khh, khw), its smallest measured k whose perplexity is within 10 % of the
    original's (k = all layers always is: the original itself)."""
    names = {"elu1:0": "kelu", "hedgehog:0": "khh", WINDOW_SET: "khw"}
    return {names[set_id]: min(p["k"] for p in points if p["perplexity"] <= 1.1 * original)
            for set_id, points in curves.items()}


def _luna(view, sample, c, q, k, causal: bool) -> None:
    """LUNA's build: the shipped trained LUNA map against softmax, beside the trained Hedgehog
    and elu+1, row by row. LUNA ships for the embedded MiniLM's layer 2 and for SmolLM2's
    layer 3 (fitted there to its causal softmax): on a head it ships for, the build reads the
    chapter's head (causal rows on the causal model); elsewhere (another layer or model) it
    reads the embedded MiniLM's lecture head on the same text (the English sentence where the
    text is the default one) and says so. Without a text, no build."""
    view.data["luna"] = None
    layer, head = c["layer"], c["head"]
    model = model_of(sample) or EMBEDDED_MODEL
    on_head = getattr(sample, "model_attentions", None) is not None
    luna = shipped_map("luna", layer, head, model=model, head_dim=q.shape[-1]) if on_head else None
    hh = shipped_map("hedgehog", layer, head, model=model, head_dim=q.shape[-1]) if luna is not None else None
    if luna is None:
        if not getattr(sample, "text", None) or getattr(sample, "model_attentions", None) is None:
            view.notice_items.append(("notice.luna_no_text", {}))
            return
        from ...views.common import load_sample
        default = sample.text in (text.DEFAULT_TEXT, text.DEFAULT_TEXT_ZH)
        sample = load_sample("text", text=text.DEFAULT_TEXT if default else sample.text)   # the embedded MiniLM
        layer, head, causal = LECTURE_LAYER, LECTURE_HEAD, False
        luna = shipped_map("luna", layer, head)
        if luna is None:                    # a build without shipped maps
            view.notice_items.append(("notice.luna_none", {}))
            return
        view.notice_items.append(("notice.luna_embedded", {"model": model, "layer": layer, "head": head,
                                                           "embedded": EMBEDDED_MODEL}))
        q, k = sample.q[layer, head], sample.k[layer, head]
        hh = shipped_map("hedgehog", layer, head)
    maps = {"elu1": feature_maps.create("elu1", q.shape[-1])}
    if hh is not None:
        maps["hedgehog_trained"] = hh
    maps["luna_trained"] = luna
    kl = closing.row_kl_by_map(q.double(), k.double(), maps, causal=causal)      # float64 throughout
    view.data["luna"] = {"kl": kl, "tokens": list(sample.tokens), "layer": int(layer), "head": int(head),
                         "causal": bool(causal), "model": model_of(sample) or EMBEDDED_MODEL}
    counted = kl["luna_trained"]["counted"]          # causal: the first row (one key, KL 0) is not counted
    view.numbers.update({"luna_layer": float(layer), "luna_head": float(head), "luna_queries": float(counted.sum())})
    view.numbers.update({f"luna_mean_kl[{name}]": r["mean"] for name, r in kl.items()})
    if hh is not None:
        below = kl["luna_trained"]["kl"][..., counted] < kl["hedgehog_trained"]["kl"][..., counted]
        view.numbers["luna_queries_below_hedgehog"] = float(below.sum())


def _say_luna(view) -> None:
    """LUNA's claim: "below Hedgehog's" only where its mean row KL is lower at the rounding
    written; the two values otherwise; the build's purpose alone where it has no numbers."""
    luna = view.data.get("luna")
    if not luna or "hedgehog_trained" not in luna["kl"]:
        view.says["b5"] = {"claim": ("ch5.b5.claim_none", {}), "notes": [("ch5.b5.notes_none", {})]}
        return
    kl = luna["kl"]
    values = {"luna": f"{kl['luna_trained']['mean']:.2f}", "hh": f"{kl['hedgehog_trained']['mean']:.2f}",
              "elu": f"{kl['elu1']['mean']:.2f}", "layer": luna["layer"], "head": luna["head"],
              "below": int(view.numbers["luna_queries_below_hedgehog"]), "queries": int(view.numbers["luna_queries"])}
    lower = kl["luna_trained"]["mean"] < kl["hedgehog_trained"]["mean"] and values["luna"] != values["hh"]
    view.says["b5"] = {"claim": ("ch5.b5.claim_below" if lower else "ch5.b5.claim_not_below", values),
                       "notes": [("ch5.b5.notes", values)]}


def _say(view, lag: int, probe_d: int, kl: dict, hh_label: str) -> None:
    """Each build's claim and notes from its own numbers; a comparison is said only where
    the numbers make it true."""
    kinds = view.data["overwrite"]["kinds"]
    over = {"lag": lag, "d": probe_d, "de": say_cosine(kinds["deltanet"]["early"]),
            "dr": say_cosine(kinds["deltanet"]["recent"]), "ne": say_cosine(kinds["linear"]["early"]),
            "nr": say_cosine(kinds["linear"]["recent"])}
    better = kinds["deltanet"]["early"] > kinds["linear"]["early"] and over["de"] != over["ne"]
    view.says["b1"] = {"claim": ("ch5.b1.claim_better" if better else "ch5.b1.claim_worse", over),
                       "notes": [("ch5.b1.notes", over)]}
    depth = view.data["hgrn2"]
    floors = {"lag": depth["lag"], "first": say_cosine(depth["early"][0]), "last": say_cosine(depth["early"][-1]),
              "top": int(depth["layers"][-1])}
    view.says["b2"] = {"claim": ("ch5.b2.claim", floors), "notes": [("ch5.b2.notes", {})]}
    values = {"values": text.Named((name, f"{r['mean']:.2f}") for name, r in kl.items())}
    hh, elu = kl[hh_label]["mean"], kl["elu1"]["mean"]
    quality = {"hh": f"{hh:.2f}", "elu": f"{elu:.2f}"}
    below = hh < elu and quality["hh"] != quality["elu"]
    view.says["b3"] = {"claim": ("ch5.b3.claim_better" if below else "ch5.b3.claim_worse", quality),
                       "notes": [("ch5.b3.notes", values)]}
    path = view.data.get("hybrid")
    linear = view.data.get("linearized")
    if linear:
        ppl = {set_id: points[0]["perplexity"] for set_id, points in linear["curves"].items()}
        orig = linear["original"]
        _, window, sinks = linear["window"].split(":")
        said = {"layers": linear["layers"], "orig": f"{orig:.1f}", "elu": f"{ppl['elu1:0']:.1f}",
                "hh": f"{ppl['hedgehog:0']:.1f}", "hw": f"{ppl[WINDOW_SET]:.1f}", "texts": linear["texts"],
                "w": int(window), "s": int(sinks),
                "tokens": linear["tokens"], "ks": ", ".join(str(k) for k in LINEARIZED_KS),
                **_within(linear["curves"], orig)}
        view.says["b6"] = {"claim": ("ch5.b6.claim_linearized", said), "notes": [("ch5.b6.notes_linearized", said)]}
    elif path:
        by_k = {p["k"]: p["cosine"] for p in path}
        layers = max(by_k)
        half = layers // 2
        hybrid = {"layers": layers, "k1": 1, "half": half, "c0": f"{by_k[0]:.2f}", "c1": f"{by_k.get(1, by_k[0]):.2f}",
                  "chalf": f"{by_k[half]:.2f}", "call": f"{by_k[layers]:.2f}"}
        view.says["b6"] = {"claim": ("ch5.b6.claim", hybrid), "notes": [("ch5.b6.notes", hybrid)]}
    else:
        view.says["b6"] = {"claim": ("ch5.b6.claim_none", {}), "notes": [("ch5.b6.notes_none", {})]}
    learned = ("b3", "b4")        # the builds that show the learned map
    view.notice_builds = {"notice.recall_synthetic": ("b0", "b1", "b2"), "notice.hedgehog_untrained": learned,
                          "notice.hedgehog_untrained_model": learned, "notice.hedgehog_untrained_other": learned,
                          "notice.hedgehog_shipped": learned, "notice.causal_kl": ("b3",),
                          "notice.luna_embedded": ("b5",), "notice.luna_no_text": ("b5",), "notice.luna_none": ("b5",),
                          "notice.hybrid_embedded": ("b6",), "notice.hybrid_embedded_text": ("b6",),
                          "notice.hybrid_no_model": ("b6",)}


def _say_shape(view, shape: dict, hh_label: str) -> None:
    """What the spiky-and-monotone build says: "spikier and more monotone" only where
    Hedgehog's rows have the lower entropy and the higher rank correlation than elu+1's, at
    the rounding written; the values alone otherwise."""
    said = {name: (f"{r['entropy']:.2f}", f"{r['spearman']:.2f}") for name, r in shape.items()}
    values = {"sm": said["softmax"][0], "srho": said["softmax"][1], "hh": said[hh_label][0],
              "hrho": said[hh_label][1], "elu": said["elu1"][0], "erho": said["elu1"][1]}
    hh, elu = shape[hh_label], shape["elu1"]
    spikier = hh["entropy"] < elu["entropy"] and values["hh"] != values["elu"]
    monotone = hh["spearman"] > elu["spearman"] and values["hrho"] != values["erho"]
    notes = {"entropy": text.Named((name, e) for name, (e, _) in said.items()),
             "spearman": text.Named((name, r) for name, (_, r) in said.items()), "srho": values["srho"]}
    view.says["b4"] = {"claim": ("ch5.b4.claim_both" if spikier and monotone else "ch5.b4.claim_values", values),
                       "notes": [("ch5.b4.notes", notes)]}
