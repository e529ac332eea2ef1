"""Feature-map quality tab: error against m for the random-feature maps (IID and
orthogonal, theory beside measurement), entropy and monotonicity per map, and an overview
of every head. Endpoint: ``/quality``."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import pandas as pd

from .. import catalog
from . import common, i18n, source as source_panel

X_AXES = ("m", "FLOPs")


def _engine():
    """(figures, views), imported on first use: see common.import_engine."""
    common.import_engine()
    from .. import figures, views
    return figures, views


@dataclass
class QualityTab:
    causal: gr.Checkbox
    maps: gr.CheckboxGroup
    seeds: gr.Slider
    x_axis: gr.Radio
    m: gr.Slider
    overview_map: gr.Dropdown
    overview_metric: gr.Dropdown
    run: gr.Button
    curves: gr.Plot
    norms: gr.Plot
    shape: gr.Plot
    overview: gr.Plot
    heads: gr.Dataframe
    notices: gr.Markdown
    view: gr.State
    query: gr.Textbox
    link: gr.Textbox
    open_layer: gr.Number
    open_head: gr.Number
    open_button: gr.Button

    @property
    def controls(self) -> list:
        return [self.causal, self.maps, self.seeds, self.x_axis, self.m, self.overview_map, self.overview_metric]

    @property
    def outputs(self) -> list:
        return [self.curves, self.norms, self.shape, self.overview, self.heads, self.notices, self.view, self.query]


def render(bundle, presentation=False, x_axis="m"):
    """(curves, norms, shape bars, overview) figures from the stored views."""
    if bundle is None:
        return None, None, None, None
    figures, _ = _engine()
    quality, overview = bundle
    note = (f"Mean over the redraws ({quality.seed_note}) with a 10–90 % band. Dashed: the IID theory (an "
            "expectation; with heavy-tailed estimates a finite set of seeds usually lands below it). Orthogonal "
            "features have no closed form here.")
    curves = figures.quality_curves(quality.curves, x="flops" if x_axis == "FLOPs" else "m", title=(
        f"Random features: error against {'cost' if x_axis == 'FLOPs' else 'm'} · {quality.title}"), note=note,
        style=presentation, favor_need=quality.favor_need)
    norms = figures.favor_norms(quality.norms, quality.favor_need, title=quality.title, style=presentation)
    shape = figures.metric_bars(quality.shape_rows, title=f"Spiky and monotone like softmax, or flat? · {quality.title}",
                                style=presentation)
    over = None
    if overview is not None:
        over = figures.head_overview(overview.values, overview.layer_names, overview.metric_label, overview.map_label,
                                     style=presentation)
    return curves, norms, shape, over


def heads_table(overview) -> pd.DataFrame:
    if overview is None:
        return pd.DataFrame(columns=["layer", "head", "value"])
    rows = [{"layer": layer, "head": head, overview.metric_label: overview.values[layer, head]}
            for layer in range(overview.values.shape[0]) for head in range(overview.values.shape[1])]
    return pd.DataFrame(rows).sort_values(overview.metric_label, ascending=False, na_position="last").round(4)


@common.guarded
def run_quality(source="text", text=source_panel.DEFAULT_TEXT, preset="clustered", n=128, d=32, data_seed=0, temperature=1.0, file=None,
                layer=2, head="3", causal=False, maps=None, seeds=10, x_axis="m", m=64, overview_map="elu+1",
                overview_metric="map_rel_error", presentation=False, progress=gr.Progress()):
    """Compute and draw the quality tab.

    Returns (curves figure, norms figure, entropy/monotonicity figure, head overview figure,
    heads table, notices, view, query).
    """
    _, views = _engine()
    sample = source_panel.load(source, text, preset, n, d, data_seed, temperature, file, progress)
    quality = views.quality_view(sample, layer, head, maps or None, seeds=int(seeds), causal=bool(causal), m=int(m),
                                 progress=lambda f, msg: progress(0.1 + 0.75 * f, desc=msg))
    overview = None
    notices = list(quality.notices)
    if sample.n_layers * sample.n_heads > 1:
        progress(0.9, desc="every head")
        overview = views.head_overview(sample, overview_map, overview_metric, bool(causal), int(m))
    else:
        notices.append("The head overview needs several heads: use a text (72 heads) or an upload with heads.")
    bundle = (quality, overview)
    curves, norms, shape, over = render(bundle, presentation, x_axis)
    params = {"tab": "quality", **source_panel.url_params(source, text, preset, n, d, data_seed, temperature, layer, head),
              "causal": bool(causal), "qmaps": maps, "seeds": int(seeds), "x": x_axis, "m": int(m),
              "omap": overview_map, "ometric": overview_metric, "present": bool(presentation)}
    return (curves, norms, shape, over, heads_table(overview), common.notices_markdown(notices, toast=False), bundle,
            common.query_string(params))


def build(panel: source_panel.SourcePanel, presentation: gr.Checkbox) -> QualityTab:
    rand = catalog.random_map_labels()
    others = [label for label in catalog.map_choices() if label != catalog.REFERENCE]
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            maps = gr.CheckboxGroup(rand, value=rand, label=i18n.label("quality_maps"), elem_id="quality-maps")
            seeds = gr.Slider(10, 30, value=10, step=1, label=i18n.label("quality_seeds"), info=i18n.label("quality_seeds_info"),
                              elem_id="quality-seeds")
            x_axis = gr.Radio(list(X_AXES), value="m", label=i18n.label("quality_x"), elem_id="quality-x",
                              info=i18n.label("quality_x_info"))
            causal = gr.Checkbox(False, label=i18n.label("causal"), elem_id="quality-causal")
            m = gr.Slider(2, 512, value=64, step=2, label=i18n.label("features_m"), info=i18n.label("quality_m_info"),
                          elem_id="quality-m")
            overview_map = gr.Dropdown(others, value="elu+1" if "elu+1" in others else others[0],
                                       label=i18n.label("quality_omap"))
            overview_metric = gr.Dropdown(catalog.metric_keys(), value="map_rel_error", label=i18n.label("quality_ometric"))
            run = gr.Button(i18n.label("quality_run"), variant="primary", elem_id="quality-run")
            try_preset = gr.Button(i18n.label("quality_preset"), size="sm", elem_id="quality-preset")
        with gr.Column(scale=5):
            notices = gr.Markdown(elem_id="quality-notices")
            curves = gr.Plot(label=i18n.label("quality_curves"), show_label=False, elem_id="quality-plot")
            norms = gr.Plot(label=i18n.label("quality_norms"), show_label=False, elem_id="quality-norms")
            shape = gr.Plot(label=i18n.label("quality_shape"), show_label=False, elem_id="quality-shape")
    with gr.Row(equal_height=False):
        with gr.Column(scale=3, min_width=520, elem_id="quality-overview-col"):
            overview = gr.Plot(label=i18n.label("quality_overview"), show_label=False, elem_id="quality-overview")
        with gr.Column(scale=2, min_width=380, elem_id="quality-heads-col"):
            heads = gr.Dataframe(label=i18n.label("quality_heads"),
                                 headers=["layer", "head", "value"], interactive=False, max_height=420,
                                 elem_id="quality-heads")
            with gr.Row():
                open_layer = gr.Number(0, precision=0, minimum=0, maximum=64, label=i18n.label("quality_open_layer"), elem_id="quality-open-layer")
                open_head = gr.Number(0, precision=0, minimum=0, maximum=64, label=i18n.label("quality_open_head"), elem_id="quality-open-head")
                open_button = gr.Button(i18n.label("quality_open"), size="sm", elem_id="quality-open")
    export, files, link, view, query = common.export_band("export_quality")
    tab = QualityTab(causal, maps, seeds, x_axis, m, overview_map, overview_metric, run, curves, norms, shape, overview,
                     heads, notices, view, query, link, open_layer, open_head, open_button)

    preset = catalog.QUALITY_PRESET
    try_preset.click(lambda: tuple(preset[key] for key in ("source", "preset", "n", "d", "data_seed", "temperature")),
                     None, [panel.source, panel.preset, panel.n, panel.d, panel.data_seed, panel.temperature],
                     api_visibility="private", queue=False).then(
        run_quality, panel.inputs + tab.controls + [presentation], tab.outputs, api_visibility="private",
        concurrency_limit=2, concurrency_id="quality").then(None, query, link, js=common.SET_URL_JS)

    # Switching the x axis only redraws: the measurements are kept in the view.
    def redraw(bundle, presentation, x_axis):
        figure = render(bundle, presentation, x_axis)[0]
        return gr.skip() if figure is None else figure

    inputs = panel.inputs + tab.controls + [presentation]
    measured = run.click(run_quality, inputs, tab.outputs, api_name="quality", concurrency_limit=2,
                         concurrency_id="quality")
    measured.then(None, query, link, js=common.SET_URL_JS)
    # A measurement that ends after the axis was switched drew the old axis: draw the one shown.
    measured.then(redraw, [view, presentation, x_axis], curves, api_visibility="private")
    x_axis.input(redraw, [view, presentation, x_axis], curves, api_visibility="private")

    @common.guarded
    def export_quality(bundle, presentation, x_axis):
        if bundle is None:
            raise gr.Error("Measure first.", print_exception=False)
        from .. import export as exports      # (``export`` here is the button)
        curves_fig, norms_fig, shape_fig, over_fig = render(bundle, presentation, x_axis)
        quality, overview = bundle
        return common.show_files(common.export_files("quality", {"error-vs-m": curves_fig, "norms": norms_fig,
                                                                        "entropy-monotonicity": shape_fig,
                                               "head-overview": over_fig},
                                   {"metrics": exports.metrics_csv_table(quality.shape_rows),
                                    "curves": curves_table(quality), "heads": heads_table(overview)}))

    common.wire_export(export, export_quality, [view, presentation, x_axis], files)
    return tab


def curves_table(quality) -> pd.DataFrame:
    rows = []
    for cur in quality.curves:
        for i, m in enumerate(cur.ms):
            for seed in range(cur.seeds_used[i] if cur.seeds_used else cur.kernel_mse.shape[1]):
                rows.append({"map": cur.label, "m": m, "linear_flops": cur.flops[i], "seed": seed,
                             "kernel_relative_mse": cur.kernel_mse[i, seed], "map_rel_error": cur.map_error[i, seed],
                             "theory_iid_relative_mse": None if cur.theory is None else cur.theory[i]})
    return pd.DataFrame(rows)
