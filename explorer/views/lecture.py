"""The lecture tab: one view per chapter of the article, as plain data (no gradio).

    chapter_view(ch, sample=None, text=None, **controls) -> ChapterView
    chapter_controls(ch, model=None) -> list[ControlSpec]   the chapter's own controls, ranges and
                                                    defaults for the model it reads
    try_this(ch) -> dict                            a telling preset of those controls
    go_deeper(ch, **controls) -> dict               the full tab that shows more, as query params

Each chapter calls its module in ``explorer.lecture`` and the engine it builds on; the
figures (``explorer.figures.lecture``) draw ``ChapterView.data`` and the numbers are in
``ChapterView.numbers``. Notices are kept as (key, values) so that the UI can show them
in either language (``ChapterView.notices_in(lang)``); ``notices`` holds them in English
plus any the sample brought with it.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

import numpy as np

from ..forms import attention, state
from .. import maps as feature_maps
from ..lecture import text
from ..lecture.ch0_bottleneck import maths as bottleneck
from ..lecture.ch1_kernel_regression import maths as nadaraya_watson
from ..lecture.ch2_associativity import maths as associativity
from ..lecture.ch3_kernels import maths as kernels
from ..lecture.ch4_rnn import maths as rnn
from ..lecture.ch5_closing_the_gap import maths as closing
from ..lecture.ch6_tradeoff import maths as tradeoff
from ..lecture import chapters
from ..lecture.chapters import (  # noqa: F401  (the chapter list and controls live there, torch-free)
    CHAPTERS, EMBEDDED_MODEL, HEAD_CONTROLS, HEAD_DIM, PRONOUN, ControlSpec, _check_ch, _effective, go_deeper,
    try_this,
)
from ..lecture.memo import memo
from ..lecture.threads import one_thread
from ..catalog import map_specs
from .common import load_sample, make_feature_map, select_head


@dataclass
class ChapterView:
    ch: int
    controls: dict                 # the effective control values (after clamping), for links
    numbers: dict                  # name -> float, every number the chapter prints
    data: dict                     # plain arrays and labels for the figures
    notices: list = field(default_factory=list)          # English, including the sample's own
    notice_items: list = field(default_factory=list)     # (key, values) of the lecture's notices
    sample_notices: list = field(default_factory=list)   # from the source, English only
    seconds: float = 0.0

    def notices_in(self, lang: str = "en") -> list[str]:
        """The notices in ``lang``: the lecture's own translated, the source's as they are."""
        def named(values):          # a map's name as the reader's language writes it
            out = {k: text.map_name(v, lang) if k == "map" else v for k, v in values.items()}
            if "maps" in values:    # (map, count) pairs, listed in the reader's language
                out["maps"] = ("，" if lang == "zh" else ", ").join(
                    f"{text.map_name(name, lang)} {count}" for name, count in values["maps"])
            return out
        return [_notice(key, lang, named(values)) for key, values in self.notice_items] + list(self.sample_notices)


def _notice(key: str, lang: str, values: dict) -> str:
    """A lecture notice, or one of the app's common ones (a layer or head clamped to the model)."""
    if key.startswith("common."):
        from ..words import w
        return w(key, lang, **values)
    return text.notice(key, lang, **values)


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------

def chapter_view(ch, sample=None, text: str | None = None, progress=None, lang: str | None = None,
                 **controls) -> ChapterView:
    """Chapter ``ch`` on ``sample``, or on ``text`` (else the lecture's sentence) read by the
    chapter's default model (``default_model``: the causal SmolLM2 for chapters 4 and 5 when
    it is ready, else the embedded MiniLM). Controls left out take their defaults on the model
    read (``chapter_controls``); a layer or head past its last is clamped with a notice.
    ``lang`` picks the default sentence where that model reads Chinese.
    ``progress(fraction, message)`` reports long work (training, a first load)."""
    ch = _check_ch(ch)
    start = time.perf_counter()
    model = default_model(ch) if sample is None else (_model_of(sample) or EMBEDDED_MODEL)
    shape = (sample.n_layers, sample.n_heads) if sample is not None else None
    c = _effective(ch, controls, chapter_controls(ch, model, shape))
    if sample is None and ch != 0:
        default = text_words.default_text(lang if model else "en")
        with one_thread():  # one sentence through a small model
            sample = load_sample("text", text=text if text and text.strip() else default, model=model,
                                 progress=progress)
    build = _BUILDERS[ch]
    if ch == 2:             # timed: the orders run as the machine runs them
        view = build(sample, c, progress)
    else:
        with one_thread():  # small work: see explorer.lecture.threads
            view = build(sample, c, progress) if ch != 0 else build(c)
    if sample is not None:
        count, total = unk_count(sample)
        if count:
            view.notice_items.insert(0, ("notice.unk", {"count": count, "total": total}))
        view.sample_notices = list(getattr(sample, "notices", []))
        view.data.setdefault("source", getattr(sample, "source", ""))
        # What the layer and head controls may reach on the model drawn: the page's sliders follow it.
        view.data["heads_shape"] = (int(sample.n_layers), int(sample.n_heads))
    view.notices = view.notices_in("en")
    view.seconds = time.perf_counter() - start
    return view


