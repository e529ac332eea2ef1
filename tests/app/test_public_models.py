"""Models closed on a public server: on a Space or with --public only the
built-in models load; an upload folder is never a model; a config is checked by its numbers
before anything is built; every refused folder gets the same sentence; the cache is bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer import catalog
from explorer.sources import models
from helpers.models import save_tiny


@pytest.fixture()
def local(monkeypatch):
    for name in ("EXPLORER_ALLOW_MODELS", "SPACE_ID", "EXPLORER_PUBLIC"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _refusal(model) -> str:
    with pytest.raises(ValueError) as caught:
        models.resolve(model)
    return str(caught.value)


@pytest.mark.parametrize("setting", [("SPACE_ID", "someone/explorer"), ("EXPLORER_PUBLIC", "1")])
def test_a_public_server_offers_the_built_in_models_only(local, setting):
    assert catalog.allowed_models() is None                   # on one's own machine: any folder
    local.setenv(*setting)
    assert catalog.allowed_models() == set()
    assert not models.free_models_allowed()
    assert models.resolve(None).kind == "embedded"
    etc, nowhere = _refusal("/etc"), _refusal("/nonexistent")
    assert "not offered on this server" in etc
    assert etc.replace("'/etc'", "X") == nowhere.replace("'/nonexistent'", "X")
    local.setenv("EXPLORER_ALLOW_MODELS", "gpt2")              # the server's own list still widens it
    assert models.resolve("gpt2").kind == "hub"


def test_an_upload_folder_is_never_a_model(local, tmp_path):
    uploads = tmp_path / "uploads"
    local.setenv("GRADIO_TEMP_DIR", str(uploads))
    folder = save_tiny(uploads / "0a1b2c" / "model", "gpt2")
    refused = _refusal(str(folder))
    missing = _refusal(str(uploads / "0a1b2c" / "nothing"))
    assert "not offered on this server" in refused
    assert refused.replace(str(folder), "X") == missing.replace(str(uploads / "0a1b2c" / "nothing"), "X")
    outside = save_tiny(tmp_path / "mine", "gpt2")
    assert models.resolve(str(outside)).kind == "folder"       # the same model elsewhere is a model


def _crafted(folder: Path, **numbers) -> Path:
    folder.mkdir(parents=True)
    config = {"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2,
              "intermediate_size": 16, "vocab_size": 100, "max_position_embeddings": 64, **numbers}
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_a_crafted_config_is_refused_before_anything_is_built(local, tmp_path, monkeypatch):
    import transformers

    def built(*args, **kwargs):
        raise AssertionError("a module was built")
    monkeypatch.setattr(transformers.AutoModel, "from_config", built)
    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", built)
    for name, numbers in [("deep", {"num_hidden_layers": 10000}), ("wide", {"num_attention_heads": 4096}),
                          ("odd", {"num_hidden_layers": "1e308"}), ("negative", {"hidden_size": -1}),
                          ("huge", {"num_hidden_layers": 48, "hidden_size": 8192, "num_attention_heads": 64,
                                    "intermediate_size": 32768})]:
        folder = _crafted(tmp_path / name, **numbers)
        with pytest.raises(ValueError, match="model: ") as caught:
            models.get_model(str(folder))
        message = str(caught.value)
        assert any(why in message for why in ("at most", "EXPLORER_MODEL_MEMORY_GB", "cannot read the config")), message
        with pytest.raises(ValueError):
            models.model_shape(str(folder))


def test_the_model_cache_keeps_a_few_models(local, tmp_path, monkeypatch):
    loads = []

    def load(where, progress=None):
        loads.append(where.key)
        return object()
    monkeypatch.setattr(models, "_load", load)
    monkeypatch.setattr(models, "_CACHE", type(models._CACHE)())
    models.get_model(None)
    for i in range(6):
        models.get_model(str(_crafted(tmp_path / f"m{i}")))
    assert len(models._CACHE) <= models.MAX_LOADED
    assert any(key.startswith("embedded:") for key in models._CACHE)    # the built-in one stays
    models.get_model(str(tmp_path / "m5"))                                # the latest is kept: no reload
    assert len(loads) == 7
