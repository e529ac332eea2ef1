"""The HTTP API as docs/api.md promises it: its snippet runs, line for line, against the
running app (the shared server of tests/conftest.py), and ``/maps_arrays`` answers with the
files themselves, each carrying its provenance. The maps tab's CSV export carries the
record of the text, model and settings it was computed from."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from explorer import catalog

ROOT = Path(__file__).resolve().parents[2]


def http_snippet() -> str:
    section = (ROOT / "docs" / "api.md").read_text(encoding="utf-8").split("## HTTP API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "docs/api.md's HTTP API section should hold one python snippet"
    return blocks[0]


@pytest.mark.slow
@pytest.mark.skipif(not catalog.causal_model_installed(), reason="the snippet reads SmolLM2, which is not installed")
def test_the_docs_http_snippet_runs_against_the_app(app_url, tmp_path):
    code = http_snippet()
    assert 'Client("http://127.0.0.1:7860/")' in code
    code = code.replace('Client("http://127.0.0.1:7860/")', f"Client({app_url!r})")
    code += "\nprint('FILES', json.dumps(files))\n"
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "qk.npz", q=rng.standard_normal((32, 8)).astype("float32"),
             k=rng.standard_normal((32, 8)).astype("float32"))
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stderr[-3000:]
    files = json.loads(done.stdout.rsplit("FILES ", 1)[1])
    # /maps_arrays: a list of file paths, not a component update.
    assert isinstance(files, list) and sorted(Path(f).name for f in files) == ["maps-arrays.npz",
                                                                               "maps-arrays.safetensors"]
    npz = next(f for f in files if f.endswith(".npz"))
    rec = json.loads(str(np.load(npz, allow_pickle=False)["provenance"]))
    assert rec["export"] == "maps-arrays" and rec["inputs"][0]["random"]["preset"] == "clustered"
    assert rec["settings"]["maps"] == ["softmax", "elu1"] and rec["packages"]["gradio"]


@pytest.mark.slow
def test_the_maps_tabs_csv_names_its_text_model_and_settings():
    from explorer import export
    from explorer.ui import downloads, maps_tab

    text = "The animal didn't cross the street because it was tired."
    out = maps_tab.run_maps(source="text", text=text, layer=1, head="2", maps=["softmax", "elu1"], m=16, seed=3,
                            window=4)
    view = out[4]
    paths = downloads.export_files("maps", {}, {"metrics": export.metrics_csv_table(view.metrics)}, png=False,
                                provenance=view.provenance)
    side = next(p for p in paths if p.endswith(".provenance.json"))
    rec = json.loads(Path(side).read_text(encoding="utf-8"))
    assert rec["export"] == "maps" and rec["inputs"][0]["texts"][0]["text"] == text
    assert rec["inputs"][0]["texts"][0]["token_ids"][0] == 101                      # MiniLM's [CLS]
    assert rec["settings"]["layer"] == 1 and rec["settings"]["head"] == 2 and rec["settings"]["m"] == 16
    assert 3 in rec["seeds"] and rec["models"][0]["id"] == "all-MiniLM-L6-v2"
    assert list(rec["files"]) == ["maps-metrics.csv"]


def test_every_tabs_csv_has_a_record_beside_it():
    import pandas as pd

    from explorer.ui import downloads

    paths = downloads.export_files("state", {}, {"curves": pd.DataFrame({"t": [0, 1]})}, png=False)
    assert [Path(p).name for p in paths] == ["state-curves.csv", "state-curves.provenance.json"]
    rec = json.loads(Path(paths[1]).read_text(encoding="utf-8"))
    assert rec["export"] == "state" and rec["engine"]["version"] and rec["packages"]["torch"]


@pytest.mark.slow
def test_the_quality_and_state_tabs_csv_name_their_text_model_and_settings():
    from explorer.ui import quality_tab, state_tab

    text = "The animal didn't cross the street because it was tired."
    quality = quality_tab.run_quality(source="text", text=text, layer=1, head="2", maps=None, seeds=2,
                                      m=16, overview_map="elu1")[6][0]
    state = state_tab.run_state(source="text", text=text, layer=1, head="2", seed=5)[4]
    for view, export, seed in ((quality, "quality", 1), (state, "state", 5)):
        rec = view.provenance
        assert rec["export"] == export and rec["inputs"][0]["texts"][0]["text"] == text
        assert rec["inputs"][0]["texts"][0]["token_ids"][0] == 101                  # MiniLM's [CLS]
        assert int(rec["settings"]["layer"]) == 1 and int(rec["settings"]["head"]) == 2 and seed in rec["seeds"]
        assert rec["models"][0]["id"] == "all-MiniLM-L6-v2" and len(rec["models"][0]["files"][0]["sha256"]) == 64
