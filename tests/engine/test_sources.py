"""Tests for explorer.sources: real attention from text, random presets, uploaded arrays.

The central claim of the text source is checked directly: softmax(q k^T / sqrt(d))
recomputed from the captured Q and K equals the model's own attention probabilities.
Tiny BERT, RoBERTa and GPT-2 models are built here, offline, so no test downloads anything.
"""

from __future__ import annotations

import json
import math
import pickle
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

_WARM_BEFORE = "transformers.modeling_utils" in sys.modules
from explorer import sources  # noqa: E402 - the lines around it observe what importing it does

_LOADED_AT_IMPORT = sources.loaded_models()
_WARM_AFTER = "transformers.modeling_utils" in sys.modules
from explorer.diagnostics.attention import softmax_map  # noqa: E402
from explorer.sources import arrays as arrays_mod  # noqa: E402
from explorer.sources import models as models_mod  # noqa: E402
from helpers.models import byte_bpe  # noqa: E402
from explorer.sources import text as text_mod  # noqa: E402


TEXTS = {
    "english": "The cat sat on the mat, and the dog watched the cat sleeping.",
    "chinese": "注意力机制可以看作核回归。我爱北京天安门。",
    "arabic": "مرحبا بالعالم، الانتباه هو انحدار نواة",
    "hebrew": "שלום עולם, קשב הוא רגרסיית גרעין",
    "emoji": "I ❤️ attention 🐍🔥 👩‍👩‍👧 ok",
    "mixed": "Kernel 核 نواة 🧠 naïve café x²",
}


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """These tests do small forward passes; on the shared 2-core machines two OpenMP threads
    spin against other jobs and run several times slower than one. Restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def assert_recomputes(sample, tol=1e-5):
    """Every layer and head: softmax from captured Q, K == the model's own attention."""
    recomputed = softmax_map(sample.q, sample.k, causal=sample.causal)
    err = (recomputed - sample.model_attentions).abs().max().item()
    assert err <= tol, f"recomputed softmax differs by {err}"


# ---------------------------------------------------------------- tiny local models

@pytest.fixture(scope="module")
def minilm_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(sources.embedded_model_path(), local_files_only=True)


def _tiny_encoder(folder: Path, tokenizer, config_cls, **extra) -> Path:
    config = config_cls(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, initializer_range=0.5, **extra)
    torch.manual_seed(0)
    from transformers import AutoModel

    AutoModel.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, minilm_tokenizer):
    from transformers import BertConfig

    return _tiny_encoder(tmp_path_factory.mktemp("tiny_bert"), minilm_tokenizer, BertConfig,
                         max_position_embeddings=64)


@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory, minilm_tokenizer):
    from transformers import RobertaConfig

    return _tiny_encoder(tmp_path_factory.mktemp("tiny_roberta"), minilm_tokenizer, RobertaConfig,
                         max_position_embeddings=66, pad_token_id=1)


def _tiny_gpt2(folder: Path, **extra) -> Path:
    from transformers import GPT2Config, GPT2Model, PreTrainedTokenizerFast

    tok = byte_bpe(list(TEXTS.values()) + ["the cat sat on the mat"] * 3, vocab_size=320)
    config = GPT2Config(vocab_size=tok.get_vocab_size(), n_layer=2, n_head=2, n_embd=16, n_positions=32,
                        bos_token_id=0, eos_token_id=0, initializer_range=0.5, **extra)
    torch.manual_seed(0)
    GPT2Model(config).save_pretrained(folder)
    PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>").save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    return _tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))


# ---------------------------------------------------------------- embedded model

@pytest.mark.parametrize("name", sorted(TEXTS))
def test_embedded_model_attention_is_softmax_of_captured_qk(name):
    sample = sources.from_text(TEXTS[name])
    n = sample.n_tokens
    assert sample.q.shape == sample.k.shape == sample.v.shape == (6, 12, n, 32)
    assert sample.q.dtype == sample.k.dtype == sample.v.dtype == torch.float32
    assert sample.model_attentions.shape == (6, 12, n, n)
    assert not sample.causal and sample.notices == []
    assert sample.layer_names == [f"layer {i}" for i in range(6)]
    assert sample.source == f"all-MiniLM-L6-v2, {n} tokens"
    assert_recomputes(sample)


