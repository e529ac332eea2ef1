"""Chapter 6: the trade-off: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

import math

import torch

from ... import maps as feature_maps
from ...catalog import map_specs
from ...diagnostics import attention
from .. import view_common as lecture_common
from ..view_common import ChapterView, cached_map, trained_hedgehog, map_memo_key, new_view, reads_minilm
from .. import text
from ..ch2_associativity import maths as associativity
from ..ch4_rnn import maths as rnn
from ..numbers import said_count, say_cosine, say_percent, say_ratio
from . import maths as tradeoff


def compute(sample, c, progress) -> ChapterView:
    asked = c["layer"]
    layer = min(max(asked, 0), sample.n_layers - 1)
    c["layer"] = layer
    view = new_view(6, c, [("common.no_layer", {"asked": asked, "last": sample.n_layers - 1, "used": layer})]
                if layer != asked and sample.n_layers > 1 else ())
    head = min(max(c["head"], 0), sample.n_heads - 1)
    c["head"] = head
    # The plane and the roadmap read the same head, the lecture's (layer, head): one map, one
    # number across the chapter (elu+1's point on the plane is the roadmap's 2020 bar).
    q, k = sample.q[layer, head].unsqueeze(0), sample.k[layer, head].unsqueeze(0)
    d, dv = q.shape[-1], sample.v.shape[-1]
    # A causal model's softmax sees keys j <= i only: every map is held to its causal rows.
    causal = bool(getattr(sample, "causal", False))
    hedgehog, _ = trained_hedgehog(sample, {**c, "layer": layer, "head": head, "train": False, "steps": 300}, None)
    points = []
    labels = ["identity", "taylor1", "elu1", "relu", "favor_plus_iid", "favor_plus_orthogonal",
              "trig_rff_orthogonal", "taylor2", "cosformer"]
    for label in labels:
        m = c["m"] if map_specs()[label].random else None
        fmap = cached_map(label, d, m, c["seed"])
        qual = tradeoff.layer_quality(q, k, fmap, causal=causal, key=map_memo_key(label, m, c["seed"]))
        points.append({"label": label, "m": fmap.num_features,
                       "cost": tradeoff.flops_per_token(fmap.num_features, dv), **qual})
    if hedgehog is not None:
        qual = tradeoff.layer_quality(q, k, hedgehog, causal=causal)
        points.append({"label": "hedgehog_trained", "m": hedgehog.num_features,
                       "cost": tradeoff.flops_per_token(hedgehog.num_features, dv), **qual})
    some, infinite = [], []
    for p in points:
        if p["undefined_rows"] == p["rows"]:
            view.notice_items.append(("notice.undefined_kl_all", {"map": p["label"], "rows": p["rows"]}))
        elif p["mostly_undefined"]:     # the maps tab's rule: a median over a minority of rows is no point
            view.notice_items.append(("notice.undefined_kl_most", {"map": p["label"], "count": p["undefined_rows"],
                                                                   "rows": p["rows"]}))
        elif p["undefined_rows"]:
            some.append((p["label"], p["undefined_rows"]))
        if p["infinite_rows"]:
            infinite.append((p["label"], p["infinite_rows"]))
    if some:        # one line for all of them: a slide has no room for one per map
        view.notice_items.append(("notice.undefined_kl_some", {"maps": tuple(some), "rows": points[0]["rows"]}))
    if infinite:
        view.notice_items.append(("notice.infinite_kl_some", {"maps": tuple(infinite), "rows": points[0]["rows"]}))
    front = tradeoff.pareto_frontier([p["cost"] for p in points], [p["median_kl"] for p in points])
    view.data["points"] = points
    view.data["frontier"] = front
    # How many maps the plane can draw (a finite, positive median KL on its log axis): the
    # slide says it.
    view.numbers["plane_maps"] = float(len(points))
    view.numbers["plane_maps_drawn"] = float(sum(tradeoff.on_log_axis(p["median_kl"]) for p in points))
    view.data["kl_causal"] = causal
    road, road_maps = _roadmap(sample, layer, head, c, hedgehog, causal)
    view.data["roadmap"] = road
    if not causal:          # two kinds of reference on one figure: the notes say which is which
        view.notice_items.append(("notice.causal_roadmap", {}))
    if not any(r["id"] == "2025_luna" for r in road):
        view.notice_items.append(("notice.no_luna", {"layer": layer, "head": head}))
    # The lecture's one recall experiment (chapter 5's): the same d and the same count of keys.
    d = rnn.RECALL_DIM
    states = tradeoff.state_roadmap(feature_maps.create("elu1", d), d, head)
    view.data["state_roadmap"] = states
    view.data["state_dim"] = d        # the figure's note says the probe is synthetic, of this dimension
    view.numbers.update({f"median_kl[{p['label']}]": p["median_kl"] for p in points})
    view.numbers.update({f"roadmap_kl[{r['id']}]": r["median_kl"] for r in road})
    for r in states:
        view.numbers.update({f"roadmap_recall_{pos}_at_{r['lag']}[{r['id']}]": r[pos] for pos in ("early", "recent")})
    _say(view, points, front, road, states, layer, head, d)
    _add_ending(view, sample, layer, head, c, points, road, road_maps)
    return view


def _say(view, points, front, road, states, layer, head, d) -> None:
    """Each build's claim and notes from its own numbers: "below the baseline" is said of the
    steps whose bar is shorter than their 2020 baseline's at the rounding the bars show."""
    names = text.Named((points[i]["label"], None) for i in front)
    causal = all(r["causal"] for r in road)          # a causal model: one reference for every step
    scope = {"layer": layer, "head": head}
    # One map alone on the frontier is as cheap and as close as every other map drawn.
    view.says["b0"] = {"claim": ("ch6.b0.claim_one" if len(front) == 1 else "ch6.b0.claim", {"front": names}),
                       "notes": [("ch6.b0.scope_causal" if causal else "ch6.b0.scope", scope), ("ch6.b0.notes", scope)]}
    shown = {r["id"]: round(r["median_kl"], 2) for r in road}
    base = {r["causal"]: shown[r["id"]] for r in road if r["year"] == 2020}     # one per kind of reference
    later = [r for r in road if r["year"] > 2020 and base.get(r["causal"]) is not None]
    above = [r for r in later if not shown[r["id"]] < base[r["causal"]]]      # NaN (no bar) is never below
    plane_elu = next(p["median_kl"] for p in points if p["label"] == "elu1")
    elu = {**scope, "elu": f"{plane_elu:.2f}", "steps": len(later), "below": len(later) - len(above),
           "above": len(above), "above_names": text.Named(((r["id"], None) for r in above), kind="point")}
    view.data["roadmap_counts"] = {"steps": elu["steps"], "below": elu["below"], "above": elu["above"]}
    notes = [("ch6.b1.notes_causal" if causal else "ch6.b1.notes_kinds", elu), ("ch6.b1.notes_same_head", elu)]
    if above:
        notes.append(("ch6.b1.notes_above", elu))
    # Why a later step can sit above an earlier one (the 2025 hybrid above 2021's FAVOR+).
    window = next((r["window"] for r in road if r["id"] == "2025"), None)
    if window is not None:
        notes.append(("ch6.b1.notes_not_a_race", {"w": int(window)}))
    view.says["b1"] = {"claim": ("ch6.b1.claim_some" if above else "ch6.b1.claim_all", elu), "notes": notes}
    by_kind = {r["kind"]: r for r in states}
    recall = {"lag": states[0]["lag"], "d": d, "de": say_cosine(by_kind["deltanet"]["early"]),
              "ne": say_cosine(by_kind["linear"]["early"])}
    view.says["b2"] = {"claim": ("ch6.b2.claim", recall), "notes": [("ch6.b2.notes", recall)]}
    view.notice_builds = {"notice.undefined_kl_all": ("b0",), "notice.undefined_kl_most": ("b0",),
                          "notice.undefined_kl_some": ("b0",), "notice.infinite_kl_some": ("b0",),
                          "notice.causal_roadmap": ("b1",), "notice.no_luna": ("b1",)}


