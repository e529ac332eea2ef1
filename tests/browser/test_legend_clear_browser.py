"""No legend or annotation of a slide's figure lies on its data: real Chromium, presentation
mode, at 1280×720 and 1920×1080, in English and Chinese.

On each build checked, every plotted point is placed on screen from plotly's own axes
(``_fullLayout``'s ``c2p`` of the trace's calculated data, lines sampled every few pixels
between their points, bars and histogram bins as drawn) and compared with the boxes of the
figure's legend and annotations as drawn: a point or bar inside one of them is covered.

A walk of every build at both resolutions and in both languages takes the deck test's
time twice over (test_deck_browser.py walks them for the other checks); this test checks
the builds where a legend was found on the data (1.3, 3.2, 4.4, 5.7, 6.1) and one or two
more of every chapter: 13 builds, at 1280×720 in English and at 1920×1080 in Chinese (the
deck walk covers the other pairs of size and language for its own checks), 26 screens.
"""

from __future__ import annotations

import pytest

from helpers.page import ARTIFACTS, TIMEOUT_MS, wait_quiet, watch

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (1920, 1080)]
LOCALES = {"en": "en-US", "zh": "zh-CN"}
# (chapter, build counted from 0 as addresses count): the deck shows build b of chapter c as "c · b+1".
BUILDS = [(0, 0), (0, 2), (1, 0), (1, 2), (2, 1), (3, 1), (3, 2), (3, 6), (4, 1), (4, 3), (5, 3), (5, 6), (6, 0)]

STATE_JS = """() => { const el = document.querySelector('#deck-info [data-ch]'), l = document.getElementById('lecture');
  if (!el || !l || el.dataset.builds === '' || l.dataset.step === undefined) { return null; }
  return {ch: Number(el.dataset.ch), step: Number(l.dataset.step)}; }"""

# What covers data: the legend's and every annotation's box on screen; the data: each trace's
# points on screen (inside its axes' plot area), lines sampled between points, bars as drawn.
COVERED_JS = """(selector) => {
  const gd = document.querySelector(selector);
  if (!gd || !gd._fullLayout || !gd.calcdata) { return ['no figure at ' + selector]; }
  const fl = gd._fullLayout, svg = gd.querySelector('.main-svg').getBoundingClientRect();
  const scale = svg.width / fl.width;                 // the deck's enlargement of the page
  const covers = [];
  const add = (el, what) => { const r = el.getBoundingClientRect();
    if (r.width * r.height > 0) { covers.push({what, r}); } };
  gd.querySelectorAll('.infolayer .legend').forEach((el) => add(el, 'legend'));
  gd.querySelectorAll('.infolayer .annotation').forEach((el) => add(el, 'label "' + el.textContent.slice(0, 30) + '"'));
  const inside = (r, x, y) => x > r.left + 1 && x < r.right - 1 && y > r.top + 1 && y < r.bottom - 1;
  const out = [];
  const hit = (what, x, y) => { for (const c of covers) { if (inside(c.r, x, y)) {
    out.push(c.what + ' covers ' + what + ' at (' + Math.round(x) + ', ' + Math.round(y) + ')'); return true; } }
    return false; };
  const axis = (id, letter) => fl[letter + 'axis' + (id && id.length > 1 ? id.slice(1) : '')];
  gd.calcdata.forEach((cd, i) => {
    const trace = cd[0] && cd[0].trace;
    if (!trace || trace.visible !== true || !['scatter', 'scattergl'].includes(trace.type)) { return; }
    const xa = axis(trace.xaxis, 'x'), ya = axis(trace.yaxis, 'y');
    if (!xa || !ya) { return; }
    const px = (p) => [xa._offset + xa.c2p(p.x), ya._offset + ya.c2p(p.y)];
    const inPlot = ([x, y]) => Number.isFinite(x) && Number.isFinite(y) && x >= xa._offset && x <= xa._offset + xa._length &&
      y >= ya._offset && y <= ya._offset + ya._length;
    const name = 'trace ' + i + ' (' + String(trace.name || '').slice(0, 30) + ')';
    const points = cd.map(px);
    const lines = (trace.mode || '').includes('lines');
    for (let j = 0; j < points.length; j++) {
      const [x, y] = points[j];
      if (inPlot(points[j]) && hit(name, svg.left + x * scale, svg.top + y * scale)) { return; }
      if (lines && j + 1 < points.length) {
        const [x2, y2] = points[j + 1];
        const steps = Math.ceil(Math.hypot(x2 - x, y2 - y) / 3);
        for (let k = 1; k < steps && Number.isFinite(steps); k++) {
          const q = [x + (x2 - x) * k / steps, y + (y2 - y) * k / steps];
          if (inPlot(q) && hit(name, svg.left + q[0] * scale, svg.top + q[1] * scale)) { return; }
        }
      }
    }
  });
  gd.querySelectorAll('.barlayer .point path').forEach((el) => {
    const r = el.getBoundingClientRect();
    if (r.width * r.height <= 0) { return; }
    for (const c of covers) {
      if (r.left < c.r.right - 1 && c.r.left < r.right - 1 && r.top < c.r.bottom - 1 && c.r.top < r.bottom - 1) {
        out.push(c.what + ' covers a bar at (' + Math.round(r.left) + ', ' + Math.round(r.top) + ')'); break;
      }
    }
  });
  return out;
}"""


def _show(page, url: str, lang: str, ch: int, step: int, timeout: int = TIMEOUT_MS):
    page.goto(url + f"?tab=lecture&present=1&lang={lang}&ch={ch}&step={step}")
    page.wait_for_function(f"() => {{ const s = ({STATE_JS})(); return !!s && s.ch === {ch} && s.step === {step}; }}",
                           timeout=timeout)
    page.wait_for_selector(f"#lecture-plot-{step} .js-plotly-plot .main-svg", state="attached", timeout=timeout)
    wait_quiet(page, frames=3, ms=300, requests=False, queue=False)


# Each size once, each language once: the larger Chinese words at the larger size, where a
# legend grows most.
SCREENS = [(1280, 720, "en"), (1920, 1080, "zh")]


@pytest.mark.parametrize("width,height,lang", SCREENS, ids=[f"{w}x{h}-{lang}" for w, h, lang in SCREENS])
def test_no_legend_or_label_covers_data(browser, app_url, width, height, lang):
    context = watch(browser.new_context(viewport={"width": width, "height": height}, locale=LOCALES[lang]))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    problems = []
    try:
        for n, (ch, step) in enumerate(BUILDS):
            # The first build waits for the app's warm-up of every chapter, minutes on a loaded machine.
            _show(page, app_url, lang, ch, step, timeout=TIMEOUT_MS * (3 if n == 0 else 1))
            found = page.evaluate(COVERED_JS, f"#lecture-plot-{step} .js-plotly-plot")
            if found:
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / f"covered-{lang}-{width}x{height}-ch{ch}-{step}.png"))
            problems += [f"{width}x{height} {lang} {ch}.{step + 1}: {p}" for p in found[:3]]
        assert not problems, "\n".join(problems)
    finally:
        context.close()
