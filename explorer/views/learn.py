"""What the "Learned maps & hybrids" tab shows of learned maps, assembled from the engine: no
gradio here. (Its hybrids, some layers of MiniLM made linear: ``explorer.views.hybrid``.)

Hedgehog or the LUNA-style map trained on the training texts (``assets/texts/train.txt``)
to imitate softmax, judged beside fixed maps on the held-out texts only
(``explorer.experiments.learning.experiment``). Any model the data panel can read does the
reading (``model``: None is the embedded MiniLM); a causal model's maps are trained and
judged against its causal softmax (keys j <= i).

Results are plain dataclasses of numbers that ``explorer.figures.learn`` draws. Training
results are cached per setting in memory (the same settings give the same map), so a
repeated run does not train again; the map itself is handed to the other tabs only for
the session that asked for it (``views.common.set_trained``).
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .. import stopping
from ..measure import budget, cost
from ..experiments import learning
from ..maps import learned
# The embedded model's shape (layers, heads, head dim) and the hybrid's maps: the UI builds
# its controls from these before this module is imported, so they live in the catalogue.
from ..catalog import EMBEDDED_SHAPE, HYBRID_MAPS, hybrid_map_label  # noqa: F401 - EMBEDDED_SHAPE re-exported
from ..checks import check_positive_int
from ..core.cache import LRU
from ..resources import asset
from ..sources.models import EMBEDDED_NAME
from ..text import Message, ModelName
# check_model: for the learn tab, which reaches these helpers through this module.
from .common import (cached_sample, check_model, model_argument, model_info, model_name,  # noqa: F401
                     model_shape, model_where, set_trained)
from .frames import rows_frame
# ranking: for the learn tab, which reaches it through this module.
from .learn_result import LearnResult, _summarise, ranking  # noqa: F401

# The texts ship with the package (explorer.resources): found from any working directory,
# in a checkout and in an installed package.
TEXTS_DIR = asset("texts")
LR = learning.DEFAULT_LR      # per kind: the Adam step each trains well with
LEARNED_KINDS = tuple(learned.LEARNED_CLASSES)
MAX_STEPS = 2000             # one request must not hold the CPU for an hour
# Training streams its progress and can be stopped, so it may run past one request's usual
# limit; but every seed together must fit this, priced before anything is read or trained.
MAX_TRAINING_SECONDS = 1800.0
MAX_FEATURES = 512


def training_texts() -> list[str]:
    return learning.read_texts(TEXTS_DIR / "train.txt")


def heldout_texts() -> list[str]:
    return learning.read_texts(TEXTS_DIR / "heldout.txt")


heldout_texts_builtin = heldout_texts      # where a parameter of the same name would hide it


def _take(texts: list[str], count, name: str) -> list[str]:
    """The first ``count`` texts (None = all); fewer than one, or more than exist, is an error."""
    if count is None:
        return texts
    count = check_positive_int(count, name)
    if count > len(texts):
        raise ValueError(Message("learn.err_texts_available", name=name, have=len(texts), count=count))
    return texts[:count]


# ---------------------------------------------------------------------------------------
# Part 1: train Hedgehog, compare it with fixed maps on held-out texts
# ---------------------------------------------------------------------------------------

def _check_head(layer, head, shape=None) -> tuple[int | None, int | None]:
    n_layers, n_heads, _ = shape or model_shape()
    if layer is None and head is None:
        return None, None
    if layer is None or head is None:
        raise ValueError(Message("learn.err_head_pair"))
    layer, head = int(layer), int(head)
    if not 0 <= layer < n_layers:
        raise ValueError(Message("learn.err_layer", last=n_layers - 1, layer=layer))
    if not 0 <= head < n_heads:
        raise ValueError(Message("learn.err_head", last=n_heads - 1, head=head))
    return layer, head


TRAINED_CACHE_SIZE = 8
_trained = LRU(TRAINED_CACHE_SIZE)      # settings -> LearnResult


Stopped = stopping.Stopped     # raised inside training when the caller asked to stop (the visitor went away)


def check_kind(kind) -> str:
    if kind not in LEARNED_KINDS:
        raise ValueError(Message("learn.err_kind", choices=", ".join(LEARNED_KINDS), kind=repr(str(kind)[:40])))
    return kind


def texts_for(texts, count, built_in: list[str], name: str) -> tuple[list[str], bool]:
    """(the texts to use, whether they are the visitor's own): ``texts`` when given (checked:
    ``learning.check_texts``), else the first ``count`` of the built-in ones."""
    if texts is None:
        return _take(built_in, count, name.replace("_texts", "_count")), False
    return learning.check_texts(texts, name), True


def check_known_tokens(texts: list[str], model, name: str) -> None:
    """Refuses the visitor's own ``texts`` when ``model`` reads none of them as more than [UNK]
    (MiniLM and emoji, or most Chinese): every key would be the same vector, and a map trained
    or judged on them says nothing. Reads them through the model once (the training reuses it)."""
    for text in texts:
        info = cached_sample(text, model).info or {}
        strings, special = info.get("token_strings") or [], info.get("special") or []
        if any(s != "[UNK]" and not sp for s, sp in zip(strings, special)):
            return
    raise ValueError(Message("learn.err_texts_all_unk", name=name, model=ModelName(model_where(model).name)))


def _digest(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()


def check_heldout_cost(heldout: list[str], shape, heads: int, num_features: int, seeds: int) -> None:
    """Refuse, before anything is read, a held-out set whose longest text would need more than
    a request may use to judge every map on ``heads`` heads (one map at a time, the random
    ones once per seed)."""
    cost.check(cost.estimate("maps", n=max(map(len, heldout)) // 3 + 2, d=shape[2], heads=heads,   # ~3 chars a token
                             maps=("elu1", "favor_plus", "taylor2", "hedgehog"), m=num_features, seeds=seeds),
               limit_seconds=MAX_TRAINING_SECONDS)


def learn_view(layer=0, head=0, num_features: int = 64, steps: int = 300, seed: int = 0, train_count=None,
               heldout_count=None, all_heads: bool = False, progress=None, should_stop=None,
               on_loss=None, kind: str = "hedgehog", session=None, model=None, seeds=learning.DEFAULT_SEEDS,
               train_texts=None, heldout_texts=None) -> LearnResult:
    """Train a learned map of ``kind`` (Hedgehog or LUNA) on one head (or all heads jointly)
    of ``model`` (None: the embedded MiniLM), once per seed, and compare them on held-out
    texts; LUNA is compared with Hedgehog trained the same way. A causal model's map is
    trained and judged against its causal softmax.

    ``seeds``: how many, from ``seed`` (default 3), or their list. ``train_texts`` and
    ``heldout_texts``: the visitor's own texts (lists of strings, bounded by
    ``learning.check_texts``, never overlapping) in place of the first ``train_count`` /
    ``heldout_count`` built-in ones. ``progress(fraction, message)`` reports;
    ``on_loss(step, loss, seed)`` feeds a live curve; ``should_stop()`` aborts (raises
    ``Stopped``), asked at every step of every seed. Every seed together is priced before
    any work. The same settings return the cached result at once. The first seed's map is
    then ``session``'s trained map of ``kind`` in the other tabs, offered there on samples
    that ``model`` read.
    """
    kind = check_kind(kind)
    model = model_argument(model)
    where = model_where(model)                 # refuses an unknown or disallowed model before loading
    *shape, causal = model_info(model)
    layer, head = (None, None) if all_heads else _check_head(layer, head, shape)
    num_features = check_positive_int(num_features, "num_features")
    if num_features > MAX_FEATURES:
        raise ValueError(Message("learn.err_features_cap", cap=MAX_FEATURES, got=num_features))
    if kind == "hedgehog" and num_features % 2:
        raise ValueError(Message("learn.err_features_even", got=num_features))
    steps = check_positive_int(steps, "steps")
    if steps > MAX_STEPS:
        raise ValueError(Message("learn.err_steps_cap", cap=MAX_STEPS, got=steps))
    seeds = learning.seed_list(int(seed or 0), seeds)
    train, own_train = texts_for(train_texts, train_count, training_texts(), "train_texts")
    heldout, own_heldout = texts_for(heldout_texts, heldout_count, heldout_texts_builtin(), "heldout_texts")
    learning.check_disjoint(train, heldout)
    cost.check(cost.estimate("learn", n=max(map(len, train)) // 3 + 2, m=num_features, steps=steps,  # ~3 chars a token
                             texts=len(train), all_heads=all_heads, kind=kind, layers=shape[0], heads=shape[1],
                             d=shape[2], seeds=len(seeds)),
               limit_seconds=MAX_TRAINING_SECONDS)
    check_heldout_cost(heldout, shape, 1 if layer is not None else shape[0] * shape[1], num_features, len(seeds))
    for own, texts, name in ((own_train, train, "train_texts"), (own_heldout, heldout, "heldout_texts")):
        if own:
            check_known_tokens(texts, model, name)
    key = (kind, layer, head, num_features, steps, seeds, _digest(train), _digest(heldout), where.key)
    hit = _trained.get(key)
    # LUNA's comparison reuses the Hedgehogs trained with the same settings, if there are some.
    rival = _trained.peek(("hedgehog", *key[1:]))
    if hit is not None:
        set_trained(session, kind, hit.feature_map, hit.layer, hit.head, "trained", model=hit.model)
        return hit

    report = progress or (lambda fraction, message: None)

    def relay(fraction, message):
        stopping.check(should_stop)     # Stopped, or the deadline's own refusal
        report(fraction, message)

    exp = learning.experiment(train, heldout, kind=kind, layer=layer, head=head, num_features=num_features,
                             steps=steps, lr=LR[kind], seeds=seeds, source=lambda text: cached_sample(text, model),
                             progress=relay, should_stop=should_stop, on_loss=on_loss,
                             hedgehog=None if rival is None else rival.feature_maps)
    rival_m = None
    if "hedgehog" in exp.quality and kind != "hedgehog":
        rival_m = (exp.runs["hedgehog"].feature_map if "hedgehog" in exp.runs else rival.feature_map).num_features
    per_head, rows, softmax_entropy, ratio, by_seed = _summarise(exp.by_seed, kind, num_features, shape[2], rival_m)
    losses = [list(runs[kind].losses) for runs in exp.runs_by_seed]
    result = LearnResult(layer, head, num_features, steps, seeds[0], losses[0],
                         sum({id(r): r.seconds for runs in exp.runs_by_seed for r in runs.values()}.values()),
                         exp.train_count, exp.heldout_count,
                         per_head, rows, softmax_entropy, ratio, exp.feature_map, kind=kind, model=where.name,
                         causal=bool(causal), seeds=seeds, losses_by_seed=losses, by_seed=by_seed,
                         own_texts=own_train or own_heldout,
                         feature_maps=[runs[kind].feature_map for runs in exp.runs_by_seed],
                         same_every_seed=exp.same_every_seed, texts=(tuple(train), tuple(heldout)))
    _trained.put(key, result)
    set_trained(session, kind, result.feature_map, layer, head, "trained", model=result.model)
    return result


def cached_result(layer, head, num_features: int, steps: int, seed: int = 0, kind: str = "hedgehog", model=None,
                  seeds=learning.DEFAULT_SEEDS):
    """The result ``learn_view`` would return at once for these settings (all built-in
    texts), or None when it has not been trained in this process: lets other views show a
    trained map without ever starting a training run themselves."""
    key = (kind, layer, head, int(num_features), int(steps), learning.seed_list(int(seed), seeds),
           _digest(training_texts()), _digest(heldout_texts_builtin()), model_where(model).key)
    return _trained.peek(key)


@dataclass
class LiveTraining:
    """A snapshot while training runs: losses seen so far (the engine reports about 50 a
    seed), each with the seed it belongs to."""

    fraction: float
    message: str
    steps: list
    losses: list
    total_steps: int
    seeds: list = field(default_factory=list)
    seed_count: int = 1




def learn_stream(layer=0, head=0, num_features: int = 64, steps: int = 300, seed: int = 0, train_count=None,
                 heldout_count=None, all_heads: bool = False, poll_s: float = 0.5, should_stop=None,
                 kind: str = "hedgehog", session=None, model=None, seeds=learning.DEFAULT_SEEDS,
                 train_texts=None, heldout_texts=None):
    """Run ``learn_view`` in a worker thread; yield ``LiveTraining`` snapshots about every
    ``poll_s`` seconds, then the ``LearnResult``. Closing the generator, or ``should_stop()``
    turning true, stops the training (the latter raises ``Stopped`` here)."""
    kwargs = dict(layer=layer, head=head, num_features=num_features, steps=steps, seed=seed,
                  train_count=train_count, heldout_count=heldout_count, all_heads=all_heads, kind=kind,
                  session=session, model=model, seeds=seeds, train_texts=train_texts, heldout_texts=heldout_texts)
    steps = check_positive_int(steps, "steps")
    seed_count = len(learning.seed_list(int(seed or 0), seeds))
    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    live = LiveTraining(0.0, "starting", [], [], steps, [], seed_count)

    def progress(fraction, message):
        events.put(("progress", fraction, message))

    def on_loss(step, loss, seed):
        events.put(("loss", step, loss, seed))

    if isinstance(should_stop, stopping.StopSignal):     # keep its deadline, and say it when it passes
        ends = stopping.StopSignal(lambda: stop.is_set() or should_stop.gone(), should_stop.remaining())
    else:
        ends = lambda: stop.is_set() or (should_stop is not None and should_stop())

    def work():
        try:
            with budget.request():      # the training's memory is held from the server's budget while it runs
                events.put(("done", learn_view(progress=progress, should_stop=ends, on_loss=on_loss, **kwargs)))
        except BaseException as exc:  # handed to the consumer, which re-raises it
            events.put(("error", exc))

    worker = threading.Thread(target=work, name=f"{kind}-training", daemon=True)
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
                live.seeds.append(event[3])
                changed = True
            elif event is not None:
                _, live.fraction, live.message = event
                changed = True
            # At most one snapshot per poll_s, and only when something new arrived.
            if changed and time.monotonic() - last_yield >= poll_s:
                last_yield, changed = time.monotonic(), False
                yield replace(live, steps=list(live.steps), losses=list(live.losses), seeds=list(live.seeds))
    finally:
        stop.set()  # the consumer left (finished, failed or cancelled): end the worker too


# The held-out comparison of a map shipped with the app depends on its file, the layer and
# head it is judged on, the texts, the model and the seeds only: kept here, the next visitor
# (or the lecture's Go deeper, measured at start-up) reads it instead of running every
# held-out text through every map again (seconds on the causal model).
_SHIPPED_QUALITY = LRU(16)


def evaluate_map(fmap, layer=0, head=0, heldout_count=None, origin: str = "uploaded", progress=None,
                 session=None, model=None, seeds=learning.DEFAULT_SEEDS,
                 heldout_texts=None, shipped: bool = False) -> LearnResult:
    """Held-out comparison of a saved map (no training) on ``model`` (None: the embedded
    MiniLM): a talk can use a map trained beforehand.

    A map for every head is judged on every head; a map for every head of one layer on
    that layer (the one its file names, else ``layer``); a one-head map on the head its
    file names, else on ``layer``, ``head``. A file that names the model it was trained on
    is judged on that model only. The map then becomes ``session``'s trained map of its kind.
    FAVOR+ is drawn once per seed (``seeds``, default 3 from 0); the loaded map is one map,
    so it has no seed spread. ``heldout_texts``: the visitor's own, in place of the built-in.
    ``shipped``: ``fmap`` is the app's own file named ``origin``, whose comparison is kept.
    """
    model = model_argument(model)
    name = model_name(model)
    n_layers, n_heads, head_dim, causal = model_info(model)
    kind = check_kind(getattr(fmap, "name", None))
    info = getattr(fmap, "info", {}) or {}
    trained_on = _named_text(info, "model")
    if trained_on is not None and trained_on != name:
        raise ValueError(Message("learn.err_file_model", have=trained_on[:40], want=name[:40]))
    if fmap.head_dim != head_dim:
        raise ValueError(Message("learn.err_file_head_dim", have=fmap.head_dim, want=head_dim))
    named_layer, named_head = _named(info, "layer"), _named(info, "head")
    heads = tuple(fmap.heads)
    if heads == (n_layers, n_heads):
        layer, head = None, None
    elif heads == (n_heads,):
        layer = _check_head(named_layer if named_layer is not None else layer, 0)[0]
        head = None
    elif heads in ((), (1,), (1, 1)):
        if named_layer is not None and named_head is not None:
            layer, head = named_layer, named_head
        layer, head = _check_head(layer, head)
        fmap = fmap.select(*([0] * len(heads))).requires_grad_(False) if heads else fmap
    else:
        raise ValueError(Message("learn.err_file_heads", heads=str(heads), n_heads=n_heads, n_layers=n_layers))
    report = progress or (lambda fraction, message: None)
    seeds = learning.seed_list(0, seeds)
    heldout, own = texts_for(heldout_texts, heldout_count, heldout_texts_builtin(), "heldout_texts")
    check_heldout_cost(heldout, (n_layers, n_heads, head_dim), 1 if head is not None else n_heads * (
        n_layers if layer is None else 1), fmap.num_features, len(seeds))

    def measure():
        report(0.1, "reading the held-out texts through the model")
        samples = [cached_sample(t, model) for t in heldout]
        if layer is not None:
            samples = [learning.head_block(s, layer, head) for s in samples]
        out = []
        for i, s in enumerate(seeds):
            report(0.5 + 0.5 * i / len(seeds), f"measuring on held-out texts (FAVOR+ seed {s})")
            maps = {kind: fmap, **learning.baseline_maps(head_dim, fmap.num_features, s)}
            out.append(learning.heldout_quality(samples, maps))
        return out

    key = (origin, kind, layer, head, name, tuple(seeds), _digest(heldout)) if shipped else None
    by_seed = _SHIPPED_QUALITY.copy_of(key, measure)      # what follows summarises (and keeps) its own
    per_head, rows, softmax_entropy, ratio, by_seed = _summarise(by_seed, kind, fmap.num_features, head_dim,
                                                                 fixed=(kind,))
    report(1.0, "done")
    set_trained(session, kind, fmap, layer, head, origin, model=name)
    return LearnResult(layer, head, fmap.num_features, 0, 0, [], 0.0, 0, len(heldout), per_head, rows,
                       softmax_entropy, ratio, fmap, origin=origin, kind=kind, model=name, causal=bool(causal),
                       seeds=seeds, by_seed=by_seed, own_texts=own, feature_maps=[fmap], texts=((), tuple(heldout)))


def _named(info: dict, key: str):
    """A whole number the file's metadata gives for ``key`` (layer, head), else None."""
    try:
        value = json.loads(info.get(key, "null"))
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _named_text(info: dict, key: str):
    """A string the file's metadata gives for ``key`` (the model), else None."""
    try:
        value = json.loads(info.get(key, "null"))
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, str) and value.strip() else None


