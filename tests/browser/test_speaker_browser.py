"""The deck and its speaker window (``?notes=1``) hold one position, in real Chromium: both
open in one browser context (as a speaker's two screens are one browser), keys pressed in
either move both, a language switched in either switches both, and the speaker's tools
(number + Enter, B, O, Esc, N, the clock and the countdown) do what they say.
"""

from __future__ import annotations

import json
import re

import pytest

from explorer.core import qr
from explorer.lecture.figures import build_count
from helpers.page import TIMEOUT_MS, wait_quiet, watch

pytestmark = pytest.mark.browser      # the deck and its speaker window, on the app

SECOND_OF_CHAPTER_0 = f"0.1 · 2 / {build_count(0)}"      # where the speaker's notes say the deck is

WHERE_JS = """() => {
  const el = document.querySelector('#deck-info [data-ch]');
  const lecture = document.getElementById('lecture');
  const radio = document.querySelector('#language input[type=radio]:checked');
  if (!el || el.dataset.builds === '' || !lecture || lecture.dataset.step === undefined || !radio) { return null; }
  return {ch: Number(el.dataset.ch), step: Number(lecture.dataset.step), builds: Number(el.dataset.builds),
          lang: radio.value};
}"""

# The figure of the build on screen is drawn.
DRAWN_JS = """(step) => { const gd = document.querySelector('#lecture-plot-' + step + ' .js-plotly-plot');
  return !!gd && !!gd.querySelector('.main-svg') && getComputedStyle(gd).visibility !== 'hidden'; }"""


def at(page, ch, step, lang="en"):
    """Until ``page`` shows build ``step`` of chapter ``ch`` in ``lang``, its figure drawn."""
    state = page.wait_for_function(
        f"() => {{ const s = ({WHERE_JS})(); return !!s && s.ch === {ch} && (s.step === {step} || "
        f"({step} < 0 && s.step === s.builds - 1)) && s.lang === '{lang}' && ({DRAWN_JS})(s.step) ? s : null; }}")
    return state.json_value()


def decoded(svg: str) -> str:
    """The text of a QR code drawn by explorer.core.qr.svg (its path of unit squares)."""
    side = int(re.search(r'viewBox="0 0 (\d+) ', svg).group(1)) - 8
    grid = [[False] * side for _ in range(side)]
    for c, r in re.findall(r"M(\d+),(\d+)h1v1h-1z", svg):
        grid[int(r) - 4][int(c) - 4] = True
    return qr.decode(grid)


def open_pair(browser, app_url, lang="en"):
    context = watch(browser.new_context(viewport={"width": 1280, "height": 720}))
    errors = []
    audience = context.new_page()
    audience.set_default_timeout(TIMEOUT_MS)
    audience.on("pageerror", lambda e: errors.append("audience: " + str(e)))
    audience.goto(app_url + f"?tab=lecture&present=1&lang={lang}&ch=0")
    at(audience, 0, 0, lang)
    speaker = context.new_page()
    speaker.set_default_timeout(TIMEOUT_MS)
    speaker.on("pageerror", lambda e: errors.append("speaker: " + str(e)))
    speaker.goto(app_url + f"?tab=lecture&present=1&lang={lang}&ch=0&step=0&notes=1")
    at(speaker, 0, 0, lang)
    return context, audience, speaker, errors


