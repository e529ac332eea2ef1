"""The lecture as a projector shows it: real Chromium, presentation mode, the whole deck
walked with PageDown (what a clicker sends) at 1280×720 and 1920×1080 in English and
Chinese (and, taking the docs' pictures, at 1366×768 in Chinese).

On every build: nothing scrolls (``scrollHeight <= innerHeight``), the figure lies inside
the window, a Chinese slide reads no English word outside names, units and the text's own
tokens, no two text boxes of the figure on screen intersect (titles, subtitles,
annotations, legends, colour bars, axis titles, point labels, tick labels against the
rest), measured on plotly's rendered SVG, no legend or annotation lies on a plotted point,
line or bar (helpers/figure_cover.py), and no text on screen is under 16 px at 1280×720
(at a larger window the slide is enlarged: 24 px at 1920×1080). Asked for
(EXPLORER_DECK_SHOTS=1, as scripts/screenshots.py does), a screenshot of every build goes to
build/screenshots/deck/ (palette PNGs, small; ignored by git: the script copies them into
docs/deck/); the suite's own walks take none, a second a build. Then the keys (a slider touched by the speaker does not swallow →,
PageDown moves the deck from inside a number box, Home / End), the address (``ch=3&step=2``
restores that build) and the speaker window (``?notes=1`` shows the build on screen; see
test_speaker_browser.py for the two windows driving each other).
A second test opens each tool tab at 1280×720 in presentation mode: its first figure lies
entirely inside the window, and the data panel is one summary line.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import pytest

from explorer.lecture.text import t
from helpers.figure_cover import COVERED_JS
from helpers.page import TIMEOUT_MS, wait_quiet, watch
from helpers.words import english_words

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots" / "deck"     # ignored; never a tracked file
TAKE_SHOTS = os.environ.get("EXPLORER_DECK_SHOTS") == "1"
# The suite walks both languages at the smallest slide and enlarged; 1366 × 768 scales the same
# 1280 × 720 layout by 1.07 and adds little but time, so only the docs' pictures take it.
ALL_WALKS = [(1280, 720, "en"), (1280, 720, "zh"), (1366, 768, "zh"), (1920, 1080, "en"), (1920, 1080, "zh")]
WALKS = ALL_WALKS if TAKE_SHOTS else [w for w in ALL_WALKS if w[:2] != (1366, 768)]
MIN_TEXT_PX = 16        # at 1280 × 720; a larger window enlarges the slide by its size over that
LOCALES = {"en": "en-US", "zh": "zh-CN"}
CHAPTERS = range(7)

# Where the deck stands: chapter, build, the chapter's build count (from the bar).
STATE_JS = """() => {
  const el = document.querySelector('#deck-info [data-ch]');
  const lecture = document.getElementById('lecture');
  if (!el || !lecture || el.dataset.builds === '' || lecture.dataset.step === undefined) { return null; }
  return {ch: Number(el.dataset.ch), step: Number(lecture.dataset.step), builds: Number(el.dataset.builds)};
}"""

# The figure of the build on screen: drawn, and where it lies.
FIGURE_JS = """(step) => {
  const gd = document.querySelector('#lecture-plot-' + step + ' .js-plotly-plot');
  if (!gd || !gd.querySelector('.main-svg') || getComputedStyle(gd).visibility === 'hidden') { return null; }
  const r = gd.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
          title: (gd.layout && gd.layout.title && gd.layout.title.text) || ''};
}"""

# Text boxes of one figure that intersect: titles, subtitles, annotations, legends, colour
# bars, axis titles and point labels against each other, tick labels against all of them.
OVERLAPS_JS = """(selector) => {
  const gd = document.querySelector(selector);
  if (!gd) { return ['no figure at ' + selector]; }
  const box = (el) => { const r = el.getBoundingClientRect(); return r.width * r.height > 0 ? r : null; };
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const parts = [], ticks = [];
  const add = (list, sel, what, inside) => gd.querySelectorAll(sel).forEach((el, i) => {
    if (!inside && el.closest('.colorbar, .legend')) { return; }
    const r = box(el);
    if (r) { list.push({what: what + i + ':' + (el.textContent || '').slice(0, 24), r}); }
  });
  add(parts, '.infolayer .gtitle', 'title');
  add(parts, '.infolayer .gtitle-subtitle', 'subtitle');
  add(parts, '.infolayer .annotation-text-g', 'annotation');
  add(parts, '.infolayer .legend', 'legend', true);
  add(parts, '.infolayer .colorbar', 'colorbar', true);
  add(parts, '.infolayer text[class*="title"]:not(.gtitle):not(.gtitle-subtitle):not(.legendtitletext)', 'axis title');
  add(parts, '.textpoint text, .bartext', 'label');
  add(ticks, '.xtick text, .ytick text, .xtick2 text, .ytick2 text', 'tick');
  gd.querySelectorAll('.colorbar .cbaxis text, .colorbar text').forEach(() => {});
  const out = [];
  for (let i = 0; i < parts.length; i++) {
    for (let j = i + 1; j < parts.length; j++) {
      if (hit(parts[i].r, parts[j].r)) { out.push(parts[i].what + ' × ' + parts[j].what); }
    }
    for (const tk of ticks) { if (hit(parts[i].r, tk.r)) { out.push(parts[i].what + ' × ' + tk.what); } }
  }
  // Colour bar tick labels belong to the bar: against the plot's own ticks only.
  const barTicks = [...gd.querySelectorAll('.colorbar text')].map(box).filter(Boolean);
  for (const b of barTicks) { for (const tk of ticks) { if (hit(b, tk.r)) { out.push('colour bar label × ' + tk.what); } } }
  return out;
}"""

# Records the chapter of every draw the deck takes in (wraps explorerDeck.drawn once it exists).
DRAWS_JS = """
window.__drawnChapters = [];
const __wrap = setInterval(() => {
  const deck = window.explorerDeck;
  if (!deck || deck.__recorded) { return; }
  const drawn = deck.drawn;
  deck.drawn = (q) => {
    const el = document.querySelector('#deck-info [data-ch]');
    window.__drawnChapters.push(el ? el.dataset.ch : '?');
    return drawn(q);
  };
  deck.__recorded = true;
  clearInterval(__wrap);
}, 2);
"""

# What the audience reads on a slide: the claim, the deck's bar and the figure's own texts
# (tick labels aside: on a text's axis they are its tokens).
SLIDE_TEXTS_JS = """(step) => {
  const out = [];
  for (const sel of ['#lecture-claim', '#deck-info']) {
    const el = document.querySelector(sel);
    if (el) { out.push(...el.innerText.split('\\n')); }
  }
  const gd = document.querySelector('#lecture-plot-' + step + ' .js-plotly-plot');
  if (gd) {
    gd.querySelectorAll('svg text').forEach((t) => {
      if (!t.closest('.xtick, .ytick, .x2tick, .y2tick, .hovertext')) { out.push(t.textContent); }
    });
  }
  return out.map((s) => s.trim()).filter((s) => s);
}"""

# The smallest text on screen, in px as drawn (the deck's enlargement included): every text node of
# the bar, the header, the claim, the notices and the figure on screen.
SMALLEST_TEXT_JS = """(step) => {
  const seen = [];
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const page = document.querySelector('.gradio-container');
  const scale = page.getBoundingClientRect().width / page.offsetWidth;     // the deck's own enlargement
  const px = (el) => parseFloat(getComputedStyle(el).fontSize) * (el.currentCSSZoom || 1) * scale;
  const roots = ['#lecture-nav', '#header', '#lecture-claim', '#lecture-notices', '#lecture-plot-' + step];
  for (const sel of roots) {
    const root = document.querySelector(sel);
    if (!root) { continue; }
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || !n.textContent.trim() || !visible(el) || el.closest('.hoverlayer, .modebar, [hidden], .deck-hidden')) {
        continue;
      }
      // A superscript or subscript (10⁹'s exponent, plotly's 70 % tspan): its label's size counts.
      if (el.tagName === 'tspan' && /font-size:\\s*70%/.test(el.getAttribute('style') || '')) { continue; }
      seen.push({px: px(el), text: n.textContent.trim().slice(0, 30), where: sel});
    }
  }
  seen.sort((a, b) => a.px - b.px);
  return seen.slice(0, 3);
}"""

# A plot's clip paths and colour-bar fills are url("<address>#id"): one that names an
# address other than the page's is another document, and draws nothing (a bar on a log axis
# then runs past its axis, unclipped).
STALE_REFERENCES_JS = """(step) => {
  const here = window.location.href.split('#')[0];
  const root = document.querySelector(`#lecture-plot-${step} .js-plotly-plot`);
  if (!root) { return []; }
  const refs = [...root.querySelectorAll('[clip-path]')].map((el) => el.getAttribute('clip-path'))
    .concat([...root.querySelectorAll('[style*="url("]')].map((el) => el.style.fill));
  return refs.filter((r) => r && /url\\(["']?[^#"')]+#/.test(r) && !r.includes(here + '#'));
}"""

# The bar as a speaker reads it: the chapter's title whole in its selector (it was cut to
# "1 · Attention is kernel regressi"), and the build counter's contrast with its background
# (it was 2.5:1; WCAG asks 4.5:1 of text).
BAR_JS = """() => {
  const input = document.querySelector('#lecture-chapter input');
  const lum = (c) => { const m = c.match(/[\\d.]+/g).map(Number);
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]); };
  const behind = (el) => { for (; el; el = el.parentElement) { const c = getComputedStyle(el).backgroundColor;
    if (c && c !== 'transparent' && !/rgba\\(.*,\\s*0\\)$/.test(c)) { return c; } } return 'rgb(255, 255, 255)'; };
  const counter = document.querySelector('#deck-info .deck-n');
  let contrast = null;
  if (counter) { const a = lum(getComputedStyle(counter).color), b = lum(behind(counter));
    contrast = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }
  return { title: input ? input.value : '', cut: input ? input.scrollWidth - input.clientWidth : 0, contrast };
}"""

# The figure's title and subtitle as drawn: the width of each subtitle line against the
# figure's (subtitles wrapped at half the slide's width ran to five lines), and whether the
# title was broken at its colon though the whole would have fitted on its line.
SUBTITLE_JS = """(step) => {
  const gd = document.querySelector('#lecture-plot-' + step + ' .js-plotly-plot');
  if (!gd) { return null; }
  const title = gd.querySelector('.gtitle'), sub = gd.querySelector('.gtitle-subtitle');
  const lines = sub ? [...sub.querySelectorAll('tspan.line')] : [];
  const size = (el) => el ? parseFloat(el.style.fontSize || getComputedStyle(el).fontSize) : 0;
  return { width: gd.getBoundingClientRect().width,
           title: title ? title.textContent : '', titleWidth: title ? title.getBoundingClientRect().width : 0,
           titleFont: size(title), subFont: size(sub),
           lines: (lines.length ? lines : (sub ? [sub] : [])).map((l) => l.getBoundingClientRect().width) };
}"""

SCROLL_JS = "() => [document.documentElement.scrollHeight, window.innerHeight, document.documentElement.scrollWidth," \
            " window.innerWidth]"


def small_png(page, path: Path):
    """A screenshot as a palette PNG (a few tens of kB, still sharp for text)."""
    from io import BytesIO

    from PIL import Image
    # The figure drawn can still be resizing to its window (bars of the old height, labels of
    # the new): the picture waits for the page to settle.
    page.wait_for_timeout(500)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    image = Image.open(BytesIO(page.screenshot()))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.convert("RGB").quantize(colors=96, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def open_deck(browser, url: str, width: int, height: int, lang: str):
    context = watch(browser.new_context(viewport={"width": width, "height": height}, locale=LOCALES[lang]))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return context, page, errors


def reach_state(page, ch: int, step: int):
    """Until the deck shows build ``step`` of chapter ``ch``, its figure drawn."""
    page.wait_for_function(f"() => {{ const s = ({STATE_JS})(); return !!s && s.ch === {ch} && s.step === {step}; }}")
    page.wait_for_function(f"() => !!({FIGURE_JS})({step})")


def wait_state(page, ch: int, step: int):
    """The build on screen, and its figure resized to its box: no relayout the page has
    started is still pending (plotly's resize runs on a timer), and a few frames drawn since."""
    reach_state(page, ch, step)
    wait_quiet(page, frames=3, ms=0, requests=False, queue=False)


OWN_CLAIM_JS = """(step) => {
  const el = document.querySelector('#deck-info [data-ch]');
  try { return JSON.parse(el.dataset.says).claims[step] || null; } catch (err) { return null; }
}"""
SHOWS_CLAIM_JS = """(own) => {
  const flat = (s) => String(s).replace(/\\s+/g, ' ').trim();
  const box = document.getElementById('lecture-claim');
  return !!box && flat(box.innerText) === flat(own);
}"""


def check_build(page, width, height, lang, ch, step) -> list[str]:
    where = f"{width}x{height} {lang} ch{ch} build {step}"
    problems = []
    scroll_h, inner_h, scroll_w, inner_w = page.evaluate(SCROLL_JS)
    if scroll_h > inner_h or scroll_w > inner_w:
        problems.append(f"{where}: page scrolls ({scroll_w}x{scroll_h} in {inner_w}x{inner_h})")
    fig = page.evaluate(FIGURE_JS, step)
    if fig["top"] < 0 or fig["bottom"] > inner_h + 1 or fig["right"] > inner_w + 1:
        problems.append(f"{where}: figure outside the window {fig}")
    problems += [f"{where}: {o}" for o in page.evaluate(OVERLAPS_JS, f"#lecture-plot-{step} .js-plotly-plot")]
    problems += [f"{where}: {o}" for o in page.evaluate(COVERED_JS, f"#lecture-plot-{step} .js-plotly-plot")[:3]]
    bar = page.evaluate(BAR_JS)
    if bar["cut"] > 1:
        problems.append(f"{where}: the chapter's title is cut by {bar['cut']} px: {bar['title']!r}")
    if bar["contrast"] is not None and bar["contrast"] < 4.5:
        problems.append(f"{where}: the build counter's contrast is {bar['contrast']:.1f}:1")
    heading = page.evaluate(SUBTITLE_JS, step)
    if heading and len(heading["lines"]) >= 3 and max(heading["lines"]) < 0.7 * heading["width"]:
        problems.append(f"{where}: the subtitle wraps at {max(heading['lines']) / heading['width']:.0%} of the "
                        f"figure's width into {len(heading['lines'])} lines")
    if heading and heading["title"].endswith(":") and heading["lines"] and heading["subFont"] and \
            heading["titleWidth"] + heading["lines"][0] * heading["titleFont"] / heading["subFont"] < 0.8 * heading["width"]:
        problems.append(f"{where}: the title {heading['title']!r} is broken at its colon though the whole fits")
    if stale := page.evaluate(STALE_REFERENCES_JS, step):
        problems.append(f"{where}: {len(stale)} clip paths or fills name another address, e.g. {stale[0]}")
    floor = MIN_TEXT_PX * max(1.0, min(width / 1280, height / 720)) - 0.25
    problems += [f"{where}: text at {t['px']:.1f} px (under {floor:.1f}): {t['text']!r} in {t['where']}"
                 for t in page.evaluate(SMALLEST_TEXT_JS, step) if t["px"] < floor]
    # One claim, the build's own (from the numbers it computed), and no notice on the slide:
    # the notices are in that build's speaker notes.
    own = page.evaluate(OWN_CLAIM_JS, step)
    if not own:
        problems.append(f"{where}: the build has no claim of its own")
    else:
        try:
            page.wait_for_function(SHOWS_CLAIM_JS, arg=own, timeout=3000)
        except Exception:
            problems.append(f"{where}: the slide shows {page.inner_text('#lecture-claim')!r}, not its claim {own!r}")
    if page.locator("#lecture-notices").count() and page.inner_text("#lecture-notices").strip():
        problems.append(f"{where}: a notice on the slide: {page.inner_text('#lecture-notices')[:80]!r}")
    claim = page.inner_text("#lecture-claim")
    title = t(f"ch{ch}.title", lang)
    if title in claim:
        problems.append(f"{where}: the chapter title shows twice")
    if page.locator("#lecture-chapter input").input_value() != title:
        problems.append(f"{where}: the bar does not name the chapter")
    if lang == "zh":                 # no English outside names, units and the text's own tokens
        problems += [f"{where}: English in {text!r}: {words}" for text in page.evaluate(SLIDE_TEXTS_JS, step)
                     if (words := english_words(text))]
    return problems


@pytest.mark.parametrize("width,height,lang", WALKS, ids=[f"{w}x{h}-{lang}" for w, h, lang in WALKS])
def test_walk_the_deck_with_page_down(browser, app_url, width, height, lang):
    context, page, errors = open_deck(browser, app_url + f"?tab=lecture&present=1&lang={lang}&ch=0", width, height,
                                      lang)
    try:
        wait_state(page, 0, 0)
        page.wait_for_function("() => document.body.classList.contains('presentation')")   # the page's own restore
        page.locator("#lecture-claim").click()                      # focus on the page, not a control
        seen, problems, took = [], [], {False: [], True: []}
        while True:
            state = page.evaluate(STATE_JS)
            ch, step, builds = state["ch"], state["step"], state["builds"]
            seen.append((ch, step))
            problems += check_build(page, width, height, lang, ch, step)
            if TAKE_SHOTS:
                small_png(page, SHOTS / f"{lang}-{width}x{height}-ch{ch}-{step + 1}.png")
            if ch == CHAPTERS[-1] and step == builds - 1:
                break
            nxt = (ch, step + 1) if step + 1 < builds else (ch + 1, 0)
            start = time.perf_counter()
            page.keyboard.press("PageDown")
            reach_state(page, *nxt)
            took[nxt[1] == 0].append(time.perf_counter() - start)
            wait_state(page, *nxt)
            assert f"ch={nxt[0]}" in page.url and f"step={nxt[1]}" in page.url, page.url
        # What the speaker waits for (reported, not asserted: speed belongs to the benchmark).
        print(f"\n{width}x{height} {lang}: next build p50 {statistics.median(took[False]):.3f} s, next chapter "
              f"p50 {statistics.median(took[True]):.3f} s (max {max(took[True]):.3f} s)")
        # Every chapter, and each chapter's builds in order from the first.
        assert sorted({c for c, _ in seen}) == list(CHAPTERS)
        for c in CHAPTERS:
            steps = [s for cc, s in seen if cc == c]
            assert steps == list(range(len(steps))) and steps, (c, steps)
        # Past the last build nothing moves; PageUp goes back one build (from the last: had
        # PageDown moved on, PageUp would land on the last build, not the one before it).
        last = seen[-1]
        page.keyboard.press("PageDown")
        assert page.evaluate(STATE_JS)["ch"] == CHAPTERS[-1]
        page.keyboard.press("PageUp")
        wait_state(page, *seen[-2])
        wait_quiet(page, queue=False)                                # nothing more arrives
        state = page.evaluate(STATE_JS)
        assert (state["ch"], state["step"]) == seen[-2] != last, state
        assert not problems, "\n".join(problems)
        assert not errors, errors
    finally:
        context.close()


def test_keys_address_and_speaker_window(browser, app_url):
    context = watch(browser.new_context(viewport={"width": 1280, "height": 720}, locale=LOCALES["en"]))
    context.add_init_script(DRAWS_JS)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app_url + "?tab=lecture&present=1&lang=en&ch=3&step=2")
    try:
        wait_state(page, 3, 2)                                       # the address restores the build
        # Only the address's chapter was drawn: a stale chapter 0 from the page's own load
        # could land after it and leave the deck there.
        assert set(page.evaluate("window.__drawnChapters")) == {"3"}, page.evaluate("window.__drawnChapters")
        # The drawer is closed on a slide; D opens it.
        assert not page.locator("#lecture-drawer").is_visible()
        page.locator("#lecture-claim").click()
        page.keyboard.press("d")
        page.locator("#lecture-drawer").wait_for(state="visible")
        # A slider the speaker touched: → moves the deck, not the slider.
        slider = page.locator("#lecture-controls-3 input[type=range]").first
        before = slider.input_value()
        slider.focus()
        page.keyboard.press("ArrowRight")
        wait_state(page, 3, 3)
        assert slider.input_value() == before
        # In a number box → stays there; PageUp still moves the deck (to 3.2: had the arrow
        # moved it, PageUp would land on 3.1).
        number = page.locator("#lecture-controls-3 input[type=number]").first
        number.click()
        page.keyboard.press("ArrowLeft")
        assert page.evaluate(STATE_JS)["step"] == 3
        page.keyboard.press("PageUp")
        wait_state(page, 3, 2)
        wait_quiet(page, requests=False, queue=False)
        assert page.evaluate(STATE_JS)["step"] == 2
        page.locator("#lecture-claim").click()
        page.keyboard.press("d")
        page.locator("#lecture-drawer").wait_for(state="hidden")
        # Home and End: the first build of the first chapter, the last build of the last.
        page.keyboard.press("Home")
        wait_state(page, 0, 0)
        # The speaker window shows the build on screen, with the notes and a clock.
        speaker = context.new_page()
        speaker.set_default_timeout(TIMEOUT_MS)
        speaker.goto(app_url + "?tab=lecture&present=1&lang=en&ch=0&notes=1")
        speaker.wait_for_function(f"() => !!({STATE_JS})()")
        assert speaker.locator("#deck-notes .deck-clock").is_visible()
        wait_state(speaker, 0, 0)                                    # its hello answered: the deck's build
        builds = page.evaluate(STATE_JS)["builds"]
        assert builds >= 2
        for _ in range(builds - 1):                                  # builds of a chapter: no server
            page.keyboard.press("PageDown")
        wait_state(page, 0, builds - 1)
        wait_state(speaker, 0, builds - 1)
        page.keyboard.press("PageUp")
        wait_state(page, 0, builds - 2)
        wait_state(speaker, 0, builds - 2)
        assert "notes=1" not in page.url
        page.keyboard.press("End")
        state = None
        page.wait_for_function(f"() => {{ const s = ({STATE_JS})(); return s && s.ch === {CHAPTERS[-1]} && "
                               "s.step === s.builds - 1; }")
        state = page.evaluate(STATE_JS)
        assert state["ch"] == CHAPTERS[-1]
        speaker.wait_for_function("() => document.body.classList.contains('deck-at-end')")
        # N shows the notes over the slide.
        page.keyboard.press("n")
        page.locator("#deck-notes").wait_for(state="visible")
        assert not errors, errors
    finally:
        context.close()


def test_a_chinese_link_to_a_later_build_keeps_it_when_opened_again(browser, app_url):
    # The second opening draws the chapter from the server's cache at once; the Chinese
    # re-say that follows empties the build count for a moment, which once sent the deck
    # back to the chapter's first build.
    context = watch(browser.new_context(viewport={"width": 1280, "height": 720}, locale=LOCALES["zh"]))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        for _ in range(2):
            page.goto(app_url + "?tab=lecture&present=1&lang=zh&ch=3&step=2")
            # The chapter on screen and every request answered, then the build it stands on.
            page.wait_for_function(f"() => {{ const s = ({STATE_JS})(); return !!s && s.ch === 3; }}")
            wait_quiet(page, queue=False)
            state = page.evaluate(STATE_JS)
            assert (state["ch"], state["step"]) == (3, 2), state
            assert "step=2" in page.url, page.url
    finally:
        context.close()


TOOL_TABS = {"maps": "maps-plot", "quality": "quality-plot", "state": "state-step", "complexity": "cx-plot",
             "learn": "learn-loss"}


def test_tool_tabs_fit_a_projector(browser, app_url):
    context, page, errors = open_deck(browser, app_url + "?tab=lecture&present=1&lang=en", 1280, 720, "en")
    problems = []
    try:
        for tab, plot in TOOL_TABS.items():
            page.goto(app_url + f"?tab={tab}&present=1&lang=en" + ("&nmin=64&nmax=256&points=3&repeats=1"
                                                                  if tab == "complexity" else ""))
            page.wait_for_selector(f"#{plot}", state="visible")
            if tab != "learn":                                       # learn draws on its button
                page.wait_for_selector(f"#{plot} .js-plotly-plot .main-svg")
            wait_quiet(page, queue=False)                            # the figure is drawn: its own wait
            page.evaluate("() => window.scrollTo(0, 0)")
            small_png(page, SHOTS / f"tool-{tab}-1280x720.png")
            r = page.locator(f"#{plot}").bounding_box()
            if r["y"] < 0 or r["y"] + r["height"] > 720 + 1:
                problems.append(f"{tab}: first figure at {r['y']:.0f}..{r['y'] + r['height']:.0f} px")
            if tab in ("maps", "quality", "state"):
                panel = page.locator("#data-panel").bounding_box()
                if panel is None or panel["height"] > 60:
                    problems.append(f"{tab}: data panel is not one line ({panel})")
                summary = page.inner_text("#data-panel")
                if "MiniLM" not in summary or "✎" not in summary:
                    problems.append(f"{tab}: data panel summary reads {summary[:80]!r}")
        assert not problems, "\n".join(problems)
        assert not errors, errors
    finally:
        context.close()


# When the page shows the chapter it holds (assets/deck.js), and whether it covered the
# figure's middle then: recorded by an observer set up before the press.
HELD_JS = """() => { window.__held = null;
  const seen = new MutationObserver(() => {
    if (!document.body.classList.contains('deck-previewing')) { return; }
    seen.disconnect();
    const top = document.elementFromPoint(window.innerWidth / 2, window.innerHeight * 0.6);
    const held = document.getElementById('deck-preview');
    window.__held = {covers: !!top && !!top.closest('#deck-preview'), text: held ? held.innerText : ''};
  });
  seen.observe(document.body, { attributes: true, attributeFilter: ['class'] }); }"""


def test_the_next_chapter_is_on_screen_at_once_when_the_page_holds_it(browser, app_url):
    """After a chapter draws, the page holds the next chapter's first build, drawn out of
    sight; → past the last build shows it at once (before the server answers), and the
    server's slide then replaces it with the same figure."""
    context, page, errors = open_deck(browser, app_url + "?tab=lecture&present=1&lang=zh&ch=1", 1280, 720, "zh")
    try:
        wait_state(page, 1, 0)
        wait_quiet(page, frames=3, ms=0, requests=False)        # the page's own load chain done too
        reach_state(page, 1, 0)
        page.locator("#lecture-claim").click()
        builds = page.evaluate(STATE_JS)["builds"]
        for step in range(1, builds):
            page.keyboard.press("PageDown")
            wait_state(page, 1, step)
        page.wait_for_function("() => { const e = document.getElementById('deck-preview'); "
                               "return !!e && e.dataset.ch === '2' && !!e.querySelector('.main-svg'); }")
        held_title = page.evaluate("() => document.querySelector('#deck-preview .js-plotly-plot').layout.title.text")
        page.evaluate(HELD_JS)
        page.keyboard.press("PageDown")
        wait_state(page, 2, 0)
        held = page.evaluate("window.__held")
        assert held is not None and held["covers"], held
        assert t("ch2.claim", "zh")[:20] in held["text"]
        # The server's slide is on screen now, with the figure the page held.
        assert not page.evaluate("document.body.classList.contains('deck-previewing')")
        assert page.evaluate(FIGURE_JS, 0)["title"] == held_title
        assert page.evaluate("() => { const e = document.getElementById('deck-preview'); "
                             "return !e || e.dataset.ch === '3'; }")                   # the next one, if any
        assert not errors, errors
    finally:
        context.close()
