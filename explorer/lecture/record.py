"""What a chapter is, as plain data (standard library only): its controls, its preset, the
full tab behind "Go deeper", its builds and its text keys, and where its compute and its
drawing live. Each chapter's record is ``CHAPTER`` in its package's ``__init__``
(``explorer.lecture.ch<i>_<name>``); ``explorer.lecture.chapters`` lists them in order.

A record imports nothing heavy: the page is built from the records before torch or plotly
is loaded. The chapter's compute (``view.compute``) and drawing (``figures.draw``) are
imported the first time they are asked for.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Callable

from ..catalog import EMBEDDED_SHAPE

N_LAYERS, N_HEADS, HEAD_DIM = EMBEDDED_SHAPE
EMBEDDED_MODEL = "all-MiniLM-L6-v2"   # the model the lecture reads unless a chapter says otherwise

# The head every chapter reads by default on the embedded MiniLM: a trained Hedgehog ships
# for it (``explorer.maps.learned.pretrained``; chapter 5 shows it without SmolLM2), and
# chapter 6's roadmap is measured on it.
# It is the data panel's default head too, so the panel shows what the figures use.
LECTURE_LAYER, LECTURE_HEAD = 2, 3
PRONOUN = 10         # "it" in the default sentence: the query chapter 1 shows, the step chapter 4 stops at

# The complexity tab times every method at each N from a link; the lecture links to a short
# sweep (a few seconds) whose controls stay on screen, so the full sweep is one click away.
SHORT_SWEEP = {"nmin": 256, "points": 4, "repeats": 1, "methods": "softmax_naive,linear_parallel",
               "ccausal": False}
SHORT_SWEEP_MAX_N = 4096


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


def layer_control(default=LECTURE_LAYER) -> ControlSpec:
    return ControlSpec("layer", "int", default, 0, N_LAYERS - 1, label_key="ctl.layer", step=1)


def head_control(default=LECTURE_HEAD) -> ControlSpec:
    return ControlSpec("head", "int", default, 0, N_HEADS - 1, label_key="ctl.head", step=1)


def seed_control() -> ControlSpec:
    return ControlSpec("seed", "int", 0, 0, 9999, label_key="ctl.seed", step=1)


def head_params(c: dict) -> dict:
    """The chosen head in the tool tabs' link keys (none where the chapter picks no head)."""
    return {"layer": c["layer"], "head": str(c["head"])} if "head" in c else {}


def short_sweep(n: int, d: int) -> dict:
    """The complexity tab's short sweep up to ``n`` tokens (at least 512, at most
    ``SHORT_SWEEP_MAX_N``) at head dimension ``d``."""
    return {"tab": "complexity", **SHORT_SWEEP, "nmax": max(512, min(int(n), SHORT_SWEEP_MAX_N)), "cd": int(d)}


