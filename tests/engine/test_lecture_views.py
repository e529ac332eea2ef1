"""The lecture's chapter views and figures: every chapter builds in both languages, its
controls are consistent, and the numbers it prints are the engine's."""

import re
from types import SimpleNamespace

import numpy as np
import pytest

from helpers.lecture import said_chapter_figures
from explorer.lecture import text as lecture_text
from explorer.lecture.ch6_tradeoff import maths as tradeoff
from explorer.lecture.chapters import LECTURE_HEAD, LECTURE_LAYER
from explorer.lecture import view as lecture, view_common as lecture_common
from explorer.views.common import load_sample

pytestmark = pytest.mark.usefixtures("lecture_chapter_five")     # chapter 5 on SmolLM2, once a run (conftest)

CJK = re.compile(r"[\u4e00-\u9fff]")
TEXT = "The trophy did not fit into the brown suitcase because it was too big, so Anna took it out."


@pytest.fixture
def embedded_only(monkeypatch):
    """Chapter 5 as it reads without the packaged SmolLM2 (the embedded MiniLM, whose heads the
    learn tab trains); on SmolLM2 it is tests/app/test_lecture_smollm2.py."""
    from explorer.sources import packaged
    monkeypatch.setattr(packaged, "gguf_path", lambda spec: None)


@pytest.fixture(scope="module")
def views():
    return {ch: lecture.chapter_view(ch, text=TEXT) for ch in lecture.CHAPTERS}


def _axis_titles(fig):
    layout = fig.to_plotly_json()["layout"]
    return [v.get("title", {}).get("text") for k, v in layout.items()
            if re.fullmatch(r"[xy]axis\d*", k) and v.get("visible", True) is not False]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("presentation", [False, True])
def test_every_chapter_draws_in_both_languages(views, lang, presentation):
    for ch, view in views.items():
        figs = said_chapter_figures(view, lang, presentation)
        assert figs, f"chapter {ch} has no figure"
        for fig in figs:
            title = fig.layout.title.text
            assert title and title.strip(), f"chapter {ch}: empty title"
            if lang == "zh":
                assert CJK.search(title), f"chapter {ch}: title not in Chinese: {title}"
            is_table = fig.data and fig.data[0].type == "table"
            assert any(_axis_titles(fig)) or ch == 2 or is_table, f"chapter {ch}: no axis title in {title}"
            fig.to_json()     # serialisable: no tensors left in the figure


def test_every_text_entry_has_both_languages_and_claims_are_short():
    for key, entry in lecture_text.TEXT.items():
        assert set(entry) == {"en", "zh"}, key
        if key.startswith("rk.header.aspect"):
            continue
        assert entry["en"].strip() and entry["zh"].strip(), key
    for ch in lecture.CHAPTERS:
        claim = lecture_text.TEXT[f"ch{ch}.claim"]
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", claim["en"].strip()) if s]
        assert 2 <= len(sentences) <= 4, (ch, len(sentences))
        assert 2 <= claim["zh"].count("。") <= 4, ch
        assert CJK.search(lecture_text.TEXT[f"ch{ch}.title"]["zh"])
    assert lecture_text.t("ch0.b3.title", "fr", n="5") == lecture_text.t("ch0.b3.title", "en", n="5")
    with pytest.raises(KeyError):
        lecture_text.t("no.such.key")


def test_every_label_key_and_notice_the_views_use_exists(views):
    for ch in lecture.CHAPTERS:
        for spec in lecture.chapter_controls(ch):
            assert spec.label_key in lecture_text.TEXT, spec
    for view in views.values():
        for lang in ("en", "zh"):
            assert all(n.strip() for n in view.notices_in(lang))


def test_controls_defaults_lie_in_range_and_presets_are_accepted():
    for ch in lecture.CHAPTERS:
        for spec in lecture.chapter_controls(ch):
            assert spec.kind in ("int", "float", "choice", "bool")
            if spec.kind in ("int", "float"):
                assert spec.min <= spec.default <= spec.max, spec
            if spec.kind == "choice":
                assert spec.default in spec.choices, spec
        names = {spec.name for spec in lecture.chapter_controls(ch)}
        preset = lecture.try_this(ch)
        assert preset and set(preset) <= names
        deeper = lecture.go_deeper(ch)
        assert deeper["tab"] in ("maps", "quality", "state", "complexity", "learn")


