"""The lecture's figures on a 1280 x 720 projector (presentation style), in both languages:
titles and notes stay inside the figure's column, labels are readable and do not overlap,
and no text carries markup that nothing renders."""

import json
import os
import re

import pytest

from explorer.figures import lecture as lecture_figures
from explorer.figures.lecture import COLUMN_PX, chapter_figures
from explorer.figures.style import CHAR_EM, Style
from explorer.lecture import associativity
from explorer.lecture import text as lecture_text
from explorer.views import lecture

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


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_titles_and_notes_stay_inside_the_lecture_column(views, lang):
    room = COLUMN_PX - 0.01 * COLUMN_PX - 8            # title at x = 0.01, a little air on the right
    for ch, view in views.items():
        for fig in chapter_figures(view, lang, PROJECTOR):
            title = fig.layout.title
            lines = [(line, title.font.size) for line in title.text.split("<br>")]
            if title.subtitle and title.subtitle.text:
                lines += [(line, title.subtitle.font.size) for line in title.subtitle.text.split("<br>")]
            for line, size in lines:
                assert measured_px(line, size) <= room, (ch, lang, line, round(measured_px(line, size)))


def _bar_text_sizes(fig):
    return [bar.textfont.size for bar in fig.data if bar.type == "bar" and bar.text is not None]


def test_chapter_zero_bar_labels_are_readable_and_do_not_overlap(views):
    for lang in ("en", "zh"):
        figs = chapter_figures(views[0], lang, PROJECTOR)
        for fig in figs:
            sizes = _bar_text_sizes(fig)
            assert sizes and all(s is not None and s >= PROJECTOR.tick_font for s in sizes), sizes
            for bar in fig.data:
                assert bar.constraintext == "none"      # plotly would shrink them to the bar's width
        ladder = figs[0]
        groups = len(ladder.data[0].x)
        bar_px = (COLUMN_PX - 130) / groups * 0.8 / len(ladder.data)     # plotly's default gaps
        for bar in ladder.data:
            # Upright labels are one line tall across: they must fit their bar's width.
            assert bar.textangle == -90 and bar.textfont.size * 1.2 <= bar_px, (bar.textfont.size, bar_px)


def _axis_px(layout, height, name):
    """px per data unit of an axis held to the other by scaleanchor (plotly: the smaller)."""
    margin = layout["margin"]
    plot_w = COLUMN_PX - margin["l"] - margin["r"]
    plot_h = height - margin["t"] - margin["b"]
    xr, yr = layout["xaxis"]["range"], layout["yaxis"]["range"]
    unit = min(plot_w / (xr[1] - xr[0]), plot_h / (yr[1] - yr[0]))
    return unit


def _boxes(fig_json):
    """Every annotation and shape of the associativity figure as a px box (x0, x1, y0, y1),
    y upwards, from the figure JSON and the estimated text extents."""
    layout = fig_json["layout"]
    unit = _axis_px(layout, layout["height"], "x")
    boxes = []
    for ann in layout.get("annotations", []):
        lines = ann["text"].split("<br>")
        size = ann["font"]["size"]
        w = max(measured_px(line, size) for line in lines)
        h = len(lines) * size * 1.25
        x, y = ann["x"] * unit, ann["y"] * unit + ann.get("yshift", 0)
        xanchor, yanchor = ann.get("xanchor", "center"), ann.get("yanchor", "middle")
        x0 = x if xanchor == "left" else x - w if xanchor == "right" else x - w / 2
        y0 = y - h if yanchor == "top" else y if yanchor == "bottom" else y - h / 2
        boxes.append((ann["text"], (x0, x0 + w, y0, y0 + h)))
    for shape in layout.get("shapes", []):
        boxes.append(("block", (shape["x0"] * unit, shape["x1"] * unit, shape["y0"] * unit, shape["y1"] * unit)))
    return boxes


def _intersect(a, b, air=1.0):
    return a[0] < b[1] - air and b[0] < a[1] - air and a[2] < b[3] - air and b[2] < a[3] - air


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("style", [PROJECTOR, Style()])
def test_associativity_labels_never_overlap_over_the_whole_range_of_n(views, lang, style):
    spec = {s.name: s for s in lecture.chapter_controls(2)}
    base = views[2]
    for n in (spec["n"].min, 64, 512, 513, 2048, 4096, 10_000, 65_536, spec["n"].max):
        for d, m in ((64, 64), (spec["d"].min, spec["m"].max), (spec["d"].max, spec["m"].min)):
            shapes = associativity.orders(n, d, m)
            largest = max(n, m, d)
            view = lecture.ChapterView(ch=2, controls=dict(base.controls, n=n, d=d, m=m), numbers=base.numbers,
                                       data=dict(base.data, orders=shapes,
                                                 left_sides=associativity.block_sides(shapes["left"], largest),
                                                 right_sides=associativity.block_sides(shapes["right"], largest),
                                                 sides_compressed=largest > associativity.LINEAR_DRAW_LIMIT))
            fig = chapter_figures(view, lang, style)[0]
            boxes = _boxes(json.loads(fig.to_json()))
            for i, (text_a, a) in enumerate(boxes):
                for text_b, b in boxes[i + 1:]:
                    if text_a == "block" and text_b == "block":
                        continue
                    assert not _intersect(a, b), (n, d, m, text_a, text_b)
            sizes = [a["font"]["size"] for a in fig.layout.annotations]
            assert min(sizes) >= style.tick_font - 3, (n, d, m, sizes)


