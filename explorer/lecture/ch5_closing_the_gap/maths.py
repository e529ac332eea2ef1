"""Chapter 5: closing the gap. Three ways the field narrowed the distance to softmax:

- forgetting, three ways: by decay (RetNet's fixed gamma), by gates (GLA) and by
  overwriting (the delta rule: DeltaNet, and Gated DeltaNet with a gate as well): recall of
  a recent key against an early one, from ``rnn.recall`` (the engine's recall probe,
  cached); and HGRN2's forget gates, whose lower bound rises with depth
  (``hgrn2_depth`` over ``explorer.mechanisms.hgrn2.gates.hgrn2_layer_bounds``);
- learning phi (Hedgehog): row KL to softmax on the current head for a learned map next to
  elu+1 and FAVOR+ (``row_kl_by_map``; training itself is ``explorer.maps.learned``);
- what Hedgehog copies: softmax's rows are spiky (low entropy) and monotone in q.k; the
  mean row entropy and the rank correlation of weight with logit, for softmax and each map
  (``row_shape_by_map``);
- hybrids: keep k layers softmax, make the rest linear, and compare sentence embeddings
  with the original model's (``hybrid_curve`` over ``explorer.experiments.hybrids``).
"""

from __future__ import annotations


import numpy as np
import torch

from ... import mechanisms
from ...diagnostics import attention
from ...mechanisms.hgrn2.gates import hgrn2_layer_bounds
from ...experiments import hybrids
from ...measure import metrics, rowwise
from ..ch4_rnn import maths as rnn
from . import HYBRID_MODES
from ..memo import LRU

DECAY_KINDS = ("linear", "retnet", "gla")
POSITIONS = ("early", "recent")
# Forgetting by overwriting, beside decay and gates: every state update the registry holds
# but those whose key is their own input gate (HGRN2), whose layer-wise bound has a build of
# its own.
OVERWRITE_KINDS = tuple(kind for kind in mechanisms.state_kinds()
                        if mechanisms.writes(kind) != mechanisms.WRITES_FORGET_GATE)
# The lag the overwriting build reads: the lecture's one recall experiment (chapter 4's).
OVERWRITE_LAG = rnn.RECALL_KEYS
# HGRN2's picture: a stack of this many layers with equal learned shares of the bound
# (lb_l = l / L), each read by the recall probe after HGRN2_LAG other keys.
HGRN2_LAYERS = 6
HGRN2_LAG = rnn.RECALL_KEYS


def decay_recall(feature_map, head_dim: int, lags=rnn.RECALL_LAGS, gamma: float = 0.97, strength: float = 1.0,
                 seed: int = 0) -> dict:
    """{(kind, position): recall curve} for every decay kind and both target positions."""
    return {(kind, pos): rnn.recall(feature_map, head_dim, kind, pos, lags, gamma=gamma, strength=strength,
                                    seed=seed)
            for kind in DECAY_KINDS for pos in POSITIONS}


def overwrite_recall(feature_map, head_dim: int, lag: int = OVERWRITE_LAG, gamma: float = 0.97,
                     strength: float = 1.0, seed: int = 0) -> dict:
    """{kind: {"early": cosine, "recent": cosine, "curves": {position: curve}}} for every kind of
    ``OVERWRITE_KINDS``: the engine's recall probe (``rnn.recall``, which caches it) read at
    ``lag``. The additive kinds write phi(k) with ``feature_map``; the delta rule writes the
    L2-normalised key and ignores it."""
    out = {}
    for kind in OVERWRITE_KINDS:
        curves = {pos: rnn.recall(feature_map, head_dim, kind, pos, gamma=gamma, strength=strength, seed=seed)
                  for pos in POSITIONS}
        out[kind] = {pos: _at(curves[pos], lag) for pos in POSITIONS}
        out[kind]["curves"] = curves
    return out


def hgrn2_depth(feature_map, head_dim: int, layers: int = HGRN2_LAYERS, lag: int = HGRN2_LAG,
                seed: int = 0) -> dict:
    """HGRN2's layer-wise lower bounds as one picture: for a stack of ``layers`` layers with
    equal learned shares (raw = 0, so lb_l = l / L, ``hgrn2_layer_bounds``), each layer's
    bound, the shortest memory that bound allows (a gate f >= lb keeps a token for about
    1 / (1 - f) >= 1 / (1 - lb) steps) and the recall of an early and a recent key after
    ``lag`` other keys with that bound (the engine's probe)."""
    bounds = hgrn2_layer_bounds(torch.zeros(int(layers), dtype=torch.float64)).numpy()
    early, recent = [], []
    for lb in bounds:
        for pos, into in (("early", early), ("recent", recent)):
            into.append(_at(rnn.recall(feature_map, head_dim, "hgrn2", pos, seed=seed, lower_bound=float(lb)), lag))
    return {"layers": np.arange(int(layers)), "lower_bound": bounds, "memory_tokens": 1.0 / (1.0 - bounds),
            "early": np.array(early), "recent": np.array(recent), "lag": int(lag)}


