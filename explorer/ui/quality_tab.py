"""Feature-map quality tab: error against m for the random-feature maps (IID and
orthogonal, theory beside measurement), entropy and monotonicity per map, and an overview
of every head. Endpoint: ``/quality``."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import pandas as pd

from .. import catalog
from ..stopping import StopSignal
from ..text import Joined, Message, normal_lang, said, said_throughout, say
from . import common, downloads, i18n, server, source as source_panel
from .engine import figures_and_views

X_AXES = ("m", "FLOPs")


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


def render(bundle, presentation=False, x_axis="m", lang="en"):
    """(curves, norms, shape bars, overview) figures from the stored views, said in ``lang``
    (the views are the same in every language: switching it measures nothing again)."""
    if bundle is None:
        return None, None, None, None
    figures, _ = figures_and_views()
    from ..views import common as view_common, quality as quality_views
    from ..views.maps import SPREAD_SEEDS
    quality, overview = bundle
    names = {row["map"]: view_common.row_name(row) for row in quality.shape_rows}
    names.update({cur.map_id: catalog.map_label(cur.map_id) for cur in quality.curves})
    note = Message("quality.curves_note", seeds=quality.seed_note)
    head = Message("quality.curves_title_cost" if x_axis == "FLOPs" else "quality.curves_title")
    curves = figures.quality_curves(quality.curves, x="flops" if x_axis == "FLOPs" else "m",
                                    title=Joined((head, " · ", quality.title)), note=note, style=presentation,
                                    favor_need=quality.favor_need, names=names)
    norms = figures.favor_norms(quality.norms, quality.favor_need, title=quality.title, style=presentation)
    spread = quality_views.shape_spread(quality)
    k = max((len(s.seeds) for s in quality.spread.values()), default=SPREAD_SEEDS)
    shape = figures.metric_bars(quality.shape_rows, title=Joined([Message("quality.bars_title"), " · ", quality.title]),
                                style=presentation, names=names, spread=spread, spread_seeds=k,
                                note=Joined([x for x in (Message("maps.bars_note", seed=0, k=k) if spread else "",
                                                         _mechanisms_note(quality)) if x], " "))
    over = None
    if overview is not None:
        over = figures.head_overview(overview.values, overview.layer_names, overview.metric_label, overview.map_label,
                                     style=presentation)
    return common.said_outputs((curves, norms, shape, over), normal_lang(lang))


def _mechanisms_note(quality) -> str:
    """What the mechanisms' bars are: causal maps against causal softmax, default settings."""
    from ..views.mechanism_maps import mechanism_maps

    if not any(row["map"] in mechanism_maps() for row in quality.shape_rows):
        return ""
    return Message("quality.bars_mechanisms")


def heads_table(overview) -> pd.DataFrame:
    """The overview's heads, hardest first; "layer" and "head" stay as the column names the
    page's row selection reads (the shown headers are said by ``shown_heads_table``)."""
    from ..views.frames import message_frame
    if overview is None:
        return pd.DataFrame(columns=["layer", "head", "value"])
    layers, heads = overview.values.shape
    table = message_frame({"layer": [layer for layer in range(layers) for _ in range(heads)],
                           "head": [head for _ in range(layers) for head in range(heads)],
                           overview.metric_label: [float(x) for x in overview.values.ravel()]})
    return table.sort_values(overview.metric_label, ascending=False, na_position="last").round(4)


def shown_heads_table(overview, lang: str = "en") -> pd.DataFrame:
    """``heads_table`` with its headers said in ``lang``."""
    from ..views.frames import with_headers
    table = with_headers(heads_table(overview), {"layer": Message("common.layer"), "head": Message("common.head"),
                                                 "value": Message("common.value")})
    return common.said_outputs(table, normal_lang(lang))


def notices_text(quality, overview, lang: str = "en") -> str:
    """The notices over the tab's figures, said in ``lang``."""
    from ..views.quality import page_notices
    return common.notices_markdown(said_throughout(page_notices(quality, overview), lang), toast=False, lang=lang)