def test_labels_are_unique_readable_and_offsets_point_at_the_words():
    text = "The cat saw the other cat; the kernelised cat slept."
    sample = sources.from_text(text)
    labels, pieces = sample.tokens, sample.info["token_strings"]
    assert len(labels) == len(set(labels)) == sample.n_tokens
    assert labels[0] == "[CLS]·0" and labels[-1] == f"[SEP]·{sample.n_tokens - 1}"
    the_rows = [f"the·{i}" for i, piece in enumerate(pieces) if piece == "the"]
    assert len(the_rows) == 3 and [lab for lab in labels if lab.startswith("the·")] == the_rows
    assert any(lab.startswith("##") for lab in labels)  # word pieces keep their ## mark
    for piece, (start, end), special in zip(pieces, sample.offsets, sample.info["special"]):
        if special:
            assert (start, end) == (0, 0)
        else:
            assert text[start:end].lower() == piece.removeprefix("##")


def test_labels_make_invisible_characters_visible():
    labels = sources.display_labels(["a b", "\u200f", "", "x\x07", "\n"])
    assert labels == ["a␣b·0", "\\u200f·1", "∅·2", "x\\u0007·3", "⏎·4"]


def test_special_tokens_can_be_dropped_with_renormalised_rows():
    text = TEXTS["english"]
    full = sources.from_text(text)
    sample = sources.from_text(text, special_tokens=False)
    assert sample.n_tokens == full.n_tokens - 2
    assert not any("[CLS]" in t or "[SEP]" in t for t in sample.tokens)
    assert torch.equal(sample.q, full.q[:, :, 1:-1])
    assert torch.allclose(sample.model_attentions.sum(-1), torch.ones(6, 12, sample.n_tokens), atol=1e-6)
    assert_recomputes(sample)
    (notice,) = sample.notices
    assert "[CLS]" in notice and "renormalised to sum to 1" in notice
    with pytest.raises(ValueError, match="special_tokens"):
        sources.from_text(text, special_tokens="no")


@pytest.mark.parametrize("bad", ["", "   \n\t ", "\x00\x01\x07\x7f", "\u200b\u200f"])
def test_empty_text_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="^text: "):
        sources.from_text(bad)


def test_text_type_and_length_are_checked():
    with pytest.raises(ValueError, match="text: expected a string"):
        sources.from_text(42)
    with pytest.raises(ValueError, match="text: .* over the limit"):
        sources.from_text("a" * (text_mod.MAX_TEXT_CHARS + 1))
    with pytest.raises(ValueError, match="max_tokens"):
        sources.from_text("hello", max_tokens=0)
    with pytest.raises(ValueError, match="max_tokens"):
        sources.from_text("hello", max_tokens=2)  # no room beside [CLS] and [SEP]


@pytest.mark.parametrize("text", [
    "a\x00b\x07c\x1b[31m red \x7f",                 # control characters amid words
    "\u202eevil\u202c \u200fשלום\u200e ok",           # bidi overrides and marks
    "e\u0301 \u0915\u094d\u0937 Z\u0351\u0352",       # combining marks, Devanagari conjunct
    "lone \ud800 surrogate",                          # not valid UTF-8 at all
    "🏳️‍🌈" * 3 + " \U0001F9EC\U000E0067",           # ZWJ sequences, tag characters
])
def test_any_unicode_works(text):
    sample = sources.from_text(text)
    assert len(set(sample.tokens)) == sample.n_tokens
    assert all(lab for lab in sample.tokens)
    assert_recomputes(sample)


def test_surrogates_are_replaced_with_a_notice():
    sample = sources.from_text("lone \ud800 surrogate")
    assert any("surrogate" in n for n in sample.notices)


def test_long_text_is_truncated_with_the_dropped_count():
    text = " ".join(["attention"] * 700)
    sample = sources.from_text(text)
    assert sample.n_tokens == 512
    assert sample.info["tokens_in_text"] == 700
    (notice,) = sample.notices
    assert "dropped the last 190 of 700 tokens" in notice and "position limit" in notice
    short = sources.from_text(text, max_tokens=20)
    assert short.n_tokens == 20
    assert "dropped the last 682 of 700" in short.notices[0] and "max_tokens" in short.notices[0]
    assert short.tokens[-1] == "[SEP]·19"


