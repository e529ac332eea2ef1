"""Attention maps tab: softmax and every chosen kernel map side by side, with error maps
and the full metrics table. Endpoint: ``/maps``."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from .. import catalog
from ..stopping import StopSignal
from ..text import Joined, Message, normal_lang, say
from . import common, downloads, i18n, server, source as source_panel
from .engine import figures_and_views


@dataclass
class MapsTab:
    causal: gr.Checkbox
    maps: gr.CheckboxGroup
    m: gr.Slider
    seed: gr.Number
    window: gr.Slider
    mechanisms: gr.CheckboxGroup      # decay, gates, the delta rule (views.mechanism_maps)
    gamma: gr.Slider
    gates: gr.Radio
    mechanism_seed: gr.Number
    lower_bound: gr.Slider
    beta: gr.Slider
    paper: gr.Checkbox                # the papers' form of RetNet, GLA and the scalar gate
    run: gr.Button
    plot: gr.Plot
    table: gr.Dataframe
    badge: gr.Markdown
    notices: gr.Markdown
    view: gr.State
    query: gr.Textbox
    link: gr.Textbox

    @property
    def map_controls(self) -> list:
        """The controls of the feature maps (what the arrays export reads)."""
        return [self.causal, self.maps, self.m, self.seed, self.window]

    @property
    def controls(self) -> list:
        return self.map_controls + [self.mechanisms, self.gamma, self.gates, self.mechanism_seed, self.lower_bound,
                                    self.beta, self.paper]

    @property
    def outputs(self) -> list:
        return [self.plot, self.table, self.badge, self.notices, self.view, self.query]


def render(view, presentation=False):
    """The grid, its words as messages (the handler's outputs are said in the page's language)."""
    if view is None:
        return None
    figures, _ = figures_and_views()
    from ..views import maps as maps_views
    note = Joined([x for x in (view.display_note, maps_views.spread_note(view), getattr(view, "mechanism_note", ""))
                   if x], " ")
    causal_only = set(getattr(view, "causal_only", ()))
    names = {map_id: view.labels.get(map_id, map_id) for map_id in view.maps}
    return figures.attention_grid(view.tokens, view.maps, view.errors, reference=catalog.REFERENCE,
                                  ill_defined=view.ill_defined, title=view.title, note=note,
                                  style=presentation, names=names,
                                  infinite_kl=getattr(view, "infinite_kl", None), block=view.block,
                                  references={label: (Message("maps.causal_softmax"), view.causal_reference)
                                              for label in causal_only})


def _flag(causal):
    """The Causal box as the engine takes it: None (never set: follow the data) or a bool."""
    return None if causal is None else bool(causal)


def badge(view) -> str:
    if view.model_check is None:
        return ""
    if not getattr(view, "model_mask", True):
        # The recomputation may match under the model's own mask, but what is shown is not it.
        return Message("maps.badge_other_mask", diff=f"{view.model_check:.1e}")
    # plain glyphs (✓ ✗): lecture-hall machines may lack an emoji font
    key = "maps.badge_ok" if view.model_check < 1e-4 else "maps.badge_bad"
    return Message(key, diff=f"{view.model_check:.1e}")


@common.guarded
def run_maps(source="text", text=source_panel.DEFAULT_TEXT, preset="clustered", n=128, d=32, data_seed=0, temperature=1.0, file=None, model=None,
             layer=2, head="3", causal=None, maps=catalog.DEFAULT_MAPS, m=64, seed=0, window=4, mechanisms=(),
             gamma=0.0, gates="seeded", mechanism_seed=0, lower_bound=0.9, beta=0.0, paper=False, presentation=False,
             lang="en", request: gr.Request = None, progress=gr.Progress()):
    """Compute and draw the maps tab in ``lang`` ("en" or "zh"). Returns (figure, metrics
    table, badge, notices, view, query). Trained maps are this browser session's own
    (``request``). ``causal`` None (not sent) follows the data: a causal model's maps are causal.
    ``mechanisms`` add RetNet, GLA, HGRN2, DeltaNet or Gated DeltaNet with their parameters
    (``gamma`` and ``beta`` 0: the head's own γ, a β per token from the keys; ``paper``: the
    papers' form of those that have one)."""
    _, views = figures_and_views()
    from .. import provenance
    from ..measure import cost
    lang = normal_lang(lang)
    sample = source_panel.load(source, text, preset, n, d, data_seed, temperature, file, progress, model=model,
                                lang=lang)
    progress(0.5, desc=say("maps.progress", lang))
    from ..views.mechanism_maps import MechanismSettings
    settings = MechanismSettings(gamma=float(gamma) if gamma else None, gates=gates or "seeded",
                                 seed=int(mechanism_seed or 0), lower_bound=float(lower_bound),
                                 beta=float(beta) if beta else None, paper=bool(paper))
    view = views.maps_view(sample, layer, head, maps or [], _flag(causal), int(m), int(seed or 0),
                           window=int(window), mechanisms=list(mechanisms or []),
                           mechanism_settings=settings,
                           session=getattr(request, "session_hash", None),
                           should_stop=StopSignal(server.visitor_left(request), cost.LIMIT_SECONDS))
    params = {"tab": "maps", **source_panel.url_params(source, text, preset, n, d, data_seed, temperature,
                                                      view.params["layer"], view.params["head"], model=model),
              "causal": view.params["causal"], "maps": maps, "m": int(m), "seed": int(seed or 0), "w": int(window),
              "present": bool(presentation), **mechanism_params(view)}
    # What the CSV export says it was computed from (every seed: the map's and its spread's).
    view.provenance = provenance.record("maps", samples=[sample], settings={**view.params, "maps": maps or [],
                                        "m": int(m), "seed": int(seed or 0), "window": int(window),
                                        **mechanism_params(view)},
                                        seeds=[int(seed or 0), *(s for sp in view.spread.values() for s in sp.seeds)])
    # Three significant digits on screen, so the judging columns fit beside the grid; the CSV keeps four.
    from ..views import maps as maps_views
    return (render(view, presentation), maps_views.maps_table(view, digits=3), badge(view),
            notices_with_undefined(view, lang), view, common.query_string(params))


def mechanism_params(view) -> dict:
    """The mechanisms drawn and their settings as link parameters (none when none is drawn)."""
    names = view.params.get("mechanisms") or []
    if not names:
        return {}
    settings = view.params["mechanism_settings"]
    return {"mech": names, "mgamma": settings.gamma, "mgates": settings.gates, "mseed": settings.seed,
            "mlb": settings.lower_bound, "mbeta": settings.beta, "mpaper": settings.paper}


def empty_table(lang):
    """The metrics table before the first draw: its headers in ``lang``."""
    import pandas as pd
    lang = normal_lang(lang)
    return pd.DataFrame(columns=[say("common.map", lang)]
                        + [say(f"common.short.{key}", lang) for key in catalog.HEADLINE_METRICS])


def notices_with_undefined(view, lang) -> str:
    """The view's notices (the first few pop up), then why each n/a cell of the table is n/a,
    in ``lang``."""
    figures_and_views()
    from ..views.common import undefined_notes
    text = common.notices_markdown(view.notices, lang=lang)
    why = undefined_notes(view.metrics)
    return "\n".join([text] * bool(text) + [f"- {say(line, lang)}" for line in why])


@common.guarded
def export_arrays(source="text", text=source_panel.DEFAULT_TEXT, preset="clustered", n=128, d=32, data_seed=0,
                  temperature=1.0, file=None, model=None, layer=2, head="3", causal=None, maps=catalog.DEFAULT_MAPS, m=64,
                  seed=0, window=4, lang="en"):
    """The maps view's Q, K, V, A, Â and per-row metrics as .npz and .safetensors files: their
    paths, which is what /maps_arrays returns (the page then shows the downloads box)."""
    from .. import export
    sample = source_panel.load(source, text, preset, n, d, data_seed, temperature, file, model=model)
    _, views = figures_and_views()
    causal = views.resolve_causal(sample, _flag(causal))
    arrays = export.view_arrays(sample, layer, head, maps or [], causal, int(m), int(seed or 0), int(window))
    folder = downloads.export_folder()
    paths = [export.write_npz(arrays, folder / "maps-arrays.npz"),
             export.write_safetensors(arrays, folder / "maps-arrays.safetensors")]
    return [str(path) for path in paths]


def build(panel: source_panel.SourcePanel, presentation: gr.Checkbox, lang: gr.Radio | None = None) -> MapsTab:
    """The tab; with ``lang`` (the page's language switch) its run-time text follows the
    switch, and a drawn view is drawn again when the language changes."""
    choices = [i18n.map_choice(label) for label in catalog.map_choices()]
    # Controls in a column at the left, so the grid starts at the top of the tab; the metrics
    # table beside the grid on a wide screen, below it where the grid needs the width
    # (narrow screens and presentation mode, see app.css).
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=250, elem_classes=["controls"]):
            maps = gr.CheckboxGroup(choices, value=catalog.default_maps(), label=i18n.label("maps_maps"), elem_id="maps-choice",
                                    info=i18n.label("maps_maps_info"))
            causal = source_panel.CausalBox(None, label=i18n.label("maps_causal"), elem_id="maps-causal")
            m = gr.Slider(2, 1024, value=64, step=2, label=i18n.label("features_m"), info=i18n.label("features_m_info"),
                          elem_id="maps-m")
            window = gr.Slider(0, 64, value=4, step=1, label=i18n.label("maps_window"), info=i18n.label("maps_window_info"), elem_id="maps-window")
            seed = gr.Number(0, precision=0, minimum=0, maximum=catalog.MAX_SEED, label=i18n.label("maps_seed"), info=i18n.label("maps_seed_info"),
                             elem_id="maps-seed")
            mechanisms, gamma, gates, mechanism_seed, lower_bound, beta, paper = _mechanism_controls()
            run = gr.Button(i18n.label("maps_run"), variant="primary", elem_id="maps-run")
        with gr.Column(scale=4, min_width=600, elem_id="maps-main"):
            badge_md = gr.Markdown(elem_id="maps-badge")
            notices = gr.Markdown(elem_id="maps-notices")
            plot = gr.Plot(label=i18n.label("maps_plot"), show_label=False,
                           elem_id="maps-plot")
        with gr.Column(scale=1, min_width=380, elem_id="maps-side"):
            table = gr.Dataframe(label=i18n.label("maps_table"), headers=list(empty_table("en").columns),
                                 interactive=False, wrap=True, pinned_columns=1, max_height=900, elem_id="maps-table",
                                 # map and three judging columns fit the 380-px side column; one
                                 # column more than the metrics: the map error over seeds
                                 column_widths=["124px"] + ["76px"] * (len(catalog.METRIC_INFO) + 1))
            with gr.Accordion(i18n.label("maps_metrics_help"), open=False):
                gr.Markdown(i18n.label("maps_glossary"), elem_id="maps-glossary")
    export, files, link, view, query = common.export_band("export_maps",
                                                          export_id="maps-export", query_id="maps-query")
    tab = MapsTab(causal, maps, m, seed, window, mechanisms, gamma, gates, mechanism_seed, lower_bound, beta, paper, run, plot,
                  table, badge_md, notices, view, query, link)

    inputs = panel.inputs + tab.controls + [presentation] + ([lang] if lang is not None else [])
    run.click(run_maps, inputs, tab.outputs, api_name="maps", concurrency_limit=2,
              concurrency_id="compute").then(None, query, link, js=common.SET_URL_JS)
    # Small changes redraw at once; .input/.release fire on user action only, not when a
    # URL restores the controls. The data panel's changes are wired in ui/__init__.
    gr.on([causal.input, maps.input, m.release, seed.submit, window.release, mechanisms.input, gamma.release,
           gates.input, mechanism_seed.submit, lower_bound.release, beta.release, paper.input], run_maps, inputs, tab.outputs,
          api_visibility="private", concurrency_limit=2, concurrency_id="compute",
          trigger_mode="always_last").then(None, query, link, js=common.SET_URL_JS)

    if lang is not None:
        # A drawn view is said again in the new language: nothing is computed again.
        @common.guarded
        def redraw(view, *args):
            presentation, lang = args[-2], normal_lang(args[-1])
            if view is None:     # nothing drawn yet: the empty table's headers in the new language
                return (gr.skip(), empty_table(lang), *(gr.skip() for _ in tab.outputs[2:]))
            from ..views import maps as maps_views
            return common.said_outputs((render(view, presentation), maps_views.maps_table(view, digits=3), badge(view),
                                        notices_with_undefined(view, lang), gr.skip(), gr.skip()), lang)
        lang.change(redraw, [view, *inputs], tab.outputs, api_visibility="private", concurrency_limit=2,
                    concurrency_id="compute", trigger_mode="always_last")

    @common.guarded
    def export_maps(view, presentation, lang="en"):
        if view is None:
            raise gr.Error(say("maps.draw_first", lang), print_exception=False)
        from .. import export as exports      # (``export`` here is the button)
        return common.show_files(downloads.export_files("maps", {"grid": common.said_outputs(render(view, presentation), lang)},
                                   {"metrics": exports.metrics_csv_table(view.metrics)},
                                   provenance=view.provenance or None))

    common.wire_export(export, export_maps, [view, presentation] + ([lang] if lang is not None else []), files)
    # The view's arrays for analysis, from the page and as the /maps_arrays endpoint.
    with gr.Row():
        arrays = gr.Button(i18n.label("export_arrays"), size="sm", elem_id="maps-export-arrays")
    # The endpoint returns the files themselves; the box that shows them appears once they are there.
    arrays.click(export_arrays, panel.inputs + tab.map_controls + ([lang] if lang is not None else []), files,
                 api_name="maps_arrays", concurrency_limit=1,
                 concurrency_id="export").success(lambda: gr.update(visible=True), None, files,
                                                  api_visibility="private", queue=False)
    return tab


