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
from explorer.diagnostics import attention
from explorer.maps import create
from explorer.measure import metrics, showing


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
    row = {"map": "relu", **metrics.compare(attention.softmax_map(tq, tk), approx, ill_defined=ill, causal=False)}
    assert (row["kl_rows_infinite"], row["kl_rows_undefined"], row["total_rows"]) == (28, 0, 32)
    assert showing.rows_in_mean(row, "kl_mean") == 4

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
    assert "the 4 rows where it is finite" in showing.infinite_note(row, "kl_mean", "en")


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


# ---------------------------------------------------------------- maps without a normaliser

def _mechanism_head(seed=5, n=40, d=16):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(n, d, generator=gen) for _ in range(3))


def _errors_by_hand(p: np.ndarray, a: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """||A^ - A|| / ||A|| and ||(A^ - A) V|| / ||A V|| over rows 1..N-1 (causal row 0 is in no mean)."""
    p, a = p[1:], a[1:]
    return (float(np.linalg.norm(a - p) / np.linalg.norm(p)),
            float(np.linalg.norm((a - p) @ v) / np.linalg.norm(p @ v)))


@pytest.mark.parametrize("name, nonnegative_rows", [("deltanet", 1), ("hgrn2", 11)])
def test_a_signed_unnormalised_map_has_no_kl_or_entropy_only_its_errors(name, nonnegative_rows):
    """HGRN2's and DeltaNet's maps have no normaliser and negative weights: on this causal
    N = 40 head KL was a mean over the few rows that happened to be non-negative (DeltaNet 1
    of 39, HGRN2 11), as if they were distributions."""
    from explorer.views.mechanism_maps import MechanismSettings, mechanism_map

    q, k, v = _mechanism_head()
    approx = mechanism_map(name, q, k, MechanismSettings(), 0)
    reference = attention.softmax_map(q, k, causal=True).double()
    a, p = approx.numpy(), reference.numpy()
    lower = np.tril(np.ones_like(a, dtype=bool))
    sums = a.sum(1)[1:]
    assert (a[lower] < 0).mean() > 0.2 and np.abs(sums - 1).max() > 0.1           # signed, unnormalised
    assert sum(bool((a[i, : i + 1] >= 0).all()) for i in range(1, 40)) == nonnegative_rows
    want_map, want_out = _errors_by_hand(p, a, v.double().numpy())
    for compare in (metrics.compare, metrics.compare_plain):
        row = compare(reference, approx, v, causal=True)
        assert row["kl_mean"] is None and row["entropy_approx"] is None, compare.__name__
        assert row["kl_rows_defined"] == row["kl_rows_infinite"] == 0
        assert row["kl_rows_undefined"] == row["entropy_approx_rows_undefined"] == row["total_rows"] == 39
        assert row["unnormalised_rows"] == int((np.abs(sums - 1) > 1e-3 * np.maximum(1, np.abs(a).sum(1)[1:])).sum())
        assert row["map_rel_error"] == pytest.approx(want_map, rel=1e-9)
        assert row["output_rel_error"] == pytest.approx(want_out, rel=1e-9)
        assert showing.mostly_undefined(row, "kl_mean") and not showing.mostly_undefined(row, "map_rel_error")
    rows = metrics.row_metrics(reference, approx, v, causal=True)
    assert torch.isnan(rows["kl"]).all() and torch.isnan(rows["entropy"]).all()
    assert torch.isfinite(rows["map_error"][1:]).all()


def test_normalised_maps_keep_their_kl_signed_or_not():
    """A kernel map divides by its row sums: identity and trig features give negative weights
    (their KL is undefined on those rows, as before) but every row sums to 1; elu+1's KL is
    the plain mean over rows. None is taken for a map without a normaliser."""
    q, k, v = _mechanism_head(n=256, d=16)
    reference = attention.softmax_map(q, k)
    for feature in ("elu1", "identity", "trig_rff", "relu", "favor_plus"):
        approx, ill = attention.kernel_map_with_flags(q, k, create(feature, 16, num_features=16)
                                                      if feature in ("trig_rff", "favor_plus") else create(feature, 16))
        row = metrics.compare(reference, approx, v, ill_defined=ill, causal=False)
        assert row["unnormalised_rows"] == 0, feature
    elu = attention.kernel_map(q, k, create("elu1", 16))
    row = metrics.compare(reference, elu, causal=False)
    want = np.mean(_kl_by_row(reference.double().numpy(), elu.double().numpy()))
    assert row["kl_rows_defined"] == 256 and row["kl_mean"] == pytest.approx(want, rel=1e-6)


def test_the_tables_say_why_a_map_without_a_normaliser_has_no_kl():
    from explorer.text import say
    from explorer.views import common
    from explorer.views.mechanism_maps import MechanismSettings, mechanism_map

    q, k, v = _mechanism_head()
    reference = attention.softmax_map(q, k, causal=True)
    rows = [{"map": "DeltaNet", **metrics.compare(reference, mechanism_map("deltanet", q, k, MechanismSettings(), 0),
                                                  v, causal=True)}]
    row = rows[0]
    from explorer.text import said_throughout
    from explorer.ui.common import said_outputs
    for lang in ("en", "zh"):
        notes = said_throughout(common.undefined_notes(rows), lang)
        note = say("metrics.weights_note", lang, map="DeltaNet", rows=row["unnormalised_rows"], total=39,
                   negative=say("metrics.weights_negative", lang, share=f"{row['negative_fraction']:.0%}"),
                   map_error=f"{row['map_rel_error']:.3g}", output_error=f"{row['output_rel_error']:.3g}")
        assert note in notes, lang
        # One note for the map, not one more per cell it leaves n/a (KL and entropy).
        why = say("metrics.why_weights", lang)
        assert sum(why in n for n in notes) == 0 and notes.count(note) == 1, lang
        table = said_outputs(common.metrics_table(rows, short=True), lang)
        kl = table.iloc[0, table.columns.get_loc(say(common.metric_label("kl_mean", True), lang))]
        assert kl == say("common.na_rows", lang, count=39, total=39)
        err = table.iloc[0, table.columns.get_loc(say(common.metric_label("map_rel_error", True), lang))]
        assert err == pytest.approx(row["map_rel_error"], rel=1e-3)


def test_the_entropy_bar_of_a_map_without_a_normaliser_is_na_with_the_reason():
    from explorer.figures.maps import metric_bars
    from explorer.text import say
    from explorer.views.mechanism_maps import MechanismSettings, mechanism_map

    q, k, v = _mechanism_head()
    reference = attention.softmax_map(q, k, causal=True)
    rows = [{"map": "softmax", **metrics.compare(reference, reference, v, causal=True)},
            {"map": "HGRN2", **metrics.compare(reference, mechanism_map("hgrn2", q, k, MechanismSettings(), 0), v,
                                               causal=True)}]
    from explorer.figures.style import said_figure
    for lang in ("en", "zh"):
        fig = said_figure(metric_bars(rows), lang)
        bars = [t for t in fig.data if t.type == "bar"]
        assert bars[0].y[1] is None                                     # no entropy bar for HGRN2
        marks = [t for t in fig.data if t.type == "scatter" and t.mode == "text" and t.xaxis == "x"]
        def bare(text):                                # the hover is wrapped: compare without spacing
            return "".join(text.replace("<br>", "").split())
        assert marks and bare(say("metrics.why_weights", lang)[:30]) in bare("".join(marks[0].hovertext)), lang


@pytest.mark.slow
def test_a_probe_written_with_other_columns_is_not_resumed(tmp_path):
    """A probe CSV from before a metric was added: rows appended to it would shift under its header."""
    from explorer.experiments import probe, probe_table

    settings = probe.ProbeSettings(maps=("elu1",), layers=(2,), heads=(0,))
    corpus = probe.Corpus.from_lines(PROBE_TEXTS[:1])
    done = probe_table.run(corpus, settings, tmp_path / "old", progress=lambda *_: None)
    csv = done["paths"]["csv"]
    probe_table.read_table(csv).drop(columns=["unnormalised_rows"]).to_csv(csv, index=False)
    with pytest.raises(ValueError, match="columns"):
        probe_table.run(probe.Corpus.from_lines(PROBE_TEXTS[:3]), settings, tmp_path / "old", progress=lambda *_: None)