# ---------------------------------------------------------------- loading

def test_importing_sources_loads_no_model():
    assert _LOADED_AT_IMPORT == []
    assert _WARM_BEFORE or not _WARM_AFTER, "importing explorer.sources imported transformers' models"


def test_model_is_loaded_once_under_concurrent_calls(monkeypatch):
    sources.clear_cache()
    loads = []
    real_load = models_mod._load

    def counting_load(*args):
        loads.append(args)
        return real_load(*args)

    monkeypatch.setattr(models_mod, "_load", counting_load)
    barrier = threading.Barrier(8)
    results, errors = [None] * 8, []

    def call(i):
        try:
            barrier.wait()
            results[i] = sources.from_text(f"thread number {i} reads the same model")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(loads) == 1
    for sample in results:
        assert_recomputes(sample)
    assert len(sources.loaded_models()) == 1


def test_loading_needs_no_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise OSError("network access attempted during an offline test")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    sources.clear_cache()
    sample = sources.from_text("offline and quiet")
    assert_recomputes(sample)
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"


def test_bad_model_arguments(tmp_path):
    with pytest.raises(ValueError, match="model: .*not a local folder nor a Hub id"):
        sources.from_text("hi", model=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="model: .*not in the local Hugging Face cache"):
        sources.from_text("hi", model="sentence-transformers/all-MiniLM-L6-v2")  # offline: no download
    with pytest.raises(ValueError, match="model: no config.json"):
        sources.from_text("hi", model=tmp_path)
    with pytest.raises(ValueError, match="model: expected None"):
        sources.from_text("hi", model=3)
    from transformers import T5Config

    T5Config(d_model=16, num_layers=1, num_heads=2).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"model: model_type 't5' is not supported; supported: bert, gpt2, llama, "
                                         r"mistral, qwen2, roberta"):
        sources.from_text("hi", model=tmp_path)


# ---------------------------------------------------------------- other models

@pytest.mark.parametrize("family", ["tiny_bert", "tiny_roberta"])
def test_tiny_encoders(family, request):
    folder = request.getfixturevalue(family)
    sample = sources.from_text(TEXTS["english"] + " " + TEXTS["chinese"], model=folder)
    assert sample.q.shape == (2, 2, sample.n_tokens, 8) and not sample.causal
    assert sample.source.startswith(folder.name)
    assert_recomputes(sample)
    long = sources.from_text("word " * 100, model=folder)
    assert long.n_tokens == 64 and "dropped the last 38 of 100" in long.notices[0]


def test_tiny_gpt2_is_causal_and_exact(tiny_gpt2):
    sample = sources.from_text(TEXTS["mixed"], model=tiny_gpt2)
    n = sample.n_tokens
    assert sample.causal and sample.source == f"{tiny_gpt2.name}, {n} tokens, causal"
    assert sample.q.shape == (2, 2, n, 8)
    assert_recomputes(sample)
    assert sample.model_attentions.triu(1).abs().max() == 0  # no token sees the future
    assert len(set(sample.tokens)) == n
    assert any(lab.startswith("核·") for lab in sample.tokens)  # labels by surface text, not bytes
    # Genuinely causal: appending text leaves every earlier token's Q, K, V unchanged.
    longer = sources.from_text(TEXTS["mixed"] + " and more words", model=tiny_gpt2)
    assert torch.allclose(longer.q[:, :, :n], sample.q, atol=1e-5)
    assert torch.allclose(longer.v[:, :, :n], sample.v, atol=1e-5)
    truncated = sources.from_text("the cat sat on the mat " * 20, model=tiny_gpt2)
    assert truncated.n_tokens == 32 and "position limit" in truncated.notices[0]


def test_unusual_logit_scaling_is_folded_into_q(tmp_path):
    folder = _tiny_gpt2(tmp_path, scale_attn_by_inverse_layer_idx=True)
    sample = sources.from_text("the cat sat on the mat", model=folder)
    assert any("1/sqrt(d)" in n for n in sample.notices)
    assert_recomputes(sample)