def _mechanism_controls():
    """The mechanisms beside softmax and their parameters, in a fold of the controls column."""
    from .. import mechanisms as registry       # names only: no torch
    from ..catalog import MAX_SEED, STATE_LOWER_BOUND_MAX

    names = registry.beside_softmax()
    chosen = gr.CheckboxGroup([(i18n.engine_label(f"state.kind.{name}"), name) for name in names], value=[],
                              label=i18n.engine_label("maps.ui_mechanisms"), info=i18n.engine_label("maps.ui_mechanisms_info"),
                              elem_id="maps-mechanisms")
    with gr.Accordion(i18n.engine_label("maps.ui_settings"), open=False, elem_id="maps-mechanism-settings"):
        # 0 (no decay could be 0) stands for "the head's own γ", and β = 0 (no write) for "a β per token".
        gamma = gr.Slider(0.0, 1.0, value=0.0, step=0.001, label=i18n.engine_label("maps.ui_gamma"),
                          info=i18n.engine_label("maps.ui_gamma_info"), elem_id="maps-gamma")
        gates = gr.Radio([(i18n.engine_label("maps.ui_gates_seeded"), "seeded"),
                          (i18n.engine_label("maps.ui_gates_fitted"), "fitted")], value="seeded",
                         label=i18n.engine_label("maps.ui_gates"), elem_id="maps-gates")
        seed = gr.Number(0, precision=0, minimum=0, maximum=MAX_SEED, label=i18n.engine_label("maps.ui_seed"),
                         info=i18n.engine_label("maps.ui_seed_info"), elem_id="maps-mechanism-seed")
        lower_bound = gr.Slider(0.0, STATE_LOWER_BOUND_MAX, value=0.9, step=0.01,
                                label=i18n.engine_label("maps.ui_lower_bound"), elem_id="maps-lower-bound")
        beta = gr.Slider(0.0, 1.0, value=0.0, step=0.01, label=i18n.engine_label("maps.ui_beta"),
                         info=i18n.engine_label("maps.ui_beta_info"), elem_id="maps-beta")
        paper = gr.Checkbox(False, label=i18n.engine_label("maps.ui_paper"), info=i18n.engine_label("maps.ui_paper_info"),
                            elem_id="maps-paper")
    return chosen, gamma, gates, seed, lower_bound, beta, paper
