"""The data panel shared by the maps, quality and state tabs: where Q, K, V come from,
and which layer and head to look at."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ..catalog import EMBEDDED_SHAPE, PRESETS
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
    source: gr.Radio
    text: gr.Textbox
    preset: gr.Dropdown
    n: gr.Number
    d: gr.Number
    data_seed: gr.Number
    temperature: gr.Slider
    file: gr.File
    layer: gr.Slider
    head: gr.Dropdown

    @property
    def data_inputs(self) -> list:
        return [self.source, self.text, self.preset, self.n, self.d, self.data_seed, self.temperature, self.file]

    @property
    def inputs(self) -> list:
        return self.data_inputs + [self.layer, self.head]


def build() -> SourcePanel:
    """The data accordion; its controls are inputs of every data-driven endpoint."""
    texts = examples()
    with gr.Accordion(i18n.label("panel_title"), open=True, elem_id="data-panel"):
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=180):
                source = gr.Radio(list(SOURCES), value="text", label=i18n.label("panel_source"), elem_id="source",
                                  info=i18n.label("panel_source_info"))
                layer = gr.Slider(0, MAX_LAYER, value=2, step=1, label=i18n.label("panel_layer"), elem_id="layer")
                head = gr.Dropdown(HEAD_CHOICES, value="3", label=i18n.label("panel_head"), allow_custom_value=True, elem_id="head",
                                   info=i18n.label("panel_head_info"))
            with gr.Column(scale=3, visible=True) as text_box:
                text = gr.Textbox(texts[0], lines=3, max_lines=8, label=i18n.label("panel_text"), elem_id="text")
                gr.Examples([[t] for t in texts], inputs=[text], label=i18n.label("panel_examples"))
            with gr.Column(scale=3, visible=False) as random_box:
                with gr.Row():
                    preset = gr.Dropdown(list(PRESETS), value="clustered", label=i18n.label("panel_preset"), elem_id="preset")
                    n = gr.Number(128, precision=0, minimum=1, label=i18n.label("panel_n"), elem_id="n")
                    d = gr.Number(32, precision=0, minimum=1, label=i18n.label("panel_d"), elem_id="d")
                with gr.Row():
                    data_seed = gr.Number(0, precision=0, minimum=0, label=i18n.label("panel_seed"))
                    temperature = gr.Slider(0.1, 10, value=1.0, step=0.1, label=i18n.label("panel_temperature"))
            with gr.Column(scale=3, visible=False) as file_box:
                file = gr.File(label=i18n.label("panel_file"), file_types=[".npy", ".npz", ".pt"], type="filepath")

    def show(choice):
        return (gr.update(visible=choice == "text"), gr.update(visible=choice == "random"),
                gr.update(visible=choice == "file"))

    source.change(show, source, [text_box, random_box, file_box], queue=False, api_visibility="private")
    return SourcePanel(source, text, preset, n, d, data_seed, temperature, file, layer, head)


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
