"""The probe: a corpus at a time, one tidy table that equals the maps tab cell for cell,
resumes where it stopped, and merges from shards into the table one run would have written."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from explorer import stopping
from explorer.catalog import METRIC_KEYS
from explorer.experiments import probe, probe_table

ROOT = Path(__file__).resolve().parents[2]

TEXTS = ["The cat sat on the mat because it was warm.", "",
         "Attention is kernel regression: each query averages the values.",
         "Linear attention replaces the exponential with a dot product of features."]
# 2 texts (and a blank line) x 1 layer x 2 heads x 2 maps: small enough for the fast part.
SMALL = probe.ProbeSettings(maps=("elu1", "favor_plus"), layers=(2,), heads=(0, 5))


def _quiet(*_):
    pass


def _run(tmp_path, name, texts=TEXTS[:3], settings=SMALL, **kwargs):
    kwargs.setdefault("progress", _quiet)
    return probe_table.run(probe.Corpus.from_lines(texts), settings, tmp_path / name, **kwargs)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_exact=True)


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("whole")
    return _run(tmp, "whole", texts=TEXTS)


def test_one_row_per_text_layer_head_and_map_with_every_metric(whole):
    table = whole["table"]
    assert len(table) == 3 * 1 * 2 * 2
    assert sorted(set(table["text_index"])) == [0, 2, 3]          # line indices; the blank line is left out
    assert set(METRIC_KEYS) <= set(table.columns)
    assert list(dict.fromkeys(table["map_id"])) == ["elu1", "favor_plus_orthogonal"]
    assert set(table["map"]) == {"elu1", "favor_plus"}
    assert table["settings_sha256"].nunique() == 1 and (table["model"] == "all-MiniLM-L6-v2").all()
    record = whole["provenance"]
    assert record["settings"]["layers"] == [2] and record["settings"]["causal"] is None
    assert record["packages"]["torch"] and record["engine"]["version"] and record["corpus"]["texts"] == 3
    assert record["schema"] == "attention-kernel-explorer/provenance"
    assert all(len(f["sha256"]) == 64 for m in record["models"] for f in m["files"]) and record["models"][0]["files"]
    assert "path" not in record["model"]
    assert json.loads(whole["paths"]["json"].read_text())["settings_sha256"] == record["settings_sha256"]


def test_parquet_holds_the_same_table_and_the_provenance(whole):
    import pyarrow.parquet as pq

    arrow = pq.read_table(whole["paths"]["parquet"])
    _same(arrow.to_pandas(), whole["table"])
    meta = json.loads(arrow.schema.metadata[b"explorer.probe"])
    assert meta["settings_sha256"] == whole["provenance"]["settings_sha256"]


def test_each_cell_equals_the_maps_tab(whole):
    from explorer import sources
    from explorer.views.maps import maps_view

    table = whole["table"]
    for index in (0, 2):
        sample = sources.from_text(TEXTS[index])
        for head in (0, 5):
            view = maps_view(sample, layer=2, head=head, maps=["elu1", "favor_plus_orthogonal"],
                             causal=sample.causal, m=64, seed=0, spread=0)
            for row in view.metrics[1:]:                        # the first is softmax's own
                cell = table[(table["text_index"] == index) & (table["head"] == head)
                             & (table["map_id"] == row["map"])]
                assert len(cell) == 1
                for key in METRIC_KEYS:
                    want, got = row[key], cell[key].iloc[0]
                    if want is None:
                        assert pd.isna(got), key
                    else:
                        assert got == want, (index, head, row["map"], key)
            assert cell["model_check"].iloc[0] == view.model_check


def test_a_stopped_run_resumes_to_the_uninterrupted_table(tmp_path, whole):
    seen = []

    def stop_after_one(done, total, started, skipped):
        seen.append(done)

    with pytest.raises(stopping.Stopped):
        _run(tmp_path, "resumed", texts=TEXTS, progress=stop_after_one, should_stop=lambda: seen[-1] >= 1)
    kept = probe_table.read_table(tmp_path / "resumed.csv")
    assert set(kept["text_index"]) == {0} and not (tmp_path / "resumed.parquet").exists()

    skipped = []
    result = probe_table.run(probe.Corpus.from_lines(TEXTS), SMALL, tmp_path / "resumed",
                             progress=lambda done, total, started, skip: skipped.append(skip))
    assert skipped[0] == 1                                # the finished text is not read again
    _same(result["table"], whole["table"])


def test_a_text_cut_short_is_done_again(tmp_path, whole):
    csv = tmp_path / "cut.csv"
    whole["table"].iloc[:6].to_csv(csv, index=False)     # text 0 whole, text 2 half written
    result = _run(tmp_path, "cut", texts=TEXTS)
    _same(result["table"], whole["table"])


def test_a_line_cut_in_half_is_dropped_and_its_text_done_again(tmp_path, whole):
    csv = tmp_path / "half.csv"
    written = whole["table"].iloc[:8].to_csv(index=False)     # text 0 and text 2 whole ...
    csv.write_text(written[:-40], encoding="utf-8")           # ... but the last line half written
    result = _run(tmp_path, "half", texts=TEXTS)
    _same(result["table"], whole["table"])


def test_other_settings_are_refused_not_mixed_in(tmp_path):
    _run(tmp_path, "mixed", texts=TEXTS[:1])
    with pytest.raises(ValueError, match="other settings"):
        _run(tmp_path, "mixed", texts=TEXTS[:1], settings=probe.ProbeSettings(maps=("elu1",), layers=(2,),
                                                                              heads=(0, 5)))


def test_shards_merge_into_the_unsharded_table(tmp_path, whole):
    corpus = probe.Corpus.from_lines(TEXTS)
    for i in range(2):
        probe_table.run(corpus, SMALL, tmp_path / "part", shard=(i, 2), progress=_quiet)
    assert sorted(p.name for p in tmp_path.glob("*.csv")) == ["part.shard-0-of-2.csv", "part.shard-1-of-2.csv"]
    parts = [tmp_path / "part.shard-0-of-2.csv", tmp_path / "part.shard-1-of-2.csv"]
    merged = probe_table.merge(parts + parts[:1], tmp_path / "merged")       # a shard twice: kept once
    _same(merged["table"], whole["table"])
    assert merged["missing"] == 0 and len(json.loads(merged["paths"]["json"].read_text())["shards"]) == 3
    only_one = probe_table.merge(parts[:1], tmp_path / "half")
    assert only_one["missing"] == 1                       # line 3 is in the other shard


def test_merge_refuses_shards_of_other_settings(tmp_path):
    corpus = probe.Corpus.from_lines(TEXTS[:1])
    probe_table.run(corpus, SMALL, tmp_path / "a", progress=_quiet)
    probe_table.run(corpus, probe.ProbeSettings(maps=("elu1",), layers=(2,), heads=(0, 5)), tmp_path / "b",
                    progress=_quiet)
    with pytest.raises(ValueError, match="other settings"):
        probe_table.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "ab")


def test_shard_selection_and_names():
    corpus = probe.Corpus.from_lines([f"text {i}" for i in range(7)])
    assert [i for i, _ in corpus.shard(1, 3)] == [1, 4]
    assert sorted(i for s in range(3) for i, _ in corpus.shard(s, 3)) == list(range(7))
    assert probe_table.parse_shard("2/5") == (2, 5)
    for bad in ("5/5", "x", "1/0", "-1/2"):
        with pytest.raises(ValueError):
            probe_table.parse_shard(bad)
    assert probe_table.shard_stem("out/run.csv", 0, 1).name == "run"
    assert probe_table.shard_stem("out/run", 3, 8).name == "run.shard-3-of-8"


def test_map_names_are_the_engines():
    assert probe.resolve_maps(["elu1", "favor_plus", "favor_plus_iid", "elu1", "softmax"]) == (
        "elu1", "favor_plus_orthogonal", "favor_plus_iid", "softmax")
    for bad in (["nope"], ["hedgehog_trained"], []):
        with pytest.raises(ValueError):
            probe.resolve_maps(bad)
    assert probe.pick(["all"], 6, "layers") == tuple(range(6)) and probe.pick(["3", 1, 3], 6, "layers") == (3, 1)
    with pytest.raises(ValueError, match="outside"):
        probe.pick([6], 6, "layers")


def test_an_infinite_kl_stays_infinite_through_the_files(tmp_path):
    # ReLU zeroes keys softmax uses on some heads: KL = +inf there, counted, never NaN.
    result = _run(tmp_path, "relu", texts=TEXTS[:1], settings=probe.ProbeSettings(maps=("relu",), layers=(0, 1, 2)))
    table = probe_table.read_table(result["paths"]["csv"])
    assert (table["kl_rows_infinite"] > 0).any()
    assert all(math.isfinite(x) or pd.isna(x) for x in table["kl_mean"])     # the mean is over the finite rows


@pytest.mark.slow
def test_the_command_line_writes_and_merges(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS[:3]) + "\n", encoding="utf-8")
    base = [sys.executable, "-m", "explorer", "probe", "--texts", str(corpus), "--maps", "elu1", "--layers", "0",
            "--heads", "1", "--out", str(tmp_path / "cli")]
    for i in range(2):
        done = subprocess.run(base + ["--shard", f"{i}/2"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    merge = [sys.executable, "-m", "explorer", "probe", "--out", str(tmp_path / "all"), "--merge",
             str(tmp_path / "cli.shard-0-of-2.csv"), str(tmp_path / "cli.shard-1-of-2")]
    done = subprocess.run(merge, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(probe_table.read_table(tmp_path / "all.csv")) == 2
    bad = subprocess.run(base[:-2] + ["--out", str(tmp_path / "x"), "--maps", "nope"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "unknown" in bad.stderr and "Traceback" not in bad.stderr
