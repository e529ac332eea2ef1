"""The lecture as a handout: a PDF with several builds a page, each beside its notes.

    handout_html(slides, lang, per_page=3) -> str     the pages as one HTML document
    write_handout(pdf_path, lang, ...) -> int         the PDF written; returns its page count

The builds are the take-home deck's (``explorer.deck_export.slides``: the app's figures in
presentation style), drawn as static plotly at a slide's size (1280 × 720) and shown
smaller, so no label crowds another; beside each, the build's title and its talking points
(the build's own claim and notes). Printed by Chromium through playwright, as the deck's own PDF is
(``deck_export.write_pdf``): the text stays text, and the page's CSS sets the paper (A4).
"""

from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path

from .lecture import text as lecture_text

PER_PAGE = 3                 # builds a page
MAX_PER_PAGE = 3             # more would shrink a figure below its row
SLIDE_W, SLIDE_H = 1280, 720
FIGURE_SCALE = 0.33          # a slide drawn at 1280 × 720, shown at 422 × 238 CSS px
PAGE_ROOM_PX = 1030          # an A4 page's height inside 12 mm margins, in CSS px (96 per inch)
PAGE_WIDTH_MM = 186          # an A4 page's width inside the same margins
NOTE_PT, MIN_NOTE_PT = 10.5, 6.5   # the talking points' size, and the least a long build's may shrink to


def build_notes(slide: dict, lang: str) -> list[str]:
    """The talking points printed beside a build: its own, from the numbers it computed
    (``deck_export.slides`` fills them from ``ChapterView.notes_in``)."""
    return list(slide.get("notes") or [])


def pages(count: int, per_page: int = PER_PAGE) -> int:
    """How many pages ``count`` builds take."""
    return max(1, math.ceil(count / max(1, min(int(per_page), MAX_PER_PAGE))))


def _row(index: int, slide: dict, lang: str) -> str:
    points = "".join(f"<li>{escape(p)}</li>" for p in build_notes(slide, lang))
    claim = f'<p class="claim">{escape(slide["claim"])}</p>'
    # The article's formulas on the build, under its figure (the room the figure's row leaves
    # there), so that the talking points keep theirs.
    formulas = slide.get("formulas") or []
    typeset = f'<div class="formulas">{"".join(formulas)}</div>' if formulas else ""
    return (f'<div class="row"><div class="left"><div class="fig"><div class="plot" id="f{index}"></div></div>'
            f'{typeset}</div>'
            f'<div class="text"><div class="where">{int(slide["ch"])}.{int(slide["build"])} · '
            f'{escape(slide["title"])}</div>{claim}<ul>{points}</ul></div></div>')


def handout_html(slides: list[dict], lang: str = "en", per_page: int = PER_PAGE) -> str:
    """The handout's pages: ``per_page`` builds each, figure left, notes right."""
    if lang not in lecture_text.LANGS:
        raise ValueError(f"lang: expected one of {', '.join(lecture_text.LANGS)}, got {str(lang)[:20]!r}")
    per_page = max(1, min(int(per_page), MAX_PER_PAGE))
    from plotly.offline import get_plotlyjs
    rows = [_row(i, s, lang) for i, s in enumerate(slides)]
    body = "\n".join(f'<section class="page">{"".join(rows[i:i + per_page])}</section>'
                     for i in range(0, len(rows), per_page))
    figures = json.dumps([s["figure"] for s in slides], separators=(",", ":")).replace("</", "<\\/")
    title = escape(lecture_text.t("lecture.title", lang))
    css = _CSS.replace("ROW_H", f"{int((PAGE_ROOM_PX - 14 * (per_page - 1)) / per_page) - 12}px")
    return (f'<!DOCTYPE html>\n<html lang="{"zh-CN" if lang == "zh" else "en"}">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{title}</title>\n<style>{css}</style>\n</head>\n<body>\n{body}\n"
            f'<script type="application/json" id="handout-figures">{figures}</script>\n'
            f"<script>{get_plotlyjs()}</script>\n<script>{_JS}</script>\n</body>\n</html>\n")


