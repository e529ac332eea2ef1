"""The deck to take home: every chapter and build of the lecture in one self-contained HTML
file (plotly.js embedded once, the figures as interactive plotly, the claims and the
speaker's notes, keyboard navigation), and a PDF of it with one page per build.

    deck_html(lang, text=None, views=None, controls=None) -> str
    write_deck(path, lang, ...) -> Path
    write_pdf(html_path, pdf_path) -> str | None        None when written, else why not

The HTML asks for nothing over the network: no server, no CDN, no fonts from elsewhere.
Keys: → / PageDown / Space next build, ← / PageUp previous, Home / End the ends, a chapter's
number then Enter that chapter, N the notes, B or . a blank screen, F full screen, Esc closes.
The address's hash holds the place (#3.2 = chapter 3, build 2, both counted from 0): a link
reopens it, and an address typed or Back moves the deck. ? shows the keys (said once, on the
first build, until a key is pressed).

The chapters are computed and drawn by ``explorer.lecture.view`` and
``explorer.lecture.figures``, exactly as the app shows them in presentation style. The page
carries its provenance (``explorer.provenance``: the texts and token ids each chapter read,
the models' file hashes, versions, every chapter's controls and seeds) as JSON in
``<script type="application/json" id="provenance">``; ``read_provenance(path)`` reads it back.
"""

from __future__ import annotations

import json
import threading
from html import escape
from pathlib import Path

from . import provenance
from .lecture import text as lecture_text
from .lecture.chapters import CHAPTERS, chapter

PAGE_W, PAGE_H = 1280, 720            # one PDF page per build, a projector's screen


def chapter_views(text: str | None = None, controls: dict | None = None, progress=None, lang: str = "en") -> dict:
    """{chapter: ChapterView} on ``text`` (None: the lecture's own sentence in ``lang`` where
    the chapter's model reads it), with each chapter's controls from ``controls``
    ({chapter: {name: value}}) or its defaults."""
    from .lecture.view import chapter_view
    views = {}
    for i, ch in enumerate(CHAPTERS):
        if progress is not None:
            progress(i / len(CHAPTERS), f"{ch} / {CHAPTERS[-1]}")          # no words: any language
        views[ch] = chapter_view(ch, text=text, lang=lang, **((controls or {}).get(ch, {})))
    return views


def slides(views: dict, lang: str) -> list[dict]:
    """Every build of every chapter, in order: chapter, build, title, the build's own claim,
    its formulas (MathML) and notes (its notices among them: the slide carries none), and
    the figure as plotly JSON (a dict)."""
    from .figures.style import said_figure
    from .lecture.figures import chapter_figures
    out = []
    for ch in CHAPTERS:
        record, view = chapter(ch), views[ch]
        figures = [said_figure(fig, lang) for fig in chapter_figures(view, style=True)]
        typeset = record.formulas(lang)
        for build, fig in enumerate(figures):
            out.append({"ch": ch, "build": build, "builds": len(figures),
                        "title": lecture_text.t(record.title_key, lang),
                        "claim": view.claim_in(f"b{build}", lang),
                        "formulas": list(typeset.get(f"b{build}", ())),
                        "notes": view.notes_in(f"b{build}", lang),
                        "notices": [],
                        "figure": json.loads(fig.to_json())})
    return out


def deck_html(lang: str = "en", text: str | None = None, views: dict | None = None,
              controls: dict | None = None, progress=None) -> str:
    """The whole lecture as one HTML page that works from a file, offline."""
    if lang not in lecture_text.LANGS:
        raise ValueError(f"lang: expected one of {', '.join(lecture_text.LANGS)}, got {str(lang)[:20]!r}")
    views = views if views is not None else chapter_views(text, controls, progress, lang)
    return page_html(slides(views, lang), lang, deck_provenance(views, lang, text))


