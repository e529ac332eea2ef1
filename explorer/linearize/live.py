"""A set of linearized maps trained while a visitor waits: another kind, window or sinks than
the shipped sets, by the same attention transfer (``build``), on fewer passages and steps.

    price(kind, window, sinks, steps, model) -> cost.Estimate     checked before any work
    train(kind, window, sinks, steps, model, progress, should_stop) -> LayerMaps

A shipped set reads 48 passages of 256 tokens and takes 100 steps a layer (about 190 s of
training and 25 s of capture on a 2-core machine); a live set reads ``PER_LANGUAGE`` passages
of each language and ``steps`` a layer, every layer of the model, so any k softmax layers can
be judged with it. ``price`` is the cost model's estimate; a request it puts over the server's
limit is refused before the model reads a token. Training is seeded like a shipped set: the
same arguments give the same bytes.
"""

from __future__ import annotations

from . import build
from .maps import MODEL, SHAPE, check_kind, check_model, check_sinks, check_window
from ..checks import check_positive_int
from ..maps.learned import LEARNED_CLASSES
from ..measure import cost

PER_LANGUAGE = 4               # training passages a language: 8 in all, of ``build.LENGTH`` tokens
DEFAULT_STEPS = 50
MAX_STEPS = 200
BATCH = 4
NUM_FEATURES = 64
# One SmolLM2 token through one forward: 2 x 135 M parameters of multiply-adds plus the
# 49,152-word output layer (576 wide).
TOKEN_FLOPS = {MODEL: 2 * 135e6 + 2 * 576 * 49_152}


def check(kind, window, sinks, steps, model: str = MODEL) -> tuple[str, int, int, int, str]:
    model = check_model(model)
    if check_kind(kind) not in LEARNED_CLASSES:
        raise ValueError(f"kind: trained kinds are {', '.join(LEARNED_CLASSES)}, got {str(kind)[:40]!r}")
    steps = check_positive_int(steps, "steps")
    if steps > MAX_STEPS:
        raise ValueError(f"steps: at most {MAX_STEPS}, got {steps:,}")
    return kind, check_window(window), check_sinks(sinks), steps, model


def price(kind, window: int = 0, sinks: int = 0, steps: int = DEFAULT_STEPS, model: str = MODEL) -> cost.Estimate:
    """What training the set costs, capture included (the cost model's ``linearize_train``)."""
    kind, window, sinks, steps, model = check(kind, window, sinks, steps, model)
    shape = SHAPE[model]
    return cost.estimate("linearize_train", n=build.LENGTH, layers=shape["layers"], heads=shape["heads"],
                         kv_heads=shape["kv_heads"], d=shape["head_dim"], m=NUM_FEATURES, steps=steps, batch=BATCH,
                         sequences=PER_LANGUAGE * 2, kind=kind, exact=bool(window or sinks),
                         token_flops=TOKEN_FLOPS[model])


def train(kind, window: int = 0, sinks: int = 0, steps: int = DEFAULT_STEPS, model: str = MODEL, seed: int = 0,
          progress=None, should_stop=None):
    """The set's LayerMaps, every layer. ``progress(fraction, layer, loss)`` hears the capture
    (layer None) and each trained layer with its last loss; ``should_stop()`` is asked between
    passages and at every step. Refused (cost.Refusal) before any work the server cannot afford."""
    kind, window, sinks, steps, model = check(kind, window, sinks, steps, model)
    cost.check(price(kind, window, sinks, steps, model))
    from ..sources.models import get_model
    loaded = get_model(model)
    report = progress or (lambda fraction, layer, loss: None)
    report(0.0, None, None)
    data = build.training_data(loaded, per_language=PER_LANGUAGE, should_stop=should_stop)   # each capture holds the model's lock
    layers = len(data)
    # The capture is a small share of the estimate (about a sixth at the defaults).
    share = 0.15

    def trained(layer, _kind, _window, _sinks, losses):
        report(share + (1 - share) * (layer + 1) / layers, layer, losses[-1])

    report(share, None, None)
    found = build.train_sets(data, [(kind, window, sinks)], steps=steps, batch_size=BATCH, seed=seed,
                             num_features=NUM_FEATURES, model=model, progress=trained, should_stop=should_stop)
    maps = found[(kind, window, sinks)]
    maps.info.update(steps=steps, passages=PER_LANGUAGE * 2, tokens=build.LENGTH, live=True)
    return maps