@pytest.mark.slow
def test_try_this_presets_build(views):
    for ch in (0, 1, 3, 4, 6):
        view = lecture.chapter_view(ch, text=TEXT, **lecture.try_this(ch))
        assert all(view.controls[k] == v for k, v in lecture.try_this(ch).items() if k != "t")
        assert said_chapter_figures(view, "zh")


def test_bad_controls_are_refused_with_a_sentence():
    with pytest.raises(ValueError, match="chapter"):
        lecture.chapter_view(7)
    with pytest.raises(ValueError, match="unknown control"):
        lecture.chapter_view(0, bogus=1)
    with pytest.raises(ValueError, match="at most"):
        lecture.chapter_view(0, n=10 ** 9)
    with pytest.raises(ValueError, match="h"):
        lecture.chapter_view(1, text=TEXT, h="wide")
    with pytest.raises(ValueError, match="map"):
        lecture.chapter_view(4, text=TEXT, map="softmax")


def test_numbers_are_the_engines(views):
    assert views[0].numbers["pairs"] == 100_000 ** 2
    assert views[0].numbers["article_pairs_from"] == 262_144
    assert views[1].numbers["max_abs_diff"] <= 1e-5
    assert views[1].data["head"]["reference_kind"] == "model"
    assert views[2].numbers["max_rel_diff"] <= 1e-5
    assert 770 < views[2].numbers["article_model_ratio"] < 790
    assert views[4].numbers["max_rel_diff"] <= 1e-5
    assert np.allclose(views[4].data["recall"]["cosine"], views[4].data["recall_recent"]["cosine"])  # no decay
    assert views[4].numbers["recall_lag_1"] > views[4].numbers["recall_lag_1024"] + 0.3
    gap = views[5].numbers
    assert gap["recent_minus_early_at_256[retnet]"] > 0.1 and abs(gap["recent_minus_early_at_256[linear]"]) < 1e-6
    front = views[6].data["frontier"]
    points = views[6].data["points"]
    for i in front:   # nothing on the frontier is beaten on both axes
        assert not any(p["cost"] <= points[i]["cost"] and p["median_kl"] < points[i]["median_kl"] for p in points)
    causal = views[6].data["kl_causal"]          # a causal model's roadmap has one 2020 baseline
    assert [r["id"] for r in views[6].data["roadmap"]] == [p[0] for p in tradeoff.ROADMAP_POINTS
                                                           if not (causal and p[0] == "2020_causal")]
    for view in views.values():
        assert all(isinstance(x, float) for x in view.numbers.values())


def test_chinese_text_gets_an_unk_notice():
    sample = load_sample("text", text="猫坐在垫子上")          # the embedded MiniLM reads Chinese as [UNK]
    view = lecture.chapter_view(6, sample=sample)
    count = sum(1 for s in sample.info["token_strings"] if s == "[UNK]")
    assert count >= 3
    notes = view.notices_in("zh")
    assert any("[UNK]" in n and str(count) in n for n in notes)
    assert any(f"{count} of {sample.n_tokens}" in n for n in view.notices_in("en"))


@pytest.mark.slow
def test_random_sample_chapters_work_without_a_model():
    sample = load_sample("random", n=24, d=16, heads=2)
    for ch in (1, 3, 4, 5, 6):
        view = lecture.chapter_view(ch, sample=sample, layer=0, head=1) if ch != 6 else \
            lecture.chapter_view(ch, sample=sample, layer=0)
        assert said_chapter_figures(view, "en")
    assert lecture.chapter_view(1, sample=sample, layer=0, head=0, query=3).data["head"]["reference_kind"] == "engine"