@common.guarded
def run_quality(source="text", text=source_panel.DEFAULT_TEXT, preset="clustered", n=128, d=32, data_seed=0, temperature=1.0, file=None, model=None,
                layer=2, head="3", causal=None, maps=None, seeds=10, x_axis="m", m=64, overview_map="elu1",
                overview_metric="map_rel_error", presentation=False, lang="en", request: gr.Request = None,
                progress=gr.Progress()):
    """Compute and draw the quality tab in ``lang`` ("en" or "zh"), with this browser session's
    trained maps.

    Returns (curves figure, norms figure, entropy/monotonicity figure, head overview figure,
    heads table, notices, view, query). ``causal`` None (not sent) follows the data: a causal
    model's maps are causal.
    """
    _, views = figures_and_views()
    lang = normal_lang(lang)
    # One stop signal for the request: the visitor leaving, or the server's limit on one request.
    from ..measure import cost
    stop = StopSignal(server.visitor_left(request), cost.LIMIT_SECONDS)
    if not (source == "text" and model == source_panel.OTHER_MODEL):
        # The whole request priced from the sample's shape: refused before the model reads the text.
        views.price_sample_request(source, text, n, d, model, head, maps or None, int(seeds), int(m), overview_map)
    sample = source_panel.load(source, text, preset, n, d, data_seed, temperature, file, progress, model=model,
                                lang=lang)
    causal = views.resolve_causal(sample, None if causal is None else bool(causal))
    quality, overview, notices = views.quality_page(
        sample, layer, head, maps, seeds, causal, m, overview_map, overview_metric,
        session=getattr(request, "session_hash", None), should_stop=stop,
        progress=lambda f, msg: progress(f, desc=said(msg, lang)))
    bundle = (quality, overview)
    curves, norms, shape, over = render(bundle, presentation, x_axis, lang)
    params = {"tab": "quality", **source_panel.url_params(source, text, preset, n, d, data_seed, temperature, layer, head, model=model),
              "causal": causal, "qmaps": maps, "seeds": int(seeds), "x": x_axis, "m": int(m),
              "omap": overview_map, "ometric": overview_metric, "present": bool(presentation)}
    # What the CSV export says it was computed from (redraw i of a random map is seed i).
    from .. import provenance
    quality.provenance = provenance.record("quality", samples=[sample], settings=params,
                                           seeds=range(max([int(seeds), *(n for c in quality.curves for n in c.seeds_used)])))
    return (curves, norms, shape, over, shown_heads_table(overview, lang),
            common.notices_markdown(said_throughout(notices, lang), toast=False, lang=lang), bundle,
            common.query_string(params))


