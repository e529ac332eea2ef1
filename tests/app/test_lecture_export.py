"""Exports of the lecture. PNG export of a Chinese view shows the characters: with a CJK font
installed (Debian fonts-noto-cjk, named in packages.txt for Spaces) two different characters
render as two different pictures; without one both would be the same empty box. The deck to
take home is one HTML file that works from file:// with the network off, and prints to a PDF
of one page per build."""

from __future__ import annotations

import re
import shutil
from html import escape
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow      # the deck written once, shared

pytest.importorskip("kaleido")
if not Path("/usr/bin/chromium").exists() and not shutil.which("chromium"):
    pytest.skip("PNG export needs chromium", allow_module_level=True)


def _title_png(tmp_path, text: str) -> np.ndarray:
    import plotly.graph_objects as go
    from PIL import Image

    from explorer.figures.style import Style, finish
    from explorer.ui import downloads

    fig = finish(go.Figure(go.Scatter(x=[0, 1], y=[0, 1])), Style(presentation=True), text, 300)
    path = tmp_path / f"{ord(text[0])}.png"
    assert downloads._png(fig, path), "kaleido could not write the PNG"
    return np.asarray(Image.open(path).convert("L"))


def test_chinese_characters_are_drawn_not_boxes(tmp_path):
    cat, dog = _title_png(tmp_path, "猫猫猫猫"), _title_png(tmp_path, "狗狗狗狗")
    assert cat.shape == dog.shape
    assert (cat != dog).sum() > 200, "two different characters exported as the same picture: no CJK font?"


def test_a_chinese_chapter_exports(tmp_path):
    from helpers.lecture import said_chapter_figures
    from explorer.ui import downloads
    from explorer.lecture.view import chapter_view

    figs = said_chapter_figures(chapter_view(0, n=4096, d=64), lang="zh")
    paths = downloads.export_files("lecture-0", {f"figure-{i}": f for i, f in enumerate(figs)}, {})
    pngs = [p for p in paths if p.endswith(".png")]
    assert len(pngs) == len(figs) and all(Path(p).stat().st_size > 10_000 for p in pngs)


# -- the deck to take home ----------------------------------------------------------------

@pytest.fixture(scope="module")
def deck_files(tmp_path_factory):
    """The English deck written once from the default chapters, with how many builds it has."""
    from explorer.lecture.figures import build_count
    from explorer import deck_export as export

    views = export.chapter_views()
    folder = tmp_path_factory.mktemp("deck")
    html = export.write_deck(folder / "deck.html", "en", views=views)
    return html, sum(build_count(ch) for ch in views), views


def _builds(ch: int) -> int:
    from explorer.lecture.figures import build_count
    return build_count(ch)


def test_the_deck_is_one_file_with_plotly_once(deck_files):
    html, builds, views = deck_files
    page = html.read_text(encoding="utf-8")
    assert page.count('class="slide"') == builds
    assert page.count("Plotly.newPlot") == 1                   # one drawing function, not one bundle per figure
    assert len(re.findall(r"plotly\.js v\d", page)) == 1       # the bundle's banner: embedded once
    # Nothing to fetch: no script, stylesheet, image or font from elsewhere.
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)
    # Each build carries its own claim and notes, filled from the numbers it computed.
    for ch, view in views.items():
        for build in range(_builds(ch)):
            assert escape(view.claim_in(f"b{build}", "en")) in page
            assert escape(view.notes_in(f"b{build}", "en")[0]) in page


def test_the_deck_carries_every_chapters_formulas_and_no_address(deck_files):
    """The article's formulas, as MathML on their builds' slides (every chapter has one), and
    no address in the slides for a browser to fetch (no MathML namespace URL either)."""
    from explorer.lecture.chapters import chapter

    html, _, views = deck_files
    page = html.read_text(encoding="utf-8")
    slides = page[page.index('<main id="deck"'):page.index("</main>")]
    total = 0
    for ch in views:
        typeset = chapter(ch).formulas("en")
        assert typeset, ch
        for build, formulas in typeset.items():
            section = re.search(rf'<section class="slide" id="s\d+" data-ch="{ch}" data-build="{build[1:]}">'
                                r"(.*?)</section>", slides, re.S)
            assert section, (ch, build)
            assert all(formula in section.group(1) for formula in formulas), (ch, build)
            total += len(formulas)
    assert slides.count("<math ") == total > len(views)
    assert not re.search(r"(https?:)?//[\w.-]+\.\w", slides), re.search(r"(https?:)?//[\w.-]+\.\w", slides)


def test_the_deck_carries_its_provenance(deck_files):
    """What each chapter read (its text and token ids, the model file's hash) and its controls."""
    from explorer import deck_export

    html, _, views = deck_files
    rec = deck_export.read_provenance(html)
    assert rec["export"] == "deck" and rec["schema_version"] == 1 and rec["packages"]["torch"]
    assert set(rec["settings"]["chapters"]) == {str(ch) for ch in views}
    texts = [entry for part in rec["inputs"] for entry in part["texts"]]
    assert texts and all(entry["text"] and entry["token_ids"] for entry in texts)
    assert rec["models"] and all(len(f["sha256"]) == 64 for m in rec["models"] for f in m["files"])