def _roadmap(sample, layer: int, head: int, c, hh, causal: bool) -> tuple[list[dict], dict]:
    """The article's 2020 -> 2025 steps measured on the lecture's head (the plane's): each a
    dict with the step's id, year, map, what it is compared with ("softmax" or "causal
    softmax"; on a causal model always the latter) and the median row KL. ``hh`` is the
    trained Hedgehog (shipped or trained here); without one the untrained map is measured and
    labelled so. Returned with the elu+1 and Hedgehog maps it measured."""
    q, k = sample.q[layer, head].unsqueeze(0), sample.k[layer, head].unsqueeze(0)
    d = q.shape[-1]
    m = c["m"]
    maps = {"elu1": feature_maps.create("elu1", d),
            "favor_plus_orthogonal": cached_map("favor_plus_orthogonal", d, m, c["seed"]),
            "sliding_window": cached_map("sliding_window", d, None, c["seed"])}
    keys = {"elu1": ("elu1",), "favor_plus_orthogonal": map_memo_key("favor_plus_orthogonal", m, c["seed"]),
            "sliding_window": map_memo_key("sliding_window", None, c["seed"]), "LUNA": ("LUNA", "shipped", layer, head)}
    luna = (lecture_common.shipped_map("luna", layer, head) if reads_minilm(sample)
            else lecture_common.shipped_map("luna", layer, head, model=lecture_common.model_of(sample),
                                            head_dim=sample.head_dim))
    road = tradeoff.roadmap(q, k, maps, hedgehog=hh, head=head, keys=keys, luna=luna, causal_model=causal)
    # The maps the ending draws: the 2020 map and the 2024 learned one, as measured here.
    return road, {"elu1": maps["elu1"], "hedgehog": hh if hh is not None else tradeoff.untrained_hedgehog(d)}


