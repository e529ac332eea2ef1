"""What the tabs share: building a map from its catalogue id, loading samples (cached),
picking a head, the request caps, reducing a map for display, and the model the learn tab
reads its texts with (checked before anything loads; each text read once). Plain data, no
gradio.

Each tab's view lives in a module named after it (``explorer.views.maps``, ``.quality``,
``.state``, ``.complexity``); ``explorer.views`` re-exports what the UI, the API and the
tests call, so ``views.maps_view(...)`` keeps working.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import torch

from .. import maps as feature_maps
from ..core.cache import LRU
from ..catalog import HEADLINE_METRICS, MAX_SEED, METRIC_INFO, map_choices, map_label, map_specs
from ..catalog import whole_number as _int
from ..sources.models import EMBEDDED_NAME
from ..core.feature_maps import SPECS
from ..text import DEFAULT_LANG, LANGS, ErrorWords, Joined, Message, ModelName, say_error


# Guards: the N x N tabs hold several float64 copies of every map (metrics), so the
# number of attention cells per request is capped; long sequences belong to the
# complexity tab, which never forms what it does not need.
MAX_MAP_CELLS = 2048 * 2048            # heads x N x N for one maps view
MAX_OVERVIEW_CELLS = 24 * 2 ** 20      # layers x heads x N x N for the head overview
MAX_STATE_ELEMENTS = 16 * 2 ** 20      # N x m x d_v recorded states in the state tab

# Largest side of a heatmap sent to the browser. 1024 x 1024 x 10 panels is ~100 MB of
# JSON; 128 x 128 block means keep the picture and stay fast.
DISPLAY_MAX = 128


# ---------------------------------------------------------------------------------------
# Building the map behind an id of the catalogue
# ---------------------------------------------------------------------------------------

def make_feature_map(map_id: str, head_dim: int, m: int | None, seed: int, window: int = 4, layer=None, head=None,
                     session=None, model=None):
    """Build the map ``map_id`` names (a catalogue id); returns (feature_map, notices as messages, said in a
    language by whoever shows them; a refusal is a ValueError carrying one). ``window`` is the
    sliding-window hybrid's w (ignored by every other map); ``layer`` and ``head`` pick a
    trained map's head, from those ``session`` trained on ``model`` (the name of the model
    that read the sample; None for random or uploaded data) (ignored by every other map)."""
    specs = map_specs()
    if map_id not in specs:
        raise ValueError(Message("common.err_unknown_map", label=repr(str(map_id)[:60]),
                                 choices=", ".join(map_choices())))
    spec = specs[map_id]
    if spec.trained:
        return trained_map_for(session, spec.name, head_dim, layer, head, model=model)
    seed, notices = reduce_seed(seed, "feature seed")
    kwargs = dict(spec.options)
    if spec.takes_m and m is not None:
        m = int(m)
        if m < 1:
            raise ValueError(Message("common.err_m_small", m=m))
        if spec.even_m and m % 2:
            notices.append(Message("common.m_rounded", label=spec.label, m=m, m2=m + 1))
            m += 1
        kwargs["num_features"] = m
    if spec.name == "sliding_window":
        window = int(window)
        if window < 0:
            raise ValueError(Message("common.err_window", window=window))
        kwargs["window"] = window
    return feature_maps.create(spec.name, head_dim, seed=seed, **kwargs), notices


ECHO = 40          # characters of a refused value quoted back


def echoed(value) -> str:
    """A value as the visitor sent it, cut to ECHO characters and quoted: quoted text is theirs,
    not the message's language."""
    text = str(value)
    return "“" + (text if len(text) <= ECHO else text[:ECHO] + "…") + "”"


def whole_in(value, low, high, refusal: str, name_key: str) -> int:
    """``value`` as a whole number in [low, high] (7.0 counts as 7), else a ValueError saying
    ``refusal`` (its {name}, {low}, {high} and {value}) with the control's name."""
    try:
        x = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        x = math.nan
    if not (math.isfinite(x) and x == int(x) and low <= x <= high):
        raise ValueError(Message(refusal, name=Message(name_key), low=f"{low:,}", high=f"{high:,}",
                                 value=echoed(value)))
    return int(x)


