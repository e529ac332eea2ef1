"""The lecture's figures on a 1280 x 720 projector (presentation style), in both languages:
titles and notes stay inside the figure's column, labels are readable and do not overlap,
and no text carries markup that nothing renders."""

import json
import os
import re

import pytest

from explorer.lecture.figures import column_px
from helpers.lecture import said_chapter_figures
from explorer.lecture.ch1_kernel_regression.figures import KEY_LABELS
from explorer.figures.style import CHAR_EM, Style
from explorer.lecture.ch2_associativity import maths as associativity
from explorer.lecture import text as lecture_text
from explorer.lecture import view as lecture

from helpers.words import lecture_english_words as english_words

pytestmark = pytest.mark.usefixtures("lecture_chapter_five")     # chapter 5 on SmolLM2, once a run (conftest)

TEXT = "The trophy did not fit into the brown suitcase because it was too big, so Anna took it out."
PROJECTOR = Style(presentation=True)
FONT_DIR = "/usr/share/fonts/truetype/dejavu"


@pytest.fixture(scope="module")
def views():
    return {ch: lecture.chapter_view(ch, text=TEXT) for ch in lecture.CHAPTERS}


def _fonts():
    try:
        from PIL import ImageFont
        return {bold: ImageFont.truetype(os.path.join(FONT_DIR, "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"),
                                         100) for bold in (False, True)}
    except (ImportError, OSError):
        return None


FONTS = _fonts()


def measured_px(line: str, size: float) -> float:
    """Width of one line in px, on the safe side: DejaVu Sans's own advances (bold inside
    <b>) but at least the 0.6 em that ``finish`` counts per character, and a full em for CJK
    characters (drawn from the CJK fallback font); without the font file, 0.62 em."""
    width = 0.0
    for bold, chunk in enumerate(re.split(r"</?b>", line)):
        chunk = re.sub(r"<[^>]+>", "", chunk)
        for ch in chunk:
            if re.match(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]", ch):
                width += size
            elif FONTS:
                width += max(CHAR_EM, FONTS[bold % 2 == 1].getlength(ch) / 100) * size
            else:
                width += 0.62 * size
    return width


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_titles_and_notes_stay_inside_the_lecture_column(views, lang):
    column = column_px(PROJECTOR)                      # the slide's width on a 1280-px projector
    room = column - 0.01 * column - 8                  # title at x = 0.01, a little air on the right
    for ch, view in views.items():
        for fig in said_chapter_figures(view, lang, PROJECTOR):
            title = fig.layout.title
            lines = [(line, title.font.size) for line in title.text.split("<br>")]
            if title.subtitle and title.subtitle.text:
                lines += [(line, title.subtitle.font.size) for line in title.subtitle.text.split("<br>")]
            for line, size in lines:
                assert measured_px(line, size) <= room, (ch, lang, line, round(measured_px(line, size)))


def _bar_text_sizes(fig):
    return [bar.textfont.size for bar in fig.data if bar.type == "bar" and bar.text is not None]


def test_chapter_zero_draws_its_growth_on_linear_axes(views):
    """×38,000 on a log axis looks like a few steps: the opening's curve, the pairs, the memory
    and the FLOPs are on linear axes, each bar labelled with its number at a readable size."""
    for lang in ("en", "zh"):
        figs = said_chapter_figures(views[0], lang, PROJECTOR)
        assert len(figs) == 4
        for fig in figs:
            assert fig.layout.yaxis.type in (None, "linear", "-")
            assert fig.layout.xaxis.type in (None, "linear", "-", "category")
        for fig in figs[1:]:
            sizes = _bar_text_sizes(fig)
            assert sizes and all(s is not None and s >= PROJECTOR.tick_font for s in sizes), sizes
            for bar in fig.data:
                assert bar.constraintext == "none"      # plotly would shrink them to the bar's width
        _, pairs, memory, _ = figs
        assert list(pairs.data[0].y) == [row["pairs"] for row in views[0].data["ladder"]]
        assert [t.name for t in memory.data] == ["float32", "float16"]
        assert list(memory.data[0].y) == pytest.approx([row["bytes_f32"] / 1e9 for row in views[0].data["ladder"]])