@pytest.mark.browser
def test_the_deck_works_from_a_file_with_the_network_off(chromium, deck_files):
    """Opened from file:// with every other request refused: none is attempted, every build
    draws its figure, the keys a clicker sends walk the deck, and no screen scrolls."""
    html, builds, views = deck_files
    context = chromium.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    attempted = []
    context.route(lambda url: not url.startswith("file:"), lambda route: (attempted.append(route.request.url),
                                                                          route.abort()))
    page.goto(html.as_uri())
    page.wait_for_function("window.deckReady === true")
    seen, with_math = [], 0
    for i in range(builds):
        if i:
            page.keyboard.press("PageDown" if i % 2 else "ArrowRight")
            page.wait_for_function("window.deckReady === true")
        state = page.evaluate("""() => {
            const s = document.querySelector('.slide.on');
            const plot = s.querySelector('.js-plotly-plot .main-svg');
            const box = plot ? plot.getBoundingClientRect() : null;
            const maths = [...s.querySelectorAll('.formulas math')].map((m) => m.getBoundingClientRect());
            return {hash: location.hash, ch: s.dataset.ch, build: s.dataset.build,
                    w: box ? box.width : 0, h: box ? box.height : 0, top: box ? box.top : 0,
                    maths: maths.map((r) => [r.width, r.height, r.bottom]),
                    scroll: document.documentElement.scrollHeight, inner: innerHeight};
        }""")
        assert state["hash"] == f"#{state['ch']}.{state['build']}"
        assert state["w"] > 600 and state["h"] > 300, state
        assert state["scroll"] <= state["inner"], state
        # The build's formulas drawn as math (a box each), above its figure.
        assert all(w > 20 and h > 10 and bottom <= state["top"] + 1 for w, h, bottom in state["maths"]), state
        with_math += bool(state["maths"])
        seen.append((int(state["ch"]), int(state["build"])))
    assert seen == [(ch, b) for ch in views for b in range(len(seen)) if (ch, b) in set(seen)]
    assert len(set(seen)) == builds
    assert with_math >= len(views)
    page.keyboard.press("Home")
    assert page.evaluate("location.hash") == "#0.0"
    page.keyboard.press("End")
    assert page.evaluate("location.hash") == f"#{seen[-1][0]}.{seen[-1][1]}"
    page.keyboard.press("PageUp")
    assert page.evaluate("location.hash") == f"#{seen[-2][0]}.{seen[-2][1]}"
    page.keyboard.press("n")
    assert page.evaluate("getComputedStyle(document.getElementById('notes-panel')).display") == "block"
    notes = page.evaluate("document.querySelector('.slide.on .notes').innerHTML")
    assert page.evaluate("document.getElementById('notes-panel').innerHTML") == notes    # the build's own
    assert attempted == []
    context.close()


def test_the_deck_prints_one_page_per_build(deck_files, tmp_path):
    from explorer import deck_export as export

    html, builds, _ = deck_files
    why_not = export.write_pdf(html, tmp_path / "deck.pdf")
    if why_not:
        pytest.skip(why_not)
    data = (tmp_path / "deck.pdf").read_bytes()
    assert data.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page[^s]", data)) == builds
    # The formulas print as text in a math font (scripts/install_test_deps.sh installs one).
    assert re.search(rb"/BaseFont\s*/[A-Z]{6}\+\w*Math", data), "no math font in the PDF: no formula printed?"


def test_the_command_line_writes_the_chinese_deck(tmp_path, monkeypatch, deck_files):
    from explorer import __main__ as cli
    from explorer import deck_export as export

    _, _, views = deck_files
    zh = {ch: view for ch, view in views.items()}
    monkeypatch.setattr(export, "chapter_views", lambda text=None, controls=None, progress=None, lang="en": zh)
    out = tmp_path / "deck.html"
    assert cli.main(["lecture", "--lang", "zh", "--output", str(out), "--no-pdf"]) == 0
    page = out.read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page and "讲者备注" in page
    with pytest.raises(SystemExit):
        cli.main(["lecture", "--lang", "fr", "--output", str(out)])


@pytest.mark.parametrize("flag", [["--output"], ["--numbers"], ["--handout"]])
def test_a_file_in_a_missing_folder_is_refused_before_any_work(tmp_path, capsys, monkeypatch, flag):
    from explorer import __main__ as cli
    from explorer import deck_export as export

    # The export once computed every chapter (30 s) and then failed with a traceback.
    monkeypatch.setattr(export, "chapter_views", lambda *a, **k: pytest.fail("computed before the refusal"))
    out = tmp_path / "no-such-folder" / "out.file"
    assert cli.main(["lecture", *flag, str(out)]) == 2
    assert "no-such-folder does not exist" in capsys.readouterr().err
