"""The lecture as a deck of builds: each chapter is a short sequence of figures sized by the
window, each default proves its chapter's claim, "Try this" changes what is drawn, "Go
deeper" opens the tool tab on the chapter's state in the form that tab reads, and the
Chinese deck speaks Chinese."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from explorer.text import kept_in_latin

from explorer import catalog
from explorer.lecture.figures import build_count
from helpers.lecture import said_chapter_figures
from explorer.figures.style import Style
from explorer.lecture import text as lecture_text
from explorer.lecture.ch6_tradeoff import maths as tradeoff
from explorer.lecture.chapters import LECTURE_HEAD, LECTURE_LAYER, SHORT_SWEEP_MAX_N, go_deeper, try_this
from explorer.ui.lecture_handlers import MAX_FIGURES
from explorer.lecture import view as lecture

pytestmark = pytest.mark.slow      # every chapter's views and figures, shared

PROJECTOR = Style(presentation=True)
CJK = re.compile(r"[\u4e00-\u9fff]")
MAX_BUILDS = MAX_FIGURES          # the deck's plot slots


@pytest.fixture(scope="module")
def views():
    return {ch: lecture.chapter_view(ch) for ch in lecture.CHAPTERS}


@pytest.fixture(scope="module")
def figures(views):
    return {(ch, lang): said_chapter_figures(view, lang, PROJECTOR) for ch, view in views.items() for lang in ("en", "zh")}


def test_every_chapter_is_a_short_sequence_of_window_sized_builds(figures):
    for (ch, lang), figs in figures.items():
        assert 2 <= len(figs) == build_count(ch) <= MAX_BUILDS, (ch, len(figs))
        for fig in figs:
            # The deck gives each figure its height: none is fixed here.
            assert fig.layout.height is None and fig.layout.autosize is True, (ch, fig.layout.title.text)
            for name in fig.layout:
                if re.fullmatch(r"[xy]axis\d*", name) and fig.layout[name].visible is not False:
                    assert fig.layout[name].automargin is True, (ch, name)    # titles grow the margin, never cut


def _log_axes(fig):
    """(axis name, the positive values drawn on it) of every visible log axis."""
    values: dict[str, list] = {}
    for trace in fig.data:
        for letter in ("x", "y"):
            ref = getattr(trace, letter + "axis", None) or letter
            name = letter + "axis" + ref[1:]
            data = getattr(trace, letter, None)
            if data is None:
                continue
            try:
                arr = np.asarray([v for v in data if v is not None], dtype=float)
            except (TypeError, ValueError):
                continue
            values.setdefault(name, []).extend(arr[np.isfinite(arr) & (arr > 0)].tolist())
    out = []
    for name, vals in values.items():
        axis = fig.layout[name] if name in fig.layout else None
        if axis is not None and axis.type == "log" and vals:
            out.append((name, axis, vals))
    return out


def test_no_log_axis_shows_a_single_tick(figures):
    """A log axis with one labelled value cannot be read: at least two labelled ticks lie in
    the range it shows (decades where the data span them, else 1-2-5 values)."""
    for (ch, lang), figs in figures.items():
        for fig in figs:
            for name, axis, vals in _log_axes(fig):
                lo, hi = (axis.range if axis.range is not None else (math.log10(min(vals)), math.log10(max(vals))))
                if axis.tickvals is not None:
                    shown = [v for v in axis.tickvals if lo - 1e-9 <= math.log10(v) <= hi + 1e-9]
                else:
                    step = axis.dtick or 1
                    shown = [e for e in range(math.ceil(lo - 1e-9), math.floor(hi + 1e-9) + 1) if e % step == 0]
                assert len(shown) >= 2, (ch, lang, name, lo, hi, fig.layout.title.text)


# The axes that count whole things: tokens (positions, counts, context lengths).
WHOLE_AXES = {lecture_text.t(key, "en") for key in ("axis.token_count", "axis.tokens_in_context", "axis.tokens_seen")}


def test_no_axis_of_tokens_has_a_fractional_tick(figures):
    """A token axis read "0.5 tokens" where plotly picked its own step: every linear axis of
    whole things steps by a whole number (or names its ticks)."""
    checked = 0
    for (ch, lang), figs in figures.items():
        if lang != "en":
            continue
        for fig in figs:
            for name in fig.layout:
                axis = fig.layout[name] if re.fullmatch(r"[xy]axis\d*", name) else None
                if axis is None or (axis.title.text or "") not in WHOLE_AXES or axis.type in ("log", "category"):
                    continue
                checked += 1
                if axis.tickvals is not None:
                    assert all(float(v).is_integer() for v in axis.tickvals), (ch, name, axis.tickvals)
                else:
                    assert axis.dtick is not None and float(axis.dtick).is_integer() and axis.dtick >= 1, \
                        (ch, name, axis.title.text, axis.dtick)
    assert checked >= 2


def _drawn(figs) -> list:
    """What a figure shows: its traces and its shapes and labels, as JSON."""
    return [json.dumps({"data": json.loads(f.to_json())["data"],
                        "shapes": json.loads(f.to_json())["layout"].get("shapes"),
                        "annotations": json.loads(f.to_json())["layout"].get("annotations")}, sort_keys=True)
            for f in figs]


@pytest.mark.parametrize("ch", lecture.CHAPTERS)
def test_try_this_visibly_changes_the_figure(views, ch):
    before = _drawn(said_chapter_figures(views[ch], "en", PROJECTOR))
    preset = try_this(ch)
    assert any(preset[name] != spec.default for spec in lecture.chapter_controls(ch) for name in [spec.name]
               if name in preset), f"chapter {ch}: the preset equals the defaults"
    after = _drawn(said_chapter_figures(lecture.chapter_view(ch, **preset), "en", PROJECTOR))
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed, f"chapter {ch}: try this leaves every build as it was"


def test_chapter_five_shows_a_trained_hedgehog_from_the_first_second(views):
    view = views[5]
    kl = view.data["kl"]
    assert view.data["hedgehog_trained"] and "hedgehog_trained" in kl
    assert kl["hedgehog_trained"]["mean"] < 0.5 * kl["elu1"]["mean"], {k: v["mean"] for k, v in kl.items()}
    assert (view.controls["layer"], view.controls["head"]) == _default_head(5)


def _default_head(ch) -> tuple:
    """(layer, head) the chapter opens on: the lecture's on MiniLM, the chapter's own on the
    model it reads by default (chapter 5 on SmolLM2, when installed)."""
    specs = {spec.name: spec.default for spec in lecture.chapter_controls(ch)}
    return specs["layer"], specs["head"]


def test_the_roadmap_measures_every_step_and_goes_forwards(views, figures):
    """On the deck's causal model every step is read against causal softmax, on the plane's
    head: one panel, one 2020 baseline, and that baseline is elu+1's point on the plane."""
    road = {r["id"]: r for r in views[6].data["roadmap"]}
    assert list(road) == [p[0] for p in tradeoff.ROADMAP_POINTS if p[0] != "2020_causal"]
    # In time order (it read 2020, 2021, 2024, 2025, 2025, 2023, 2024).
    years = [r["year"] for r in road.values()]
    assert years == sorted(years) and years[0] == 2020 and years[-1] == 2025
    assert road["2024_hedgehog"]["trained"] and road["2024_hedgehog"]["map"] == "hedgehog_trained"
    for r in road.values():
        assert math.isfinite(r["median_kl"]) and r["undefined_rows"] < r["rows"], r
        assert r["causal"] and r["reference"] == "causal softmax", r
    plane = {p["label"]: p["median_kl"] for p in views[6].data["points"]}
    assert road["2020"]["median_kl"] == plane["elu1"]
    for later in ("2021", "2024_hedgehog", "2025_luna", "2025", "2024_gla"):
        assert road[later]["median_kl"] < road["2020"]["median_kl"], later
    for lang in ("en", "zh"):
        fig = figures[(6, lang)][1]
        # One panel; bars only: no line joins two measurements.
        assert [trace.type for trace in fig.data] == ["bar"]
        bars = fig.data[0]
        assert len(bars.y) == len(road)
        labels = " ".join(bars.y)
        for year in ("2020", "2021", "2023", "2024", "2025"):
            assert year in labels
        assert f"m = {road['2021']['m']}" in labels and f"{road['2023']['gamma']:.4g}" in labels
        assert "GLA" in labels and "Hedgehog" in labels and "LUNA" in labels
        # Every bar says its value; the one 2020 baseline is marked.
        assert [f"{v:.2f}" for v in bars.x] == list(bars.text)
        assert sum(1 for s in fig.layout.shapes if s.type == "line") == 1