def test_chapter_zero_opens_with_the_articles_teacher_and_a_parabola(views):
    """The opening: a class of 1,000 where everyone compares with everyone, 1,000 × 1,000 pairs
    (N², as the chapter counts them), on class sizes from the N control's own minimum and step
    to twice the class, the class and its double marked with their counts."""
    from explorer.lecture.ch0_bottleneck import CHAPTER
    from explorer.lecture.ch0_bottleneck import maths as bottleneck

    view = views[0]
    spec = next(s for s in CHAPTER.controls if s.name == "n")
    curve = view.data["class_curve"]
    sizes = [row["n"] for row in curve]
    assert sizes[0] == spec.min and sizes[-1] == 2 * bottleneck.TEACHER_CLASS == 2000
    assert 1000 in sizes and all(b > a for a, b in zip(sizes, sizes[1:]))
    assert set(range(int(spec.min), 2001, int(spec.step))) <= set(sizes)
    assert all(row["pairs"] == row["n"] ** 2 for row in curve)
    n = view.numbers
    assert (n["teacher_students"], n["teacher_comparisons"]) == (1000, 1_000_000)
    assert (n["teacher_double_students"], n["teacher_double_comparisons"], n["teacher_double_growth"]) == (2000, 4e6, 4)
    for lang in ("en", "zh"):
        line, points = said_chapter_figures(view, lang, PROJECTOR)[0].data
        assert list(line.x) == sizes and list(line.y) == [row["pairs"] for row in curve]
        assert list(points.x) == [1000, 2000] and list(points.y) == [1_000_000, 4_000_000]
        assert "1,000,000" in points.text[0] and "4,000,000" in points.text[1]
        # Quadratic: the pairs per added student grow with the class (2N + 1 for one more).
        slopes = [(y1 - y0) / (x1 - x0) for x0, x1, y0, y1 in zip(line.x, line.x[1:], line.y, line.y[1:])]
        assert all(b > a > 0 for a, b in zip(slopes, slopes[1:]))
        assert "1,000,000" in view.claim_in("b0", lang) and "1,000" in view.claim_in("b0", lang)


# The window sizes a slide's figure gets: 1280 x 720 with the speaker's notes open (the
# narrowest), 1280 x 720 and 1920 x 1080 with the figure across the screen.
# A slide's figure in page px: 1280 less the page's margins at any window (a larger one enlarges
# the slide, a narrower one shrinks it), short or tall, and a window wider than 16:9.
SLIDE_SIZES = ((1196, 430), (1196, 600), (1880, 880))


def _ch2_boxes(fig_json, width, height):
    """Every annotation and shape of the associativity figure as a px box (x0, x1, y0, y1),
    y upwards from the figure's bottom, at a plot of ``width`` x ``height`` px: both rows are
    held to one scale by scaleanchor with constrain="domain" (plotly shrinks the roomier
    axis's domain about its centre), the labels sit in paper units."""
    layout = fig_json["layout"]
    margin = layout["margin"]
    plot_w, plot_h = width - margin["l"] - margin["r"], height - margin["t"] - margin["b"]
    xr = layout["xaxis"]["range"]
    rows = {}
    for name in ("yaxis", "yaxis2"):
        axis = layout[name]
        lo, hi = axis["domain"]
        yr = axis["range"]
        rows[name] = (lo, hi, yr)
    unit = min(min(plot_w / (xr[1] - xr[0]), (hi - lo) * plot_h / (yr[1] - yr[0])) for lo, hi, yr in rows.values())
    x_left = margin["l"] + (plot_w - (xr[1] - xr[0]) * unit) / 2

    def px_x(x, ref):
        return margin["l"] + x * plot_w if ref == "paper" else x_left + (x - xr[0]) * unit

    def px_y(y, ref):
        if ref == "paper":
            return margin["b"] + y * plot_h
        lo, hi, yr = rows["yaxis" if ref == "y" else "yaxis2"]
        centre = margin["b"] + (lo + hi) / 2 * plot_h
        return centre + (y - (yr[0] + yr[1]) / 2) * unit

    boxes = []
    for ann in layout.get("annotations", []):
        lines = ann["text"].split("<br>")
        size = ann["font"]["size"]
        w = max(measured_px(line, size) for line in lines)
        h = len(lines) * size * 1.25
        x, y = px_x(ann["x"], ann.get("xref", "x")), px_y(ann["y"], ann.get("yref", "y")) + ann.get("yshift", 0)
        xanchor, yanchor = ann.get("xanchor", "center"), ann.get("yanchor", "middle")
        x0 = x if xanchor == "left" else x - w if xanchor == "right" else x - w / 2
        y0 = y - h if yanchor == "top" else y if yanchor == "bottom" else y - h / 2
        boxes.append((ann["text"], (x0, x0 + w, y0, y0 + h)))
    for shape in layout.get("shapes", []):
        ref = shape.get("yref", "y")
        boxes.append(("block", (px_x(shape["x0"], "x"), px_x(shape["x1"], "x"),
                                px_y(shape["y0"], ref), px_y(shape["y1"], ref))))
    return boxes, plot_h + margin["b"]