def test_keys_in_the_speaker_window_move_the_audience(browser, app_url):
    context, audience, speaker, errors = open_pair(browser, app_url)
    try:
        # The title build: a QR code of the page's own address beside the figure, not over it.
        code = audience.locator("#deck-qr svg")
        code.wait_for(state="visible")
        assert decoded(code.evaluate("(svg) => svg.outerHTML")) == app_url + "?tab=lecture"
        fig = audience.locator("#lecture-plot-0 .js-plotly-plot").bounding_box()
        assert fig["x"] + fig["width"] <= code.bounding_box()["x"] + 1
        speaker.locator("#lecture-claim").click()
        speaker.keyboard.press("PageDown")
        at(audience, 0, 1)
        assert not audience.locator("#deck-qr svg").is_visible()
        at(speaker, 0, 1)                    # the speaker window shows the build on screen
        # Its notes say where: its address (0.1), build / builds, with the clock, elapsed and what is left.
        assert speaker.inner_text("#deck-notes .deck-where-box:not([hidden]) .deck-where") == SECOND_OF_CHAPTER_0
        assert speaker.locator("#deck-notes .deck-clock-left").first.inner_text().count(":") == 1
        # The next build is drawn below the notes.
        speaker.wait_for_function("() => { const b = document.querySelector('#deck-notes .deck-next-plot');"
                                  " return !!b && !b.hidden && !!b.querySelector('.main-svg'); }")
        speaker.keyboard.press("End")
        last = at(audience, 6, -1)
        at(speaker, 6, last["step"])
        speaker.wait_for_function("() => document.body.classList.contains('deck-at-end')")
        # And back: a key pressed in the audience's window moves the speaker's.
        audience.locator("#lecture-claim").click()
        audience.keyboard.press("PageUp")
        at(speaker, 6, last["step"] - 1)
        # A chapter's number and Enter, in the speaker window.
        speaker.locator("#lecture-claim").click()
        speaker.keyboard.press("2")
        speaker.keyboard.press("Enter")
        at(audience, 2, 0)
        at(speaker, 2, 0)
        # B blanks the audience's screen (the speaker's says so and keeps its view); Esc ends it.
        speaker.keyboard.press("b")
        audience.wait_for_function("() => document.body.classList.contains('deck-blank')")
        assert speaker.locator("#deck-notes .deck-blank-flag").is_visible()
        cover = audience.evaluate("() => getComputedStyle(document.body, '::after').backgroundColor")
        assert cover == "rgb(0, 0, 0)", cover
        speaker.keyboard.press("Escape")
        audience.wait_for_function("() => !document.body.classList.contains('deck-blank')")
        # "." blanks it too (a presenter remote's key), and again ends it.
        audience.keyboard.press(".")
        audience.wait_for_function("() => document.body.classList.contains('deck-blank')")
        audience.keyboard.press(".")
        audience.wait_for_function("() => !document.body.classList.contains('deck-blank')")
        # F asks the browser for full screen (headless grants nothing: the request is what is seen).
        audience.evaluate("() => { window.__fullscreen = 0; document.documentElement.requestFullscreen = "
                          "() => { window.__fullscreen += 1; return Promise.resolve(); }; }")
        audience.keyboard.press("f")
        audience.wait_for_function("() => window.__fullscreen === 1")
        # O: the overview of every build; a tile jumps there in both windows.
        audience.keyboard.press("o")
        audience.locator("#deck-overview").wait_for(state="visible")
        tiles = audience.locator("#deck-overview .deck-ov-build")
        assert tiles.count() >= 20
        audience.locator('#deck-overview .deck-ov-build[data-ch="1"][data-step="1"]').click()
        audience.locator("#deck-overview").wait_for(state="hidden")
        at(audience, 1, 1)
        at(speaker, 1, 1)
        assert "notes=1" not in audience.url
        assert not errors, errors
    finally:
        context.close()


COUNTDOWN_JS = """(wanted) => { const el = document.querySelector('#deck-notes .deck-clock-left');
  return !!el && wanted.includes(el.textContent.trim()); }"""


def test_the_countdown_runs_down_from_the_talk_length_set_in_the_drawer(browser, app_url):
    """The talk's length typed in the audience window's drawer is what the speaker window counts
    down from, restarted by a click on its clock."""
    context, audience, speaker, errors = open_pair(browser, app_url)
    try:
        audience.locator("#lecture-claim").click()
        audience.keyboard.press("d")
        for minutes in (20, 60):
            audience.locator("#deck-talk-minutes").fill(str(minutes))
            speaker.locator("#deck-notes .deck-clock").first.click()
            # within a few seconds of the restart: mm:00 or just under it
            wanted = [f"{minutes:02d}:00"] + [f"{minutes - 1:02d}:{s:02d}" for s in range(50, 60)]
            speaker.wait_for_function(COUNTDOWN_JS, arg=wanted)
        assert not errors, errors
    finally:
        context.close()