def save_map(result: LearnResult, folder) -> Path:
    """Write the trained map to ``folder`` as safetensors, under a name that says what it is;
    the file also records the layer, head, steps and seed it was trained with."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    where = "all-heads" if result.all_heads else (f"L{result.layer}" if result.whole_layer
                                                   else f"L{result.layer}H{result.head}")
    path = folder / f"{result.kind}-{where}-m{result.num_features}-steps{result.steps}-seed{result.seed}.safetensors"
    return learned.save_map(result.feature_map, path, layer=result.layer, head=result.head, steps=result.steps,
                            seed=result.seed, model=result.model, provenance=trained_provenance(result))


def trained_provenance(result: LearnResult) -> dict:
    """The trained map's ``explorer.provenance.record``: the training and held-out texts with
    their token ids, the model's file and every setting of the run. The file holds the first
    seed's map, so its seeds are that one; the run's seeds are among the settings."""
    from .. import provenance

    rec = run_provenance(result, "trained-map", seeds=[result.seed])
    # The header of a saved map is bounded (learned.MAX_HEADER_BYTES, checked on load): texts that
    # would take more than half of it are told by their hashes, so the file still loads.
    if len(json.dumps(rec)) > learned.MAX_HEADER_BYTES // 2:
        rec["texts"] = [provenance.text_digest(entry) for entry in rec["texts"]]
    return rec


def run_provenance(result: LearnResult, what: str = "learn", seeds=None) -> dict:
    """The record of a learn run (its tables' export): the texts as used (the visitor's own
    or the built-in ones), the model's file, every setting and every seed."""
    from .. import provenance
    from ..sources.models import get_model

    loaded = get_model(model_argument(result.model))
    train, heldout = result.texts if (result.texts[0] or result.texts[1]) else (
        training_texts()[:result.train_count], heldout_texts()[:result.heldout_count])
    texts = (provenance.texts_record(list(train), "train", loaded.tokenizer)
             + provenance.texts_record(list(heldout), "heldout", loaded.tokenizer))
    settings = {"kind": result.kind, "layer": result.layer, "head": result.head, "num_features": result.num_features,
                "steps": result.steps, "seed": result.seed, "model": str(result.model), "causal": bool(result.causal),
                "train_count": result.train_count, "heldout_count": result.heldout_count, "origin": result.origin,
                "own_texts": bool(result.own_texts), "seeds_of_the_run": list(result.seeds),
                "same_every_seed": list(result.same_every_seed)}
    return provenance.record(what, texts=texts, settings=settings,
                             seeds=list(result.seeds) if seeds is None else list(seeds),
                             models=[(loaded.name, loaded.path)])


