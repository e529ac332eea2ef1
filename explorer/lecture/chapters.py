"""The lecture's chapters and each chapter's own controls, as plain data (standard library only).

    CHAPTERS                                        the chapter numbers, in order
    chapter_controls(ch) -> list[ControlSpec]       the chapter's own controls, for the UI
    try_this(ch) -> dict                            a telling preset of those controls
    go_deeper(ch, **controls) -> dict               the full tab that shows more, as query params

The UI builds every chapter's controls from this module when it builds the page, before
the engine (torch, plotly) is imported; ``explorer.views.lecture`` re-exports it and
computes the chapters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..catalog import CAUSAL_MODEL, EMBEDDED_SHAPE
from ..catalog import whole_number as _int
from . import text

CHAPTERS: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6)
N_LAYERS, N_HEADS, HEAD_DIM = EMBEDDED_SHAPE
EMBEDDED_MODEL = "all-MiniLM-L6-v2"   # the model the lecture reads unless a chapter says otherwise
HYBRID_MODES = ("greedy", "last")      # which softmax layers a hybrid keeps (explorer.lecture.ch5_closing_the_gap)


@dataclass(frozen=True)
class ControlSpec:
    """One control of a chapter: the UI builds a slider, dropdown or checkbox from it."""

    name: str
    kind: str                      # "int", "float", "choice" or "bool"
    default: object
    min: float | None = None
    max: float | None = None
    choices: tuple = ()
    label_key: str = ""            # key into explorer.lecture.text.TEXT
    step: float | None = None


# ---------------------------------------------------------------------------------------
# Controls
# ---------------------------------------------------------------------------------------

# The head every chapter reads by default on the embedded MiniLM: a trained Hedgehog ships
# for it (``explorer.maps.learned.pretrained``; chapter 5 shows it without SmolLM2), and
# chapter 6's roadmap is measured on it.
# It is the data panel's default head too, so the panel shows what the figures use.
LECTURE_LAYER, LECTURE_HEAD = 2, 3
# Where a chapter reads another model by default (explorer.views.lecture.CAUSAL_CHAPTERS), its
# own default head on that model. Chapter 5 on the causal SmolLM2: layer 3, head 4, a sharp
# head (row entropy about 0.4 nats on the lecture's sentence) where elu+1's flat rows miss
# by a mean row KL above 1 and FAVOR+ does no better; its trained Hedgehog ships for every
# head of that layer (scripts/train_lecture_maps.py).
MODEL_HEADS: dict[tuple[str, int], tuple[int, int]] = {(CAUSAL_MODEL["name"], 5): (3, 4)}
# The layer each other model's shipped trained maps cover (assets/maps, every head of it).
SHIPPED_MAP_LAYERS = {CAUSAL_MODEL["name"]: 3}
# The controls that pick a head: their ranges follow the model the chapter reads.
HEAD_CONTROLS = ("layer", "head")
PRONOUN = 10         # "it" in the default sentence: the query chapter 1 shows, the step chapter 4 stops at


def _layer(default=LECTURE_LAYER):
    return ControlSpec("layer", "int", default, 0, N_LAYERS - 1, label_key="ctl.layer", step=1)


def _head(default=LECTURE_HEAD):
    return ControlSpec("head", "int", default, 0, N_HEADS - 1, label_key="ctl.head", step=1)


RNN_MAPS = ("elu+1", "FAVOR+ (orthogonal)", "FAVOR+ (IID)", "ReLU", "Taylor-2")
HYBRID_MAPS = ("elu1", "favor_plus", "taylor2")

_CONTROLS: dict[int, list[ControlSpec]] = {
    0: [ControlSpec("n", "int", 100_000, 64, 1_000_000, label_key="ctl.n", step=64),
        ControlSpec("d", "int", 128, 8, 512, label_key="ctl.d", step=8)],
    1: [ControlSpec("x", "float", 3.0, 0.0, 10.0, label_key="ctl.x", step=0.05),
        ControlSpec("h", "float", 0.6, 0.05, 5.0, label_key="ctl.h", step=0.05),
        ControlSpec("points", "int", 30, 3, 200, label_key="ctl.points", step=1),
        ControlSpec("seed", "int", 0, 0, 9999, label_key="ctl.seed", step=1),
        _layer(), _head(),
        ControlSpec("query", "int", PRONOUN, 0, 511, label_key="ctl.query", step=1)],
    2: [ControlSpec("n", "int", 2048, 16, 100_000, label_key="ctl.n", step=16),
        ControlSpec("d", "int", 64, 8, 256, label_key="ctl.d", step=8),
        ControlSpec("m", "int", 64, 8, 512, label_key="ctl.m", step=8),
        ControlSpec("map", "choice", "elu+1", choices=("elu+1", "FAVOR+ (orthogonal)"), label_key="ctl.map"),
        ControlSpec("seed", "int", 0, 0, 9999, label_key="ctl.seed", step=1)],
    3: [_layer(), _head(),
        ControlSpec("m", "int", 64, 4, 1024, label_key="ctl.m", step=4),
        ControlSpec("orthogonal", "bool", True, label_key="ctl.orthogonal"),
        ControlSpec("seed", "int", 0, 0, 9999, label_key="ctl.seed", step=1)],
    4: [_layer(), _head(),
        ControlSpec("map", "choice", "elu+1", choices=RNN_MAPS, label_key="ctl.map"),
        ControlSpec("m", "int", 64, 8, 512, label_key="ctl.m", step=8),
        ControlSpec("t", "int", PRONOUN, -1, 511, label_key="ctl.t", step=1)],
    5: [_layer(), _head(),
        ControlSpec("m", "int", 64, 8, 256, label_key="ctl.m", step=8),
        ControlSpec("gamma", "float", 0.97, 0.5, 1.0, label_key="ctl.gamma", step=0.005),
        ControlSpec("strength", "float", 1.0, 0.0, 8.0, label_key="ctl.strength", step=0.25),
        ControlSpec("train", "bool", False, label_key="ctl.train"),
        ControlSpec("steps", "int", 300, 10, 2000, label_key="ctl.steps", step=10),
        ControlSpec("hybrid", "choice", "last", choices=HYBRID_MODES, label_key="ctl.hybrid"),
        ControlSpec("hybrid_map", "choice", "elu1", choices=HYBRID_MAPS, label_key="ctl.hybrid_map")],
    6: [_layer(), _head(),
        ControlSpec("m", "int", 64, 8, 512, label_key="ctl.m", step=8),
        ControlSpec("seed", "int", 0, 0, 9999, label_key="ctl.seed", step=1)],
}

_TRY_THIS: dict[int, dict] = {
    0: {"n": 1_000_000},                               # a million tokens: 4 TB for one head
    1: {"h": 0.15, "x": 5.0, "points": 30},
    2: {"n": 8192, "d": 64, "m": 64, "map": "elu+1"},
    3: {"m": 16, "orthogonal": False},
    4: {"map": "FAVOR+ (orthogonal)", "m": 128, "t": -1},  # another map, a bigger state, the last step
    5: {"gamma": 0.9, "strength": 3.0, "hybrid": "greedy"},
    6: {"m": 256},
}


def _check_ch(ch) -> int:
    ch = _int(ch, "chapter")
    if ch not in CHAPTERS:
        raise ValueError(f"chapter: expected one of {', '.join(map(str, CHAPTERS))}, got {ch}")
    return ch


def chapter_controls(ch, model: str | None = None, shape: tuple | None = None) -> list[ControlSpec]:
    """The chapter's controls. With ``shape`` ((layers, heads) of the model the chapter
    reads, from its config or sample) the layer and head ranges are that model's, and the
    defaults are the chapter's own head on ``model`` (``MODEL_HEADS``), else the lecture's,
    kept inside the range. Without it: the embedded MiniLM's (what the page is built with,
    before any model is known)."""
    specs = list(_CONTROLS[_check_ch(ch)])
    if shape is None:
        return specs
    layers, heads = (int(x) for x in shape[:2])
    default = MODEL_HEADS.get((model, ch), (LECTURE_LAYER, LECTURE_HEAD))
    last = {"layer": layers - 1, "head": heads - 1}
    start = dict(zip(HEAD_CONTROLS, default))
    return [replace(spec, max=last[spec.name], default=min(start[spec.name], last[spec.name]))
            if spec.name in HEAD_CONTROLS else spec for spec in specs]


def causal_lecture_head(model: str = CAUSAL_MODEL["name"], ch: int = 5) -> tuple[int, int]:
    """(layer, head) chapter ``ch`` shows by default on ``model`` (``MODEL_HEADS``)."""
    return MODEL_HEADS.get((model, _check_ch(ch)), (LECTURE_LAYER, LECTURE_HEAD))


def try_this(ch) -> dict:
    return dict(_TRY_THIS[_check_ch(ch)])


# The complexity tab times every method at each N from a link; the lecture links to a short
# sweep (a few seconds) whose controls stay on screen, so the full sweep is one click away.
SHORT_SWEEP = {"nmin": 256, "points": 4, "repeats": 1, "methods": "softmax_naive,linear_parallel",
               "ccausal": False}
SHORT_SWEEP_MAX_N = 4096


def go_deeper(ch, text_value: str | None = None, model: str | None = None, **controls) -> dict:
    """The full tab that shows this chapter's idea at length, as query parameters in the form
    that tab's link reads (``tab`` plus its keys; lists comma-separated), on the chapter's
    state: the same text, layer, head, maps, m and seed, and the model that read the text
    when it is not the embedded one (``model``, as the view reports it in ``data["model"]``)."""
    ch = _check_ch(ch)
    c = _effective(ch, controls)
    src = {"src": "text", "text": text_value or text.DEFAULT_TEXT}
    if model and model != EMBEDDED_MODEL:
        src["model"] = model
    if ch in (0, 2):
        n = int(c["n"])
        params = {"tab": "complexity", **SHORT_SWEEP, "nmax": max(512, min(n, SHORT_SWEEP_MAX_N)), "cd": int(c["d"])}
        if ch == 2:
            params.update(cm=int(c["m"]), cmap="elu1" if c["map"] == "elu+1" else "favor_plus")
        return params
    head = {"layer": c["layer"], "head": str(c["head"])} if "head" in c else {}
    if ch == 1:
        return {"tab": "maps", **src, **head, "maps": "softmax,elu+1"}
    if ch == 3:
        favor = "FAVOR+ (orthogonal)" if c["orthogonal"] else "FAVOR+ (IID)"
        return {"tab": "quality", **src, **head, "m": int(c["m"]), "qmaps": favor, "seeds": 10, "x": "m"}
    if ch == 4:
        t = c["t"]
        return {"tab": "state", **src, **head, "smap": c["map"], "sm": int(c["m"]), "kind": "none",
                **({"t": int(t)} if t >= 0 else {})}
    if ch == 5:
        m = c["m"] if c["m"] % 2 == 0 else c["m"] + 1
        return {"tab": "learn", **src, **head, "llayer": c["layer"], "lhead": str(c["head"]), "lm": int(m),
                "steps": int(c["steps"])}
    return {"tab": "quality", **src, "layer": c["layer"], "head": "mean", "m": int(c["m"])}


def _effective(ch: int, controls: dict, specs=None) -> dict:
    """Every control of the chapter with its value: given ones checked and clamped to range.
    ``specs``: the chapter's controls for the model it reads (``chapter_controls`` with a
    shape); their defaults fill the gaps. A layer or head past the model's last is left for
    the view to clamp to the sample with a notice (``views.common.select_head``): a link made
    for one model still opens on another."""
    specs = {spec.name: spec for spec in (specs if specs is not None else _CONTROLS[ch])}
    unknown = set(controls) - set(specs)
    if unknown:
        raise ValueError(f"chapter {ch}: unknown control(s) {', '.join(sorted(unknown))}; "
                         f"this chapter takes {', '.join(specs)}")
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
                raise ValueError(f"{name}: expected a number, got {value!r}") from None
            if not math.isfinite(value):
                raise ValueError(f"{name}: expected a finite number, got {value!r}")
        elif spec.kind == "bool":
            value = value in (True, 1, "1", "true", "True", "yes")
        elif value not in spec.choices:
            raise ValueError(f"{name}: expected one of {', '.join(map(str, spec.choices))}, got {value!r}")
        if spec.kind in ("int", "float"):
            if spec.min is not None and value < spec.min:
                raise ValueError(f"{name}: must be at least {spec.min}, got {value}")
            if spec.max is not None and value > spec.max and spec.name not in HEAD_CONTROLS:
                raise ValueError(f"{name}: must be at most {spec.max}, got {value}")
        out[name] = value
    return out