# -- the last three builds: the talk ends as the article does, from what the chapter has just
#    measured (b3 the recap, b4 the hologram and the impression, b5 the retrieval caveat, b6 the
#    hybrid future) -------

# The recap's five steps (the article's summary), in its order: text keys ch6.recap.<step>.step
# (the step) and ch6.recap.<step>.measured (what this lecture measured for it).
RECAP_STEPS = ("regression", "split", "associativity", "rnn", "quality")
INNER = "taylor2"           # the hybrid's linear part (maps.hybrid.SlidingWindow's default)


def _add_ending(view, sample, layer: int, head: int, c: dict, points: list[dict], road: list[dict], maps: dict) -> None:
    """The ending's builds on head (``layer``, ``head``) of ``sample``: ``points`` are the plane's
    maps, ``road`` the roadmap's points, ``maps`` the elu+1 and Hedgehog maps it measured."""
    q, k = sample.q[layer, head].unsqueeze(0), sample.k[layer, head].unsqueeze(0)
    d, dv, n = q.shape[-1], sample.v.shape[-1], q.shape[-2]
    by_id = {r["id"]: r for r in road}
    kept = tradeoff.kept_numbers(tradeoff.ARTICLE_N, d, maps["elu1"].num_features, dv)
    here = tradeoff.kept_numbers(n, d, maps["elu1"].num_features, dv)
    # A causal model's map holds the pairs j <= i only: the hologram draws (and counts) those.
    pairs_here = n * (n + 1) // 2 if by_id["2020"]["causal"] else here["pairs"]
    view.numbers.update({"state_numbers": float(kept["state"]), "kv_numbers_article": float(kept["kv_cache"]),
                         "pairs_article": float(kept["pairs"]), "pairs_here": float(pairs_here),
                         "tokens": float(n)})
    _recap(view, sample, q, k, layer, head, c, points)
    _future(view, q, k, d, dv, c, by_id)
    _hologram(view, q, k, by_id, maps)
    _retrieval(view)


def _recap(view, sample, q, k, layer, head, c, points) -> None:
    """Each step of the article's summary with its number, measured on this text or counted by
    the FLOP model: the model's weights are exp-kernel weights, Taylor-2 splits its kernel into
    phi(q).phi(k), the article's FLOP ratio, the state's size, and the best map's distance."""
    n = view.numbers
    own = getattr(sample, "model_attentions", None)
    if own is not None:
        mine = attention.softmax_map(q, k, causal=bool(getattr(sample, "causal", False)))[0].double()
        n["recap_model_max_diff"] = float((mine - own[layer, head].double()).abs().max())
    taylor = cached_map(INNER, q.shape[-1], None, c["seed"])
    n["recap_taylor2_features"] = float(taylor.num_features)
    n["recap_taylor2_split_error"] = tradeoff.kernel_split_error(q, k, taylor, lambda s: 1 + s + s * s / 2)
    n["recap_article_flop_ratio"] = float(associativity.article_ratio()["model_ratio"])
    drawn = [p for p in points if math.isfinite(p["median_kl"])]
    best = min(drawn, key=lambda p: p["median_kl"])
    elu = next(p for p in points if p["label"] == "elu1")
    n["recap_best_kl"] = best["median_kl"]
    values = {"diff": f"{n['recap_model_max_diff']:.1e}" if own is not None else "",
              "m": f"{n['recap_taylor2_features']:.0f}", "err": f"{n['recap_taylor2_split_error']:.1e}",
              "ratio": say_ratio(n["recap_article_flop_ratio"]), "d": q.shape[-1],
              "state": said_count(n["state_numbers"]), "kv": said_count(n["kv_numbers_article"]),
              "layer": layer, "head": head, "elu": f"{elu['median_kl']:.2f}",
              "best": text.Named(((best["label"], None),)), "bkl": f"{best['median_kl']:.2f}"}
    # Each row: the step, and what was measured for it (on a sample with no model weights, the
    # first step says there is nothing to compare with).
    rows = [(f"ch6.recap.{step}.step", f"ch6.recap.{step}.measured") for step in RECAP_STEPS]
    if own is None:
        rows[0] = (rows[0][0], "ch6.recap.regression.no_model")
    view.data["recap"] = {"rows": rows, "values": values}
    view.says["b3"] = {"claim": ("ch6.b3.claim", values), "notes": [("ch6.b3.notes", values)]}


