"""A sweep's time budget holds: the plan is priced as a whole before
anything runs, the runs taken at one N are priced together against the time left, and a
deadline asked at every step ends the sweep at its budget."""

from __future__ import annotations

import time

import pytest

from explorer.catalog import SWEEP_METHODS
from explorer.measure import live_timing
from explorer.views.complexity import complexity_view

# A sweep of minutes (537 s before the budget held) under a smaller budget, so the test is short:
# what must hold is the ratio, within the budget and a quarter (the deadline is asked between
# steps, and a step begun just before it ends after it: 2.2 s over, once, on a loaded 2-core run).
LONG_SWEEP = dict(n_min=16, n_max=131072, points=12, head_dim=512, feature_dim=2048, causal=True,
               feature_map="taylor2", methods=list(SWEEP_METHODS), repeats=10)
BUDGET_S = 20.0


@pytest.mark.slow
def test_a_sweep_asked_for_minutes_ends_within_its_budget():
    started = time.perf_counter()
    view = complexity_view(**LONG_SWEEP, time_budget_s=BUDGET_S)
    took = time.perf_counter() - started
    assert took <= BUDGET_S * 1.25, f"the sweep took {took:.1f} s on a {BUDGET_S:.0f} s budget"
    assert view.truncated and not view.cancelled
    skipped = [str(r["skipped"]) for r in view.rows if r["skipped"]]
    assert any("time budget" in reason for reason in skipped)


def test_the_plan_marks_the_runs_past_the_budget_before_anything_runs():
    budget = live_timing.Budget(1.0, time.perf_counter())
    budget.plan([64, 4096], ["sdpa", "linear_chunked"], 64, 64, False, {}, 2 << 30, 1, 3, True, 64, 50.0)
    assert set(budget.planned) == {("sdpa", 64), ("linear_chunked", 64), ("sdpa", 4096), ("linear_chunked", 4096)}
    # the runs are priced together: whatever is marked over is what would not fit after the ones before it
    total = sum(s for key, s in budget.planned.items() if key not in budget.over_plan)
    assert total <= 1.0 and budget.over_plan
    unlimited = live_timing.Budget(None, time.perf_counter())
    unlimited.plan([64], ["sdpa"], 64, 64, False, {}, 2 << 30, 1, 3, True, 64, 50.0)
    assert not unlimited.over_plan and not unlimited.limited


def test_runs_at_one_n_are_priced_together(monkeypatch):
    """Each run alone fits the time left, the two together do not: the second is skipped
    (before, each was compared with the time left on its own, and both ran)."""
    from explorer.measure import bench
    monkeypatch.setattr(bench, "_prior_seconds", lambda *args: 1.0)     # every call guessed at 1 s
    one_run = live_timing.run_seconds(1.0, 1, 1, False)                  # 4 s: warm-up and one sample
    sweep = live_timing.sweep([64], methods=["sdpa", "linear_chunked"], repeats=1, memory=False,
                              time_budget_s=1.5 * one_run, rate=lambda: 50.0, stall=None)
    rows = {r["method"]: r for r in sweep.rows}
    assert rows["sdpa"]["time_ms"] is not None
    assert rows["linear_chunked"]["time_ms"] is None and "time budget" in str(rows["linear_chunked"]["skipped"])
    assert sweep.truncated