def test_on_a_bidirectional_model_the_roadmap_keeps_two_kinds_apart():
    """MiniLM's attention is full: the full steps are read against softmax and the forgetting
    ones against causal softmax, on two panels with a 2020 baseline each."""
    from explorer.views.common import load_sample
    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT)          # the embedded MiniLM
    view = lecture.chapter_view(6, sample=sample)
    road = {r["id"]: r for r in view.data["roadmap"]}
    assert list(road) == [p[0] for p in tradeoff.ROADMAP_POINTS]
    assert {r["id"] for r in road.values() if r["causal"]} == {"2020_causal", "2023", "2024_gla"}
    assert road["2020"]["median_kl"] == next(p["median_kl"] for p in view.data["points"] if p["label"] == "elu1")
    for lang in ("en", "zh"):
        fig = said_chapter_figures(view, lang, PROJECTOR)[1]
        full, causal = fig.data
        assert full.yaxis != causal.yaxis and len(full.y) == 5 and len(causal.y) == 3
        assert sum(1 for s in fig.layout.shapes if s.type == "line") == 2


def test_gla_gates_fitted_here_beat_no_decay_and_stay_in_log_space(views):
    from explorer import maps as feature_maps
    from explorer.views.common import load_sample

    sample = load_sample("text", text=lecture_text.DEFAULT_TEXT)
    q, k = sample.q[LECTURE_LAYER, LECTURE_HEAD][None], sample.k[LECTURE_LAYER, LECTURE_HEAD][None]
    elu = feature_maps.create("elu1", q.shape[-1])
    gates = tradeoff.fit_gla_gates(q, k, elu, steps=20)
    assert gates.shape == (1, q.shape[1], elu.num_features) and bool((gates <= 0).all())
    plain = tradeoff.layer_quality(q, k, elu, causal=True)["mean_kl"]
    gated = tradeoff.layer_quality(q, k, elu, causal=True, log_decay=gates)["mean_kl"]
    assert gated < plain


