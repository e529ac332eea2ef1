"""The state tab in a real browser, in English and in Chinese, on a desktop (1600×900) and on
a projector (1280×720, presentation mode): all six updates are offered and drawn, the delta
rule's step shows its erased and written parts, and the Chinese page shows no English word
outside names, units and the text's own tokens; a language switch on the drawn tab says it
again in Chinese. Screenshots: test-artifacts/state-*.png.
"""

from __future__ import annotations

import pytest

from explorer.text import say
from helpers.page import ARTIFACTS, TIMEOUT_MS, Watched, wait_quiet
from explorer.mechanisms import state_kinds
from helpers.words import chinese_leftovers

STATE_KINDS = state_kinds()

pytestmark = pytest.mark.browser

SCREENS = [("en", 1600, 900, False), ("zh", 1600, 900, False), ("en", 1280, 720, True), ("zh", 1280, 720, True)]
LOCALES = {"en": "en-US", "zh": "zh-CN"}

# Every text of a figure, read from the browser's plotly object.
FIGURE_TEXT_JS = """(id) => { const g = document.querySelector('#' + id + ' .js-plotly-plot');
    if (!g || !g.layout) return [];
    const L = g.layout, out = [L.title && L.title.text, L.title && L.title.subtitle && L.title.subtitle.text];
    for (const [k, v] of Object.entries(L)) {
        if (/^[xy]axis/.test(k) && v && v.title) out.push(v.title.text);
        if (/^coloraxis/.test(k) && v && v.colorbar && v.colorbar.title) out.push(v.colorbar.title.text);
    }
    (L.annotations || []).forEach(a => out.push(a.text));
    if (L.legend && L.legend.title) out.push(L.legend.title.text);
    (g.data || []).forEach(t => { out.push(t.name); out.push(t.hovertemplate); });
    return out.filter(x => x); }"""
# The title with its subtitle, without spaces and line breaks: a title too long for its
# width continues in the subtitle.
TITLE_JS = """(id) => { const g = document.querySelector('#' + id + ' .js-plotly-plot');
    if (!g || !g.layout || !g.layout.title) return '';
    const t = g.layout.title, sub = t.subtitle && t.subtitle.text ? t.subtitle.text : '';
    return (t.text + sub).replace(/<br>/g, '').replace(/\\s/g, ''); }"""
PLOTS = ("state-step", "state-curves", "state-capacity", "state-memory")


def wait_title(page, plot_id: str, text: str):
    from playwright.sync_api import TimeoutError as PageTimeout
    try:
        page.wait_for_function(f"([id, text]) => ({TITLE_JS})(id).startsWith(text)",
                               arg=[plot_id, "".join(text.split())], timeout=TIMEOUT_MS)
    except PageTimeout:
        shown = page.evaluate(TITLE_JS, plot_id)
        raise AssertionError(f"{plot_id}: the title never began {text!r}; it reads {shown!r}") from None