def reduce_seed(seed, name: str) -> tuple[int, list[Message]]:
    """(seed in 0..MAX_SEED, notices): a larger or negative whole number is taken modulo
    2^32 and the notice (a message) says so (torch's generators overflow on huge seeds)."""
    seed = _int(seed or 0, name)
    if 0 <= seed <= MAX_SEED:
        return seed, []
    reduced = seed % (MAX_SEED + 1)
    shown = f"{seed:,}" if abs(seed) < 10 ** 15 else f"{seed:.3g}"
    named = {"feature seed": Message("common.feature_seed"), "data seed": Message("common.data_seed")}.get(name, name)
    notice = Message("common.seed_reduced", name=named, shown=shown, top=f"{MAX_SEED:,}", reduced=f"{reduced:,}")
    return reduced, [notice]


# ---------------------------------------------------------------------------------------
# Names on screen: maps, metrics, heads and samples in the page's language
# ---------------------------------------------------------------------------------------

def metric_label(key: str, short: bool = False) -> str:
    """A metric's column header (``short``) or full label with unit, as a message."""
    words_key = f"common.{'short' if short else 'metric'}.{key}"
    from ..text import TEXT
    return Message(words_key) if words_key in TEXT else key


def where_message(layer, head) -> Message:
    """"layer 2, head 3" or "layer 2, mean over heads", as a message."""
    if head is None:
        return Message("common.where_mean", layer=layer)
    return Message("common.where_head", layer=layer, head=head)


def source_title(sample) -> str:
    """Where the sample came from (the sources describe themselves with a message)."""
    source = getattr(sample, "source", "") or ""
    return source or Message("common.sample")


def view_title(sample, layer, head, causal: bool = False) -> Joined:
    """"<source> · layer 2, head 3" (· causal): the title a head's view gives its figures."""
    parts = [source_title(sample), " · ", where_message(layer, head)]
    return Joined(parts + ([" · ", Message("common.causal")] if causal else []))


# ---------------------------------------------------------------------------------------
# Trained maps (Hedgehog, LUNA) belong to the session that trained or loaded them in the
# learn tab; the other tabs of that session offer them as "Hedgehog (trained)" and
# "LUNA (trained)", on exactly the heads they were trained on. No other session sees them.
# ---------------------------------------------------------------------------------------

TRAINED_SESSIONS = 64                  # sessions remembered; the least recently used go first
LOCAL_SESSION = "local"                # calls without a session (scripts, tests) share this one
_trained = LRU(TRAINED_SESSIONS)       # session -> kind -> TrainedMap
_trained_versions = itertools.count(1)


@dataclasses.dataclass(frozen=True)
class TrainedMap:
    """A session's trained map of one kind. ``layer``/``head`` say which head a one-head
    map (no head dimensions) was trained on, and ``layer`` which layer a map for every head
    of one layer (heads (H,)) covers; a map for every head of the model has heads (L, H).
    ``model`` names the model whose softmax it imitates (None: not known)."""

    fmap: object
    layer: int | None
    head: int | None
    origin: str
    version: int
    model: str | None = None


def set_trained(session, kind: str, fmap, layer=None, head=None, origin: str = "trained", model=None) -> None:
    """Offer ``fmap`` to ``session``'s other tabs as its trained map of ``kind``, trained on ``model``."""
    entry = TrainedMap(fmap, None if layer is None else int(layer), None if head is None else int(head),
                       str(origin), next(_trained_versions), None if model is None else str(model))
    key = LOCAL_SESSION if session is None else str(session)
    with _trained.lock:
        kinds = _trained.peek(key, {})
        kinds[kind] = entry
        _trained.put(key, kinds)


def forget_trained(session, kind: str | None = None) -> None:
    """Drop ``session``'s trained map of ``kind`` (every kind when None)."""
    key = LOCAL_SESSION if session is None else str(session)
    with _trained.lock:
        if kind is None:
            _trained.pop(key)
        else:
            _trained.peek(key, {}).pop(kind, None)


