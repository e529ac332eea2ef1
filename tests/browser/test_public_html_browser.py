"""No HTML from a link: a value a link puts into a pop-up, a notice or an
error reads as the text it is, and the page asks no other host for anything (its
Content-Security-Policy refuses remote images, forms and scripts)."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import pytest

from test_browser import TIMEOUT_MS

FORM = "<form action=//evil.example><input name=p type=password placeholder=Password>"
PIXEL = "<img src=https://evil.example/pixel.png>"
LOGIN = "<a href=https://evil.example/login>Session expired: sign in</a>"
LINKS = [("seed", FORM), ("model", PIXEL), ("model", LOGIN)]

# Every toast's text, and whether any element the values describe exists in the page.
TOASTS_JS = "() => Array.from(document.querySelectorAll('[data-testid=\"toast-body\"]')).map(t => t.innerText)"
INJECTED_JS = """() => Boolean(document.querySelector(
  'input[type=password], img[src*="evil.example"], a[href*="evil.example"], form[action*="evil.example"]'))"""


@pytest.fixture(scope="module")
def browser(chromium):
    return chromium


@pytest.mark.parametrize("key,value", LINKS, ids=["form", "pixel", "login"])
def test_a_links_html_reads_as_text_and_nothing_leaves_for_another_host(browser, app_url, key, value):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    elsewhere: list[str] = []
    own_host = urlsplit(app_url).hostname

    def watch(route):
        host = urlsplit(route.request.url).hostname
        if host and host != own_host:
            elsewhere.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", watch)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{app_url}?tab=maps&{key}={quote(value)}")
        page.wait_for_selector("#tab-maps-button[aria-selected=true], button[aria-selected=true]")
        seen: list[str] = []
        injected = False
        for _ in range(24):                 # the restore's notices, then the draw's own answer
            for text in page.evaluate(TOASTS_JS):
                if text not in seen:
                    seen.append(text)
            injected = injected or page.evaluate(INJECTED_JS)
            if any(value[:12] in t for t in seen) and _ > 8:
                break
            page.wait_for_timeout(500)
        assert not injected, seen
        assert not elsewhere, elsewhere
        # The value is quoted as text (cut to the echo limit, so its start).
        assert any(value[:12] in t for t in seen), seen
    finally:
        context.close()


def test_the_page_and_its_figures_draw_under_the_policy(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    try:
        page.goto(f"{app_url}?tab=maps")
        page.wait_for_selector("#maps-plot .js-plotly-plot .main-svg")
        page.wait_for_timeout(1000)
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
