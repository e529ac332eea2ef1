"""The maps, quality and complexity tabs in Chinese (views, figures, tables, notices and the
timing engine's sentences hold no English word outside names and units), and the spread of
a random-feature map's metrics over seeds, held to a plain loop over the seeds."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer.text import said, said_throughout, say, say_error
from explorer.figures.style import said_figure
from explorer.ui.common import said_outputs
from explorer.diagnostics import attention
from explorer.measure import cost, metrics, showing
from explorer.views import common as view_common, complexity as cx_views, maps as maps_views
from explorer.views import quality as quality_views
from helpers.words import english_words, figure_texts

CJK = re.compile(r"[\u4e00-\u9fff]")
RANDOM_MAPS = ("favor_plus_iid", "favor_plus_orthogonal", "trig_rff_iid", "trig_rff_orthogonal")


@pytest.fixture(autouse=True)
def no_trained_maps():
    """A map another test file trained or loaded without a session must not change these
    views' notices (the no-session slot is shared by the process)."""
    view_common.forget_trained(None)
    yield


@pytest.fixture(scope="module")
def sample():
    return view_common.load_sample("random", preset="clustered", n=40, d=16, data_seed=3)


@pytest.fixture(scope="module")
def needle():
    """The identity map on 'needle' leaves most rows without a KL: n/a cells and notes."""
    return view_common.load_sample("random", preset="needle", n=24, d=8, data_seed=1)


def no_english(texts, where=""):
    bad = {text: english_words(text) for text in texts if english_words(text)}
    assert not bad, (where, bad)


def test_the_checker_finds_english_and_passes_names():
    assert english_words("FAVOR+（正交） · 第 2 层第 3 头 · map error") == ["map", "error"]
    assert english_words("all-MiniLM-L6-v2，16 个 token · softmax、elu+1、trig RFF（IID）、Hedgehog（已训练）") == []


# ---------------------------------------------------------------------------------------
# The maps tab
# ---------------------------------------------------------------------------------------

def test_maps_view_title_notices_table_and_grid_in_chinese(sample):
    maps = ["softmax", "identity", "elu1", "favor_plus_orthogonal", "trig_rff_iid", "sliding_window",
            "hedgehog"]
    view = maps_views.maps_view(sample, 5, 7, maps, m=15, seed=2 ** 40)
    # clamped layer and head, a seed taken modulo 2^32, m rounded up for trig RFF: four notices
    notices = said_throughout(view.notices, "zh")
    assert len(notices) >= 4 and all(CJK.search(n) for n in notices)
    no_english(notices + said_throughout([view.title, maps_views.spread_note(view)], "zh"), "view")
    table = said_outputs(maps_views.maps_table(view), "zh")
    no_english([str(c) for c in table.columns] + [str(x) for x in table.iloc[:, 0]], "table")
    from explorer.figures import attention_grid
    fig = attention_grid(view.tokens, view.maps, view.errors, ill_defined=view.ill_defined, title=view.title,
                         note=maps_views.spread_note(view), names=view.labels)
    texts = figure_texts(said_figure(fig, "zh"))
    assert any("正交" in t for t in texts)
    no_english([t for t in texts if t not in view.tokens], "grid")


def test_maps_view_in_english_is_unchanged_in_kind(sample):
    view = maps_views.maps_view(sample, 0, 0, ["softmax", "favor_plus_orthogonal"], m=16)
    assert view.title.endswith("layer 0, head 0")
    assert "mean ± sd over 5 seeds" in say("common.seed_spread", "en", k=5)
    assert "over 5 seeds" in maps_views.spread_note(view)
    assert list(maps_views.maps_table(view).columns)[:3] == ["map", "map err (rel)", "map err, 5 seeds"]


def test_undefined_cells_and_their_reasons_in_chinese(needle):
    view = maps_views.maps_view(needle, 0, 0, ["softmax", "identity", "trig_rff_iid"], m=8)
    notes = said_throughout(view_common.undefined_notes(view.metrics), "zh")
    assert notes and all(CJK.search(note) for note in notes)
    no_english(notes, "n/a notes")
    cells = [str(x) for x in said_outputs(maps_views.maps_table(view), "zh").to_numpy().ravel()]
    assert any("无值" in c for c in cells)
    no_english(cells, "cells")
    from explorer.figures import metric_bars
    fig = metric_bars(view.metrics, names={r["map"]: view_common.row_name(r) for r in view.metrics})
    no_english(figure_texts(said_figure(fig, "zh")), "bars")


