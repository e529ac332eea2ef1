"""The lecture's warm-up measures what its Go deeper links open, where the tab keeps it."""

from __future__ import annotations

from explorer.views import state as state_views


def test_the_start_up_measures_the_probes_chapter_four_goes_deeper_to():
    """The lecture's warm-up leaves in the cache the probes of the state tab its chapter 4's
    Go deeper opens (the map and m of the link), so that page does not measure them."""
    from explorer.ui import lecture_tab
    from explorer.views import lecture

    view = lecture.chapter_view(4)
    link = lecture_tab.deeper_params(view, "en", True, None, None, ())
    assert link["tab"] == "state"
    state_views._PROBES.clear()
    lecture_tab._warm_deeper(view, "en")
    assert [key[:2] for key in state_views._PROBES] == [(link["smap"], int(link["sm"]))]