def test_a_map_with_no_defined_row_is_not_said_to_have_a_median():
    from explorer.views.common import load_sample
    # trig RFF has no defined row on MiniLM's head for the lecture's sentence (on SmolLM2's, a few)
    view = lecture.chapter_view(6, sample=load_sample("text", text=lecture_text.DEFAULT_TEXT))
    empty = [p["label"] for p in view.data["points"] if p["undefined_rows"] == p["rows"]]
    assert empty, "no map without a defined row on the default text: the notice goes untested"
    for lang in ("en", "zh"):
        notices = view.notices_in(lang)
        for label in empty:
            name = lecture_text.map_words(label, lang)
            said = [n for n in notices if n.startswith(name + ":") or n.startswith(name + "：")]
            assert said == [lecture_text.t("notice.undefined_kl_all", lang, map=name, rows=view.data["points"][0]["rows"])]
    assert not any("median is over the other rows" in n and n.split(":")[0] in empty for n in view.notices_in("en"))


# -- Chinese ----------------------------------------------------------------------------

KEPT = {"FLOPs", "FLOP", "GFLOP", "ms", "MB", "kB", "GB", "TB", "KV", "softmax", "exp", "elu", "FAVOR", "Taylor",
        "ReLU", "cosFormer", "Hedgehog", "RetNet", "GLA", "Performer", "Transformer", "KL", "float", "logit", "SVM",
        "RFF", "trig", "max", "nats", "Nadaraya", "Watson", "DeltaNet", "Gated", "HGRN", "LUNA", "lb", "SmolLM", "MiniLM", "RNN"}
# ... and the words of every term the Chinese language file keeps in Latin letters.
KEPT |= {word for term in kept_in_latin() for word in re.findall(r"[A-Za-z]{2,}", term)}


def _visible_texts(fig) -> list[str]:
    """Every text of a figure the audience reads: title, note, axis titles, tick labels set by
    hand, legend names, panel titles and labels, categories, bar labels, table cells."""
    layout = json.loads(fig.to_json())["layout"]
    out = [layout.get("title", {}).get("text", ""), (layout.get("title", {}).get("subtitle") or {}).get("text", "")]
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name):
            out.append((axis.get("title") or {}).get("text", ""))
            out += [str(x) for x in axis.get("ticktext") or []]
    out += [a.get("text", "") for a in layout.get("annotations", [])]
    for trace in fig.data:
        if trace.type == "table":
            out += [str(v) for v in trace.header.values]
            out += [str(v) for column in trace.cells.values for v in column]
            continue
        if trace.showlegend is not False and trace.name:
            out.append(trace.name)
        for letter in ("x", "y"):
            values = getattr(trace, letter, None)
            if values is not None and len(values) and isinstance(values[0], str):
                out += list(values)
        if trace.text is not None and not isinstance(trace.text, str):
            out += [str(v) for v in trace.text]
    return out


