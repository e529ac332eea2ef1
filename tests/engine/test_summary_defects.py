"""The summary numbers an independent re-check found wrong: each rebuilt from the input that
showed it and held to a plain recomputation (numpy or a loop over rows, float64)."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
import torch

from explorer import export
from explorer.forms import attention
from explorer.maps import create
from explorer.measure import metrics


def _softmax_rows(q: np.ndarray, k: np.ndarray, causal: bool) -> np.ndarray:
    s = q @ k.T / math.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones_like(s, dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True)


def _kl_by_row(p: np.ndarray, a: np.ndarray) -> list[float]:
    """KL(p_i || a_i) per row over the keys where p > 0: +inf where a is 0 there."""
    out = []
    for pi, ai in zip(p, a):
        keys = pi > 0
        out.append(math.inf if (ai[keys] == 0).any() else float(np.sum(pi[keys] * np.log(pi[keys] / ai[keys]))))
    return out


# ---------------------------------------------------------------- the CSV's "rows defined"

def _relu_with_28_infinite_rows():
    """N = 32, d = 2, non-causal: key 0 is (1, -1), so ReLU gives it zero weight from every
    query whose first coordinate is negative (rows 0-27), while softmax gives it some; rows
    28-31 have both coordinates positive and weigh every key."""
    gen = np.random.default_rng(5)
    q = np.abs(gen.normal(size=(32, 2))) + 0.1
    q[:28, 0] = -q[:28, 0]
    k = np.abs(gen.normal(size=(32, 2))) + 0.1
    k[0] = (1.0, -1.0)
    return q, k


def test_the_csv_counts_the_rows_its_kl_mean_is_over_not_the_infinite_ones():
    q, k = _relu_with_28_infinite_rows()
    p = _softmax_rows(q, k, causal=False)
    w = np.maximum(q, 0) @ np.maximum(k, 0).T
    by_hand = _kl_by_row(p, w / w.sum(1, keepdims=True))
    assert sum(math.isinf(x) for x in by_hand) == 28                     # the input is what it says
    tq, tk = torch.from_numpy(q).float(), torch.from_numpy(k).float()
    approx, ill = attention.kernel_map_with_flags(tq, tk, create("relu", 2))
    row = {"map": "ReLU", **metrics.compare(attention.softmax_map(tq, tk), approx, ill_defined=ill, causal=False)}
    assert (row["kl_rows_infinite"], row["kl_rows_undefined"], row["total_rows"]) == (28, 0, 32)
    assert metrics.rows_in_mean(row, "kl_mean") == 4

    buf = io.StringIO()
    export.metrics_csv_table([row]).to_csv(buf, index=False, na_rep="NaN")
    back = pd.read_csv(io.StringIO(buf.getvalue()))
    label = metrics.METRIC_INFO["kl_mean"][0]
    assert back[f"{label}: rows defined"].tolist() == [4]                 # was 32
    finite = [x for x in by_hand if math.isfinite(x)]
    assert back[label][0] == pytest.approx(np.mean(finite), rel=1e-5)     # the mean over those 4 rows
    # A metric with no infinite rows still counts every row it has a value on.
    err = metrics.METRIC_INFO["map_rel_error"][0]
    assert back[f"{err}: rows defined"].tolist() == [32]
    # The sentence under the table names the same 4 rows.
    assert "the 4 rows where it is finite" in metrics.infinite_note(row, "kl_mean", "en")


# ---------------------------------------------------------------- ill-defined rows, causal

def test_ill_defined_rows_leave_out_causal_row_0_as_every_mean_does():
    """ReLU, causal, N = 9: row 0 sees key 0 alone, and ReLU(q_0)·ReLU(k_0) = 0 makes it 0/0
    (flagged); rows 4 and 7 are flagged as well. Row 0 is outside every mean: 2, not 3."""
    gen = np.random.default_rng(2)
    q = np.abs(gen.normal(size=(9, 2))) + 0.1
    k = np.abs(gen.normal(size=(9, 2))) + 0.1
    q[0], k[0] = (1.0, 0.0), (0.0, 1.0)                       # row 0: a zero weight on its one key
    tq, tk = torch.from_numpy(q), torch.from_numpy(k)
    approx, flags = attention.kernel_map_with_flags(tq, tk, create("relu", 2), causal=True)
    flags = flags.clone()
    flags[[4, 7]] = True
    assert bool(flags[0])                                     # the 0/0 row is flagged by the map itself
    reference = attention.softmax_map(tq, tk, causal=True)
    counted = [i for i in range(1, 9) if bool(flags[i]) or not bool(torch.isfinite(approx[i, : i + 1]).all())]
    assert counted == [4, 7]
    for compare in (metrics.compare, metrics.compare_plain):
        row = compare(reference, approx, ill_defined=flags, causal=True)
        assert row["ill_defined_rows"] == 2, compare.__name__            # was 3
        assert row["total_rows"] == 8
    # Non-causal, every row is in the means: every flagged row counts.
    plain = metrics.compare(attention.softmax_map(tq, tk), attention.kernel_map(tq, tk, create("elu1", 2)),
                            ill_defined=flags, causal=False)
    assert plain["ill_defined_rows"] == 3


# ---------------------------------------------------------------- the learn tab's held-out scores

def _causal_sample(n=33, heads=2, d=8, seed=7):
    """A causal sample of one layer and ``heads`` heads: its model's attention is causal softmax."""
    from explorer.sources import Sample

    gen = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(1, heads, n, d, generator=gen) for _ in range(2))
    a = attention.softmax_map(q, k, causal=True)
    return Sample(q=q, k=k, v=k, tokens=[f"t{i}" for i in range(n)], model_attentions=a, causal=True)