def test_map_errors_are_said_in_chinese(sample):
    # The engine refuses with a message (a key and values); the page says it in its language.
    from explorer.text import say_error
    for call in (lambda: maps_views.maps_view(sample, 0, 0, []),
                 lambda: view_common.make_feature_map("no such map", 16, 8, 0),
                 lambda: view_common.make_feature_map("favor_plus_iid", 16, 0, 0),
                 lambda: view_common.trained_map_for("a session with none", "hedgehog", 16)):
        with pytest.raises(ValueError) as err:
            call()
        assert CJK.search(say_error(err.value, "zh")), say_error(err.value, "zh")


# ---------------------------------------------------------------------------------------
# The spread over seeds: the same numbers as a plain loop
# ---------------------------------------------------------------------------------------

def _plain_spread(sample, label, m, seed, k, causal, layer=0, head=0):
    """Every seed drawn by hand: its own feature map, its own N x N map, metrics.compare."""
    q, kk, v = (t[layer, head] for t in (sample.q, sample.k, sample.v))
    reference = attention.softmax_map(q, kk, causal=causal)
    logits = attention.masked_logits(q, kk, causal)
    out = {key: [] for key in maps_views.SPREAD_METRICS}
    for i in range(k):
        fmap, _ = view_common.make_feature_map(label, q.shape[-1], m, (seed + i) % 2 ** 32)
        approx, ill = attention.kernel_map_with_flags(q, kk, fmap, causal=causal)
        row = metrics.compare(reference, approx, v=v, logits=logits, ill_defined=ill, causal=causal,
                              feature_dim=fmap.num_features, head_dim=q.shape[-1])
        for key in out:          # a mean over fewer than half of the rows is no value
            count_key = showing.UNDEFINED_ROWS.get(key, (None,))[0]
            undefined = row.get(count_key) or 0 if count_key else 0
            out[key].append(None if row.get(key) is None or 2 * undefined > row["total_rows"] else row[key])
    return out


@pytest.mark.parametrize("label", RANDOM_MAPS)
@pytest.mark.parametrize("causal", [False, True])
def test_spread_over_seeds_equals_a_plain_loop(sample, label, causal):
    maps_views.clear_caches()
    seed = 2 ** 32 - 2           # the next seeds wrap around 2^32
    view = maps_views.maps_view(sample, 0, 0, ["softmax", label, "elu1"], causal=causal, m=12, seed=seed, spread=5)
    spread = view.spread[label]
    assert spread.seeds == [2 ** 32 - 2, 2 ** 32 - 1, 0, 1, 2]
    assert set(view.spread) == {label}             # fixed maps have no spread
    plain = _plain_spread(sample, label, 12, seed, 5, causal)
    for key, values in plain.items():
        got = spread.values[key]
        assert len(got) == 5
        for a, b in zip(got, values):
            assert (a is None) == (b is None), key
            if a is not None:
                assert a == pytest.approx(b, rel=1e-6, abs=1e-9), key
        defined = [x for x in values if x is not None]
        if len(defined) > 1:
            assert spread.mean(key) == pytest.approx(float(np.mean(defined)), rel=1e-9)
            assert spread.sd(key) == pytest.approx(float(np.std(defined, ddof=1)), rel=1e-9)
    # the drawn seed's own row is the spread's first draw
    row = next(r for r in view.metrics if r["map"] == label)
    assert row["map_rel_error"] == pytest.approx(spread.values["map_rel_error"][0], rel=1e-6)


def test_spread_can_be_turned_off_and_one_seed_has_no_spread(sample):
    maps_views.clear_caches()
    assert maps_views.maps_view(sample, 0, 0, ["softmax", "favor_plus_iid"], m=8, spread=0).spread == {}
    assert maps_views.maps_view(sample, 0, 0, ["softmax", "favor_plus_iid"], m=8, spread=1).spread == {}