@pytest.mark.parametrize("lang, width, height, present", SCREENS)
def test_state_tab_shows_every_update(browser, app_url, lang, width, height, present):
    context = browser.new_context(viewport={"width": width, "height": height}, locale=LOCALES[lang])
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    try:
        page.goto(app_url + f"?tab=state&lang={lang}" + ("&present=1" if present else ""))
        page.wait_for_selector("#state-step .js-plotly-plot .heatmaplayer image")
        # The figures are written in the page's language (a first draw in the default
        # language is redrawn when the switch arrives).
        wait_title(page, "state-curves", say("state.curves_title", lang))
        wait_title(page, "state-capacity", say("state.capacity_title", lang))
        page.wait_for_selector("#state-capacity .js-plotly-plot .scatterlayer .trace")
        names = [say(f"state.kind.{kind}", lang) for kind in STATE_KINDS]
        # The choices of the step view: every update, named in the page's language.
        page.wait_for_function("(names) => { const got = [...document.querySelectorAll('#state-kind label')]"
                               ".map(l => l.innerText.trim()); return JSON.stringify(got) === JSON.stringify(names); }",
                               arg=names, timeout=TIMEOUT_MS)
        legend = page.evaluate("() => document.querySelector('#state-curves .js-plotly-plot').data"
                               ".filter(t => t.showlegend !== false).map(t => t.name)")
        assert legend == names
        recall = page.evaluate("() => document.querySelector('#state-curves .js-plotly-plot').data"
                               ".filter(t => t.xaxis === 'x4').length")
        assert recall == 2 * len(STATE_KINDS)                      # an early and a recent key for each
        capacity = set(page.evaluate("() => document.querySelector('#state-capacity .js-plotly-plot').data"
                                     ".map(t => t.name)"))
        assert set(names) <= capacity
        # The delta rule's step: what it erases beside what it writes.
        page.locator("#state-kind label", has_text=names[STATE_KINDS.index("deltanet")]).first.click()
        page.wait_for_function("() => document.querySelectorAll('#state-step .heatmaplayer image').length === 3",
                               timeout=TIMEOUT_MS)
        wait_title(page, "state-step", say("state.step_title_delta", lang))
        wait_quiet(page, queue=False)
        app.check_clean()
        if present:
            assert page.evaluate("document.body.classList.contains('presentation')")
        if lang == "zh":
            for plot_id in PLOTS:
                for text in page.evaluate(FIGURE_TEXT_JS, plot_id):
                    assert not chinese_leftovers(text), (plot_id, text)
            notices = page.inner_text("#state-notices")
            assert notices.strip() and not chinese_leftovers(notices), notices
        shoot(page, f"state-{lang}-{width}x{height}")
    finally:
        context.close()


def shoot(page, name: str):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))                     # what the screen shows
    page.screenshot(path=str(ARTIFACTS / f"{name}-full.png"), full_page=True)
    for plot_id in PLOTS:                                                      # each figure at its size
        page.locator(f"#{plot_id}").screenshot(path=str(ARTIFACTS / f"{name}-{plot_id}.png"))


# Every event the page sends, by its dependency's id, in order (as test_page_open_events).
SENT_JS = """(() => { window.__sent = []; const f = window.fetch;
  window.fetch = function (input, init) {
    try { if (init && typeof init.body === 'string' && init.body.includes('fn_index')) {
      window.__sent.push(JSON.parse(init.body).fn_index); } } catch (e) { /* not an event */ }
    return f.apply(this, arguments); }; })();"""


def test_a_language_switch_says_the_drawn_tab_again_without_computing_it(browser, app_url):
    """English first, then the header's switch: the figures and notices turn Chinese, and the
    page sends no draw of the tab (run_state), only its words said again (relanguage; that it
    computes nothing is tests/app/test_state_said.py's)."""
    import json
    import urllib.request

    with urllib.request.urlopen(app_url.rstrip("/") + "/config", timeout=60) as answer:
        config = json.load(answer)
    names = {d["id"]: d.get("api_name") or "" for d in config["dependencies"]}
    context = browser.new_context(viewport={"width": 1600, "height": 900}, locale="en-US")
    context.add_init_script(SENT_JS)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    try:
        page.goto(app_url + "?tab=state&src=random&n=32&d=8&lang=en")
        wait_title(page, "state-curves", say("state.curves_title", "en"))
        wait_title(page, "state-capacity", say("state.capacity_title", "en"))
        wait_quiet(page, queue=False)
        before = len(page.evaluate("() => window.__sent"))
        page.locator("#language label", has_text="中文").click()
        for plot_id, key in (("state-curves", "state.curves_title"), ("state-capacity", "state.capacity_title"),
                             ("state-memory", "state.memory_title"), ("state-step", "state.step_title_additive")):
            wait_title(page, plot_id, say(key, "zh"))
        wait_quiet(page, queue=False)
        sent = [names.get(i, "") for i in page.evaluate("() => window.__sent")[before:]]
        assert not [name for name in sent if name.startswith(("run_state", "state"))], sent
        for plot_id in PLOTS:
            for text in page.evaluate(FIGURE_TEXT_JS, plot_id):
                assert not chinese_leftovers(text), (plot_id, text)
        notices = page.inner_text("#state-notices")
        assert notices.strip() and not chinese_leftovers(notices), notices
        app.check_clean()
        shoot(page, "state-switched-zh-1600x900")
    finally:
        context.close()