def load_map(path):
    """A map saved by ``save_map`` (or ``learned.save_map``): size, header and every tensor's
    shape are checked before anything is read (``learned.load_map``)."""
    return learned.load_map(path)


def pretrained_result(kind: str, layer: int, heldout_count=None, session=None, model=None,
                      seeds=learning.DEFAULT_SEEDS, heldout_texts=None) -> LearnResult | None:
    """The held-out comparison of the map shipped for every head of ``model``'s ``layer`` (None
    when none is shipped for it, see ``shipped_layers``): the tab can show a trained map before
    anyone trains. A model no map ships for is refused in one sentence."""
    name = model_name(model_argument(model))
    if name not in learned.PRETRAINED_MODELS:
        check_minilm_only(model, "shipped")
    fmap = learned.pretrained(kind, layer, model=name)
    if fmap is None:
        return None
    return evaluate_map(fmap, layer, None, heldout_count, origin=learned.pretrained_path(kind, layer, name).name,
                        session=session, model=model, seeds=seeds, heldout_texts=heldout_texts,
                        shipped=True)


def shipped_layers(kind: str, model=None) -> list[int]:
    """The layers of ``model`` (None: the embedded MiniLM) a map of ``kind`` ships for."""
    name = model_name(model_argument(model))
    if name not in learned.PRETRAINED_MODELS:
        return []
    return [layer for layer in range(model_info(model_argument(model))[0])
            if learned.pretrained_path(kind, layer, name).exists()]