def _english_words(text: str, tokens: set) -> list[str]:
    text = re.sub(r"<[^>]+>|“[^”]*”", " ", text)
    if text.strip() in tokens:               # a token of the sentence, as the model read it
        return []
    return [w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in KEPT]


def test_the_chinese_deck_has_no_english_outside_names_and_units(views, figures):
    tokens = {t for view in views.values() for t in view.data.get("tokens", []) or []}
    tokens |= {t for view in views.values() if "head" in view.data for t in view.data["head"]["tokens"]}
    tokens |= {t for view in views.values() for t in (view.data.get("luna") or {}).get("tokens", [])}   # LUNA's axis
    tokens = {re.sub(r"\s*\(\d+\)$", "", t) for t in tokens}
    for ch in lecture.CHAPTERS:
        for fig in figures[(ch, "zh")]:
            for text in _visible_texts(fig):
                words = _english_words(text, tokens)
                assert not words, (ch, words, text)
        for n in views[ch].notices_in("zh"):
            assert not _english_words(n, tokens) or "[UNK]" in n, (ch, n)
    assert "(orthogonal)" not in lecture_text.map_words("favor_plus_orthogonal", "zh")


def test_every_choice_reads_as_a_name_in_both_languages():
    """Radio and dropdown values (elu1, favor_plus, favor_plus_orthogonal, greedy) show readable
    names: the lecture's own word (choice.<value>) or the map's name in the reader's language."""
    from explorer.ui import i18n, lecture_tab

    for ch in lecture.CHAPTERS:
        for spec in lecture.chapter_controls(ch):
            for value in spec.choices:
                label, kept = lecture_tab._choice(value, lecture_text.TEXT)
                assert kept == value
                key = label.key if hasattr(label, "key") else None
                for lang, table in (("en", i18n.EN), ("zh", i18n.ZH)):
                    words = table[key] if key in table else lecture_text.t(f"choice.{value}", lang)
                    assert words and "_" not in words and not re.search(r"\belu1\b", words), (value, words)
                    assert lang == "en" or not re.search(r"orthogonal|IID", words), (value, words)


def test_speaker_notes_in_both_languages():
    for ch in lecture.CHAPTERS:
        en, zh = lecture_text.notes(ch, "en"), lecture_text.notes(ch, "zh")
        assert 2 <= len(en) <= 5 and 2 <= len(zh) <= 5, ch
        assert all(CJK.search(p) for p in zh) and not any(CJK.search(p) for p in en), ch


def test_the_numbers_panel_labels_every_number_in_words(views):
    for view in views.values():
        for key in view.numbers:
            for lang in ("en", "zh"):
                label = lecture_text.number_label(key, lang)
                assert "_" not in label and "[" not in label, (key, lang, label)


# -- Go deeper --------------------------------------------------------------------------

def _list(value) -> list[str]:
    """A list as the tab's link reader splits it (explorer.ui.common.param)."""
    return [x for x in str(value).split(",") if x]


@pytest.mark.parametrize("ch", lecture.CHAPTERS)
def test_go_deeper_opens_the_tab_on_the_chapters_state(views, ch):
    view = views[ch]
    params = go_deeper(ch, **view.controls)
    assert all(not isinstance(v, (list, tuple, dict)) for v in params.values()), params    # the tabs read a,b,c
    c = view.controls
    if params["tab"] == "complexity":
        # A short sweep, drawn in seconds; the full sweep is the tab's own button.
        assert params["nmax"] <= SHORT_SWEEP_MAX_N and params["repeats"] == 1
        assert set(_list(params["methods"])) <= set(catalog.SWEEP_METHODS)
        assert params["cd"] == c["d"]
        if ch == 2:
            assert params["cmap"] in catalog.SWEEP_MAPS and params["cm"] == c["m"]
        return
    assert params["text"] == lecture_text.DEFAULT_TEXT and params["src"] == "text"
    assert params["layer"] == c["layer"]
    assert params["head"] == str(c["head"])      # the head the chapter measured, never a mean
    if ch == 6:
        assert params["m"] == c["m"]
    if ch == 1:
        assert set(_list(params["maps"])) <= set(catalog.map_choices())
    if ch == 3:
        assert _list(params["qmaps"]) == ["favor_plus_orthogonal"] and params["m"] == c["m"]
        assert set(_list(params["qmaps"])) <= set(catalog.random_map_ids())
        assert _list(go_deeper(3, **dict(c, orthogonal=False))["qmaps"]) == ["favor_plus_iid"]
    if ch == 4:
        assert params["smap"] == c["map"] and params["sm"] == c["m"] and params["t"] == c["t"]
        assert params["smap"] in catalog.map_choices()
    if ch == 5:
        layer, head = _default_head(5)
        assert (params["llayer"], params["lhead"]) == (c["layer"], str(c["head"])) == (layer, str(head))


