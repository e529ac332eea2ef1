"""The lecture as a speaker gives it: real Chromium at 1280×720 (a projector), presentation
mode on, every chapter reached with the arrow keys, in English and in Chinese.

For each language the page opens with no query string (the lecture is where a visitor
lands; the browser's locale picks the language), walks chapter 0 → 6 with → (through each
chapter's builds; Home, End and the chapter selector jump), checks each chapter's title, figures and address, and saves a
screenshot of each screen (test-artifacts/lecture-<lang>-<ch>.png; with UPDATE_SCREENSHOTS=1
also docs/screenshots/, the README's pictures). No console error, no error toast, no
request leaving the machine. The language switch and ``lang=`` in a link override the
browser's language.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest

from explorer.lecture.text import t
from explorer.ui import i18n
from helpers import ROOT
from helpers.page import ARTIFACTS, TIMEOUT_MS, Watched, wait_quiet

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "docs" / "screenshots"      # the README's pictures, written only when asked

VIEWPORT = {"width": 1280, "height": 720}
CHAPTERS = range(7)
LOCALES = {"en": "en-US", "zh": "zh-CN"}
CJK = re.compile(r"[\u4e00-\u9fff]")

# What the chapter's figures show: every figure's title, and how many figures are drawn.
FIGURES_JS = """() => Array.from(document.querySelectorAll('#lecture-figures .js-plotly-plot'))
    .filter((g) => g.offsetParent !== null && g.layout)
    .map((g) => (g.layout.title && g.layout.title.text) || '')"""
# Where the deck stands: [chapter, build, the chapter's build count].
DECK_JS = """() => { const el = document.querySelector('#deck-info [data-ch]'), lecture = document.getElementById('lecture');
    return el && lecture && el.dataset.builds !== '' && lecture.dataset.step !== undefined
        ? [Number(el.dataset.ch), Number(lecture.dataset.step), Number(el.dataset.builds)] : null; }"""


def screen_shot(page, name: str):
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))                  # the viewport: what the projector shows
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, SCREENSHOTS / f"{name}.png")


def open_page(browser, url: str, lang: str):  # noqa: F811
    context = browser.new_context(viewport=VIEWPORT, locale=LOCALES[lang])
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    watched = Watched(page)
    page.goto(url)
    return context, watched


def wait_chapter(page, ch: int, lang: str):
    """Until chapter ``ch`` is on screen: its title, its address, and figures drawn for it."""
    title = t(f"ch{ch}.title", lang)
    page.wait_for_function("(title) => (document.querySelector('#lecture-chapter input') || {}).value === title",
                           arg=title, timeout=TIMEOUT_MS)
    page.wait_for_function("(ch) => new URLSearchParams(location.search).get('ch') === String(ch)", arg=ch,
                           timeout=TIMEOUT_MS)
    # Drawn; on screen only while the chapter's first build is (End shows the last).
    page.wait_for_selector("#lecture-plot-0 .js-plotly-plot .main-svg", state="attached", timeout=TIMEOUT_MS)
    wait_quiet(page, queue=False)                     # a late toast or redraw (not the next chapter's prefetch)


def press_right(page):
    """→ once, and until the deck stands where it leads: the next build, or the next chapter's first."""
    ch, step, builds = page.evaluate(DECK_JS)
    want = [ch, step + 1] if step + 1 < builds else [ch + 1, 0]
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"(want) => {{ const s = ({DECK_JS})(); return !!s && s[0] === want[0] && s[1] === want[1]; }}",
                           arg=want, timeout=TIMEOUT_MS)


def figure_titles(page) -> list[str]:
    return page.evaluate(FIGURES_JS)