def test_the_cost_model_prices_the_spread_before_allocating():
    one = cost.estimate("maps", n=1024, d=32, maps=["softmax", "favor_plus_iid", "elu1"], m=256, seeds=1)
    five = cost.estimate("maps", n=1024, d=32, maps=["softmax", "favor_plus_iid", "elu1"], m=256, seeds=5)
    favor = cost.estimate("map", n=1024, d=32, label="favor_plus_iid", m=256)
    assert five.seconds == pytest.approx(one.seconds + 4 * favor.seconds)
    assert five.bytes == one.bytes                 # one draw at a time: the peak does not grow
    fixed = dict(n=1024, d=32, maps=["softmax", "elu1", "taylor2"])
    assert cost.estimate("maps", seeds=5, **fixed).seconds == cost.estimate("maps", **fixed).seconds


def test_a_spread_over_the_time_limit_is_left_out_before_any_draw(sample, monkeypatch):
    """A map whose five draws would take longer than the server allows is shown for its
    seed alone, with a sentence saying why, and no extra draw is made."""
    maps_views.clear_caches()
    draws = []
    monkeypatch.setattr(maps_views, "seed_spread", lambda *a, **k: draws.append(1))
    one = cost.estimate("maps", n=40, d=16, maps=["favor_plus_iid"], m=8).seconds
    monkeypatch.setattr(cost, "LIMIT_SECONDS", 2 * one)          # one draw fits, five do not
    view = maps_views.maps_view(sample, 0, 0, ["softmax", "favor_plus_iid"], m=8)
    assert not draws and view.spread == {}
    assert [row["map"] for row in view.metrics] == ["softmax", "favor_plus_iid"]
    assert any("5 个种子" in say(x, "zh") for x in view.notices)


# ---------------------------------------------------------------------------------------
# The quality tab
# ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_quality_figures_tables_and_notices_in_chinese():
    from explorer.ui import quality_tab
    text = view_common.load_sample("text", text="The cat sat on the mat because it was tired.")
    quality = quality_views.quality_view(text, 2, 3, ["favor_plus_iid", "favor_plus_orthogonal"], ms=(4, 16, 64),
                                         seeds=3, m=16)
    overview = quality_views.head_overview(text, "favor_plus_orthogonal", "kl_mean", m=16)
    assert set(quality.spread) == {"favor_plus_iid", "favor_plus_orthogonal", "trig_rff_iid", "trig_rff_orthogonal"}
    no_english(said_throughout(quality.notices + [quality.title, quality.seed_note], "zh"), "quality view")
    for x_axis in ("m", "FLOPs"):
        figs = quality_tab.render((quality, overview), False, x_axis, "zh")
        assert all(f is not None for f in figs)
        for fig in figs:
            no_english([t for t in figure_texts(fig) if t not in text.tokens], fig.layout.title.text)
    shape = quality_tab.render((quality, overview), True, "m", "zh")[2]
    assert any(getattr(t, "error_y", None) is not None and t.error_y.array is not None for t in shape.data)
    table = quality_tab.shown_heads_table(overview, "zh")
    no_english([str(c) for c in table.columns], "heads table")
    assert len(table) == 72


def test_head_overview_offers_only_real_metrics(sample):
    for key in ("causal", "total_rows", "kl_rows_defined", "quadratic_flops"):
        with pytest.raises(ValueError):
            quality_views.head_overview(sample, "elu1", key)
    assert quality_views.head_overview(sample, "elu1", "kl_mean").values.shape == (1, 1)


def test_seed_note_in_both_languages():
    assert quality_views.seed_note((4, 512, 1024, 2048), 10) == "10 redraws per m up to 512, then 5 at 1024, 3 at 2048"
    no_english([said(quality_views.seed_note((4, 512, 1024, 2048), 10), "zh")])


# ---------------------------------------------------------------------------------------
# The complexity tab
# ---------------------------------------------------------------------------------------

