"""The data panel shared by the maps, quality and state tabs: where Q, K, V come from,
which model reads the text, and which layer and head to look at. Compact (one row), so
that the figures come first.

The model picker offers the embedded all-MiniLM-L6-v2 (bidirectional), the causal
SmolLM2-135M when its package is installed (otherwise an entry that says the one-line
install), and "other…" (a folder or Hub id) where the server allows it
(EXPLORER_ALLOW_MODELS). The layer and head controls follow the chosen model."""

from __future__ import annotations

from dataclasses import dataclass

import os

import gradio as gr

from .. import catalog
from ..catalog import (CAUSAL_MODEL, EMBEDDED_MODEL, EMBEDDED_SHAPE, MAX_HEAD_DIM, MAX_SEED, MAX_TOKENS, PRESETS,
                       SOURCES)
from ..text import normal_lang, say
from . import i18n
from .common import ASSETS, import_engine

OTHER_MODEL = "other…"          # the picker's entry that opens the box for a folder or Hub id


def _built_in_shapes() -> list[tuple]:
    """(layers, heads, head_dim) of the built-in models the picker offers ready to use."""
    return [EMBEDDED_SHAPE] + [CAUSAL_MODEL["shape"]] * catalog.causal_model_installed()


# The controls are built wide enough for every built-in model, then narrowed to the chosen one.
MAX_LAYER = max(shape[0] for shape in _built_in_shapes()) - 1
MAX_HEAD = max(shape[1] for shape in _built_in_shapes()) - 1
HEAD_CHOICES = ["mean"] + [str(h) for h in range(MAX_HEAD + 1)]


def examples() -> list[str]:
    path = ASSETS / "examples.txt"
    if not path.exists():
        return ["The animal didn't cross the street because it was too tired."]
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


DEFAULT_TEXT = examples()[0]


class CausalBox(gr.Checkbox):
    """The maps and quality tabs' Causal box. Empty (None) until the visitor, a link or a model
    change sets it: then the engine follows the data, so a causal model's maps are causal and
    a request that does not send ``causal`` gets what the model computes. gradio's checkbox
    turns None into False; this one keeps it (drawn unticked, sent as null)."""

    is_template = True          # drawn by gradio's own checkbox
    follows_data = True         # ui/validate.py: None is a value here

    def postprocess(self, value):
        return None if value is None else bool(value)


def pick_model(model, lang="en"):
    """The data panel's model as picked: (model, the maps' and quality's Causal boxes). The
    causal model's entry while it is not installed puts the menu back on the embedded model
    and says why once, here (each tab's and the lecture's redraw then reads MiniLM: before,
    each of them refused it, the same sentence twice)."""
    if model == CAUSAL_MODEL["name"] and not catalog.causal_model_installed():
        from ..sources.packaged import SMOLLM2, not_installed_message
        gr.Warning(say(not_installed_message(SMOLLM2), normal_lang(lang)))
        return EMBEDDED_MODEL, causal_for("text", EMBEDDED_MODEL), causal_for("text", EMBEDDED_MODEL)
    return gr.skip(), causal_for("text", model), causal_for("text", model)


def causal_for(source, model):
    """The Causal box for the data panel's source and model: ticked for the packaged causal
    model, unticked for the embedded (bidirectional) one, None (follow the data) for a model
    only loading can tell about, random data and uploads."""
    if source not in (None, "", "text"):
        return None
    if model in (None, "", EMBEDDED_MODEL):
        return False
    if model == CAUSAL_MODEL["name"]:
        return True
    return None


@dataclass
class SourcePanel:
    source: gr.Dropdown
    text: gr.Textbox
    preset: gr.Dropdown
    n: gr.Number
    d: gr.Number
    data_seed: gr.Number
    temperature: gr.Slider
    file: gr.File
    layer: gr.Slider
    head: gr.Dropdown
    example: gr.Dropdown        # choosing one fills the text box (and redraws, see ui/__init__)
    accordion: gr.Accordion
    model: gr.Dropdown          # which model reads the text (a name, a folder or a Hub id)
    model_typed: object         # the event of a folder or Hub id typed in the "other…" box (redraws)

    @property
    def data_inputs(self) -> list:
        return [self.source, self.text, self.preset, self.n, self.d, self.data_seed, self.temperature, self.file,
                self.model]

    @property
    def inputs(self) -> list:
        return self.data_inputs + [self.layer, self.head]


