"""The exported HTML deck and the handout in real Chromium, on a small deck of plain figures
(no model runs; one page of each per module): the address drives the deck (#ch.build typed,
Back), N lays the notes beside the slide without re-laying its figure, the keys are said
once (the first build, or ?), and the handout fits every talking point into its row.
"""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from explorer import deck_export, handout
from helpers.page import TIMEOUT_MS, watch

pytestmark = pytest.mark.browser

BUILDS = ((0, 2), (5, 3), (6, 2))


def _figure(ch: int, b: int) -> dict:
    """Two panels with long titles side by side, as 6.6 has: drawn narrower, they overlap."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("perplexity on held-out text",
                                                        "FLOPs per token at 100K tokens"))
    fig.add_trace(go.Bar(x=[27.4, 32.3 + ch, 85.9], y=["softmax", "hybrid", "linear"], orientation="h"), 1, 1)
    fig.add_trace(go.Bar(x=[2.6e7, 20992, 16640 + b], y=["softmax", "hybrid", "linear"], orientation="h"), 1, 2)
    fig.update_layout(title=f"Figure {ch}.{b}", showlegend=False)
    return fig.to_plotly_json()


def _slides(notes_per_build: int = 2) -> list[dict]:
    out = []
    for ch, builds in BUILDS:
        for b in range(builds):
            out.append({"ch": ch, "build": b, "builds": builds, "title": f"Chapter {ch}",
                        "claim": f"Claim of build {ch}.{b}",
                        "notes": [f"Talking point {k} of build {ch}.{b}" for k in range(notes_per_build)],
                        "notices": [], "formulas": [], "figure": _figure(ch, b)})
    return out


@pytest.fixture(scope="module")
def deck_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("deck") / "deck.html"
    path.write_text(deck_export.page_html(_slides(), "en", {"kind": "deck"}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def page(browser):
    context = watch(browser.new_context(viewport={"width": 1280, "height": 720}))
    context.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
    p = context.new_page()
    p.set_default_timeout(TIMEOUT_MS)
    yield p
    context.close()


def _open(page, deck_file, hash_: str = ""):
    page.goto("about:blank")                                      # a fresh load, not a hash change
    page.goto(deck_file.as_uri() + hash_)
    page.wait_for_function("window.deckReady === true")


def _on(page) -> str:
    return page.evaluate("() => { const s = document.querySelector('.slide.on'); "
                         "return s.dataset.ch + '.' + s.dataset.build; }")


def test_the_address_drives_the_deck(page, deck_file):
    _open(page, deck_file, "#6.1")
    assert _on(page) == "6.1"
    page.evaluate("() => { location.hash = '#5.1'; }")           # typed into the address bar
    page.wait_for_function("() => document.querySelector('.slide.on').id === 's3'")
    assert _on(page) == "5.1"
    page.go_back()                                                # Back: the build before
    page.wait_for_function("() => location.hash === '#6.1'")
    page.wait_for_function("() => document.querySelector('.slide.on').dataset.ch === '6'")
    assert _on(page) == "6.1"
    page.go_forward()
    page.wait_for_function("() => document.querySelector('.slide.on').dataset.ch === '5'")
    assert _on(page) == "5.1"
    page.keyboard.press("ArrowRight")                             # the keys still write the address
    page.wait_for_function("() => location.hash === '#5.2'")
    page.evaluate("() => { location.hash = '#9.9'; }")            # no such build: the deck stays
    page.wait_for_timeout(200)
    assert _on(page) == "5.2"


FIGURE_JS = """() => { const gd = document.querySelector('.slide.on .js-plotly-plot');
  const r = gd.getBoundingClientRect();
  const titles = Array.from(gd.querySelectorAll('.annotation-text')).map((t) => {
    const b = t.getBoundingClientRect(); return [b.left, b.right, b.top, b.bottom]; });
  return {svgWidth: gd.querySelector('.main-svg').getAttribute('width'), right: r.right, titles}; }"""


def test_notes_lie_beside_the_slide_without_re_laying_its_figure(page, deck_file):
    _open(page, deck_file, "#6.1")
    before = page.evaluate(FIGURE_JS)
    page.keyboard.press("n")
    panel = page.locator("#notes-panel")
    panel.wait_for(state="visible")
    assert "Talking point 1 of build 6.1" in panel.inner_text()
    page.wait_for_timeout(300)                                    # a resize would have landed
    after = page.evaluate(FIGURE_JS)
    assert after["svgWidth"] == before["svgWidth"]                # scaled whole, not drawn narrower
    assert after["right"] <= panel.bounding_box()["x"] + 1        # nothing of it under the notes
    (l1, r1, t1, b1), (l2, r2, t2, b2) = after["titles"]
    assert r1 <= l2 or r2 <= l1 or b1 <= t2 or b2 <= t1, after["titles"]   # the panel titles apart
    page.keyboard.press("ArrowLeft")                              # the panel follows the build
    page.wait_for_function("() => document.getElementById('notes-panel').innerText.includes('build 6.0')")
    page.keyboard.press("n")
    panel.wait_for(state="hidden")


def test_the_keys_are_said_once(page, deck_file):
    help_ = page.locator("#help")
    _open(page, deck_file, "#5.1")                                # a link into the deck: no hint
    assert not help_.is_visible()
    page.keyboard.press("?")                                      # asked for
    help_.wait_for(state="visible")
    page.keyboard.press("?")
    help_.wait_for(state="hidden")
    page.keyboard.press("ArrowRight")
    assert not help_.is_visible()
    _open(page, deck_file, "#0.0")                                # the first build says them
    assert help_.is_visible()
    page.keyboard.press("ArrowRight")
    help_.wait_for(state="hidden")
    page.keyboard.press("ArrowLeft")                              # once: not again on the way back
    page.wait_for_function("() => location.hash === '#0.0'")
    assert not help_.is_visible()


# Every talking point's last line inside its row (the row clips what overflows).
CUT_JS = """() => Array.from(document.querySelectorAll('.row > .text')).flatMap((box, i) => {
  const r = box.getBoundingClientRect();
  return Array.from(box.querySelectorAll('li, .claim, .where')).filter((el) =>
    el.getBoundingClientRect().bottom > r.bottom + 0.5).map((el) => i + ': ' + el.textContent.slice(0, 40)); })"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_handout_cuts_no_note_line(browser, tmp_path, lang):
    slides = _slides(2)
    word = {"en": "The longest talking point of the handout, said at length so that it wraps ",
            "zh": "讲义里最长的一条讲稿提示，写得很长，好让它换行，"}[lang]
    slides[1]["notes"] = [word * 2 + str(k) for k in range(5)]   # more than a row holds at one size
    path = tmp_path / "handout.html"
    path.write_text(handout.handout_html(slides, lang), encoding="utf-8")
    context = watch(browser.new_context(viewport={"width": 1280, "height": 720}))
    try:
        p = context.new_page()
        p.set_default_timeout(TIMEOUT_MS)
        p.goto(path.as_uri())
        p.emulate_media(media="print")
        p.evaluate("window.deckDrawAll()")
        p.wait_for_function("window.deckReady === true")
        assert p.evaluate(CUT_JS) == []
        sizes = p.evaluate("() => Array.from(document.querySelectorAll('.row > .text')).map((b) => "
                           "parseFloat(getComputedStyle(b).fontSize))")
        assert sizes[1] < sizes[0]                                # the long one shrank, the others kept theirs
        assert len(set(sizes[:1] + sizes[2:])) == 1
        # Its build's address as the page's address counts it (from 0).
        assert p.locator(".where").nth(3).inner_text().startswith("5.1 · ")
    finally:
        context.close()
