"""Q, K, V captured from a real transformer reading a text.

The point of this source is that a lecturer can show *real* attention, not a toy: the
queries, keys and values are read straight out of the model's attention layers with
forward hooks (``families.py``), and the model's own attention probabilities come along,
so anyone can check that softmax(q k^T / sqrt(d)) really is what the model computed
(``info`` carries that check's error for every sample).

Which models can read (``models.py``): the embedded all-MiniLM-L6-v2 (bidirectional), the
packaged causal SmolLM2-135M (``packaged.py``), a saved folder or a Hugging Face Hub id of
the BERT, GPT-2 or Llama families. Each model is loaded once per process, lazily, under a
lock: the app serves several users at once.
"""

from __future__ import annotations

import torch

from ..checks import check_positive_int
from ..diagnostics.attention import softmax_map
from .families import capture as _run
from .labels import display_labels, surface_pieces, visible as _visible  # noqa: F401 - re-exported
from .models import (  # noqa: F401 - the loading API, re-exported where it always was
    EMBEDDED_NAME, SUPPORTED_MODEL_TYPES, LoadedModel, clear_cache, embedded_model_path, get_model,
    loaded_models, built_in_models, model_shape, preload,
)
from .sample import Sample
from ..text import Message, ModelName

MAX_TEXT_CHARS = 100_000     # tokenising more than this is wasted work: at most 512 tokens are kept
RECOMPUTE_TOLERANCE = 1e-4   # above this, a notice says the model is not plain dot-product attention


def _clean_text(text) -> tuple[str, list[str]]:
    if not isinstance(text, str):
        raise ValueError(Message("sources.err_text_type", kind=type(text).__name__))
    if not text.strip():
        raise ValueError(Message("sources.err_text_empty"))
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(Message("sources.err_text_chars", count=len(text), cap=MAX_TEXT_CHARS))
    try:
        text.encode("utf-8")
        return text, []
    except UnicodeEncodeError:  # lone surrogates: replaced one for one, so offsets still fit
        bad = sum(1 for ch in text if 0xD800 <= ord(ch) <= 0xDFFF)
        fixed = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
        return fixed, [Message("sources.replaced_surrogates", count=bad)]


def from_text(text, model=None, max_tokens: int = 512, *, special_tokens: bool = True, progress=None) -> Sample:
    """Run a model on ``text`` and return its per-layer, per-head Q, K, V.

    ``model``: None (the embedded all-MiniLM-L6-v2), "SmolLM2-135M", a folder or a Hub id
    (see ``models.py``). ``progress(fraction, message)`` hears about a slow first load.

    ``max_tokens`` counts special tokens too and is capped by the model's position limit;
    longer texts are truncated at the end with a notice saying how many tokens were dropped.
    ``special_tokens=False`` drops [CLS]/[SEP]-like tokens from the result (the model still
    reads them), restricting the model's attention rows to the kept tokens and renormalising.
    """
    text, notices = _clean_text(text)
    max_tokens = check_positive_int(max_tokens, "max_tokens")
    if not isinstance(special_tokens, bool):
        raise ValueError(Message("sources.err_special_tokens", value=repr(special_tokens)))
    loaded = get_model(model, progress)
    enc, total = _tokenize(loaded, text, max_tokens, notices)
    q, k, v, attn = _capture(loaded, enc.ids, notices)

    pieces = _pieces(loaded, text, enc)
    kept = [i for i, special in enumerate(enc.special_tokens_mask) if special_tokens or not special]
    if len(kept) < len(pieces):
        dropped = [piece for piece, special in zip(pieces, enc.special_tokens_mask) if special]
        index = torch.tensor(kept)
        q, k, v = q[:, :, index], k[:, :, index], v[:, :, index]
        attn = attn[:, :, index][..., index]
        attn = attn / attn.sum(-1, keepdim=True)
        notices.append(Message("common.src_special", tokens=", ".join(dropped), kept=len(kept)))

    # The honesty check: the map we will show as "softmax" must be the model's own.
    causal = loaded.causal
    error = float((softmax_map(q, k, causal=causal) - attn).abs().max())
    if error > RECOMPUTE_TOLERANCE:
        notices.append(Message("common.src_not_sdpa", error=f"{error:.2g}"))
    return Sample(
        q=q, k=k, v=v, tokens=display_labels([pieces[i] for i in kept]), model_attentions=attn,
        notices=notices, offsets=[tuple(enc.offsets[i]) for i in kept], causal=causal,
        source=Message("sources.from_text", model=ModelName(loaded.name), n=len(kept),
                       tail=Message("sources.from_text_causal") if causal else ""),
        layer_names=[f"layer {i}" for i in range(q.shape[0])], text=text,
        info={
            "model": ModelName(loaded.name), "model_type": loaded.model_type, "path": loaded.path,
            "token_ids": [enc.ids[i] for i in kept], "token_strings": [enc.tokens[i] for i in kept],
            "special": [bool(enc.special_tokens_mask[i]) for i in kept],
            "tokens_in_text": total, "recompute_max_abs_err": error,
        },
    )