def page_html(deck: list[dict], lang: str, record: dict) -> str:
    """The page of ``deck`` (``slides``' builds) with its provenance ``record``."""
    from plotly.offline import get_plotlyjs
    sections = "\n".join(_section(i, s, lang) for i, s in enumerate(deck))
    figures = json.dumps([s["figure"] for s in deck], separators=(",", ":")).replace("</", "<\\/")
    title = escape(lecture_text.t("lecture.title", lang))
    where_from = provenance.to_json(record).replace("</", "<\\/")
    return (f'<!DOCTYPE html>\n<html lang="{"zh-CN" if lang == "zh" else "en"}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{title}</title>\n'
            f"<style>{_CSS}</style>\n</head>\n<body>\n"
            f'<main id="deck" data-count="{len(deck)}">\n{sections}\n</main>\n'
            f'<div id="help">{escape(lecture_text.t("lecture.deck_keys", lang))}</div>\n'
            f'<script type="application/json" id="deck-figures">{figures}</script>\n'
            f'<script type="application/json" id="provenance">{where_from}</script>\n'
            f"<script>{get_plotlyjs()}</script>\n<script>{_JS}</script>\n</body>\n</html>\n")


def deck_provenance(views: dict, lang: str, text: str | None) -> dict:
    """The deck's ``provenance.record``: what each chapter read (its input and model) and its
    controls; the seeds are every chapter's "seed" control."""
    inputs, models, controls = [], [], {}
    for ch, view in views.items():
        controls[str(ch)] = dict(view.controls)
        part = getattr(view, "provenance", None) or {}
        if part.get("input") is not None and part["input"] not in inputs:
            inputs.append(part["input"])
        models.append(part.get("model"))
    seeds = [c["seed"] for c in controls.values() if isinstance(c.get("seed"), int)]
    return provenance.record("deck", inputs=inputs, models=models, seeds=seeds,
                             settings={"lang": lang, "text": text, "chapters": controls})


def read_provenance(path) -> dict:
    """The provenance a deck written by ``write_deck`` carries."""
    page = Path(path).read_text(encoding="utf-8")
    start = page.index('<script type="application/json" id="provenance">') + len(
        '<script type="application/json" id="provenance">')
    return json.loads(page[start:page.index("</script>", start)])      # JSON reads <\/ as </


def _section(index: int, slide: dict, lang: str) -> str:
    dots = "".join(f'<span class="dot{" on" if b == slide["build"] else ""}"></span>'
                   for b in range(slide["builds"]))
    notes = "".join(f"<li>{escape(p)}</li>" for p in slide["notes"])
    notices = "".join(f"<li>{escape(n)}</li>" for n in slide["notices"])
    head = escape(lecture_text.t("lecture.notes_head", lang))
    return (f'<section class="slide" id="s{index}" data-ch="{slide["ch"]}" data-build="{slide["build"]}">\n'
            f'<header><span class="where">{slide["ch"]} / {CHAPTERS[-1]}</span>'
            f'<span class="dots">{dots}</span><h1>{escape(slide["title"])}</h1></header>\n'
            f'<p class="claim">{escape(slide["claim"])}</p>\n'
            + formulas_html(slide) +
            f'<div class="figure" id="f{index}"></div>\n'
            f'<aside class="notes"><b>{head}</b><ul>{notes}</ul>'
            + (f'<ul class="notices">{notices}</ul>' if notices else "") + "</aside>\n</section>")


def formulas_html(slide: dict) -> str:
    """The build's formulas in a row under its claim: MathML the lecture built (symbols and
    the language files' words, escaped there), which the browser draws with no script."""
    formulas = slide.get("formulas") or []
    return f'<div class="formulas">{"".join(formulas)}</div>\n' if formulas else ""


