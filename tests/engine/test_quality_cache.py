"""The quality tab's curves and head overview are measured once per sample and settings, in
no language: a second page, in either language, reads them back, equal to a fresh
measurement and owning its arrays; an overview of a session's trained map, or a sample kept
nowhere (a file), is measured every time."""

from __future__ import annotations

import numpy as np
import pytest

from explorer import views
from explorer.views import quality as quality_views
from helpers import counted_calls

# A session of its own: a map another test trained for no session would join the shape table.
SETTINGS = dict(layer=0, head=1, maps=["favor_plus_iid"], seeds=3, causal=False, m=8, session="a-fresh-visitor")


def _arrays(page) -> dict:
    quality, overview, _ = page
    out = {("overview",): np.array(overview.values)}
    for curve in quality.curves:
        out[(curve.map_id, "kernel")] = np.array(curve.kernel_mse)
        out[(curve.map_id, "map")] = np.array(curve.map_error)
    return out


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[key], b[key], equal_nan=True) for key in a)


@pytest.fixture
def counted(monkeypatch):
    """Calls of the two measurements, by name."""
    return counted_calls(monkeypatch, quality_views, ("_measure_quality", "_measure_overview"))


def _sample(seed=5):
    return views.load_sample("random", n=24, d=8, data_seed=seed, heads=2)


def test_a_second_page_reads_the_view_back_equal_to_a_fresh_measurement(counted):
    quality_views._VIEWS.clear()
    quality_views._OVERVIEWS.clear()
    first = quality_views.quality_page(_sample(), **SETTINGS)
    assert counted == ["_measure_quality", "_measure_overview"]
    second = quality_views.quality_page(_sample(), **SETTINGS)
    assert len(counted) == 2, "the same settings measured the page again"
    a = _arrays(first)
    assert _same(a, _arrays(second))
    assert repr(first[0].shape_rows) == repr(second[0].shape_rows) and first[2] == second[2]
    # A page owns its arrays: writing into one leaves the kept view as measured.
    first[0].curves[0].kernel_mse[:] = 7.0
    first[1].values[:] = 7.0
    first[0].provenance["written"] = True
    third = quality_views.quality_page(_sample(), **SETTINGS)
    assert _same(a, _arrays(third)) and "written" not in third[0].provenance
    # The other language's page is the same view, said in its words, with nothing measured.
    from explorer.text import said, say
    chinese = quality_views.quality_page(_sample(), **SETTINGS)
    assert len(counted) == 2 and _same(a, _arrays(chinese))
    assert said(chinese[0].title, "zh") != first[0].title and chinese[0].title == first[0].title
    assert say(chinese[1].metric_label, "zh") != first[1].metric_label
    assert repr(chinese[0].shape_rows) == repr(first[0].shape_rows)
    # Other settings or another text are measured afresh (m is the overview's; the curves keep).
    quality_views.quality_page(_sample(), **{**SETTINGS, "m": 16})
    quality_views.quality_page(_sample(seed=6), **SETTINGS)
    assert counted[2:] == ["_measure_overview", "_measure_quality", "_measure_overview"]
    quality_views._VIEWS.clear()
    quality_views._OVERVIEWS.clear()
    assert _same(a, _arrays(quality_views.quality_page(_sample(), **SETTINGS)))


def test_the_curves_are_kept_for_a_session_with_a_trained_map_and_its_shape_rows_are_its_own(counted, monkeypatch):
    # The curves read random maps only; the shape table is the maps tab's, which keys a
    # trained map by the session's version of it.
    monkeypatch.setattr(quality_views, "trained_version", lambda session, kind: 1 if session == "trained" else 0)
    quality_views._VIEWS.clear()
    views_ = [quality_views.quality_view(_sample(), 0, 1, ["favor_plus_iid"], seeds=3, causal=False, m=8,
                                         session=session) for session in ("trained", "trained", "another")]
    assert counted == ["_measure_quality"]
    # The trained session's table offers its trained maps (none is there to draw: each says so).
    assert len(views_[0].notices) > len(views_[2].notices)
    assert np.array_equal(views_[0].curves[0].kernel_mse, views_[2].curves[0].kernel_mse, equal_nan=True)


def test_a_trained_overview_map_is_measured_every_time(counted):
    from explorer.catalog import map_specs
    trained = next(label for label, spec in map_specs().items() if spec.trained)
    for _ in range(2):
        try:
            quality_views.head_overview(_sample(), trained, m=8)
        except ValueError:
            pass          # no map of that kind for this sample: it was still not read from the cache
    assert counted == ["_measure_overview"] * 2


def test_a_sample_kept_nowhere_is_measured_every_time(counted, tmp_path):
    q = np.random.default_rng(0).standard_normal((2, 12, 8)).astype(np.float32)
    np.savez(str(tmp_path / "qk.npz"), q=q, k=q)
    sample = views.load_sample("file", path=str(tmp_path / "qk.npz"))
    assert sample.cache_key is None
    for _ in range(2):
        quality_views.quality_page(sample, **{**SETTINGS, "layer": 0})
    assert counted == ["_measure_quality", "_measure_overview"] * 2