# The hybrid future measured on the whole causal model: SmolLM2 with every layer linearized
# by its shipped Hedgehog maps, alone and beside exact keys (a window and the attention sink).
MODEL_SETS = {"linear": "hedgehog:0", "hybrid": "hedgehog:16:1"}


def _future(view, q, k, d, dv, c, by_id) -> None:
    """The 2025 hybrid: on the whole causal model where it is installed (``_future_model``),
    else on this head."""
    if not _future_model(view):
        _future_head(view, q, k, d, dv, c, by_id)


def _future_model(view) -> bool:
    """The hybrid on SmolLM2 itself: every layer linear, with the shipped Hedgehog maps alone
    and beside its exact keys, judged by perplexity on held-out text against the original (the
    learn tab's Linearize section, the same numbers); and what one head costs per token at the
    article's long context. False, and nothing written, where SmolLM2 is not ready."""
    from ..view import causal_model_ready
    if causal_model_ready() is None:
        return False
    from ...linearize.maps import layer_maps
    from ...views import linearize as lin
    judged = {kind: lin.judge(set_id, 0) for kind, set_id in MODEL_SETS.items()}
    kind, window, sinks = lin.parse_set(MODEL_SETS["hybrid"])
    maps = layer_maps(kind, window, sinks=sinks)
    costs = tradeoff.exact_keys_costs(tradeoff.ARTICLE_N, maps.head_dim, maps.head_dim, window + sinks,
                                      maps.num_features)
    quality = {"linear": judged["linear"].rows[1]["perplexity"], "hybrid": judged["hybrid"].rows[1]["perplexity"],
               "softmax": judged["hybrid"].rows[0]["perplexity"]}
    first = judged["hybrid"]
    view.data["future"] = {"scope": "model", "window": window, "sinks": sinks, "quality": quality, "flops": costs,
                           "texts": first.texts, "tokens": first.tokens, "max_tokens": lin.SAMPLE_TOKENS}
    n = view.numbers
    n.update({"future_ppl_linear": quality["linear"], "future_ppl_hybrid": quality["hybrid"],
              "future_ppl_original": quality["softmax"], "future_window": float(window),
              "future_sinks": float(sinks), "future_exact_keys": float(window + sinks),
              "future_features": float(maps.num_features), "future_flops_softmax": costs["softmax"],
              "future_flops_hybrid": costs["hybrid"], "future_flops_linear": costs["linear"],
              "future_saving": costs["softmax"] / costs["hybrid"]})
    values = {"w": window, "e": window + sinks, "m": maps.num_features, "ph": f"{quality['hybrid']:.1f}",
              "pl": f"{quality['linear']:.1f}", "po": f"{quality['softmax']:.1f}", "texts": first.texts,
              "tokens": first.tokens, "max": lin.SAMPLE_TOKENS, "x": say_ratio(n["future_saving"]),
              "fs": said_count(costs["softmax"]), "fh": said_count(costs["hybrid"]), "fl": said_count(costs["linear"])}
    closer = values["ph"] != values["pl"] and quality["hybrid"] < quality["linear"]
    view.says["b6"] = {"claim": ("ch6.b6.claim_model_closer" if closer else "ch6.b6.claim_model_not_closer", values),
                       "notes": [("ch6.b6.notes_model", values)]}
    return True