_CSS = """
html, body { margin: 0; height: 100%; font-family: "DejaVu Sans", Arial, "Noto Sans CJK SC", sans-serif;
  background: #fff; color: #223; }
.slide { display: none; height: 100vh; box-sizing: border-box; padding: 10px 18px 6px; flex-direction: column; }
.slide.on { display: flex; }
header { display: flex; align-items: center; gap: 14px; flex: 0 0 auto; }
header h1 { font-size: 22px; margin: 0; font-weight: 600; }
.where { font-weight: 600; color: #667; font-variant-numeric: tabular-nums; }
.dots { display: inline-flex; gap: 6px; }
.dot { width: 10px; height: 10px; border-radius: 50%; border: 2px solid #3b6fb6; box-sizing: border-box; }
.dot.on { background: #3b6fb6; }
.claim { font-size: 19px; line-height: 1.35; margin: 6px 0 4px; flex: 0 0 auto; }
.formulas { display: flex; flex-wrap: wrap; align-items: center; gap: 0.15em 2em; margin: 0 0 4px 6px;
  font-size: 22px; line-height: 1.2; flex: 0 0 auto; }
.formulas math { font-family: "DejaVu Math TeX Gyre", "STIX Two Math", "Latin Modern Math", math; margin: 0; }
.formulas mtext { font-family: "DejaVu Sans", "Noto Sans CJK SC", sans-serif; }
.figure { flex: 1 1 auto; min-height: 0; position: relative; }
.notes { display: none; position: fixed; top: 0; right: 0; bottom: 0; width: 32vw; overflow-y: auto;
  background: #fffbea; border-left: 3px solid #e8c547; padding: 12px 16px; font-size: 18px; line-height: 1.4;
  box-sizing: border-box; }
/* The notes of the build on screen are copied into one panel outside the slides (a slide
   scaled below would carry its own notes along). */
.slide .notes { display: none !important; }
body.show-notes #notes-panel { display: block; z-index: 5; }
body.blank::after { content: ''; position: fixed; inset: 0; background: #000; z-index: 10; }
/* N: the slide shrinks whole to the notes' left (scaled, not reflowed: a narrower figure
   would lay its titles over each other), the notes beside it. */
body.show-notes .slide.on { transform: scale(0.66); transform-origin: 0 0; }
.notices { font-size: 14px; color: #555; }
/* The keys, said once: on the first build until a key is pressed, and on ? (the figures of
   every other build keep the whole screen). */
#help { display: none; position: fixed; bottom: 4px; left: 18px; font-size: 12px; color: #666;
  background: #fff; padding: 2px 6px; }
body.show-help #help { display: block; }
@media print {
  @page { size: 1280px 720px; margin: 0; }
  #help { display: none; }
  .slide { display: flex !important; width: 1280px; height: 720px; page-break-after: always; break-after: page; }
  .slide:last-child { page-break-after: auto; break-after: auto; }
}
"""

# Draws a slide's figure the first time it is shown (plotly sizes it to its box then), keeps
# the place in the address, and moves on the keys a clicker sends. ``window.deckReady`` is
# set once every figure asked for has been drawn (print: all of them).
_JS = r"""
(function () {
  const slides = Array.from(document.querySelectorAll('.slide'));
  const figures = JSON.parse(document.getElementById('deck-figures').textContent);
  const config = {responsive: true, displaylogo: false, scrollZoom: false};
  const drawn = new Set();
  let current = 0;
  let typed = '', typedAt = 0;     // digits typed before Enter
  let keyed = false, helpAsked = false;   // a key pressed (the hint has been seen); ? pressed
  const panel = document.createElement('aside');   // N: the notes of the build on screen
  panel.id = 'notes-panel';
  panel.className = 'notes';
  document.body.appendChild(panel);
  function draw(i) {
    if (drawn.has(i)) { return Promise.resolve(); }
    drawn.add(i);
    const fig = figures[i];
    return Plotly.newPlot('f' + i, fig.data, fig.layout, config);
  }
  function show(i) {
    current = Math.max(0, Math.min(slides.length - 1, i));
    slides.forEach((s, j) => s.classList.toggle('on', j === current));
    const s = slides[current];
    const notes = s.querySelector('.notes');
    if (notes && panel.innerHTML !== notes.innerHTML) { panel.innerHTML = notes.innerHTML; }
    const hash = '#' + s.dataset.ch + '.' + s.dataset.build;
    if (location.hash !== hash) { history.replaceState(null, '', hash); }
    document.body.classList.toggle('show-help', helpAsked || (current === 0 && !keyed));
    window.deckReady = false;
    draw(current).then(() => { Plotly.Plots.resize('f' + current); window.deckReady = true; });
  }
  // The build the address names (#5.1: chapter 5, build 1, counted from 0), or -1.
  function fromHash() {
    const m = /^#(\d+)\.(\d+)$/.exec(location.hash || '');
    if (!m) { return -1; }
    return slides.findIndex(s => s.dataset.ch === String(Number(m[1])) && s.dataset.build === String(Number(m[2])));
  }
  // An address typed or a step back through the history moves the deck there.
  function followHash() { const i = fromHash(); if (i >= 0 && i !== current) { show(i); } }
  window.addEventListener('hashchange', followHash);
  window.addEventListener('popstate', followHash);
  document.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) { return; }
    const k = e.key;
    if (k === '?') {
      helpAsked = !document.body.classList.contains('show-help');
      keyed = true;
      document.body.classList.toggle('show-help', helpAsked);
      e.preventDefault();
      return;
    }
    if (!keyed || helpAsked) { keyed = true; helpAsked = false; document.body.classList.remove('show-help'); }
    if (k === 'ArrowRight' || k === 'PageDown' || k === ' ' || k === 'Spacebar') { show(current + 1); }
    else if (k === 'ArrowLeft' || k === 'PageUp') { show(current - 1); }
    else if (k === 'Home') { show(0); }
    else if (k === 'End') { show(slides.length - 1); }
    else if (k === 'n' || k === 'N') { document.body.classList.toggle('show-notes'); } else if (/^[0-9]$/.test(k)) { typed = (Date.now() - typedAt < 3000 ? typed : '') + k; typedAt = Date.now(); return; }
    else if (k === 'Enter' && typed && Date.now() - typedAt < 3000) {    // a chapter's number, then Enter
      const i = slides.findIndex(s => s.dataset.ch === String(Number(typed)) && s.dataset.build === '0');
      typed = '';
      if (i >= 0) { show(i); }
    } else if (k === 'b' || k === 'B' || k === '.') { document.body.classList.toggle('blank'); }
    else if (k === 'f' || k === 'F') {
      if (document.fullscreenElement) { document.exitFullscreen(); } else if (document.documentElement.requestFullscreen) {
        Promise.resolve(document.documentElement.requestFullscreen()).catch(() => {});
      }
    } else if (k === 'Escape') { document.body.classList.remove('blank', 'show-notes'); }
    else { return; }
    e.preventDefault();
  });
  window.deckShow = show;
  window.deckDrawAll = function () {
    slides.forEach(s => s.classList.add('on'));
    return Promise.all(slides.map((s, i) => draw(i))).then(() => { window.deckReady = true; });
  };
  window.addEventListener('beforeprint', () => { slides.forEach(s => s.classList.add('on')); });
  show(Math.max(0, fromHash()));
})();
"""