def test_models_are_cached_separately(tiny_bert, tiny_gpt2, monkeypatch):
    sources.from_text("warm", model=tiny_bert)
    sources.from_text("warm", model=tiny_gpt2)
    sources.from_text("warm")
    monkeypatch.setattr(models_mod, "_load", lambda *a: pytest.fail("reloaded a cached model"))
    for model in (tiny_bert, str(tiny_gpt2), None, sources.EMBEDDED_NAME):
        sources.from_text("again", model=model)
    paths = {m["path"] for m in sources.loaded_models()}
    assert {str(tiny_bert.resolve()), str(tiny_gpt2.resolve())} <= paths


# ---------------------------------------------------------------- random presets

def test_random_shapes_and_determinism():
    a = sources.from_random(10, 4, heads=3, seed=7)
    b = sources.from_random(10, 4, heads=3, seed=7)
    c = sources.from_random(10, 4, heads=3, seed=8)
    assert a.q.shape == a.k.shape == a.v.shape == (1, 3, 10, 4) and a.q.dtype == torch.float32
    assert all(torch.equal(x, y) for x, y in ((a.q, b.q), (a.k, b.k), (a.v, b.v)))
    assert not torch.equal(a.q, c.q)
    assert a.tokens == [f"t{i}" for i in range(10)] and a.model_attentions is None and not a.causal


@pytest.mark.parametrize("preset", sources.PRESETS)
def test_every_preset_works_down_to_one_token(preset):
    for n in (1, 2, 33):
        sample = sources.from_random(n, 8, preset=preset, heads=2)
        assert sample.q.shape == (1, 2, n, 8) and torch.isfinite(sample.q).all()


def _maps(preset, n=64, d=64, **kw):
    sample = sources.from_random(n, d, preset=preset, heads=2, **kw)
    return sample, softmax_map(sample.q[0], sample.k[0])


def test_needle_rows_peak_at_their_needle():
    sample, attn = _maps("needle")
    assert torch.equal(attn.argmax(-1), torch.tensor(sample.info["needles"]))
    assert attn.max(-1).values.mean() > 0.9


def test_local_attends_to_neighbours():
    _, attn = _maps("local")
    i = torch.arange(64)
    near = ((i[:, None] - i[None, :]).abs() <= 2).float()
    assert (attn * near).sum(-1).mean() > 0.7
    _, flat = _maps("gaussian")
    assert (flat * near).sum(-1).mean() < 0.3


def test_clustered_attends_within_its_cluster():
    sample, attn = _maps("clustered")
    query_cluster, key_cluster = (torch.tensor(sample.info[k]) for k in ("query_cluster", "key_cluster"))
    same = query_cluster[..., :, None] == key_cluster[..., None, :]
    assert (attn * same).sum(-1).mean() > 0.9


def test_temperature_goes_from_spiky_to_flat():
    def entropy(t):
        _, attn = _maps("gaussian", temperature=t)
        return -(attn * attn.clamp_min(1e-30).log()).sum(-1).mean().item()

    assert entropy(0.25) < entropy(1.0) < entropy(4.0) <= math.log(64) + 1e-4


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=0, d=4), "n"), (dict(n=-3, d=4), "n"), (dict(n=2.5, d=4), "n"), (dict(n=True, d=4), "n"),
    (dict(n=4, d=0), "d"), (dict(n=4, d=4, heads=0), "heads"),
    (dict(n=4, d=4, temperature=0), "temperature"), (dict(n=4, d=4, temperature=-1), "temperature"),
    (dict(n=4, d=4, temperature=float("nan")), "temperature"),
    (dict(n=4, d=4, temperature=float("inf")), "temperature"), (dict(n=4, d=4, temperature="hot"), "temperature"),
    (dict(n=4, d=4, preset="spiky"), "preset"), (dict(n=4, d=4, seed=-1), "seed"), (dict(n=4, d=4, seed=1.5), "seed"),
    (dict(n=9000, d=4), "n"), (dict(n=8192, d=1024), "n, d, heads"), (dict(n=4, d=1, preset="local"), "d"),
])
def test_random_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}: "):
        sources.from_random(**kwargs)


# ---------------------------------------------------------------- arrays and files

