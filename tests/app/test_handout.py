"""The handout (explorer/handout.py): a PDF with three builds a page beside their notes,
printed by Chromium. Its pages are counted and its text read back from the PDF itself (the
content streams, through each font's ToUnicode map), on a small deck of plain figures, so
no model runs; the command line's option is checked apart."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import plotly.graph_objects as go
import pytest

from explorer import handout
from explorer.__main__ import build_parser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


def _slides(lang: str) -> list[dict]:
    notes = {"en": ["Start with the count of pairs", "Memory grows with the square"],
             "zh": ["先数一数要比较的对数", "内存随平方增长"]}[lang]
    out = []
    for ch, builds in ((0, 3), (1, 2), (2, 2)):
        for b in range(builds):
            fig = go.Figure(go.Bar(x=["a", "b"], y=[1 + b, 2 + ch], text=[f"{ch}.{b}", "x"]))
            fig.update_layout(title=f"Figure {ch}.{b}")
            out.append({"ch": ch, "build": b, "builds": builds, "title": f"Build title {ch}.{b}",
                        "claim": f"Claim of build {ch}.{b}", "notes": [f"{n} ({ch}.{b})" for n in notes],
                        "notices": [], "figure": fig.to_plotly_json(),
                        "formulas": _formulas(ch, b, lang)})
    return out


def _formulas(ch: int, build: int, lang: str) -> list[str]:
    """The lecture's own formulas of that build (MathML; none on most)."""
    from explorer.lecture.chapters import chapter
    return list(chapter(ch).formulas(lang).get(f"b{build}", ()))


def _streams(pdf: bytes) -> list[bytes]:
    out = []
    for m in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S):
        try:
            out.append(zlib.decompress(m.group(1)))
        except zlib.error:
            out.append(m.group(1))
    return out


def _cmaps(streams) -> list[dict]:
    """Every ToUnicode map: glyph code (hex) -> text."""
    maps = []
    for s in streams:
        if b"begincmap" not in s:
            continue
        table = {}
        for block in re.findall(rb"beginbfchar(.*?)endbfchar", s, re.S):
            for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                table[src.decode().upper()] = bytes.fromhex(dst.decode()).decode("utf-16-be", "replace")
        for block in re.findall(rb"beginbfrange(.*?)endbfrange", s, re.S):
            for lo, hi, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                # The first code's text: one character, a math font's (𝑥) a UTF-16 pair.
                first = bytes.fromhex(dst.decode()).decode("utf-16-be", "replace")
                width, start = len(lo), ord(first[0])
                for k, code in enumerate(range(int(lo, 16), int(hi, 16) + 1)):
                    table[f"{code:0{width}X}"] = chr(start + k) if len(first) == 1 else first
        maps.append(table)
    return maps


def pdf_text(pdf: bytes) -> str:
    """The PDF's text, each content stream's glyph strings read through every font map (the
    right one says words; the others say noise a test's search ignores)."""
    streams = _streams(pdf)
    maps = _cmaps(streams)
    out = []
    for s in streams:
        if b"TJ" not in s and b"Tj" not in s:
            continue
        runs = re.findall(rb"<([0-9A-Fa-f]+)>", s)
        for table in maps:
            width = len(next(iter(table), "0000"))
            out.append("".join(table.get(run.decode().upper()[i:i + width], "")
                               for run in runs for i in range(0, len(run), width)))
    return "\n".join(out)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_handout_has_three_builds_a_page_and_their_notes(tmp_path, lang):
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed")
    pytest.importorskip("playwright")
    slides = _slides(lang)
    pdf = tmp_path / "handout.pdf"
    pages = handout.write_handout(pdf, lang, slides=slides)
    assert pages == 3 == handout.pages(len(slides))                   # 7 builds, 3 a page
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == pages
    if lang == "zh":             # its CJK font's map is not read here: the page count stands
        return
    text = re.sub(r"\s+", "", pdf_text(data))
    for note in slides[0]["notes"]:
        # Chinese and Latin letters print in two fonts: each run of one script is found whole.
        for run in re.findall(r"[\u3000-\u9fff\uff00-\uffef]+|[^\u3000-\u9fff\uff00-\uffef\s]+", note):
            assert run in text, (note, run)
    assert "Buildtitle2.1" in text
    # Each build prints its own claim and notes, once.
    html = (tmp_path / "handout.html").read_text(encoding="utf-8")
    for slide in slides:
        assert html.count(slide["notes"][0]) == 1 and html.count(slide["claim"] + "<") == 1
    # The article's formulas of a build print under its figure, as MathML (text, not a picture).
    typeset = [slide for slide in slides if slide["formulas"]]
    assert typeset
    for slide in typeset:
        row = re.search(r'<div class="left">(?:(?!<div class="row">).)*' + re.escape(slide["formulas"][0]), html, re.S)
        assert row and html.count("".join(slide["formulas"])) == 1, (slide["ch"], slide["build"])
    assert "<script src=" not in html


def test_the_command_line_takes_a_handout_path():
    args = build_parser().parse_args(["lecture", "--handout", "out.pdf", "--lang", "zh"])
    assert args.handout == "out.pdf" and args.lang == "zh"


def test_a_handout_in_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="lang"):
        handout.handout_html(_slides("en"), "fr")
