"""explorer.catalog: the constants the UI is built from, checked against the engine itself.

The page is built from the catalogue alone (the engine is imported later, in the
background), so every choice it offers must be one the engine can compute: these tests
ask the engine. (The maps' own facts are their specs, which the classes read: see
tests/engine/test_feature_maps.py for what the classes do with them.)
"""

from __future__ import annotations

import pytest

import torch

from explorer import catalog, maps as feature_maps, sources, views
from explorer.measure import metrics
from explorer.diagnostics import state

_PROBE_DIM = 8


def test_every_registered_map_has_a_spec_and_every_spec_a_map():
    # A map class without a spec cannot be offered; a spec without a class would be a dead choice.
    assert sorted(catalog.FEATURE_MAPS) == sorted(feature_maps.names())


def test_map_labels_are_unique_and_the_defaults_offered():
    labels = catalog.map_choices()
    assert len(labels) == len(set(labels)) and labels[0] == catalog.REFERENCE
    assert catalog.default_maps() == list(catalog.DEFAULT_MAPS)
    assert set(catalog.random_map_ids()) == {"favor_plus_iid", "favor_plus_orthogonal", "trig_rff_iid",
                                                "trig_rff_orthogonal"}


def test_metric_info_names_every_number_the_engine_computes():
    q, k, v = (torch.randn(6, 4, generator=torch.Generator().manual_seed(i)) for i in range(3))
    ref = torch.softmax(q @ k.T / 2, -1)
    assert set(metrics.compare(ref, ref, v, q @ k.T / 2, feature_dim=4)) == set(catalog.metric_keys())


def test_every_metric_has_a_short_header_and_the_table_leads_with_the_headline():
    assert set(catalog.METRIC_SHORT) == set(catalog.METRIC_INFO)
    assert len(set(catalog.METRIC_SHORT.values())) == len(catalog.METRIC_SHORT)
    assert set(catalog.HEADLINE_METRICS) <= set(catalog.METRIC_INFO)
    q, k, v = (torch.randn(6, 4, generator=torch.Generator().manual_seed(i)) for i in range(3))
    ref = torch.softmax(q @ k.T / 2, -1)
    row = {"map": "softmax", **metrics.compare(ref, ref, v, q @ k.T / 2, feature_dim=4)}
    full, short = views.metrics_table([row]), views.metrics_table([row], short=True)
    n = len(catalog.HEADLINE_METRICS)
    assert list(short.columns)[1:n + 1] == [catalog.METRIC_SHORT[key] for key in catalog.HEADLINE_METRICS]
    assert list(full.columns)[1:n + 1] == [catalog.METRIC_INFO[key][0] for key in catalog.HEADLINE_METRICS]
    assert len(full.columns) == len(short.columns) == 1 + len(catalog.METRIC_INFO)
    assert [label.split(": ", 1)[0] for label, _ in catalog.metric_help()][:n] == list(short.columns)[1:n + 1]


@pytest.mark.parametrize("preset", catalog.PRESETS)
def test_every_preset_builds_a_sample(preset):
    assert sources.from_random(8, 4, preset=preset).n_tokens == 8


def test_names_the_engine_must_know():
    names = set(feature_maps.names())
    assert set(catalog.SWEEP_MAPS) <= names
    assert set(catalog.HYBRID_MAPS) <= names
    assert set(catalog.DEFAULT_METHODS) <= set(catalog.SWEEP_METHODS)