@pytest.mark.slow
def test_chapter_five_uses_a_cached_trained_hedgehog(monkeypatch, embedded_only):
    from explorer import maps as feature_maps
    from explorer.views import learn

    trained = feature_maps.create("hedgehog", 32, num_features=64)
    monkeypatch.setattr(learn, "cached_result", lambda *a, **k: SimpleNamespace(feature_map=trained))
    view = lecture.chapter_view(5, text=TEXT)
    assert "hedgehog_trained" in view.data["kl"] and view.data["hedgehog_origin"] == "trained here"
    monkeypatch.setattr(learn, "cached_result", lambda *a, **k: None)
    monkeypatch.setattr(lecture_common, "shipped_map", lambda *a, **k: None)
    view = lecture.chapter_view(5, text=TEXT)
    assert "hedgehog" in view.data["kl"]
    assert any("untrained" in n for n in view.notices)


def test_chapter_five_shows_the_shipped_trained_hedgehog_by_default(monkeypatch, embedded_only):
    """From the first second: the map shipped for the lecture's head, well below elu+1."""
    from explorer.views import learn

    monkeypatch.setattr(learn, "cached_result", lambda *a, **k: None)
    view = lecture.chapter_view(5)
    assert (view.controls["layer"], view.controls["head"]) == (LECTURE_LAYER, LECTURE_HEAD)
    assert view.data["hedgehog_origin"] == "shipped" and "hedgehog_trained" in view.data["kl"]
    kl = view.data["kl"]
    assert kl["hedgehog_trained"]["mean"] < 0.5 * kl["elu1"]["mean"]
    assert kl["hedgehog_trained"]["median"] < 0.5 * kl["elu1"]["median"]
    assert not any("untrained" in n for n in view.notices)


def test_chapter_five_trains_only_when_asked(monkeypatch, embedded_only):
    from explorer.views import learn

    calls = []
    monkeypatch.setattr(learn, "cached_result", lambda *a, **k: None)

    def fake_learn(layer, head, m, steps, progress=None, model=None):
        calls.append((layer, head, m, steps, model))
        progress(1.0, "done")
        from explorer import maps as feature_maps
        return SimpleNamespace(feature_map=feature_maps.create("hedgehog", 32, num_features=m))

    monkeypatch.setattr(learn, "learn_view", fake_learn)
    seen = []
    lecture.chapter_view(5, text=TEXT, train=False)
    assert calls == []
    lecture.chapter_view(5, text=TEXT, train=True, steps=50, progress=lambda f, m: seen.append(f))
    assert calls == [(LECTURE_LAYER, LECTURE_HEAD, 64, 50, None)] and seen      # None: the embedded MiniLM


def test_hybrid_curve_ends_at_the_original_model(views):
    linear = views[5].data["linearized"]
    if linear:          # the causal model: its own layers linearized, judged by perplexity
        for points in linear["curves"].values():
            assert points[-1]["perplexity"] == pytest.approx(linear["original"], rel=1e-6)
            assert points[0]["perplexity"] > linear["original"]
        return
    path = views[5].data["hybrid"]
    assert [p["k"] for p in path] == list(range(7))
    assert path[-1]["cosine"] == pytest.approx(1.0, abs=1e-5)
    assert path[0]["cosine"] < 0.99


def test_chapter_three_prints_the_variance_formulas_m(views):
    from explorer.maps import rf_theory

    view = views[3]
    sample = load_sample("text", text=TEXT, model=lecture.default_model(3))       # the model chapter 3 reads
    q, k = sample.q[view.controls["layer"], view.controls["head"]], sample.k[view.controls["layer"], view.controls["head"]]
    causal = bool(getattr(sample, "causal", False))
    assert view.numbers["m_required"] == pytest.approx(
        rf_theory.favor_required_features(q, k, 0.1, causal=causal)["m_required"])
    assert view.numbers["m_required"] > 1000 * view.numbers["m_required_well"]   # why the real head does not converge
    assert view.numbers["rf_error_real_m_max_orthogonal"] > 5 * view.numbers["rf_error_well_m_max_orthogonal"]


def test_reverse_kernel_table_in_both_languages():
    for lang in ("en", "zh"):
        table = lecture_text.reverse_kernel_table(lang)
        assert len(table) == 6 and all(len(row) == 3 for row in table)
        assert all(cell.strip() for row in table[1:] for cell in row)
    assert CJK.search(lecture_text.reverse_kernel_table("zh")[1][1])