def trained_entry(session, kind: str) -> TrainedMap | None:
    return _trained.peek(LOCAL_SESSION if session is None else str(session), {}).get(kind)


def set_trained_hedgehog(fmap, layer=None, head=None, origin: str = "trained", session=None) -> None:
    """``set_trained`` for Hedgehog; ``fmap`` None forgets it."""
    if fmap is None:
        forget_trained(session, "hedgehog")
    else:
        set_trained(session, "hedgehog", fmap, layer, head, origin)


def trained_version(session, kind: str) -> int:
    """0 while ``session`` has no trained map of ``kind``; otherwise a number that changes
    with every new one (so cached pictures of an older map are not shown as this one)."""
    entry = trained_entry(session, kind)
    return 0 if entry is None else entry.version


def trained_map_for(session, kind: str, head_dim: int, layer=None, head=None, model=None):
    """(feature_map, notices): ``session``'s trained map of ``kind`` for one head (``head``
    an int), for every head of ``layer`` (``head`` None: the mean over heads), or for every
    layer and head (``layer`` "all"), of a sample ``model`` read (None: random or uploaded
    data, where only the head dimension must fit). ValueError, carrying a message a notice can
    say, where the map was not trained on what is asked for."""
    name = SPECS[kind].pretty if kind in SPECS else kind
    entry = trained_entry(session, kind)
    if entry is None:
        raise ValueError(Message("common.err_no_trained", name=name))
    if model is not None and entry.model is not None and str(model) != entry.model:
        # Layer 2, head 3 of another model is another head altogether, even at the same head_dim.
        raise ValueError(Message("learn.err_trained_model", name=name, have=ModelName(entry.model),
                             want=ModelName(str(model)[:60])))
    fmap = entry.fmap
    if fmap.head_dim != head_dim:
        raise ValueError(Message("common.err_trained_dim", name=name, have=fmap.head_dim, want=head_dim))
    heads = tuple(fmap.heads)
    asked = Message("common.every_head") if layer == "all" else where_message(layer, head)
    if len(heads) == 2:                    # one map per (layer, head) of the model
        if layer == "all":
            return fmap, []
        layer = 0 if layer is None else int(layer)
        if not 0 <= layer < heads[0] or (head is not None and not 0 <= int(head) < heads[1]):
            raise ValueError(Message("common.err_trained_heads", name=name, layers=heads[0], heads=heads[1],
                               asked=asked))
        return (fmap.select(layer) if head is None else fmap.select(layer, int(head))), []
    if len(heads) == 1:                    # every head of one layer
        if layer != "all" and layer is not None and int(layer) == entry.layer and \
                (head is None or 0 <= int(head) < heads[0]):
            return (fmap if head is None else fmap.select(int(head))), []
        raise ValueError(Message("common.err_trained_layer", heads=heads[0], layer=entry.layer, asked=asked))
    if heads:
        raise ValueError(Message("common.err_trained_shape", name=name, heads=heads))
    if layer != "all" and head is not None and entry.layer == _int(layer, "layer") and entry.head == int(head):
        return fmap, []
    trained_on = Message("common.unknown_head") if entry.layer is None else where_message(entry.layer, entry.head)
    origin = {"trained": Message("common.origin_trained"), "uploaded": Message("common.origin_uploaded")}.get(
        entry.origin, str(entry.origin)[:80])
    raise ValueError(Message("common.err_trained_head", trained_on=trained_on, origin=origin, asked=asked))


def sample_model(sample) -> str | None:
    """The name of the model that read ``sample`` (a text source), None for other data."""
    info = getattr(sample, "info", None) or {}
    model = info.get("model") if isinstance(info, dict) else None
    return model if isinstance(model, str) else None


# ---------------------------------------------------------------------------------------
# Samples: loading, cached so that re-drawing a view does not re-run the model.
# ---------------------------------------------------------------------------------------