def expected_titles(ch: int, lang: str) -> list[str]:
    """The chapter's figure titles in ``lang``, without their {placeholders}."""
    from explorer.lecture.text import TEXT
    keys = sorted(k for k in TEXT if re.fullmatch(rf"ch{ch}\.(fig|b)\d+\.title", k))     # a build's figure
    return [re.split(r"\{[^}]*\}", t(k, lang))[0].strip() for k in keys]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_walk_the_lecture_with_the_keyboard(browser, app_url, lang):  # noqa: F811
    context, app = open_page(browser, app_url + "?present=1", lang)
    page = app.page
    try:
        wait_chapter(page, 0, lang)
        # The link's presentation mode arrives with the page's own restore, which may land after the draw.
        page.wait_for_function("() => document.body.classList.contains('presentation')", timeout=TIMEOUT_MS)
        # The tab row makes room for the deck in presentation mode: the lecture is still the selected tab.
        selected = page.locator("#tabs [role=tab][aria-selected=true]").first.text_content()
        assert selected.strip() == i18n.text("tab_lecture", lang)
        assert f"lang={lang}" in page.url
        page.locator("body").click(position={"x": 5, "y": 5})       # focus the page, not an input
        previous_titles = None
        for ch in CHAPTERS:
            if ch > 0:                                  # → walks the chapter's builds, then the next chapter
                for _ in range(8):
                    press_right(page)
                    if page.evaluate(DECK_JS)[0] == ch:
                        break
                wait_chapter(page, ch, lang)
            titles = figure_titles(page)
            assert titles and titles != previous_titles, (ch, titles)
            heads = expected_titles(ch, lang)
            assert any(title.startswith(head[:12]) for title in titles for head in heads), (ch, titles, heads)
            if lang == "zh":
                assert CJK.search(" ".join(titles)), titles
            app.check_clean()
            screen_shot(page, f"lecture-{lang}-{ch}")
            previous_titles = titles
        # Home goes back to the first chapter, End to the last.
        page.keyboard.press("Home")
        wait_chapter(page, 0, lang)
        page.keyboard.press("End")
        wait_chapter(page, 6, lang)
        page.locator("#lecture-chapter input").click()
        page.locator("#lecture-chapter [role=option]").nth(5).click()
        wait_chapter(page, 5, lang)
        # Keys typed into an input of the drawer stay there.
        page.locator("#lecture-claim").click()
        page.keyboard.press("d")
        number = page.locator("#lecture-controls-5 input[type=number]").first
        number.click()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        wait_quiet(page, queue=False)
        assert "ch=5" in page.url and page.locator("#lecture-chapter input").input_value() == t("ch5.title", lang)
        app.check_clean()
    finally:
        context.close()


def test_language_switch_and_link_override_the_browser(browser, app_url):  # noqa: F811
    # An English browser opening a chapter's Chinese link gets Chinese, labels included.
    context, app = open_page(browser, app_url + "?tab=lecture&ch=2&lang=zh", "en")
    page = app.page
    try:
        wait_chapter(page, 2, "zh")
        page.get_by_role("tab", name="讲解").wait_for()
        assert CJK.search(" ".join(figure_titles(page)))
        # The switch brings English back: text, figures, tab names and the address.
        page.locator("#language label", has_text="English").click()
        wait_chapter(page, 2, "en")
        page.wait_for_function("() => new URLSearchParams(location.search).get('lang') === 'en'")
        page.get_by_role("tab", name="Lecture").wait_for()
        page.wait_for_function(f"() => !/[\\u4e00-\\u9fff]/.test(({FIGURES_JS})().join(' '))")
        app.check_clean()
    finally:
        context.close()


def test_a_chapter_link_restores_its_controls(browser, app_url):  # noqa: F811
    """Try this, then reload the address: the same chapter with the same control values."""
    context, app = open_page(browser, app_url + "?tab=lecture&ch=3", "en")
    page = app.page
    try:
        wait_chapter(page, 3, "en")
        before = page.url
        page.click("#lecture-try")
        page.wait_for_function("(before) => location.href !== before", arg=before)
        wait_quiet(page, queue=False)
        url = page.url
        values = page.evaluate("""() => Array.from(document.querySelectorAll('#lecture-controls-3 input'))
            .map((i) => i.type === 'checkbox' ? String(i.checked) : i.value)""")
        page.goto(url)
        wait_chapter(page, 3, "en")
        page.wait_for_function("""(values) => JSON.stringify(Array.from(
            document.querySelectorAll('#lecture-controls-3 input'))
            .map((i) => i.type === 'checkbox' ? String(i.checked) : i.value)) === JSON.stringify(values)""",
                               arg=values)
        assert page.url.split("?")[1] == url.split("?")[1]
        app.check_clean()
    finally:
        context.close()
