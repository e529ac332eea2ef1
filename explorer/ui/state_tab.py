"""Recurrent state tab: causal linear attention as an RNN, step by step, under six updates
(no decay, RetNet decay, GLA gates, HGRN2, DeltaNet, Gated DeltaNet). Endpoint: ``/state``.

The tab's controls are checked by ``explorer.views.state.check_controls``; the view and the
figures hold messages, said here in the page's language (the header's switch): a change of
language says the drawn view's words again without computing it again.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import pandas as pd

from .. import catalog, mechanisms
from ..text import said, said_throughout
from . import common, downloads, i18n, source as source_panel
from .engine import figures_and_views

STATE_KINDS = list(mechanisms.state_kinds())
DEFAULTS = catalog.STATE_DEFAULTS


@dataclass(frozen=True)
class SaidIn:
    """The language a drawn view's words were said in (kept beside the view, which has none)."""

    lang: str


@dataclass
class StateTab:
    map_id: gr.Dropdown
    m: gr.Slider
    seed: gr.Number
    gamma: gr.Slider
    strength: gr.Slider
    kind: gr.Radio
    t: gr.Slider
    lower_bound: gr.Slider
    beta: gr.Slider
    lang: gr.Component
    run: gr.Button
    step: gr.Plot
    curves: gr.Plot
    capacity: gr.Plot
    memory: gr.Plot
    notices: gr.Markdown
    view: gr.State
    query: gr.Textbox
    link: gr.Textbox
    said_in: gr.State            # SaidIn: the language the drawn view's words were last said in

    @property
    def controls(self) -> list:
        return [self.map_id, self.m, self.seed, self.gamma, self.strength, self.t, self.kind, self.lower_bound,
                self.beta, self.lang]

    @property
    def outputs(self) -> list:
        return [self.step, self.curves, self.memory, self.notices, self.view, self.t, self.query, self.capacity,
                self.said_in]

    @property
    def figures(self) -> list:
        """The plots ``render`` fills, in its order."""
        return [self.step, self.curves, self.memory, self.capacity]


def _step_figure(figures, s, presentation):
    return figures.state_step(s["update"], s["state"], s["t"], s["token"], s["kind"], style=presentation,
                              erased=s.get("erased"), kind_id=s.get("kind_id", "linear"))


def render(view, presentation=False):
    """(step, curves, memory, capacity) figures of a view, their words messages (a guarded
    handler's outputs are said in the page's language)."""
    if view is None:
        return None, None, None, None
    figures, views = figures_and_views()
    step = _step_figure(figures, view.step, presentation)
    curves = figures.state_curves(view.ts, view.traces, view.recall, t_marker=view.step["t"], style=presentation)
    memory = figures.memory_growth(view.mem_ts, view.kv_bytes, view.state_bytes, style=presentation,
                                   feature_dim=view.feature_dim)
    capacity = figures.state_capacity(view.capacity, view.head_dim, view.threshold, view.capacity_trials,
                                      style=presentation, reference=views.state.kind_label("unit_additive"))
    return step, curves, memory, capacity


def _notices(view, lang) -> str:
    """The view's notices (messages) as the page's markdown list, said in ``lang``."""
    return common.notices_markdown(said_throughout(list(view.notices), lang), toast=False, lang=lang)