def test_the_language_switched_in_either_window_switches_both(browser, app_url):
    context, audience, speaker, errors = open_pair(browser, app_url)
    try:
        speaker.locator("#lecture-claim").click()
        speaker.keyboard.press("PageDown")
        at(audience, 0, 1)
        speaker.locator('#language input[value="zh"]').click()
        at(audience, 0, 1, "zh")
        at(speaker, 0, 1, "zh")
        # the slide's claim follows with the build drawn in the new language
        audience.wait_for_function("() => /[\\u4e00-\\u9fff]/.test(document.querySelector('#lecture-claim').innerText)")
        # The place beside the notes' heading is never empty in Chinese.
        where = speaker.inner_text("#deck-notes .deck-where-box:not([hidden])")
        assert where.startswith("讲稿提示") and where.endswith(SECOND_OF_CHAPTER_0), where
        notes = speaker.inner_text("#deck-notes .deck-notes-chapter:not([hidden])")
        assert any("\u4e00" <= c <= "\u9fff" for c in notes)
        # A move in Chinese, then back to English from the audience's window.
        speaker.locator("#lecture-claim").click()
        speaker.keyboard.press("PageDown")
        at(audience, 0, 2, "zh")
        audience.locator('#language input[value="en"]').click()
        at(speaker, 0, 2, "en")
        at(audience, 0, 2, "en")
        assert not errors, errors
    finally:
        context.close()


def test_notes_overlay_the_slide_without_reflowing_it(browser, app_url):
    context = watch(browser.new_context(viewport={"width": 1280, "height": 720}))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(app_url + "?tab=lecture&present=1&lang=en&ch=0&step=1")
        at(page, 0, 1)
        box = "() => { const r = document.querySelector('#lecture-plot-1 .js-plotly-plot').getBoundingClientRect();" \
              " return [r.left, r.top, r.width, r.height]; }"
        before = page.evaluate(box)
        page.locator("#lecture-claim").click()
        page.keyboard.press("n")
        page.locator("#deck-notes").wait_for(state="visible")
        wait_quiet(page, frames=3, ms=0, requests=False, queue=False)     # a reflow would have landed
        assert page.evaluate(box) == before
        assert page.inner_text("#deck-notes .deck-where-box:not([hidden]) .deck-where") == SECOND_OF_CHAPTER_0
        page.keyboard.press("Escape")
        page.locator("#deck-notes").wait_for(state="hidden")
        # The drawer scales the slide beside it: the figure keeps its layout, none of it under the drawer.
        page.keyboard.press("d")
        page.locator("#lecture-drawer").wait_for(state="visible")
        wait_quiet(page, frames=3, ms=0, requests=False, queue=False)
        fig = page.evaluate(box)
        drawer = page.locator("#lecture-drawer").bounding_box()
        assert fig[0] + fig[2] <= drawer["x"] + 1, (fig, drawer)
        width = page.evaluate("() => document.querySelector('#lecture-plot-1 .main-svg').getAttribute('width')")
        assert abs(float(width) - before[2]) <= 1                   # drawn at the slide's own width, shown smaller
    finally:
        context.close()


MARKS_JS = """() => Array.from(document.querySelectorAll('#lecture-figures .js-plotly-plot')).map((gd) =>
  gd.data ? JSON.stringify(gd.data.map((t) => [t.x, t.y, t.z, t.text])) : '')"""


@pytest.mark.parametrize("ch,step", [(1, 2), (3, 0)])
def test_try_this_shows_the_build_it_changed(browser, app_url, ch, step):
    """A chapter's preset changes some of its builds only (chapter 1's its first, chapter 3's
    its fifth): pressed on another build, the deck shows a build whose figure changed (the
    drawer beside it, not over it). Chapter 3 once stayed on a build the preset left as it was."""
    context = watch(browser.new_context(viewport={"width": 1280, "height": 720}))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(app_url + f"?tab=lecture&present=1&lang=en&ch={ch}&step={step}")
        at(page, ch, step)
        before = page.evaluate(MARKS_JS)
        page.locator("#lecture-claim").click()
        page.keyboard.press("d")
        page.locator("#lecture-try").click()
        page.wait_for_function(f"() => {{ const now = ({MARKS_JS})(); const was = {json.dumps(before)};"
                               " return now.some((m, k) => m && m !== was[k]); }")
        wait_quiet(page, queue=False)
        now = page.evaluate(MARKS_JS)
        step = page.evaluate(WHERE_JS)["step"]
        assert now[step] != before[step], (step, [a != b for a, b in zip(now, before)])
    finally:
        context.close()


