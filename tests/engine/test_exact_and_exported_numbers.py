"""Numbers a researcher copies into a paper: exact where they should be exact, exported at
full precision, with every count that says how many rows a mean is over."""

import io
import json
import math

import numpy as np
import pytest
import torch

from explorer import export, maps as feature_maps, sources
from explorer.diagnostics import attention
from explorer.measure import metrics, rowwise


def _qkv(n=48, d=16, seed=0, heads=None):
    gen = torch.Generator().manual_seed(seed)
    shape = (n, d) if heads is None else (heads, n, d)
    return tuple(torch.randn(*shape, generator=gen) for _ in range(3))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", [1, 37, 64])
def test_softmax_kl_to_itself_is_exactly_zero(causal, n):
    q, k, v = _qkv(n=n)
    a = attention.softmax_map(q, k, causal=causal)
    s = attention.logits(q, k)
    fast = metrics.compare(a, a, v=v, logits=s, causal=causal)["kl_mean"]
    plain = metrics.compare_plain(a, a, v=v, logits=s, causal=causal)["kl_mean"]
    assert fast == 0.0 and plain == 0.0
    # A map within float32 rounding of softmax (the sliding window wider than N) is 0 too.
    wide = attention.kernel_map(q, k, feature_maps.create("sliding_window", 16, window=n + 1), causal=causal)
    assert metrics.compare(a, wide, causal=causal)["kl_mean"] == 0.0


def test_kl_keeps_real_values_and_real_negatives():
    q, k, v = _qkv()
    a = attention.softmax_map(q, k)
    approx = attention.kernel_map(q, k, feature_maps.create("elu1", 16))
    kl = metrics.compare(a, approx)["kl_mean"]
    assert kl == pytest.approx(metrics.compare_plain(a, approx)["kl_mean"], rel=1e-9) and kl > 1e-3
    # A q that sums to 1.5 on every row: KL is negative for real (-log 1.5 for q = 1.5 p), and kept.
    scaled = rowwise.row_kl(a, 1.5 * a)[0]
    assert torch.allclose(scaled, torch.full_like(scaled, -math.log(1.5)), atol=1e-9)


def test_kl_rounding_clamp_only_touches_rounding():
    kl = torch.tensor([-1e-17, -1e-6, 2e-16, 1e-3], dtype=torch.float64)
    out = rowwise.kl_rounded_to_zero(kl, torch.ones(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64))
    assert out.tolist() == [0.0, -1e-6, 0.0, 1e-3]


# ------------------------------------------------------------------------ CSV export

def _rows():
    q, k, v = _qkv(n=16)
    a = attention.softmax_map(q, k)
    s = attention.logits(q, k)
    ident = attention.kernel_map_with_flags(q, k, feature_maps.create("identity", 16))
    rows = [{"map": "softmax", **metrics.compare(a, a, v=v, logits=s, head_dim=16)}]
    rows.append({"map": "identity", **metrics.compare(a, ident[0], v=v, logits=s, ill_defined=ident[1],
                                                      feature_dim=16, head_dim=16)})
    return rows


def test_csv_holds_numbers_at_full_precision_and_nan():
    rows = _rows()
    # A mean over one row of 16: the screen says "n/a (15 of 16 rows)", the file the number.
    rows[1]["kl_mean"], rows[1]["kl_rows_undefined"], rows[1]["kl_rows_defined"] = 0.123456789012345, 15, 1
    rows[1]["monotonicity"] = None
    table = export.metrics_csv_table(rows)
    buf = io.StringIO()
    table.to_csv(buf, index=False, na_rep="NaN")
    import pandas as pd
    back = pd.read_csv(io.StringIO(buf.getvalue()))
    kl_label = metrics.METRIC_INFO["kl_mean"][0]
    assert back[kl_label].dtype.kind == "f"
    assert back[kl_label][1] == 0.123456789012345                   # not rounded to 4 figures
    assert back[f"{kl_label}: rows defined"].tolist() == [16, 1]
    mono = metrics.METRIC_INFO["monotonicity"][0]
    assert math.isnan(back[mono][1]) and "n/a" not in buf.getvalue()
    for column in back.columns[1:]:
        assert back[column].dtype.kind in "fiu", column                 # every column but the map is numeric
    err = metrics.METRIC_INFO["map_rel_error"][0]
    assert back[err][1] == rows[1]["map_rel_error"]


# ------------------------------------------------------------------ FLOPs of the window

@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,w", [(1, 4), (10, 4), (10, 0), (5, 20), (64, 64)])
def test_window_pairs_count_the_window(n, w, causal):
    i = torch.arange(n)
    off = i.view(-1, 1) - i.view(1, -1)
    inside = (off.abs() < w) & ((off >= 0) if causal else True)
    assert metrics.window_pairs(n, w, causal) == int(inside.sum())