@common.guarded
def run_state(source="text", text=source_panel.DEFAULT_TEXT, preset="clustered", n=128, d=32, data_seed=0,
              temperature=1.0, file=None, model=None, layer=2, head="3", map_id="elu1", m=32, seed=0,
              gamma=DEFAULTS["gamma"], strength=DEFAULTS["strength"], t=None, kind="linear",
              lower_bound=DEFAULTS["lower_bound"], beta=DEFAULTS["beta"], lang="en", presentation=False,
              progress=gr.Progress()):
    """Compute and draw the state tab.

    Returns (step figure, curves figure, memory figure, notices, view, t slider, query,
    capacity figure, ``SaidIn`` the language its words are said in).
    """
    from ..text import say

    _, views = figures_and_views()
    lang = i18n.normal_lang(lang)
    controls = views.state.check_controls(map_id, m, seed, gamma, strength, lower_bound, beta, kind)
    sample = source_panel.load(source, text, preset, n, d, data_seed, temperature, file, progress, model=model,
                                lang=lang)
    progress(0.4, desc=say("state.progress", lang))
    last = sample.n_tokens - 1
    t_val = last if t is None else min(views.state.check_step(t), last)
    c = controls
    view = views.state_view(sample, layer, head, c.map_id, c.m, c.seed, c.gamma, c.strength, t_val, c.kind,
                            lower_bound=c.lower_bound, beta=c.beta)
    step, curves, memory, capacity = render(view, presentation)
    params = {"tab": "state", **source_panel.url_params(source, text, preset, n, d, data_seed, temperature, layer, head, model=model),
              "smap": c.map_id, "sm": c.m, "sseed": c.seed, "gamma": c.gamma, "strength": c.strength,
              "t": t_val, "kind": c.kind, "lb": c.lower_bound, "beta": c.beta, "present": bool(presentation)}
    from .. import provenance            # what the CSV export says it was computed from
    view.provenance = provenance.record("state", samples=[sample], settings=params, seeds=[c.seed])
    return (step, curves, memory, _notices(view, lang), view,
            gr.update(maximum=last, value=t_val), common.query_string(params), capacity, SaidIn(lang))


@common.guarded
def run_step(source="text", text=source_panel.DEFAULT_TEXT, preset="clustered", n=128, d=32, data_seed=0,
             temperature=1.0, file=None, model=None, layer=2, head="3", map_id="elu1", m=32, seed=0,
             gamma=DEFAULTS["gamma"], strength=DEFAULTS["strength"], t=0, kind="linear",
             lower_bound=DEFAULTS["lower_bound"], beta=DEFAULTS["beta"], lang="en", presentation=False, view=None):
    """Only the step heatmaps, for the t slider and the update choice: fast enough to drag.
    ``view``: the tab's view, whose step becomes this one, so that a restyle or an export
    draws the step on screen. ``lang``: the page's, which ``common.guarded`` says the figure in."""
    figures, views = figures_and_views()
    sample = source_panel.load(source, text, preset, n, d, data_seed, temperature, file, model=model)
    s = views.state_step(sample, layer, head, map_id, m, seed, gamma, strength, t, kind,
                         lower_bound=lower_bound, beta=beta)
    if view is not None:
        view.step = s
    return _step_figure(figures, s, presentation)


@common.guarded
def relanguage(view=None, said_in=None, presentation=False, lang="en"):
    """The drawn view's figures and notices again, said in ``lang``: a change of language
    computes nothing (the view holds numbers and messages). A view not drawn yet, or already
    said in ``lang`` (a page opened on a Chinese link), is left as it is. Returns the tab's
    outputs, the view, the t slider and the query left as they are."""
    lang = i18n.normal_lang(lang)
    if view is None or said_in == SaidIn(lang):
        return tuple(gr.skip() for _ in range(9))
    step, curves, memory, capacity = render(view, presentation)
    return step, curves, memory, _notices(view, lang), gr.skip(), gr.skip(), gr.skip(), capacity, SaidIn(lang)


def _step_is_stale(view, t, kind) -> bool:
    """Whether the step on screen (the view's, drawn with the whole tab) is another update or
    step than the controls now ask for."""
    if view is None:
        return False
    try:
        return view.step["kind_id"] != kind or int(view.step["t"]) != int(t)
    except (TypeError, ValueError, KeyError):
        return False