def test_from_arrays_shapes_and_invented_values():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    sample = sources.from_arrays(q, k)
    assert sample.q.shape == (1, 1, 5, 3) and sample.q.dtype == torch.float32
    assert torch.allclose(sample.q[0, 0].double(), torch.from_numpy(q), atol=1e-6)
    assert "v: not given" in sample.notices[0]
    assert torch.equal(sample.v, sources.from_arrays(q, k).v)  # invented values are seeded
    multi = sources.from_arrays(torch.randn(2, 5, 3), torch.randn(2, 5, 3), torch.randn(2, 5, 7))
    assert multi.q.shape == (1, 2, 5, 3) and multi.v.shape == (1, 2, 5, 7) and multi.notices == []
    assert multi.tokens == ["t0", "t1", "t2", "t3", "t4"]


def test_from_arrays_dtypes():
    ints = sources.from_arrays(np.arange(6).reshape(3, 2), np.ones((3, 2), dtype=np.int32), np.zeros((3, 2)))
    assert ints.q.dtype == torch.float32 and "q: integer array (int64) converted" in ints.notices[0]
    half = sources.from_arrays(torch.randn(3, 2, dtype=torch.bfloat16), torch.randn(3, 2).half(), torch.randn(3, 2))
    assert half.q.dtype == torch.float32
    for bad in (np.ones((3, 2), dtype=bool), np.ones((3, 2), dtype=complex), torch.ones(3, 2, dtype=torch.complex64),
                np.array([["a", "b"]] * 3), np.array([[object(), 1]] * 3, dtype=object)):
        with pytest.raises(ValueError, match="^q: dtype .* is refused"):
            sources.from_arrays(bad, np.ones((3, 2)))


@pytest.mark.parametrize("q, k, v, name", [
    (np.ones(4), np.ones(4), None, "q"),
    (np.ones((1, 2, 4, 3)), np.ones((1, 2, 4, 3)), None, "q"),
    (np.ones((4, 3)), np.ones((5, 3)), None, "k"),
    (np.ones((4, 3)), np.ones((4, 3)), np.ones((5, 3)), "v"),
    (np.ones((0, 3)), np.ones((0, 3)), None, "q"),
    (np.full((4, 3), np.nan), np.ones((4, 3)), None, "q"),
    (np.ones((4, 3)), np.full((4, 3), np.inf), None, "k"),
    (np.ones((4, 3)), np.full((4, 3), 1e300), None, "k"),
    ([[1, 2], [3]], np.ones((2, 2)), None, "q"),
])
def test_from_arrays_rejects_bad_input(q, k, v, name):
    with pytest.raises(ValueError, match=f"^{name}: "):
        sources.from_arrays(q, k, v)


def test_from_arrays_caps_size(monkeypatch):
    monkeypatch.setattr(arrays_mod, "MAX_ELEMENTS", 100)
    with pytest.raises(ValueError, match="q: 120 elements is over the cap"):
        sources.from_arrays(np.ones((40, 3)), np.ones((40, 3)))
    monkeypatch.setattr(arrays_mod, "MAX_TOKENS", 10)
    with pytest.raises(ValueError, match="q: N = 20 tokens"):
        sources.from_arrays(np.ones((20, 2)), np.ones((20, 2)))


def test_load_file_layouts(tmp_path):
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(2, 6, 4)).astype(np.float32) for _ in range(3))
    np.save(tmp_path / "stack.npy", np.stack([q, k, v]))
    np.savez(tmp_path / "named.npz", q=q[0], k=k[0], notes=np.zeros(1))
    torch.save({"q": torch.from_numpy(q), "k": torch.from_numpy(k), "v": torch.from_numpy(v)}, tmp_path / "d.pt")
    torch.save(torch.from_numpy(np.stack([q[0], k[0]])), tmp_path / "one.pt")

    stacked = sources.load_file(tmp_path / "stack.npy")
    assert stacked.q.shape == (1, 2, 6, 4) and torch.equal(stacked.v[0], torch.from_numpy(v))
    assert stacked.notices == [] and stacked.source.startswith("file stack.npy")
    named = sources.load_file(str(tmp_path / "named.npz"))
    assert named.q.shape == (1, 1, 6, 4) and "Ignored arrays other than q, k, v: notes." in named.notices
    assert torch.equal(sources.load_file(tmp_path / "d.pt").k[0], torch.from_numpy(k))
    assert sources.load_file(tmp_path / "one.pt").q.shape == (1, 1, 6, 4)


