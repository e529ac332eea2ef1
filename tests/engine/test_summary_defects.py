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