def example_choices(texts: list[str], width: int = 48) -> list[tuple[str, str]]:
    """(short label, full text) pairs for the examples menu."""
    return [(t if len(t) <= width else t[:width - 1].rstrip() + "…", t) for t in texts]


def panel_model_choices(extra: str | None = None) -> list[tuple]:
    """The picker's entries: (label, value); ``extra`` is a folder or Hub id typed before."""
    causal = "sources.choice_causal" if catalog.causal_model_installed() else "sources.choice_causal_missing"
    choices = [(i18n.engine_label("sources.choice_embedded"), EMBEDDED_MODEL),
               (i18n.engine_label(causal), CAUSAL_MODEL["name"])]
    if extra and extra not in (EMBEDDED_MODEL, CAUSAL_MODEL["name"], OTHER_MODEL):
        choices.append((extra, extra))
    if free_models_allowed():
        choices.append((i18n.engine_label("sources.choice_other"), OTHER_MODEL))
    return choices


def free_models_allowed() -> bool:
    allowed = catalog.allowed_models()
    return allowed is None or bool(allowed)


def default_model() -> str:
    """The model the page's data panel opens on when its address names none: the causal
    SmolLM2 once it is installed and converted (checked on disk, nothing loaded or imported:
    ``catalog.causal_model_ready``), as the lecture's chapters then read it; else the embedded
    MiniLM. An address with a text but no model (a MiniLM view's link) keeps MiniLM, and a
    request to the API that names no model reads MiniLM, the panel's built value.
    ``EXPLORER_PANEL_MODEL`` names the built-in model to open on instead (the embedded one,
    say, for a talk about its [CLS] token); the lecture's chapters keep their own."""
    chosen = os.environ.get("EXPLORER_PANEL_MODEL", "").strip()
    if chosen == EMBEDDED_MODEL:
        return EMBEDDED_MODEL
    return CAUSAL_MODEL["name"] if catalog.causal_model_ready() else EMBEDDED_MODEL


def build() -> SourcePanel:
    """The data panel: one compact row (source, text or random settings or file, layer, head),
    collapsible, and shown only on the tabs that use it (see ui/__init__.panel_css)."""
    texts = examples()
    with gr.Accordion(i18n.label("panel_title"), open=True, elem_id="data-panel") as accordion:
        with gr.Row(equal_height=False, elem_id="data-row"):
            source = gr.Dropdown([(i18n.label(f"panel_source_{s}"), s) for s in SOURCES], value="text", label=i18n.label("panel_source"), elem_id="source",
                                 scale=0, min_width=170, info=i18n.label("panel_source_info"), filterable=False)
            with gr.Column(scale=4, min_width=320, visible=True) as text_box:
                with gr.Row(equal_height=False):
                    # One line that grows: Enter submits (redraws), Shift+Enter adds a line.
                    text = gr.Textbox(texts[0], lines=1, max_lines=6, label=i18n.label("panel_text"),
                                      placeholder=i18n.label("panel_text_placeholder"), elem_id="text", scale=4, min_width=260)
                    example = gr.Dropdown(example_choices(texts), value=None, label=i18n.label("panel_examples"),
                                          info=i18n.label("panel_examples_info"),
                                          elem_id="examples", scale=1, min_width=150, filterable=False)
                    model = gr.Dropdown(panel_model_choices(), value=EMBEDDED_MODEL, label=i18n.label("panel_model"),
                                        info=i18n.label("panel_model_info"), elem_id="model", scale=1, min_width=250,
                                        allow_custom_value=free_models_allowed(), filterable=free_models_allowed())
                    other = gr.Textbox(label=i18n.label("panel_model_other"), placeholder=i18n.label("panel_model_other_hint"),
                                       elem_id="model-other", visible=False, scale=1, min_width=190, max_lines=1)
            with gr.Column(scale=4, min_width=320, visible=False) as random_box:
                with gr.Row(equal_height=False):
                    preset = gr.Dropdown(list(PRESETS), value="clustered", label=i18n.label("panel_preset"), elem_id="preset",
                                         min_width=120)
                    n = gr.Number(128, precision=0, minimum=1, maximum=MAX_TOKENS, label=i18n.label("panel_n"), elem_id="n", min_width=90)
                    d = gr.Number(32, precision=0, minimum=1, maximum=MAX_HEAD_DIM, label=i18n.label("panel_d"), elem_id="d", min_width=90)
                    data_seed = gr.Number(0, precision=0, minimum=0, maximum=MAX_SEED, label=i18n.label("panel_seed"), elem_id="dseed", min_width=90)
                    temperature = gr.Slider(0.1, 10, value=1.0, step=0.1, label=i18n.label("panel_temperature"),
                                            info=i18n.label("panel_temperature_info"), elem_id="temp", min_width=160)
            with gr.Column(scale=4, min_width=320, visible=False) as file_box:
                file = gr.File(label=i18n.label("panel_file"), file_types=[".npy", ".npz", ".pt"], type="filepath", height=90)
            layer = gr.Slider(0, MAX_LAYER, value=2, step=1, label=i18n.label("panel_layer"), elem_id="layer", scale=0, min_width=180)
            head = gr.Dropdown(HEAD_CHOICES, value="3", label=i18n.label("panel_head"), allow_custom_value=True, elem_id="head",
                               info=i18n.label("panel_head_info"), scale=0, min_width=120)

    def show(choice):
        return (gr.update(visible=choice == "text"), gr.update(visible=choice == "random"),
                gr.update(visible=choice == "file"))

    source.change(show, source, [text_box, random_box, file_box], queue=False, api_visibility="private")
    model.input(lambda choice: gr.update(visible=choice == OTHER_MODEL), model, other, queue=False,
                api_visibility="private")
    typed = other.submit(take_typed, other, [model, other], queue=False, api_visibility="private")
    model.change(follow_model, [model, layer, head], [layer, head], queue=False, api_visibility="private")
    return SourcePanel(source, text, preset, n, d, data_seed, temperature, file, layer, head, example, accordion,
                       model, typed)