text_words = text          # the lecture's words, under a name chapter_view's ``text`` argument leaves free

# Chapters that read the packaged causal model by default when it is ready: chapter 4's RNN
# then runs over a causal model's own heads, and chapter 5 compares maps with its causal
# softmax, with a Hedgehog trained for it (shipped: assets/maps/hedgehog-smollm2-layer3).
# Chapter 5's hybrid build needs a bidirectional (bert) model: it runs on the embedded
# MiniLM and says so.
CAUSAL_CHAPTERS = (4, 5)


def default_model(ch) -> str | None:
    """The model chapter ``ch`` reads by default: the packaged causal SmolLM2 for the
    chapters of ``CAUSAL_CHAPTERS`` when it is installed and converted (checked on disk,
    nothing loaded: a first conversion takes about 40 s, too long for a slide), else None,
    the embedded MiniLM."""
    if _check_ch(ch) not in CAUSAL_CHAPTERS:
        return None
    from ..sources import packaged
    spec = packaged.SMOLLM2
    gguf = packaged.gguf_path(spec)
    if gguf is None or not packaged.is_converted(packaged.converted_folder(spec, gguf)):
        return None
    return spec.name


def chapter_controls(ch, model: str | None = None, shape: tuple | None = None) -> list[ControlSpec]:
    """The chapter's controls for the model it reads: ``model`` (None: the chapter's default,
    ``default_model``), with layer and head ranges from ``shape`` ((layers, heads), e.g. a
    sample's) or else from that model's config, and the chapter's default head on it."""
    ch = _check_ch(ch)
    if model is None:
        model = default_model(ch) or EMBEDDED_MODEL
    if shape is None:
        shape = model_heads(model)
    return chapters.chapter_controls(ch, model, shape)


def model_heads(model: str | None) -> tuple[int, int] | None:
    """(layers, heads) of ``model`` from its config, loading no weights: the converted
    SmolLM2's config.json when it is there, else what ``explorer.sources.model_shape`` reads;
    None when the config cannot be read (the view then clamps to the sample it gets)."""
    from ..sources import model_shape, packaged
    spec = packaged.find(model)
    if spec is not None:
        gguf = packaged.gguf_path(spec)
        folder = packaged.converted_folder(spec, gguf) if gguf is not None else None
        if folder is not None and packaged.is_converted(folder):
            try:
                config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
                return int(config["num_hidden_layers"]), int(config["num_attention_heads"])
            except (OSError, ValueError, KeyError, TypeError):
                pass
    try:
        return tuple(int(x) for x in model_shape(model)[:2])
    except (ValueError, OSError):
        return None


def _model_of(sample) -> str | None:
    """The model that read ``sample`` (its name as the picker calls it), or None for data."""
    return (getattr(sample, "info", None) or {}).get("model") or None


def unk_count(sample) -> tuple[int, int]:
    """(tokens the model read as [UNK], tokens) of a text sample; (0, N) otherwise."""
    strings = (getattr(sample, "info", None) or {}).get("token_strings") or []
    return sum(1 for s in strings if s == "[UNK]"), sample.n_tokens


