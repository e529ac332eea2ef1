"""The lecture's warm-up measures what its Go deeper links open, where the tab keeps it."""

from __future__ import annotations

import pytest

from explorer.views import state as state_views

pytestmark = pytest.mark.slow      # the lecture's chapters and the tabs they open, measured cold


def test_the_start_up_measures_the_probes_chapter_four_goes_deeper_to():
    """The lecture's warm-up leaves in the cache the probes of the state tab its chapter 4's
    Go deeper opens (the map and m of the link), so that page does not measure them."""
    from explorer.ui import lecture_handlers, lecture_warm
    from explorer.lecture import view as lecture

    view = lecture.chapter_view(4)
    link = lecture_handlers.deeper_params(view, "en", True, None, None, ())
    assert link["tab"] == "state"
    state_views._PROBES.clear()
    lecture_warm._warm_deeper(view, "en")
    assert [key[:2] for key in state_views._PROBES] == [(link["smap"], int(link["sm"]))]


def test_the_learn_tab_keeps_the_shipped_maps_comparison_that_chapter_five_goes_deeper_to(monkeypatch):
    """Chapter 5's Go deeper opens the learn tab on the map shipped for its layer: the warm-up
    measures its held-out comparison once, a visitor's page reads it back (no held-out text
    through the model again), equal to a fresh measurement, and no session keeps a map for it."""
    import numpy as np

    from explorer.experiments import learning
    from explorer.ui import lecture_handlers, lecture_warm
    from explorer.views import learn as learn_views
    from explorer.lecture import view as lecture
    from explorer.views.common import trained_entry

    view = lecture.chapter_view(5)
    link = lecture_handlers.deeper_params(view, "en", True, None, None, ())
    assert link["tab"] == "learn" and link.get("model")
    learn_views._SHIPPED_QUALITY.clear()
    lecture_warm._warm_deeper(view, "en")
    assert len(learn_views._SHIPPED_QUALITY) == 1
    assert trained_entry(lecture_warm.WARM_SESSION, "hedgehog") is None
    measured = []
    original = learning.heldout_quality
    monkeypatch.setattr(learning, "heldout_quality", lambda *a: measured.append(1) or original(*a))
    kept = learn_views.pretrained_result("hedgehog", int(link["llayer"]), 16, session="visitor", model=link["model"],
                                         seeds=3)
    assert not measured
    learn_views._SHIPPED_QUALITY.clear()
    fresh = learn_views.pretrained_result("hedgehog", int(link["llayer"]), 16, session="visitor", model=link["model"],
                                          seeds=3)
    assert measured
    assert repr(kept.rows) == repr(fresh.rows)
    assert kept.quality.keys() == fresh.quality.keys()
    for name, metrics in fresh.quality.items():
        for metric, values in metrics.items():
            assert np.array_equal(kept.quality[name][metric], values, equal_nan=True), (name, metric)


@pytest.mark.parametrize("ch", [3, 6])
def test_the_start_up_measures_the_quality_page_a_chapter_goes_deeper_to(ch, monkeypatch):
    """Chapters 3 and 6 open the quality tab: after the warm-up, the page's own request (the
    controls as the link restores them) reads its view and head overview back, measuring nothing."""
    from explorer import catalog
    from explorer.ui import lecture_handlers, lecture_warm, quality_tab
    from explorer.ui import source as source_panel
    from explorer.lecture import view as lecture
    from explorer.views import quality as quality_views

    view = lecture.chapter_view(ch)
    link = lecture_handlers.deeper_params(view, "en", True, None, None, ())
    assert link["tab"] == "quality"
    quality_views._VIEWS.clear()
    quality_views._OVERVIEWS.clear()
    lecture_warm._warm_deeper(view, "en")
    assert len(quality_views._VIEWS) == 1 and len(quality_views._OVERVIEWS) == 1
    measured = []
    for name in ("_measure_quality", "_measure_overview"):
        monkeypatch.setattr(quality_views, name, lambda *a, _name=name: measured.append(_name))
    causal = link["causal"] == "true" if "causal" in link else source_panel.causal_for("text", link.get("model"))
    maps = link["qmaps"].split(",") if "qmaps" in link else catalog.random_map_ids()
    out = quality_tab.run_quality("text", link["text"], model=link.get("model"), layer=int(link["layer"]),
                                  head=str(link["head"]), causal=causal, maps=maps, seeds=int(link.get("seeds", 10)),
                                  m=int(link["m"]), x_axis=link.get("x", "m"), lang="en")
    assert not measured
    assert out[0] is not None and out[3] is not None
    # Chapter 6 argues cost against quality: its first figure is drawn against FLOPs.
    assert ("FLOP" in (out[0].layout.xaxis.title.text or "")) == (ch == 6) == (link.get("x") == "FLOPs")
