"""Every export says where its numbers came from (``explorer.provenance``): the input text
and token ids, the model file's SHA-256, the engine's version and git commit, the package
versions, settings and seeds, in the one schema docs/api.md documents. Before, the npz and
safetensors carried the tokens and settings only, the CSV and the trained maps nothing."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer import catalog, export, provenance, sources

ROOT = Path(__file__).resolve().parents[2]
# The record's fields, each documented in docs/api.md ("Exports").
FIELDS = {"schema", "schema_version", "export", "created_utc", "engine", "python", "platform", "packages",
          "models", "inputs", "texts", "settings", "seeds"}
TEXT = "The cat sat on the mat because it was tired."


def assert_complete(rec: dict, export_kind: str):
    assert set(rec) == FIELDS
    assert rec["schema"] == provenance.SCHEMA and rec["schema_version"] == provenance.SCHEMA_VERSION
    assert rec["export"] == export_kind
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", rec["created_utc"])
    assert rec["engine"]["name"] == "attention-kernel-explorer" and rec["engine"]["version"]
    for name in ("torch", "transformers", "gradio", "numpy"):
        assert rec["packages"][name], name
    assert rec["packages"]["gradio"] == provenance.package_version("gradio")


def minilm_file() -> Path:
    return Path(sources.embedded_model_path()) / "model.safetensors"


@pytest.fixture(scope="module")
def text_sample():
    return sources.from_text(TEXT)


# ------------------------------------------------------------------ the parts

def test_the_hash_is_hashlibs_and_is_computed_once_per_file_state(tmp_path, monkeypatch):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"x" * 3_000_001)
    assert provenance.file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: (opened.append(a[0]), real_open(*a, **k))[1])
    provenance.file_sha256(path)
    assert opened == []                                   # the same path, size and mtime: not read again
    path.write_bytes(b"y" * 10)
    assert provenance.file_sha256(path) == hashlib.sha256(b"y" * 10).hexdigest()
    assert opened                                         # changed: read again


def test_the_models_file_is_the_weights_the_model_reads():
    rec = provenance.model_record("all-MiniLM-L6-v2", sources.embedded_model_path())
    assert [f["name"] for f in rec["files"]] == ["model.safetensors"]
    assert rec["files"][0]["sha256"] == hashlib.sha256(minilm_file().read_bytes()).hexdigest()
    assert rec["files"][0]["bytes"] == minilm_file().stat().st_size


@pytest.mark.skipif(not catalog.causal_model_installed(), reason="the causal model is not installed")
def test_smollm2s_file_is_the_gguf_it_is_dequantised_from():
    from explorer.sources import packaged

    gguf = packaged.gguf_path(packaged.SMOLLM2)
    rec = provenance.model_record("SmolLM2-135M", "/wherever/the/float32/copy/is")
    assert rec["name"] == "SmolLM2-135M-Instruct (Q4_1, de-quantised to float32)"
    assert [f["name"] for f in rec["files"]] == ["SmolLM2-135M-Instruct.Q4_1.gguf"]
    assert rec["files"][0]["sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()


def _git(cwd, *args) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_the_commit_is_read_from_the_checkouts_files():
    if not (ROOT / ".git").exists():
        pytest.skip("not run from a checkout")
    assert provenance.git_commit(ROOT / "explorer") == _git(ROOT, "rev-parse", "HEAD")


@pytest.mark.parametrize("layout", ["loose", "packed", "detached", "worktree"])
def test_the_commit_in_every_layout_of_git_and_none_outside(tmp_path, layout):
    sha = "0123456789abcdef0123456789abcdef01234567"
    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    if layout == "loose":
        (git / "refs" / "heads" / "main").write_text(sha + "\n")
    elif layout == "packed":
        (git / "packed-refs").write_text(f"# pack-refs with: peeled fully-peeled sorted\n{sha} refs/heads/main\n")
    elif layout == "detached":
        (git / "HEAD").write_text(sha + "\n")
    else:                       # a worktree: .git is a file naming its own folder, branches in the main one
        (git / "refs" / "heads" / "side").write_text(sha + "\n")
        own = git / "worktrees" / "wt"
        own.mkdir(parents=True)
        (own / "HEAD").write_text("ref: refs/heads/side\n")
        (own / "commondir").write_text("../..\n")
        (tmp_path / "wt").mkdir()
        (tmp_path / "wt" / ".git").write_text(f"gitdir: {own}\n")
        assert provenance.git_commit(tmp_path / "wt" / "explorer") == sha
        return
    (tmp_path / "repo" / "explorer").mkdir()
    assert provenance.git_commit(tmp_path / "repo" / "explorer") == sha
    (tmp_path / "plain").mkdir()
    assert provenance.git_commit(tmp_path / "plain") is None


def test_the_engine_names_gradios_version_without_importing_it():
    import sys
    code = ("import sys, json; from explorer import provenance; r = provenance.record('x'); "
            "print(json.dumps([r['packages']['gradio'], 'gradio' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [provenance.package_version("gradio"), False]


def test_a_random_samples_seed_and_preset_are_recorded():
    rec = provenance.record("maps", samples=[sources.from_random(16, 4, preset="clustered", seed=7)],
                            settings={"m": 8}, seeds=[3])
    assert_complete(rec, "maps")
    assert rec["inputs"][0]["kind"] == "random" and rec["inputs"][0]["random"]["preset"] == "clustered"
    assert rec["seeds"] == [3, 7] and rec["models"] == [] and rec["settings"] == {"m": 8}


# ------------------------------------------------------------------ each export kind

@pytest.mark.slow
def test_npz_and_safetensors_carry_it_and_load_back(tmp_path, text_sample):
    from safetensors import safe_open

    view = export.view_arrays(text_sample, 2, 3, ["softmax", "elu1"], causal=False, m=16, seed=5)
    npz = export.write_npz(view, tmp_path / "a.npz")
    st = export.write_safetensors(view, tmp_path / "a.safetensors")
    from_npz = json.loads(str(np.load(npz, allow_pickle=False)["provenance"]))
    with safe_open(st, "np") as fh:
        from_st = json.loads(fh.metadata()["provenance"])
    assert from_npz == from_st
    assert_complete(from_npz, "maps-arrays")
    entry = from_npz["inputs"][0]["texts"][0]
    assert entry["text"] == TEXT and entry["token_ids"] == text_sample.info["token_ids"]
    assert from_npz["models"][0]["files"][0]["sha256"] == hashlib.sha256(minilm_file().read_bytes()).hexdigest()
    assert from_npz["settings"] == {"layer": 2, "head": 3, "maps": ["softmax", "elu1"], "causal": False, "m": 16,
                                    "seed": 5, "window": 4}
    assert from_npz["seeds"] == [5]
    # The per-row arrays sit beside it in the same files.
    assert "rows.elu1.kl" in np.load(npz, allow_pickle=False).files


def test_a_csv_has_it_beside_it_and_both_load_in_one_line(tmp_path, text_sample):
    table = pd.DataFrame({"map": ["elu1", "relu"], "kl": [0.25, float("inf")], "entropy": [1.0, float("nan")]})
    rec = provenance.record("maps", samples=[text_sample], settings={"m": 16}, seeds=[0])
    csv, side = export.write_csv(table, tmp_path / "maps-metrics.csv", rec)
    assert Path(side).name == "maps-metrics.provenance.json"
    back = pd.read_csv(csv)                                               # the documented one-liners
    where_from = json.load(open(side, encoding="utf-8"))
    assert back["kl"].tolist()[1] == float("inf") and np.isnan(back["entropy"][1])
    assert {k: v for k, v in where_from.items() if k != "files"} == rec
    assert where_from["files"] == {"maps-metrics.csv": hashlib.sha256(Path(csv).read_bytes()).hexdigest()}


@pytest.mark.slow
def test_a_trained_map_carries_it(tmp_path):
    import torch

    from explorer.maps import learned
    from explorer.views import learn as lv

    torch.set_num_threads(1)
    result = lv.learn_view(layer=1, head=2, num_features=8, steps=2, seed=4, train_count=2, heldout_count=1)
    fmap = learned.load_map(lv.save_map(result, tmp_path))
    rec = json.loads(fmap.info["provenance"])
    assert_complete(rec, "trained-map")
    assert [t["role"] for t in rec["texts"]] == ["train", "train", "heldout"]
    assert rec["texts"][0]["text"] == lv.training_texts()[0] and rec["texts"][0]["token_ids"][0] == 101   # [CLS]
    assert rec["settings"]["steps"] == 2 and rec["settings"]["num_features"] == 8 and rec["seeds"] == [4]
    assert rec["models"][0]["files"][0]["sha256"] == hashlib.sha256(minilm_file().read_bytes()).hexdigest()


def test_the_decks_record_names_what_each_chapter_read(text_sample):
    from explorer import deck_export
    from explorer.lecture.view_common import ChapterView

    read = ChapterView(1, {"layer": 2, "head": 3, "seed": 9}, {}, {},
                       provenance={"input": provenance.sample_input(text_sample),
                                   "model": provenance.sample_model(text_sample)})
    data = ChapterView(0, {"n": 512}, {}, {})
    rec = deck_export.deck_provenance({0: data, 1: read}, "en", TEXT)
    assert_complete(rec, "deck")
    assert rec["inputs"][0]["texts"][0]["token_ids"] == text_sample.info["token_ids"]
    assert rec["settings"] == {"lang": "en", "text": TEXT, "chapters": {"0": {"n": 512},
                                                                      "1": {"layer": 2, "head": 3, "seed": 9}}}
    assert rec["seeds"] == [9] and rec["models"][0]["id"] == "all-MiniLM-L6-v2"


def test_every_field_is_in_the_docs():
    exports = (ROOT / "docs" / "api.md").read_text(encoding="utf-8").split("## Exports", 1)[1]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", exports, re.M))
    assert FIELDS <= documented, FIELDS - documented
    assert re.search(rf"^\| `schema_version` \| int \| {provenance.SCHEMA_VERSION}\b", exports, re.M)
    assert f"`{provenance.SCHEMA}`" in exports


@pytest.mark.slow
def test_the_docs_loading_lines_read_every_export(tmp_path, text_sample, monkeypatch):
    import torch

    from explorer.views import learn as lv

    torch.set_num_threads(1)
    view = export.view_arrays(text_sample, 0, 0, ["softmax", "elu1"], m=8)
    export.write_npz(view, tmp_path / "maps-arrays.npz")
    export.write_safetensors(view, tmp_path / "maps-arrays.safetensors")
    export.write_csv(export.metrics_csv_table([{"map": "elu1", "kl": 0.5}]), tmp_path / "maps-metrics.csv",
                     view.provenance)
    result = lv.learn_view(layer=2, head=3, num_features=8, steps=2, train_count=1, heldout_count=1)
    lv.save_map(result, tmp_path).rename(tmp_path / "hedgehog-L2H3-m64-steps300-seed0.safetensors")
    block = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
                       .split("## Exports", 1)[1], re.S)[0]
    seen = []
    monkeypatch.chdir(tmp_path)
    for line in block.splitlines():                   # each line that reads one: its record is complete
        scope = {}
        exec(block.split("\n\n")[0] + "\n" + line, scope)
        if "where" in scope:
            seen.append(scope["where"]["export"])
            assert set(scope["where"]) - {"files"} == FIELDS
    assert seen == ["maps-arrays", "maps-arrays", "maps-arrays", "trained-map"]


@pytest.mark.slow
def test_a_trained_maps_texts_too_long_for_its_header_are_told_by_their_hashes(tmp_path, monkeypatch):
    import torch

    from explorer.maps import learned
    from explorer.views import learn as lv

    torch.set_num_threads(1)
    result = lv.learn_view(layer=1, head=2, num_features=8, steps=2, seed=4, train_count=12, heldout_count=1)
    whole = len(json.dumps(lv.trained_provenance(result)))
    monkeypatch.setattr(learned, "MAX_HEADER_BYTES", whole + 1)            # the texts then take over half of it
    rec = json.loads(learned.load_map(lv.save_map(result, tmp_path)).info["provenance"])
    first = lv.training_texts()[0]
    assert rec["texts"][0] == {"role": "train", "sha256": hashlib.sha256(first.encode("utf-8")).hexdigest(),
                               "chars": len(first), "tokens": len(sources.from_text(first).info["token_ids"])}
