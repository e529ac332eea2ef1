"""Chapter 5: closing the gap. Three ways the field narrowed the distance to softmax:

- forgetting (RetNet's fixed decay, GLA's gates): recall of a recent key against an early
  one, from ``rnn.recall`` (the engine's recall probe, cached);
- learning phi (Hedgehog): row KL to softmax on the current head for a learned map next to
  elu+1 and FAVOR+ (``row_kl_by_map``; training itself is ``explorer.maps.learned``);
- hybrids: keep k layers softmax, make the rest linear, and compare sentence embeddings
  with the original model's (``hybrid_curve`` over ``explorer.maps.hybrid``).
"""

from __future__ import annotations

import numpy as np
import torch

from ..forms import attention
from ..maps import hybrid
from ..measure import metrics
from . import rnn
from .chapters import HYBRID_MODES
from .memo import LRU

DECAY_KINDS = ("none", "retnet", "gla")
POSITIONS = ("early", "recent")


def decay_recall(feature_map, head_dim: int, lags=rnn.RECALL_LAGS, gamma: float = 0.97, strength: float = 1.0,
                 seed: int = 0) -> dict:
    """{(kind, position): recall curve} for every decay kind and both target positions."""
    return {(kind, pos): rnn.recall(feature_map, head_dim, kind, pos, lags, gamma=gamma, strength=strength,
                                    seed=seed)
            for kind in DECAY_KINDS for pos in POSITIONS}


def recall_gap(curves: dict, lag: int) -> dict:
    """Recent minus early recall cosine at ``lag`` per decay kind: > 0 means the kind keeps
    recent keys better than old ones (a memory that forgets on purpose)."""
    out = {}
    for kind in DECAY_KINDS:
        early, recent = curves[(kind, "early")], curves[(kind, "recent")]
        i = int(np.flatnonzero(early["lags"] == lag)[0])
        out[kind] = float(recent["cosine"][i] - early["cosine"][i])
    return out


@torch.inference_mode()
def row_kl_by_map(q, k, maps: dict) -> dict:
    """Per-row KL(softmax || kernel map) on one head for each named map, with the rows where
    it is undefined counted. Returns name -> {"kl": (N,) with NaN where undefined, "mean",
    "median", "undefined"}."""
    reference = attention.softmax_map(q, k).double()
    out = {}
    for name, fmap in maps.items():
        approx = attention.kernel_map(q, k, fmap).double()
        kl, defined = metrics.row_kl(reference, approx)
        kl = kl.numpy()
        good = kl[defined.numpy()]
        out[name] = {"kl": kl, "mean": float(good.mean()) if good.size else float("nan"),
                     "median": float(np.median(good)) if good.size else float("nan"),
                     "undefined": int((~defined).sum()), "m": int(fmap.num_features)}
    return out


_hybrid_curves = LRU(16)


def hybrid_curve(loaded, text: str, map_for_layer, map_key: str, mode: str = "last", progress=None) -> list[dict]:
    """Sentence-embedding cosine to the original model as k = 0..L softmax layers are kept.

    ``mode`` "greedy" adds back, one at a time, the softmax layer that helps most
    (``hybrid.greedy_softmax_layers``, about L^2/2 forward passes); "last" keeps the last k
    layers softmax (L + 1 passes). Results are remembered per (model, text, map, mode).
    """
    if mode not in HYBRID_MODES:
        raise ValueError(f"hybrid: expected one of {', '.join(HYBRID_MODES)}, got {mode!r}")
    return _hybrid_curves.get((loaded.path, text, map_key, mode),
                              lambda: _hybrid_curve(loaded, text, map_for_layer, mode, progress))


def _hybrid_curve(loaded, text: str, map_for_layer, mode: str, progress) -> list[dict]:
    n_layers = len(loaded.model.encoder.layer)
    if mode == "greedy":
        steps = hybrid.greedy_softmax_layers(loaded, [text], map_for_layer, n_layers, progress=progress)
    else:
        reference = hybrid.embed(loaded, [text], with_attentions=True)
        steps = []
        for kept in range(n_layers + 1):
            softmax_layers = tuple(range(n_layers - kept, n_layers))
            maps = {i: map_for_layer(i) for i in range(n_layers) if i not in softmax_layers}
            steps.append((softmax_layers, hybrid.evaluate(loaded, [text], maps, reference)))
            if progress is not None:
                progress((kept + 1) / (n_layers + 1), f"{kept} softmax layers kept")
    return [{"k": len(kept), "kept": tuple(kept), "cosine": rep.cosine_mean} for kept, rep in steps]
