"""The hardening issue's defects 2-7, each held by a test that failed on the code before it
(defect 1, the cost model, is tests/engine/test_cost.py; defect 8, live timing, tests/engine/test_live_timing.py;
the ones that need the running server, tests/app/test_server_links_and_uploads.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import types
from pathlib import Path
from urllib.parse import parse_qsl

import gradio as gr
import orjson
import pytest
import torch

from explorer.measure import bench
from explorer import catalog, memory, sources, views
from explorer.ui import common, downloads

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import crafted  # noqa: E402


def _can_measure_peaks() -> bool:
    # bench resets the peak through this file; the same check as tests/engine/test_bench.py.
    return os.access("/proc/self/clear_refs", os.W_OK)


# --------------------------------------------------------------------------- 2: .pt decompression bomb

@pytest.mark.skipif(not _can_measure_peaks(), reason="needs Linux /proc/self/clear_refs")
@pytest.mark.parametrize("unpacked,words", [(200 << 20, "unpacks to 209,715,"), (64 << 20, "deflates")])
def test_pt_bomb_is_refused_before_it_is_unpacked(tmp_path, unpacked, words):
    bomb = crafted.deflate_bomb_pt(tmp_path / "bomb.pt", unpacked)
    assert bomb.stat().st_size < 300_000
    with pytest.raises(ValueError, match=words) as excinfo:
        bench.measure_peak_bytes(lambda: sources.load_file(bomb))
    assert str(excinfo.value).startswith("path: bomb.pt")

    def peak_of_refusal():
        try:
            sources.load_file(bomb)
        except ValueError:
            pass
    _, peak = bench.measure_peak_bytes(peak_of_refusal)
    assert peak < 32 << 20, f"the refusal itself took {peak / 2**20:.0f} MiB"


def test_quantized_and_sparse_pt_are_refused_in_one_sentence(tmp_path):
    for build, word in ((crafted.quantized_pt, "quantized"), (crafted.sparse_pt, "sparse")):
        path = build(tmp_path / f"{word}.pt")
        with pytest.raises(ValueError, match=f"q: {word}.* tensors are refused"):
            sources.load_file(path)


def test_pt_refusal_has_no_terminal_codes(tmp_path):
    path = tmp_path / "object.pt"
    torch.save({"q": types.SimpleNamespace(a=1)}, path)
    with pytest.raises(ValueError) as excinfo:
        sources.load_file(path)
    message = str(excinfo.value)
    assert "\x1b" not in message and "holds objects other than tensors" in message
    assert "\x1b" not in common.plain("\x1b[1mbold\x1b[0m text") and common.plain("\x1b[1mbold\x1b[0m") == "bold"


# --------------------------------------------------------------------------- 7: bounded notices

@pytest.mark.slow
def test_many_member_npz_gives_a_short_notice_and_a_huge_one_is_refused(tmp_path):
    npz = crafted.many_member_npz(tmp_path / "many.npz", 2_000)
    sample = sources.load_file(npz)
    ignored = [x for x in sample.notices if x.startswith("Ignored arrays")]
    assert ignored and "and 1,990 more" in ignored[0] and len(ignored[0]) < 300
    page = common.notices_markdown(["x" * 5000] + [f"notice {i}" for i in range(100)], toast=False)
    assert len(page) < 20_000 and "and 81 more notices" in page
    with pytest.raises(ValueError, match="holds 50,000 entries, over the limit"):
        sources.load_file(crafted.many_member_npz(tmp_path / "huge.npz", 50_000))


# --------------------------------------------------------------------------- 3: integers >= 2^64 in links

def _restore(query: dict):
    """The app's own URL restore, called as gradio would on page load; returns (outputs, toasts)."""
    demo = views_app()
    fn = next(f.fn for f in demo.fns.values() if f.name == "restore")
    toasts = []
    original = gr.Warning
    gr.Warning = lambda message, *a, **k: toasts.append(message)
    try:
        out = fn(types.SimpleNamespace(query_params=query))
    finally:
        gr.Warning = original
    return out, toasts


_app = None


def views_app():
    global _app
    if _app is None:
        from explorer.ui import build_app
        _app = build_app()
    return _app


def test_huge_integers_in_a_link_are_clamped_with_a_notice():
    out, toasts = _restore(dict(parse_qsl(crafted.huge_int_query())))
    numbers = [x for x in out if isinstance(x, (int, float)) and not isinstance(x, bool)]
    orjson.dumps(numbers)                                  # what failed: "Integer exceeds 64-bit range"
    assert catalog.MAX_SEED in numbers                     # dseed and seed clamped to 2^32 - 1
    assert any("dseed" in t and "outside" in t for t in toasts), toasts
    assert any(t.startswith("Link parameter seed = 1.845e+19 is outside") for t in toasts), toasts


def test_link_parser_survives_garbage():
    notes = []
    assert common.param({"n": "1e400"}, "n", int, notices=notes) is None
    assert common.param({"n": "9" * 5000}, "n", int, notices=notes) is None       # Python refuses > 4300 digits
    assert common.param({"temp": "nan"}, "temp", float, notices=notes) is None
    assert common.param({"n": "1e3"}, "n", int) == 1000
    assert common.param({"tz": "!!!not base64"}, "text", str, default="d", notices=notes) == "d"
    assert len(notes) == 4 and all(len(n) < 120 for n in notes)
    assert common.fit(gr.Number(), 10 ** 30, notes, "x") == common.SAFE_INT        # no bounds: still JSON-safe