@pytest.mark.slow
def test_chapter_one_names_its_reference_for_what_it_is():
    """On data without a model the comparison is with the engine's softmax, and the legend says so."""
    sample = load_sample("random", n=12, d=8, heads=2)
    for lang in ("en", "zh"):
        fig = said_chapter_figures(lecture.chapter_view(1, sample=sample, layer=0, head=0, query=3), lang)[2]
        names = [trace.name for trace in fig.data if trace.name]
        assert lecture_text.t("legend.engine_output", lang) in names
        assert lecture_text.t("legend.model_output", lang) not in names
    fig = said_chapter_figures(lecture.chapter_view(1, text=TEXT), "en")[2]
    assert lecture_text.t("legend.model_output", "en") in [trace.name for trace in fig.data]


def _subtitle(fig) -> str:
    """The note as one line (English wraps at spaces: the lines join with one)."""
    return (fig.layout.title.subtitle.text or "").replace("<br>", " ")


def _flat(text: str) -> str:
    """Without line breaks and spaces: Chinese wraps anywhere, so lines join with none."""
    return re.sub(r"\s+|<br>", "", text)


def test_ratios_below_one_are_printed_as_they_are():
    """At short N the linear path costs more (ratio N / (d + 1) < 1): the note must not say 0×."""
    view = lecture.chapter_view(0, n=64, d=128)
    ratio = view.numbers["flop_ratio"]
    assert ratio == pytest.approx(64 / 129)
    note = _subtitle(said_chapter_figures(view, "en")[3])      # the FLOPs, after the opening, pairs and memory
    assert f"×{ratio:.2g} " in note and "×0 " not in note
    view = lecture.chapter_view(2, text=TEXT, n=16, d=64, m=64)
    ratio = view.numbers["flop_ratio"]
    assert ratio == pytest.approx(2 * 16 ** 2 * 128 / (4 * 16 * 64 * 64 + 4 * 16 * 64))
    note = _subtitle(said_chapter_figures(view, "en")[1])
    assert f"FLOPs ×{ratio:.2g} " in note and "×0 " not in note


def test_taylor_panel_marks_where_order_one_goes_negative(views):
    view = lecture.chapter_view(3, text=TEXT, sample=load_sample("text", text=TEXT))   # MiniLM: logits below -1
    grid = view.data["taylor"]["s"]
    assert grid[0] < -1 < grid[-1]           # this head has logits on both sides of -1
    fig = said_chapter_figures(view, "en")[1]
    shaded = [s for s in fig.layout.shapes if s.type == "rect" and (s.yref == "paper" or "domain" in s.yref)]
    assert len(shaded) == 1 and shaded[0].x0 == pytest.approx(grid[0]) and shaded[0].x1 == -1.0
    order1 = view.data["taylor"]["order1"]
    assert np.all((order1 < 0) == (grid < -1))   # the shaded span is exactly where 1 + s < 0


@pytest.mark.slow
def test_values_a_log_axis_cannot_show_are_named_not_dropped(views):
    """KL = 0 (a row the map gets exactly) or -1e-17 (rounding) vanish from a log axis: the
    figures leave them out of the drawn data and say so in the note, in the chosen language."""
    import copy

    five = copy.deepcopy(views[5])
    name = next(iter(five.data["kl"]))
    # A causal comparison's first row sees one key (KL 0 by construction): it is not counted.
    first = 1 if five.data.get("kl_causal") else 0
    five.data["kl"][name]["kl"][first:first + 3] = (0.0, -1e-17, np.nan)
    for lang in ("en", "zh"):
        fig = said_chapter_figures(five, lang)[3]
        assert np.all(np.asarray(fig.data[0].y) > 0)
        shown = lecture_text.map_words(name, lang)
        assert _flat(lecture_text.t("note.kl_not_drawn", lang, map=shown, count=2)) in _flat(_subtitle(fig))

    six = copy.deepcopy(views[6])
    six.data["points"][0]["median_kl"] = 0.0
    six.data["frontier"] = [0] + [i for i in six.data["frontier"] if i != 0]
    label = six.data["points"][0]["label"]
    fig = said_chapter_figures(six, "zh")[0]
    assert all(y > 0 for trace in fig.data for y in trace.y)
    name = lecture_text.map_words(label, "zh")
    assert _flat(lecture_text.t("note.kl_zero", "zh", map=name, kl="0")) in _flat(_subtitle(fig))
    undefined = [p["label"] for p in views[6].data["points"] if not np.isfinite(p["median_kl"])]
    assert undefined        # trig RFF on a real head, at least
    note = _flat(_subtitle(said_chapter_figures(views[6], "zh")[0]))
    points = {p["label"]: p for p in views[6].data["points"]}
    # A map undefined on more than half of the rows is said to have no point, with the count
    # (it used to read "median KL undefined" and, on a few rows, got a median of its own).
    assert all(_flat(lecture_text.t("note.kl_no_point", "zh", map=lecture_text.map_words(lab, "zh"),
                                    count=points[lab]["undefined_rows"], rows=points[lab]["rows"])) in note
               if points[lab]["mostly_undefined"] else
               _flat(lecture_text.t("note.kl_infinite", "zh", map=lecture_text.map_words(lab, "zh"),
                                    count=points[lab]["infinite_rows"], rows=points[lab]["rows"])) in note
               for lab in undefined)