def write_handout(pdf_path, lang: str = "en", text: str | None = None, views: dict | None = None,
                  slides: list[dict] | None = None, per_page: int = PER_PAGE, progress=None) -> int:
    """The handout as a PDF at ``pdf_path`` (its HTML beside it, ``.html``); returns the
    number of pages. Raises RuntimeError saying why when there is no PDF printer."""
    from . import deck_export
    if slides is None:
        views = views if views is not None else deck_export.chapter_views(text, None, progress, lang)
        slides = deck_export.slides(views, lang)
    pdf_path = Path(pdf_path)
    html_path = pdf_path.with_suffix(".html")
    html_path.write_text(handout_html(slides, lang, per_page), encoding="utf-8")
    why_not = deck_export.write_pdf(html_path, pdf_path)
    if why_not:
        raise RuntimeError(why_not)
    return pages(len(slides), per_page)


_CSS = f"""
@page {{ size: A4 portrait; margin: 12mm; }}
html, body {{ margin: 0; font-family: "DejaVu Sans", Arial, "Noto Sans CJK SC", sans-serif; color: #223; }}
/* The paper's width inside its margins on screen too: the notes are measured (and fitted) as
   they will print. */
body {{ width: {PAGE_WIDTH_MM}mm; }}
.page {{ break-after: page; page-break-after: always; display: flex; flex-direction: column; gap: 14px; }}
.page:last-of-type {{ break-after: auto; page-break-after: auto; }}
.row {{ display: flex; gap: 14px; height: ROW_H; break-inside: avoid; border-bottom: 1px solid #dde;
  padding-bottom: 8px; }}
.left {{ flex: 0 0 {int(SLIDE_W * FIGURE_SCALE)}px; width: {int(SLIDE_W * FIGURE_SCALE)}px; overflow: hidden; }}
.fig {{ width: {int(SLIDE_W * FIGURE_SCALE)}px; height: {int(SLIDE_H * FIGURE_SCALE)}px; overflow: hidden;
  position: relative; border: 1px solid #dde; }}
.plot {{ position: absolute; left: 0; top: 0; width: {SLIDE_W}px; height: {SLIDE_H}px;
  transform: scale({FIGURE_SCALE}); transform-origin: 0 0; }}
.text {{ flex: 1 1 auto; min-width: 0; font-size: {NOTE_PT}pt; line-height: 1.35; overflow: hidden; }}
.where {{ font-weight: 700; margin-bottom: 4px; }}
.claim {{ margin: 0 0 4px; color: #445; }}
.formulas {{ display: flex; flex-wrap: wrap; align-items: center; gap: 0.1em 1.5em; margin: 6px 0 0 4px; font-size: 10.5pt; }}
.formulas math {{ font-family: "DejaVu Math TeX Gyre", "STIX Two Math", "Latin Modern Math", math; margin: 0; }}
.formulas mtext {{ font-family: "DejaVu Sans", "Noto Sans CJK SC", sans-serif; }}
ul {{ margin: 0; padding-left: 1.1em; }}
li {{ margin: 0 0 2px; }}
"""

# Draws every build as a static plot at a slide's size, and shrinks the text of a build
# whose talking points do not fit its row until they do (no line is cut: 10 of 34 builds
# lost their last one at one size for all); ``window.deckReady`` once all are drawn and
# fitted (what deck_export.write_pdf waits for before it prints).
_JS = f"""
(function () {{
  const figures = JSON.parse(document.getElementById('handout-figures').textContent);
  window.deckReady = false;
  const fitText = () => {{
    document.querySelectorAll('.row > .text').forEach((box) => {{
      let size = {NOTE_PT};
      box.style.fontSize = '';
      while (box.scrollHeight > box.clientHeight + 0.5 && size > {MIN_NOTE_PT}) {{
        size = Math.round((size - 0.25) * 100) / 100;
        box.style.fontSize = size + 'pt';
      }}
      // Still too long at the least size: its row grows (the page may spill) rather than cut.
      if (box.scrollHeight > box.clientHeight + 0.5) {{ box.closest('.row').style.height = 'auto'; }}
    }});
  }};
  window.handoutFit = fitText;
  window.deckDrawAll = function () {{
    return Promise.all(figures.map((fig, i) => {{
      const layout = Object.assign({{}}, fig.layout || {{}}, {{autosize: false, width: {SLIDE_W}, height: {SLIDE_H}}});
      return Plotly.newPlot('f' + i, fig.data || [], layout, {{staticPlot: true, displayModeBar: false}});
    }})).then(() => (document.fonts ? document.fonts.ready : null)).then(() => {{
      fitText();
      window.deckReady = true;
    }});
  }};
}})();
"""
