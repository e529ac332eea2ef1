"""The rest of the app in Chinese, in a real browser: an English browser opening a maps link
with ``lang=zh`` sees the maps tab's labels, button, info lines, export band and the data
panel in Chinese, and none of their English; the address and the link keep ``lang=zh``; the
language switch brings the English back, into the address too.
"""

from __future__ import annotations

import pytest

from explorer.ui import i18n
from helpers.page import TIMEOUT_MS, Watched

pytestmark = pytest.mark.browser

# Labels of the maps tab and what surrounds it, by the element that shows them.
MAPS_LABELS = {
    "#tab-maps-button": "tab_maps",
    "#maps-run": "maps_run",
    "#maps-choice": "maps_maps",
    "#maps-causal": "maps_causal",
    "#maps-window": "maps_window",
    "#maps-seed": "maps_seed",
    "#maps-export": "export_maps",
    "#tab-maps .view-link": "view_link",
    "#text": "panel_text",
    "#data-panel": "panel_title",
}
TEXT_JS = "(sel) => { const el = document.querySelector(sel); return el ? el.innerText : null; }"


def labels_read(page, lang: str) -> dict:
    """Which of the maps tab's labels are not (yet) shown in ``lang``: selector -> what is shown."""
    missing = {}
    for selector, key in MAPS_LABELS.items():
        shown = page.evaluate(TEXT_JS, selector)
        if shown is None or i18n.STRINGS[lang][key] not in shown:
            missing[selector] = shown
    return missing


def wait_labels(page, lang: str):
    page.wait_for_function(
        "(pairs) => pairs.every(([sel, text]) => { const el = document.querySelector(sel); "
        "return el && el.innerText.includes(text); })",
        arg=[[sel, i18n.STRINGS[lang][key]] for sel, key in MAPS_LABELS.items()], timeout=TIMEOUT_MS)


def test_maps_tab_in_chinese_and_back(browser, app_url):
    context = browser.new_context(viewport={"width": 1600, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    try:
        page.goto(app_url + "?tab=maps&lang=zh")
        page.wait_for_selector("#maps-plot .js-plotly-plot .main-svg")
        try:
            wait_labels(page, "zh")
        except Exception:
            pytest.fail(f"maps tab labels not in Chinese: {labels_read(page, 'zh')}")
        # The maps' own address and link box keep the language.
        page.wait_for_function("() => new URLSearchParams(location.search).get('tab') === 'maps' && "
                               "new URLSearchParams(location.search).get('lang') === 'zh'")
        page.wait_for_function("() => document.querySelector('#tab-maps .view-link textarea').value.includes('lang=zh')")
        # The placeholder and the info lines too, and no English label left on the tab.
        assert page.locator("#text textarea").get_attribute("placeholder") == i18n.ZH["panel_text_placeholder"]
        tab_text = page.evaluate(TEXT_JS, "#tab-maps")
        for key in ("maps_run", "maps_maps_info", "maps_window", "maps_seed_info", "export_maps",
                    "maps_metrics_help", "view_link"):
            assert i18n.EN[key] not in tab_text, key
            assert i18n.ZH[key] in tab_text, key
        # The switch brings English back, and the address keeps the choice.
        page.locator("#language label", has_text="English").click()
        wait_labels(page, "en")
        page.wait_for_function("() => new URLSearchParams(location.search).get('lang') === 'en'")
        page.wait_for_function("() => document.querySelector('#tab-maps .view-link textarea').value.includes('lang=en')")
        assert page.locator("#text textarea").get_attribute("placeholder") == i18n.EN["panel_text_placeholder"]
        app.check_clean()
    finally:
        context.close()
