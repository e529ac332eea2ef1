"""What the "Learned maps & hybrids" tab shows, assembled from the engine: no gradio here.

Two experiments from the article's last chapters, both on the embedded MiniLM:

* learned maps: Hedgehog trained on the training texts (``assets/texts/train.txt``) to
  imitate softmax, judged beside fixed maps on the held-out texts only
  (``explorer.maps.learned.hedgehog_experiment``);
* hybrids: some layers of the real model made linear, the cost measured on its sentence
  embeddings and attention (``explorer.maps.hybrid``).

Results are plain dataclasses of numbers that ``explorer.figures.learn`` draws. Trained
maps are cached per setting in memory, so a repeated run (or the hybrid that needs a map
for every head) does not train again.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..measure import cost
from ..maps import hybrid, learned
# The embedded model's shape (layers, heads, head dim) and the hybrid's maps: the UI builds
# its controls from these before this module is imported, so they live in the catalogue.
from ..catalog import EMBEDDED_SHAPE, HYBRID_MAP_LABELS  # noqa: F401 - EMBEDDED_SHAPE re-exported
from ..checks import check_positive_int
from ..maps import create
from ..resources import asset
from .common import set_trained_hedgehog

# The texts ship with the package (explorer.resources): found from any working directory,
# in a checkout and in an installed package.
TEXTS_DIR = asset("texts")
LOSS_NAME = "row cross-entropy  −Σⱼ Aᵢⱼ log Âᵢⱼ  (= KL(A‖Â) + entropy of A), mean over rows and heads"
LR = 0.05
MAX_STEPS = 2000             # one request must not hold the CPU for an hour
MAX_FEATURES = 512
HYBRID_MAPS = tuple(HYBRID_MAP_LABELS)
MAP_LABELS = HYBRID_MAP_LABELS


def training_texts() -> list[str]:
    return learned.read_texts(TEXTS_DIR / "train.txt")


def heldout_texts() -> list[str]:
    return learned.read_texts(TEXTS_DIR / "heldout.txt")


def _take(texts: list[str], count, name: str) -> list[str]:
    """The first ``count`` texts (None = all); fewer than one, or more than exist, is an error."""
    if count is None:
        return texts
    count = check_positive_int(count, name)
    if count > len(texts):
        raise ValueError(f"{name}: only {len(texts)} texts are available, asked for {count}")
    return texts[:count]


# ---------------------------------------------------------------------------------------
# Model and samples: read each text through the model once per process.
# ---------------------------------------------------------------------------------------

_samples: dict[str, object] = {}
_samples_lock = threading.Lock()


def model_shape() -> tuple[int, int, int]:
    """(layers, heads, head_dim) of the embedded model, from its config (loads it once)."""
    from ..sources.text import get_model
    cfg = get_model().model.config
    return cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size // cfg.num_attention_heads


def cached_sample(text: str):
    """``from_text`` of the embedded model, remembered: the texts are fixed files, and
    reading 56 of them through the model costs far more than training one head."""
    sample = _samples.get(text)
    if sample is None:
        from ..sources import from_text
        sample = from_text(text)
        with _samples_lock:
            _samples[text] = sample
    return sample


# ---------------------------------------------------------------------------------------
# Part 1: train Hedgehog, compare it with fixed maps on held-out texts
# ---------------------------------------------------------------------------------------

@dataclass
class LearnResult:
    """One trained (or loaded) Hedgehog and its held-out comparison.

    ``quality`` is the engine's per-head dict (map -> {"kl", "entropy", "monotonicity"} as
    numpy arrays shaped (layers, heads) of the covered block); ``rows`` summarise it per
    map (mean over covered heads). ``kl_ratio`` is KL(elu+1) / KL(Hedgehog) per head.
    """

    layer: int | None             # None: every layer
    head: int | None              # None: every head
    num_features: int
    steps: int
    seed: int
    losses: list
    seconds: float
    train_count: int
    heldout_count: int
    quality: dict
    rows: list
    softmax_entropy: float
    kl_ratio: np.ndarray
    feature_map: learned.Hedgehog
    origin: str = "trained"       # or the uploaded file's name
    notices: list = field(default_factory=list)

    @property
    def all_heads(self) -> bool:
        return self.layer is None and self.head is None

    @property
    def scope(self) -> str:
        if self.all_heads:
            layers, heads = self.kl_ratio.shape
            return f"all {layers * heads} heads ({layers} layers × {heads})"
        return f"layer {self.layer}, head {self.head}"


def _summarise(quality: dict, num_features: int, seed: int, head_dim: int) -> tuple[dict, list, float, np.ndarray]:
    """Per-head arrays as numpy, one row per map (means over heads), softmax entropy, KL ratio."""
    per_head = {name: {key: v.detach().cpu().numpy().astype(np.float64) for key, v in vals.items()}
                for name, vals in quality.items()}
    dims = {"hedgehog": num_features,
            **{name: f.num_features for name, f in learned.baseline_maps(head_dim, num_features, seed).items()}}
    rows = []
    for name in ("hedgehog", "elu1", "favor_plus", "taylor2"):
        if name not in per_head:
            continue
        q = per_head[name]
        rows.append({"map": MAP_LABELS[name], "name": name, "features_m": dims[name],
                     "kl": float(np.nanmean(q["kl"])), "entropy": float(np.nanmean(q["entropy"])),
                     "monotonicity": float(np.nanmean(q["monotonicity"]))})
    softmax_entropy = float(np.nanmean(per_head["softmax"]["entropy"]))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = per_head["elu1"]["kl"] / per_head["hedgehog"]["kl"]
    return per_head, rows, softmax_entropy, ratio


def _check_head(layer, head) -> tuple[int | None, int | None]:
    n_layers, n_heads, _ = model_shape()
    if layer is None and head is None:
        return None, None
    if layer is None or head is None:
        raise ValueError("head: give both a layer and a head, or neither for all heads")
    layer, head = int(layer), int(head)
    if not 0 <= layer < n_layers:
        raise ValueError(f"layer: must lie in 0..{n_layers - 1}, got {layer}")
    if not 0 <= head < n_heads:
        raise ValueError(f"head: must lie in 0..{n_heads - 1}, got {head}")
    return layer, head


_trained: "OrderedDict[tuple, LearnResult]" = OrderedDict()
_trained_lock = threading.Lock()
TRAINED_CACHE_SIZE = 8


class Stopped(Exception):
    """Raised inside training when the caller asked to stop (e.g. the browser went away)."""


def learn_view(layer=0, head=0, num_features: int = 64, steps: int = 300, seed: int = 0, train_count=None,
               heldout_count=None, all_heads: bool = False, progress=None, should_stop=None,
               on_loss=None) -> LearnResult:
    """Train Hedgehog on one head (or all heads jointly) and compare it on held-out texts.

    ``progress(fraction, message)`` reports; ``on_loss(step, loss)`` feeds a live curve;
    ``should_stop()`` aborts (raises ``Stopped``).
    The same settings return the cached result at once.
    """
    layer, head = (None, None) if all_heads else _check_head(layer, head)
    num_features = check_positive_int(num_features, "num_features")
    if num_features > MAX_FEATURES:
        raise ValueError(f"num_features: at most {MAX_FEATURES} here, got {num_features}")
    steps = check_positive_int(steps, "steps")
    if steps > MAX_STEPS:
        raise ValueError(f"steps: at most {MAX_STEPS} here, got {steps}")
    seed = int(seed or 0)
    train = _take(training_texts(), train_count, "train_count")
    heldout = _take(heldout_texts(), heldout_count, "heldout_count")
    cost.check(cost.estimate("learn", n=max(map(len, train)) // 3 + 2, m=num_features, steps=steps,  # ~3 chars a token
                             texts=len(train), all_heads=all_heads),
               limit_seconds=float("inf"))   # training streams its progress and can be stopped; MAX_STEPS bounds it
    key = (layer, head, num_features, steps, seed, len(train), len(heldout))
    with _trained_lock:
        if key in _trained:
            _trained.move_to_end(key)
            hit = _trained[key]
            set_trained_hedgehog(hit.feature_map, hit.layer, hit.head, "trained")   # offered in the maps tab
            return hit

    report = progress or (lambda fraction, message: None)

    def relay(fraction, message):
        if should_stop is not None and should_stop():
            raise Stopped("training stopped")
        report(fraction, message)

    exp = learned.hedgehog_experiment(train, heldout, layer=layer, head=head, num_features=num_features,
                                      steps=steps, lr=LR, seed=seed, source=cached_sample, progress=relay,
                                      on_loss=on_loss)
    per_head, rows, softmax_entropy, ratio = _summarise(exp.quality, num_features, seed, model_shape()[2])
    result = LearnResult(layer, head, num_features, steps, seed, list(exp.run.losses), exp.run.seconds,
                         exp.train_count, exp.heldout_count, per_head, rows, softmax_entropy, ratio,
                         exp.run.feature_map)
    with _trained_lock:
        _trained[key] = result
        while len(_trained) > TRAINED_CACHE_SIZE:
            _trained.popitem(last=False)
    set_trained_hedgehog(result.feature_map, layer, head, "trained")
    return result


def cached_result(layer, head, num_features: int, steps: int, seed: int = 0):
    """The result ``learn_view`` would return at once for these settings (all texts), or
    None when it has not been trained in this process: lets other views show a trained map
    without ever starting a training run themselves."""
    key = (layer, head, int(num_features), int(steps), int(seed), len(training_texts()), len(heldout_texts()))
    with _trained_lock:
        return _trained.get(key)


def cached_layer_map(layer: int, num_features: int):
    """Hedgehog for every head of ``layer`` (parameters shaped (heads, ...)), taken from the
    latest cached all-heads training with ``num_features``; None when there is none."""
    with _trained_lock:
        for key, result in reversed(list(_trained.items())):
            if key[0] is None and key[1] is None and key[2] == int(num_features):
                return result.feature_map.select(int(layer))
    return None


@dataclass
class LiveTraining:
    """A snapshot while training runs: losses seen so far (the engine reports about 50)."""

    fraction: float
    message: str
    steps: list
    losses: list
    total_steps: int




def learn_stream(layer=0, head=0, num_features: int = 64, steps: int = 300, seed: int = 0, train_count=None,
                 heldout_count=None, all_heads: bool = False, poll_s: float = 0.5, should_stop=None):
    """Run ``learn_view`` in a worker thread; yield ``LiveTraining`` snapshots about every
    ``poll_s`` seconds, then the ``LearnResult``. Closing the generator, or ``should_stop()``
    turning true, stops the training (the latter raises ``Stopped`` here)."""
    kwargs = dict(layer=layer, head=head, num_features=num_features, steps=steps, seed=seed,
                  train_count=train_count, heldout_count=heldout_count, all_heads=all_heads)
    steps = check_positive_int(steps, "steps")
    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    live = LiveTraining(0.0, "starting", [], [], steps)

    def progress(fraction, message):
        events.put(("progress", fraction, message))

    def on_loss(step, loss):
        events.put(("loss", step, loss))

    def work():
        try:
            stopping = lambda: stop.is_set() or (should_stop is not None and should_stop())
            events.put(("done", learn_view(progress=progress, should_stop=stopping, on_loss=on_loss, **kwargs)))
        except BaseException as exc:  # handed to the consumer, which re-raises it
            events.put(("error", exc))

    worker = threading.Thread(target=work, name="hedgehog-training", daemon=True)
    worker.start()
    try:
        last_yield, changed = 0.0, False
        while True:
            try:
                event = events.get(timeout=poll_s)
            except queue.Empty:
                event = None
            if event is not None and event[0] == "done":
                yield event[1]
                return
            if event is not None and event[0] == "error":
                raise event[1]
            if event is not None and event[0] == "loss":
                live.steps.append(event[1])
                live.losses.append(event[2])
                changed = True
            elif event is not None:
                _, live.fraction, live.message = event
                changed = True
            # At most one snapshot per poll_s, and only when something new arrived.
            if changed and time.monotonic() - last_yield >= poll_s:
                last_yield, changed = time.monotonic(), False
                yield replace(live, steps=list(live.steps), losses=list(live.losses))
    finally:
        stop.set()  # the consumer left (finished, failed or cancelled): end the worker too


def evaluate_map(fmap: learned.Hedgehog, layer=0, head=0, heldout_count=None, origin: str = "uploaded",
                 progress=None) -> LearnResult:
    """Held-out comparison of a saved map (no training): a talk can use a map trained beforehand.

    A map for every head is judged on every head; a single-head map on ``layer``, ``head``.
    """
    n_layers, n_heads, head_dim = model_shape()
    if fmap.head_dim != head_dim:
        raise ValueError(f"file: the map is for head dimension {fmap.head_dim}, the model's is {head_dim}")
    heads = tuple(fmap.heads)
    if heads == (n_layers, n_heads):
        layer, head = None, None
    elif heads in ((), (1,), (1, 1)):
        layer, head = _check_head(layer, head)
        fmap = fmap.select(*([0] * len(heads))) if heads else fmap
    else:
        raise ValueError(f"file: the map covers heads {heads}; expected one head or ({n_layers}, {n_heads})")
    report = progress or (lambda fraction, message: None)
    heldout = _take(heldout_texts(), heldout_count, "heldout_count")
    report(0.1, "reading the held-out texts through the model")
    samples = [cached_sample(t) for t in heldout]
    if layer is not None:
        samples = [learned.head_block(s, layer, head) for s in samples]
    report(0.5, "measuring on held-out texts")
    maps = {"hedgehog": fmap, **learned.baseline_maps(head_dim, fmap.num_features, 0)}
    quality = learned.heldout_quality(samples, maps)
    per_head, rows, softmax_entropy, ratio = _summarise(quality, fmap.num_features, 0, head_dim)
    report(1.0, "done")
    set_trained_hedgehog(fmap, layer, head, origin)
    return LearnResult(layer, head, fmap.num_features, 0, 0, [], 0.0, 0, len(heldout), per_head, rows,
                       softmax_entropy, ratio, fmap, origin=origin)


def save_map(result: LearnResult, folder) -> Path:
    """Write the trained map to ``folder`` under a name that says what it is."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    where = "all-heads" if result.all_heads else f"L{result.layer}H{result.head}"
    path = folder / f"hedgehog-{where}-m{result.num_features}-steps{result.steps}-seed{result.seed}.pt"
    result.feature_map.save(path)
    return path


