"""What a view measures does not depend on the page's language: a page in the other language
says the same numbers in its words and measures nothing again. The maps tab's per-map
results (notices included, as messages) are kept in no language."""

from __future__ import annotations

import numpy as np
import pytest

from explorer import views
from explorer.text import say
from explorer.views import maps as maps_views

CJK = __import__("re").compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def computed(monkeypatch):
    """Every map, mechanism and spread computed, by label."""
    calls = []
    for name in ("_compute_map", "_compute_mechanism", "seed_spread"):
        original = getattr(maps_views, name)
        monkeypatch.setattr(maps_views, name,
                            lambda label, *a, _original=original, **kw: calls.append(label) or _original(label, *a, **kw))
    return calls


def test_the_maps_view_in_the_other_language_measures_nothing(computed):
    maps_views.clear_caches()
    sample = views.load_sample("random", n=40, d=8, data_seed=11, heads=2)
    # m = 63 for a map whose features come in pairs: rounded up, and a notice says so.
    settings = dict(layer=0, head=1, maps=["softmax", "elu1", "trig_rff_orthogonal", "favor_plus_iid"], causal=True,
                    m=63, seed=2, mechanisms=["retnet", "deltanet"])
    english = views.maps_view(sample, **settings, lang="en")
    measured = list(computed)
    assert "trig_rff_orthogonal" in measured and "retnet" in measured
    chinese = views.maps_view(sample, **settings, lang="zh")
    assert computed == measured, "the Chinese page measured again"
    assert english.maps.keys() == chinese.maps.keys()
    for label in english.maps:
        np.testing.assert_array_equal(english.maps[label], chinese.maps[label])
    assert repr(english.metrics) == repr(chinese.metrics)
    # The words are the page's: the title, the rounding notice and the mechanisms' note.
    rounded = say("common.m_rounded", "zh", label="三角 RFF（正交）", m=63, m2=64)
    assert rounded in chinese.notices and say("common.m_rounded", "en", label="trig RFF (orthogonal)", m=63, m2=64) \
        in english.notices
    assert CJK.search(chinese.title) and not CJK.search(english.title)
    assert CJK.search(chinese.mechanism_note) and not CJK.search(english.mechanism_note)
