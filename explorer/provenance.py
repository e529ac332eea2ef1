"""Where an exported number came from, in one schema every export carries.

    record(export, samples=(), texts=(), settings=None, seeds=(), models=(), inputs=()) -> dict
    sample_input(sample) -> dict, sample_model(sample) -> (id, path) | None
    model_record(model_id, path=None) -> dict          the model's file(s) with their SHA-256
    environment() -> dict                               the engine (version, git commit) and packages
    file_sha256(path) -> str                            hashed once per (path, size, mtime)
    to_json(record) -> str

A record (schema ``SCHEMA``, version ``SCHEMA_VERSION``; every field is documented in
docs/api.md, "Exports") says what was read (the texts and their token ids, or the random
preset and its seed), by which model file (its SHA-256: the GGUF file SmolLM2 is de-quantised
from, the weights file of MiniLM or of a saved folder), with which engine (version and git
commit when run from a checkout) and packages, under which settings and seeds.

Reading the git commit spawns nothing: ``.git/HEAD`` and the refs are read as files (a
worktree's ``.git`` file and ``commondir`` included); outside a checkout it is None. Package
versions come from ``importlib.metadata``, so the engine names gradio's version without
importing gradio. A model file is hashed once per process for each (path, size, mtime):
a second export of the same model costs a dictionary look-up.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import platform
import threading
from datetime import datetime, timezone
from pathlib import Path

SCHEMA = "attention-kernel-explorer/provenance"
SCHEMA_VERSION = 1
ENGINE = "attention-kernel-explorer"
# The distributions whose versions decide the numbers (or the files) of an export.
PACKAGES = ("torch", "numpy", "transformers", "tokenizers", "safetensors", "gguf", "gradio", "gradio-client",
            "plotly", "pandas")
# Weights files a saved model folder holds, in the order a loader prefers them.
WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin", "*.bin")

_hashes: dict = {}
_hash_lock = threading.Lock()
CHUNK = 1 << 20


# ---------------------------------------------------------------------------------------
# Files and the engine
# ---------------------------------------------------------------------------------------

def file_sha256(path) -> str:
    """The SHA-256 of the file at ``path`` (hex), computed once per (path, size, mtime)."""
    path = Path(path).resolve()
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _hash_lock:                   # two exports of one model hash it once, not twice at once
        if key not in _hashes:
            digest = hashlib.sha256()
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(CHUNK), b""):
                    digest.update(block)
            _hashes[key] = digest.hexdigest()
        return _hashes[key]


def git_commit(start: Path | None = None) -> str | None:
    """The commit checked out in the repository holding ``start`` (default: this package),
    read from the files under .git; None when it is not a checkout or the refs cannot be read."""
    start = Path(start or Path(__file__).resolve().parent)
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.exists():
            try:
                return _head_commit(_git_dir(dot_git))
            except (OSError, ValueError):
                return None
    return None


def _git_dir(dot_git: Path) -> Path:
    if dot_git.is_dir():
        return dot_git
    text = dot_git.read_text(encoding="utf-8").strip()           # a worktree: "gitdir: /path/to/it"
    if not text.startswith("gitdir:"):
        raise ValueError("not a git file")
    target = Path(text.split(":", 1)[1].strip())
    return target if target.is_absolute() else (dot_git.parent / target).resolve()


def _head_commit(git_dir: Path) -> str | None:
    head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    if not head.startswith("ref:"):
        return head if _is_sha(head) else None                  # a detached HEAD holds the commit itself
    ref = head.split(":", 1)[1].strip()
    common = git_dir
    if (git_dir / "commondir").is_file():                       # a worktree keeps its branches in the main .git
        common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    for base in dict.fromkeys((git_dir, common)):
        loose = base / ref
        if loose.is_file():
            sha = loose.read_text(encoding="utf-8").strip()
            return sha if _is_sha(sha) else None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == ref and _is_sha(parts[0]):
                return parts[0]
    return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def _static_environment() -> dict:
    from . import __version__
    return {"engine": {"name": ENGINE, "version": __version__},
            "python": platform.python_version(), "platform": platform.platform(),
            "packages": {name: package_version(name) for name in PACKAGES}}


def environment() -> dict:
    """The engine (name, version, git commit or None) and the versions of Python and of
    every package in PACKAGES (None where one is not installed)."""
    env = json.loads(json.dumps(_static_environment()))       # a copy the caller may change
    env["engine"]["commit"] = git_commit()                     # read again: a checkout moves
    return env


# ---------------------------------------------------------------------------------------
# Models and inputs
# ---------------------------------------------------------------------------------------

def model_files(model_id: str, path=None) -> list[Path]:
    """The file(s) holding the weights of ``model_id`` as read: SmolLM2's GGUF file (what the
    float32 copy in the cache is de-quantised from), else the weights in the model's folder
    ``path`` (the embedded MiniLM, a saved folder), else those in the local Hub cache."""
    from .sources import packaged

    spec = packaged.find(model_id)
    if spec is not None:
        gguf = packaged.gguf_path(spec)
        return [gguf] if gguf is not None else []
    folder = Path(path) if path else None
    if folder is not None and folder.is_dir():
        for pattern in WEIGHT_PATTERNS:
            found = sorted(p for p in folder.glob(pattern) if p.is_file())
            if found:
                return found
        return []
    return _hub_cached_files(str(path or model_id))


def _hub_cached_files(repo: str) -> list[Path]:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return []
    for name in ("model.safetensors", "pytorch_model.bin"):
        try:
            found = try_to_load_from_cache(repo, name)
        except Exception:          # a name the Hub library refuses is simply not in its cache
            return []
        if isinstance(found, str) and Path(found).is_file():
            return [Path(found)]
    return []


def model_record(model_id, path=None) -> dict:
    """{"id", "name" (as a person reads it), "files": [{"name", "bytes", "sha256"}]}. The
    file's folder is left out: an export from a public server would show its file system."""
    from .text import model_name

    files = []
    for file in model_files(str(model_id), path):
        files.append({"name": file.name, "bytes": file.stat().st_size,
                      "sha256": file_sha256(file)})
    return {"id": str(model_id), "name": model_name(str(model_id), "en"), "files": files}


