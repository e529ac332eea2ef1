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
from ..text import normal_lang, say
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


def render(view, presentation=False):
    """(sweep figure, claim figure) in the language the sweep was run in."""
    if view is None:
        return None, None
    figures, views = figures_and_views()
    from ..views.complexity import shown
    view = shown(view)
    lang = view.lang
    status = (say("complexity.status_cancelled", lang) if view.cancelled
              else say("complexity.status_budget", lang) if view.truncated else "")
    p = view.params
    plot = figures.complexity(
        view.rows, view.method_labels, theory=view.theory, slopes=view.slopes, crossover=view.crossover,
        crossover_text=view.crossover_text,
        title=say("complexity.title_run", lang, d=p["d"], map=catalog.map_name(p["map"]), m=p["m"],
                causal=say("common.causal" if p["causal"] else "common.non_causal", lang), status=status),
        note=say("complexity.note_rate", lang, rate=f"{view.matmul_gflops or 0:.0f}"), style=presentation,
        disturbed=say("complexity.reason_sep", lang).join(getattr(view, "disturbance", [])), lang=lang)
    c = view.claim
    claim = figures.flop_claim(c["n"], c["head_dim"], c["quadratic_flops"], c["linear_flops"], c["measured"],
                               style=presentation, lang=lang)
    return plot, claim


def summary(view) -> str:
    """The claim, the measured ratio, slopes, crossover and notes, in the sweep's language."""
    figures_and_views()
    from ..views.complexity import shown
    view = shown(view)
    c = view.claim
    lang = getattr(view, "lang", "en")
    lines = [say("complexity.sum_claim", lang, n=f"{c['n']:,}", d=c["head_dim"], q=f"{c['quadratic_flops']:.3g}",
               l=f"{c['linear_flops']:.3g}", ratio=f"{c['ratio']:,.0f}")]
    if c["measured"]:
        mm = c["measured"]
        faster = mm["ratio"] >= 1          # "0.7× faster" would read as a speed-up
        lines.append(say("complexity.sum_measured" if faster else "complexity.sum_measured_slower", lang,
                       n=f"{mm['n']:,}", a=mm["quadratic_name"], q=f"{mm['quadratic_ms']:.3g}",
                       b=mm["linear_name"], l=f"{mm['linear_ms']:.3g}", ratio=f"{mm['ratio'] if faster else 1 / mm['ratio']:.1f}", flop=f"{mm['flop_ratio']:.1f}"))
    else:
        lines.append(say("complexity.sum_none", lang, a=c["pair"][0], b=c["pair"][1]))
    if view.slopes:
        lines.append(say("complexity.sum_slopes", lang, items=say("complexity.sep", lang).join(
            f"{view.method_labels.get(k, k)} {v:.2f}" for k, v in view.slopes.items())))
    lines.append(say("complexity.sum_cross", lang, text=view.crossover_text))
    if getattr(view, "disturbed", False):
        lines.insert(0, say("complexity.sum_disturbed", lang,
                          reasons=say("complexity.reason_sep", lang).join(view.disturbance)))
    if view.cancelled:
        lines.append(say("complexity.sum_cancelled", lang))
    if view.truncated:
        lines.append(say("complexity.sum_budget", lang, s=f"{TIME_BUDGET_S:.0f}"))
    with_notes = "\n".join(f"- {n}" for n in view.notes)
    return ("\n\n".join(lines) + f"\n\n<details><summary>{say('complexity.sum_how', lang)}</summary>\n\n"
            + with_notes + "\n</details>")


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
        from ..views.complexity import say_sentence
        view = views.complexity_view(
            n_min, n_max, points, d, m, bool(causal), feature_map, methods, repeats, memory_budget_bytes=MEMORY_BUDGET,
            time_budget_s=TIME_BUDGET_S, progress=lambda f, msg: progress(f, desc=say_sentence(msg, lang)),
            should_stop=lambda: stop.is_set() or left(), lang=lang)
    finally:
        with _running_lock:
            if _running.get(key) is stop:
                del _running[key]
    plot, claim = render(view, presentation)
    params = {"tab": "complexity", "nmin": n_min, "nmax": n_max, "points": points, "cd": d, "cm": m,
              "ccausal": bool(causal), "cmap": feature_map, "methods": methods, "repeats": repeats,
              "present": bool(presentation)}
    from .. import provenance            # random data: the settings (and the machine) are the record
    view.provenance = provenance.record("complexity", settings=params)
    return plot, claim, views.complexity_table(view), summary(view), view, common.query_string(params)


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
    """The sweep already run, shown in ``lang``: figures, summary and table redrawn, nothing
    timed again; before any sweep, the empty table's headers. Returns (plot, claim, view,
    summary, table)."""
    if view is None:
        import pandas as pd
        return gr.skip(), gr.skip(), gr.skip(), gr.skip(), pd.DataFrame(columns=run_columns(normal_lang(lang)))
    if getattr(view, "lang", "en") == normal_lang(lang):
        return tuple(gr.skip() for _ in range(5))
    import dataclasses
    _, views = figures_and_views()
    view = dataclasses.replace(view, lang=normal_lang(lang))
    plot, claim = render(view, presentation)
    return plot, claim, view, summary(view), views.complexity_table(view)


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
        plot_fig, claim_fig = render(view, presentation)
        return common.show_files(downloads.export_files("complexity", {"sweep": plot_fig, "claim": claim_fig},
                                   {"runs": views.complexity_table(view)},
                                   provenance=getattr(view, "provenance", None) or None))

    common.wire_export(export, export_complexity, [view, presentation] + with_lang, files)
    return tab