def load_map(path) -> learned.Hedgehog:
    """A map saved by ``save_map`` (read without running pickled code)."""
    try:
        return learned.Hedgehog.load(path)
    except ValueError:
        raise
    except Exception as exc:  # a corrupt or foreign file: say so instead of a traceback
        raise ValueError(f"file: cannot read a saved Hedgehog map from it ({type(exc).__name__})") from None


# ---------------------------------------------------------------------------------------
# Part 2: hybrid models, some layers linear
# ---------------------------------------------------------------------------------------

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


# hybrid.linear_layers changes the model only for the thread that installed its hooks, so
# hybrids run on the shared model while other tabs keep reading it. One experiment at a
# time: each is a few hundred forward passes on a 2-core machine.
_hybrid_lock = threading.Lock()
_references: dict = {}


def _hybrid_model():
    from ..sources.text import get_model
    return get_model()


def _map_for_layer(map_name: str, trained_map, num_features: int, seed: int, n_layers: int, n_heads: int,
                   head_dim: int):
    if map_name == "hedgehog":
        if trained_map is None:
            raise ValueError("map: no trained Hedgehog yet. Train 'all heads' in part 1 (or load a saved "
                             "all-heads map), then run the hybrid")
        if tuple(trained_map.heads) != (n_layers, n_heads) or trained_map.head_dim != head_dim:
            raise ValueError(f"map: the hybrid needs a Hedgehog for every head ({n_layers} × {n_heads}); the "
                             f"current one covers {tuple(trained_map.heads) or 'one head'}. Train 'all heads' first")
        return lambda i: trained_map.select(i)     # heads (n_heads,) broadcast over (B, heads, N, d)
    if map_name not in HYBRID_MAPS:
        raise ValueError(f"map: choose one of {', '.join(HYBRID_MAPS)}, got {map_name!r}")
    m = check_positive_int(num_features, "num_features") if map_name == "favor_plus" else None
    return lambda i: create(map_name, head_dim, num_features=m, seed=seed)


