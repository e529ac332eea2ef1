"""A visitor whose connection to the queue drops sees it said, with a retry: gradio alone only
logs "Connection errored out" to the console and the result never arrives.

The page's connection to the queue is cut as a draw starts, as a busy proxy or a flaky network
does: its join, and its event stream when it opens one (it may still hold one open, idle, from an
earlier draw, which a cut cannot reach)."""

from __future__ import annotations

import pytest

from helpers.page import TIMEOUT_MS, wait_quiet, watch

pytestmark = pytest.mark.browser

NOTICE = "#explorer-connection-lost"


def test_a_dropped_event_stream_says_so_and_offers_a_retry(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    watch(context)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{app_url}?tab=maps")
        page.wait_for_selector("#maps-run")
        wait_quiet(page)
        assert page.query_selector(NOTICE) is None          # a page that is answered says nothing
        cut = []
        page.route("**/queue/**", lambda route: cut.append(route.request.url) or route.abort("connectionreset"))
        page.click("#maps-run")
        notice = page.wait_for_selector(NOTICE)             # waits on the page, as long as the machine needs
        assert cut
        assert "connection to the server dropped" in notice.inner_text()
        page.unroute("**/queue/**")
        with page.expect_navigation():
            page.click(f"{NOTICE} button")                   # the retry opens the view again
        page.wait_for_selector("#maps-run")
        wait_quiet(page)
        assert page.query_selector(NOTICE) is None
    finally:
        context.close()