def _rows_by_hand(sample, fmap):
    """(KL, entropy of the map, entropy of softmax) of every row of every head, in float64
    loops over rows: (heads, N) arrays, row i over keys j <= i."""
    q, k = sample.q[0].double(), sample.k[0].double()
    fq, fk = fmap(sample.q[0], is_query=True).double(), fmap(sample.k[0]).double()
    heads, n = q.shape[0], q.shape[1]
    kl, h, h_ref = (np.zeros((heads, n)) for _ in range(3))
    for head in range(heads):
        s = (q[head] @ k[head].T / math.sqrt(q.shape[-1])).numpy()
        w = (fq[head] @ fk[head].T).numpy()
        for i in range(n):
            p = np.exp(s[i, : i + 1] - s[i, : i + 1].max())
            p /= p.sum()
            a = w[i, : i + 1] / w[i, : i + 1].sum()
            kl[head, i] = np.sum(p * np.log(p / a))
            h[head, i] = -np.sum(a * np.log(a))
            h_ref[head, i] = -np.sum(p * np.log(p))
    return kl, h, h_ref


def test_heldout_scores_of_a_causal_text_leave_out_row_0():
    from explorer.experiments import learning

    sample = _causal_sample()
    fmap = create("elu1", 8)
    quality = learning.heldout_quality([sample], {"elu1": fmap})
    kl, h, h_ref = _rows_by_hand(sample, fmap)
    assert np.abs(kl[:, 0]).max() < 1e-12 and np.abs(h[:, 0]).max() < 1e-12     # row 0 is perfect for any map
    got = quality["elu1"]
    np.testing.assert_allclose(got["kl"][0].numpy(), kl[:, 1:].mean(1), rtol=1e-6)
    np.testing.assert_allclose(got["entropy"][0].numpy(), h[:, 1:].mean(1), rtol=1e-6)
    np.testing.assert_allclose(quality["softmax"]["entropy"][0].numpy(), h_ref[:, 1:].mean(1), rtol=1e-6)
    np.testing.assert_allclose(got["kl_median"][0].numpy(), np.median(kl[:, 1:], axis=1), rtol=1e-6)
    # Row 0 counted would pull each mean down by 1/33 (the bias the re-check found): the
    # scores are 33/32 of the all-rows means, not those means.
    np.testing.assert_allclose(got["kl"][0].numpy(), kl.mean(1) * 33 / 32, rtol=1e-6)
    np.testing.assert_allclose(got["entropy"][0].numpy(), h.mean(1) * 33 / 32, rtol=1e-6)


