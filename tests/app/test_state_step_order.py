"""The state tab's step figure shows the update the choice says, whatever order the redraws
land in: a whole redraw started before the reader picked an update reads the old pick, so
every event that draws the whole tab is followed by a step from the controls as they are then."""

from __future__ import annotations

import pytest

from explorer.ui import build_app, state_tab


@pytest.fixture(scope="module")
def demo():
    return build_app()


def _step_id(demo) -> int:
    return next(b._id for b in demo.blocks.values() if getattr(b, "elem_id", None) == "state-step")


def test_every_whole_redraw_of_the_tab_is_followed_by_the_step_of_now(demo):
    step = _step_id(demo)
    fns = list(demo.fns.values())
    followers = {f.trigger_after for f in fns if getattr(f.fn, "__name__", "") == "step_if_stale"}
    redraws = [f for f in fns if any(o._id == step for o in f.outputs)
               and "run_state" in getattr(f, "name", "")]          # run, preset, controls, load, tab, panel
    assert len(redraws) >= 5
    for f in redraws:
        assert f._id in followers, (f.name, f.concurrency_id)


@pytest.mark.slow
def test_a_redraw_that_lands_after_a_pick_is_corrected():
    # The whole tab drawn with no decay; the reader then picks the delta rule (its step drawn
    # and kept in the view); a redraw started before the pick lands last with "linear".
    args = dict(source="random", n=24, d=8, kind="linear", t=10)
    first = state_tab.run_state(**args)
    view = first[4]
    assert view.step["kind_id"] == "linear"
    fig = state_tab.run_step(**{**args, "kind": "deltanet"}, view=view)
    assert view.step["kind_id"] == "deltanet"
    assert len([tr for tr in fig.data if tr.type == "heatmap"]) == 3        # erased, written, state
    assert not state_tab._step_is_stale(view, 10, "deltanet")
    late = state_tab.run_state(**args)[4]                                    # the redraw that read "linear"
    assert state_tab._step_is_stale(late, 10, "deltanet")
    assert not state_tab._step_is_stale(late, 10, "linear")
    assert state_tab._step_is_stale(late, 9, "linear")                        # another step is stale too
    assert not state_tab._step_is_stale(None, 10, "deltanet")               # nothing drawn: nothing to follow