def _future_head(view, q, k, d, dv, c, by_id) -> None:
    """The hybrid on this head: how close it comes to softmax against its linear part alone
    (median row KL), and what each costs per token at the article's long context."""
    point = by_id["2025"]
    inner = cached_map(INNER, d, None, c["seed"])
    alone = tradeoff.layer_quality(q, k, inner, causal=point["causal"], key=map_memo_key(INNER, None, c["seed"]))["median_kl"]
    costs = tradeoff.hybrid_costs(tradeoff.ARTICLE_N, d, dv, point["window"], inner.num_features)
    n = view.numbers
    n.update({"future_kl_linear": alone, "future_flops_softmax": costs["softmax"],
              "future_flops_hybrid": costs["hybrid"], "future_flops_linear": costs["linear"],
              "future_saving": costs["softmax"] / costs["hybrid"]})
    kl = {"linear": alone, "hybrid": point["median_kl"], "softmax": 0.0}      # softmax is its own reference
    from ..view import causal_model_ready
    view.data["future"] = {"scope": "head", "window": point["window"], "quality": kl, "flops": costs,
                           "model_missing": causal_model_ready() is None}     # why not the whole model
    values = {"layer": view.controls["layer"], "head": view.controls["head"], "w": point["window"],
              "kh": f"{point['median_kl']:.2f}", "kl": f"{alone:.2f}", "m": inner.num_features,
              "x": say_ratio(n["future_saving"]), "fs": said_count(costs["softmax"]),
              "fh": said_count(costs["hybrid"]), "fl": said_count(costs["linear"])}
    closer = round(point["median_kl"], 2) < round(alone, 2)
    view.says["b6"] = {"claim": ("ch6.b6.claim_closer" if closer else "ch6.b6.claim_not_closer", values),
                       "notes": [("ch6.b6.notes", values)]}


@torch.inference_mode()
def _hologram(view, q, k, by_id, maps) -> None:
    """Softmax's map of this head beside the 2020 map's and the 2024 learned map's: every pair
    kept exactly, against two impressions of it, with their row KL from the roadmap."""
    causal = bool(by_id["2020"]["causal"])          # the roadmap's reference: a causal model's rows are causal
    exact = attention.softmax_map(q, k, causal=causal)[0].double().numpy()
    impressions = [(pid, attention.kernel_map(q, k, maps[name], causal=causal)[0].double().numpy())
                   for pid, name in (("2020", "elu1"), ("2024_hedgehog", "hedgehog"))]
    view.data["hologram"] = {"softmax": exact, "maps": impressions,
                             "kl": {pid: by_id[pid]["median_kl"] for pid, _ in impressions},
                             "trained": bool(by_id["2024_hedgehog"].get("trained"))}
    n = view.numbers
    values = {"p": said_count(n["pairs_here"]), "n": f"{n['tokens']:.0f}", "pa": said_count(n["pairs_article"]),
              "st": said_count(n["state_numbers"]), "k0": f"{by_id['2020']['median_kl']:.2f}",
              "k1": f"{by_id['2024_hedgehog']['median_kl']:.2f}"}
    view.says["b4"] = {"claim": ("ch6.b4.claim", values), "notes": [("ch6.b4.notes", values)]}


def _retrieval(view) -> None:
    """The article's caveat before its future: asked for one of P stored pairs, softmax reads
    its KV cache and finds it; a linear state of d x d numbers loses the pairs once P passes d.
    "Precise retrieval stays softmax's" is said only when softmax recalls more than both states
    at the largest P."""
    found = tradeoff.retrieval()
    pairs, recalled, d = found["pairs"], found["recalled"], found["d"]
    view.data["retrieval"] = found
    n = view.numbers
    for reader, shares in recalled.items():
        n.update({f"retrieved_of_{p}[{reader}]": share for p, share in zip(pairs, shares)})
    n["retrieval_state_numbers"] = float(d * d + d)          # S (m x d_v) and z (m), elu+1's m = d
    n["retrieval_deltanet_pairs"] = recalled["deltanet"][-1] * pairs[-1]
    last = {reader: shares[-1] for reader, shares in recalled.items()}
    values = {"p": f"{pairs[-1]:,}", "p0": f"{pairs[0]:,}", "d": d, "s": say_percent(last["softmax"]),
              "n": say_percent(last["linear"]), "n0": say_percent(recalled["linear"][0]),
              "dn": say_percent(last["deltanet"]), "dc": f"{n['retrieval_deltanet_pairs']:.0f}",
              "st": said_count(n["retrieval_state_numbers"])}
    stays = last["softmax"] > max(last["linear"], last["deltanet"])
    view.says["b5"] = {"claim": ("ch6.b5.claim" if stays else "ch6.b5.claim_state_keeps_up", values),
                       "notes": [("ch6.b5.notes", values)]}
