"""The language switch on a drawn quality or complexity tab says the drawn view again: the
figures, the table and the notices change language at once, and what was measured stays (the
curves' numbers are the same). Screenshots: test-artifacts/switch-<tab>-<lang>-<width>.png."""

from __future__ import annotations

import re

import pytest

from helpers.page import ARTIFACTS, TIMEOUT_MS, Watched, wait_quiet
from helpers.words import english_words

pytestmark = pytest.mark.browser

CJK = re.compile(r"[\u4e00-\u9fff]")
LINKS = {"quality": ("?tab=quality&src=random&preset=clustered&n=48&d=16&layer=0&head=0&seeds=10", "quality-plot"),
         "complexity": ("?tab=complexity&nmin=64&nmax=128&points=2&repeats=1&cd=16", "cx-plot")}
FIGURE_JS = """(id) => { const g = document.querySelector(`#${id} .js-plotly-plot`);
  return g && g.layout ? {title: g.layout.title.text, y: g.data.map((t) => Array.from(t.y || []))} : null; }"""
TITLE_IS = """([id, chinese]) => { const g = document.querySelector(`#${id} .js-plotly-plot`);
  return g && g.layout && /[\\u4e00-\\u9fff]/.test(g.layout.title.text) === chinese; }"""


@pytest.mark.parametrize("tab", list(LINKS))
# One window: the projector's 1280×720 (the deck walk and the tab tests cover 1920×1080).
@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 720}])
def test_the_switch_says_the_drawn_tab_again(browser, app_url, tab, viewport):
    query, plot = LINKS[tab]
    context = browser.new_context(viewport=viewport, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        page.goto(app_url + query + "&lang=zh")
        page.wait_for_function(TITLE_IS, arg=[plot, True], timeout=TIMEOUT_MS)
        wait_quiet(page, queue=False)
        chinese = page.evaluate(FIGURE_JS, plot)
        page.screenshot(path=str(ARTIFACTS / f"switch-{tab}-zh-{viewport['width']}.png"), full_page=True)
        page.locator("#language label", has_text="English").click()
        page.wait_for_function(TITLE_IS, arg=[plot, False], timeout=TIMEOUT_MS)
        wait_quiet(page, queue=False)
        english = page.evaluate(FIGURE_JS, plot)
        page.screenshot(path=str(ARTIFACTS / f"switch-{tab}-en-{viewport['width']}.png"), full_page=True)
        assert english["y"] == chinese["y"], "the switch measured the view again"
        texts = page.evaluate("(sel) => document.querySelector(sel).innerText", f"#tab-{tab}")
        assert not CJK.search(texts), [line for line in texts.split("\n") if CJK.search(line)][:5]
        page.locator("#language label", has_text="中文").click()
        page.wait_for_function(TITLE_IS, arg=[plot, True], timeout=TIMEOUT_MS)
        wait_quiet(page, queue=False)
        assert page.evaluate(FIGURE_JS, plot) == chinese
        texts = page.evaluate("(sel) => document.querySelector(sel).innerText", f"#tab-{tab}")
        assert not [w for line in texts.split("\n") for w in english_words(line)
                    if not line.startswith("http")][:5]
        app.check_clean()
    finally:
        context.close()
