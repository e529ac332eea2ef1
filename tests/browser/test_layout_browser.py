"""Layout in a real browser, as a projector shows it: 1280×720 and 1920×1080, normal and
presentation mode.

On every tab the first figure starts inside the first screen, the data panel shows only
on the tabs that use it, and in every drawn plotly figure the title, subplot titles,
notes, legends, colour bars and axis titles do not overlap each other, nor does the
toolbar cover the title. Then the page's behaviour: colour bars keep their colours after a
resize, Enter and the examples redraw, empty tables have real headers, and links hold
every tab's state (presentation mode at once, a complexity link draws, a learn link
restores its controls, an opened link fills its own link box).

One app (conftest's app_url), one Chromium for the module; each viewport is one page
whose tabs draw once and are then restyled, so the module stays within a minute or two.
Screenshots of every tab and mode go to test-artifacts/layout/ (look at them).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from helpers.page import TIMEOUT_MS, wait_quiet, watch

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "layout"
TABS = ("maps", "quality", "state", "complexity", "learn")
PAGE_TABS = ("lecture", *TABS)           # the tab row, in order: the lecture is where a plain address lands
DATA_TABS = ("maps", "quality", "state")
FIRST_PLOT = {"maps": "maps-plot", "quality": "quality-plot", "state": "state-step", "complexity": "cx-plot",
              "learn": "learn-loss"}
VIEWPORTS = [(1280, 720), (1920, 1080)]


def open_tab(page, tab_id: str):
    """Click a tab, through the overflow menu when the tab row has no room for it."""
    button = page.locator(f"#tab-{tab_id}-button")
    if button.count() and button.is_visible():
        button.click()
    else:
        page.locator(".tab-wrapper .overflow-menu > button").click()
        label = page.evaluate(f"() => [...document.querySelectorAll('.tab-wrapper .tab-container.visually-hidden "
                              f"button')].map(b => b.innerText)[{PAGE_TABS.index(tab_id)}]")
        page.locator(".tab-wrapper .overflow-dropdown button", has_text=label).click()
    page.wait_for_function(f"() => document.querySelector('#tab-{tab_id}') && "
                           f"getComputedStyle(document.querySelector('#tab-{tab_id}')).display !== 'none'")


def wait_drawn(page, plot_id: str):
    page.wait_for_selector(f"#{plot_id} .js-plotly-plot .main-svg", timeout=TIMEOUT_MS)


def set_presentation(page, on: bool):
    if page.evaluate("() => document.body.classList.contains('presentation')") != on:
        page.locator("#presentation label").click()
        page.wait_for_function(f"() => document.body.classList.contains('presentation') === {str(on).lower()}")


# Boxes of the text-like parts of every drawn, visible plotly figure; pairs that intersect.
OVERLAPS_JS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return r.width * r.height > 0 ? r : null; };
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const out = [];
  document.querySelectorAll('.js-plotly-plot').forEach((gd) => {
    if (!gd.offsetParent) { return; }
    const owner = (gd.closest('[id]') || {}).id;
    const parts = [];
    const add = (sel, what, inside) => gd.querySelectorAll(sel).forEach((el, i) => {
      if (!inside && el.closest('.colorbar, .legend')) { return; }     // parts of a bar or legend: counted with it
      const r = box(el); if (r) { parts.push({what: what + i + ':' + (el.textContent || '').slice(0, 30), r}); }
    });
    add('.infolayer .gtitle', 'title');
    add('.infolayer .gtitle-subtitle', 'subtitle');
    add('.infolayer .annotation-text-g', 'annotation');
    add('.infolayer .legend', 'legend', true);
    add('.infolayer .colorbar', 'colorbar', true);
    add('.infolayer text[class*="title"]:not(.gtitle):not(.gtitle-subtitle):not(.legendtitletext)', 'axis title');
    for (let i = 0; i < parts.length; i++) {
      for (let j = i + 1; j < parts.length; j++) {
        if (hit(parts[i].r, parts[j].r)) { out.push(owner + ': ' + parts[i].what + ' × ' + parts[j].what); }
      }
    }
    // Numbers written in heatmap cells: neighbours must not run together.
    const cells = [...gd.querySelectorAll('.heatmaplayer text')].map(box).filter(Boolean);
    for (let i = 0; i + 1 < cells.length; i++) {
      const a = cells[i], b = cells[i + 1];
      if (Math.abs(a.top - b.top) < 2 && hit(a, b)) { out.push(owner + ': heatmap cell numbers run together'); break; }
    }
  });
  return out;
}"""