def _crossovers():
    """The benchmark's four crossover sentences, from sweeps that give each, with the method
    ids as the view names them."""
    from explorer.measure import bench

    def result(times):
        return bench.SweepResult(rows=[{"method": m, "n": n, "time_ms": t} for (m, n), t in times.items()])
    cases = [{("sdpa", 512): 1.0},
             {("sdpa", 512): 2.0, ("linear_chunked", 512): 1.0},
             {("sdpa", 1024): 1.0, ("linear_chunked", 1024): 2.0, ("sdpa", 2048): 4.0, ("linear_chunked", 2048): 3.0},
             {("sdpa", 8192): 1.0, ("linear_chunked", 8192): 2.0}]
    return [cx_views._with_labels(result(times).crossover_info("sdpa", "linear_chunked")[1]) for times in cases]


def _engine_sentences():
    """What the timing engine writes, built as it builds it."""
    from explorer.measure import live_timing
    from explorer.text import Joined, Message
    verdict = live_timing.judge(120, 60, {("softmax_naive", 1024): [1.0, 1.6, 2.0, 9.0]}, stall=12)
    assert len(verdict.reasons) == 3
    return [
        Message("complexity.note_rounds", rounds=3, warmup=1, ms="20"),
        Message("complexity.note_setup", map="elu1", m=64, chunk=64, torch="2.13.0+cpu", threads=2),
        Message("complexity.note_cancelled"),
        Message("complexity.note_matmul", size=512, before="120.5", after="n/a"),
        Message("complexity.note_disturbed", reasons=Joined(verdict.reasons, "complexity.reason_sep")),
        *verdict.reasons,
        Message("complexity.skip_causal"), Message("complexity.skip_cap", cap=16384),
        Message("complexity.skip_memory", need="3.20", budget="2.00"),
        Message("complexity.skip_time", need="12.5", left="3.0"),
        *_crossovers(),
        *cx_views.plan_sweep([1 << 16], 64, 64, ["linear_cumsum", "linear_chunked"], 2 << 30),
        Message("complexity.progress_matmul", rate="131.2"), Message("complexity.progress_n", n="1,024"),
        Message("complexity.progress_done"), Message("complexity.disturbed"),
    ]


def test_every_sentence_of_the_timing_engine_is_said_in_chinese():
    sentences = _engine_sentences()
    assert len(sentences) == 21
    for sentence in sentences:
        english = cx_views.named(sentence)
        # A map is said by its name ("elu+1"), not by the id the engine carries ("elu1").
        assert english == sentence or sentence.values.get("map") == "elu1" and "elu+1" in english, english
        said = say(cx_views.named(sentence), "zh")
        assert CJK.search(said) and not english_words(said), (sentence, said)


def test_the_timing_engines_sentences_read_as_before_in_english():
    """The messages' English is the engine's sentence as the page and the logs knew it."""
    from explorer.measure import live_timing
    reasons = live_timing.judge(120, 60, {("softmax_naive", 1024): [1.0, 1.6, 2.0, 9.0]}, stall=12).reasons
    assert reasons == ["the dense-matmul rate moved from 120 to 60 GFLOP/s during the sweep",
                       "softmax, naive N x N at N = 1,024 varied by 56% between rounds (the slowest round aside)",
                       "torch's threads stall (12× slower on a tiny operation than one thread): another process is "
                       "using the cores"]
    assert _crossovers() == ["no N where both softmax, torch SDPA and linear, chunked were measured",
                             "linear, chunked is already faster than softmax, torch SDPA at the smallest common N = 512",
                             "linear, chunked overtakes softmax, torch SDPA at N ~ 1,671 (between 1024 and 2048)",
                             "softmax, torch SDPA stays faster than linear, chunked up to the largest common N = 8192"]
    assert say(cx_views.named(_engine_sentences()[1]), "zh").startswith("float32，elu+1，m = 64")


@pytest.mark.slow
def test_complexity_view_figures_summary_and_table_in_chinese():
    from explorer.ui import complexity_tab
    view = cx_views.complexity_view(64, 128, 2, 16, None, True, "elu1", ["sdpa", "linear_parallel", "linear_chunked"],
                                    repeats=1)
    plot, claim = complexity_tab.render(view, lang="zh")
    for fig in (plot, claim):
        no_english(figure_texts(fig), fig.layout.title.text)
    summary = complexity_tab.summary(view, "zh")
    no_english([re.sub(r"</?(details|summary)>", " ", summary)], "summary")
    from explorer.ui.common import said_outputs
    table = said_outputs(cx_views.complexity_table(view), "zh")
    no_english([str(c) for c in table.columns] + [str(x) for x in table.iloc[:, 0]], "table")
    # the same sweep shown in English, without timing it again
    assert "Crossover" in complexity_tab.summary(view, "en")
    assert "method" in list(said_outputs(cx_views.complexity_table(view), "en").columns)