def _head_of(sample, c):
    """(q, k, v, notice items) of the chosen head; a layer or head past the model's last is
    clamped to it (as select_head does) with the app's notice, kept as a (key, values) item
    so that it reads in either language."""
    asked = {"layer": c["layer"], "head": c["head"]}
    q, k, v, layer, head, _ = select_head(sample, c["layer"], c["head"])
    c["layer"], c["head"] = layer, head
    items = []
    for name, used, count in (("layer", layer, sample.n_layers), ("head", head, sample.n_heads)):
        if used != asked[name] and count > 1:
            items.append((f"common.no_{name}", {"asked": asked[name], "last": count - 1, "used": used}))
    return q, k, v, items


def _new(ch, c, items=()) -> ChapterView:
    return ChapterView(ch=ch, controls=c, numbers={}, data={}, notice_items=list(items))


# -- 0 ----------------------------------------------------------------------------------

def _ch0(c) -> ChapterView:
    view = _new(0, c)
    now = bottleneck.bottleneck(c["n"], c["d"])
    view.numbers.update({k: float(v) for k, v in now.items()})
    step = bottleneck.article_step(c["d"])
    view.numbers.update({f"article_{k}": float(v) for k, v in step.items()})
    view.data["ladder"] = bottleneck.ladder(c["n"], c["d"])
    view.data["current"] = now
    return view


# -- 1 ----------------------------------------------------------------------------------

def _ch1(sample, c, progress) -> ChapterView:
    q, k, v, notes = _head_of(sample, c)
    view = _new(1, c, notes)
    xs, ys = nadaraya_watson.toy_points(c["points"], c["seed"])
    grid = np.linspace(*nadaraya_watson.X_RANGE, 300)
    curve, _ = nadaraya_watson.nw_regression(grid, xs, ys, c["h"])
    fx, w = nadaraya_watson.nw_regression([c["x"]], xs, ys, c["h"])
    view.data["toy"] = {"xs": xs, "ys": ys, "grid": grid, "curve": curve, "truth": nadaraya_watson.truth(grid),
                        "x": c["x"], "fx": float(fx[0]), "weights": w[0], "h": c["h"]}
    n = q.shape[0]
    if c["query"] >= n:
        c["query"] = n - 1
    i = c["query"]
    causal = bool(getattr(sample, "causal", False))
    nw = nadaraya_watson.head_query(q, k, v, i, causal=causal)
    context = nadaraya_watson.model_attention_output(sample)
    if context is not None:
        reference = context[c["layer"], c["head"], i].double().numpy()
        reference_kind = "model"
    else:
        reference = (attention.softmax_map(q, k, causal=causal).double() @ v.double())[i].numpy()
        reference_kind = "engine"
        view.notice_items.append(("notice.no_model_output", {}))
    diff = float(np.abs(nw["output"] - reference).max())
    view.data["head"] = {"tokens": list(sample.tokens), "weights": nw["weights"], "logits": nw["logits"],
                         "output": nw["output"], "reference": reference, "reference_kind": reference_kind,
                         "query": i, "token": sample.tokens[i]}
    view.numbers.update({"fx": float(fx[0]), "max_abs_diff": diff, "query": float(i),
                         "top_weight": float(nw["weights"].max())})
    return view


# -- 2 ----------------------------------------------------------------------------------

