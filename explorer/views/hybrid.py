"""Hybrid models for the "Learned maps & hybrids" tab: some layers of the embedded MiniLM made
linear, the cost measured on its sentence embeddings and attention
(``explorer.experiments.hybrids``). Only MiniLM: the hybrid swaps the attention of
BERT-family layers. No gradio here."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..checks import check_positive_int
from ..experiments import hybrids
from ..maps import create
from ..measure import cost
from ..text import Message
from .common import model_shape
from .frames import rows_frame
from .learn import HYBRID_MAPS, LEARNED_KINDS, _take, check_minilm_only, heldout_texts, hybrid_map_label


@dataclass
class HybridResult:
    """Embedding cosine to the original model and per-layer attention drift.

    ``path`` has one entry per configuration shown: for the greedy search, k = 0..budget
    softmax layers kept; for chosen layers, the one configuration.
    """

    map_name: str
    map_label: str
    mode: str                     # "layers" or "greedy"
    linear_layers: tuple
    kept_softmax: tuple
    cosine_mean: float
    cosine_min: float
    drift: list                   # per layer, mean row total variation against the original (0..1)
    path: list                    # dicts: k, kept, linear, cosine_mean, cosine_min
    n_layers: int
    n_texts: int
    seconds: float


# hybrids.linear_layers changes the model only for the thread that installed its hooks, so
# hybrids run on the shared model while other tabs keep reading it. One experiment at a
# time: each is a few hundred forward passes on a 2-core machine.
_hybrid_lock = threading.Lock()
_references: dict = {}


def _hybrid_model():
    from ..sources.text import get_model
    return get_model()


def _map_for_layer(map_name: str, trained_map, num_features: int, seed: int, n_layers: int, n_heads: int,
                   head_dim: int):
    if map_name in LEARNED_KINDS:
        name = "Hedgehog" if map_name == "hedgehog" else "LUNA"
        if trained_map is None or getattr(trained_map, "name", None) != map_name:
            raise ValueError(Message("learn.err_hybrid_untrained", name=name))
        if tuple(trained_map.heads) != (n_layers, n_heads) or trained_map.head_dim != head_dim:
            raise ValueError(Message("learn.err_hybrid_heads", name=name, layers=n_layers, heads=n_heads,
                                     covers=str(tuple(trained_map.heads)) if trained_map.heads
                                     else Message("learn.one_head")))
        return lambda i: trained_map.select(i)     # heads (n_heads,) broadcast over (B, heads, N, d)
    if map_name not in HYBRID_MAPS:
        raise ValueError(Message("learn.err_hybrid_map", choices=", ".join(HYBRID_MAPS), got=repr(map_name)))
    m = check_positive_int(num_features, "num_features") if map_name == "favor_plus" else None
    return lambda i: create(map_name, head_dim, num_features=m, seed=seed)


def hybrid_view(map_name: str = "elu1", layers="greedy", budget: int = 2, trained_map=None, num_features: int = 64,
                seed: int = 0, heldout_count=None, progress=None, model=None) -> HybridResult:
    """Make ``layers`` (a list of layer indices, or "greedy") linear with ``map_name``.

    Greedy: start all-linear and add back, one at a time, the softmax layer that helps the
    embedding cosine most, up to ``budget`` layers. Evaluated on the held-out texts. The
    embedded MiniLM only (``model`` another one is refused).
    """
    check_minilm_only(model, "hybrid")
    n_layers, n_heads, head_dim = model_shape()
    texts = _take(heldout_texts(), heldout_count, "heldout_count")
    cost.check(cost.estimate("hybrid", n=max(map(len, texts)) // 3 + 2, layers=n_layers, heads=n_heads, d=head_dim,
                             m=num_features, texts=len(texts), budget=budget))
    map_for_layer = _map_for_layer(map_name, trained_map, num_features, int(seed or 0), n_layers, n_heads, head_dim)
    report = progress or (lambda fraction, message: None)
    start = time.perf_counter()
    with _hybrid_lock:
        loaded = _hybrid_model()
        if isinstance(layers, str):
            if layers != "greedy":
                raise ValueError(Message("learn.err_hybrid_layers", got=repr(layers)))
            budget = int(budget)
            report(0.0, "embedding the held-out texts with the original model")
            steps = hybrids.greedy_softmax_layers(loaded, texts, map_for_layer, budget,
                                                 progress=lambda f, msg: report(0.05 + 0.95 * f, msg))
            mode = "greedy"
        else:
            chosen = sorted({int(i) for i in layers})
            bad = [i for i in chosen if not 0 <= i < n_layers]
            if bad:
                raise ValueError(Message("learn.err_hybrid_layer", layer=bad[0], count=n_layers, last=n_layers - 1))
            key = tuple(texts)
            if key not in _references:
                report(0.1, "embedding the held-out texts with the original model")
                _references.clear()    # one reference set is all the tab uses
                _references[key] = hybrids.embed(loaded, texts, with_attentions=True)
            report(0.5, f"running with layers {chosen} linear")
            rep = hybrids.evaluate(loaded, texts, {i: map_for_layer(i) for i in chosen}, _references[key])
            steps = [(tuple(i for i in range(n_layers) if i not in chosen), rep)]
            mode = "layers"
    report(1.0, "done")
    path = [{"k": len(kept), "kept": tuple(kept), "linear": tuple(rep.linear_layers),
             "cosine_mean": rep.cosine_mean, "cosine_min": rep.cosine_min} for kept, rep in steps]
    kept, final = steps[-1]
    return HybridResult(map_name, hybrid_map_label(map_name), mode, tuple(final.linear_layers), tuple(kept),
                        final.cosine_mean, final.cosine_min, list(final.drift), path, n_layers, len(texts),
                        time.perf_counter() - start)


def hybrid_table(result: HybridResult, digits: int = 4):
    """One row per configuration of the path; its words (headers, "none") are messages."""
    none = Message("learn.hyb_none")
    return rows_frame([{Message("learn.col_k"): p["k"], Message("learn.col_kept"): ", ".join(map(str, p["kept"])) or none,
                           Message("learn.col_linear", map=result.map_label): ", ".join(map(str, p["linear"])) or none,
                           Message("learn.col_cos_mean"): round(p["cosine_mean"], digits),
                           Message("learn.col_cos_min"): round(p["cosine_min"], digits)}
                          for p in result.path])


def drift_table(result: HybridResult):
    import pandas as pd
    return pd.DataFrame({"layer": range(len(result.drift)),
                         "attention": ["linear" if i in result.linear_layers else "softmax"
                                       for i in range(len(result.drift))],
                         "drift_total_variation": result.drift})
