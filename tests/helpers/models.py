"""Models the tests build or read: tiny random models of each family saved here (nothing is
downloaded), and the packaged SmolLM2-135M where it is installed and converted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from explorer import sources
from explorer.sources import packaged

# The text the tiny tokenizers are trained on (and the model tests read): Latin, Chinese, emoji.
TEXT = "The cat sat on the mat. 猫坐在垫子上，看着窗外。 Kernel 核 🧠 naïve"


def byte_bpe(corpus=None, vocab_size: int = 300):
    """A small byte-level BPE tokenizer trained here on ``corpus`` (default: TEXT and a short
    English sentence, three times) with GPT-2's scheme, so nothing is downloaded."""
    from tokenizers import Tokenizer, decoders, models as tok_models, pre_tokenizers, processors, trainers

    tok = Tokenizer(tok_models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus or [TEXT, "the cat sat on the mat"] * 3, trainer)
    return tok


def save_tiny(folder: Path, model_type: str) -> Path:
    """A tiny random model of ``model_type`` with a byte-level tokenizer (a WordPiece one for bert)."""
    import transformers
    from transformers import AutoModel, PreTrainedTokenizerFast

    if model_type == "bert":
        tok = transformers.AutoTokenizer.from_pretrained(sources.embedded_model_path(), local_files_only=True)
        vocab = tok.vocab_size
    else:
        backend = byte_bpe()
        tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>")
        vocab = backend.get_vocab_size()
    common = dict(vocab_size=vocab, initializer_range=0.5)
    if model_type == "gpt2":
        config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=16, n_positions=64, **common)
    elif model_type == "bert":
        config = transformers.BertConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                         intermediate_size=32, max_position_embeddings=64, **common)
    else:   # Llama layout: 6 query heads reading 2 key/value heads, RoPE
        cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config,
               "mistral": transformers.MistralConfig}[model_type]
        config = cls(hidden_size=48, num_hidden_layers=2, num_attention_heads=6, num_key_value_heads=2,
                     intermediate_size=64, max_position_embeddings=128, **common)
    torch.manual_seed(0)
    AutoModel.from_config(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


SMOLLM2 = packaged.SMOLLM2.name


def smollm2_folder() -> Path | None:
    """SmolLM2's converted folder, or None where it is not installed and converted."""
    gguf = packaged.gguf_path(packaged.SMOLLM2)
    folder = packaged.converted_folder(packaged.SMOLLM2, gguf) if gguf is not None else None
    return folder if folder is not None and packaged.is_converted(folder) else None


needs_smollm2 = pytest.mark.skipif(smollm2_folder() is None,
                                   reason="SmolLM2-135M is not installed and converted here")


def smollm2_shape() -> tuple[int, int]:
    """(layers, heads) as the converted model's own config.json says: what the controls must follow."""
    config = json.loads((smollm2_folder() / "config.json").read_text(encoding="utf-8"))
    return config["num_hidden_layers"], config["num_attention_heads"]