def _ch2(sample, c, progress) -> ChapterView:
    view = _new(2, c)
    n, d = c["n"], c["d"]
    label = c["map"]
    fmap = _cached_map(label, d, c["m"] if "FAVOR" in label else None, c["seed"])
    m = fmap.num_features
    c["m"] = m if "FAVOR" in label else c["m"]
    shapes = associativity.orders(n, d, m)
    timed_n = min(n, associativity.MAX_TIMED_N)
    if timed_n < n:
        view.notice_items.append(("notice.timed_cap", {"n": f"{n:,}", "cap": f"{timed_n:,}", "cells": f"{n * n:,}"}))
    view.notice_items.append(("notice.random_data", {"tokens": sample.n_tokens if sample is not None else 0}))
    q, k, v = associativity.random_qkv(timed_n, d, c["seed"])
    measured = associativity.measure(q, k, v, fmap, repeats=3 if timed_n <= 1024 else 2 if timed_n <= 4096 else 1)
    timed = associativity.orders(timed_n, d, m)
    article = associativity.article_ratio()
    rate = associativity.matmul_rate()
    view.data["orders"] = shapes
    largest = max(n, m, d)
    view.data["left_sides"] = associativity.block_sides(shapes["left"], largest)
    view.data["right_sides"] = associativity.block_sides(shapes["right"], largest)
    view.data["sides_compressed"] = largest > associativity.LINEAR_DRAW_LIMIT
    view.numbers.update({
        "n": float(n), "d": float(d), "m": float(m), "timed_n": float(timed_n),
        "left_flops": float(shapes["left_flops"]), "right_flops": float(shapes["right_flops"]),
        "flop_ratio": float(shapes["flop_ratio"]),
        "left_intermediate_bytes": float(shapes["left_intermediate_bytes"]),
        "right_intermediate_bytes": float(shapes["right_intermediate_bytes"]),
        "left_seconds": measured["left_seconds"], "right_seconds": measured["right_seconds"],
        "time_ratio": measured["left_seconds"] / max(measured["right_seconds"], 1e-12),
        "timed_flop_ratio": float(timed["flop_ratio"]),
        "max_abs_diff": measured["max_abs_diff"], "max_rel_diff": measured["max_rel_diff"],
        "article_model_ratio": article["model_ratio"], "article_leading_ratio": article["leading_ratio"],
        "matmul_gflops": rate / 1e9,
    })
    return view


# -- 3 ----------------------------------------------------------------------------------

def _ch3(sample, c, progress) -> ChapterView:
    q, k, v, notes = _head_of(sample, c)
    view = _new(3, c, notes)
    d = q.shape[-1]
    logits = kernels.logit_summary(q, k)
    view.data["taylor"] = kernels.taylor_curves(logits["s"])
    view.data["logits"] = logits["s"]            # one per (query, key) pair: N² of them
    profiles = {}
    for label in ("Taylor-1", "elu+1", f"FAVOR+ ({'orthogonal' if c['orthogonal'] else 'IID'})", "Taylor-2"):
        fmap = _cached_map(label, d, c["m"] if "FAVOR" in label else None, c["seed"])
        prof = kernels.kernel_profile(q, k, fmap)
        profiles[label] = prof
        if prof["nonpositive"]:
            view.notice_items.append(("notice.not_shown_log", {"map": label, "count": prof["nonpositive"],
                                                               "pairs": prof["pairs"]}))
    first = next(iter(profiles.values()))
    if first["shown"] < first["pairs"]:
        view.notice_items.append(("notice.profile_subset", {"shown": first["shown"], "pairs": first["pairs"]}))
    view.data["profiles"] = profiles
    n = q.shape[0]
    wq, wk, _ = kernels.well_conditioned(n, d, c["seed"])
    view.data["rf_well"] = kernels.rf_convergence(wq, wk, seeds=3)
    view.data["rf_real"] = kernels.rf_convergence(q, k, seeds=3)
    view.data["norms"] = {"q": kernels.scaled_norms(q), "k": kernels.scaled_norms(k),
                          "q_well": kernels.scaled_norms(wq), "k_well": kernels.scaled_norms(wk)}
    budget = kernels.favor_budget(q, k, 0.1)
    if budget is None:
        view.notice_items.append(("notice.no_rf_theory", {}))
    else:
        well = kernels.favor_budget(wq, wk, 0.1)
        view.numbers.update(m_required=budget["m_required"], m_required_well=well["m_required"],
                            log10_m_required=float(budget["details"]["log10_m_required"]),
                            log10_m_required_well=float(well["details"]["log10_m_required"]))
    view.data["reverse_kernel"] = [(f"rk.row.{row}.aspect", f"rk.row.{row}.svm", f"rk.row.{row}.linear")
                                   for row in ("goal", "works", "phi", "cost", "price")]
    view.numbers.update({
        "tokens": float(n), "pairs": float(logits["s"].size),
        "s_min": logits["s_min"], "s_max": logits["s_max"],
        "negative_taylor1_fraction": logits["negative_taylor1_fraction"],
        "q_norm_median": float(np.median(view.data["norms"]["q"])),
        "k_norm_median": float(np.median(view.data["norms"]["k"])),
        **{f"kernel_rel_error[{label}]": p["kernel_rel_error"] for label, p in profiles.items()},
        "rf_error_real_m_max_orthogonal": float(view.data["rf_real"]["orthogonal"][-1]),
        "rf_error_well_m_max_orthogonal": float(view.data["rf_well"]["orthogonal"][-1]),
    })
    return view


