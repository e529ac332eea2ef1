"""Figure builders draw the engine's numbers, labelled, without merging duplicate tokens."""

from __future__ import annotations

import numpy as np
import pytest

from explorer import figures, views


@pytest.fixture(scope="module")
def random_sample():
    return views.load_sample("random", preset="clustered", n=24, d=16, data_seed=3)


@pytest.fixture(scope="module")
def maps_view(random_sample):
    return views.maps_view(random_sample, 0, 0, ["softmax", "elu1", "favor_plus_iid", "identity"], False, 32, 1)


def heatmaps(fig):
    return [t for t in fig.data if t.type == "heatmap"]


def test_attention_grid_holds_engine_numbers(maps_view):
    fig = figures.attention_grid(maps_view.tokens, maps_view.maps, maps_view.errors,
                                 ill_defined=maps_view.ill_defined, title="sample · layer 0, head 0")
    assert fig.layout.title.text == "sample · layer 0, head 0"                  # the figure's, not a panel's
    by_name = {t.name: t for t in heatmaps(fig)}
    for label, z in maps_view.maps.items():
        trace = by_name[label]
        np.testing.assert_array_equal(np.asarray(trace.z), z)
        # hover data: the exact softmax weight and the difference, cell by cell
        np.testing.assert_array_equal(np.asarray(trace.customdata)[..., 0], maps_view.maps["softmax"])
        if label != "softmax":
            np.testing.assert_array_equal(np.asarray(trace.customdata)[..., 1], maps_view.errors[label])
            np.testing.assert_array_equal(np.asarray(by_name[f"{label} − softmax"].z), maps_view.errors[label])
    assert "softmax − softmax" not in by_name


def test_engine_maps_are_the_attention_maps(random_sample, maps_view):
    from explorer.diagnostics import attention
    q, k, _ = random_sample.head(0, 0)
    np.testing.assert_allclose(maps_view.maps["softmax"], attention.softmax_map(q, k).numpy(), rtol=1e-6, atol=1e-7)
    assert maps_view.errors["elu1"] == pytest.approx(maps_view.maps["elu1"] - maps_view.maps["softmax"])


def test_attention_grid_is_labelled(maps_view):
    fig = figures.attention_grid(maps_view.tokens, maps_view.maps, maps_view.errors)
    layout = fig.layout
    assert layout.coloraxis.colorbar.title.text and layout.coloraxis2.colorbar.title.text
    assert layout.coloraxis2.cmid == 0                              # diverging, centred on zero
    used_x = {"xaxis" + (t.xaxis or "x")[1:] for t in heatmaps(fig)}
    used_y = {"yaxis" + (t.yaxis or "y")[1:] for t in heatmaps(fig)}
    x_titles = {layout[a].title.text for a in used_x}
    y_titles = {layout[a].title.text for a in used_y}
    assert x_titles == {"key"} and y_titles == {"query"}
    assert all(t.hovertemplate and "query" in t.hovertemplate for t in heatmaps(fig))


def test_duplicate_tokens_stay_separate_rows():
    tokens = ["the", "cat", "the", "mat", "the"]
    z = np.arange(25, dtype=np.float32).reshape(5, 5) / 25
    fig = figures.attention_grid(tokens, {"softmax": z, "elu1": z * 0.5}, {"elu1": -z * 0.5})
    for t in heatmaps(fig):
        assert len(set(t.y)) == 5 and len(set(t.x)) == 5
        assert len(t.z) == 5
    assert figures.unique_labels(["a", "a", "a (2)"]) != ["a", "a (2)", "a (2)"]
    assert len(set(figures.unique_labels(["a", "a", "a (2)"]))) == 3


def test_large_n_is_block_averaged_and_said_so():
    sample = views.load_sample("random", preset="gaussian", n=300, d=8)
    view = views.maps_view(sample, 0, 0, ["softmax", "elu1"], False, 8, 0, display_max=100)
    assert view.block == 3 and view.maps["softmax"].shape == (100, 100)
    full = views.maps_view(sample, 0, 0, ["softmax"], False, 8, 0, display_max=1000).maps["softmax"]
    np.testing.assert_allclose(view.maps["softmax"][0, 0], full[:3, :3].mean(), rtol=1e-5)
    assert "3×3" in view.display_note
    fig = figures.attention_grid(view.tokens, view.maps, view.errors, note=view.display_note)
    assert "3×3" in fig.layout.title.subtitle.text


