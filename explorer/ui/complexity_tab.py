"""Complexity tab: a live, guarded sweep over N, and the article's 780x claim.
Endpoint: ``/complexity``.

Guards, so that no request can take the server down: N is capped (catalog.N_CAP), every
run's memory is estimated before the sweep starts, the sweep has a time budget, a user
runs one sweep at a time, and the server runs one sweep at a time for everybody
(concurrency_limit=1): timings are only meaningful on an otherwise idle CPU anyway.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import gradio as gr

from .. import catalog
from ..text import Joined, Message, normal_lang, said, say
from . import common, downloads, i18n, server
from .engine import figures_and_views

TIME_BUDGET_S = float(os.environ.get("EXPLORER_SWEEP_BUDGET_S", "60"))
MEMORY_BUDGET = int(float(os.environ.get("EXPLORER_SWEEP_MEMORY_GB", "2")) * 2**30)
# (what the user reads, what the engine gets): plain labels, never internal ids.
METHOD_CHOICES = [(i18n.label(f"cx_method_{m}"), m) for m in catalog.SWEEP_METHODS]
SWEEP_MAPS = [i18n.name_choice(name) for name in catalog.SWEEP_MAPS]

# session -> stop flag of that user's running sweep
_running: dict[str, threading.Event] = {}
_running_lock = threading.Lock()


@dataclass
class ComplexityTab:
    n_min: gr.Number
    n_max: gr.Number
    points: gr.Slider
    d: gr.Number
    m: gr.Number
    causal: gr.Checkbox
    feature_map: gr.Dropdown
    methods: gr.CheckboxGroup
    repeats: gr.Slider
    run: gr.Button
    cancel: gr.Button
    plot: gr.Plot
    claim: gr.Plot
    table: gr.Dataframe
    summary: gr.Markdown
    view: gr.State
    query: gr.Textbox
    link: gr.Textbox

    @property
    def controls(self) -> list:
        return [self.n_min, self.n_max, self.points, self.d, self.m, self.causal, self.feature_map, self.methods,
                self.repeats]

    @property
    def outputs(self) -> list:
        return [self.plot, self.claim, self.table, self.summary, self.view, self.query]


def render(view, presentation=False, lang="en"):
    """(sweep figure, claim figure) of the sweep, said in ``lang``."""
    if view is None:
        return None, None
    figures, _ = figures_and_views()
    status = (Message("complexity.status_cancelled") if view.cancelled
              else Message("complexity.status_budget") if view.truncated else "")
    p = view.params
    plot = figures.complexity(
        view.rows, view.method_labels, theory=view.theory, slopes=view.slopes, crossover=view.crossover,
        crossover_text=view.crossover_text,
        title=Message("complexity.title_run", d=p["d"], map=catalog.map_name(p["map"]), m=p["m"],
                      causal=Message("common.causal" if p["causal"] else "common.non_causal"), status=status),
        note=Message("complexity.note_rate", rate=f"{view.matmul_gflops or 0:.0f}"), style=presentation,
        disturbed=Joined(view.disturbance, "complexity.reason_sep") if view.disturbance else "")
    c = view.claim
    claim = figures.flop_claim(c["n"], c["head_dim"], c["quadratic_flops"], c["linear_flops"], c["measured"],
                               style=presentation)
    return common.said_outputs((plot, claim), normal_lang(lang))


def summary(view, lang="en") -> str:
    """The claim, the measured ratio, slopes, crossover and notes, in ``lang``."""
    lang = normal_lang(lang)
    c = view.claim
    lines = [Message("complexity.sum_claim", n=f"{c['n']:,}", d=c["head_dim"], q=f"{c['quadratic_flops']:.3g}",
                     l=f"{c['linear_flops']:.3g}", ratio=f"{c['ratio']:,.0f}")]
    if c["measured"]:
        mm = c["measured"]
        faster = mm["ratio"] >= 1          # "0.7× faster" would read as a speed-up
        lines.append(Message("complexity.sum_measured" if faster else "complexity.sum_measured_slower",
                             n=f"{mm['n']:,}", a=mm["quadratic_name"], q=f"{mm['quadratic_ms']:.3g}",
                             b=mm["linear_name"], l=f"{mm['linear_ms']:.3g}",
                             ratio=f"{mm['ratio'] if faster else 1 / mm['ratio']:.1f}", flop=f"{mm['flop_ratio']:.1f}"))
    else:
        lines.append(Message("complexity.sum_none", a=c["pair"][0], b=c["pair"][1]))
    if view.slopes:
        lines.append(Message("complexity.sum_slopes", items=Joined(
            (Joined((view.method_labels.get(k, k), f" {v:.2f}")) for k, v in view.slopes.items()), "complexity.sep")))
    lines.append(Message("complexity.sum_cross", text=view.crossover_text))
    if getattr(view, "disturbed", False):
        lines.insert(0, Message("complexity.sum_disturbed", reasons=Joined(view.disturbance, "complexity.reason_sep")))
    if view.cancelled:
        lines.append(Message("complexity.sum_cancelled"))
    if view.truncated:
        lines.append(Message("complexity.sum_budget", s=f"{TIME_BUDGET_S:.0f}"))
    with_notes = "\n".join(f"- {said(n, lang)}" for n in view.notes)
    return ("\n\n".join(say(line, lang) for line in lines)
            + f"\n\n<details><summary>{say('complexity.sum_how', lang)}</summary>\n\n" + with_notes + "\n</details>")


@common.guarded
def run_complexity(n_min=512, n_max=8192, points=5, d=64, m=0, causal=True, feature_map="elu1",
                   methods=catalog.DEFAULT_METHODS, repeats=3, presentation=False, lang="en",
                   request: gr.Request = None, progress=gr.Progress()):
    """Run the sweep and draw it in ``lang`` ("en" or "zh"). Returns (plot, claim figure,
    table, summary, view, query)."""
    _, views = figures_and_views()
    lang = normal_lang(lang)
    key = getattr(request, "session_hash", None) or "api"
    stop = threading.Event()
    left = server.visitor_left(request)       # the visitor closed the page or cancelled
    with _running_lock:
        if key in _running and key != "api":
            raise gr.Error(say("complexity.already", lang), print_exception=False)
        _running[key] = stop
    try:
        progress(0.0, desc=say("complexity.progress_rate", lang))
        from ..views.complexity import named
        view = views.complexity_view(
            n_min, n_max, points, d, m, bool(causal), feature_map, methods, repeats, memory_budget_bytes=MEMORY_BUDGET,
            time_budget_s=TIME_BUDGET_S, progress=lambda f, msg: progress(f, desc=said(named(msg), lang)),
            should_stop=lambda: stop.is_set() or left())
    finally:
        with _running_lock:
            if _running.get(key) is stop:
                del _running[key]
    plot, claim = render(view, presentation)          # said in ``lang`` by ``guarded``
    params = {"tab": "complexity", "nmin": n_min, "nmax": n_max, "points": points, "cd": d, "cm": m,
              "ccausal": bool(causal), "cmap": feature_map, "methods": methods, "repeats": repeats,
              "present": bool(presentation)}
    from .. import provenance            # random data: the settings (and the machine) are the record
    view.provenance = provenance.record("complexity", settings=params)
    return plot, claim, views.complexity_table(view), summary(view, lang), view, common.query_string(params)


def cancel(lang="en", request: gr.Request = None):
    key = getattr(request, "session_hash", None) or "api"
    with _running_lock:
        stop = _running.get(key)
    if stop is None:
        gr.Info(say("complexity.none_running", lang))
    else:
        stop.set()
        gr.Info(say("complexity.cancelling", lang))


# views.complexity.TABLE_COLUMNS, named here without importing the engine (the page is built first)
RUN_COLUMNS = ("method", "n", "causal", "time_ms", "time_min_ms", "time_max_ms", "time_iqr_ms", "gflops",
               "peak_mem_bytes", "flops", "skipped")


def run_columns(lang: str) -> list[str]:
    """The headers of the table of runs in ``lang`` (shown before the first sweep too)."""
    return [say(f"complexity.col.{column}", lang) for column in RUN_COLUMNS]


def relang(view, lang, presentation=False):
    """The sweep already run, said in ``lang``: figures, summary and table said again, nothing
    timed again; before any sweep, the empty table's headers. Returns (plot, claim, view,
    summary, table); the view is the same in every language and stays as it is."""
    lang = normal_lang(lang)
    if view is None:
        import pandas as pd
        return gr.skip(), gr.skip(), gr.skip(), gr.skip(), pd.DataFrame(columns=run_columns(lang))
    _, views = figures_and_views()
    plot, claim = render(view, presentation, lang)
    return plot, claim, gr.skip(), summary(view, lang), common.said_outputs(views.complexity_table(view), lang)


def build(presentation: gr.Checkbox, lang: gr.Radio | None = None) -> ComplexityTab:
    """The tab; with ``lang`` (the page's language switch) its run-time text follows it."""
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            with gr.Row():
                n_min = gr.Number(512, precision=0, minimum=16, maximum=catalog.N_CAP, label=i18n.label("cx_nmin"), elem_id="cx-nmin")
                n_max = gr.Number(8192, precision=0, minimum=16, maximum=catalog.N_CAP, label=i18n.label("cx_nmax"), info=f"≤ {catalog.N_CAP:,}",
                                  elem_id="cx-nmax")
            points = gr.Slider(1, catalog.MAX_POINTS, value=5, step=1, label=i18n.label("cx_points"), elem_id="cx-points")
            with gr.Row():
                d = gr.Number(64, precision=0, minimum=1, maximum=512, label=i18n.label("panel_d"), elem_id="cx-d")
                m = gr.Number(0, precision=0, minimum=0, maximum=2048, label=i18n.label("cx_m"), info=i18n.label("cx_m_info"),
                               elem_id="cx-m")
            feature_map = gr.Dropdown(SWEEP_MAPS, value="elu1", label=i18n.label("cx_map"), elem_id="cx-map")
            causal = gr.Checkbox(True, label=i18n.label("causal"), info=i18n.label("cx_causal_info"), elem_id="cx-causal")
            methods = gr.CheckboxGroup(METHOD_CHOICES, value=list(catalog.DEFAULT_METHODS), label=i18n.label("cx_methods"),
                                       elem_id="cx-methods")
            repeats = gr.Slider(1, 10, value=3, step=1, label=i18n.label("cx_repeats"), info=i18n.label("cx_repeats_info"), elem_id="cx-repeats")
            with gr.Row():
                run = gr.Button(i18n.label("cx_run"), variant="primary", elem_id="cx-run")
                stop = gr.Button(i18n.label("cx_cancel"), variant="stop", elem_id="cx-cancel")
        with gr.Column(scale=5):
            plot = gr.Plot(label=i18n.label("cx_plot"), show_label=False, elem_id="cx-plot")
            # Timing takes the whole CPU for up to a minute: it runs on request (or from a link), not on opening.
            summary_md = gr.Markdown(i18n.label("cx_start"), elem_id="cx-summary")
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            claim = gr.Plot(label=i18n.label("cx_claim"), show_label=False, elem_id="cx-claim")
        with gr.Column(scale=3):
            table = gr.Dataframe(label=i18n.label("cx_table"), headers=run_columns("en"), interactive=False,
                                 max_height=420, elem_id="cx-table")
    export, files, link, view, query = common.export_band("export_complexity")
    tab = ComplexityTab(n_min, n_max, points, d, m, causal, feature_map, methods, repeats, run, stop, plot, claim,
                        table, summary_md, view, query, link)

    with_lang = [lang] if lang is not None else []
    run.click(run_complexity, tab.controls + [presentation] + with_lang, tab.outputs, api_name="complexity",
              concurrency_limit=1, concurrency_id="sweep").then(None, query, link, js=common.SET_URL_JS)
    # Not queued behind the sweep it cancels.
    stop.click(cancel, with_lang, None, api_visibility="private", queue=False)
    if lang is not None:
        lang.change(relang, [view, lang, presentation], [plot, claim, view, summary_md, table],
                    api_visibility="private", queue=False)

    @common.guarded
    def export_complexity(view, presentation, lang="en"):
        if view is None:
            raise gr.Error(say("complexity.run_first", lang), print_exception=False)
        _, views = figures_and_views()
        plot_fig, claim_fig = render(view, presentation, lang)    # the files are written here: said first
        return common.show_files(downloads.export_files("complexity", {"sweep": plot_fig, "claim": claim_fig},
                                   {"runs": common.said_outputs(views.complexity_table(view), normal_lang(lang))},
                                   provenance=getattr(view, "provenance", None) or None))

    common.wire_export(export, export_complexity, [view, presentation] + with_lang, files)
    return tab