# The toolbar of each visible figure, shown by hovering, against its title.
TOOLBAR_JS = """(plotId) => {
  const gd = document.querySelector('#' + plotId + ' .js-plotly-plot');
  const bar = gd && gd.querySelector('.modebar');
  const title = gd && gd.querySelector('.infolayer .gtitle');
  if (!bar || !title || getComputedStyle(bar).opacity === '0') { return null; }
  const hidden = (el) => { for (; el; el = el.parentElement) { if (getComputedStyle(el).display === 'none') return true; } return false; };
  if (hidden(bar)) { return null; }
  const a = bar.getBoundingClientRect(), b = title.getBoundingClientRect();
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}"""


# The hovered figure's toolbar has appeared, or presentation mode hides it for good.
TOOLBAR_SHOWN_JS = """(plotId) => {
  const bar = document.querySelector('#' + plotId + ' .js-plotly-plot .modebar');
  if (!bar) { return false; }
  for (let el = bar; el; el = el.parentElement) { if (getComputedStyle(el).display === 'none') { return true; } }
  return Number(getComputedStyle(bar).opacity) > 0;
}"""


# The header's controls (presentation mode, the language switch): inside the window, and over
# no button or field of the page (in presentation mode the header floats over the top row).
HEADER_JS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return r.width * r.height > 0 ? r : null; };
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const header = document.querySelector('#header');
  const own = [...document.querySelectorAll('#presentation label, #language label')].map(box).filter(Boolean);
  const out = [];
  own.forEach((r) => { if (r.right > innerWidth + 0.5 || r.left < -0.5) { out.push('header control outside the window: ' + Math.round(r.left) + '..' + Math.round(r.right)); } });
  document.querySelectorAll('button, input, select, textarea').forEach((el) => {
    if (header.contains(el) || !el.offsetParent || getComputedStyle(el).visibility === 'hidden'
        || el.closest('.visually-hidden, .sr-only')) { return; }      // gradio's hidden copies of the tab row
    const r = box(el); if (!r) { return; }
    if (own.some((o) => hit(o, r))) { out.push('header covers ' + (el.id || el.closest('[id]')?.id || el.tagName) + ' ' + (el.innerText || '').slice(0, 20)); }
  });
  return out;
}"""


@pytest.mark.parametrize("width,height", VIEWPORTS, ids=[f"{w}x{h}" for w, h in VIEWPORTS])
def test_figure_first_and_nothing_overlaps(browser, app_url, width, height):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = watch(browser.new_page(viewport={"width": width, "height": height}))
    page.set_default_timeout(TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app_url)
    wait_drawn(page, "lecture-plot-0")                   # the landing tab has drawn; its load is done
    problems = []
    for present in (False, True):
        if not present:                                  # the landing tab, before any other is opened
            problems += [f"{width}x{height} normal lecture: {o}" for o in page.evaluate(HEADER_JS)]
        set_presentation(page, present)
        for tab in TABS:
            open_tab(page, tab)
            if tab in DATA_TABS:                         # a data tab draws itself on first open
                wait_drawn(page, FIRST_PLOT[tab])
            # Every drawn figure restyled for the mode, then fonts and layout settle.
            page.wait_for_function("(size) => [...document.querySelectorAll('.js-plotly-plot')].every("
                                   "g => !g.offsetParent || (g.layout && g.layout.font && g.layout.font.size === size))",
                                   arg=22 if present else 13)
            wait_quiet(page, queue=False)
            page.evaluate("() => window.scrollTo(0, 0)")
            mode = f"{width}x{height} {'presentation' if present else 'normal'} {tab}"
            page.screenshot(path=str(ARTIFACTS / f"{tab}-{width}-{'present' if present else 'normal'}.png"))
            top = page.evaluate(f"() => document.querySelector('#{FIRST_PLOT[tab]}').getBoundingClientRect().top")
            # Inside the first screen, with room for at least the figure's title below it.
            if top > height - 160:
                problems.append(f"{mode}: first figure starts at {top:.0f} px")
            panel = page.evaluate("() => { const p = document.querySelector('#data-panel'); "
                                  "return !!p && getComputedStyle(p).display !== 'none' && p.offsetHeight > 0; }")
            if panel != (tab in DATA_TABS):
                problems.append(f"{mode}: data panel {'shown' if panel else 'hidden'}")
            problems += [f"{mode}: {o}" for o in page.evaluate(OVERLAPS_JS)]
            problems += [f"{mode}: {o}" for o in page.evaluate(HEADER_JS)]
            if tab in DATA_TABS:
                plot = page.locator(f"#{FIRST_PLOT[tab]} .js-plotly-plot")
                plot.scroll_into_view_if_needed()
                b = plot.bounding_box()
                page.mouse.move(b["x"] + b["width"] * 0.5, b["y"] + b["height"] * 0.5)
                page.wait_for_function(TOOLBAR_SHOWN_JS, arg=FIRST_PLOT[tab])
                if page.evaluate(TOOLBAR_JS, FIRST_PLOT[tab]):
                    problems.append(f"{mode}: the plot toolbar covers the title")
                page.mouse.move(1, 1)
    # Last, the lecture in presentation mode (its tab row then makes way for the slide), where
    # the header floats over the deck's own row of buttons.
    open_tab(page, "lecture")
    wait_quiet(page, queue=False)
    page.screenshot(path=str(ARTIFACTS / f"lecture-{width}-present.png"))
    problems += [f"{width}x{height} presentation lecture: {o}" for o in page.evaluate(HEADER_JS)]
    page.close()
    assert not problems, "\n".join(problems)
    assert not errors, errors


COLOURBARS_JS = """(plotId) => {
  // Every colour bar's fill must point at a gradient of this very document.
  const here = window.location.href.split('#')[0];
  const fills = [...document.querySelectorAll('#' + plotId + ' .colorbar .cbfill')].map(el => el.style.fill);
  return fills.map((fill) => {
    const m = /url\\(["']?(.*?)#([^"')]+)["']?\\)/.exec(fill || '');
    return !!m && (m[1] === '' || m[1] === here) && !!document.getElementById(m[2]);
  });
}"""


def resize(page, viewport: dict):
    """A new window size, and until the page has taken it in and finished what it started
    then (the page's own relayouts after a resize run on timers: tests/helpers/page.py)."""
    page.set_viewport_size(viewport)
    page.wait_for_function("([w, h]) => window.innerWidth === w && window.innerHeight === h",
                           arg=[viewport["width"], viewport["height"]])
    wait_quiet(page, queue=False)


def test_colour_bars_keep_their_colours_after_a_resize(browser, app_url):
    page = watch(browser.new_page(viewport={"width": 1600, "height": 900}))
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app_url + "?tab=maps")
    wait_drawn(page, "maps-plot")
    page.locator("#maps-causal label").click()            # redraws and changes the address
    page.wait_for_function("() => location.search.includes('causal=1')")
    wait_quiet(page, queue=False)
    resize(page, {"width": 1280, "height": 720})
    fills = page.evaluate(COLOURBARS_JS, "maps-plot")
    assert fills and all(fills), fills
    open_tab(page, "state")
    wait_drawn(page, "state-step")
    wait_quiet(page, queue=False)
    resize(page, {"width": 1500, "height": 800})
    fills = page.evaluate(COLOURBARS_JS, "state-step")
    assert fills and all(fills), fills
    page.close()