SAMPLE_CACHE_SIZE = 8
SAMPLE_CACHE_BYTES = 160 * 2 ** 20
def load_sample(source: str = "text", text: str = "", preset: str = "gaussian", n: int = 64, d: int = 32,
                data_seed: int = 0, temperature: float = 1.0, path: str | None = None, heads: int = 1,
                model: str | None = None, progress=None):
    """A Sample from the chosen source. Errors are ValueErrors with a message for the user.

    ``model`` picks the model that reads a text (None: the embedded one; see explorer.sources);
    ``progress(fraction, message)`` hears about a slow first load of it."""
    from .. import sources  # lazy: importing the text source pulls in transformers

    if source == "text":
        if not isinstance(text, str) or not text.strip():
            raise ValueError(Message("common.err_text_empty"))
        model = model if isinstance(model, str) and model.strip() else None
        key = ("text", text) if model is None else ("text", text, model)
        make = lambda: sources.from_text(text, model=model, progress=progress)  # noqa: E731
    elif source == "random":
        n, d, heads = _int(n, "N"), _int(d, "d"), _int(heads, "heads")
        data_seed, seed_notices = reduce_seed(data_seed, "data seed")
        try:
            temperature = float(temperature)
        except (TypeError, ValueError):
            raise ValueError(Message("sources.err_temperature_type", value=repr(temperature)[:40])) from None
        key = ("random", preset, n, d, data_seed, temperature, heads)
        make = lambda: sources.from_random(n, d, preset=preset, seed=data_seed,  # noqa: E731
                                           temperature=float(temperature), heads=heads)
    elif source == "file":
        if not path:
            raise ValueError(Message("common.err_no_upload"))
        key = None
        make = lambda: sources.load_file(path)  # noqa: E731
    else:
        raise ValueError(Message("common.err_source", source=repr(source)))
    if key is None:
        return make()
    sample = _sample_cache.get(key)
    if sample is None:
        sample = dataclasses.replace(make(), cache_key=key)
        _sample_cache.put(key, sample)
    if source == "random" and seed_notices:     # said on this answer only, not stored with the sample
        sample = dataclasses.replace(sample, notices=list(sample.notices) + seed_notices)
    return sample


def _sample_bytes(sample) -> int:
    tensors = [getattr(sample, name, None) for name in ("q", "k", "v", "model_attentions")]
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


# Bounded in count and in bytes: eight random samples at the element cap would be 400 MB.
_sample_cache = LRU(SAMPLE_CACHE_SIZE, max_weight=SAMPLE_CACHE_BYTES, weigh=_sample_bytes)


def clear_sample_cache():
    _sample_cache.clear()


def select_head(sample, layer, head):
    """(q, k, v, layer, head_or_None, notices): one head (N, d), or all heads (H, N, d) for the mean.

    ``head`` is an int or "mean". Out-of-range picks are clamped with a notice, so a URL
    made for the text model still opens on a one-head random sample.
    """
    notices = []
    layer = _int(layer, "layer")
    if not 0 <= layer < sample.n_layers:
        fixed = min(max(layer, 0), sample.n_layers - 1)
        if sample.n_layers > 1:  # a one-layer sample has nothing else to show: no need to say so
            notices.append(Message("common.no_layer", asked=layer, last=sample.n_layers - 1, used=fixed))
        layer = fixed
    if head in (None, "mean", "mean over heads"):
        return sample.q[layer], sample.k[layer], sample.v[layer], layer, None, notices
    head = _int(head, "head")
    if not 0 <= head < sample.n_heads:
        fixed = min(max(head, 0), sample.n_heads - 1)
        if sample.n_heads > 1:
            notices.append(Message("common.no_head", asked=head, last=sample.n_heads - 1, used=fixed))
        head = fixed
    return sample.q[layer, head], sample.k[layer, head], sample.v[layer, head], layer, head, notices


def _compare(reference, approx, v, s, ill, feature_dim, causal, head_dim) -> dict:
    from ..measure import metrics
    return metrics.compare(reference, approx, v=v, logits=s, ill_defined=ill, feature_dim=feature_dim,
                           causal=causal, head_dim=head_dim)


