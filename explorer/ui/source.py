"""The data panel shared by the maps, quality and state tabs: where Q, K, V come from,
and which layer and head to look at. Compact (one row), so that the figures come first."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ..catalog import EMBEDDED_SHAPE, MAX_HEAD_DIM, MAX_SEED, MAX_TOKENS, PRESETS
from . import i18n
from .common import ASSETS, import_engine

SOURCES = ("text", "random", "file")
MAX_LAYER, MAX_HEAD = EMBEDDED_SHAPE[0] - 1, EMBEDDED_SHAPE[1] - 1   # all-MiniLM-L6-v2: 6 layers x 12 heads
HEAD_CHOICES = ["mean"] + [str(h) for h in range(MAX_HEAD + 1)]


def examples() -> list[str]:
    path = ASSETS / "examples.txt"
    if not path.exists():
        return ["The animal didn't cross the street because it was too tired."]
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


DEFAULT_TEXT = examples()[0]


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

    @property
    def data_inputs(self) -> list:
        return [self.source, self.text, self.preset, self.n, self.d, self.data_seed, self.temperature, self.file]

    @property
    def inputs(self) -> list:
        return self.data_inputs + [self.layer, self.head]


def example_choices(texts: list[str], width: int = 48) -> list[tuple[str, str]]:
    """(short label, full text) pairs for the examples menu."""
    return [(t if len(t) <= width else t[:width - 1].rstrip() + "…", t) for t in texts]


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
            layer = gr.Slider(0, MAX_LAYER, value=2, step=1, label=i18n.label("panel_layer"), elem_id="layer", scale=0, min_width=160)
            head = gr.Dropdown(HEAD_CHOICES, value="3", label=i18n.label("panel_head"), allow_custom_value=True, elem_id="head",
                               info=i18n.label("panel_head_info"), scale=0, min_width=120)

    def show(choice):
        return (gr.update(visible=choice == "text"), gr.update(visible=choice == "random"),
                gr.update(visible=choice == "file"))

    source.change(show, source, [text_box, random_box, file_box], queue=False, api_visibility="private")
    return SourcePanel(source, text, preset, n, d, data_seed, temperature, file, layer, head, example, accordion)


def load(source, text, preset, n, d, data_seed, temperature, file, progress=None):
    """The Sample for the panel's values (cached in the engine)."""
    import_engine()
    from .. import views

    if source == "text" and progress is not None:
        progress(0.05, desc="reading the text with the model (the first time loads it, a few seconds)")
    path = file if isinstance(file, str) or file is None else getattr(file, "name", None)
    return views.load_sample(source, text=text, preset=preset, n=n, d=d, data_seed=data_seed,
                             temperature=temperature, path=path)


def url_params(source, text, preset, n, d, data_seed, temperature, layer, head) -> dict:
    """The panel as query parameters (files cannot travel in a URL)."""
    out = {"src": source, "layer": layer, "head": head}
    if source == "text":
        out["text"] = text
    elif source == "random":
        out.update(preset=preset, n=n, d=d, dseed=data_seed, temp=temperature)
    return out
