"""Issue 23, points 2 and 9: an infinite KL is a value, not "undefined"; causal means leave out
the single-key row 0 everywhere; the maps tab says when the model read [UNK]."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from explorer import views
from explorer.measure import metrics, rowwise

# ReLU(q)·ReLU(k) is 0 for (q1, k1) and (q3, k0): those keys get no weight in rows 1 and 3,
# while softmax gives every key some. Rows 0 and 2 see every key.
Q = np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], dtype=np.float32)
K = np.array([[1.0, 0.0], [-1.0, 1.0], [1.0, 1.0], [0.5, 0.5]], dtype=np.float32)
INFINITE_ROWS = [1, 3]


def _independent_kl_rows(q, k):
    """KL(softmax || ReLU map) per row from the formulas, in float64 with numpy."""
    q, k = q.astype(np.float64), k.astype(np.float64)
    s = q @ k.T / math.sqrt(q.shape[1])
    p = np.exp(s - s.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    w = np.maximum(q, 0) @ np.maximum(k, 0).T
    a = w / w.sum(1, keepdims=True)
    out = []
    for pi, ai in zip(p, a):
        out.append(math.inf if np.any((pi > 0) & (ai == 0)) else float(np.sum(pi * np.log(pi / ai))))
    return out


@pytest.fixture()
def relu_view(tmp_path):
    path = tmp_path / "relu_zeroes.npz"
    np.savez(path, q=Q, k=K)
    sample = views.load_sample("file", path=str(path))
    view = views.maps_view(sample, 0, 0, ["softmax", "relu"], False, 16, 0)
    return sample, view


def test_upload_where_relu_zeroes_keys_has_infinite_kl_on_those_rows(relu_view):
    _, view = relu_view
    want = _independent_kl_rows(Q, K)
    assert [i for i, x in enumerate(want) if math.isinf(x)] == INFINITE_ROWS          # the upload is what it says
    row = {r["map"]: r for r in view.metrics}["relu"]
    assert row["kl_rows_infinite"] == 2 and row["kl_rows_undefined"] == 0 and row["kl_rows_defined"] == 2
    assert row["kl_mean"] == pytest.approx(np.mean([x for x in want if math.isfinite(x)]), rel=1e-5)
    assert view.infinite_kl["relu"] == INFINITE_ROWS


def test_the_table_says_infinity_beside_the_finite_mean(relu_view):
    _, view = relu_view
    row = {r["map"]: r for r in view.metrics}["relu"]
    for lang, words in (("en", "(∞ on 2 of 4 rows)"), ("zh", "（4 行中 2 行为 ∞）")):
        from explorer.text import say
        from explorer.ui.common import said_outputs
        table = said_outputs(views.metrics_table(view.metrics, short=True), lang)
        cell = table.iloc[1, table.columns.get_loc(say(views.common.metric_label("kl_mean", True), lang))]
        assert cell == f"{row['kl_mean']:.4g}{' ' if lang == 'en' else ''}{words}"
    notes = views.common.undefined_notes(view.metrics)
    assert any(n.startswith("∞: ReLU, KL (nats) is +∞ on 2 of 4 rows") for n in notes)


def test_the_grid_marks_the_infinite_rows(relu_view):
    from explorer.ui import maps_tab
    _, view = relu_view
    fig = maps_tab.render(view)
    marks = [t for t in fig.data if t.type == "scatter" and "KL = ∞" in (t.name or "")]
    assert len(marks) == 1
    assert list(marks[0].y) == [view.tokens[i] for i in INFINITE_ROWS] and set(marks[0].text) == {"∞"}
    titles = [a.text for a in fig.layout.annotations]
    assert any("ReLU" in t and "KL = ∞ on 2 rows" in t for t in titles)


def test_the_export_keeps_inf_and_nan_apart(relu_view, tmp_path):
    from explorer import export
    sample, view = relu_view
    arrays = export.view_arrays(sample, 0, 0, ["relu"], False, 16, 0)
    kl = arrays.arrays["rows.relu.kl"]
    assert np.isinf(kl[INFINITE_ROWS]).all() and (kl[INFINITE_ROWS] > 0).all()
    assert np.isfinite(kl[[0, 2]]).all() and not np.isnan(kl).any()
    table = export.metrics_csv_table(view.metrics).set_index("map")
    assert table.loc["relu", views.METRIC_INFO["kl_rows_infinite"][0]] == 2
    # Written as the tabs write their CSV files: inf stays inf, NaN stays NaN.
    path = tmp_path / "rows.csv"
    import pandas as pd
    pd.DataFrame({"kl": np.append(kl, np.nan)}).to_csv(path, index=False, na_rep="NaN")
    assert path.read_text().split() == ["kl", repr(float(kl[0])), "inf", repr(float(kl[2])), "inf", "NaN"]


def test_a_map_undefined_on_a_row_is_nan_there_not_inf():
    p = torch.softmax(torch.randn(3, 3, generator=torch.Generator().manual_seed(0)), -1)
    a = torch.tensor([[0.5, 0.5, 0.0], [float("nan")] * 3, [0.2, 0.3, 0.5]])
    out = metrics.row_metrics(p, a)["kl"]
    assert math.isinf(out[0]) and math.isnan(out[1]) and math.isfinite(out[2])
    r = metrics.compare(p, a, causal=False)
    assert (r["kl_rows_infinite"], r["kl_rows_undefined"], r["kl_rows_defined"]) == (1, 1, 1)


def test_true_median_is_the_mean_of_the_two_middle_values():
    assert rowwise.true_median([4.0, 1.0, 3.0, 2.0]) == 2.5          # torch.median gives 2
    assert float(torch.tensor([4.0, 1.0, 3.0, 2.0]).median()) == 2.0
    assert rowwise.true_median([1.0, math.nan, 3.0]) == 2.0
    assert rowwise.true_median([1.0, math.inf, math.inf]) == math.inf
    assert math.isnan(rowwise.true_median([]))


# --- causal means: one rule ------------------------------------------------------------

def test_causal_means_leave_out_the_single_key_row():
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(7, 4, generator=gen) for _ in range(3))
    from explorer.diagnostics import attention
    from explorer import maps as fm
    a = attention.softmax_map(q, k, causal=True)
    ahat = attention.kernel_map(q, k, fm.create("elu1", 4), causal=True)
    rows = metrics.row_metrics(a, ahat, causal=True)
    assert float(rows["kl"][0]) == 0.0                   # row 0: one key, every map is exact there
    for compare in (metrics.compare, metrics.compare_plain):
        r = compare(a, ahat, v, causal=True)
        assert r["total_rows"] == 6
        assert r["kl_mean"] == pytest.approx(float(rows["kl"][1:].mean()), rel=1e-9)
        assert r["entropy_approx"] == pytest.approx(float(rows["entropy"][1:].mean()), rel=1e-9)
    assert rowwise.rows_in_means(7, True).tolist() == [False] + [True] * 6
    assert rowwise.rows_in_means(7, False).all()


def test_the_maps_tab_says_which_rows_a_causal_mean_is_over():
    from explorer.text import say
    from explorer.ui import maps_tab
    sample = views.load_sample("random", preset="gaussian", n=16, d=8)
    for lang in ("en", "zh"):
        view = views.maps_view(sample, 0, 0, ["softmax", "elu1"], True, 16, 0)
        assert say("common.causal_rows_note", lang) in maps_tab.notices_with_undefined(view, lang)
        assert not any(say("common.causal_rows_note", lang) in say(n, lang) for n in view.notices)  # no pop-up each draw
        plain = views.maps_view(sample, 0, 0, ["softmax", "elu1"], False, 16, 0)
        assert say("common.causal_rows_note", lang) not in maps_tab.notices_with_undefined(plain, lang)


def test_the_maps_tab_says_when_the_model_read_unk():
    sample = views.load_sample("text", text="注意力机制把每个词和其他词联系起来")
    count, total = views.common.unk_count(sample)
    assert count > total / 2
    view = views.maps_view(sample, 0, 0, ["softmax", "elu1"], False, 16, 0)
    say = __import__("explorer.text", fromlist=["say"]).say
    assert say(view.notices[0], "zh") == say("maps.unk", "zh", count=count, total=total)
    english = views.maps_view(views.load_sample("text", text="The cat sat on the mat."), 0, 0, ["softmax"], False)
    assert not any("[UNK]" in n for n in english.notices)


# --- the lecture reads the same rule ------------------------------------------------------

@pytest.fixture(scope="module")
def chapter6():
    """Chapter 6 on the Chinese sentence: on SmolLM2's layer 3 (or MiniLM's where SmolLM2 is
    absent) identity and Taylor-1 give negative weights on most of its rows."""
    from explorer.lecture import view as lecture
    return lecture.chapter_view(6, lang="zh")


def test_the_pareto_plane_gives_no_point_to_a_map_undefined_on_most_rows(chapter6):
    from helpers.lecture import said_chapter_figures
    from explorer.lecture import text as lecture_text
    points = {p["label"]: p for p in chapter6.data["points"]}
    mostly = [label for label, p in points.items() if 2 * p["undefined_rows"] > p["rows"]]
    # Identity and Taylor-1 give negative weights on most rows of a real head.
    assert {"identity", "taylor1"} <= set(mostly)
    for label in mostly:
        assert points[label]["mostly_undefined"] and math.isnan(points[label]["median_kl"])
        i = chapter6.data["points"].index(points[label])
        assert i not in chapter6.data["frontier"]
    for lang in ("en", "zh"):
        fig = said_chapter_figures(chapter6, lang)[0]
        drawn = {t.name for t in fig.data if t.mode == "markers"}
        note = re.sub(r"\s+|<br>", "", fig.layout.title.subtitle.text or "")
        for label in mostly:
            name = lecture_text.map_words(label, lang)
            assert not any(d.startswith(name + " (m") for d in drawn)
            p = points[label]
            said = lecture_text.t("note.kl_no_point", lang, map=name, count=p["undefined_rows"], rows=p["rows"])
            assert re.sub(r"\s+", "", said) in note
        notices = chapter6.notices_in(lang)
        for label in mostly:
            if points[label]["undefined_rows"] < points[label]["rows"]:
                p = points[label]
                assert lecture_text.t("notice.undefined_kl_most", lang, map=lecture_text.map_words(label, lang),
                                      count=p["undefined_rows"], rows=p["rows"]) in notices


def test_a_median_is_true_and_counts_infinite_rows():
    from explorer import maps as feature_maps
    from explorer.lecture.ch6_tradeoff import maths as tradeoff
    q = torch.tensor(Q)[None]
    k = torch.tensor(K)[None]
    got = tradeoff.layer_quality(q, k, feature_maps.create("relu", 2))
    want = _independent_kl_rows(Q, K)                  # two finite rows, two infinite: median inf
    assert got["infinite_rows"] == 2 and got["undefined_rows"] == 0 and got["median_kl"] == math.inf
    assert got["mean_kl"] == pytest.approx(np.mean([x for x in want if math.isfinite(x)]), rel=1e-5)
    elu = tradeoff.layer_quality(q, k, feature_maps.create("elu1", 2))
    from explorer.diagnostics import attention
    a = attention.softmax_map(q, k).double()
    b = attention.kernel_map(q, k, feature_maps.create("elu1", 2)).double()
    rows = np.sort((a * (a.log() - b.log())).sum(-1).numpy().ravel())
    assert elu["median_kl"] == pytest.approx((rows[1] + rows[2]) / 2)    # of 4 rows: the mean of the middle two


def test_chapter_5s_causal_summaries_leave_out_row_0():
    from explorer import maps as feature_maps
    from explorer.lecture.ch5_closing_the_gap import maths as closing
    gen = torch.Generator().manual_seed(9)
    q, k = torch.randn(1, 9, 4, generator=gen), torch.randn(1, 9, 4, generator=gen)
    got = closing.row_kl_by_map(q, k, {"elu1": feature_maps.create("elu1", 4)}, causal=True)["elu1"]
    rows = got["kl"].ravel()
    assert rows[0] == 0.0 and rows.size == 9
    assert got["mean"] == pytest.approx(float(rows[1:].mean()), rel=1e-12)
    assert got["median"] == pytest.approx(float(np.median(rows[1:])), rel=1e-12)


def test_the_pareto_slide_draws_its_claim_not_a_notice(chapter6):
    """On the slide (presentation style): no frontier line or legend entry for a frontier of
    one map, KL on a log axis (the close maps sat on each other at the foot of a linear one),
    and a subtitle that says how many maps are drawn, not why one is not (the notes say it)."""
    from helpers.lecture import said_chapter_figures
    from explorer.lecture import text as lecture_text
    points = chapter6.data["points"]
    front = chapter6.data["frontier"]
    drawn = [p for p in points if math.isfinite(p["median_kl"]) and p["median_kl"] > 0]
    for lang in ("en", "zh"):
        fig = said_chapter_figures(chapter6, lang, style=True)[0]
        lines = [t for t in fig.data if t.mode == "lines"]
        assert len(lines) == (1 if len(front) >= 2 else 0)
        assert fig.layout.yaxis.type == "log"
        note = re.sub(r"\s+|<br>", "", fig.layout.title.subtitle.text or "")
        for p in points:
            if p["mostly_undefined"]:
                assert re.sub(r"\s+", "", lecture_text.t("note.kl_no_point", lang, map=lecture_text.map_words(
                    p["label"], lang), count=p["undefined_rows"], rows=p["rows"])) not in note
        if len(drawn) < len(points):
            assert re.sub(r"\s+", "", lecture_text.t("ch6.b0.note_drawn", lang, drawn=len(drawn),
                                                     maps=len(points))) in note