def write_deck(path, lang: str = "en", text: str | None = None, views: dict | None = None,
               controls: dict | None = None, progress=None) -> Path:
    """``deck_html`` written to ``path`` (UTF-8); returns the path."""
    path = Path(path)
    path.write_text(deck_html(lang, text, views, controls, progress), encoding="utf-8")
    return path


def write_pdf(html_path, pdf_path, browser: str = "/usr/bin/chromium") -> str | None:
    """Print the deck at ``html_path`` to ``pdf_path``, one 1280 × 720 page per build, with
    Chromium driven by playwright (every figure drawn first). Returns None when written,
    else one sentence saying why not (no playwright, no browser), so a caller can say so."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "the PDF needs the Python package playwright, which is not installed"
    if not Path(browser).exists():
        return f"the PDF needs Chromium at {browser}, which is not there"
    html_path, pdf_path = Path(html_path).resolve(), Path(pdf_path)
    # In a thread of its own: playwright's sync API refuses to run where an event loop (a
    # web server's handler, another playwright session) already runs in this thread.
    failure = []
    worker = threading.Thread(target=lambda: _print(html_path, pdf_path, browser, failure), daemon=True)
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
    return None


def _print(html_path: Path, pdf_path: Path, browser: str, failure: list) -> None:
    from playwright.sync_api import sync_playwright
    try:
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=browser, args=["--headless", "--no-sandbox", "--disable-gpu",
                                                                        "--no-first-run", "--disable-sync",
                                                                        "--disable-background-networking"])
            try:
                page = chromium.new_page(viewport={"width": PAGE_W, "height": PAGE_H})
                page.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
                page.goto(html_path.as_uri())
                page.emulate_media(media="print")
                page.evaluate("window.deckDrawAll()")
                page.wait_for_function("window.deckReady === true", timeout=120_000)
                page.pdf(path=str(pdf_path), width=f"{PAGE_W}px", height=f"{PAGE_H}px", print_background=True,
                         prefer_css_page_size=True)
            finally:
                chromium.close()
    except Exception as exc:          # handed to the caller's thread
        failure.append(exc)
