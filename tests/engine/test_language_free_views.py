"""What a view measures does not depend on the page's language: a page in the other language
says the same numbers in its words and measures nothing again. The maps tab's per-map
results (notices included, as messages) are kept in no language."""

from __future__ import annotations

import numpy as np
import pytest

from explorer import views
from explorer.text import said_throughout, say
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
    view = views.maps_view(sample, **settings)
    measured = list(computed)
    assert "trig_rff_orthogonal" in measured and "retnet" in measured
    again = views.maps_view(sample, **settings)
    assert computed == measured, "the view measured again"
    assert repr(view.metrics) == repr(again.metrics)
    # The words are messages, said by the page in its language: the title, the rounding
    # notice and the mechanisms' note.
    rounded = say("common.m_rounded", "zh", label="三角 RFF（正交）", m=63, m2=64)
    assert rounded in said_throughout(view.notices, "zh")
    assert say("common.m_rounded", "en", label="trig RFF (orthogonal)", m=63, m2=64) in view.notices
    assert CJK.search(say(view.title, "zh")) and not CJK.search(view.title)
    assert CJK.search(say(view.mechanism_note, "zh")) and not CJK.search(view.mechanism_note)


def test_a_language_switch_on_the_maps_tab_says_again_without_computing(computed):
    """The page's switch re-says the drawn view (figure, table, notices): nothing is measured."""
    from explorer.ui import maps_tab
    from explorer.ui.common import said_outputs

    maps_views.clear_caches()
    sample = views.load_sample("random", n=40, d=8, data_seed=11, heads=2)
    view = views.maps_view(sample, 0, 1, ["softmax", "favor_plus_orthogonal"], m=16)
    measured = list(computed)
    fig, table, notices = said_outputs((maps_tab.render(view), maps_views.maps_table(view),
                                        maps_tab.notices_with_undefined(view, "zh")), "zh")
    assert computed == measured
    assert CJK.search(fig.layout.title.text) and CJK.search(str(list(table.columns)))
    assert fig.data[0].z.tolist() == maps_tab.render(view).data[0].z.tolist()