def test_load_file_rejects_bad_files(tmp_path, monkeypatch):
    np.save(tmp_path / "four.npy", np.ones((4, 5, 2)))
    np.savez(tmp_path / "nok.npz", q=np.ones((5, 2)))
    (tmp_path / "noise.npy").write_bytes(b"\x93NUMPY garbage")
    (tmp_path / "noise.npz").write_bytes(b"PK\x03\x04 not a zip")
    (tmp_path / "noise.pt").write_bytes(b"\x80\x02 broken")
    (tmp_path / "data.csv").write_text("1,2\n")
    torch.save([1, 2, 3], tmp_path / "list.pt")
    cases = {"four.npy": "stacked on the first axis", "nok.npz": "needs arrays named 'q' and 'k'",
             "noise.npy": "not a plain .npy", "noise.npz": "not a readable .npz", "noise.pt": "refused",
             "data.csv": "unsupported type", "list.pt": "dict of tensors", "missing.npy": "not a readable file"}
    for name, message in cases.items():
        with pytest.raises(ValueError, match=f"^path: .*{message}"):
            sources.load_file(tmp_path / name)
    np.save(tmp_path / "big.npy", np.ones((2, 10, 10)))
    monkeypatch.setattr(arrays_mod, "MAX_FILE_BYTES", 500)
    with pytest.raises(ValueError, match="path: big.npy is .* bytes, over the limit"):
        sources.load_file(tmp_path / "big.npy")
    np.savez_compressed(tmp_path / "bomb.npz", q=np.zeros((4000, 2)), k=np.zeros((4000, 2)))
    monkeypatch.setattr(arrays_mod, "MAX_FILE_BYTES", (tmp_path / "bomb.npz").stat().st_size + 10)
    with pytest.raises(ValueError, match="path: bomb.npz unpacks to"):
        sources.load_file(tmp_path / "bomb.npz")


class Payload:
    """Pickling this records a call to open(marker, "w"): unpickling it creates the file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_malicious_pickles_are_refused_without_running(tmp_path):
    control = tmp_path / "control-marker"
    pickle.loads(pickle.dumps(Payload(control))).close()
    assert control.exists()  # the payload is real: unpickling it does create the file

    marker = tmp_path / "marker"
    torch.save({"q": Payload(marker), "k": torch.ones(2, 2)}, tmp_path / "evil.pt")
    np.save(tmp_path / "evil.npy", np.array([Payload(marker)], dtype=object), allow_pickle=True)
    (tmp_path / "raw.npy").write_bytes(pickle.dumps(Payload(marker)))
    np.savez(tmp_path / "evil.npz", q=np.array([Payload(marker)], dtype=object), k=np.ones((2, 2)))
    for name in ("evil.pt", "evil.npy", "raw.npy", "evil.npz"):
        with pytest.raises(ValueError, match="^path: "):
            sources.load_file(tmp_path / name)
        assert not marker.exists(), f"{name} ran its payload"


# ---------------------------------------------------------------- benchmark

def test_measure_text_source_goes_to_a_fresh_process_when_warm(monkeypatch):
    from explorer.measure import bench_sources

    sources.from_text("make this process warm")
    here = bench_sources._measure_here(24, 2)  # what the fresh process runs, measured warm here
    assert here["tokens"] == 24 and here["from_text_p50_ms"] > 0 and here["first_load_s"] >= 0
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout="noise\n" + json.dumps(here) + "\n", stderr="")

    monkeypatch.setattr(bench_sources.subprocess, "run", fake_run)
    result = bench_sources.measure_text_source(n_tokens=24, repeats=2)
    (cmd,) = calls
    assert cmd[0] == sys.executable and "_measure_here(24, 2)" in cmd[-1]
    assert result["measured_in"] == "fresh subprocess" and result["tokens"] == 24
    with pytest.raises(ValueError, match="repeats"):
        bench_sources.measure_text_source(repeats=0)
