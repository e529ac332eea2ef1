"""The maps, quality and complexity tabs in Chinese in a real browser at 1600×900: an English
browser opening a Chinese link sees the whole tab row in Chinese at once (tabs not visited
included), and every text of the tab (labels, figures, tables, notices, the glossary) holds
no English word outside names, units and the text's own tokens. A Chinese browser gets the
same without lang= in the link; the language switch brings English back into the figures.
Screenshots: test-artifacts/i18n-<tab>-<lang>.png.
"""

from __future__ import annotations

import pytest

from explorer.ui import i18n
from helpers.page import ARTIFACTS, TEXTS_JS, TIMEOUT_MS, Watched, wait_quiet
from helpers.words import english_words

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1600, "height": 900}
# Each tab's link (small enough to draw in seconds) and the plot that says it has drawn.
TABS = {
    "maps": ("?tab=maps", "maps-plot"),
    "quality": ("?tab=quality&seeds=10", "quality-overview"),
    "complexity": ("?tab=complexity&nmin=64&nmax=256&points=2&repeats=1&cd=16", "cx-claim"),
}

TAB_ROW_JS = """(keys) => keys.map((k) => {
  const b = document.getElementById(`tab-${k}-button`);
  return b ? b.innerText.trim() : null;
})"""


def open_tab(browser, app_url, tab: str, lang: str, locale: str, with_lang: bool = True):
    context = browser.new_context(viewport=VIEWPORT, locale=locale)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    watched = Watched(page)
    query, plot = TABS[tab]
    page.goto(app_url + query + (f"&lang={lang}" if with_lang else ""))
    page.wait_for_selector(f"#{plot} .js-plotly-plot .main-svg", timeout=TIMEOUT_MS)
    wait_quiet(page, queue=False)                 # late redraws and toasts
    return context, watched


def tab_row(page) -> list:
    return page.evaluate(TAB_ROW_JS, list(i18n.TAB_KEYS))


def english_on(page, selector: str) -> dict:
    return {text: english_words(text) for text in page.evaluate(TEXTS_JS, selector) if english_words(text)}


def wait_tab_row(page, lang: str):
    expected = [i18n.STRINGS[lang][f"tab_{key}"] for key in i18n.TAB_KEYS]
    try:
        page.wait_for_function(f"(want) => JSON.stringify(({TAB_ROW_JS})({list(i18n.TAB_KEYS)!r})) === "
                               "JSON.stringify(want)", arg=expected, timeout=TIMEOUT_MS)
    except Exception:
        pytest.fail(f"tab row not in {lang}: {tab_row(page)}")


@pytest.mark.parametrize("tab", list(TABS))
def test_tab_in_chinese_has_no_english(browser, app_url, tab):
    context, app = open_tab(browser, app_url, tab, "zh", "en-US")
    page = app.page
    try:
        wait_tab_row(page, "zh")                  # every tab, the ones not visited too, at once
        if tab == "maps":                         # the glossary, opened
            page.locator("#tab-maps .label-wrap", has_text=i18n.ZH["maps_metrics_help"]).click()
            page.wait_for_selector("#maps-glossary", state="visible")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"i18n-{tab}-zh.png"), full_page=True)
        found = english_on(page, f"#tab-{tab}")
        assert not found, list(found.items())[:12]
        app.check_clean()
    finally:
        context.close()


def test_a_chinese_browser_gets_chinese_tabs_and_the_switch_brings_english_back(browser, app_url):
    context, app = open_tab(browser, app_url, "maps", "zh", "zh-CN", with_lang=False)
    page = app.page
    try:
        wait_tab_row(page, "zh")
        assert not english_on(page, "#tab-maps")
        page.locator("#language label", has_text="English").click()
        wait_tab_row(page, "en")
        page.wait_for_function("() => { const g = document.querySelector('#maps-plot .js-plotly-plot'); "
                               "return g && g.layout && /layer/.test(g.layout.title.text); }", timeout=TIMEOUT_MS)
        wait_quiet(page, queue=False)
        page.screenshot(path=str(ARTIFACTS / "i18n-maps-en.png"), full_page=True)
        app.check_clean()
    finally:
        context.close()