# The contrast ratio (WCAG) of each text node's colour in the blank flag on the flag's background.
CONTRAST_JS = """() => {
  const flag = document.querySelector('#deck-notes .deck-blank-flag');
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => { const [r, g, b] = rgb(c).map((v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const back = lum(getComputedStyle(flag).backgroundColor);
  return Array.from(flag.querySelectorAll('*')).concat([flag]).filter((el) => el.offsetParent !== null &&
    Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim())).map((el) => {
    const fore = lum(getComputedStyle(el).color);
    return (Math.max(fore, back) + 0.05) / (Math.min(fore, back) + 0.05); }); }"""

# Where the next build's box, its figure and its claim lie, against the slide and the notes.
NEXT_JS = """() => {
  const box = (sel) => { const el = document.querySelector(sel);
    if (!el) { return null; } const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height}; };
  return {next: box('#deck-notes .deck-next'), plot: box('#deck-notes .deck-next-plot'),
    claim: box('#deck-notes .deck-next-claim'), slide: box('#lecture-main'),
    column: box('#deck-notes .deck-where-box:not([hidden])'),
    label: document.querySelector('#deck-notes .deck-next-label:not([hidden])').innerText,
    said: document.querySelector('#deck-notes .deck-next-claim').innerText,
    claimCut: (() => { const c = document.querySelector('#deck-notes .deck-next-claim');
      return c.scrollHeight > c.clientHeight + 1; })(),
    drawn: !!document.querySelector('#deck-notes .deck-next-plot .main-svg'),
    width: innerWidth, height: innerHeight}; }"""


# Each language at one size, the two sizes between them: English at 1280×720, where the box
# once went over the slide, and Chinese at 1920×1080 (the deck walk covers the rest).
@pytest.mark.parametrize("lang, width, height", [("en", 1280, 720), ("zh", 1920, 1080)])
def test_the_speaker_window_shows_the_next_build_and_reads_at_both_sizes(browser, app_url, lang, width,
                                                                         height):
    """The next build (its address, claim and figure) in the room under the smaller slide, whole
    at 1280×720 and 1920×1080 (it was cut below the notes, only its title showing); the blank
    flag readable (it was #1e293b on #222, 1.2:1); the overview's tiles named as the address
    counts builds (5.1: chapter 5, build 1 counted from 0)."""
    context = watch(browser.new_context(viewport={"width": width, "height": height}))
    try:
        speaker = context.new_page()
        speaker.set_default_timeout(TIMEOUT_MS)
        speaker.goto(app_url + f"?tab=lecture&present=1&lang={lang}&ch=0&step=1&notes=1")
        at(speaker, 0, 1, lang)
        speaker.wait_for_function("() => !!document.querySelector('#deck-notes .deck-next-plot .main-svg')")
        wait_quiet(speaker, frames=3, ms=0, requests=False, queue=False)
        s = speaker.evaluate(NEXT_JS)
        where = (width, height, lang)
        assert s["label"].split()[-1] == "0.2", (where, s["label"])
        assert s["said"].strip(), where                            # the next build's claim
        assert not s["claimCut"], where
        nxt, plot = s["next"], s["plot"]
        assert nxt["top"] >= s["slide"]["bottom"] - 1, where         # under the slide, not over it
        assert nxt["bottom"] <= s["height"] + 0.5 and nxt["left"] >= 0, where   # whole on screen
        assert nxt["right"] <= s["column"]["left"], where            # beside the notes' column
        assert plot["top"] >= nxt["top"] and plot["bottom"] <= nxt["bottom"] + 0.5, where   # the figure whole
        assert plot["height"] >= 0.2 * s["height"], where
        speaker.evaluate("() => document.body.classList.add('deck-blank')")
        speaker.locator("#deck-notes .deck-blank-flag").wait_for(state="visible")
        ratios = speaker.evaluate(CONTRAST_JS)
        assert ratios and min(ratios) >= 4.5, (where, ratios)
        speaker.evaluate("() => document.body.classList.remove('deck-blank')")
        if lang == "en":
            speaker.locator("#lecture-claim").click()
            speaker.keyboard.press("o")
            speaker.locator("#deck-overview").wait_for(state="visible")
            tiles = speaker.evaluate("() => Array.from(document.querySelectorAll('#deck-overview .deck-ov-build'))"
                                     ".map((b) => [b.dataset.ch, b.dataset.step, b.innerText.trim()])")
            assert len(tiles) >= 20 and all(text == f"{ch}.{step}" for ch, step, text in tiles), tiles
    finally:
        context.close()
