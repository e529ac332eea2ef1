"""Training a whole set of linearized maps: every layer of a model, for one or more (kind,
window, sinks) variants, from the project's training texts.

    training_data(loaded, per_language, length) -> {layer: Batch}
    train_sets(data, variants, steps, batch_size, seed, num_features) -> {(kind, window, sinks): LayerMaps}

Each layer's inputs are captured once from the original model (``capture``) and stored in
float16 (30 layers of 48 sequences of 256 tokens take about a gigabyte); a layer's batch is
widened to float32 when it trains. Layer L trains with seed ``seed + L``, so any one layer can
be retrained alone and gives the same bytes as in the full run.
"""

from __future__ import annotations

import torch

from . import texts
from .capture import LayerData, capture
from .maps import LayerMaps, SHAPE
from .transfer import Batch, stack, train_layer

LENGTH = 256


def training_data(loaded, per_language: int = 24, length: int = LENGTH, layers=None, should_stop=None) -> dict:
    """{layer: [LayerData in float16]} over the first ``per_language`` windows of each language."""
    from .. import stopping
    sequences = []
    for lang in texts.LANGS:
        sequences += texts.token_windows(loaded.tokenizer, texts.load(lang, "train"), length)[:per_language]
    found: dict = {}
    for ids in sequences:
        stopping.check(should_stop)
        for layer, data in capture(loaded, ids, layers).items():
            found.setdefault(layer, []).append(
                LayerData(*(t.half() for t in (data.q, data.k, data.v, data.out))))
    return found


def _batch(datas) -> Batch:
    batch = stack(datas)
    return Batch(*(t.float() for t in (batch.q, batch.k, batch.v, batch.out)))


def train_sets(data: dict, variants, *, steps: int = 100, batch_size: int = 4, seed: int = 0,
               num_features: int = 64, model: str = "SmolLM2-135M", progress=None, should_stop=None) -> dict:
    """{(kind, window, sinks): LayerMaps} for every layer in ``data`` (all of the model's layers
    for a full set). ``progress(layer, kind, window, sinks, losses)`` hears about each trained layer."""
    shape = SHAPE[model]
    sets = {}
    for kind, window, sinks in variants:
        maps, weights, losses = [], [], []
        for layer in sorted(data):
            fit = train_layer(_batch(data[layer]), kind, window, sinks=sinks, num_features=num_features, steps=steps,
                              batch_size=batch_size, seed=seed + layer, should_stop=should_stop)
            maps.append(fit.feature_map)
            weights.append(fit.log_weight)
            losses.append(fit.losses[-1])
            if progress is not None:
                progress(layer, kind, window, sinks, fit.losses)
        sets[(kind, window, sinks)] = LayerMaps(kind, window, model, maps, torch.stack(weights), shape["head_dim"],
                                                shape["heads"], shape["kv_heads"], info={"final_loss": losses},
                                                sinks=sinks)
    return sets