def test_quality_curves_hold_engine_numbers(random_sample):
    q = views.quality_view(random_sample, 0, 0, ["favor_plus_iid", "favor_plus_orthogonal"], ms=(4, 16), seeds=3, m=16)
    fig = figures.quality_curves(q.curves)
    measured = {t.name: t for t in fig.data if t.name and t.name.endswith("(measured)")}
    for cur in q.curves:
        means = [t for t in fig.data if t.name == f"{cur.map_id} (measured)"]
        np.testing.assert_allclose(means[0].y, np.nanmean(cur.kernel_mse, axis=1))
        np.testing.assert_allclose(means[1].y, np.nanmean(cur.map_error, axis=1))
        assert list(means[0].x) == cur.ms
    theory = [t for t in fig.data if t.name == "favor_plus_iid (theory, IID)"][0]
    np.testing.assert_allclose(theory.y, q.curves[0].theory)
    assert not [t for t in fig.data if t.name == "favor_plus_orthogonal (theory, IID)"]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    flops = figures.quality_curves(q.curves, x="flops")
    assert list([t for t in flops.data if t.name == "favor_plus_iid (measured)"][0].x) == q.curves[0].flops
    assert "FLOPs" in flops.layout.xaxis.title.text
    assert len(measured) == 2


def test_head_overview_holds_engine_numbers():
    sample = views.load_sample("random", preset="gaussian", n=16, d=8, heads=1)
    values = np.arange(12, dtype=float).reshape(3, 4)
    values[1, 2] = np.nan
    fig = figures.head_overview(values, ["l0", "l1", "l2"], "Map error (relative)", "elu1")
    np.testing.assert_array_equal(fig.data[0].z, values)
    assert fig.data[0].colorbar.title.text
    assert fig.layout.xaxis.title.text == "head" and fig.layout.yaxis.title.text == "layer"
    assert sample.n_heads == 1


def test_metric_bars_hold_engine_numbers(maps_view):
    fig = figures.metric_bars(maps_view.metrics)
    ent, mono = fig.data[0], fig.data[1]
    assert list(ent.x) == [r["map"] for r in maps_view.metrics]
    from explorer.measure.showing import mostly_undefined
    assert list(ent.y) == [None if mostly_undefined(r, "entropy_approx") else r["entropy_approx"]
                           for r in maps_view.metrics]
    assert list(mono.y) == [None if mostly_undefined(r, "monotonicity") else r["monotonicity"]
                            for r in maps_view.metrics]


def test_state_figures_hold_engine_numbers(random_sample):
    sv = views.state_view(random_sample, 0, 0, "elu1", 16, 0, 0.9, 1.0, t=5, kind="retnet", lags=(0, 2, 8))
    step = figures.state_step(sv.step["update"], sv.step["state"], sv.step["t"], sv.step["token"], sv.step["kind"])
    np.testing.assert_array_equal(step.data[0].z, sv.step["update"])
    np.testing.assert_array_equal(step.data[1].z, sv.step["state"])
    assert step.layout.coloraxis.colorbar.title.text and step.layout.coloraxis2.colorbar.title.text
    curves = figures.state_curves(sv.ts, sv.traces, sv.recall, t_marker=5)
    norms = [t for t in curves.data if t.name == "RetNet γ"][0]
    np.testing.assert_allclose(norms.y, sv.traces["RetNet γ"]["state_norm"])
    mem = figures.memory_growth(sv.mem_ts, sv.kv_bytes, sv.state_bytes)
    np.testing.assert_allclose(mem.data[0].y, np.asarray(sv.kv_bytes) / 1024)
    assert mem.layout.yaxis.title.text and mem.layout.xaxis.title.text


