"""The groups whose work the server's one budget bounds run several events at once (so a small
request never waits in line behind large ones); the timed sweep, training and exports stay one
at a time."""

from __future__ import annotations

import pytest

from explorer.ui import build_app, server

pytestmark = pytest.mark.slow      # builds the whole app


def test_budgeted_groups_get_their_lanes_and_the_one_at_a_time_groups_keep_theirs():
    demo = build_app()
    server.configure_queue(demo)
    limits = {}
    for fn in demo.fns.values():
        limits.setdefault(fn.concurrency_id, set()).add(fn.concurrency_limit)
    for group in server.BUDGETED_GROUPS:
        assert limits[group] == {server.LANES}, (group, limits[group])
    for group in ("sweep", "learn-train", "learn-hybrid", "export"):
        assert limits[group] == {1}, (group, limits[group])
    assert server.open_lanes(demo) == 0                      # applied once; nothing left to change