def check_minilm_only(model, what: str) -> None:
    """Refuse a ``model`` other than the embedded MiniLM for ``what`` ("hybrid": the hybrids
    swap BERT-family layers of the one model they know; "shipped": the maps shipped were
    trained on it), in one sentence (a message)."""
    model = model_argument(model)
    if model is not None:
        from ..sources import models
        raise ValueError(Message(f"learn.err_minilm_{what}", embedded=EMBEDDED_NAME,
                                 model=ModelName(models.shown(model))))


# ---------------------------------------------------------------------------------------
# Tables (CSV export and the on-screen tables)
# ---------------------------------------------------------------------------------------

def labelled_rows(rows: list) -> list:
    """The rows with each map named (a message; a learned map is the one trained here)."""
    return [{**r, "map": hybrid_map_label(r["name"])} for r in rows]


COMPARISON_KEYS = ("map", "m", "kl", "kl_sd", "kl_median", "kl_median_sd", "entropy", "mono")


def _rounded(x: float, digits: int):
    return None if np.isnan(x) else round(x, digits)


def comparison_table(result: LearnResult, digits: int = 4):
    """One row per map: the mean over seeds of each summary, with the sd over seeds beside
    the KLs (empty where there is no spread: one seed, or a loaded map). Its words are messages."""
    col = {key: Message(f"learn.col_{key}", count=len(result.seeds)) for key in COMPARISON_KEYS}
    rows = [{col["map"]: r["map"], col["m"]: r["features_m"], col["kl"]: _rounded(r["kl"], digits),
             col["kl_sd"]: _rounded(r["kl_sd"], digits), col["kl_median"]: _rounded(r["kl_median"], digits),
             col["kl_median_sd"]: _rounded(r["kl_median_sd"], digits), col["entropy"]: _rounded(r["entropy"], digits),
             col["mono"]: _rounded(r["monotonicity"], digits)}
            for r in labelled_rows(result.rows)]
    rows.append({col["map"]: Message("learn.softmax_reference"), col["m"]: None, col["kl"]: 0.0, col["kl_sd"]: None,
                 col["kl_median"]: 0.0, col["kl_median_sd"]: None,
                 col["entropy"]: round(result.softmax_entropy, digits), col["mono"]: 1.0})
    return rows_frame(rows)