PLOT_TITLE_JS = """(id) => { const g = document.querySelector('#' + id + ' .js-plotly-plot');
  return g && g.layout && g.layout.title ? (g.layout.title.text || '') + '|' +
         ((g.layout.title.subtitle || {}).text || '') : ''; }"""


# Where a piece of text is drawn inside an element (the text itself, not its wrapper).
TEXT_BOX_JS = """([id, text]) => {
  const walker = document.createTreeWalker(document.getElementById(id), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.textContent.includes(text)) {
      const range = document.createRange(); range.selectNodeContents(node);
      const r = range.getBoundingClientRect(); return {top: r.top, bottom: r.bottom};
    }
  }
  return null;
}"""


def test_enter_and_examples_redraw_and_tables_have_headers(browser, app_url):
    page = watch(browser.new_page(viewport={"width": 1280, "height": 720}))
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app_url + "?tab=maps")
    wait_drawn(page, "maps-plot")
    wait_quiet(page, queue=False)
    box = page.locator("#text textarea")
    assert "Enter" in box.get_attribute("placeholder") and "Shift+Enter" in box.get_attribute("placeholder")
    before = page.evaluate(PLOT_TITLE_JS, "maps-plot")
    box.fill("Kernels all the way down")
    box.press("Shift+Enter")                                  # a new line, no redraw
    assert "\n" in box.input_value()
    box.press("Backspace")
    box.press("Enter")                                        # redraws
    page.wait_for_function(f"([id, before]) => ({PLOT_TITLE_JS})(id) !== before", arg=["maps-plot", before])
    assert "\n" not in box.input_value()
    # Choosing an example draws it in the open tab (here the state tab).
    open_tab(page, "state")
    wait_drawn(page, "state-step")
    wait_quiet(page, queue=False)
    before = page.evaluate("() => document.querySelector('#state-t input[type=number]').value + '|' + "
                           "JSON.stringify(document.querySelector('#state-step .js-plotly-plot').layout.annotations.map(a => a.text))")
    page.locator("#examples input").click()
    page.locator("#examples [role=option]").nth(1).click()
    page.wait_for_function("(before) => document.querySelector('#state-t input[type=number]').value + '|' + "
                           "JSON.stringify(document.querySelector('#state-step .js-plotly-plot').layout.annotations"
                           ".map(a => a.text)) !== before", arg=before)
    assert "cat sat" in page.locator("#text textarea").input_value()
    # Tables not yet filled show their real headers, never "1 2 3".
    for tab, table in (("complexity", "cx-table"), ("learn", "learn-table"), ("learn", "hybrid-table")):
        open_tab(page, tab)
        headers = page.locator(f"#{table} thead th").all_inner_texts()
        cleaned = [h.strip() for h in headers if h.strip()]
        assert cleaned and cleaned[:3] != ["1", "2", "3"], (table, headers)
    # The learn tab's upload box shows its whole drop zone below its label.
    upload = page.locator("#learn-upload")
    upload.scroll_into_view_if_needed()
    outer = upload.bounding_box()
    label = page.locator("#learn-upload [data-testid=block-label]").bounding_box()
    for text in ("Drop File Here", "Click to Upload"):
        inner = page.evaluate(TEXT_BOX_JS, ["learn-upload", text])
        assert inner, text
        assert inner["top"] >= label["y"] + label["height"] - 1, (text, inner, label)
        assert inner["bottom"] <= outer["y"] + outer["height"] + 1, (text, inner, outer)
    page.close()


