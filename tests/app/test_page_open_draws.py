"""A page opened on a tab's address (the lecture's Go deeper) computes that tab once and draws
nothing behind it: its load and the tab select its load makes do not both compute the view;
a tab already drawn in the address's language is not drawn again when the language lands;
the lecture does not draw a chapter behind another tab."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest

from explorer import ui
from explorer.ui import build_app, state_tab


@pytest.fixture(scope="module")
def demo():
    return build_app()


def _skipped(out) -> bool:
    values = out if isinstance(out, tuple) else (out,)
    return all(isinstance(v, type(gr.skip())) and v == gr.skip() for v in values)


def test_of_a_pages_own_draws_only_the_first_with_the_same_inputs_runs():
    calls = []

    def draw(*args):
        calls.append(args)
        return "figure", "table"

    run = ui._gated("state", draw, 2, once_per_open=True)
    page, other = SimpleNamespace(session_hash="page"), SimpleNamespace(session_hash="other")
    assert run(page, "state", None, "text", 2) == ("figure", "table")
    assert _skipped(run(page, "state", None, "text", 2))          # the select after the load
    assert run(page, "state", None, "text", 3) == ("figure", "table")   # other inputs: drawn
    assert run(other, "state", None, "text", 2) == ("figure", "table")  # another page: drawn
    assert _skipped(run(page, "maps", None, "text", 2))           # not the open tab
    assert len(calls) == 3


def test_a_persons_redraw_is_never_held_back():
    calls = []
    run = ui._gated("state", lambda *a: calls.append(a) or ("f", "t"), 2)
    page = SimpleNamespace(session_hash="page")
    run(page, "state", None, "text", 2)
    run(page, "state", None, "text", 2)
    assert len(calls) == 2


def test_the_load_and_the_select_of_each_data_tab_are_counted_once(demo):
    gated = [f for f in demo.fns.values() if getattr(f.fn, "__name__", "").startswith(("run_maps_", "run_quality_",
                                                                                         "run_state_"))]
    once = [f for f in gated if "once_per_open" in (f.fn.__code__.co_freevars or ())
            and f.fn.__closure__[f.fn.__code__.co_freevars.index("once_per_open")].cell_contents]
    # maps, quality, state: each drawn from the load and from its tab's select
    assert len(once) == 6, [f.name for f in once]


def _fn(demo, name: str):
    found = [f for f in demo.fns.values() if getattr(f.fn, "__name__", "") == name]
    assert found, name
    return found[0]


@pytest.mark.slow
def test_a_state_tab_drawn_in_chinese_is_not_drawn_again_when_chinese_lands(demo, monkeypatch):
    relanguage = _fn(demo, "relanguage")
    args = dict(source="random", n=24, d=8, kind="linear", t=10)
    drawn = state_tab.run_state(**args, lang="zh")
    view, said_in = drawn[4], drawn[-1]
    assert said_in == state_tab.SaidIn("zh")
    assert _skipped(relanguage.fn(view, said_in, False, "zh"))
    # Another language says the same view's words again: nothing is computed.
    from explorer import views
    monkeypatch.setattr(views, "state_view", lambda *a, **k: pytest.fail("computed again"))
    again = relanguage.fn(view, said_in, False, "en")
    assert again[-1] == state_tab.SaidIn("en") and _skipped(again[4])
    english = state_tab.render(view)[1].layout.title.text
    assert again[1].layout.title.text == english != drawn[1].layout.title.text


def test_the_lecture_draws_nothing_behind_another_tab(demo):
    """Every draw of the lecture a language or chapter change starts comes after a browser
    step that stops the chain where the lecture is neither open, nor the address's tab, nor
    drawn (the browser test sees nothing sent)."""
    plot = next(b._id for b in demo.blocks.values() if getattr(b, "elem_id", None) == "lecture-plot-0")
    fns = {f._id: f for f in demo.fns.values()}
    draws = [f for f in fns.values() if getattr(f.fn, "__name__", "") == "run" and any(o._id == plot for o in f.outputs)]
    assert draws
    for f in draws:
        gate = fns.get(f.trigger_after)
        assert gate is not None and gate.fn is None, f.name
        assert "throw" in gate.js and "offsetParent" in gate.js and "'lecture'" in gate.js, gate.js