def test_no_text_carries_markup_that_nothing_renders():
    for key, entry in lecture_text.TEXT.items():
        for lang, text in entry.items():
            assert "^{" not in text and "\\" not in text and "_{" not in text, (key, lang, text)
    assert "exp(‖q′+k′‖²)" in lecture_text.t("ch3.claim", "en")
    assert "exp(‖q′+k′‖²)" in lecture_text.t("ch3.claim", "zh")


def test_every_number_of_every_chapter_has_a_readable_label(views):
    # The default views, the try-this presets and the other choices of each chapter,
    # so that every family of keys (per map, per lag, per kept layer) is met.
    seen = {}
    more = [lecture.chapter_view(ch, text=TEXT, **lecture.try_this(ch)) for ch in lecture.CHAPTERS]
    more.append(lecture.chapter_view(2, text=TEXT, map="FAVOR+ (orthogonal)"))
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
        if inner and not key.startswith("recent_minus_early"):
            assert inner.group(1) in labels["en"], (key, labels["en"])    # which map, kept as named
    with pytest.raises(KeyError):
        lecture_text.number_label("no_such_number", "en")


def test_finish_assigns_the_white_template_and_the_figure_is_the_same(views):
    import plotly.graph_objects as go
    from explorer.figures.style import finish

    sample = go.Figure(go.Scatter(x=[1, 10, 100], y=[3, 1, 2]))
    sample.update_yaxes(type="log")
    figs = [finish(sample, PROJECTOR, "A title · with a tail", 400, "a note")]
    figs += chapter_figures(views[0], "zh", PROJECTOR)[:1]
    for fig in figs:
        by_name = go.Figure(fig)
        by_name.update_layout(template="plotly_white")        # how finish() set it before
        assert json.loads(fig.to_json()) == json.loads(by_name.to_json())
        assert fig.layout.template.layout.paper_bgcolor == "white"
    # Each figure holds its own copy: changing one leaves the next figure as it was.
    figs[0].layout.template.layout.font.size = 99
    again = finish(go.Figure(go.Scatter(x=[1], y=[1])), PROJECTOR, "t", 400)
    assert again.layout.template.layout.font.size != 99


# Words that stay as they are in the Chinese figures: units, symbols and names.
KEPT_WORDS = {"FLOPs", "FLOP", "GFLOP", "ms", "MB", "kB", "GB", "KV", "rel", "softmax", "exp", "elu", "FAVOR",
              "Taylor", "ReLU", "cosFormer", "Hedgehog", "RetNet", "GLA", "orthogonal", "trained", "untrained",
              "IID", "trig", "RFF", "identity", "KL", "max", "min", "median", "sigma", "float", "logit", "logits"}


def english_words(text: str) -> list[str]:
    """The English words of a text, units and names aside (single letters are symbols), and
    tokens of the sentence aside (they are quoted: “suitcase·9”)."""
    text = re.sub(r"<[^>]+>|“[^”]*”", " ", text)
    return [w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in KEPT_WORDS]


def test_english_words_are_found():
    old_note = "FLOPs ×3 · time ×2 at N = 2,048 (FLOP model there ×3; matmul 200 GFLOP/s now)"
    assert english_words(old_note) == ["time", "at", "model", "there", "matmul", "now"]
    assert english_words("实测耗时 ×2（N = 2,048；该处 FLOP 模型 ×3；elu+1 与 FAVOR+）") == []


def test_chinese_figures_have_no_english_words(views):
    """Titles and notes of every chapter in Chinese hold no English word but units and
    names: a note built in English would show up here."""
    for ch, view in views.items():
        for fig in chapter_figures(view, "zh", PROJECTOR):
            title = fig.layout.title
            text = (title.text or "") + " " + ((title.subtitle.text if title.subtitle else "") or "")
            assert not english_words(text), (ch, english_words(text), text)


def test_chapter_one_names_the_heaviest_keys_and_sums_the_rest(views):
    """The query's weights: the heaviest keys as labelled horizontal bars (a label under each
    of dozens of keys cannot be read on a projector), the rest summed in the note."""
    view = views[1]
    weights = view.data["head"]["weights"]
    for lang in ("en", "zh"):
        fig = chapter_figures(view, lang, PROJECTOR)[1]
        bars = fig.data[0]
        assert bars.orientation == "h" and len(bars.y) == min(lecture_figures.KEY_LABELS, len(weights))
        assert sorted(bars.x, reverse=True) == sorted(sorted(weights, reverse=True)[:len(bars.x)], reverse=True)
        assert list(bars.x) == sorted(bars.x)                       # heaviest at the top
        rest = float(sum(weights) - sum(bars.x))
        assert f"{rest:.2f}" in fig.layout.title.subtitle.text