def test_state_step_matches_full_trace(random_sample):
    """Stepping only up to t gives the state the full run has at t."""
    from explorer.diagnostics import state
    sv = views.state_view(random_sample, 0, 0, "cosformer", 16, 0, 0.9, 1.0, t=7, kind="gla", lags=(0, 2))
    k, v = random_sample.k[0, 0], random_sample.v[0, 0]
    fmap, _ = views.make_feature_map("cosformer", k.shape[-1], 16, 0)
    decay = state.decay_preset("gla", k.shape[0], fmap.num_features, strength=1.0, seed=0)
    full = state.state_trace(k, v, fmap, decay, keep_states=True)
    np.testing.assert_allclose(sv.step["state"], full.states[7].numpy(), rtol=1e-5, atol=1e-6)


def test_complexity_figure_holds_engine_numbers():
    rows = [
        {"method": "sdpa", "n": 128, "time_ms": 1.0, "peak_mem_bytes": 2**20, "skipped": None},
        {"method": "sdpa", "n": 256, "time_ms": 4.0, "peak_mem_bytes": 4 * 2**20, "skipped": None},
        {"method": "linear_chunked", "n": 128, "time_ms": 2.0, "peak_mem_bytes": None, "skipped": None},
        {"method": "linear_chunked", "n": 256, "time_ms": 3.0, "peak_mem_bytes": None, "skipped": None},
        {"method": "softmax_naive", "n": 256, "time_ms": None, "peak_mem_bytes": None, "skipped": "memory"},
    ]
    fig = figures.complexity(rows, {"sdpa": "SDPA", "linear_chunked": "chunked"}, slopes={"sdpa": 2.0},
                             crossover=200.0, crossover_text="chunked overtakes SDPA at N ~ 200")
    sdpa = [t for t in fig.data if t.name and t.name.startswith("SDPA")]
    assert list(sdpa[0].y) == [1.0, 4.0] and "slope 2.00" in sdpa[0].name
    assert list(sdpa[1].y) == [1.0, 4.0]                    # MiB
    assert any("N ≈ 200" in (a.text or "") for a in fig.layout.annotations)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.title.text


def test_flop_claim_is_the_cost_model():
    from explorer.measure import cost
    c = cost.flop_counts(100_000, 128)
    fig = figures.flop_claim(100_000, 128, c["quadratic_flops"], c["linear_flops"])
    assert list(fig.data[0].y) == [c["quadratic_flops"], c["linear_flops"]]
    assert "775×" in fig.layout.title.text


def test_presentation_style_is_larger_and_colour_blind_safe(maps_view):
    small = figures.metric_bars(maps_view.metrics, style=False)
    big = figures.metric_bars(maps_view.metrics, style=True)
    assert big.layout.font.size >= 1.5 * small.layout.font.size
    assert figures.Style(True).palette == figures.OKABE_ITO
    grid = figures.attention_grid(maps_view.tokens, maps_view.maps, maps_view.errors, style=True)
    assert grid.layout.coloraxis.colorscale[0][1] != figures.attention_grid(
        maps_view.tokens, maps_view.maps, maps_view.errors).layout.coloraxis.colorscale[0][1]


def test_norms_panel_holds_engine_numbers_and_says_the_m_needed():
    from explorer.maps import rf_theory
    sample = views.load_sample("random", preset="gaussian", n=20, d=8, data_seed=1)
    q, k = sample.q[0, 0], sample.k[0, 0]
    norms = rf_theory.favor_norms(q, k)
    need = rf_theory.favor_required_features(q, k, 0.1)
    fig = figures.favor_norms(norms, need, title="head")
    hist = {t.name: t for t in fig.data}
    np.testing.assert_array_equal(hist["‖q′‖ (queries)"].x, norms["q_norms"])
    np.testing.assert_array_equal(hist["‖k′‖ (keys)"].x, norms["k_norms"])
    assert figures.quality.sci(need["m_required"]) in fig.layout.title.text
    assert "10%" in fig.layout.title.text and "exp(|q′+k′|²)" in fig.layout.title.subtitle.text
    assert figures.quality.sci(1070.0) == "1.1 × 10³" and figures.quality.sci(35.2) == "35.2"
    assert figures.quality.sci(float("inf")) == "∞" and figures.quality.sci(9.96e8) == "1.0 × 10⁹"


