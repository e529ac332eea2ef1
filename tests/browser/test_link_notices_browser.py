"""Links in a real browser: out of range is clamped with one notice and the page agrees with
its figure; a link to the file source says once why nothing is drawn; the page logs no
i18n warnings and its screen-reader status never reads a raw message key."""

from __future__ import annotations

import pytest

from helpers.page import TIMEOUT_MS, toasts, wait_quiet, wait_toast, watch

pytestmark = pytest.mark.browser

# Everything written into the page's live regions (what a screen reader announces).
LIVE_JS = """
window.__live = [];
new MutationObserver((records) => { for (const r of records) {
  const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
  const region = el && el.closest && el.closest('[aria-live], [role=status], [role=alert]');
  if (region) { window.__live.push(region.textContent.trim()); }
}}).observe(document, {subtree: true, childList: true, characterData: true});
"""


class Page:
    """A page opened on a link, with its console messages and every toast it showed (kept
    from before the page's scripts run, so a toast gradio has removed since is still read)."""

    def __init__(self, browser, url):
        self.context = browser.new_context(viewport={"width": 1600, "height": 900}, locale="en-US")
        self.page = watch(self.context.new_page())
        self.page.set_default_timeout(TIMEOUT_MS)
        self.console: list[str] = []
        self.page.on("console", lambda m: self.console.append(m.text))
        self.page.add_init_script(LIVE_JS)
        self.page.goto(url)

    def close(self):
        self.context.close()


def _last_token_of_chapter_1() -> str:
    """The last token of the default sentence as chapter 1 reads it (SmolLM2 when it is
    installed, else the embedded MiniLM): where a query past the end is clamped to."""
    from explorer.lecture import text
    from explorer.sources.text import text_shape
    from explorer.lecture.view import default_model
    return str(text_shape(text.DEFAULT_TEXT, default_model(1))[0] - 1)


def test_lecture_links_clamp_with_a_notice_and_the_slider_agrees(browser, app_url):
    last = _last_token_of_chapter_1()
    page = Page(browser, app_url + "?tab=lecture&ch=1&c_query=99999")
    try:
        page.page.wait_for_selector("#lecture-plot-0 .js-plotly-plot .main-svg")
        page.page.wait_for_function(
            "(last) => (document.querySelector('#lecture-1-query input[type=number]') || {}).value === last", arg=last)
        wait_toast(page.page, "Link parameter c_query = 99,999 is outside 0..511; using 511.")
        # The figure answers the query the view used (the default sentence's last token); the slider,
        # set from that view, says the same, and stays there once the page's events have finished.
        wait_quiet(page.page, queue=False)        # the next chapter computed in the background aside
        assert page.page.locator("#lecture-1-query input[type=number]").input_value() == last
    finally:
        page.close()

    page = Page(browser, app_url + "?tab=lecture&ch=99")
    try:
        page.page.wait_for_function("() => (document.querySelector('#lecture-chapter input') || {}).value"
                                    " && document.querySelector('#lecture-chapter input').value.startsWith('6')")
        wait_toast(page.page, "Link parameter ch = 99 is outside 0..6; using 6.")
    finally:
        page.close()


def test_a_file_link_says_once_why_nothing_is_drawn(browser, app_url):
    page = Page(browser, app_url + "?tab=maps&src=file")
    try:
        page.page.wait_for_selector("#tab-maps-button[aria-selected=true], button[aria-selected=true]")
        wait_toast(page.page, "A link cannot carry a file")
        wait_quiet(page.page)                        # every event of the load has finished: no second toast
        shown = toasts(page.page)
        assert len(shown) == 1 and "A link cannot carry a file" in shown[0], shown
        assert not any("no file uploaded" in t for t in shown)
    finally:
        page.close()


def test_no_i18n_warnings_and_no_raw_status_keys(browser, app_url):
    page = Page(browser, app_url + "?tab=maps")
    try:
        page.page.wait_for_selector("#maps-plot .js-plotly-plot .main-svg")
        # The page's last events (the data summary, the link) may still be running: wait until
        # the screen-reader status has said the draw finished and the page is quiet, then read
        # everything it logged and said.
        page.page.wait_for_function("() => (window.__live || []).some(t => t.includes('Complete'))")
        wait_quiet(page.page, queue=False)     # the draw has said it finished; its stream may linger
        i18n_warnings = [m for m in page.console if "svelte-i18n" in m]
        assert not i18n_warnings, i18n_warnings[:3]
        live = page.page.evaluate("() => window.__live")
        assert "Complete" in live, live                     # the finished draw, in words
        assert not any("common." in text for text in live), live
    finally:
        page.close()


# Every address the page writes, from before its scripts run.
ADDRESSES_JS = """(() => { window.__addresses = [];
  const replace = history.replaceState.bind(history);
  history.replaceState = (state, title, url) => { window.__addresses.push(String(url)); return replace(state, title, url); };
})()"""


def test_a_link_keeps_its_address_until_its_tab_has_drawn(browser, app_url):
    """A link to another tab than the lecture (what "Go deeper" opens) is never rewritten to
    the default tab, nor stripped of its settings, while the page restores and draws it."""
    link = "?tab=quality&layer=3&head=mean&m=64&lang=en"
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    try:
        page = watch(context.new_page())
        page.set_default_timeout(TIMEOUT_MS)
        page.add_init_script(ADDRESSES_JS)
        page.goto(app_url + link)
        page.wait_for_function("() => (window.__addresses || []).some((a) => a.includes('src=text'))")
        wait_quiet(page)
        written = page.evaluate("window.__addresses")
        assert written and all("tab=quality" in a for a in written), written
        before_draw = written[:next(i for i, a in enumerate(written) if "src=text" in a)]
        assert all("layer=3" in a and "m=64" in a for a in before_draw), written
    finally:
        context.close()