def sample_input(sample) -> dict:
    """What a Sample was made of: {"kind": "text" | "random" | "arrays", "description",
    "texts": [{"text", "token_ids", "tokens", ...}] (a text's), "shape", "random" (a preset's)}."""
    info = dict(getattr(sample, "info", None) or {})
    shape = {"layers": int(sample.n_layers), "heads": int(sample.n_heads), "n": int(sample.n_tokens),
             "head_dim": int(sample.head_dim)}
    out = {"kind": "arrays", "description": str(getattr(sample, "source", "") or ""), "texts": [], "shape": shape}
    if "token_ids" in info:
        out["kind"] = "text"
        out["texts"] = [{"text": sample.text, "token_ids": [int(i) for i in info["token_ids"]],
                         "tokens": [str(t) for t in info.get("token_strings", [])],
                         "special_tokens_kept": any(info.get("special", [])),
                         "tokens_in_text": int(info.get("tokens_in_text", len(info["token_ids"])))}]
    elif "preset" in info:
        out["kind"] = "random"
        out["random"] = {key: info[key] for key in ("preset", "seed", "temperature") if key in info}
    return out


def sample_model(sample) -> tuple[str, str | None] | None:
    """(model id, its folder or Hub id) of the model that read ``sample``; None for data."""
    info = getattr(sample, "info", None) or {}
    return (str(info["model"]), info.get("path")) if "token_ids" in info and info.get("model") else None


def texts_record(texts, role: str, tokenizer=None) -> list[dict]:
    """Texts a run read (training, held-out) with their token ids when ``tokenizer`` (a
    tokenizers.Tokenizer) is given: [{"role", "text", "token_ids"}]."""
    out = []
    for text in texts:
        ids = [int(i) for i in tokenizer.encode(text).ids] if tokenizer is not None else None
        out.append({"role": role, "text": text, "token_ids": ids})
    return out


def text_digest(entry: dict) -> dict:
    """A ``texts_record`` entry told by its SHA-256 (UTF-8) and sizes instead of its words,
    for a file whose metadata has no room for the texts themselves."""
    text = entry["text"]
    return {"role": entry["role"], "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "chars": len(text), "tokens": None if entry.get("token_ids") is None else len(entry["token_ids"])}


# ---------------------------------------------------------------------------------------
# The record
# ---------------------------------------------------------------------------------------

def record(export: str, samples=(), texts=(), settings=None, seeds=(), models=(), inputs=()) -> dict:
    """One export's provenance: ``samples`` (Samples it read; or, made beforehand,
    ``inputs`` from ``sample_input`` and ``models`` as (id, path) pairs from ``sample_model``),
    ``texts`` (from ``texts_record``, for runs over many texts), ``settings`` (every control,
    as plain values) and ``seeds`` (every seed used; a random sample's own is added)."""
    inputs, models = list(inputs), list(models)
    for sample in samples:
        inputs.append(sample_input(sample))
        models.append(sample_model(sample))
    seeds = {*seeds, *(part.get("random", {}).get("seed") for part in inputs)}
    found = {}
    for pair in models:
        if pair is not None and str(pair[0]) not in found:
            found[str(pair[0])] = model_record(*pair)
    env = environment()
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "export": str(export),
            "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "engine": env["engine"], "python": env["python"], "platform": env["platform"],
            "packages": env["packages"], "models": list(found.values()), "inputs": inputs,
            "texts": list(texts), "settings": _plain(settings or {}),
            "seeds": sorted({int(s) for s in seeds if s is not None})}


def _plain(value):
    """Settings as JSON can hold them: tuples as lists, numpy scalars as numbers, else str."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):                     # numpy and torch scalars
        try:
            return value.item()
        except (TypeError, ValueError):
            pass
    return str(value)


def to_json(rec: dict, indent=None) -> str:
    """The record as JSON (UTF-8 text as it is; NaN and inf as JSON cannot hold them: null)."""
    return json.dumps(_finite(rec), ensure_ascii=False, indent=indent, allow_nan=False)


def _finite(value):
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def sidecar_path(path) -> Path:
    """Where the provenance of a file that cannot hold it (a CSV) is written: beside it,
    ``maps-metrics.csv`` -> ``maps-metrics.provenance.json``."""
    path = Path(path)
    return path.with_name(path.stem + ".provenance.json")


def write_sidecar(rec: dict, path, files=()) -> Path:
    """Write ``rec`` beside ``path`` with the SHA-256 of each of ``files`` (what it describes)."""
    out = dict(rec, files={Path(f).name: file_sha256(f) for f in files})
    target = sidecar_path(path)
    target.write_text(to_json(out, indent=1) + "\n", encoding="utf-8")
    return target