def test_complexity_errors_are_said_in_chinese():
    for args in ((8, 128, 2), (64, 10 ** 7, 2), (256, 128, 2), (64, 128, 99)):
        with pytest.raises(ValueError) as err:
            cx_views.sweep_lengths(*args)
        assert CJK.search(say_error(err.value, "zh"))


def test_toasts_follow_the_handler_language():
    import gradio as gr
    from explorer.ui import common

    @common.guarded
    def handler(x, lang="en"):
        raise ValueError("x: bad")

    for lang, title in (("en", "Please check the input"), ("zh", "请检查输入")):
        with pytest.raises(gr.Error) as err:
            handler(1, lang)
        assert err.value.title == title


# ---------------------------------------------------------------------------------------
# Shared pieces: the sample's name, and Chinese lines in figure notes
# ---------------------------------------------------------------------------------------

def test_the_sample_is_named_in_chinese(sample):
    text = view_common.load_sample("text", text="The cat sat.")
    for s in (sample, text):
        assert view_common.source_title(s) == s.source
        said = say(view_common.source_title(s), "zh")
        assert CJK.search(said) and not english_words(said), said


def test_chinese_notes_wrap_between_characters_at_their_width():
    from explorer.figures.style import CHAR_EM, wrap
    note = say("quality.norm_note", "zh", u2="16.7", target="10%", m="1.8 × 10⁹", lo="1.8 × 10⁷", hi="5.2 × 10¹¹")
    lines = wrap(note, 60)
    assert len(lines) > 2 and "".join(lines).replace(" ", "") == note.replace(" ", "")
    for line in lines:
        width = sum(1 / CHAR_EM if CJK.search(ch) or "\uff00" <= ch <= "\uffef" or "\u3000" <= ch <= "\u303f"
                    else 1 for ch in line)
        assert width <= 60 + 1 / CHAR_EM, line          # closing punctuation may hang over by one
        assert line[0] not in "，。；：、）"
    assert wrap("hello world this is a test", 10) == ["hello", "world this", "is a test"]


@pytest.mark.slow
def test_the_sources_notices_are_said_in_chinese(tmp_path):
    """What the sources write (a long text cut, an upload without v, integer arrays, arrays
    the app does not read) reaches a Chinese page in Chinese."""
    from explorer import sources
    rng = np.random.default_rng(0)
    path = tmp_path / "qk.npz"
    np.savez(path, q=rng.integers(-3, 3, size=(12, 8)), k=rng.normal(size=(12, 8)), extra=np.zeros(3))
    uploaded = sources.load_file(str(path))
    long_text = view_common.load_sample("text", text="The cat sat on the mat. " * 150)
    notices = list(uploaded.notices) + list(long_text.notices)
    assert len(uploaded.notices) == 3 and any("truncated" in n for n in long_text.notices)
    for notice in notices:
        words = said(notice, "zh")
        assert CJK.search(words) and not english_words(words), (notice, words)
        assert said(notice, "en") == notice
    view = maps_views.maps_view(uploaded, 0, 0, ["softmax", "elu1"])
    no_english(said_throughout(view.notices, "zh"), "maps notices")


REFUSED = [("maps", dict(n=8192, d=1024, heads=1, maps=["taylor2"])),
           ("maps", dict(n=4096, d=64, heads=12, maps=["favor_plus_orthogonal"], m=256)),
           ("overview", dict(n=4096, d=64, layers=6, heads=12, label="favor_plus_orthogonal", m=256)),
           ("quality", dict(n=8000, d=64, heads=12, labels=["favor_plus_orthogonal"], ms=[16, 4096], seeds=10)),
           ("state", dict(n=100_000, d=512, dv=512, label="elu1")),
           ("learn", dict(n=2000, m=4096, steps=5000)),
           ("hybrid", dict(n=4000, m=4096, texts=400)),
           ("sample", dict(n=1 << 20, d=4096, heads=12)),
           ("complexity", dict(ns=[1 << 22], d=1024, m=4096, methods=["softmax_naive"]))]