def test_the_learn_tables_median_row_is_the_median_over_every_covered_row():
    """Two heads: the median of the two heads' median rows is not the median row of both."""
    from explorer.experiments import learning
    from explorer.maps.learned import Hedgehog
    from explorer.views import learn as lv

    sample = _causal_sample()
    maps = {"hedgehog": Hedgehog(8, 8), "elu1": create("elu1", 8)}
    quality = learning.heldout_quality([sample], maps)
    _, rows, _, _, _ = lv._summarise([quality], "hedgehog", 8, 8)
    shown = {r["name"]: r["kl_median"] for r in rows}
    kl, _, _ = _rows_by_hand(sample, maps["elu1"])
    every_row = float(np.median(kl[:, 1:]))
    of_medians = float(np.median(np.median(kl[:, 1:], axis=1)))
    assert abs(every_row - of_medians) > 1e-4                   # the input tells the two apart
    assert shown["elu1"] == pytest.approx(every_row, rel=1e-6)
    assert float(quality["elu1"]["kl_median_pooled"]) == pytest.approx(every_row, rel=1e-6)


# ---------------------------------------------------------------- the merged probe's provenance

PROBE_TEXTS = ["The cat sat on the mat because it was warm.", "",
               "Attention is kernel regression: each query averages the values.",
               "Linear attention replaces the exponential with a dot product of features."]


@pytest.mark.slow
def test_two_shards_merged_keep_every_provenance_field(tmp_path):
    import hashlib
    import importlib.metadata
    import json

    import pyarrow.parquet as pq

    from explorer import provenance
    from explorer.experiments import probe, probe_table

    settings = probe.ProbeSettings(maps=("elu1",), layers=(2,), heads=(0,), seed=3)
    corpus = probe.Corpus.from_lines(PROBE_TEXTS)
    shards = [probe_table.run(corpus, settings, tmp_path / "part", shard=(i, 2), progress=lambda *_: None)
              for i in range(2)]
    records = [json.loads(s["paths"]["json"].read_text()) for s in shards]
    merged = probe_table.merge([s["paths"]["csv"] for s in shards], tmp_path / "merged")
    record = json.loads(merged["paths"]["json"].read_text())
    in_parquet = json.loads(pq.read_schema(merged["paths"]["parquet"]).metadata[b"explorer.probe"])
    assert in_parquet == record

    # Every field of the schema is there, as the shards wrote it.
    for key in records[0]:
        assert key in record, key
    assert record["schema"] == provenance.SCHEMA and record["schema_version"] == provenance.SCHEMA_VERSION
    assert record["created_utc"] == max(r["created_utc"] for r in records)
    assert record["seeds"] == [3]
    files = [f for m in record["models"] for f in m["files"]]
    assert files and files == [f for m in records[0]["models"] for f in m["files"]]
    from explorer.sources.text import get_model
    loaded = get_model(settings.model)
    on_disk = provenance.model_files(str(loaded.name), str(loaded.path))
    assert [f["sha256"] for f in files] == [provenance.file_sha256(p) for p in on_disk]
    # The versions are the packages' own, at the top and per shard: never null.
    assert record["packages"]["torch"] == importlib.metadata.version("torch")
    for shard, own in zip(record["shards"], records):
        assert shard["packages"] == own["packages"] and shard["packages"]["numpy"]
        assert shard["created_utc"] == own["created_utc"] and shard["engine"] == own["engine"]
        assert shard["models"] == own["models"] and shard["shard"] == own["shard"]
    assert [s["shard"]["index"] for s in record["shards"]] == [0, 1]

    # The texts read, by digest: lines 0, 2 and 3 (line 1 is blank), each with its tokens.
    table = merged["table"].drop_duplicates("text_index").set_index("text_index")
    assert [t["index"] for t in record["texts"]] == [0, 2, 3]
    for entry in record["texts"]:
        words = PROBE_TEXTS[entry["index"]]
        assert entry["role"] == "probe" and entry["chars"] == len(words)
        assert entry["sha256"] == hashlib.sha256(words.encode("utf-8")).hexdigest()
        assert entry["tokens"] == int(table.loc[entry["index"], "n_tokens"])
    # Each shard names its own texts; the merge names each once.
    assert [[t["index"] for t in r["texts"]] for r in records] == [[0, 2], [3]]
    assert "inputs" in record
