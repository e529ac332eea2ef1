"""The state tab's recall (MQAR) section in a real browser, in English and in Chinese, on a
desktop (1600×1000) and on a projector (1280×720, presentation mode): opening it draws the
shipped figure, one short training adds its ringed point and the heatmap of what its
questions read, and the Chinese page shows no English word outside names and units.
Screenshots: test-artifacts/mqar-*.png.
"""

from __future__ import annotations

import pytest

from explorer.text import say
from helpers.page import ARTIFACTS, TIMEOUT_MS, Watched, wait_quiet
from helpers.words import english_words

pytestmark = pytest.mark.browser

SCREENS = [("en", 1600, 1000, False), ("zh", 1600, 1000, False), ("en", 1280, 720, True), ("zh", 1280, 720, True)]
LOCALES = {"en": "en-US", "zh": "zh-CN"}
STEPS = 20
PLOTS = ("mqar-figure", "mqar-inspect")

FIGURE_TEXT_JS = """(id) => { const g = document.querySelector('#' + id + ' .js-plotly-plot');
    if (!g || !g.layout) return [];
    const L = g.layout, out = [L.title && L.title.text, L.title && L.title.subtitle && L.title.subtitle.text];
    for (const [k, v] of Object.entries(L)) { if (/^[xy]axis/.test(k) && v && v.title) out.push(v.title.text); }
    (L.annotations || []).forEach(a => out.push(a.text));
    (g.data || []).forEach(t => { out.push(t.name); if (t.colorbar && t.colorbar.title) out.push(t.colorbar.title.text); });
    return out.filter(x => x); }"""


@pytest.mark.parametrize("lang, width, height, present", SCREENS)
def test_the_recall_section_draws_and_trains_a_point(browser, app_url, lang, width, height, present):
    context = browser.new_context(viewport={"width": width, "height": height}, locale=LOCALES[lang])
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    try:
        page.goto(app_url + f"?tab=state&lang={lang}" + ("&present=1" if present else ""))
        page.wait_for_selector("#state-step .js-plotly-plot")
        page.locator("#mqar-section > button").first.click()
        title = say("mqar.title", lang)
        page.wait_for_function("([id, text]) => { const g = document.querySelector('#' + id + ' .js-plotly-plot');"
                               " return g && g.layout && g.layout.title.text.replace(/\\s/g, '')"
                               ".startsWith(text.replace(/\\s/g, '').slice(0, 8)); }",
                               arg=["mqar-figure", title], timeout=TIMEOUT_MS)
        shipped = page.evaluate("() => document.querySelector('#mqar-figure .js-plotly-plot').data.length")
        steps = page.locator("#mqar-steps input[type=number]")
        steps.fill(str(STEPS))
        steps.press("Enter")
        page.locator("#mqar-train").click()
        page.wait_for_selector("#mqar-inspect .js-plotly-plot .heatmaplayer", timeout=TIMEOUT_MS)
        wait_quiet(page, queue=False)
        app.check_clean()
        drawn = page.evaluate("() => document.querySelector('#mqar-figure .js-plotly-plot').data.map(t => t.name)")
        assert len(drawn) == shipped + 1
        live = say("mqar.live_name", lang, mixer=say("mqar.mixer.gla", lang), width=32, steps=STEPS, seed=2)
        assert drawn[-1] == live
        boxes = page.evaluate("() => (document.querySelector('#mqar-inspect .js-plotly-plot').layout.shapes || []).length")
        assert boxes == 8                                   # one asked pair outlined per question
        if present:
            assert page.evaluate("document.body.classList.contains('presentation')")
        if lang == "zh":
            for plot_id in PLOTS:
                for text in page.evaluate(FIGURE_TEXT_JS, plot_id):
                    assert not english_words(text), (plot_id, text)
            status = page.inner_text("#mqar-status")
            assert status.strip() and not english_words(status), status
        shoot(page, f"mqar-{lang}-{width}x{height}")
    finally:
        context.close()


def shoot(page, name: str):
    ARTIFACTS.mkdir(exist_ok=True)
    for plot_id in PLOTS:
        page.locator(f"#{plot_id}").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"{name}-{plot_id}-screen.png"))        # what the screen shows
        page.locator(f"#{plot_id}").screenshot(path=str(ARTIFACTS / f"{name}-{plot_id}.png"))