def hybrid_view(map_name: str = "elu1", layers="greedy", budget: int = 2, trained_map=None, num_features: int = 64,
                seed: int = 0, heldout_count=None, progress=None) -> HybridResult:
    """Make ``layers`` (a list of layer indices, or "greedy") linear with ``map_name``.

    Greedy: start all-linear and add back, one at a time, the softmax layer that helps the
    embedding cosine most, up to ``budget`` layers. Evaluated on the held-out texts.
    """
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
                raise ValueError(f"layers: a list of layer indices or 'greedy', got {layers!r}")
            budget = int(budget)
            report(0.0, "embedding the held-out texts with the original model")
            steps = hybrid.greedy_softmax_layers(loaded, texts, map_for_layer, budget,
                                                 progress=lambda f, msg: report(0.05 + 0.95 * f, msg))
            mode = "greedy"
        else:
            chosen = sorted({int(i) for i in layers})
            bad = [i for i in chosen if not 0 <= i < n_layers]
            if bad:
                raise ValueError(f"layers: layer {bad[0]} does not exist (the model has {n_layers}: 0..{n_layers - 1})")
            key = tuple(texts)
            if key not in _references:
                report(0.1, "embedding the held-out texts with the original model")
                _references.clear()    # one reference set is all the tab uses
                _references[key] = hybrid.embed(loaded, texts, with_attentions=True)
            report(0.5, f"running with layers {chosen} linear")
            rep = hybrid.evaluate(loaded, texts, {i: map_for_layer(i) for i in chosen}, _references[key])
            steps = [(tuple(i for i in range(n_layers) if i not in chosen), rep)]
            mode = "layers"
    report(1.0, "done")
    path = [{"k": len(kept), "kept": tuple(kept), "linear": tuple(rep.linear_layers),
             "cosine_mean": rep.cosine_mean, "cosine_min": rep.cosine_min} for kept, rep in steps]
    kept, final = steps[-1]
    return HybridResult(map_name, MAP_LABELS[map_name], mode, tuple(final.linear_layers), tuple(kept),
                        final.cosine_mean, final.cosine_min, list(final.drift), path, n_layers, len(texts),
                        time.perf_counter() - start)