@pytest.mark.parametrize("path,shape", REFUSED, ids=[f"{p}-{i}" for i, (p, _) in enumerate(REFUSED)])
def test_a_refused_request_says_why_in_chinese(path, shape):
    with pytest.raises(ValueError) as caught:
        cost.check(cost.estimate(path, **shape))
    english, chinese = str(caught.value), cost.said(caught.value, "zh")
    assert "limit on this server" in english and cost.said(caught.value, "en") == english
    assert CJK.search(chinese) and not english_words(chinese), (chinese, english_words(chinese))
    # The numbers the English sentence gives are the ones the Chinese one gives.
    numbers = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
    assert sorted(numbers.findall(english)) == sorted(numbers.findall(chinese)), (english, chinese)


def test_a_handler_shows_a_refusal_in_the_pages_language():
    import gradio as gr

    from explorer.ui import common as ui_common

    @ui_common.guarded
    def handler(n, lang="en"):
        cost.check(cost.estimate("maps", n=n, d=1024, heads=1, maps=["taylor2"]))

    for lang, expect in (("en", "needs about"), ("zh", "大约需要")):
        with pytest.raises(gr.Error) as caught:
            handler(8192, lang=lang)
        assert expect in caught.value.message


def test_the_data_panel_reads_a_text_with_a_progress_bar_in_the_pages_language():
    from explorer.ui import source as source_panel

    for lang in ("en", "zh"):
        said = []
        source_panel.load("text", "The cat sat on the mat.", None, None, None, None, None, None,
                          progress=lambda fraction, desc="": said.append(desc), lang=lang)
        assert said
        if lang == "zh":
            assert all(CJK.search(s) and not english_words(s) for s in said), said
        else:
            assert "reading the text with the model" in said[0]
    with pytest.raises(ValueError) as caught:
        source_panel.load("text", "x", None, None, None, None, None, None, model=source_panel.OTHER_MODEL, lang="zh")
    assert CJK.search(str(caught.value)) and not english_words(str(caught.value)), str(caught.value)


# ---------------------------------------------------------------------------------------
# The two notices that once reached a Chinese page in English
# ---------------------------------------------------------------------------------------

def test_an_unreadable_link_text_is_said_in_chinese():
    """A link whose packed text cannot be unpacked (ui/common.param) said its notice in
    English on a Chinese page."""
    from explorer.ui import common, validate
    notices = []
    assert common.param({"tz": "not-a-packed-text!"}, "text", str, "default", notices) == "default"
    assert notices == ["The link's text could not be read; showing the default."]
    said = validate.in_language(notices[0], "zh")
    assert CJK.search(said) and not english_words(said.replace("text", "")), said


def test_a_bound_of_at_most_is_said_fully_in_chinese():
    """A link with m='abc' on a parameter bounded above only came out half translated
    ("不是a whole number of at most 10")."""
    from explorer.ui import validate
    notices = []
    assert validate.link(validate.Bound("m", "int", hi=10), "abc", notices) is None
    assert notices == ["Link parameter m='abc' is not a whole number of at most 10; using the default."]
    said = validate.in_language(notices[0], "zh")
    assert said == "链接参数 m='abc' 不是不超过 10 的整数，改用默认值。"
    assert not english_words(said.replace("'abc'", ""))
    with pytest.raises(ValueError) as err:       # the same bound refusing a request
        validate.check(validate.Bound("m", "int", hi=10), "abc")
    from explorer.text import say_error
    refused = say_error(err.value, "zh")
    assert refused == "m 必须是不超过 10 的整数；收到的是 'abc'。"


def test_a_random_sample_with_a_reduced_seed_and_a_temperature_is_named_in_chinese():
    s = view_common.load_sample("random", n=16, d=8, data_seed=-5, temperature=2.0)
    assert s.source == "random 'gaussian', N=16, d=8, heads=1, seed=4294967291, temperature=2"
    assert s.notices[-1].startswith("The data seed -5 is outside")
    for said in (say(view_common.source_title(s), "zh"), say(s.notices[-1], "zh")):
        assert CJK.search(said) and not english_words(said), said