# -- the printed numbers against plain formulas written out here ---------------------------

def test_chapter_zero_numbers_are_the_plain_counts():
    from explorer.measure.cost import flop_counts

    for n, d in ((64, 128), (1000, 64), (100_000, 128)):
        num = lecture.chapter_view(0, n=n, d=d).numbers
        assert num["pairs"] == n * n and num["bytes_f32"] == 4 * n * n and num["bytes_f16"] == 2 * n * n
        quadratic = 2 * n * n * d + 2 * n * n * d                # Q K^T, then A V
        linear = 2 * n * d * d + 2 * n * d * d + 4 * n * d      # phi(K)^T V, phi(Q) (..), normaliser; m = d
        assert num["quadratic_flops"] == quadratic and num["linear_flops"] == linear
        assert num["flop_ratio"] == pytest.approx(quadratic / linear) == pytest.approx(n / (d + 1))
        assert num["quadratic_flops"] == flop_counts(n, d)["quadratic_flops"]   # the one FLOP model


def test_chapter_two_numbers_are_the_plain_counts():
    for n, d, m, name in ((300, 16, 32, "favor_plus_orthogonal"), (2048, 64, 64, "elu1"), (20_000, 32, 8, "elu1")):
        view = lecture.chapter_view(2, text=TEXT, n=n, d=d, m=m, map=name)
        num = view.numbers
        m_used = m if name.startswith("favor_plus") else d                    # elu+1 has m = d features
        assert num["m"] == m_used
        assert num["left_flops"] == 2 * n * n * m_used + 2 * n * n * d
        assert num["right_flops"] == 2 * n * m_used * d + 2 * n * m_used * d + 4 * n * m_used
        assert num["left_intermediate_bytes"] == 4 * n * n and num["right_intermediate_bytes"] == 4 * m_used * d
        assert num["timed_n"] == min(n, 8192)
        assert any("timed" in note or "measured at" in note for note in view.notices) == (n > 8192)
        assert num["max_rel_diff"] <= 1e-5


def test_chapter_three_budget_is_the_variance_formula_written_out(views):
    view = views[3]
    sample = load_sample("text", text=TEXT, model=lecture.default_model(3))
    layer, head = view.controls["layer"], view.controls["head"]
    q, k = sample.q[layer, head].double().numpy(), sample.k[layer, head].double().numpy()
    d, n = q.shape[1], q.shape[0]
    qs, ks = q / d ** 0.25, k / d ** 0.25
    computed = np.tril(np.ones((n, n), dtype=bool)) if getattr(sample, "causal", False) else np.ones((n, n), bool)
    u2 = ((qs[:, None, :] + ks[None, :, :]) ** 2).sum(-1)[computed]     # |q' + k'|^2 per pair the head computes
    m_pairs = np.expm1(u2) / 0.1 ** 2                                      # m for 10 % relative error
    assert u2.size % 2 == 1                                                # an odd count: the median is a pair's
    assert view.numbers["m_required"] == pytest.approx(float(np.median(m_pairs)), rel=1e-9)
    assert view.numbers["q_norm_median"] == pytest.approx(float(np.median(np.linalg.norm(qs, axis=1))))