# -- 4 ----------------------------------------------------------------------------------

def _ch4(sample, c, progress) -> ChapterView:
    q, k, v, notes = _head_of(sample, c)
    view = _new(4, c, notes)
    d, n = q.shape[-1], q.shape[0]
    fmap = _cached_map(c["map"], d, c["m"] if "FAVOR" in c["map"] else None, 0)
    if c["t"] == PRONOUN and getattr(sample, "text", None) in (text.DEFAULT_TEXT, text.DEFAULT_TEXT_ZH):
        c["t"] = _pronoun_step(sample.tokens, c["t"])     # another tokenizer puts "it" elsewhere
    t = n - 1 if c["t"] < 0 or c["t"] >= n else c["t"]
    c["t"] = t
    step = rnn.step_to(q, k, v, fmap, t)
    both = rnn.recurrent_vs_parallel(q, k, v, fmap)
    mem = rnn.memory(d, fmap.num_features, v.shape[-1])
    early = rnn.recall(fmap, d, "none", "early")
    recent = rnn.recall(fmap, d, "none", "recent")    # without decay the same curve: order is not kept
    view.data.update(step=step, token=sample.tokens[t], tokens=list(sample.tokens), memory=mem, recall=early,
                     recall_recent=recent,
                     recurrent=both["recurrent"][t], parallel=both["parallel"][t])
    view.notice_items.append(("notice.recall_synthetic", {"d": d}))
    if getattr(sample, "causal", False) and sample.model_attentions is not None:
        # The RNN's causal order is the model's own: causal softmax on its q, k is its attention.
        own = sample.model_attentions[c["layer"], c["head"]].double()
        diff = float((attention.softmax_map(q, k, causal=True).double() - own).abs().max())
        view.numbers["model_attention_max_abs_diff"] = diff
        view.notice_items.append(("notice.causal_model", {"model": sample.info.get("model", ""), "diff": f"{diff:.1e}"}))
    view.data["model"] = (getattr(sample, "info", None) or {}).get("model")
    lags = early["lags"]
    view.numbers.update({
        "t": float(t), "max_abs_diff": both["max_abs_diff"], "max_rel_diff": both["max_rel_diff"],
        "state_bytes": mem["state_bytes"], "kv_bytes_at_n": float(state.kv_cache_bytes(n, d, v.shape[-1])),
        "break_even_tokens": mem["break_even_tokens"], "m": float(fmap.num_features),
        "recall_lag_1": float(early["cosine"][np.flatnonzero(lags == 1)[0]]),
        f"recall_lag_{int(lags[-1])}": float(early["cosine"][-1]),
    })
    return view


PRONOUNS = ("it", "它")


def _pronoun_step(tokens, fallback: int) -> int:
    """The last token of the default sentence's pronoun ("it", or 它 split into byte pieces,
    "它(1/2)", "它(2/2)"): the step where the state has just read it."""
    words = [re.sub(r"\(\d+/\d+\)$", "", label.rsplit("·", 1)[0]).strip().lower() for label in tokens]
    hits = [i for i, word in enumerate(words) if word in PRONOUNS]
    if not hits:
        return fallback
    end = hits[0]
    while end + 1 in hits:
        end += 1
    return end


# -- 5 ----------------------------------------------------------------------------------