def test_the_data_panel_shows_what_the_lecture_reads():
    """The panel's default sentence and head are the lecture's: with presentation mode off,
    the panel above the slides names the text and head the figures use."""
    import gradio as gr

    from explorer.ui import source

    with gr.Blocks():
        panel = source.build()
    assert panel.text.value == source.DEFAULT_TEXT == lecture_text.DEFAULT_TEXT
    assert (panel.layer.value, str(panel.head.value)) == (LECTURE_LAYER, str(LECTURE_HEAD))


def test_the_shipped_map_never_saw_the_lectures_sentence():
    """The notice under chapter 5 says so: the training texts hold no copy of it."""
    from pathlib import Path

    train = (Path(__file__).resolve().parents[2] / "assets" / "texts" / "train.txt").read_text(encoding="utf-8")
    assert lecture_text.DEFAULT_TEXT.lower() not in train.lower()


def test_one_thread_blocks_change_their_own_thread_only():
    """Two requests at once, in two threads: each runs on one thread inside its block, and
    each thread has its own count back after it, whatever the other is doing."""
    import threading

    import torch

    from explorer.core.threads import one_thread

    before = torch.get_num_threads()
    entered, release, seen = threading.Event(), threading.Event(), {}

    def other():
        own = torch.get_num_threads()
        with one_thread():
            entered.set()
            release.wait(10)
            seen["other inside"] = torch.get_num_threads()
        seen["other after"] = torch.get_num_threads() == own

    worker = threading.Thread(target=other)
    with one_thread():
        worker.start()
        entered.wait(10)
        seen["inside"] = torch.get_num_threads()
    seen["after, the other still inside"] = torch.get_num_threads()
    release.set()
    worker.join(10)
    assert seen == {"inside": 1, "after, the other still inside": before, "other inside": 1, "other after": True}


def test_a_drawing_the_page_already_shows_is_not_sent_again():
    import gradio as gr

    from explorer.ui import lecture_handlers

    calls = []
    view = object()
    slots = lecture_handlers.MAX_FIGURES

    def draw(*args, progress=None):       # as make_draw's: figures, the bar, tables, numbers, notices, view, link, address
        calls.append(args)
        return (*["figure"] * slots, "info", "tables", "numbers", "", view, "deeper",
                "?tab=lecture&ch=3&lang=en&present=1")

    once = lecture_handlers.drawn_once(draw)
    first = once(None, "", 3, "en")
    assert first[0] == "figure"                                            # nothing shown yet: drawn
    again = once(view, "?tab=lecture&ch=3&lang=en&present=1", 3, "en")
    # only the bar is sent again (a racing screen may have emptied its build count)
    assert [i for i, out in enumerate(again) if out != gr.skip()] == [slots] and again[slots] == "info"
    assert len(again) == len(first)
    assert once(object(), "?tab=lecture&ch=3&lang=en&present=1", 3, "en")[0] == "figure"   # another view
    assert once(view, "?tab=lecture&ch=4&lang=en&present=1", 3, "en")[0] == "figure"       # another address
    assert len(calls) == 4
    assert lecture_handlers.shown("?tab=lecture&ch=3&lang=en&present=1", "en", True)
    assert not lecture_handlers.shown("?tab=lecture&ch=3&lang=en&present=0", "en", True)
    assert not lecture_handlers.shown("?tab=lecture&ch=3&lang=zh&present=1", "en", True)
    assert not lecture_handlers.shown("", "en", True)
    assert all(out == gr.skip() for out in lecture_handlers.restyle(view, "en", True, "?ch=3&lang=en&present=1"))
