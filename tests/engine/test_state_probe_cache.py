"""The state tab's recall and capacity probes (random keys and values, not the text) are
measured once per map setting: a second view with the same settings reads them back, equal
to a fresh measurement, and owning its own arrays; a map trained in a session is never cached."""

from __future__ import annotations

import numpy as np

from explorer import views
from explorer.views import state as state_views

SETTINGS = dict(map_id="elu1", m=16, seed=3, gamma=0.9, strength=1.0, t=4, kind="retnet", lags=(0, 2, 8))


def _probe_arrays(view):
    return {(k, name): np.array(arr) for k, curves in view.recall.items() for name, arr in curves.items()} | \
        {(k, name): np.array(arr) for k, curves in view.capacity.items() for name, arr in curves.items()}


def test_a_second_view_reads_the_probes_back_equal_to_a_fresh_measurement(monkeypatch):
    sample = views.load_sample("random", n=24, d=8, data_seed=5)
    other = views.load_sample("random", n=30, d=8, data_seed=6)        # another text: the probes do not read it
    state_views._PROBES.clear()
    first = views.state_view(sample, 0, 0, **SETTINGS)
    measured = []
    original = state_views._measure_probes
    monkeypatch.setattr(state_views, "_measure_probes", lambda *a: measured.append(1) or original(*a))
    second = views.state_view(other, 0, 0, **SETTINGS)
    assert not measured, "the same settings measured the probes again"
    a, b = _probe_arrays(first), _probe_arrays(second)
    assert a.keys() == b.keys() and all(np.array_equal(a[key], b[key]) for key in a)
    # A view owns its arrays: writing into one leaves the cache (and the next view) as measured.
    next(iter(first.recall.values()))["cosine"][:] = 7.0
    third = views.state_view(sample, 0, 0, **SETTINGS)
    assert all(np.array_equal(b[key], c) for key, c in _probe_arrays(third).items())
    # Another setting is measured afresh.
    views.state_view(sample, 0, 0, **{**SETTINGS, "gamma": 0.8})
    assert measured == [1]
    state_views._PROBES.clear()
    fresh = views.state_view(sample, 0, 0, **SETTINGS)
    assert all(np.array_equal(b[key], c) for key, c in _probe_arrays(fresh).items())


def test_a_map_trained_in_a_session_is_never_cached():
    from explorer.catalog import map_specs
    trained = [label for label, spec in map_specs().items() if spec.trained]
    assert trained
    controls = state_views.check_controls(trained[0], 16, 0)
    calls = []
    original = state_views._measure_probes
    try:
        state_views._measure_probes = lambda *a: calls.append(1) or {"recall": {}, "capacity": {}}
        state_views._probes(None, 8, (0,), controls)
        state_views._probes(None, 8, (0,), controls)
    finally:
        state_views._measure_probes = original
    assert calls == [1, 1]

