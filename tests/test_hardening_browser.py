"""Links in a real browser: out of range is clamped with one notice and the page agrees with
its figure; a link to the file source says once why nothing is drawn; the page logs no
i18n warnings and its screen-reader status never reads a raw message key."""

from __future__ import annotations

import pytest

from test_browser import TIMEOUT_MS

# Everything written into the page's live regions (what a screen reader announces).
LIVE_JS = """
window.__live = [];
new MutationObserver((records) => { for (const r of records) {
  const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
  const region = el && el.closest && el.closest('[aria-live], [role=status], [role=alert]');
  if (region) { window.__live.push(region.textContent.trim()); }
}}).observe(document, {subtree: true, childList: true, characterData: true});
"""
TOASTS_JS = "() => Array.from(document.querySelectorAll('[data-testid=\"toast-body\"]')).map(t => t.innerText)"


@pytest.fixture(scope="module")
def browser(chromium):
    return chromium


class Page:
    """A page opened on a link, with its console messages and every toast it showed."""

    def __init__(self, browser, url):
        self.context = browser.new_context(viewport={"width": 1600, "height": 900}, locale="en-US")
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.console: list[str] = []
        self.page.on("console", lambda m: self.console.append(m.text))
        self.page.add_init_script(LIVE_JS)
        self.toasts: list[str] = []
        self.page.goto(url)

    def watch(self, ms: int) -> list[str]:
        """Every distinct toast shown until now and over ``ms`` more milliseconds (gradio
        removes them after a while)."""
        for _ in range(max(1, ms // 500)):
            for text in self.page.evaluate(TOASTS_JS):
                if text not in self.toasts:
                    self.toasts.append(text)
            self.page.wait_for_timeout(500)
        return self.toasts

    def close(self):
        self.context.close()


def test_lecture_links_clamp_with_a_notice_and_the_slider_agrees(browser, app_url):
    page = Page(browser, app_url + "?tab=lecture&ch=1&c_query=99999")
    try:
        page.page.wait_for_selector("#lecture-plot-0 .js-plotly-plot .main-svg")
        toasts = page.watch(500)
        page.page.wait_for_function(
            "() => (document.querySelector('#lecture-query input[type=number]') || {}).value === '15'")
        toasts = page.watch(1500)
        assert any("Link parameter c_query = 99,999 is outside 0..511; using 511." in t for t in toasts), toasts
        # The figure answers the query the view used (15, the default sentence's last token); the slider,
        # set from that view, says the same, and stays there.
        page.page.wait_for_timeout(1000)
        assert page.page.locator("#lecture-query input[type=number]").input_value() == "15"
    finally:
        page.close()

    page = Page(browser, app_url + "?tab=lecture&ch=99")
    try:
        page.page.wait_for_function("() => (document.querySelector('#lecture-chapter input') || {}).value"
                                    " && document.querySelector('#lecture-chapter input').value.startsWith('6')")
        toasts = page.watch(1500)
        assert any("Link parameter ch = 99 is outside 0..6; using 6." in t for t in toasts), toasts
    finally:
        page.close()


def test_a_file_link_says_once_why_nothing_is_drawn(browser, app_url):
    page = Page(browser, app_url + "?tab=maps&src=file")
    try:
        page.page.wait_for_selector("#tab-maps-button[aria-selected=true], button[aria-selected=true]")
        toasts = page.watch(8000)
        assert len(toasts) == 1 and "A link cannot carry a file" in next(iter(toasts)), toasts
        assert not any("no file uploaded" in t for t in toasts)
    finally:
        page.close()


def test_no_i18n_warnings_and_no_raw_status_keys(browser, app_url):
    page = Page(browser, app_url + "?tab=maps")
    try:
        page.page.wait_for_selector("#maps-plot .js-plotly-plot .main-svg")
        page.page.wait_for_timeout(1500)
        i18n_warnings = [m for m in page.console if "svelte-i18n" in m]
        assert not i18n_warnings, i18n_warnings[:3]
        # The page's last events (the data summary, the link) may still be running: wait until
        # the screen-reader status has said the draw finished, then read everything it said.
        page.page.wait_for_function("() => (window.__live || []).some(t => t.includes('Complete'))", timeout=60000)
        live = page.page.evaluate("() => window.__live")
        assert "Complete" in live, live                     # the finished draw, in words
        assert not any("common." in text for text in live), live
    finally:
        page.close()