def _ch5(sample, c, progress) -> ChapterView:
    q, k, v, notes = _head_of(sample, c)
    view = _new(5, c, notes)
    d = q.shape[-1]
    view.data["head_dim"] = d         # the recall probes' dimension: the head's (32 on MiniLM, 64 on SmolLM2)
    view.data["model"] = _model_of(sample)    # "Go deeper" opens the learn tab on the same model
    elu = feature_maps.create("elu1", d)
    curves = closing.decay_recall(elu, d, gamma=c["gamma"], strength=c["strength"])
    view.data["recall"] = curves
    view.notice_items.append(("notice.recall_synthetic", {"d": d}))
    gap = closing.recall_gap(curves, 256)
    view.numbers.update({f"recent_minus_early_at_256[{kind}]": g for kind, g in gap.items()})

    lag = closing.OVERWRITE_LAG
    overwrite = closing.overwrite_recall(elu, d, lag, gamma=c["gamma"], strength=c["strength"])
    view.data["overwrite"] = {"lag": lag, "kinds": overwrite}
    for kind, r in overwrite.items():
        view.numbers.update({f"recall_early_at_{lag}[{kind}]": r["early"], f"recall_recent_at_{lag}[{kind}]": r["recent"]})
    depth = closing.hgrn2_depth(elu, d)
    view.data["hgrn2"] = depth
    for layer, lb, mem in zip(depth["layers"], depth["lower_bound"], depth["memory_tokens"]):
        view.numbers.update({f"hgrn2_lower_bound_layer{layer}": float(lb), f"hgrn2_memory_layer{layer}": float(mem)})

    trained, origin = _hedgehog(sample, c, progress)
    causal = bool(getattr(sample, "causal", False))
    if trained is None:
        hh = feature_maps.create("hedgehog", d, num_features=c["m"] if c["m"] % 2 == 0 else c["m"] + 1)
        if _reads_minilm(sample) or sample.model_attentions is None:
            view.notice_items.append(("notice.hedgehog_untrained", {"layer": c["layer"], "head": c["head"]}))
        elif _model_of(sample) in chapters.SHIPPED_MAP_LAYERS:   # say where this model's maps ship
            view.notice_items.append(("notice.hedgehog_untrained_model",
                                      {"layer": c["layer"], "head": c["head"], "model": _model_of(sample),
                                       "shipped": chapters.SHIPPED_MAP_LAYERS[_model_of(sample)]}))
        else:       # training here is the embedded model's, and no map ships for this one
            view.notice_items.append(("notice.hedgehog_untrained_other", {"model": _model_of(sample) or ""}))
        hh_label = "Hedgehog (W = I)"
    else:
        hh, hh_label = trained, "Hedgehog (trained)"
        if origin == "shipped":
            view.notice_items.append(("notice.hedgehog_shipped", {"layer": c["layer"], "head": c["head"]}))
    maps = {"elu+1": elu, "FAVOR+ (orthogonal)": _cached_map("FAVOR+ (orthogonal)", d, c["m"], 0),
            hh_label: hh}
    kl = closing.row_kl_by_map(q, k, maps, causal=causal)
    if causal:      # a causal head's softmax sees keys j <= i only: every map is held to that
        view.notice_items.append(("notice.causal_kl", {"model": _model_of(sample) or ""}))
    view.data["kl"] = kl
    view.data["kl_causal"] = causal
    view.data["hedgehog_trained"] = trained is not None
    view.data["hedgehog_origin"] = origin
    view.numbers.update({f"mean_kl[{name}]": r["mean"] for name, r in kl.items()})

    view.data["hybrid"] = None
    if getattr(sample, "text", None) and getattr(sample, "model_attentions", None) is not None:
        from ..sources.text import get_model
        loaded = get_model()            # the embedded MiniLM: the hybrid swaps layers of a bert model
        if loaded.family == "bert":
            hybrid_text = sample.text
            if causal:
                # A causal model has no bert layers to swap: the build runs on the embedded
                # MiniLM, which reads English (the Chinese default sentence would be [UNK]).
                default = sample.text in (text.DEFAULT_TEXT, text.DEFAULT_TEXT_ZH)
                hybrid_text = text.DEFAULT_TEXT if default else sample.text
                view.notice_items.append(("notice.hybrid_embedded" if default else "notice.hybrid_embedded_text",
                                          {"model": _model_of(sample) or "", "embedded": EMBEDDED_MODEL}))
            name = c["hybrid_map"]
            m = c["m"] if name == "favor_plus" else None
            path = closing.hybrid_curve(loaded, hybrid_text,
                                        lambda i: feature_maps.create(name, HEAD_DIM, num_features=m),
                                        f"{name}:{m}", c["hybrid"], progress=progress)
            view.data["hybrid"] = path
            view.data["hybrid_map"] = name
            view.data["hybrid_model"] = EMBEDDED_MODEL
            view.numbers.update({f"hybrid_cosine_k{p['k']}": p["cosine"] for p in path})
    if view.data["hybrid"] is None:
        view.notice_items.append(("notice.hybrid_no_model", {}))
    return view


