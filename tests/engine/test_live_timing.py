"""Live timing's order and verdict, with a fake clock and fake rates: nothing here is timed.

Defect 8 of the hardening issue: under other load the complexity tab showed flat ~50 ms
lines and "3× faster than SDPA" as if they were the machine's speed. Now the methods run in
interleaved rounds, and a moved matmul rate, stalled threads or a wide spread mark the
sweep as disturbed, and the figure says so.
"""

from __future__ import annotations

import json

import pytest

from explorer import figures, views
from explorer.measure import live_timing


def fake_timer(times: dict, log: list):
    """A timer that runs nothing: seconds per call from ``times[name]`` (a list, popped in order)."""
    def timer(fn, number):
        log.append(fn.__name__)
        return times[fn.__name__].pop(0)
    return timer


def named(name):
    def fn():
        return None
    fn.__name__ = name
    return fn


def test_rounds_are_interleaved_and_rotated():
    log = []
    calls = {name: named(name) for name in "abc"}
    times = {name: [1.0] * 3 for name in "abc"}
    samples = live_timing.interleaved(calls, dict.fromkeys("abc", 1), 3, fake_timer(times, log))
    assert log == list("abc" + "bca" + "cab")
    assert samples == {name: [1.0] * 3 for name in "abc"}


def test_verdict_quiet_moved_rate_wide_spread_and_stall():
    tight = {("sdpa", 8192): [0.100, 0.101, 0.099], ("linear_chunked", 8192): [0.005, 0.0051, 0.0049]}
    assert not live_timing.judge(150.0, 140.0, tight, stall=1.2).disturbed
    moved = live_timing.judge(150.0, 60.0, tight)
    assert moved.disturbed and "moved from 150 to 60" in moved.reasons[0]
    wide = live_timing.judge(150.0, 150.0, {("sdpa", 8192): [0.1, 0.3, 0.3]})
    assert wide.disturbed and "varied by 67%" in wide.reasons[0] and wide.worst_spread == pytest.approx(2 / 3)
    one_slow_round = live_timing.judge(150.0, 150.0, {("sdpa", 8192): [0.1, 0.1, 0.3]})
    assert not one_slow_round.disturbed                    # the median, 0.1, is what a quiet run gives
    two_rounds = live_timing.judge(150.0, 150.0, {("sdpa", 8192): [0.1, 0.3]})
    assert two_rounds.disturbed and two_rounds.worst_spread == pytest.approx(1.0)
    stalled = live_timing.judge(150.0, 150.0, tight, stall=300.0)
    assert stalled.disturbed and "stall" in stalled.reasons[0]


def _sweep_view(rates, times, stall=1.0):
    """complexity_view at N = 512 with two methods, every clock reading made up."""
    rates = list(rates)

    def timer(fn, number):
        return times.pop(0)          # the readings in the order the rounds take them

    return views.complexity_view(512, 512, 1, 32, None, True, "elu1", ["sdpa", "linear_chunked"], 3,
                                 time_budget_s=None, timer=timer, rate=lambda: rates.pop(0), stall=lambda: stall)


def test_complexity_view_reports_quiet_run_as_clean():
    # rounds: (sdpa, chunked), (chunked, sdpa), (sdpa, chunked)
    times = [0.010, 0.001, 0.001, 0.010, 0.010, 0.001]
    view = _sweep_view([150.0, 148.0], times)
    assert not view.disturbed and view.disturbance == []
    row = {r["method"]: r for r in view.rows}
    assert row["sdpa"]["time_ms"] == pytest.approx(10.0) and row["linear_chunked"]["time_ms"] == pytest.approx(1.0)
    fig = figures.complexity(view.rows, view.method_labels, disturbed="")
    assert "disturbed" not in json.dumps(fig.to_plotly_json()["layout"]).lower()


def test_complexity_view_and_figure_say_disturbed_when_the_rate_moved():
    times = [0.010, 0.001, 0.001, 0.010, 0.010, 0.001]
    view = _sweep_view([150.0, 50.0], times)
    assert view.disturbed and "150 to 50" in view.disturbance[0]
    fig = figures.complexity(view.rows, view.method_labels, disturbed="; ".join(view.disturbance))
    layout = json.dumps(fig.to_plotly_json()["layout"], ensure_ascii=False)
    assert "Measurement disturbed by other load" in layout
    bars = [t for t in fig.data if t.error_y is not None and t.error_y.array is not None]
    assert bars, "a disturbed sweep shows each point's spread"
    measured = {"n": 512, "quadratic_ms": 10.0, "linear_ms": 1.0, "ratio": 10.0, "flop_ratio": 8.0, "disturbed": True}
    claim = figures.flop_claim(100_000, 128, 1e15, 1e12, measured)
    # The note is wrapped to the figure's width: line breaks read as spaces.
    claim_text = json.dumps(claim.to_plotly_json()["layout"], ensure_ascii=False).replace("<br>", " ")
    assert "disturbed by other load" in claim_text


def test_time_budget_path_runs_with_a_fake_clock():
    times = [0.010, 0.001, 0.001, 0.010, 0.010, 0.001]
    view = views.complexity_view(512, 512, 1, 32, None, True, "elu1", ["sdpa", "linear_chunked"], 3,
                                 time_budget_s=600, timer=lambda fn, number: times.pop(0),
                                 rate=lambda: 150.0, stall=lambda: 1.0)
    assert [r["skipped"] for r in view.rows] == [None, None] and not view.disturbed


def test_complexity_view_disturbed_by_spread_and_by_stalled_threads():
    wide = [0.010, 0.001, 0.001, 0.030, 0.030, 0.001]     # sdpa's rounds: 10, 30, 30 ms
    view = _sweep_view([150.0, 150.0], wide)
    assert view.disturbed and "varied by 67%" in view.disturbance[0]
    steady = [0.010, 0.001, 0.001, 0.010, 0.010, 0.001]
    view = _sweep_view([150.0, 150.0], steady, stall=250.0)
    assert view.disturbed and "stall" in view.disturbance[0]