def test_quality_curves_mark_the_m_the_formula_asks_for(random_sample):
    q = views.quality_view(random_sample, 0, 0, ["favor_plus_iid"], ms=(4, 16), seeds=2, m=16)
    inside = dict(q.favor_need, m_required=8.0)
    fig = figures.quality_curves(q.curves, favor_need=inside)
    assert [s for s in fig.layout.shapes if s.x0 == 8.0]                       # a marker at m = 8
    assert any("m ≈ 8" in (a.text or "") for a in fig.layout.annotations)
    beyond = dict(q.favor_need, m_required=3.0e9)
    fig = figures.quality_curves(q.curves, favor_need=beyond)
    assert "3.0 × 10⁹" in fig.layout.title.subtitle.text and not fig.layout.shapes


def test_a_map_with_negative_weights_gets_its_own_scale_and_softmax_stays_readable():
    """Issue 10, point 2: identity (q·k) on a 'needle' sample runs far below zero and, on one
    shared scale, turned softmax and every positive map into one flat colour."""
    sample = views.load_sample("random", preset="needle", n=32, d=16, data_seed=0)
    view = views.maps_view(sample, 0, 0, ["softmax", "elu1", "identity", "taylor2"], True, 16, 0)
    assert view.maps["identity"].min() < -1                     # the case of the issue
    fig = figures.attention_grid(view.tokens, view.maps, view.errors, ill_defined=view.ill_defined)
    by_name = {t.name: t for t in heatmaps(fig)}
    shared = fig.layout.coloraxis
    positive = np.concatenate([np.asarray(view.maps[n]).ravel() for n in ("softmax", "elu1", "taylor2")])
    assert shared.cmin == 0 and shared.cmax <= np.nanmax(positive) + 1e-6
    assert np.nanmax(view.maps["softmax"]) >= 0.5 * shared.cmax         # softmax spans the scale
    for name in ("softmax", "elu1", "taylor2"):
        assert by_name[name].coloraxis == "coloraxis"
    ident = by_name["identity"]
    own = fig.layout[ident.coloraxis]
    assert ident.coloraxis not in ("coloraxis", "coloraxis2") and own.cmid == 0 and own.cmin < 0 < own.cmax
    assert own.cmax == pytest.approx(np.percentile(np.abs(view.maps["identity"]), 99.9), rel=1e-6)
    err = by_name["identity − softmax"]
    assert err.coloraxis not in ("coloraxis", "coloraxis2", ident.coloraxis)
    errs = np.abs(np.concatenate([view.errors[n].ravel() for n in ("elu1", "taylor2")]))
    assert fig.layout.coloraxis2.cmax <= errs.max() + 1e-6            # the others' errors keep their scale
    titles = [a.text for a in fig.layout.annotations]
    assert any(t.startswith("identity") and "own scale ±" in t for t in titles)
    assert not any(t.startswith("elu1") and "own scale" in t for t in titles)


def test_a_value_defined_on_few_rows_is_no_bar_and_says_why():
    """Issue 10, point 3: 'needle', causal, identity had KL and entropy 0 from 1 row of 128."""
    sample = views.load_sample("random", preset="needle", n=128, d=32)
    view = views.maps_view(sample, 0, 0, ["softmax", "identity", "elu1"], True, 16, 0)
    row = {r["map"]: r for r in view.metrics}["identity"]
    # The one row that had a value was the causal row 0 (a single key: entropy 0 for any map);
    # causal means now leave it out, so the identity map has no entropy on any of the 127 rows.
    assert row["entropy_approx"] is None and row["entropy_approx_rows_undefined"] == 127
    fig = figures.metric_bars(view.metrics)
    assert fig.data[0].y[1] is None and fig.data[0].y[2] == pytest.approx(row_of(view, "elu1")["entropy_approx"])
    na = [t for t in fig.data if t.type == "scatter" and t.mode == "text"][0]
    assert list(na.x) == ["identity"] and "127 of 127" in na.hovertext[0]


def row_of(view, name):
    return {r["map"]: r for r in view.metrics}[name]
