"""A page opened on a tab's address (the lecture's Go deeper) sends the server that tab's work
only: the other tabs' first draws and the lecture's own load chain stop in the browser, and
the tab is computed once however many of the page's own events ask for it."""

from __future__ import annotations

import json
import urllib.request

import pytest

from helpers.page import TIMEOUT_MS, wait_quiet, watch

pytestmark = pytest.mark.browser

# Every event the page sends, by its dependency's id, in order.
SENT_JS = """(() => { window.__sent = []; const f = window.fetch;
  window.fetch = function (input, init) {
    try { if (init && typeof init.body === 'string' && init.body.includes('fn_index')) {
      window.__sent.push(JSON.parse(init.body).fn_index); } } catch (e) { /* not an event */ }
    return f.apply(this, arguments); }; })();"""

DRAWN_JS = """(id) => { const el = document.querySelector('#' + id + ' .js-plotly-plot');
  return !!el && el.offsetParent !== null && !!el.data && el.data.length > 0; }"""


def _config(app_url: str) -> dict:
    with urllib.request.urlopen(app_url.rstrip("/") + "/config", timeout=60) as answer:
        return json.load(answer)


def _names(config: dict) -> dict:
    return {d["id"]: d.get("api_name") or "" for d in config["dependencies"]}


def _lecture_draws(config: dict) -> set:
    """The lecture's draws a language or chapter change starts (each after its browser gate)."""
    plot = next(c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "lecture-plot-0")
    gates = {d["id"] for d in config["dependencies"] if "the lecture is not open" in (d.get("js") or "")}
    draws = {d["id"] for d in config["dependencies"] if plot in d["outputs"] and d.get("trigger_after") in gates}
    assert draws
    return draws


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_page_opened_on_the_state_tab_sends_only_the_state_tabs_work(browser, app_url, lang):
    config = _config(app_url)
    names = _names(config)
    context = watch(browser.new_context(viewport={"width": 1280, "height": 720}))
    context.add_init_script(SENT_JS)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(app_url + f"?tab=state&src=random&n=32&d=8&lang={lang}")
        page.wait_for_function(DRAWN_JS, arg="state-step")
        wait_quiet(page)
        ids = page.evaluate("() => window.__sent")
        sent = [names.get(i, "") for i in ids]
        assert not _lecture_draws(config) & set(ids), sent       # no chapter drawn behind the tab
        assert any(n.startswith("run_state_state") for n in sent), sent
        # Nothing for the tabs not open, nor the lecture's chapter (its load chain, its next one).
        others = ("run_maps", "run_quality", "run_complexity", "learn_query", "shipped_on_open", "draw_if",
                  "prefetch")
        assert not [n for n in sent if n.startswith(others)], sent
    finally:
        context.close()