@dataclass(frozen=True)
class Chapter:
    """One chapter of the lecture."""

    number: int
    package: str                   # its package in explorer.lecture: maths, view and figures
    controls: tuple                # (ControlSpec, ...) in the order the drawer shows them
    try_this: dict                 # a telling preset of those controls
    # (controls, source) -> the full tab that shows more, as query parameters; ``source`` is
    # the text and model the chapter read, in the tabs' link keys (src, text, model).
    deeper: Callable[[dict, dict], dict]
    builds: tuple                  # its builds in the order shown, one figure each: "b0", "b1", ...
    reads_text: bool = True        # False: the chapter is arithmetic on its controls alone
    timed: bool = False            # it times work as the machine runs it (all threads, not one)
    reads_causal_model: bool = False   # it reads the packaged causal model by default, once ready
    model_heads: dict = field(default_factory=dict)   # model -> its default (layer, head) there

    # -- its text keys (explorer.lecture.text) --------------------------------------------
    @property
    def title_key(self) -> str:
        return f"ch{self.number}.title"

    @property
    def claim_key(self) -> str:
        return f"ch{self.number}.claim"

    @property
    def notes_key(self) -> str:
        return f"notes.ch{self.number}"

    def build_key(self, build: int | str, part: str = "title") -> str:
        """The key of a build's ``part`` ("title", "note"), by index or name."""
        name = self.builds[build] if isinstance(build, int) else build
        return f"ch{self.number}.{name}.{part}"

    @property
    def text_keys(self) -> tuple:
        """The keys every chapter has: title, claim, speaker notes, and each build's title."""
        return (self.title_key, self.claim_key, self.notes_key, *(self.build_key(b) for b in self.builds))

    # -- its compute and drawing, imported on first use -----------------------------------
    def _module(self, name: str):
        return importlib.import_module(f"{__package__}.{self.package}.{name}")

    def load(self) -> None:
        """Import its compute and drawing now (the server does it once, under one lock)."""
        self._module("view")
        self._module("figures")

    def compute(self, sample, controls: dict, progress=None):
        """The chapter's ChapterView on ``sample`` (None where it reads no text) with the
        effective ``controls``."""
        return self._module("view").compute(sample, controls, progress)

    def formulas(self, lang: str = "en") -> dict:
        """{build: [MathML, ...]}: the article's formulas typeset on its builds (the
        package's ``formulas`` module; words around them from the language files)."""
        return self._module("formulas").formulas(lang)

    def draw(self, view, style) -> list:
        """The chapter's builds as figures, one per entry of ``builds``, their words as
        messages (said in a language by ``explorer.figures.style.said_figure``)."""
        module = self._module("figures")
        if "lang" in inspect.signature(module.draw).parameters:
            return _drawn_in_both(module.draw, view, style)
        return module.draw(view, style)


# -- for a while: a chapter whose drawing still takes the language ------------------------
def _drawn_in_both(draw, view, style) -> list:
    """The figures of a ``draw(view, lang, style)``, drawn in English and in Chinese, as
    figures that say themselves: each text that differs between the two is a ``Said`` of both
    forms (the title, note and panel titles ``finish`` kept, too), so that ``said_figure``
    says them in either language as it says a chapter drawn in messages."""
    import plotly.graph_objects as go
    english, chinese = draw(view, "en", style), draw(view, "zh", style)
    out = []
    for en, zh in zip(english, chinese):
        parts = _both({"data": en._data, "layout": en._layout}, {"data": zh._data, "layout": zh._layout})
        fig = go.Figure(data=parts["data"], layout=parts["layout"], _validate=False)
        draft_en, draft_zh = getattr(en, "_draft", None), getattr(zh, "_draft", None)
        if draft_en is not None and draft_zh is not None:
            fig._draft = {**draft_en, **{key: _both(draft_en[key], draft_zh[key])
                                         for key in ("title", "note", "annotations")},
                          "then": _then_margins(draft_en.get("then"), zh.layout.margin)}
        out.append(fig)
    return out


def _then_margins(then, margin):
    """``then``, and the side and bottom margins the drawing set after ``finish`` (the top
    one is the fitting's)."""
    sides = {side: margin[side] for side in ("l", "r", "b") if margin[side] is not None}

    def finished(fig):
        if then is not None:
            then(fig)
        fig.update_layout(margin=sides)
    return finished


def _both(en, zh):
    """``en`` with each text that ``zh`` (the same structure drawn in Chinese) says otherwise
    made a ``Said`` of the two."""
    from .numbers import Said
    if isinstance(en, str) and isinstance(zh, str):
        return en if en == zh else Said(en, zh)
    if getattr(en, "dtype", None) not in (None, object):
        return en.copy()                   # numbers
    if isinstance(en, dict) and isinstance(zh, dict):
        return {key: _both(value, zh[key]) if key in zh else value for key, value in en.items()}
    if isinstance(en, (list, tuple)) and isinstance(zh, (list, tuple)) and len(en) == len(zh):
        return type(en)(_both(a, b) for a, b in zip(en, zh))
    if getattr(en, "dtype", None) == object and getattr(zh, "shape", None) == getattr(en, "shape", ()):
        out = en.copy()
        for index, (a, b) in enumerate(zip(en.flat, zh.flat)):
            out.flat[index] = _both(a, b)
        return out
    return en