def _intersect(a, b, air=1.0):
    return a[0] < b[1] - air and b[0] < a[1] - air and a[2] < b[3] - air and b[2] < a[3] - air


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_associativity_labels_never_overlap_over_the_whole_range_of_n(views, lang):
    """The two orders' blocks and their labels, at every N, d, m the controls allow and at
    every window size a slide gets: no label on a block or on another label, none below
    the figure's bottom or into the title's room."""
    spec = {s.name: s for s in lecture.chapter_controls(2)}
    base = views[2]
    for n in (spec["n"].min, 64, 512, 513, 4096, 65_536, spec["n"].max):
        for d, m in ((64, 64), (spec["d"].min, spec["m"].max), (spec["d"].max, spec["m"].min)):
            shapes = associativity.orders(n, d, m)
            largest = max(n, m, d)
            view = lecture.ChapterView(ch=2, controls=dict(base.controls, n=n, d=d, m=m), numbers=base.numbers,
                                       data=dict(base.data, orders=shapes,
                                                 left_sides=associativity.block_sides(shapes["left"], largest),
                                                 right_sides=associativity.block_sides(shapes["right"], largest),
                                                 sides_compressed=largest > associativity.LINEAR_DRAW_LIMIT))
            fig = json.loads(said_chapter_figures(view, lang, PROJECTOR)[0].to_json())
            for width, height in SLIDE_SIZES:
                boxes, top = _ch2_boxes(fig, width, height)
                for i, (text_a, a) in enumerate(boxes):
                    assert a[2] >= -1 and a[3] <= top + 1, (n, d, m, width, text_a)
                    for text_b, b in boxes[i + 1:]:
                        if text_a == "block" and text_b == "block":
                            continue
                        assert not _intersect(a, b), (n, d, m, width, height, text_a, text_b)
            sizes = [a["font"]["size"] for a in fig["layout"]["annotations"]]
            assert min(sizes) >= PROJECTOR.tick_font - 5, (n, d, m, sizes)


def test_the_right_order_multiplies_in_order():
    """φ(Q)(φ(K)ᵀV): each product's blocks chain (a's columns are b's rows, the result is
    a's rows by b's columns), and the right order's second product is φ(Q) times φ(K)ᵀV."""
    o = associativity.orders(1000, 64, 32, 16)
    for blocks in (o["left"], o["right"]):
        for a, b, c in (blocks[0:3], blocks[3:6]):
            assert a["cols"] == b["rows"] and (c["rows"], c["cols"]) == (a["rows"], b["cols"]), (a, b, c)
    assert [b["name"] for b in o["right"][3:]] == ["φ(Q)", "φ(K)ᵀV", "O"]
    assert [b["name"] for b in o["left"][:3]] == ["φ(Q)", "φ(K)ᵀ", "φ(Q)φ(K)ᵀ"]
    assert associativity.STEP_OPS == ("×", "=", "", "×", "=")


def test_no_text_carries_markup_that_nothing_renders():
    for key, entry in lecture_text.TEXT.items():
        for lang, text in entry.items():
            assert "^{" not in text and "\\" not in text and "_{" not in text, (key, lang, text)
    assert "exp(‖q′+k′‖²)" in lecture_text.t("ch3.claim", "en")
    assert "exp(‖q′+k′‖²)" in lecture_text.t("ch3.claim", "zh")


@pytest.mark.slow
def test_every_number_of_every_chapter_has_a_readable_label(views):
    # The default views, the try-this presets and the other choices of each chapter,
    # so that every family of keys (per map, per lag, per kept layer) is met.
    seen = {}
    more = [lecture.chapter_view(ch, text=TEXT, **lecture.try_this(ch)) for ch in lecture.CHAPTERS]
    more.append(lecture.chapter_view(2, text=TEXT, map="favor_plus_orthogonal"))
    for view in list(views.values()) + more:
        for key in view.numbers:
            seen.setdefault(key, view.ch)
    assert any("[" in key for key in seen)
    for key, ch in seen.items():
        labels = {lang: lecture_text.number_label(key, lang) for lang in ("en", "zh")}
        for lang, label in labels.items():
            assert label and label != key and "{" not in label, (ch, key, lang, label)
        assert labels["en"] != labels["zh"], key
        assert re.search(r"[\u4e00-\u9fff]", labels["zh"]), (key, labels["zh"])
        inner = re.search(r"\[(.+)\]", key)
        if inner and key.startswith(("kernel_rel_error", "mean_kl", "median_kl")):
            assert lecture_text.map_words(inner.group(1), "en") in labels["en"], (key, labels["en"])    # which map
        if key.startswith("roadmap_kl"):
            assert labels["en"].startswith("roadmap, 20"), labels["en"]    # which step
    with pytest.raises(KeyError):
        lecture_text.number_label("no_such_number", "en")