def _hedgehog(sample, c, progress):
    """(map, origin) of the trained Hedgehog for the model's (layer, head): one trained in
    this process (the learn tab, or "train" here, on the model that read the text) first,
    else the one shipped with the app for that model, else (None, None). Trains only when
    the speaker asked (``train``)."""
    if getattr(sample, "model_attentions", None) is None:
        return None, None
    from . import learn
    model = None if _reads_minilm(sample) else _model_of(sample)
    m = c["m"] if c["m"] % 2 == 0 else c["m"] + 1
    cached = learn.cached_result(c["layer"], c["head"], m, c["steps"], model=model)
    if cached is None and c["train"]:
        # The bar without the learn tab's English step messages (the lecture speaks zh too).
        quiet = None if progress is None else (lambda fraction, message="": progress(fraction, ""))
        cached = learn.learn_view(c["layer"], c["head"], m, c["steps"], progress=quiet, model=model)
    if cached is not None:
        return cached.feature_map, "trained here"
    shipped = shipped_map("hedgehog", c["layer"], c["head"], model=model or EMBEDDED_MODEL, head_dim=sample.head_dim)
    return (shipped, "shipped") if shipped is not None else (None, None)


def shipped_map(kind: str, layer: int, head: int, model: str = EMBEDDED_MODEL, head_dim: int = HEAD_DIM):
    """The learned map of ``kind`` ("hedgehog" or "luna") trained for ``model``'s (layer,
    head) that ships with the app, or None (also when its head dimension is not ``head_dim``)."""
    try:
        from ..maps.learned import pretrained
    except ImportError:                     # a build without shipped maps
        return None
    try:
        fmap = pretrained(kind, int(layer), int(head), model=model)
    except (FileNotFoundError, KeyError, ValueError):
        return None
    return fmap if fmap is not None and fmap.head_dim == int(head_dim) else None


# -- 6 ----------------------------------------------------------------------------------

def _ch6(sample, c, progress) -> ChapterView:
    asked = c["layer"]
    layer = min(max(asked, 0), sample.n_layers - 1)
    c["layer"] = layer
    view = _new(6, c, [("common.no_layer", {"asked": asked, "last": sample.n_layers - 1, "used": layer})]
                if layer != asked and sample.n_layers > 1 else ())
    q, k = sample.q[layer], sample.k[layer]
    d, dv = q.shape[-1], sample.v.shape[-1]
    points = []
    labels = ["identity (q·k)", "Taylor-1", "elu+1", "ReLU", "FAVOR+ (IID)", "FAVOR+ (orthogonal)",
              "trig RFF (orthogonal)", "Taylor-2", "cosFormer"]
    for label in labels:
        m = c["m"] if "FAVOR" in label or "RFF" in label else None
        fmap = _cached_map(label, d, m, c["seed"])
        qual = tradeoff.layer_quality(q, k, fmap, key=_map_key(label, m, c["seed"]))
        points.append({"label": label, "m": fmap.num_features,
                       "cost": tradeoff.flops_per_token(fmap.num_features, dv), **qual})
    trained = _hedgehog_all(sample, layer, c)
    if trained is not None:
        qual = tradeoff.layer_quality(q, k, trained)
        points.append({"label": "Hedgehog (trained)", "m": trained.num_features,
                       "cost": tradeoff.flops_per_token(trained.num_features, dv), **qual})
    some = []
    for p in points:
        if p["undefined_rows"] == p["rows"]:
            view.notice_items.append(("notice.undefined_kl_all", {"map": p["label"], "rows": p["rows"]}))
        elif p["undefined_rows"]:
            some.append((p["label"], p["undefined_rows"]))
    if some:        # one line for all of them: a slide has no room for one per map
        view.notice_items.append(("notice.undefined_kl_some", {"maps": tuple(some), "rows": points[0]["rows"]}))
    front = tradeoff.pareto_frontier([p["cost"] for p in points], [p["median_kl"] for p in points])
    view.data["points"] = points
    view.data["frontier"] = front
    head = min(max(c["head"], 0), sample.n_heads - 1)
    c["head"] = head
    road = _roadmap(sample, layer, head, c)
    view.data["roadmap"] = road
    view.notice_items.append(("notice.causal_roadmap", {}))
    if not any(r["id"] == "2025_luna" for r in road):
        view.notice_items.append(("notice.no_luna", {"layer": layer, "head": head}))
    d = sample.q.shape[-1]
    states = tradeoff.state_roadmap(feature_maps.create("elu1", d), d, head)
    view.data["state_roadmap"] = states
    view.data["state_dim"] = d        # the figure's note says the probe is synthetic, of this dimension
    view.numbers.update({f"median_kl[{p['label']}]": p["median_kl"] for p in points})
    view.numbers.update({f"roadmap_kl[{r['id']}]": r["median_kl"] for r in road})
    for r in states:
        view.numbers.update({f"roadmap_recall_{pos}_at_{r['lag']}[{r['id']}]": r[pos] for pos in ("early", "recent")})
    return view


