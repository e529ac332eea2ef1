"""Chapter 6: the trade-off: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

from ... import maps as feature_maps
from ..record import HEAD_DIM
from ...views import lecture_common
from ...views.lecture_common import ChapterView, cached_map, trained_hedgehog, map_key, new_view, reads_minilm
from . import maths as tradeoff


def compute(sample, c, progress) -> ChapterView:
    asked = c["layer"]
    layer = min(max(asked, 0), sample.n_layers - 1)
    c["layer"] = layer
    view = new_view(6, c, [("common.no_layer", {"asked": asked, "last": sample.n_layers - 1, "used": layer})]
                if layer != asked and sample.n_layers > 1 else ())
    q, k = sample.q[layer], sample.k[layer]
    d, dv = q.shape[-1], sample.v.shape[-1]
    points = []
    labels = ["identity (q·k)", "Taylor-1", "elu+1", "ReLU", "FAVOR+ (IID)", "FAVOR+ (orthogonal)",
              "trig RFF (orthogonal)", "Taylor-2", "cosFormer"]
    for label in labels:
        m = c["m"] if "FAVOR" in label or "RFF" in label else None
        fmap = cached_map(label, d, m, c["seed"])
        qual = tradeoff.layer_quality(q, k, fmap, key=map_key(label, m, c["seed"]))
        points.append({"label": label, "m": fmap.num_features,
                       "cost": tradeoff.flops_per_token(fmap.num_features, dv), **qual})
    trained = _hedgehog_all(sample, layer, c)
    if trained is not None:
        qual = tradeoff.layer_quality(q, k, trained)
        points.append({"label": "Hedgehog (trained)", "m": trained.num_features,
                       "cost": tradeoff.flops_per_token(trained.num_features, dv), **qual})
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
    head = min(max(c["head"], 0), sample.n_heads - 1)
    c["head"] = head
    road = _roadmap(sample, layer, head, c)
    view.data["roadmap"] = road
    view.notice_items.append(("notice.causal_roadmap", {}))
    if not any(r["id"] == "2025_luna" for r in road):
        view.notice_items.append(("notice.no_luna", {"layer": layer, "head": head}))
    d = sample.q.shape[-1]
    states = tradeoff.state_roadmap(feature_maps.create("elu1", d), d, head)
    view.data["state_roadmap"] = states
    view.data["state_dim"] = d        # the figure's note says the probe is synthetic, of this dimension
    view.numbers.update({f"median_kl[{p['label']}]": p["median_kl"] for p in points})
    view.numbers.update({f"roadmap_kl[{r['id']}]": r["median_kl"] for r in road})
    for r in states:
        view.numbers.update({f"roadmap_recall_{pos}_at_{r['lag']}[{r['id']}]": r[pos] for pos in ("early", "recent")})
    return view


def _hedgehog_all(sample, layer, c):
    """A trained Hedgehog for the whole layer: the latest trained here for every head of it,
    else the one shipped with the app; None when there is neither."""
    if getattr(sample, "model_attentions", None) is None or sample.head_dim != HEAD_DIM:
        return None
    from ...views import learn
    live = learn.cached_layer_map(layer, c["m"] if c["m"] % 2 == 0 else c["m"] + 1)
    if live is not None:
        return live
    try:
        from ...maps.learned import pretrained
    except ImportError:
        return None
    return pretrained("hedgehog", int(layer))


def _roadmap(sample, layer: int, head: int, c) -> list[dict]:
    """The article's 2020 -> 2025 steps measured on one head (the lecture's MiniLM head, the
    one chapter 5 shows when it reads MiniLM): each
    a dict with the step's id, year, map, what it is compared with ("softmax" or "causal
    softmax") and the median row KL. The trained Hedgehog is the one shipped or trained here;
    without one the untrained map is measured and labelled so."""
    q, k = sample.q[layer, head].unsqueeze(0), sample.k[layer, head].unsqueeze(0)
    d = q.shape[-1]
    m = c["m"]
    hh, _ = trained_hedgehog(sample, {**c, "layer": layer, "head": head, "train": False, "steps": 300}, None)
    maps = {"elu+1": feature_maps.create("elu1", d),
            "FAVOR+ (orthogonal)": cached_map("FAVOR+ (orthogonal)", d, m, c["seed"]),
            "sliding window": cached_map("sliding window", d, None, c["seed"])}
    keys = {"elu+1": ("elu+1",), "FAVOR+ (orthogonal)": map_key("FAVOR+ (orthogonal)", m, c["seed"]),
            "sliding window": map_key("sliding window", None, c["seed"]), "LUNA": ("LUNA", "shipped", layer, head)}
    luna = lecture_common.shipped_map("luna", layer, head) if reads_minilm(sample) else None
    return tradeoff.roadmap(q, k, maps, hedgehog=hh, head=head, keys=keys, luna=luna)