# ---------------------------------------------------------------------------------------
# Tables (CSV export and the on-screen tables)
# ---------------------------------------------------------------------------------------

def comparison_table(result: LearnResult, digits: int = 4):
    import pandas as pd
    rows = [{"map": r["map"], "features m": r["features_m"], "held-out KL (nats)": round(r["kl"], digits),
             "entropy (nats)": round(r["entropy"], digits), "monotonicity (Spearman ρ)": round(r["monotonicity"], digits)}
            for r in result.rows]
    rows.append({"map": "softmax (reference)", "features m": None, "held-out KL (nats)": 0.0,
                 "entropy (nats)": round(result.softmax_entropy, digits), "monotonicity (Spearman ρ)": 1.0})
    return pd.DataFrame(rows)


def per_head_table(result: LearnResult):
    """Every covered head and map, full precision (for CSV)."""
    import pandas as pd
    layers, heads = result.kl_ratio.shape
    out = []
    for li in range(layers):
        for hi in range(heads):
            layer = li if result.layer is None else result.layer
            head = hi if result.head is None else result.head
            for r in result.rows:
                q = result.quality[r["name"]]
                out.append({"layer": layer, "head": head, "map": r["name"], "kl": float(q["kl"][li, hi]),
                            "entropy": float(q["entropy"][li, hi]), "monotonicity": float(q["monotonicity"][li, hi]),
                            "softmax_entropy": float(result.quality["softmax"]["entropy"][li, hi])})
    return pd.DataFrame(out)


def loss_table(result: LearnResult):
    import pandas as pd
    return pd.DataFrame({"step": range(1, len(result.losses) + 1), "row_cross_entropy": result.losses})


def hybrid_table(result: HybridResult, digits: int = 4):
    import pandas as pd
    return pd.DataFrame([{"softmax layers k": p["k"], "softmax layers": ", ".join(map(str, p["kept"])) or "none",
                          f"linear layers ({result.map_label})": ", ".join(map(str, p["linear"])) or "none",
                          "mean cosine": round(p["cosine_mean"], digits), "worst cosine": round(p["cosine_min"], digits)}
                         for p in result.path])


def drift_table(result: HybridResult):
    import pandas as pd
    return pd.DataFrame({"layer": range(len(result.drift)),
                         "attention": ["linear" if i in result.linear_layers else "softmax"
                                       for i in range(len(result.drift))],
                         "drift_total_variation": result.drift})
