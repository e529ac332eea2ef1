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
        return self._module("figures").draw(view, style)