def test_huge_seeds_reach_the_engine_reduced_with_a_notice():
    sample = views.load_sample("random", preset="gaussian", n=32, d=8, data_seed=10 ** 30)
    assert any("modulo 2^32" in x for x in sample.notices)
    view = views.maps_view(sample, 0, 0, ["softmax", "favor_plus_orthogonal"], False, 16, 10 ** 30)
    assert [row["map"] for row in view.metrics] == ["softmax", "favor_plus_orthogonal"]
    assert any("feature seed" in x and "modulo 2^32" in x for x in view.notices)


# --------------------------------------------------------------------------- 4: long texts in links

def test_an_8000_character_chinese_link_fits_and_says_what_it_holds():
    text = crafted.long_chinese_text(8000)
    query = common.query_string({"tab": "maps", "src": "text", "text": text, "m": 64})
    assert len(query) <= common.LINK_BUDGET
    notes = []
    back = common.param(dict(parse_qsl(query)), "text", str, notices=notes)
    assert 0 < len(back) < len(text) and text.startswith(back)
    assert notes and f"of {len(text):,} characters" in notes[0]


def test_a_moderately_long_text_travels_whole_and_compressed():
    text = crafted.long_chinese_text(1500)
    query = common.query_string({"tab": "maps", "text": text})
    assert "tz=" in query and "text=" not in query and len(query) <= common.LINK_BUDGET
    notes = []
    assert common.param(dict(parse_qsl(query)), "text", str, notices=notes) == text and notes == []


def test_a_compressed_bomb_in_a_link_is_refused():
    import base64
    import zlib
    packed = base64.urlsafe_b64encode(zlib.compress(b"a" * 50_000_000, 9)).decode().rstrip("=")
    notes = []
    assert common.param({"tz": packed}, "text", str, default="default", notices=notes) == "default"
    assert notes


# --------------------------------------------------------------------------- 5: lone surrogates

def test_lone_surrogates_are_cleaned_at_the_edge():
    args, kwargs, replaced = common.clean_arguments(("abc \ud800", ["x\udfff"]), {"text": "ok"})
    assert args == ("abc \ufffd", ["x\ufffd"]) and kwargs == {"text": "ok"} and replaced == 2
    query = common.query_string({"text": "abc \ud800 def"})               # raised UnicodeEncodeError before
    assert "%EF%BF%BD" in query


# --------------------------------------------------------------------------- 6 and 7: memory and temp files

def test_sample_cache_is_bounded_in_bytes():
    views.clear_caches()
    for seed in range(6):
        views.load_sample("random", preset="gaussian", n=8192, d=512, data_seed=seed)   # 48 MiB each
    cached = list(views.common._sample_cache.values())
    assert sum(map(views.common._sample_bytes, cached)) <= views.common.SAMPLE_CACHE_BYTES
    views.clear_caches()


@pytest.mark.slow
def test_exports_live_in_one_pruned_folder_removed_at_exit(tmp_path):
    first = downloads.export_folder()
    assert first.parent == downloads.EXPORT_ROOT
    (first / "big.bin").write_bytes(b"x" * 1000)
    downloads.prune_exports(max_age_s=3600, max_bytes=10 ** 9, now=time.time() + 7200)
    assert not first.exists()
    a, b = downloads.export_folder(), downloads.export_folder()
    (a / "x.bin").write_bytes(b"x" * 600)
    (b / "x.bin").write_bytes(b"x" * 600)
    downloads.prune_exports(max_age_s=3600, max_bytes=1000)
    assert len(list(downloads.EXPORT_ROOT.glob("*"))) == 1
    script = ("from explorer.ui import downloads; f = downloads.export_folder(); (f / 'a.csv').write_text('1'); "
              "print(downloads.EXPORT_ROOT)")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    root = Path(out.stdout.strip().splitlines()[-1])
    assert root.name.startswith("attention-explorer-") and not root.exists()


def test_memory_release_is_throttled_and_arenas_can_be_limited():
    if memory._glibc() is None:
        pytest.skip("not glibc")
    assert memory.limit_arenas(8)                    # applied (8 leaves this test process as it was)
    memory._last_trim = 0.0
    assert memory.release_after_request(now=100.0) and not memory.release_after_request(now=100.5)
    assert memory.release_after_request(now=101.5)
    assert memory.rss_bytes() > 0


@pytest.mark.slow
def test_png_exporter_browser_is_stopped_at_exit(tmp_path):
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("no chromium for kaleido")
    script = ("import os, plotly.graph_objects as go; from explorer.ui import downloads; "
              "ok = downloads._png(go.Figure(go.Bar(y=[1, 2])), __import__('pathlib').Path(%r)); "
              "kids = [p for p in os.listdir('/proc') if p.isdigit() and open(f'/proc/{p}/stat').read().split()[3] == str(os.getpid())]; "
              "print(ok, ' '.join(kids))") % str(tmp_path / "x.png")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=180)
    ok, *kids = out.stdout.strip().splitlines()[-1].split()
    if ok != "True":
        pytest.skip("kaleido could not start chromium here")
    time.sleep(1.0)
    alive = [pid for pid in kids if Path(f"/proc/{pid}").exists()
             and "chrom" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")]
    assert kids and not alive, f"browser processes outlived the app: {alive}"