def test_chapter_four_memory_is_the_plain_count(views):
    num = views[4].numbers
    sample = load_sample("text", text=TEXT, model=lecture.default_model(4))      # the model chapter 4 reads
    n, d, m = sample.n_tokens, sample.head_dim, num["m"]
    assert num["kv_bytes_at_n"] == 4 * n * (d + d)                         # K and V rows, float32
    assert num["state_bytes"] == 4 * (m * d + m)                           # S and z
    assert num["break_even_tokens"] == pytest.approx((m * d + m) / (2 * d))


def test_chapter_six_quality_is_the_median_row_kl_over_the_head(views):
    view = views[6]
    sample = load_sample("text", text=TEXT, model=lecture.default_model(6))     # the model chapter 6 reads
    layer, head = view.controls["layer"], view.controls["head"]                 # the chapter's one head
    q = sample.q[layer, head:head + 1].double().numpy()                         # (1, N, d)
    k = sample.k[layer, head:head + 1].double().numpy()
    d, n = q.shape[-1], q.shape[-2]
    causal = bool(getattr(sample, "causal", False))           # a causal model: keys j <= i only
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    s = np.where(allowed, q @ k.transpose(0, 2, 1) / np.sqrt(d), -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    elu = lambda x: np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))  # noqa: E731
    w = np.where(allowed, elu(q) @ elu(k).transpose(0, 2, 1), 0.0)
    a = w / w.sum(-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(allowed, p * (np.log(p) - np.log(a)), 0.0)
    kl = terms.sum(-1)[:, 1:].ravel() if causal else terms.sum(-1).ravel()   # a causal first row (one key) is not counted
    point = next(pt for pt in view.data["points"] if pt["label"] == "elu1")
    assert point["rows"] == kl.size
    assert point["median_kl"] == pytest.approx(float(np.median(kl)), rel=1e-5)
    assert point["cost"] == 4 * d * d + 4 * d


@pytest.mark.slow
def test_a_new_seed_recomputes_only_the_maps_that_draw_something(monkeypatch):
    from explorer.lecture.ch6_tradeoff import maths as tradeoff

    lecture.chapter_view(6, text=TEXT, seed=11)
    computed = []
    original = tradeoff._layer_quality
    monkeypatch.setattr(tradeoff, "_layer_quality", lambda q, k, fmap, *a: computed.append(fmap.name) or
                        original(q, k, fmap, *a))
    view = lecture.chapter_view(6, text=TEXT, seed=12)
    # The plane's IID, orthogonal and trig RFF, the roadmap's orthogonal FAVOR+, and the
    # trained Hedgehogs (shipped maps are not remembered by identity: a head costs milliseconds).
    assert sorted(computed) == ["favor_plus", "favor_plus", "favor_plus", "hedgehog", "hedgehog", "trig_rff"]
    computed.clear()
    again = lecture.chapter_view(6, text=TEXT, seed=11)
    assert sorted(computed) == ["hedgehog", "hedgehog"]
    deterministic = {"elu1", "taylor2", "relu", "cosformer"}
    for a, b in zip(view.data["points"], again.data["points"]):
        if a["label"] in deterministic:
            assert a["median_kl"] == b["median_kl"]


def test_associativity_blocks_are_drawn_at_the_engines_sides():
    for n in (100, 4096):
        view = lecture.chapter_view(2, text=TEXT, n=n, d=32, m=32)
        fig = said_chapter_figures(view, "en")[0]
        rects = [(s.y1 - s.y0, s.x1 - s.x0) for s in fig.layout.shapes if s.type == "rect"]
        drawn = np.array(rects)
        expected = np.concatenate([view.data["left_sides"], view.data["right_sides"]])
        assert np.allclose(drawn, expected)
        labels = [a.text.replace(" ×<br>", " × ") for a in fig.layout.annotations]   # one line or two
        assert f"<b>φ(Q)φ(K)ᵀ</b><br>{n:,} × {n:,}" in labels and "<b>φ(K)ᵀV</b><br>32 × 32" in labels
        compressed = lecture_text.t("notice.sides_compressed", "en")
        assert (compressed in _subtitle(fig).replace("<br>", " ")) == view.data["sides_compressed"] == (n > 512)