def query_of(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def link_value(page, tab_id: str) -> str:
    return page.locator(f"#tab-{tab_id} .view-link textarea").input_value()


def test_links_hold_every_tab(browser, app_url):
    page = watch(browser.new_page(viewport={"width": 1280, "height": 720}))
    page.set_default_timeout(TIMEOUT_MS)
    # An opened link draws its tab and fills its own link box.
    page.goto(app_url + "?tab=state&src=random&preset=local&n=24&d=8&layer=0&head=0&kind=retnet&t=7")
    wait_drawn(page, "state-step")
    page.wait_for_function("() => document.querySelector('#tab-state .view-link textarea').value.includes('tab=state')")
    assert query_of(link_value(page, "state"))["t"] == "7"
    # Presentation mode goes into the address and the link at once, without a redraw.
    page.locator("#presentation label").click()
    page.wait_for_function("() => new URLSearchParams(location.search).get('present') === '1'")
    page.wait_for_function("() => document.querySelector('#tab-state .view-link textarea').value.includes('present=1')")
    assert query_of(page.url)["tab"] == "state"
    # Opening another tab puts that tab into the address.
    open_tab(page, "complexity")
    page.wait_for_function("() => new URLSearchParams(location.search).get('tab') === 'complexity'")
    # A complexity link restores its controls and draws.
    page.goto(app_url + "?tab=complexity&nmin=64&nmax=128&points=2&cd=16&repeats=1&ccausal=0"
              "&methods=sdpa,linear_parallel")
    wait_drawn(page, "cx-plot")
    page.wait_for_function("() => document.querySelector('#tab-complexity .view-link textarea').value"
                           ".includes('tab=complexity')")
    q = query_of(link_value(page, "complexity"))
    assert (q["nmin"], q["nmax"], q["cd"], q["methods"]) == ("64", "128", "16", "sdpa,linear_parallel")
    # A learn link restores the learn controls and writes them back into its link box.
    page.goto(app_url + "?tab=learn&llayer=4&lhead=5&lm=32&steps=70&hmode=chosen+layers&hlayers=1,4&hm=48")
    page.wait_for_function("() => document.querySelector('#tab-learn .view-link textarea') && "
                           "document.querySelector('#tab-learn .view-link textarea').value.includes('tab=learn')")
    assert page.locator("#learn-steps input[type=number]").input_value() == "70"
    assert page.locator("#learn-layer input[type=number]").input_value() == "4"
    q = query_of(link_value(page, "learn"))
    assert (q["llayer"], q["lhead"], q["lm"], q["steps"], q["hlayers"], q["hm"]) == ("4", "5", "32", "70", "1,4", "48")
    assert q["hmode"] == "chosen layers"
    page.close()