def keep_step(event, tab: "StateTab", inputs: list):
    """Chain onto ``event``, one that drew the step from the tab's view (a whole redraw, a
    restyle): the step again from the controls as they are now, where they ask for another
    update or step. A redraw started before the reader picked an update reads the old pick,
    and can land after that pick's own step: without this the figure would show the earlier
    update while the choice says the new one. Each step keeps the view's step the one on
    screen (``inputs``: those of ``run_step``)."""
    i_t = next(i for i, c in enumerate(inputs) if c is tab.t)
    i_kind = next(i for i, c in enumerate(inputs) if c is tab.kind)

    def step_if_stale(view, *args):
        if not _step_is_stale(view, args[i_t], args[i_kind]):
            return gr.skip()
        return run_step(*args, view=view)

    return event.then(step_if_stale, [tab.view, *inputs], tab.step, api_visibility="private", **COMPUTE)


# The tab's heavy events, its step views among them, share the page's compute slots: a queue
# of their own, one at a time for every visitor, would let one slow step hold every page's load.
COMPUTE = dict(concurrency_limit=2, concurrency_id="compute")


def _kind_choices() -> list:
    return [(i18n.engine_label(f"state.kind.{kind}"), kind) for kind in STATE_KINDS]


def build(panel: source_panel.SourcePanel, presentation: gr.Checkbox, lang: gr.Component | None = None) -> StateTab:
    """The tab's components and events. ``lang`` is the page's language switch; without one
    (a page of this tab alone) a hidden "en" stands in."""
    if lang is None:
        lang = gr.Textbox("en", visible=False)
    ids = [map_id for map_id in catalog.map_choices() if map_id != catalog.REFERENCE]
    maps = [i18n.map_choice(map_id) for map_id in ids]      # the name in the reader's language, the id as value
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            map_id = gr.Dropdown(maps, value="elu1" if "elu1" in ids else ids[0], label=i18n.label("state_map"),
                                    elem_id="state-map")
            m = gr.Slider(2, 256, value=32, step=2, label=i18n.label("features_m"), info=i18n.label("features_m_info"),
                          elem_id="state-m")
            seed = gr.Number(0, precision=0, minimum=0, maximum=catalog.MAX_SEED, label=i18n.label("seed"),
                             info=i18n.label("state_seed_info"), elem_id="state-seed")
            gamma = gr.Slider(0.5, 1.0, value=DEFAULTS["gamma"], step=0.005, label=i18n.label("state_gamma"),
                              info=i18n.label("state_gamma_info"), elem_id="state-gamma")
            strength = gr.Slider(0.0, 8.0, value=DEFAULTS["strength"], step=0.1, label=i18n.label("state_strength"),
                                 info=i18n.label("state_strength_info"), elem_id="state-strength")
            lower_bound = gr.Slider(0.0, catalog.STATE_LOWER_BOUND_MAX, value=DEFAULTS["lower_bound"], step=0.01,
                                    label=i18n.label("state_lower_bound"), info=i18n.label("state_lower_bound_info"),
                                    elem_id="state-lower-bound")
            beta = gr.Slider(0.05, 1.0, value=DEFAULTS["beta"], step=0.05, label=i18n.label("state_beta"),
                             info=i18n.label("state_beta_info"), elem_id="state-beta")
            kind = gr.Radio(_kind_choices(), value="linear", label=i18n.label("state_kind"), elem_id="state-kind")
            run = gr.Button(i18n.label("state_run"), variant="primary", elem_id="state-run")
            try_preset = gr.Button(i18n.label("state_preset"), size="sm", elem_id="state-preset")
        with gr.Column(scale=5):
            notices = gr.Markdown(elem_id="state-notices")
            t = gr.Slider(0, 511, value=8, step=1, label=i18n.label("state_t"), elem_id="state-t")
            step = gr.Plot(label=i18n.label("state_step"), show_label=False, elem_id="state-step")
    curves = gr.Plot(label=i18n.label("state_curves"), show_label=False, elem_id="state-curves")
    capacity = gr.Plot(label=i18n.label("state_capacity"), show_label=False, elem_id="state-capacity")
    memory = gr.Plot(label=i18n.label("state_memory"), show_label=False, elem_id="state-memory")
    export, files, link, view, query = common.export_band("export_state")
    tab = StateTab(map_id, m, seed, gamma, strength, kind, t, lower_bound, beta, lang, run, step, curves, capacity,
                   memory, notices, view, query, link, gr.State(None))
    _wire(tab, panel, presentation, try_preset)

    @common.guarded
    def export_state(view, presentation, lang):
        lang = i18n.normal_lang(lang)
        if view is None:
            from ..text import say
            raise gr.Error(say("state.error_run_first", lang), print_exception=False)
        # The files hold the words of the page they were asked from.
        figures = dict(zip(("step", "curves", "memory", "capacity"), render(view, presentation)))
        tables = {"curves": curves_table(view, lang), "capacity": capacity_table(view, lang)}
        return common.show_files(downloads.export_files(
            "state", common.said_outputs(figures, lang), tables,
            provenance=getattr(view, "provenance", None) or None))

    common.wire_export(export, export_state, [view, presentation, lang], files)
    return tab