def per_head_table(result: LearnResult):
    """Every covered head, map and seed, full precision (for CSV). A map that is the same
    whatever the seed (elu+1, Taylor-2, a loaded map) is measured again with each seed and
    gives the same numbers."""
    import pandas as pd
    layers, heads = result.kl_ratio.shape
    by_seed = result.by_seed or [result.quality]
    out = []
    for seed, quality in zip(result.seeds, by_seed):
        for li in range(layers):
            for hi in range(heads):
                layer = li if result.layer is None else result.layer
                head = hi if result.head is None else result.head
                for r in result.rows:
                    q = quality[r["name"]]
                    out.append({"seed": seed, "layer": layer, "head": head, "map": r["name"],
                                "kl": float(q["kl"][li, hi]), "kl_median": float(q["kl_median"][li, hi]),
                                "entropy": float(q["entropy"][li, hi]),
                                "monotonicity": float(q["monotonicity"][li, hi]),
                                "softmax_entropy": float(quality["softmax"]["entropy"][li, hi])})
    return pd.DataFrame(out)


def loss_table(result: LearnResult):
    """Every seed's training loss, step by step."""
    import pandas as pd
    curves = result.losses_by_seed or [result.losses]
    return pd.DataFrame([{"seed": seed, "step": step, "row_cross_entropy": loss}
                         for seed, losses in zip(result.seeds, curves)
                         for step, loss in enumerate(losses, start=1)])
