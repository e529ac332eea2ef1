"""The article's formulas on the lecture's slides, as a projector shows them: in presentation
mode at 1280×720 (English) and 1920×1080 (Chinese), the first build of each chapter that
carries formulas: the first chapter opened by its address, the others reached as a speaker
does (the chapter's number, then Enter; → to the build). Chromium lays the MathML out itself (a fraction's
numerator stands above its denominator), every formula has a box of its own inside the
slide, between the claim and the figure, and nothing scrolls. A quick look at one build a
chapter; test_deck_browser.py walks every build."""

from __future__ import annotations

import pytest

from explorer.lecture.chapters import CHAPTERS, chapter
from helpers.page import TIMEOUT_MS, wait_quiet, watch

pytestmark = pytest.mark.browser

LOCALES = {"en": "en-US", "zh": "zh-CN"}
SIZES = [(1280, 720, "en"), (1920, 1080, "zh")]

STATE_JS = """([ch, step]) => {
  const el = document.querySelector('#deck-info [data-ch]');
  const lecture = document.getElementById('lecture');
  return !!el && !!lecture && el.dataset.builds !== '' && Number(el.dataset.ch) === ch &&
    lecture.dataset.step === String(step) &&
    !!document.querySelector('#lecture-plot-' + step + ' .js-plotly-plot .main-svg');
}"""

# Where each formula of the slide lies, against the claim, the figure, the slide and the window.
FORMULAS_JS = """(step) => {
  const box = (el) => { if (!el) { return null; } const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height}; };
  const maths = [...document.querySelectorAll('#lecture-formula math')];
  const stacked = maths.filter((m) => m.querySelector('mfrac')).map((m) => {
    const f = m.querySelector('mfrac');
    return box(f.children[0]).bottom <= box(f.children[1]).top + 1;      // numerator over denominator
  });
  const d = document.documentElement;
  return {maths: maths.map(box), display: maths.map((m) => getComputedStyle(m).display), stacked,
          claim: box(document.getElementById('lecture-claim')), main: box(document.getElementById('lecture-main')),
          figure: box(document.querySelector('#lecture-plot-' + step + ' .js-plotly-plot')),
          scroll: [d.scrollHeight, innerHeight, d.scrollWidth, innerWidth]};
}"""


def _first_formula_build(ch: int, lang: str) -> tuple[int, int]:
    typeset = chapter(ch).formulas(lang)
    step = next(k for k, build in enumerate(chapter(ch).builds) if typeset.get(build))
    return step, len(typeset[chapter(ch).builds[step]])


@pytest.mark.parametrize("width,height,lang", SIZES, ids=[f"{w}x{h}-{lang}" for w, h, lang in SIZES])
def test_each_chapter_shows_its_formulas_inside_the_slide(browser, app_url, width, height, lang):
    context = watch(browser.new_context(viewport={"width": width, "height": height}, locale=LOCALES[lang]))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors, problems = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        for ch in CHAPTERS:
            step, count = _first_formula_build(ch, lang)
            where = f"{width}x{height} {lang} {ch}.{step}"
            if ch == CHAPTERS[0]:
                page.goto(app_url + f"?tab=lecture&present=1&lang={lang}&ch={ch}&step={step}")
                page.wait_for_function(STATE_JS, arg=[ch, step])
                page.locator("#lecture-claim").click()               # the keys go to the deck
            else:
                page.keyboard.press(str(ch))
                page.keyboard.press("Enter")
                page.wait_for_function(STATE_JS, arg=[ch, 0])
                for k in range(step):
                    page.keyboard.press("PageDown")
                    page.wait_for_function(STATE_JS, arg=[ch, k + 1])
            try:
                page.wait_for_function(f"() => document.querySelectorAll('#lecture-formula math').length === {count}",
                                       timeout=30_000)
            except Exception:
                problems.append(f"{where}: {count} formulas asked for, "
                                f"{page.evaluate('document.querySelectorAll(`#lecture-formula math`).length')} shown")
                continue
            wait_quiet(page, frames=3, ms=200, requests=False, queue=False)
            got = page.evaluate(FORMULAS_JS, step)
            scroll_h, inner_h, scroll_w, inner_w = got["scroll"]
            if scroll_h > inner_h or scroll_w > inner_w:
                problems.append(f"{where}: the page scrolls ({scroll_w}x{scroll_h} in {inner_w}x{inner_h})")
            if not all(d.startswith("block") for d in got["display"]) or not all(got["stacked"]):
                problems.append(f"{where}: MathML not laid out as math: {got['display']}, {got['stacked']}")
            fig, claim, main = got["figure"], got["claim"], got["main"]
            for k, r in enumerate(got["maths"]):
                if r["width"] < 20 or r["height"] < 10:
                    problems.append(f"{where}: formula {k} has no box: {r}")
                if r["top"] < claim["bottom"] - 1 or r["bottom"] > fig["top"] + 1:
                    problems.append(f"{where}: formula {k} {r} is not between the claim {claim} and the figure {fig}")
                if r["left"] < main["left"] - 1 or r["right"] > main["right"] + 1 or r["bottom"] > inner_h:
                    problems.append(f"{where}: formula {k} {r} leaves the slide {main}")
            for a in range(len(got["maths"])):
                for b in range(a + 1, len(got["maths"])):
                    p, q = got["maths"][a], got["maths"][b]
                    if p["left"] < q["right"] - 1 and q["left"] < p["right"] - 1 and p["top"] < q["bottom"] - 1 \
                            and q["top"] < p["bottom"] - 1:
                        problems.append(f"{where}: formulas {a} and {b} overlap")
            if fig["bottom"] > inner_h + 1 or fig["height"] < 0.5 * inner_h:
                problems.append(f"{where}: the figure is cut or crushed below its formulas: {fig}")
        assert not problems, "\n".join(problems)
        assert not errors, errors
    finally:
        context.close()
