"""The request cost model: feature counts equal the engine's, byte estimates are not below
measured peaks (nor far above), and a request over the limit is refused before it allocates
(defect 1 of the hardening issue: Taylor-2 at d = 1024 took 17.9 GB; d had no maximum)."""

from __future__ import annotations

import os
import pytest
import torch

from explorer.measure import bench, cost
from explorer import catalog, maps as feature_maps, sources, views


def _can_measure_peaks() -> bool:
    # bench resets the peak through this file; the same check as tests/engine/test_bench.py.
    return os.access("/proc/self/clear_refs", os.W_OK)


needs_peaks = pytest.mark.skipif(not _can_measure_peaks(), reason="needs Linux /proc/self/clear_refs")


@pytest.mark.parametrize("d", [1, 7, 32, 64])
@pytest.mark.parametrize("m", [None, 6, 31])
def test_feature_count_is_the_engines(d, m):
    for name, facts in catalog.FEATURE_MAPS.items():
        if not facts.takes_m and m is not None:
            continue
        if facts.even_m and m is not None and m % 2:
            # The engine refuses an odd m for paired maps; the views round it up first.
            assert cost.feature_count(name, d, m) == m + 1
            continue
        fmap = feature_maps.create(name, d, num_features=m if facts.takes_m else None)
        assert cost.feature_count(name, d, m) == fmap.num_features, name
    for map_id, choice in catalog.map_specs().items():      # a catalogue id counts as its map does
        if choice.trained:
            continue
        facts = catalog.FEATURE_MAPS[choice.name]
        m_used = m if facts.takes_m else None
        assert cost.feature_count(map_id, d, m_used) == cost.feature_count(choice.name, d, m_used), map_id


def test_the_issues_requests_are_over_the_limit():
    # N = 2048, d = 1024, Taylor-2: 525,825 features; measured peak 17.9 GB on the old code.
    big = cost.estimate("maps", n=2048, d=1024, maps=["softmax", "taylor2"])
    assert big.bytes > 17.9e9 and big.bytes > cost.LIMIT_BYTES
    with pytest.raises(ValueError, match=r"Taylor-2 at N = 2,048, d = 1,024 .* needs about .* GB .*limit .*lower d or N"):
        cost.check(big)
    # /quality at N = 440, d = 1024: its shape panel computes Taylor-2 (about 4.2 GB).
    assert not cost.fits(cost.estimate("maps", n=440, d=1024, maps=["taylor2"]))
    # The default views stay well inside it.
    assert cost.fits(cost.estimate("maps", n=128, d=32, maps=list(catalog.DEFAULT_MAPS), m=64))
    assert cost.fits(cost.estimate("maps", n=2048, d=32, maps=list(catalog.DEFAULT_MAPS), m=64))


def test_d_is_bounded_in_the_engine():
    with pytest.raises(ValueError, match="d: at most 1024"):
        views.load_sample("random", n=2048, d=2048)
    with pytest.raises(ValueError, match="head dimension d = 2048 is over the cap"):
        sources.from_arrays(torch.zeros(2, 2048), torch.zeros(2, 2048))


@needs_peaks
@pytest.mark.parametrize("label,n,d,m", [("elu1", 512, 32, 64), ("taylor2", 256, 128, 64),
                                         ("favor_plus_iid", 512, 32, 512), ("softmax", 768, 32, 64)])
def test_estimate_covers_the_measured_peak(label, n, d, m):
    sample = sources.from_random(n, d, seed=0)
    views.clear_caches()
    _, peak = bench.measure_peak_bytes(lambda: views.maps_view(sample, 0, 0, [label], False, m, 0))
    estimate = cost.estimate("maps", n=n, d=d, maps=[label], m=m).bytes
    assert peak <= estimate <= 4 * peak + (32 << 20), (peak, estimate)


@needs_peaks
def test_maps_view_refuses_an_over_limit_map_before_allocating(monkeypatch):
    """Taylor-2 at N = 512, d = 256 has 33,153 features (~270 MB to compute): under a 100 MB
    limit it is left out with a sentence that says why, and the view's peak stays small."""
    monkeypatch.setattr(cost, "LIMIT_BYTES", 100_000_000)
    sample = sources.from_random(512, 256, seed=0)
    views.clear_caches()
    view, peak = bench.measure_peak_bytes(
        lambda: views.maps_view(sample, 0, 0, ["softmax", "taylor2", "elu1"], False, 64, 0))
    assert [row["map"] for row in view.metrics] == ["softmax", "elu1"]
    refusal = [x for x in view.notices if x.startswith("Taylor-2: not shown")]
    assert refusal and "the limit on this server is 100 MB: lower d or N" in refusal[0]
    assert peak < 100_000_000, peak


def test_quality_shape_panel_leaves_out_what_does_not_fit(monkeypatch):
    monkeypatch.setattr(cost, "LIMIT_BYTES", 60_000_000)
    sample = sources.from_random(96, 160, seed=0)      # Taylor-2: 12,881 features x 96 x 4 bytes x 5 copies
    view = views.quality_view(sample, 0, 0, ["favor_plus_iid"], (4, 8), 2, False, 8)
    shown = {row["map"] for row in view.shape_rows}
    assert "elu1" in shown and "taylor2" in shown      # 96 tokens still fit
    monkeypatch.setattr(cost, "LIMIT_BYTES", 35_000_000)
    views.clear_caches()                                  # a cached map costs nothing: recompute
    view = views.quality_view(sample, 0, 0, ["favor_plus_iid"], (4, 8), 2, False, 8)
    shown = {row["map"] for row in view.shape_rows}
    assert "elu1" in shown and "taylor2" not in shown
    assert any(x.startswith("Taylor-2: not shown") and "limit" in x for x in view.notices)


def test_head_overview_and_state_refuse_with_the_limit_in_words(monkeypatch):
    monkeypatch.setattr(cost, "LIMIT_BYTES", 20_000_000)
    sample = sources.from_random(256, 128, seed=0, heads=4)
    with pytest.raises(ValueError, match=r"needs about .* the limit on this server is 20.0 MB: lower"):
        views.head_overview(sample, "taylor2")
    with pytest.raises(ValueError, match=r"recurrent state of Taylor-2 .* the limit on this server is 20.0 MB"):
        views.state_view(sample, 0, 0, "taylor2")
