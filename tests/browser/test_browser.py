"""The app in a real browser (Debian's chromium through playwright, offline).

Each tab runs with its defaults; the test waits until plotly has drawn, checks there is
no error toast, no console error and no request to any host but the app, changes one
control, sees the figure change, and saves a screenshot (test-artifacts/<tab>.png).

Under CI (CI=true) a missing browser fails the run; elsewhere it skips these tests.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from helpers.page import ARTIFACTS, TIMEOUT_MS, Watched, wait_quiet

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1600, "height": 1000}


@pytest.fixture(scope="module")
def app(browser, app_url):
    """One page for the whole module: tabs are visited in order, as a lecturer would."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    watched = Watched(page)
    page.goto(app_url)
    yield watched
    page.close()


def wait_drawn(page, plot_id: str, layer: str = ".main-svg"):
    page.wait_for_selector(f"#{plot_id} .js-plotly-plot {layer}", timeout=TIMEOUT_MS)


def settle(page):
    """Until the page has taken in what the server answered and drawn it, so the toasts of
    the event the test waited for have shown (they are kept, tests/helpers/page.py). Events
    still queued behind other work do not hold it up: the test waits for its own figures."""
    wait_quiet(page, queue=False)


# What a figure currently shows, compactly: title, font, x title, subplot titles, traces.
SIGNATURE_JS = """(id) => { const g = document.querySelector('#' + id + ' .js-plotly-plot');
    if (!g || !g.data || !g.layout) return '';
    const L = g.layout;
    return JSON.stringify([L.title && L.title.text, L.font && L.font.size,
                           L.xaxis && L.xaxis.title && L.xaxis.title.text,
                           (L.annotations || []).map(a => a.text),
                           g.data.map(t => [t.name, (t.z || t.y || []).length])]); }"""


def signature(page, plot_id: str) -> str:
    return page.evaluate(SIGNATURE_JS, plot_id)


def wait_changed(page, plot_id: str, before: str):
    page.wait_for_function(f"([id, before]) => ({SIGNATURE_JS})(id) !== before && ({SIGNATURE_JS})(id) !== ''",
                           arg=[plot_id, before], timeout=TIMEOUT_MS)


