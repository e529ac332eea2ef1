"""Recurrent state tab: causal linear attention as an RNN, step by step, with and without
forgetting. Endpoint: ``/state``."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import pandas as pd

from .. import catalog
from . import common, i18n, source as source_panel

KINDS = list(catalog.DECAY_LABELS)


def _engine():
    """(figures, views), imported on first use: see common.import_engine."""
    common.import_engine()
    from .. import figures, views
    return figures, views


@dataclass
class StateTab:
    map_label: gr.Dropdown
    m: gr.Slider
    seed: gr.Number
    gamma: gr.Slider
    strength: gr.Slider
    kind: gr.Radio
    t: gr.Slider
    run: gr.Button
    step: gr.Plot
    curves: gr.Plot
    memory: gr.Plot
    notices: gr.Markdown
    view: gr.State
    query: gr.Textbox
    link: gr.Textbox

    @property
    def controls(self) -> list:
        return [self.map_label, self.m, self.seed, self.gamma, self.strength, self.t, self.kind]

    @property
    def outputs(self) -> list:
        return [self.step, self.curves, self.memory, self.notices, self.view, self.t, self.query]


def render(view, presentation=False):
    if view is None:
        return None, None, None
    figures, _ = _engine()
    s = view.step
    step = figures.state_step(s["update"], s["state"], s["t"], s["token"], s["kind"], style=presentation)
    curves = figures.state_curves(view.ts, view.traces, view.recall, t_marker=s["t"], style=presentation)
    memory = figures.memory_growth(view.mem_ts, view.kv_bytes, view.state_bytes,
                                   labels=("softmax KV cache (K and V of every token)",
                                           f"linear-attention state S and z (m = {view.feature_dim})"),
                                   style=presentation)
    return step, curves, memory


@common.guarded
def run_state(source="text", text=source_panel.DEFAULT_TEXT, preset="clustered", n=128, d=32, data_seed=0, temperature=1.0, file=None, model=None,
              layer=2, head="3", map_label="elu+1", m=32, seed=0, gamma=catalog.STATE_DEFAULTS["gamma"],
              strength=catalog.STATE_DEFAULTS["strength"], t=None, kind="none", presentation=False,
              progress=gr.Progress()):
    """Compute and draw the state tab.

    Returns (step figure, curves figure, memory figure, notices, view, t slider, query).
    """
    _, views = _engine()
    sample = source_panel.load(source, text, preset, n, d, data_seed, temperature, file, progress, model=model)
    progress(0.4, desc="stepping the state through the sequence")
    last = sample.n_tokens - 1
    t_val = last if t is None else min(max(int(t), 0), last)
    view = views.state_view(sample, layer, head, map_label, int(m), int(seed or 0), float(gamma), float(strength),
                            t_val, kind)
    step, curves, memory = render(view, presentation)
    params = {"tab": "state", **source_panel.url_params(source, text, preset, n, d, data_seed, temperature, layer, head, model=model),
              "smap": map_label, "sm": int(m), "sseed": int(seed or 0), "gamma": float(gamma),
              "strength": float(strength), "t": t_val, "kind": kind, "present": bool(presentation)}
    return (step, curves, memory, common.notices_markdown(view.notices, toast=False), view,
            gr.update(maximum=last, value=t_val), common.query_string(params))


@common.guarded
def run_step(source="text", text=source_panel.DEFAULT_TEXT, preset="clustered", n=128, d=32, data_seed=0, temperature=1.0, file=None, model=None,
             layer=2, head="3", map_label="elu+1", m=32, seed=0, gamma=catalog.STATE_DEFAULTS["gamma"],
             strength=catalog.STATE_DEFAULTS["strength"], t=0, kind="none", presentation=False):
    """Only the step heatmaps, for the t slider: fast enough to drag."""
    figures, views = _engine()
    sample = source_panel.load(source, text, preset, n, d, data_seed, temperature, file, model=model)
    s = views.state_step(sample, layer, head, map_label, int(m), int(seed or 0), float(gamma), float(strength),
                         int(t), kind)
    return figures.state_step(s["update"], s["state"], s["t"], s["token"], s["kind"], style=presentation)


def build(panel: source_panel.SourcePanel, presentation: gr.Checkbox) -> StateTab:
    maps = [label for label in catalog.map_choices() if label != catalog.REFERENCE]
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            map_label = gr.Dropdown(maps, value="elu+1" if "elu+1" in maps else maps[0], label=i18n.label("state_map"),
                                    elem_id="state-map")
            m = gr.Slider(2, 256, value=32, step=2, label=i18n.label("features_m"), info=i18n.label("features_m_info"), elem_id="state-m")
            seed = gr.Number(0, precision=0, minimum=0, maximum=catalog.MAX_SEED, label=i18n.label("seed"), info=i18n.label("state_seed_info"),
                             elem_id="state-seed")
            gamma = gr.Slider(0.5, 1.0, value=catalog.STATE_DEFAULTS["gamma"], step=0.005, label=i18n.label("state_gamma"),
                              info=i18n.label("state_gamma_info"), elem_id="state-gamma")
            strength = gr.Slider(0.0, 8.0, value=catalog.STATE_DEFAULTS["strength"], step=0.1, label=i18n.label("state_strength"), info=i18n.label("state_strength_info"),
                                 elem_id="state-strength")
            kind = gr.Radio(KINDS, value="none", label=i18n.label("state_kind"), elem_id="state-kind")
            run = gr.Button(i18n.label("state_run"), variant="primary", elem_id="state-run")
            try_preset = gr.Button(i18n.label("state_preset"), size="sm", elem_id="state-preset")
        with gr.Column(scale=5):
            notices = gr.Markdown(elem_id="state-notices")
            t = gr.Slider(0, 511, value=8, step=1, label=i18n.label("state_t"), elem_id="state-t")
            step = gr.Plot(label=i18n.label("state_step"), show_label=False, elem_id="state-step")
    curves = gr.Plot(label=i18n.label("state_curves"), show_label=False, elem_id="state-curves")
    memory = gr.Plot(label=i18n.label("state_memory"), show_label=False, elem_id="state-memory")
    export, files, link, view, query = common.export_band("export_state")
    tab = StateTab(map_label, m, seed, gamma, strength, kind, t, run, step, curves, memory, notices, view, query, link)

    inputs = panel.inputs + tab.controls + [presentation]
    run.click(run_state, inputs, tab.outputs, api_name="state", concurrency_limit=2,
              concurrency_id="compute").then(None, query, link, js=common.SET_URL_JS)
    preset = catalog.STATE_PRESET
    try_preset.click(lambda: (preset["source"], preset["text"], preset["gamma"], preset["strength"]), None,
                     [panel.source, panel.text, gamma, strength], api_visibility="private", queue=False).then(
        run_state, inputs, tab.outputs, api_visibility="private", concurrency_limit=2,
        concurrency_id="compute").then(None, query, link, js=common.SET_URL_JS)
    gr.on([t.release, kind.input], run_step, inputs, step, api_visibility="private", trigger_mode="always_last",
          concurrency_limit=2, concurrency_id="compute")
    gr.on([gamma.release, strength.release, map_label.input], run_state, inputs, tab.outputs,
          api_visibility="private", trigger_mode="always_last", concurrency_limit=2,
          concurrency_id="compute").then(None, query, link, js=common.SET_URL_JS)

    @common.guarded
    def export_state(view, presentation):
        if view is None:
            raise gr.Error("Run the RNN first.", print_exception=False)
        step_fig, curves_fig, memory_fig = render(view, presentation)
        return common.show_files(common.export_files("state", {"step": step_fig, "curves": curves_fig, "memory": memory_fig},
                                   {"curves": curves_table(view)}))

    common.wire_export(export, export_state, [view, presentation], files)
    return tab


def curves_table(view) -> pd.DataFrame:
    rows = []
    for kind, tr in view.traces.items():
        for t in view.ts:
            rows.append({"decay": kind, "t": t, "token": view.tokens[t], "state_norm": tr["state_norm"][t],
                         "normaliser_norm": tr["normaliser_norm"][t], "effective_rank": tr["effective_rank"][t],
                         "kv_cache_bytes": view.kv_bytes[t], "state_bytes": view.state_bytes})  # kv after t+1 tokens
    return pd.DataFrame(rows)