def _pieces(loaded, text: str, enc) -> list[str]:
    """What each token shows: its own string (WordPiece), or for byte-level BPE, whose strings
    ("Ġcat", "æĪ") are unreadable, the text its bytes cover (see labels.surface_pieces)."""
    pieces = list(enc.tokens)
    if not loaded.byte_level:
        return pieces
    content = [i for i, special in enumerate(enc.special_tokens_mask) if not special]
    surface = surface_pieces(text, [enc.tokens[i] for i in content])
    for j, i in enumerate(content):
        start, end = enc.offsets[i]
        if surface is not None:
            pieces[i] = surface[j]
        elif end > start:                  # a tokenizer that normalises: its offsets still point at the text
            pieces[i] = text[start:end]
    return pieces


def text_shape(text, model=None, max_tokens: int = 512, progress=None) -> tuple[int, int, int, int]:
    """(tokens, layers, heads, head dim) of what ``from_text`` would return for ``text``, from
    the tokenizer and the model's config alone: the model does not read the text, so a
    request can be priced before its forward pass."""
    text, _ = _clean_text(text)
    loaded = get_model(model, progress)
    enc, _ = _tokenize(loaded, text, check_positive_int(max_tokens, "max_tokens"), [])
    config = loaded.model.config
    heads = int(config.num_attention_heads)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return len(enc.ids), int(config.num_hidden_layers), heads, int(head_dim)


def _tokenize(loaded: LoadedModel, text: str, max_tokens: int, notices: list[str]):
    """(encoding with special tokens, content tokens before truncation), truncating with a notice."""
    content = loaded.tokenizer.encode(text, add_special_tokens=False)
    total = len(content.ids)
    if total == 0:
        raise ValueError(Message("sources.err_no_tokens"))
    limit = min(max_tokens, loaded.position_limit)
    keep = limit - loaded.n_special
    if keep < 1:
        raise ValueError(Message("sources.err_max_tokens", max_tokens=max_tokens, special=loaded.n_special))
    if total > keep:
        content.truncate(keep)
        why = Message("common.src_limit_model" if limit == loaded.position_limit else "common.src_limit_max")
        notices.append(Message("common.src_truncated", dropped=total - keep, total=total, kept=keep, limit=limit,
                               why=why, special=loaded.n_special))
    return loaded.tokenizer.post_process(content, None, True), total


def _capture(loaded: LoadedModel, ids: list[int], notices: list[str]):
    """(q, k, v, model attentions) with q rescaled, if need be, so that s = q.k / sqrt(d) holds."""
    q, k, v, attn, scales = _run(loaded, ids)
    factors = scales * q.shape[-1] ** 0.5
    if (factors - 1).abs().max() > 1e-6:
        q = q * factors.view(-1, 1, 1, 1)
        notices.append(Message("common.src_rescaled", scales=", ".join(f"{x:.3g}" for x in scales.tolist())))
    return q, k, v, attn