def test_sliding_window_flop_ratio_includes_the_window():
    q, k, v = _qkv(n=64, d=16)
    a = attention.softmax_map(q, k)
    fmap = feature_maps.create("sliding_window", 16, window=8)
    approx = attention.kernel_map(q, k, fmap)
    plain = metrics.compare(a, approx, v=v, feature_dim=fmap.num_features, head_dim=16)
    windowed = metrics.compare(a, approx, v=v, feature_dim=fmap.num_features, head_dim=16, window=8)
    extra = metrics.window_flops(64, 8, 16, 16, fmap.num_features, False)
    assert extra > 0
    assert windowed["linear_flops"] == plain["linear_flops"] + extra
    assert windowed["flop_ratio"] == pytest.approx(windowed["quadratic_flops"] / windowed["linear_flops"])
    assert metrics.compare_plain(a, approx, v=v, feature_dim=fmap.num_features, head_dim=16,
                                 window=8)["linear_flops"] == windowed["linear_flops"]


def test_maps_view_counts_the_window():
    from explorer import views
    sample = sources.from_random(64, 16, preset="gaussian", seed=1)
    view = views.maps_view(sample, 0, 0, ["softmax", "sliding_window"], window=8)
    row = next(r for r in view.metrics if r["map"] == "sliding_window")
    m = row["feature_dim"]
    # The shared FLOP model's linear path (4 N m d_v + 4 N m) plus the window's own pairs.
    expected = 4 * 64 * m * 16 + 4 * 64 * m + metrics.window_flops(64, 8, 16, 16, m, False)
    assert row["linear_flops"] == expected
    assert row["flop_ratio"] == pytest.approx(row["quadratic_flops"] / expected)


# ---------------------------------------------------------------------- [UNK] notice

def test_unk_notice_says_what_unk_is():
    from explorer.lecture.text import t
    en = t("notice.unk", "en").format(count=2, total=9)
    zh = t("notice.unk", "zh").format(count=2, total=9)
    assert "outside" in en and "vocabulary" in en and "Chinese" not in en
    assert "汉字" not in zh and "词表" in zh


# -------------------------------------------------------------------- array exports

def test_view_arrays_hold_the_view_at_full_resolution(tmp_path):
    sample = sources.from_random(40, 8, preset="clustered", seed=2)
    labels = ["softmax", "elu1", "taylor1"]
    got = export.view_arrays(sample, 0, 0, labels, causal=True, m=16, seed=0)
    q, k, v = (t.numpy() for t in sample.head(0, 0))
    assert np.array_equal(got.arrays["q"], q) and np.array_equal(got.arrays["v"], v)
    ref = attention.softmax_map(torch.from_numpy(q), torch.from_numpy(k), causal=True)
    assert np.allclose(got.arrays["A"], ref.numpy(), atol=1e-7)
    approx = attention.kernel_map(torch.from_numpy(q), torch.from_numpy(k), feature_maps.create("elu1", 8),
                                  causal=True)
    assert np.allclose(got.arrays["A_hat.elu1"], approx.numpy(), atol=1e-7)
    # Per-row metrics agree with the table's pooled ones: KL's mean over defined rows. The
    # arrays keep every row; causal means leave out row 0 (a single key, KL 0 for any map).
    row = metrics.compare(ref, approx, v=torch.from_numpy(v), logits=attention.logits(*map(torch.from_numpy, (q, k))),
                          causal=True)
    kl_rows = got.arrays["rows.elu1.kl"]
    assert kl_rows[0] == 0.0
    assert np.nanmean(kl_rows[1:]) == pytest.approx(row["kl_mean"], rel=1e-9)
    assert int(np.isfinite(kl_rows[1:]).sum()) == row["kl_rows_defined"]
    mono = got.arrays["rows.elu1.monotonicity"]
    assert math.isnan(mono[0])                        # the first causal row has one key
    assert np.nanmean(mono) == pytest.approx(row["monotonicity"], rel=1e-9)
    # Taylor-1 has negative weights: no entropy there.
    assert np.isnan(got.arrays["rows.taylor1.entropy"]).any()
    assert got.meta["maps"]["A_hat.elu1"] == "elu+1" and got.meta["tokens"] == list(sample.tokens)

    npz = np.load(export.write_npz(got, tmp_path / "a.npz"), allow_pickle=False)
    assert set(npz.files) == set(got.arrays) | {"meta_json", "provenance"}
    assert json.loads(str(npz["meta_json"]))["causal"] is True
    from safetensors.numpy import load_file
    from safetensors import safe_open
    path = export.write_safetensors(got, tmp_path / "a.safetensors")
    loaded = load_file(path)
    assert all(np.array_equal(loaded[key], got.arrays[key], equal_nan=True) for key in got.arrays)
    with safe_open(path, "np") as fh:
        assert json.loads(fh.metadata()["meta_json"])["maps"]["A"] == "softmax"


def test_view_arrays_refuse_too_much_before_computing(monkeypatch):
    sample = sources.from_random(256, 16, preset="gaussian", seed=0)
    monkeypatch.setattr(export, "MAX_EXPORT_BYTES", 1_000_000)
    monkeypatch.setattr(attention, "softmax_map", lambda *a, **k: pytest.fail("computed before refusing"))
    with pytest.raises(ValueError, match="choose fewer maps or a shorter sequence"):
        export.view_arrays(sample, 0, 0, ["softmax", "elu1", "relu", "taylor1"])