def test_finish_assigns_the_white_template_and_the_figure_is_the_same(views):
    import plotly.graph_objects as go
    from explorer.figures.style import finish

    sample = go.Figure(go.Scatter(x=[1, 10, 100], y=[3, 1, 2]))
    sample.update_yaxes(type="log")
    figs = [finish(sample, PROJECTOR, "A title · with a tail", 400, "a note")]
    figs += said_chapter_figures(views[0], "zh", PROJECTOR)[:1]
    for fig in figs:
        by_name = go.Figure(fig)
        by_name.update_layout(template="plotly_white")        # how finish() set it before
        assert json.loads(fig.to_json()) == json.loads(by_name.to_json())
        assert fig.layout.template.layout.paper_bgcolor == "white"
    # Each figure holds its own copy: changing one leaves the next figure as it was.
    figs[0].layout.template.layout.font.size = 99
    again = finish(go.Figure(go.Scatter(x=[1], y=[1])), PROJECTOR, "t", 400)
    assert again.layout.template.layout.font.size != 99


def test_english_words_are_found():
    old_note = "FLOPs ×3 · time ×2 at N = 2,048 (FLOP model there ×3; matmul 200 GFLOP/s now)"
    assert english_words(old_note) == ["time", "at", "model", "there", "matmul", "now"]
    assert english_words("实测耗时 ×2（N = 2,048；该处 FLOP 模型 ×3；elu+1 与 FAVOR+）") == []


def test_chinese_figures_have_no_english_words(views):
    """Titles and notes of every chapter in Chinese hold no English word but units and
    names: a note built in English would show up here."""
    for ch, view in views.items():
        for fig in said_chapter_figures(view, "zh", PROJECTOR):
            title = fig.layout.title
            text = (title.text or "") + " " + ((title.subtitle.text if title.subtitle else "") or "")
            assert not english_words(text), (ch, english_words(text), text)


def test_chapter_one_names_the_heaviest_keys_and_sums_the_rest(views):
    """The query's weights: the heaviest keys as labelled horizontal bars (a label under each
    of dozens of keys cannot be read on a projector), the rest summed in the note."""
    view = views[1]
    weights = view.data["head"]["weights"]
    for lang in ("en", "zh"):
        fig = said_chapter_figures(view, lang, PROJECTOR)[1]
        bars = fig.data[0]
        assert bars.orientation == "h" and len(bars.y) == min(KEY_LABELS, len(weights))
        assert sorted(bars.x, reverse=True) == sorted(sorted(weights, reverse=True)[:len(bars.x)], reverse=True)
        assert list(bars.x) == sorted(bars.x)                       # heaviest at the top
        rest = float(sum(weights) - sum(bars.x))
        assert f"{rest:.2f}" in fig.layout.title.subtitle.text


# A panel title breaks where a reader pauses: at a space between Latin words, after Chinese
# punctuation, before an opening bracket; never between two Chinese characters of a word
# (「每个头的浮 / 点运算次数」), never inside "m = 64" ("(m / = 64)").
_PAUSE_AFTER, _PAUSE_BEFORE = set("，。；：、）」』！？"), set("（「『(")


def _bad_breaks(text: str) -> list[str]:
    import unicodedata
    wide = lambda c: unicodedata.east_asian_width(c) in "WF"     # noqa: E731
    lines = [re.sub(r"<[^>]+>", "", line) for line in text.split("<br>")]
    bad = []
    for a, b in zip(lines, lines[1:]):
        a, b = a.rstrip(), b.lstrip()
        if not a or not b:
            continue
        inside_word = wide(a[-1]) and wide(b[0]) and a[-1] not in _PAUSE_AFTER and b[0] not in _PAUSE_BEFORE
        if inside_word or b.startswith("=") or a.endswith("="):
            bad.append(f"{a[-6:]} / {b[:6]}")
    return bad


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_panel_title_breaks_inside_a_word(lang):
    from explorer.figures.style import _is_panel_title
    found = []
    for ch in lecture.CHAPTERS:
        view = lecture.chapter_view(ch, lang=lang)
        for build, fig in enumerate(said_chapter_figures(view, lang, True)):
            for ann in fig.layout.annotations or ():
                if ann.text and _is_panel_title(ann.to_plotly_json()):
                    found += [f"{ch}.{build}: {b}" for b in _bad_breaks(ann.text)]
    assert not found, found
    assert _bad_breaks("每个头的浮<br>点运算次数") and _bad_breaks("FAVOR+ (orthogonal) (m<br>= 64)")
    assert not _bad_breaks("早期的键<br>（最先写入）") and not _bad_breaks("seconds<br>(measured now)")


def test_wrap_breaks_where_a_reader_pauses():
    from explorer.figures.style import wrap
    assert wrap("FAVOR+ (orthogonal) (m = 64)", 22, break_words=False) == ["FAVOR+ (orthogonal)", "(m = 64)"]
    assert wrap("秒（当场实测）", 5, break_words=False)[0] == "秒"            # before the bracket, not inside 实测
    assert wrap("Taylor-1 (m = 65)", 12, break_words=False) == ["Taylor-1", "(m = 65)"]
