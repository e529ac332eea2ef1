"""What the learn tab says in words about a result: where it was judged (``scope``), what was
trained and how it compares (``learn_summary``, ``ordering``) and which maps the hybrids may use
(``map_status``). Messages only (``explorer.text``): the page says them in its language at the
edge, so one result serves both languages. ``learn_tab`` shows them.
"""

from __future__ import annotations

import math

from .. import catalog
from ..text import Joined, Message, ModelName
from .learn_base import LEARNED_LABELS, N_HEADS, N_LAYERS, _learn_figures_and_views


def _seeds(seeds) -> Joined:
    """Seeds one after the other ("0, 1, 2"; "0、1、2" in Chinese)."""
    return Joined(map(str, seeds), "learn.seed_sep")


def scope(view) -> Message:
    if view.all_heads:
        layers, heads = view.kl_ratio.shape
        return Message("learn.scope_all", count=layers * heads, layers=layers, heads=heads)
    if view.whole_layer:
        return Message("learn.scope_layer", layer=view.layer, heads=view.kl_ratio.shape[1])
    return Message("learn.scope_one", layer=view.layer, head=view.head)


def ordering(view) -> Message | str:
    """Which map is closest to softmax, said only where the gap is outside seed noise
    (``views.learn_result.ranking``); otherwise that the two are within it, or that one seed (or a
    loaded map) gives no spread to judge by."""
    _, lv = _learn_figures_and_views()
    best, second, apart = lv.ranking(lv.labelled_rows(view.rows))
    if second is None:
        return ""
    values = dict(best=best["map"], second=second["map"], kl=f"{best['kl']:.3g}", kl2=f"{second['kl']:.3g}",
                  sd=f"{best['kl_sd']:.2g}", sd2=f"{second['kl_sd']:.2g}")
    if apart:
        return Message("learn.order_apart", **values)
    if math.isnan(best["kl_sd"]) or math.isnan(second["kl_sd"]):
        return Message("learn.order_one_seed", **values)
    return Message("learn.order_noise", **values)


def learn_summary(view) -> Joined:
    """What was trained (or loaded), how it was judged and where the map now serves: messages,
    said at the edge."""
    name = LEARNED_LABELS[view.kind]
    seeds = _seeds(view.seeds)
    if view.origin == "trained":
        source = [Message("learn.summary_trained", map=name, count=view.train_count, steps=view.steps,
                          seconds=f"{view.seconds:.1f}", n=len(view.seeds), seeds=seeds, seed=view.seed,
                          first=f"{view.losses[0]:.3f}", last=f"{view.losses[-1]:.3f}")]
        if view.same_every_seed:
            names = Joined((LEARNED_LABELS[k] for k in view.same_every_seed), "learn.seed_sep")
            source += [" ", Message("learn.summary_same_start", maps=names)]
    else:
        source = [Message("learn.summary_loaded", map=name, origin=view.origin[:80]), " ",
                  Message("learn.summary_loaded_seeds", seeds=seeds)]
    by_name = {r["name"]: r for r in view.rows}
    ratio = by_name["elu1"]["kl_median"] / by_name[view.kind]["kl_median"]
    where = scope(view)
    evaluated = Message("learn.summary_eval", count=view.heldout_count, scope=where, seeds=seeds,
                        entropy=f"{view.softmax_entropy:.2f}", map=name, ratio=f"{ratio:.1f}")
    texts = []
    if view.own_texts:
        texts = [" ", (Message("learn.own_texts", train=view.train_count, heldout=view.heldout_count)
                       if view.origin == "trained" else Message("learn.own_heldout", heldout=view.heldout_count))]
    session = Message("learn.session_note", map=catalog.hybrid_map_label(view.kind), scope=where)
    model = Message("learn.summary_causal" if view.causal else "learn.summary_model", model=ModelName(view.model))
    return Joined([*source, " ", evaluated, *texts, " ", model, "\n\n", ordering(view), "\n\n", session])


def map_status(trained: dict | None, origin: str = "") -> Message | Joined:
    if not trained:
        return Message("learn.status_none", count=N_LAYERS * N_HEADS)
    ready = [Message("learn.status_ready", map=catalog.hybrid_map_label(kind), count=N_LAYERS * N_HEADS,
                     m=fmap.num_features, origin=origin or "—") for kind, fmap in trained.items()]
    return Joined([part for i, message in enumerate(ready) for part in ((["\n\n"] if i else []) + [message])])