def _display(t: torch.Tensor, block: int) -> np.ndarray:
    """The map as shown: mean over heads when there are several, then block means."""
    a = t.detach().double()
    if a.dim() == 3:
        a = a.mean(0)
    a = a.numpy()
    if block > 1:
        a = block_mean(a, block)
    return a.astype(np.float32)


def block_mean(a: np.ndarray, block: int) -> np.ndarray:
    """Means of block x block tiles of a 2-d array (the last tiles may be smaller).

    Non-finite entries (ill-defined rows) propagate, so a bad row stays visible.
    """
    n0, n1 = a.shape
    if n0 % block == 0 and n1 % block == 0:      # the common case (N = 1024, 2048): no padding
        return a.reshape(n0 // block, block, n1 // block, block).mean(axis=(1, 3))
    r0, r1 = math.ceil(n0 / block), math.ceil(n1 / block)
    padded = np.zeros((r0 * block, r1 * block))
    count = np.zeros_like(padded)
    padded[:n0, :n1] = a
    count[:n0, :n1] = 1
    sums = padded.reshape(r0, block, r1, block).sum(axis=(1, 3))
    counts = count.reshape(r0, block, r1, block).sum(axis=(1, 3))
    return sums / counts


def block_labels(tokens: list[str], block: int) -> list[str]:
    if block <= 1:
        return tokens
    out = []
    for start in range(0, len(tokens), block):
        stop = min(start + block, len(tokens)) - 1
        out.append(f"{start}–{stop}")
    return out


# A metric row names its map by id ("map") and, where the id alone does not say it (a
# mechanism's settings), by the words a person reads ("label", a message).
ROW_NAMES = ("map", "label")


def row_name(row: dict) -> str:
    """The name of a metric row's map, as a person reads it (a message)."""
    return row.get("label") or map_label(row["map"])


def metrics_table(rows: list, digits: int = 4, short: bool = False):
    """Metric rows as a DataFrame: one row per map, the headline numbers first, columns
    labelled by messages (full labels, or ``short`` headers). A mean over rows that some
    rows lack says so in its cell ("n/a (127 of 128 rows)", or the number with the count):
    ``showing.shown_value``."""
    from ..measure.showing import UNDEFINED_ROWS, round_significant, shown_value
    from .frames import message_frame

    present = {key for row in rows for key in row if key not in ROW_NAMES}
    order = [*HEADLINE_METRICS, *METRIC_INFO]
    keys = [key for key in dict.fromkeys(order) if key in present]
    keys += sorted(present - set(keys))           # anything not in the catalog, last
    columns = {Message("common.map"): [row_name(row) for row in rows]}
    for key in keys:
        columns[metric_label(key, short)] = [shown_value(row, key, digits) if key in UNDEFINED_ROWS
                                             else round_significant(row.get(key), digits) for row in rows]
    return message_frame(columns)


def undefined_notes(rows: list) -> list[str]:
    """One sentence (a message) per table cell that is n/a or partly so: which map, how
    many rows and why, then the +inf rows and the maps without a normaliser (the one place
    these notes are written: the page, the CSV's notes and the tests read them here)."""
    from ..measure.showing import (DISTRIBUTION_METRICS, UNDEFINED_ROWS, mostly_undefined, undefined_share,
                                   weights_note, why_key)

    notes = []
    for row in rows:
        for key in UNDEFINED_ROWS:
            count, total = undefined_share(row, key)
            if key not in row or not count:
                continue
            if key in DISTRIBUTION_METRICS and row.get("unnormalised_rows"):
                continue        # the map's one note below says why KL and entropy do not apply
            mean = row.get(key)
            tail = "" if mean is None else Message("common.na_tail", rest=total - count, mean=f"{mean:.4g}")
            why = Message(why_key(row, key))
            verdict = Message("common.na_all" if mostly_undefined(row, key) else "common.na_part")
            notes.append(Message("common.na_note", map=row_name(row), metric=metric_label(key, True),
                                 verdict=verdict, count=count, total=total, why=why, tail=tail))
    notes += infinite_notes(rows)
    # A map without a normaliser: why it has no KL or entropy, and what judges it instead.
    notes += [weights_note(row, name=row_name(row)) for row in rows if row.get("unnormalised_rows")]
    if any(row.get("causal") for row in rows):
        # Which rows every mean is over (rowwise.rows_in_means), said once under the table.
        notes.append(Message("common.causal_rows_note"))
    return notes


def infinite_notes(rows: list) -> list[str]:
    """One sentence per map whose KL is +inf on some rows: on how many, why, and which rows
    the finite mean beside it covers."""
    from ..measure.showing import INFINITE_ROWS, infinite_note, infinite_count

    return [infinite_note(row, key, name=row_name(row), metric=metric_label(key, True))
            for row in rows for key in INFINITE_ROWS if key in row and infinite_count(row, key)]


def unk_count(sample) -> tuple[int, int]:
    """(tokens the model read as [UNK], tokens) of a text sample; (0, N) otherwise."""
    strings = (getattr(sample, "info", None) or {}).get("token_strings") or []
    return sum(1 for s in strings if s == "[UNK]"), sample.n_tokens


# ---------------------------------------------------------------------------------------
# Model and samples: read each text through the model once per process.
# ---------------------------------------------------------------------------------------

# Every text read by MiniLM is ~40 MB, by SmolLM2 ~230 MB: room for both, and the oldest
# texts of a third model go first.
SAMPLES_CACHE_BYTES = 512 * 2 ** 20
_samples = LRU(max_weight=SAMPLES_CACHE_BYTES, weigh=_sample_bytes)     # (model key, text) -> Sample


def model_argument(model) -> str | None:
    """``model`` as the sources take it: None for the embedded MiniLM ("" or its name too)."""
    if model is None:
        return None
    if not isinstance(model, str):
        raise ValueError(Message("common.err_model_arg", kind=type(model).__name__))
    model = model.strip()
    return None if model in ("", EMBEDDED_NAME) else model


def model_where(model=None):
    """Where ``model`` lives (``sources.models.resolve``): an unknown model, or one this
    server does not allow, is refused here in one sentence, before anything is loaded."""
    from ..sources import models
    model = model_argument(model)
    return models.resolve(model)


def check_model(model) -> str | None:
    """``model`` as the sources take it (None: the embedded MiniLM), after checking, from its
    config alone, that it can be read here: a refusal otherwise, which says in English the
    sources' own sentence (exactly why) and in Chinese which models are offered."""
    try:
        model = model_argument(model)
        model_where(model)
        model_info(model)
    except ValueError as exc:
        from ..sources import models
        shown = models.shown(model if isinstance(model, str) else type(model).__name__)
        choices = Joined([name for name, ready in models.built_in_models() if ready], "learn.choice_sep")
        offered = Message("learn.err_model", model=ModelName(shown), choices=choices)
        raise ValueError(ErrorWords({lang: say_error(exc) if lang == DEFAULT_LANG else offered.say(lang)
                                     for lang in LANGS})) from None
    return model


def model_name(model=None) -> str:
    """The name a sample read by ``model`` carries (``Sample.info["model"]``)."""
    return model_where(model).name


def model_shape(model=None) -> tuple[int, int, int]:
    """(layers, heads, head_dim) of ``model`` (None: the embedded one), from its config alone."""
    return tuple(model_info(model)[:3])


def model_info(model=None) -> tuple[int, int, int, bool]:
    """(layers, heads, head_dim, causal) of ``model``, read without loading its weights."""
    from ..sources import model_shape as shape_of
    return tuple(shape_of(model_argument(model)))


def cached_sample(text: str, model=None):
    """``from_text`` of ``model`` (None: the embedded one), remembered per model: the texts are
    fixed files, and reading 56 of them through a model costs far more than training one head."""
    model = model_argument(model)
    key = (model_where(model).key, text)
    sample = _samples.get(key)
    if sample is None:
        from ..sources import from_text
        sample = from_text(text, model=model)
        _samples.put(key, sample)
    return sample