def screenshot(page, name: str):
    """Under test-artifacts/ only: the README's pictures come from scripts/screenshots.py
    --readme, which refuses timing pictures taken on a busy machine."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def click_tab(page, label: str):
    page.get_by_role("tab", name=label).click()


# --------------------------------------------------------------------------- tests, in page order

def test_maps_tab(app):
    page = app.page
    # The page lands on the lecture; once its load has drawn it (and so selected the tab the
    # address asked for), open the maps.
    wait_drawn(page, "lecture-plot-0")
    click_tab(page, "Attention maps")
    wait_drawn(page, "maps-plot", ".heatmaplayer image")     # drawn on load with the defaults
    settle(page)
    assert page.locator("#maps-plot .heatmaplayer image").count() == 9
    assert "matches" in page.inner_text("#maps-badge")
    app.check_clean()
    # Hovering a cell names both tokens and gives approx, exact and their difference.
    cell = page.locator("#maps-plot .nsewdrag").nth(1)          # the second panel: elu+1
    cell.scroll_into_view_if_needed()
    box = cell.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + box["height"] * 0.6)
    page.wait_for_selector("#maps-plot .hoverlayer .hovertext", timeout=TIMEOUT_MS)
    hover = page.locator("#maps-plot .hoverlayer").text_content()
    for word in ("query:", "key:", "approx:", "softmax:", "difference:"):
        assert word in hover, hover
    before = signature(page, "maps-plot")
    page.locator("#maps-choice label", has_text="FAVOR+ (IID)").click()   # one more map
    wait_changed(page, "maps-plot", before)
    settle(page)
    assert page.locator("#maps-plot .heatmaplayer image").count() == 11
    assert "tab=maps" in page.url and "favor_plus_iid" in page.url                  # the view is in the address
    app.check_clean()
    screenshot(page, "maps")


def test_quality_tab(app):
    page = app.page
    # Opening the tab draws it (pressing Measure as well would start a second measurement
    # that can land on top of the clicks below).
    click_tab(page, "Feature-map quality")
    # (a measured curve's markers: a flat curve's band, SmolLM2's FAVOR+ at error 1, has no area)
    wait_drawn(page, "quality-plot", ".scatterlayer .trace .point")
    wait_drawn(page, "quality-overview", ".heatmaplayer image")
    settle(page)
    app.check_clean()
    before = signature(page, "quality-plot")
    page.locator("#quality-x label", has_text="FLOPs").click()
    wait_changed(page, "quality-plot", before)
    assert "FLOPs" in signature(page, "quality-plot")
    app.check_clean()
    screenshot(page, "quality")
    # Clicking a cell of the head overview opens that head (layer 4, head 7) in the maps tab.
    drag = page.locator("#quality-overview .nsewdrag").first
    drag.scroll_into_view_if_needed()
    box = drag.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 7.5 / 12, box["y"] + box["height"] * 4.5 / 6)
    page.wait_for_function("""() => { const g = document.querySelector('#maps-plot .js-plotly-plot');
                                      return g && g.layout && g.layout.title.text.includes('layer 4, head 7'); }""",
                           timeout=TIMEOUT_MS)
    assert page.get_by_role("tab", name="Attention maps").get_attribute("aria-selected") == "true"
    settle(page)
    app.check_clean()


def test_state_tab(app):
    page = app.page
    click_tab(page, "Recurrent state")
    page.click("#state-run")
    wait_drawn(page, "state-step", ".heatmaplayer image")
    wait_drawn(page, "state-curves", ".scatterlayer .trace")
    settle(page)
    app.check_clean()
    before = signature(page, "state-step")
    page.locator("#state-kind label", has_text="gla").click()
    wait_changed(page, "state-step", before)
    app.check_clean()
    screenshot(page, "state")


def test_complexity_tab_and_presentation_mode(app):
    page = app.page
    click_tab(page, "Complexity")
    page.click("#cx-run")
    wait_drawn(page, "cx-plot", ".scatterlayer .trace")
    wait_drawn(page, "cx-claim", ".barlayer")
    settle(page)
    app.check_clean()
    before = signature(page, "cx-plot")
    page.locator("#presentation label").click()                 # restyles without re-running the sweep
    wait_changed(page, "cx-plot", before)
    assert page.evaluate("() => document.body.classList.contains('presentation')")
    app.check_clean()
    screenshot(page, "complexity")
    page.locator("#presentation label").click()
    # A long sweep stops when cancelled, and says so.
    page.fill("#cx-nmax input", "65536")
    # Cancel once the sweep runs: its first progress message says the server has started it.
    # Once in a full run the first click started nothing for 300 s (the page just restyled all
    # its figures for presentation mode off): a person clicks again, and so does the test,
    # which says what the page showed if the second click starts nothing either.
    for attempt in range(2):
        page.click("#cx-run")
        try:
            page.wait_for_selector("#tab-complexity .progress-level", state="attached", timeout=TIMEOUT_MS // 3)
            break
        except PlaywrightTimeout:
            if attempt:
                raise AssertionError("the long sweep never started; the page said: "
                                     + page.inner_text("#cx-summary")[:300])
    page.click("#cx-cancel")
    page.wait_for_function("() => document.querySelector('#cx-summary').innerText.includes('cancelled')",
                           timeout=TIMEOUT_MS)
    settle(page)
    app.check_clean()


def test_learn_tab(app):
    page = app.page
    # The page must be live before a tab click counts: the maps drawn on load say so (they
    # may sit on a hidden tab when the earlier tests ran, hence "attached", not "visible").
    page.wait_for_selector("#maps-plot .heatmaplayer image", state="attached", timeout=TIMEOUT_MS)
    click_tab(page, "Learned maps & hybrids")
    page.wait_for_selector("#learn-steps", state="visible", timeout=TIMEOUT_MS)
    # A quick training: one head (the default, layer 2 head 3), 40 steps, 8 + 4 texts.
    page.fill("#learn-steps input[type=number]", "40")
    page.get_by_role("button", name="Texts").click()            # the accordion with the text counts
    page.get_by_label("number input for Training texts (train.txt)").fill("8")
    page.get_by_label("number input for Held-out texts (heldout.txt)").fill("4")
    page.click("#learn-train")
    # The first run reads the texts through the model; the summary says when training has finished.
    page.wait_for_function("() => document.querySelector('#learn-summary').innerText.includes('Closest to softmax')",
                           timeout=TIMEOUT_MS)
    wait_drawn(page, "learn-loss", ".scatterlayer .trace")
    wait_drawn(page, "learn-comparison", ".barlayer")
    page.wait_for_selector("#learn-table table", timeout=TIMEOUT_MS)
    settle(page)
    summary = page.inner_text("#learn-summary")
    assert "40 steps" in summary and "8 training texts" in summary and "4 held-out texts" in summary, summary
    table = page.inner_text("#learn-table")
    for row in ("Hedgehog", "elu+1", "softmax (reference)"):
        assert row in table, table
    assert "training loss" in signature(page, "learn-loss").lower()
    app.check_clean()
    # The hybrid: elu+1 (the default map) in one chosen layer, on the same 4 held-out texts.
    page.locator("#hybrid-mode label", has_text="chosen layers").click()
    page.locator("#hybrid-layers label", has_text="3").click()   # default [2, 3]: keep layer 2 only
    page.click("#hybrid-run")
    page.wait_for_function("() => document.querySelector('#hybrid-summary').innerText.includes('mean embedding cosine')",
                           timeout=TIMEOUT_MS)
    wait_drawn(page, "hybrid-cosine", ".scatterlayer .trace")
    wait_drawn(page, "hybrid-drift", ".barlayer")
    settle(page)
    assert "linear: 2" in signature(page, "hybrid-drift")
    assert "elu+1 in layers 2," in page.inner_text("#hybrid-summary")
    app.check_clean()
    # Another layer: the drift figure follows.
    before = signature(page, "hybrid-drift")
    page.locator("#hybrid-layers label", has_text="2").click()
    page.locator("#hybrid-layers label", has_text="4").click()
    page.click("#hybrid-run")
    wait_changed(page, "hybrid-drift", before)
    settle(page)
    assert "linear: 4" in signature(page, "hybrid-drift")
    assert "elu+1 in layers 4," in page.inner_text("#hybrid-summary")
    app.check_clean()
    screenshot(page, "learn")


def test_url_restores_a_view(browser, app_url):
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    watched = Watched(page)
    page.goto(app_url + "?tab=state&src=random&preset=local&n=48&d=16&layer=0&head=0&smap=cosFormer&kind=retnet&t=20")
    wait_drawn(page, "state-step", ".heatmaplayer image")
    settle(page)
    text = signature(page, "state-step")
    assert "t = 20" in text and "RetNet" in text
    assert page.get_by_role("tab", name="Recurrent state").get_attribute("aria-selected") == "true"
    watched.check_clean()
    page.close()
    # A stale or mistyped link opens what it can, not an error. (A page of its own: leaving
    # the first page while its queue connection is open logs that connection's abort.)
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    watched = Watched(page)
    page.goto(app_url + "?tab=maps&maps=nope,elu%2B1&m=abc&layer=99&head=zz&src=bogus")
    wait_drawn(page, "maps-plot", ".heatmaplayer image")
    settle(page)
    assert "layer 5" in signature(page, "maps-plot")
    watched.check_clean()
    page.close()
