"""The lecture tab: one view per chapter of the article, as plain data (no gradio).

    chapter_view(ch, sample=None, text=None, **controls) -> ChapterView
    chapter_controls(ch, model=None) -> list[ControlSpec]   the chapter's own controls, ranges and
                                                    defaults for the model it reads
    try_this(ch) -> dict                            a telling preset of those controls
    go_deeper(ch, **controls) -> dict               the full tab that shows more, as query params

Each chapter's view is its record's ``compute`` (``explorer.lecture.chapters``): its package's
``view`` module (shared parts: ``explorer.lecture.view_common``), calling the chapter's math
and the engine it builds on; the
figures (``explorer.lecture.figures``) draw ``ChapterView.data`` and the numbers are in
``ChapterView.numbers``. Notices are kept as (key, values) so that the UI can show them
in either language (``ChapterView.notices_in(lang)``); ``notices`` holds them in English
plus any the sample brought with it.
"""

from __future__ import annotations

import json
import time

from .. import provenance
from . import text
from . import chapters
from .chapters import (  # noqa: F401  (the chapter list and controls live there, torch-free)
    CHAPTERS, EMBEDDED_MODEL, HEAD_CONTROLS, HEAD_DIM, PRONOUN, ControlSpec, _check_ch, _effective, go_deeper,
    try_this,
)
from ..core.threads import one_thread
from ..views.common import load_sample, unk_count  # noqa: F401  (unk_count: the maps tab says it too)
from .view_common import ChapterView, model_of, shipped_map  # noqa: F401  (the chapters' shared view)


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
    record = chapters.chapter(ch)
    ch = record.number
    start = time.perf_counter()
    model = default_model(ch) if sample is None else (model_of(sample) or EMBEDDED_MODEL)
    shape = (sample.n_layers, sample.n_heads) if sample is not None else None
    c = _effective(ch, controls, chapter_controls(ch, model, shape))
    read = None
    if sample is None and record.reads_text:
        default = text_words.default_text(lang if model else "en")
        read = text if text and text.strip() else default
        with one_thread():  # one sentence through a small model
            sample = load_sample("text", text=read, model=model, progress=progress)
    if record.timed:        # it times work as the machine runs it
        view = record.compute(sample, c, progress)
    else:
        with one_thread():  # small work: see explorer.lecture.threads
            view = record.compute(sample, c, progress)
    if sample is not None:
        count, total = unk_count(sample)
        if count:
            view.notice_items.insert(0, ("notice.unk", {"count": count, "total": total}))
        view.sample_notices = list(getattr(sample, "notices", []))
        view.provenance = {"input": provenance.sample_input(sample), "model": provenance.sample_model(sample)}
        view.data.setdefault("source", getattr(sample, "source", ""))
        # The model that read the text: "Go deeper" opens the full tab on it, not on the default.
        view.data.setdefault("model", model_of(sample))
        if read is not None:        # the sentence read (the audience's language's by default), for the same
            view.data["text"] = read
        # What the layer and head controls may reach on the model drawn: the page's sliders follow it.
        view.data["heads_shape"] = (int(sample.n_layers), int(sample.n_heads))
    view.notices = view.notices_in("en")
    view.seconds = time.perf_counter() - start
    return view


text_words = text          # the lecture's words, under a name chapter_view's ``text`` argument leaves free

# Chapters that read the packaged causal model by default when it is ready (their records'
# ``reads_causal_model``): every chapter that reads text, 1 to 6, so the talk has one model
# and one sentence per language. Chapter 4's RNN then runs over a causal model's own heads;
# chapters 5 and 6 compare maps with its causal softmax, with the Hedgehog and LUNA maps
# trained for its layer 3 (shipped: assets/maps/*-smollm2-layer3); the hybrid builds run on
# the linearized model itself.
CAUSAL_CHAPTERS = tuple(ch for ch in CHAPTERS if chapters.chapter(ch).reads_causal_model)


def default_model(ch) -> str | None:
    """The model chapter ``ch`` reads by default: the packaged causal SmolLM2 for the
    chapters of ``CAUSAL_CHAPTERS`` when it is installed and converted (checked on disk,
    nothing loaded: a first conversion takes about 40 s, too long for a slide), else None,
    the embedded MiniLM."""
    if _check_ch(ch) not in CAUSAL_CHAPTERS:
        return None
    return causal_model_ready()


def causal_model_ready() -> str | None:
    """The packaged causal SmolLM2's name when it is installed and converted (checked on disk,
    nothing loaded), else None."""
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