def _wire(tab: StateTab, panel, presentation, try_preset) -> None:
    inputs = panel.inputs + tab.controls + [presentation]
    drawn = tab.run.click(run_state, inputs, tab.outputs, api_name="state", **COMPUTE)
    drawn.then(None, tab.query, tab.link, js=common.SET_URL_JS)
    keep_step(drawn, tab, inputs)
    preset = catalog.STATE_PRESET
    drawn = try_preset.click(
        lambda: (preset["source"], preset["text"], preset["gamma"], preset["strength"]), None,
        [panel.source, panel.text, tab.gamma, tab.strength], api_visibility="private", queue=False).then(
        run_state, inputs, tab.outputs, api_visibility="private", **COMPUTE)
    drawn.then(None, tab.query, tab.link, js=common.SET_URL_JS)
    keep_step(drawn, tab, inputs)
    gr.on([tab.t.release, tab.kind.input], lambda view, *args: run_step(*args, view=view), [tab.view, *inputs],
          tab.step, api_visibility="private", trigger_mode="always_last", **COMPUTE)
    drawn = gr.on([tab.gamma.release, tab.strength.release, tab.lower_bound.release, tab.beta.release,
                   tab.map_id.input],
                  run_state, inputs, tab.outputs, api_visibility="private", trigger_mode="always_last", **COMPUTE)
    drawn.then(None, tab.query, tab.link, js=common.SET_URL_JS)
    keep_step(drawn, tab, inputs)

    # Another language says a drawn tab's words again (nothing is computed again).
    keep_step(tab.lang.change(relanguage, [tab.view, tab.said_in, presentation, tab.lang], tab.outputs,
                              api_visibility="private", trigger_mode="always_last", **COMPUTE), tab, inputs)


def curves_table(view, lang: str = "en") -> pd.DataFrame:
    """Per update and step: the norms, the rank, and the memory of the KV cache and the state
    (column names stay English in both languages: they are data keys; the updates are named
    in ``lang``; NaN where an update has no normaliser)."""
    rows = []
    for kind, tr in view.traces.items():
        z = tr.get("normaliser_norm")
        for t in view.ts:
            rows.append({"decay": said(kind, lang), "t": t, "token": view.tokens[t], "state_norm": tr["state_norm"][t],
                         "normaliser_norm": float("nan") if z is None else z[t], "effective_rank": tr["effective_rank"][t],
                         "kv_cache_bytes": view.kv_bytes[t], "state_bytes": view.state_bytes})  # kv after t+1 tokens
    return pd.DataFrame(rows)


def capacity_table(view, lang: str = "en") -> pd.DataFrame:
    """Pairs written and pairs recalled (mean and sd over the trials), per update (named in
    ``lang``: a table's cells keep no message, pandas stores them as plain text)."""
    rows = []
    for kind, c in view.capacity.items():
        for p, mean, sd in zip(c["pairs"], c["recalled"], c["recalled_std"]):
            rows.append({"update": said(kind, lang), "pairs_written": int(p), "pairs_recalled_mean": float(mean),
                         "pairs_recalled_sd": float(sd), "threshold": view.threshold})
    return pd.DataFrame(rows)