def _at(curve: dict, lag: int) -> float:
    """A recall curve's cosine at ``lag`` (one of its lags)."""
    hits = np.flatnonzero(curve["lags"] == lag)
    if not hits.size:
        raise ValueError(f"lag: {lag} is not among the probed lags {', '.join(map(str, curve['lags']))}")
    return float(curve["cosine"][hits[0]])


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
def row_kl_by_map(q, k, maps: dict, causal: bool = False) -> dict:
    """Per-row KL(softmax || kernel map) on one head for each named map, with the rows where
    it is undefined counted. Returns name -> {"kl": (N,) with +inf where the map gives a key
    softmax uses no weight and NaN where undefined, "mean" (over the finite rows), "median"
    (a true one, ∞ counted), "undefined", "infinite"}. ``causal``: both sides see keys j <= i
    only, as a causal model's head does; its first row then has one key and a KL of 0 for
    every map, so the summaries leave it out (``rowwise.rows_in_means``), as every causal
    mean does. ``kl`` keeps every row."""
    reference = attention.softmax_map(q, k, causal=causal).double()
    counted = rowwise.rows_in_means(q.shape[-2], causal).numpy()
    out = {}
    for name, fmap in maps.items():
        approx = attention.kernel_map(q, k, fmap, causal=causal).double()
        kl, defined = rowwise.row_kl(reference, approx)
        kl = kl.numpy()
        rows = kl.reshape(-1, kl.shape[-1])[:, counted].ravel()
        finite = rows[np.isfinite(rows)]
        out[name] = {"kl": kl, "mean": float(finite.mean()) if finite.size else float("nan"),
                     "median": rowwise.true_median(rows),
                     "undefined": int(np.isnan(rows).sum()), "infinite": int(np.isinf(rows).sum()),
                     "counted": counted, "m": int(fmap.num_features)}
    return out


@torch.inference_mode()
def row_shape_by_map(q, k, maps: dict, causal: bool = False) -> dict:
    """Hedgehog's observation on one head: softmax's attention rows are spiky (few keys take
    most of the weight: a low entropy) and monotone (a larger logit never gets less weight).
    For softmax and each named map: per row, the entropy of the weights in nats and the
    Spearman rank correlation of the weights with the logits s = q.k / sqrt(d), and their
    means over the rows every mean counts (``rowwise.rows_in_means``: causal leaves out the
    first row, which has one key) where the row has a value. All in float64.

    Returns name -> {"entropy", "spearman": the means, "entropy_rows", "spearman_rows": (N,)
    with NaN where a row has no value, "rows": how many rows the means count}; "softmax" first."""
    q, k = torch.as_tensor(q).double(), torch.as_tensor(k).double()
    logits = attention.logits(q, k)
    reference = attention.softmax_map(q, k, causal=causal)
    counted = rowwise.rows_in_means(q.shape[-2], causal).numpy()
    weights = {"softmax": reference}
    weights.update({name: attention.kernel_map(q, k, fmap, causal=causal).double() for name, fmap in maps.items()})
    out = {}
    for name, w in weights.items():
        rows = metrics.row_metrics(reference, w, logits=logits, causal=causal)
        entropy, spearman = rows["entropy"].numpy(), rows["monotonicity"].numpy()
        out[name] = {"entropy": _mean_counted(entropy, counted), "spearman": _mean_counted(spearman, counted),
                     "entropy_rows": entropy, "spearman_rows": spearman, "rows": int(counted.sum())}
    return out


def _mean_counted(values: np.ndarray, counted: np.ndarray) -> float:
    """The mean over the counted rows that have a value (NaN where none has)."""
    kept = values[counted & np.isfinite(values)]
    return float(kept.mean()) if kept.size else float("nan")


_hybrid_curves = LRU(16)


def hybrid_curve(loaded, text: str, map_for_layer, map_tag: str, mode: str = "last", progress=None) -> list[dict]:
    """Sentence-embedding cosine to the original model as k = 0..L softmax layers are kept.

    ``mode`` "greedy" adds back, one at a time, the softmax layer that helps most
    (``hybrids.greedy_softmax_layers``, about L^2/2 forward passes); "last" keeps the last k
    layers softmax (L + 1 passes). Results are remembered per (model, text, map, mode).
    """
    if mode not in HYBRID_MODES:
        raise ValueError(f"hybrid: expected one of {', '.join(HYBRID_MODES)}, got {mode!r}")
    return _hybrid_curves.get((loaded.path, text, map_tag, mode),
                              lambda: _hybrid_curve(loaded, text, map_for_layer, mode, progress))


def _hybrid_curve(loaded, text: str, map_for_layer, mode: str, progress) -> list[dict]:
    n_layers = len(loaded.model.encoder.layer)
    if mode == "greedy":
        steps = hybrids.greedy_softmax_layers(loaded, [text], map_for_layer, n_layers, progress=progress)
    else:
        reference = hybrids.embed(loaded, [text], with_attentions=True)
        steps = []
        for kept in range(n_layers + 1):
            softmax_layers = tuple(range(n_layers - kept, n_layers))
            maps = {i: map_for_layer(i) for i in range(n_layers) if i not in softmax_layers}
            steps.append((softmax_layers, hybrids.evaluate(loaded, [text], maps, reference)))
            if progress is not None:
                progress((kept + 1) / (n_layers + 1), f"softmax: {kept} / {n_layers}")   # no words: any language
    return [{"k": len(kept), "kept": tuple(kept), "cosine": rep.cosine_mean} for kept, rep in steps]