def _map_key(label: str, m, seed) -> tuple:
    """What the map behind ``label`` depends on: m only where the user picks it, the seed only
    where it draws something (random features, Hedgehog's extra columns). A seed change then
    recomputes the random maps only."""
    spec = map_specs()[label]
    drawn = spec.random or spec.takes_m
    return (label, int(m) if spec.takes_m and m is not None else None, int(seed) if drawn else None)


def _cached_map(label: str, d: int, m, seed: int):
    """The catalogue's map behind ``label``, built once per setting (random maps draw and
    orthogonalise their projection when built)."""
    key = _map_key(label, m, seed)
    return memo(("map", d, *key), lambda: make_feature_map(label, d, key[1], seed)[0])


def _hedgehog_all(sample, layer, c):
    """A trained Hedgehog for the whole layer: the latest trained here for every head of it,
    else the one shipped with the app; None when there is neither."""
    if getattr(sample, "model_attentions", None) is None or sample.head_dim != HEAD_DIM:
        return None
    from . import learn
    live = learn.cached_layer_map(layer, c["m"] if c["m"] % 2 == 0 else c["m"] + 1)
    if live is not None:
        return live
    try:
        from ..maps.learned import pretrained
    except ImportError:
        return None
    return pretrained("hedgehog", int(layer))


def _roadmap(sample, layer: int, head: int, c) -> list[dict]:
    """The article's 2020 -> 2025 steps measured on one head (the lecture's MiniLM head, the
    one chapter 5 shows when it reads MiniLM): each
    a dict with the step's id, year, map, what it is compared with ("softmax" or "causal
    softmax") and the median row KL. The trained Hedgehog is the one shipped or trained here;
    without one the untrained map is measured and labelled so."""
    q, k = sample.q[layer, head].unsqueeze(0), sample.k[layer, head].unsqueeze(0)
    d = q.shape[-1]
    m = c["m"]
    hh, _ = _hedgehog(sample, {**c, "layer": layer, "head": head, "train": False, "steps": 300}, None)
    maps = {"elu+1": feature_maps.create("elu1", d),
            "FAVOR+ (orthogonal)": _cached_map("FAVOR+ (orthogonal)", d, m, c["seed"]),
            "sliding window": _cached_map("sliding window", d, None, c["seed"])}
    keys = {"elu+1": ("elu+1",), "FAVOR+ (orthogonal)": _map_key("FAVOR+ (orthogonal)", m, c["seed"]),
            "sliding window": _map_key("sliding window", None, c["seed"]), "LUNA": ("LUNA", "shipped", layer, head)}
    luna = shipped_map("luna", layer, head) if _reads_minilm(sample) else None
    return tradeoff.roadmap(q, k, maps, hedgehog=hh, head=head, keys=keys, luna=luna)


def _reads_minilm(sample) -> bool:
    """Whether the sample's heads are the embedded MiniLM's, the model most shipped maps (and
    the learn tab's training) are for."""
    return (getattr(sample, "model_attentions", None) is not None and sample.head_dim == HEAD_DIM
            and _model_of(sample) in (None, EMBEDDED_MODEL))


_BUILDERS = {0: _ch0, 1: _ch1, 2: _ch2, 3: _ch3, 4: _ch4, 5: _ch5, 6: _ch6}
