"""The lecture's chapters in order, and what every chapter's controls share (standard library
only). Each chapter is one record, ``CHAPTER`` in its package (``explorer.lecture.record``):

    CHAPTERS                                        the chapter numbers, in order
    chapter(ch) -> Chapter                          the chapter's record
    chapter_controls(ch) -> list[ControlSpec]       the chapter's own controls, for the UI
    try_this(ch) -> dict                            a telling preset of those controls
    go_deeper(ch, **controls) -> dict               the full tab that shows more, as query params

The UI builds every chapter's controls from this module when it builds the page, before
the engine (torch, plotly) is imported; ``explorer.lecture.view`` re-exports it and
computes the chapters.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..catalog import CAUSAL_MODEL
from ..catalog import whole_number as _int
from ..text import Message
from . import text
from .ch0_bottleneck import CHAPTER as _CH0
from .ch1_kernel_regression import CHAPTER as _CH1
from .ch2_associativity import CHAPTER as _CH2
from .ch3_kernels import CHAPTER as _CH3
from .ch4_rnn import CHAPTER as _CH4
from .ch4_rnn import RNN_MAPS  # noqa: F401
from .ch5_closing_the_gap import CHAPTER as _CH5
from .ch5_closing_the_gap import HYBRID_MAPS, HYBRID_MODES  # noqa: F401
from .ch6_tradeoff import CHAPTER as _CH6
from .record import (  # noqa: F401  (the names every chapter shares, read from here too)
    EMBEDDED_MODEL, HEAD_DIM, LECTURE_HEAD, LECTURE_LAYER, N_HEADS, N_LAYERS, PRONOUN, SHORT_SWEEP,
    SHORT_SWEEP_MAX_N, Chapter, ControlSpec,
)

_RECORDS: dict[int, Chapter] = {record.number: record for record in (_CH0, _CH1, _CH2, _CH3, _CH4, _CH5, _CH6)}
CHAPTERS: tuple[int, ...] = tuple(_RECORDS)

# Where a chapter reads another model by default (its record's ``reads_causal_model``), its
# own default head on that model (its record's ``model_heads``).
MODEL_HEADS: dict[tuple[str, int], tuple[int, int]] = {
    (model, record.number): head for record in _RECORDS.values() for model, head in record.model_heads.items()}
# The layer each other model's shipped trained maps cover (assets/maps, every head of it).
SHIPPED_MAP_LAYERS = {CAUSAL_MODEL["name"]: 3}
# The controls that pick a head: their ranges follow the model the chapter reads.
HEAD_CONTROLS = ("layer", "head")


def _check_ch(ch) -> int:
    ch = _int(ch, "chapter")
    if ch not in CHAPTERS:
        raise ValueError(Message("common.err_chapter", choices=", ".join(map(str, CHAPTERS)), got=ch))
    return ch


def chapter(ch) -> Chapter:
    """The record of chapter ``ch``."""
    return _RECORDS[_check_ch(ch)]


def chapter_controls(ch, model: str | None = None, shape: tuple | None = None) -> list[ControlSpec]:
    """The chapter's controls. With ``shape`` ((layers, heads) of the model the chapter
    reads, from its config or sample) the layer and head ranges are that model's, and the
    defaults are the chapter's own head on ``model`` (its record's ``model_heads``), else the lecture's,
    kept inside the range. Without it: the embedded MiniLM's (what the page is built with,
    before any model is known)."""
    specs = list(chapter(ch).controls)
    if shape is None:
        return specs
    layers, heads = (int(x) for x in shape[:2])
    default = chapter(ch).model_heads.get(model, (LECTURE_LAYER, LECTURE_HEAD))
    last = {"layer": layers - 1, "head": heads - 1}
    start = dict(zip(HEAD_CONTROLS, default))
    return [replace(spec, max=last[spec.name], default=min(start[spec.name], last[spec.name]))
            if spec.name in HEAD_CONTROLS else spec for spec in specs]


def causal_lecture_head(model: str = CAUSAL_MODEL["name"], ch: int = 5) -> tuple[int, int]:
    """(layer, head) chapter ``ch`` shows by default on ``model`` (its record's ``model_heads``)."""
    return chapter(ch).model_heads.get(model, (LECTURE_LAYER, LECTURE_HEAD))


def try_this(ch) -> dict:
    return dict(chapter(ch).try_this)


def go_deeper(ch, text_value: str | None = None, model: str | None = None, **controls) -> dict:
    """The full tab that shows this chapter's idea at length, as query parameters in the form
    that tab's link reads (``tab`` plus its keys; lists comma-separated), on the chapter's
    state: the same text, layer, head, maps, m and seed, and the model that read the text
    when it is not the embedded one (``model``, as the view reports it in ``data["model"]``)."""
    record = chapter(ch)
    c = _effective(record.number, controls)
    src = {"src": "text", "text": text_value or text.DEFAULT_TEXT}
    if model and model != EMBEDDED_MODEL:
        src["model"] = model
    return record.deeper(c, src)


def _effective(ch: int, controls: dict, specs=None) -> dict:
    """Every control of the chapter with its value: given ones checked and clamped to range.
    ``specs``: the chapter's controls for the model it reads (``chapter_controls`` with a
    shape); their defaults fill the gaps. A layer or head past the model's last is left for
    the view to clamp to the sample with a notice (``views.common.select_head``): a link made
    for one model still opens on another."""
    specs = {spec.name: spec for spec in (specs if specs is not None else chapter(ch).controls)}
    unknown = set(controls) - set(specs)
    if unknown:
        raise ValueError(Message("common.err_chapter_controls", ch=ch, unknown=", ".join(sorted(unknown)),
                                 known=", ".join(specs)))
    out = {}
    for name, spec in specs.items():
        value = controls.get(name, spec.default)
        if value is None:
            value = spec.default
        if spec.kind == "int":
            value = _int(value, name)
        elif spec.kind == "float":
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ValueError(Message("common.err_control_number", name=name, got=repr(value))) from None
            if not math.isfinite(value):
                raise ValueError(Message("common.err_control_finite", name=name, got=repr(value)))
        elif spec.kind == "bool":
            value = value in (True, 1, "1", "true", "True", "yes")
        elif value not in spec.choices:
            raise ValueError(Message("common.err_control_choice", name=name, choices=", ".join(map(str, spec.choices)),
                                     got=repr(value)))
        if spec.kind in ("int", "float"):
            if spec.min is not None and value < spec.min:
                raise ValueError(Message("common.err_control_min", name=name, low=spec.min, got=value))
            if spec.max is not None and value > spec.max and spec.name not in HEAD_CONTROLS:
                raise ValueError(Message("common.err_control_max", name=name, high=spec.max, got=value))
        out[name] = value
    return out


