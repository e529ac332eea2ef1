"""The maps tab with the mechanisms at 1280×720, in English and in Chinese: a link naming them
draws their panels beside softmax (their error panels against causal softmax), their settings
come back into the drawer, the Chinese page holds no English word outside names, and a link
to the causal model without causal= opens with Causal ticked.
Screenshots: test-artifacts/maps-mechanisms-<lang>.png.
"""

from __future__ import annotations

import pytest

from explorer import catalog
from explorer.text import say
from helpers.page import ARTIFACTS, TEXTS_JS, TIMEOUT_MS, Watched, wait_quiet
from helpers.words import english_words

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1280, "height": 720}
LINK = "?tab=maps&maps=softmax,elu%2B1&mech=retnet,gla,deltanet&mgates=seeded&mseed=2&mbeta=0.5"
# The mechanisms the link draws, as the page names them: (words, qualifier words or None).
LABELS = (("state.kind.retnet", None), ("state.kind.gla", "maps.gates_seeded"), ("state.kind.deltanet", None))


def _open(chromium, app_url, query):
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    watched = Watched(page)
    page.goto(app_url + query)
    page.wait_for_selector("#maps-plot .js-plotly-plot .main-svg", timeout=TIMEOUT_MS)
    wait_quiet(page, queue=False)
    return context, watched


def _panel_titles(page) -> list:
    return page.evaluate("() => (document.querySelector('#maps-plot .js-plotly-plot').layout.annotations || [])"
                         ".map((a) => a.text)")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_maps_tab_draws_the_mechanisms_at_1280x720(chromium, app_url, lang):
    context, app = _open(chromium, app_url, LINK + f"&lang={lang}")
    page = app.page
    try:
        titles = _panel_titles(page)
        against = say("maps.causal_softmax", lang)
        for key, qualifier in LABELS:
            name = say(key, lang) if qualifier is None else \
                say("common.qualified", lang, name=say(key, lang), qualifier=say(qualifier, lang))
            assert any(t.startswith(name) for t in titles), (name, titles)
            assert any(t.startswith(f"{name} − {against}") for t in titles), (name, titles)
        # The drawer holds the link's settings (its fold opened: a closed one is not rendered).
        page.set_default_timeout(30_000)
        page.locator("#maps-mechanism-settings .label-wrap").click()
        wait_quiet(page, queue=False)
        assert page.locator("#maps-mechanism-seed input").input_value() == "2"
        assert page.locator("#maps-beta input[type=number]").input_value() == "0.5"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"maps-mechanisms-{lang}.png"), full_page=False)
        page.screenshot(path=str(ARTIFACTS / f"maps-mechanisms-{lang}-full.png"), full_page=True)
        if lang == "zh":
            found = {t: english_words(t) for t in page.evaluate(TEXTS_JS, "#tab-maps") if english_words(t)}
            assert not found, list(found.items())[:12]
        app.check_clean()
    finally:
        context.close()


@pytest.mark.skipif(not catalog.causal_model_installed(), reason="SmolLM2-135M is not installed")
def test_a_link_to_the_causal_model_without_causal_opens_causal(chromium, app_url):
    context, app = _open(chromium, app_url, f"?tab=maps&model={catalog.CAUSAL_MODEL['name']}&layer=3&head=4")
    page = app.page
    try:
        assert page.locator("#maps-causal input").is_checked()
        assert page.locator("#maps-badge").inner_text().strip().startswith("✓")
        assert "causal=1" in page.url
        app.check_clean()
    finally:
        context.close()