def take_typed(value):
    """A folder or Hub id typed in the "other…" box becomes the picker's value (and an entry of it)."""
    value = (value or "").strip()
    if not value:
        return gr.skip(), gr.skip()
    return gr.update(choices=panel_model_choices(value), value=value), gr.update(visible=False)


def is_built_in(model) -> bool:
    """The embedded MiniLM (also when no model is named) or the packaged causal model: their
    shapes are known without loading them."""
    return model in (None, "", EMBEDDED_MODEL, CAUSAL_MODEL["name"])


def shape_of(model) -> tuple | None:
    """(layers, heads) of ``model``; None when it cannot be known without loading (or at all)."""
    if model in (None, "", EMBEDDED_MODEL):
        return EMBEDDED_SHAPE[:2]
    if model == CAUSAL_MODEL["name"]:
        return CAUSAL_MODEL["shape"][:2]
    if model == OTHER_MODEL:
        return None
    try:
        import_engine()
        from .. import sources
        return sources.model_shape(model)[:2]
    except Exception:             # unreadable here: the draw that follows says why
        return None


def follow_model(model, layer, head):
    """The layer slider and the head menu narrowed to the chosen model's layers and heads."""
    shape = shape_of(model)
    if shape is None:
        return gr.skip(), gr.skip()
    layers, heads = shape
    layer = min(int(layer or 0), layers - 1)
    head = head if head == "mean" or (str(head).isdigit() and int(head) < heads) else str(min(3, heads - 1))
    return (gr.update(maximum=layers - 1, value=layer),
            gr.update(choices=["mean"] + [str(h) for h in range(heads)], value=head))


def load(source, text, preset, n, d, data_seed, temperature, file, progress=None, model=None, lang="en"):
    """The Sample for the panel's values (cached in the engine); the progress bar speaks ``lang``."""
    import_engine()
    from .. import views
    from ..text import said, say

    if source == "text" and model == OTHER_MODEL:
        raise ValueError(say("sources.type_other", lang))
    report = None
    if source == "text" and progress is not None:
        progress(0.05, desc=say("sources.reading", lang))
        report = lambda fraction, message: progress(0.05 + 0.35 * fraction, desc=said(message, lang))  # noqa: E731
    path = file if isinstance(file, str) or file is None else getattr(file, "name", None)
    return views.load_sample(source, text=text, preset=preset, n=n, d=d, data_seed=data_seed,
                             temperature=temperature, path=path, model=model or None, progress=report)


def url_params(source, text, preset, n, d, data_seed, temperature, layer, head, model=None) -> dict:
    """The panel as query parameters (files cannot travel in a URL)."""
    out = {"src": source, "layer": layer, "head": head}
    if source == "text":
        out["text"] = text
        if model and model != EMBEDDED_MODEL:
            out["model"] = model
    elif source == "random":
        out.update(preset=preset, n=n, d=d, dseed=data_seed, temp=temperature)
    return out