def build(panel: source_panel.SourcePanel, presentation: gr.Checkbox, lang: gr.Radio | None = None) -> QualityTab:
    """The tab; with ``lang`` (the page's language switch) its run-time text follows the
    switch: a measured view is said again in the new language, not measured again."""
    rand = [i18n.map_choice(map_id) for map_id in catalog.random_map_ids()]
    others = [map_id for map_id in catalog.map_choices() if map_id != catalog.REFERENCE]
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            maps = gr.CheckboxGroup(rand, value=catalog.random_map_ids(), label=i18n.label("quality_maps"), elem_id="quality-maps")
            seeds = gr.Slider(10, 30, value=10, step=1, label=i18n.label("quality_seeds"), info=i18n.label("quality_seeds_info"),
                              elem_id="quality-seeds")
            x_axis = gr.Radio(list(X_AXES), value="m", label=i18n.label("quality_x"), elem_id="quality-x",
                              info=i18n.label("quality_x_info"))
            causal = source_panel.CausalBox(None, label=i18n.label("causal"), elem_id="quality-causal")
            m = gr.Slider(2, 512, value=64, step=2, label=i18n.label("features_m"), info=i18n.label("quality_m_info"),
                          elem_id="quality-m")
            overview_map = gr.Dropdown([i18n.map_choice(map_id) for map_id in others],
                                       value="elu1" if "elu1" in others else others[0],
                                       label=i18n.label("quality_omap"), elem_id="quality-omap")
            overview_metric = gr.Dropdown([i18n.metric_choice(key) for key in catalog.OVERVIEW_METRICS],
                                          value="map_rel_error", label=i18n.label("quality_ometric"),
                                          elem_id="quality-ometric")
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
        run_quality, panel.inputs + tab.controls + [presentation] + ([lang] if lang is not None else []), tab.outputs,
        api_visibility="private",
        concurrency_limit=2, concurrency_id="quality").then(None, query, link, js=common.SET_URL_JS)

    # Switching the x axis only redraws: the measurements are kept in the view.
    def redraw(bundle, presentation, x_axis, lang="en"):
        figure = render(bundle, presentation, x_axis, lang)[0]
        return gr.skip() if figure is None else figure

    with_lang = [lang] if lang is not None else []
    inputs = panel.inputs + tab.controls + [presentation] + with_lang
    measured = run.click(run_quality, inputs, tab.outputs, api_name="quality", concurrency_limit=2,
                         concurrency_id="quality")
    measured.then(None, query, link, js=common.SET_URL_JS)
    # A measurement that ends after the axis was switched drew the old axis: draw the one shown.
    measured.then(redraw, [view, presentation, x_axis] + with_lang, curves, api_visibility="private")
    x_axis.input(redraw, [view, presentation, x_axis] + with_lang, curves, api_visibility="private")
    if lang is not None:
        # A measured view is said again in the new language: nothing is measured again.
        def relang(bundle, presentation, x_axis, lang):
            lang = normal_lang(lang)
            skips = [gr.skip() for _ in tab.outputs]
            if bundle is None:   # nothing measured yet: the empty table's headers in the new language
                skips[tab.outputs.index(tab.heads)] = shown_heads_table(None, lang)
                return tuple(skips)
            quality, overview = bundle
            return (*render(bundle, presentation, x_axis, lang), shown_heads_table(overview, lang),
                    notices_text(quality, overview, lang), gr.skip(), gr.skip())
        lang.change(relang, [view, presentation, x_axis, lang], tab.outputs, api_visibility="private",
                    queue=False, trigger_mode="always_last")

    @common.guarded
    def export_quality(bundle, presentation, x_axis, lang="en"):
        if bundle is None:
            raise gr.Error(say("quality.measure_first", lang), print_exception=False)
        from .. import export as exports      # (``export`` here is the button)
        lang = normal_lang(lang)
        curves_fig, norms_fig, shape_fig, over_fig = render(bundle, presentation, x_axis, lang)   # written here: said first
        quality, overview = bundle
        return common.show_files(downloads.export_files("quality", {"error-vs-m": curves_fig, "norms": norms_fig,
                                                                        "entropy-monotonicity": shape_fig,
                                               "head-overview": over_fig},
                                   {"metrics": exports.metrics_csv_table(quality.shape_rows),
                                    "curves": curves_table(quality),
                                    "heads": common.said_outputs(heads_table(overview), lang)},
                                   provenance=quality.provenance or None))

    common.wire_export(export, export_quality, [view, presentation, x_axis] + ([lang] if lang is not None else []),
                       files)
    return tab


def curves_table(quality) -> pd.DataFrame:
    rows = []
    for cur in quality.curves:
        for i, m in enumerate(cur.ms):
            for seed in range(cur.seeds_used[i] if cur.seeds_used else cur.kernel_mse.shape[1]):
                rows.append({"map": cur.map_id, "m": m, "linear_flops": cur.flops[i], "seed": seed,
                             "kernel_relative_mse": cur.kernel_mse[i, seed], "map_rel_error": cur.map_error[i, seed],
                             "theory_iid_relative_mse": None if cur.theory is None else cur.theory[i]})
    return pd.DataFrame(rows)
