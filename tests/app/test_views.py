"""explorer.views: what each tab shows, assembled from the engine (no gradio here)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.diagnostics import attention
from explorer import maps as feature_maps, views


def test_map_catalogue_follows_the_registry():
    labels = views.map_choices()
    assert labels[0] == "softmax"
    assert {"favor_plus_iid", "favor_plus_orthogonal", "elu1", "taylor2", "cosformer"} <= set(labels)
    names = {spec.name for spec in views.map_specs().values()}
    assert names == set(feature_maps.names())           # every registered map (tests/engine/test_catalog.py: their facts)
    assert views.default_maps() == list(views.DEFAULT_MAPS)


def test_fixed_size_maps_do_not_get_m():
    fmap, notes = views.make_feature_map("taylor2", 8, 64, 0)
    assert fmap.num_features == 1 + 8 + 36 and not notes
    fmap, notes = views.make_feature_map("trig_rff_iid", 8, 33, 0)
    assert fmap.num_features == 34 and notes                 # rounded to an even count, and said so
    assert views.make_feature_map("favor_plus_orthogonal", 8, 24, 0)[0].orthogonal
    assert not views.make_feature_map("favor_plus_iid", 8, 24, 0)[0].orthogonal


def test_maps_view_mean_over_heads():
    sample = views.load_sample("random", preset="gaussian", n=12, d=8, heads=3)
    view = views.maps_view(sample, 0, "mean", ["softmax", "elu1"], False, 8, 0)
    q, k = sample.q[0], sample.k[0]
    np.testing.assert_allclose(view.maps["softmax"], attention.softmax_map(q, k).mean(0).numpy(), rtol=1e-5, atol=1e-7)
    assert view.params["head"] == "mean"


def test_maps_view_reports_ill_defined_rows_and_bad_maps():
    sample = views.load_sample("random", preset="gaussian", n=32, d=8)
    view = views.maps_view(sample, 0, 0, ["softmax", "identity", "no such map"], False, 8, 0)
    assert "identity" in view.maps
    assert any("no such map" in n for n in view.notices)
    rows = {r["map"]: r for r in view.metrics}
    assert rows["identity"]["ill_defined_rows"] == view.ill_defined["identity"]


def test_text_sample_matches_model_attention():
    sample = views.load_sample("text", text="The cat sat on the mat because the cat was tired.")
    view = views.maps_view(sample, 1, 4, ["softmax", "elu1"], False, 8, 0)
    assert view.model_check is not None and view.model_check < 1e-4
    assert len(view.tokens) == len(set(view.tokens)) == sample.n_tokens


def test_load_sample_errors_are_clear():
    with pytest.raises(ValueError, match="empty"):
        views.load_sample("text", text="  ")
    with pytest.raises(ValueError, match="no file"):
        views.load_sample("file", path=None)
    with pytest.raises(ValueError, match="whole number"):
        views.load_sample("random", n="many")


def test_theory_matches_measurement_for_iid_features():
    """The IID variance formulas, checked by Monte Carlo where the tails are tame."""
    gen = torch.Generator().manual_seed(0)
    q = 0.3 * torch.randn(6, 8, generator=gen)
    k = 0.3 * torch.randn(6, 8, generator=gen)
    for label, name in (("favor_plus_iid", "favor_plus"), ("trig_rff_iid", "trig_rff")):
        measured = np.mean([views.kernel_estimate_mse(q, k, views.make_feature_map(label, 8, 16, s)[0])
                            for s in range(400)])
        theory = views.theory_relative_mse(q, k, name, 16)
        assert measured == pytest.approx(theory, rel=0.2), label
    assert views.theory_relative_mse(q, k, "elu1", 16) is None


def test_quality_view_shapes_and_guard():
    sample = views.load_sample("random", preset="gaussian", n=16, d=8)
    qv = views.quality_view(sample, 0, 0, None, ms=(4, 8), seeds=10, m=8)
    assert {c.map_id for c in qv.curves} == set(views.random_map_ids())
    assert all(c.kernel_mse.shape == (2, 10) for c in qv.curves)
    assert [r["map"] for r in qv.shape_rows][0] == "softmax"
    with pytest.raises(ValueError, match="random-feature"):
        views.quality_view(sample, 0, 0, ["elu1"], seeds=10)
    big = views.load_sample("random", preset="gaussian", n=2048, d=8)
    with pytest.raises(ValueError, match="too much work"):
        views.quality_view(big, 0, 0, None, seeds=50)
    huge = views.load_sample("random", preset="gaussian", n=4096, d=8)
    with pytest.raises(ValueError, match="cap"):
        views.quality_view(huge, 0, 0, None, seeds=1)


def test_head_overview_every_head():
    sample = views.load_sample("random", preset="gaussian", n=16, d=8, heads=4)
    ov = views.head_overview(sample, "elu1", "kl_mean")
    assert ov.values.shape == (1, 4) and np.isfinite(ov.values).all()
    with pytest.raises(ValueError, match="metric"):
        views.head_overview(sample, "elu1", "nope")


def test_state_view_memory_and_kinds():
    sample = views.load_sample("random", preset="local", n=20, d=8)
    sv = views.state_view(sample, 0, 0, "elu1", 8, 0, 0.9, 2.0, t=3, kind="gla", lags=(0, 4))
    from explorer import mechanisms
    from explorer.text import say
    assert set(sv.traces) == {say(f"state.kind.{kind}") for kind in mechanisms.state_kinds()}
    assert {"no decay", "RetNet γ", "GLA gates", "HGRN2 gates", "DeltaNet", "Gated DeltaNet"} <= set(sv.traces)
    assert sv.kv_bytes[19] == 20 * 16 * 4 and sv.state_bytes == (8 * 8 + 8) * 4 and len(sv.mem_ts) == 2048
    # Without decay the state only grows; with RetNet's gamma it stays smaller.
    none, retnet = sv.traces["no decay"]["normaliser_norm"], sv.traces["RetNet γ"]["normaliser_norm"]
    assert np.all(np.diff(none) > 0) and retnet[-1] < none[-1]
    with pytest.raises(ValueError, match="softmax"):
        views.state_view(sample, 0, 0, "softmax")


def test_sweep_guards():
    assert views.sweep_lengths(256, 4096, 5) == [256, 512, 1024, 2048, 4096]
    with pytest.raises(ValueError, match="at most"):
        views.sweep_lengths(256, views.N_CAP * 2, 3)
    with pytest.raises(ValueError, match="memory"):
        views.plan_sweep([131072], 64, 64, ["softmax_naive"], 1 << 30)
    notes = views.plan_sweep([1024, 131072], 64, 64, ["softmax_naive", "linear_chunked"], 1 << 30)
    assert len(notes) == 1 and "131,072" in notes[0]


@pytest.mark.slow
def test_complexity_view_small():
    cv = views.complexity_view(64, 128, 2, 16, None, True, "elu1", ["sdpa", "linear_parallel", "linear_chunked"],
                               repeats=1)
    assert {r["method"] for r in cv.rows} == {"sdpa", "linear_parallel", "linear_chunked"}
    assert cv.claim["ratio"] == pytest.approx(775.19, rel=1e-3)
    assert cv.claim["measured"]["n"] == 128
    assert set(cv.theory) == {"sdpa", "linear_parallel", "linear_chunked"}
    assert math.isfinite(cv.slopes["sdpa"])


def test_per_map_cache_gives_the_same_view():
    sample = views.load_sample("random", preset="clustered", n=40, d=8, data_seed=11)
    first = views.maps_view(sample, 0, 0, ["softmax", "elu1"], False, 8, 0)
    more = views.maps_view(sample, 0, 0, ["softmax", "elu1", "favor_plus_iid"], False, 8, 0)  # elu+1 from cache
    views.clear_caches()
    cold = views.maps_view(sample, 0, 0, ["softmax", "elu1", "favor_plus_iid"], False, 8, 0)
    assert more.metrics == cold.metrics and first.metrics == cold.metrics[:2]
    for label in cold.maps:
        np.testing.assert_array_equal(more.maps[label], cold.maps[label])
    other_seed = views.maps_view(sample, 0, 0, ["softmax", "favor_plus_iid"], False, 8, 1)   # m, seed are keys
    assert other_seed.metrics[1] != cold.metrics[2]


def test_size_guards():
    big = views.load_sample("random", preset="gaussian", n=4096, d=32)
    with pytest.raises(ValueError, match="cap"):
        views.maps_view(big, 0, 0, ["softmax"], False, 8, 0)
    with pytest.raises(ValueError, match="cap"):
        views.state_view(big, 0, 0, "taylor2")
    many = views.load_sample("random", preset="gaussian", n=1024, d=8, heads=32)
    with pytest.raises(ValueError, match="cap"):
        views.head_overview(many, "elu1", "map_rel_error")


def test_sliding_window_width_reaches_the_maps_view():
    sample = views.load_sample("random", preset="local", n=20, d=8)
    wide = views.maps_view(sample, 0, 0, ["softmax", "sliding_window"], True, 8, 0, window=20)
    np.testing.assert_allclose(wide.maps["sliding_window"], wide.maps["softmax"], rtol=1e-5, atol=1e-6)
    none = views.maps_view(sample, 0, 0, ["sliding_window"], True, 8, 0, window=0)
    taylor = views.maps_view(sample, 0, 0, ["taylor2"], True, 8, 0)
    np.testing.assert_allclose(none.maps["sliding_window"], taylor.maps["taylor2"], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="window"):
        views.make_feature_map("sliding_window", 8, None, 0, window=-1)


@pytest.mark.parametrize("causal", [False, True])
def test_maps_view_metrics_are_the_plain_comparison_of_the_maps(causal):
    """The numbers in the maps tab's table: every map's row equals metrics.compare_plain on the
    full-resolution maps, recomputed here from the same head."""
    from explorer.measure import metrics

    sample = views.load_sample("random", preset="clustered", n=40, d=8, data_seed=3)
    labels = ["softmax", "elu1", "identity", "favor_plus_iid"]
    view = views.maps_view(sample, 0, 0, labels, causal, 16, 2)
    q, k, v = sample.head(0, 0)
    exact = attention.softmax_map(q, k, causal=causal)
    s = attention.masked_logits(q, k, causal)
    rows = {r["map"]: r for r in view.metrics}
    assert set(rows) == set(labels)
    for label in labels:
        if label == "softmax":
            approx, flags, m = exact, None, None
        else:
            fmap, _ = views.make_feature_map(label, 8, 16, 2)
            (approx, flags), m = attention.kernel_map_with_flags(q, k, fmap, causal=causal), fmap.num_features
        want = metrics.compare_plain(exact, approx, v, s, ill_defined=flags, feature_dim=m, causal=causal, head_dim=8)
        got = {key: value for key, value in rows[label].items() if key != "map"}
        assert set(got) == set(want)
        for key, value in want.items():
            assert (got[key] is None) == (value is None), (label, key)
            if value is not None:
                assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-12), (label, key)


@pytest.mark.parametrize("label", ["favor_plus_iid", "favor_plus_orthogonal", "trig_rff_iid", "trig_rff_orthogonal"])
@pytest.mark.parametrize("shape, causal", [((1, 8), False), ((37, 8), False), ((37, 8), True), ((3, 20, 16), True),
                                           ((3, 20, 16), False)])
def test_fast_redraw_measure_equals_the_plain_one(label, shape, causal):
    """One N x N product gives the kernel MSE and the map error that the plain path (float64
    estimate, kernel_map_with_flags, full compare) gives."""
    from explorer.measure import metrics
    gen = torch.Generator().manual_seed(len(shape) * 100 + shape[-2])
    q = 0.7 * torch.randn(*shape, generator=gen)
    k = 0.7 * torch.randn(*shape, generator=gen)
    fmap = views.make_feature_map(label, shape[-1], 24, 5)[0]
    reference = metrics.Reference(attention.softmax_map(q, k, causal=causal), causal=causal)
    exact = torch.exp(attention.logits(q, k).double())
    fast = views.measure_redraw(q, k, fmap, reference, exact, float((exact * exact).mean()), causal)
    plain = views.measure_redraw_plain(q, k, fmap, causal)
    np.testing.assert_allclose(fast, plain, rtol=2e-5, atol=1e-9)


def test_quality_grid_reaches_4096_with_fewer_redraws_at_large_m():
    assert views.QUALITY_MS[-1] == 4096 and views.QUALITY_MS[0] == 4
    assert [views.seeds_at(m, 10) for m in (4, 512, 1024, 2048, 4096)] == [10, 10, 5, 3, 3]
    assert views.seeds_at(4096, 2) == 2                       # never more than asked
    sample = views.load_sample("random", preset="gaussian", n=12, d=8)
    qv = views.quality_view(sample, 0, 0, ["favor_plus_iid"], ms=(4, 2048), seeds=6, m=8)
    cur = qv.curves[0]
    assert cur.seeds_used == [6, 3]
    assert np.isfinite(cur.kernel_mse[1, :3]).all() and np.isnan(cur.kernel_mse[1, 3:]).all()
    assert "6 redraws per m up to 4, then 3 at 2048" == qv.seed_note


def test_quality_view_says_which_m_the_variance_formula_asks_for():
    from explorer.maps import rf_theory
    sample = views.load_sample("random", preset="gaussian", n=16, d=8)
    qv = views.quality_view(sample, 0, 0, ["favor_plus_iid"], ms=(4, 8), seeds=2, m=8)
    q, k = sample.q[0, 0], sample.k[0, 0]
    np.testing.assert_allclose(qv.norms["q_norms"], rf_theory.favor_norms(q, k)["q_norms"])
    assert qv.favor_need["m_required"] == pytest.approx(
        rf_theory.favor_required_features(q, k, views.REQUIRED_ERROR)["m_required"])
    assert qv.favor_need["rel_error"] == views.REQUIRED_ERROR == 0.1


def _default_text():
    from explorer.ui import source
    return source.DEFAULT_TEXT


@pytest.mark.slow
def test_state_defaults_show_decay_on_the_default_text_and_more_on_the_preset():
    from explorer import catalog
    gamma, strength = catalog.STATE_DEFAULTS["gamma"], catalog.STATE_DEFAULTS["strength"]
    for text, ratio in ((_default_text(), 1.5), (catalog.STATE_PRESET["text"], 3.0)):
        sample = views.load_sample("text", text=text)
        sv = views.state_view(sample, 2, 3, "elu1", 32, 0, gamma, strength)
        final = {kind: tr["state_norm"][-1] for kind, tr in sv.traces.items()}
        assert final["no decay"] > ratio * final["RetNet γ"], (text, final)
        assert final["no decay"] > ratio * final["GLA gates"], (text, final)
    assert catalog.STATE_PRESET["gamma"] == gamma and sample.n_tokens > 50


def test_state_view_recalls_an_early_and_a_recent_key_and_says_the_keys_are_synthetic():
    from explorer.diagnostics import state_probes
    sample = views.load_sample("random", preset="local", n=20, d=8)
    sv = views.state_view(sample, 0, 0, "elu1", 8, 0, 0.8, 2.0, lags=(1, 16, 64))
    retnet = sv.recall["RetNet γ"]
    fmap = views.make_feature_map("elu1", 8, 8, 0)[0]
    recent = state_probes.recall_probe(fmap, 8, [1, 16, 64], "retnet", gamma=0.8, strength=2.0, seed=0, position="recent")
    np.testing.assert_allclose(retnet["recent_cosine"], recent.cosine.numpy())
    # Decay forgets the early key and keeps the recent one clean.
    assert retnet["recent_cosine"][-1] > retnet["cosine"][-1] + 0.3
    assert any("synthetic" in n and "1–64" in n for n in sv.notices)


def test_state_curves_draw_both_recall_curves():
    sample = views.load_sample("random", preset="local", n=20, d=8)
    sv = views.state_view(sample, 0, 0, "elu1", 8, 0, 0.8, 2.0, lags=(1, 16, 64))
    from explorer import figures
    fig = figures.state_curves(sv.ts, sv.traces, sv.recall)
    recent = [t for t in fig.data if t.name == "RetNet γ (recent key)"]
    assert recent and list(recent[0].y) == list(sv.recall["RetNet γ"]["recent_cosine"].astype(float))
    assert recent[0].line.dash == "dash"
    assert any("synthetic" in (a.text or "") for a in fig.layout.annotations)


def test_quality_preset_converges_within_the_grid():
    """On the preset the random-feature error falls by decades along m, and the m the variance
    formula asks for lies inside the grid; on the default text it lies far beyond."""
    from explorer import catalog
    p = catalog.QUALITY_PRESET
    sample = views.load_sample(p["source"], preset=p["preset"], n=p["n"], d=p["d"], data_seed=p["data_seed"],
                               temperature=p["temperature"])
    qv = views.quality_view(sample, 0, 0, ["favor_plus_iid"], seeds=4, m=16)
    cur = qv.curves[0]
    kmse = np.nanmean(cur.kernel_mse, axis=1)
    assert cur.ms[-1] == 4096 and kmse[-1] < kmse[0] / 100
    assert cur.theory[-1] / 3 < kmse[-1] < cur.theory[-1] * 3          # on the theory line at large m
    assert qv.favor_need["m_required"] < 4096
    text = views.load_sample("text", text=_default_text())
    real = views.quality_view(text, 2, 3, ["favor_plus_iid"], ms=(4, 8), seeds=2, m=16)
    assert real.favor_need["m_required"] > 1e5


def test_metrics_table_writes_n_a_with_the_row_count_where_a_mean_is_undefined():
    """Issue 10, point 3: a KL of 0 from 1 defined row of 128 showed as 0, the count off-screen."""
    from explorer.measure import showing
    sample = views.load_sample("random", preset="needle", n=128, d=32)
    view = views.maps_view(sample, 0, 0, ["softmax", "identity", "elu1"], True, 16, 0)
    rows = {r["map"]: r for r in view.metrics}
    ident = rows["identity"]
    # The one defined row used to be the causal row 0 (a single key: KL 0 for any map), the
    # trap itself; causal means now leave that row out, so no row is left with a value.
    assert ident["total_rows"] == 127 and ident["kl_mean"] is None and ident["kl_rows_undefined"] == 127
    for short in (True, False):
        table = views.metrics_table(view.metrics, short=short).set_index("map")
        kl = table.loc["identity (q·k)", "KL (nats)" if short else views.METRIC_INFO["kl_mean"][0]]
        assert kl == "n/a (127 of 127 rows)"
    table = views.metrics_table(view.metrics, short=True).set_index("map")
    assert table.loc["elu+1", "KL (nats)"] == pytest.approx(rows["elu1"]["kl_mean"], rel=1e-3)   # all rows: a number
    rho = table.loc["identity (q·k)", "Spearman ρ"]                        # constant rows have no ρ
    count = rows["identity"]["monotonicity_rows_undefined"]
    assert count and rho.endswith(f"({count} of 127 rows n/a)")
    notes = views.common.undefined_notes(view.metrics)
    assert any("identity (q·k), KL (nats) n/a: no value on 127 of 127 rows because" in n for n in notes)
    assert showing.shown_value({"kl_mean": None, "kl_rows_undefined": 5, "total_rows": 5}, "kl_mean") == "n/a (5 of 5 rows)"


def test_maps_tab_says_why_each_cell_is_n_a():
    from explorer.ui import maps_tab
    sample = views.load_sample("random", preset="needle", n=64, d=16)
    view = views.maps_view(sample, 0, 0, ["softmax", "identity"], True, 16, 0)
    text = maps_tab.notices_with_undefined(view, "en")
    import re
    assert re.search(r"^- n/a: identity \(q·k\), KL \(nats\) n/a: no value on \d+ of 63 rows because", text, re.M)


def test_the_trained_hedgehog_is_offered_in_the_maps_grid():
    """Issue 10, point 9: the grid offered only 'Hedgehog (untrained: W = I)'."""
    from explorer.maps import learned
    from explorer.views import common
    label = "hedgehog_trained"
    assert label in views.map_choices()
    sample = views.load_sample("random", preset="clustered", n=24, d=8, heads=3, data_seed=4)
    common.set_trained_hedgehog(None)
    view = views.maps_view(sample, 0, 1, ["softmax", label], False, 8, 0)
    assert label not in view.maps and any("no Hedgehog trained yet" in n for n in view.notices)
    fmap = learned.Hedgehog(8, 16, seed=0, heads=(1, 3))
    with torch.no_grad():
        for p in fmap.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    try:
        common.set_trained_hedgehog(fmap, origin="test")
        one = views.maps_view(sample, 0, 1, ["softmax", label], False, 8, 0)
        q, k = sample.q[0, 1], sample.k[0, 1]
        expected = attention.kernel_map(q, k, fmap.select(0, 1)).detach().numpy()
        np.testing.assert_allclose(one.maps[label], expected, rtol=1e-5, atol=1e-7)
        assert not np.allclose(expected, attention.kernel_map(q, k, fmap.select(0, 0)).detach().numpy())   # its own head
        mean = views.maps_view(sample, 0, "mean", ["softmax", label], False, 8, 0)
        np.testing.assert_allclose(mean.maps[label], attention.kernel_map(sample.q[0], sample.k[0], fmap.select(0))
                                   .mean(0).detach().numpy(), rtol=1e-5, atol=1e-7)
        # A newer map replaces the cached picture of the older one.
        other = learned.Hedgehog(8, 16, seed=1, heads=(1, 3))
        common.set_trained_hedgehog(other, origin="test 2")
        again = views.maps_view(sample, 0, 1, ["softmax", label], False, 8, 0)
        np.testing.assert_allclose(again.maps[label], attention.kernel_map(q, k, other.select(0, 1)).detach().numpy(),
                                   rtol=1e-5, atol=1e-7)
        wrong_d = views.load_sample("random", preset="gaussian", n=8, d=4)
        assert any("head dimension" in n for n in views.maps_view(wrong_d, 0, 0, ["softmax", label]).notices)
    finally:
        common.set_trained_hedgehog(None)


def test_a_map_loaded_in_the_learn_tab_becomes_the_trained_hedgehog():
    from explorer.maps import learned
    from explorer.views import common, learn
    fmap = learned.Hedgehog(32, 8, seed=0, heads=(6, 12))
    try:
        learn.evaluate_map(fmap, heldout_count=1, origin="saved.pt")
        sample = views.load_sample("text", text="The cat sat on the mat.")
        view = views.maps_view(sample, 2, 5, ["softmax", "hedgehog_trained"], False, 8, 0)
        q, k = sample.q[2, 5], sample.k[2, 5]
        np.testing.assert_allclose(view.maps["hedgehog_trained"],
                                   attention.kernel_map(q, k, fmap.select(2, 5)).detach().numpy(), rtol=1e-5, atol=1e-7)
    finally:
        common.set_trained_hedgehog(None)


@pytest.mark.parametrize("shape, block", [((12, 12), 4), ((13, 10), 4), ((8, 8), 1), ((1, 1), 3)])
def test_block_mean_equals_a_plain_loop(shape, block):
    a = np.random.default_rng(0).normal(size=shape)
    a[0, 0] = np.nan                                   # a bad cell stays visible in its block
    got = views.block_mean(a, block) if block > 1 else a
    for i in range(got.shape[0]):
        for j in range(got.shape[1]):
            cell = a[i * block:(i + 1) * block, j * block:(j + 1) * block]
            np.testing.assert_allclose(got[i, j], cell.mean(), rtol=1e-12)


def test_reused_random_maps_are_the_ones_a_seed_draws():
    from explorer.views import quality
    first = quality._random_map("favor_plus_orthogonal", 8, 24, 3)
    assert quality._random_map("favor_plus_orthogonal", 8, 24, 3) is first          # reused, not redrawn
    fresh = views.make_feature_map("favor_plus_orthogonal", 8, 24, 3)[0]
    assert torch.equal(first.projection, fresh.projection)
    assert not torch.equal(quality._random_map("favor_plus_orthogonal", 8, 24, 4).projection, fresh.projection)
