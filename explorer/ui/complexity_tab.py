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
from . import common, i18n

TIME_BUDGET_S = float(os.environ.get("EXPLORER_SWEEP_BUDGET_S", "60"))
MEMORY_BUDGET = int(float(os.environ.get("EXPLORER_SWEEP_MEMORY_GB", "2")) * 2**30)
# (what the user reads, what the engine gets): plain labels, never internal ids.
METHOD_CHOICES = [(catalog.SWEEP_METHOD_LABELS[m], m) for m in catalog.SWEEP_METHODS]
RUN_COLUMNS = ["method", "N", "causal", "time (ms, median)", "IQR (ms)", "GFLOP/s", "extra peak (bytes)",
               "FLOPs (model)", "skipped because"]           # views.complexity_table's columns
SWEEP_MAPS = [(catalog.FEATURE_MAPS[name].pretty, name) for name in catalog.SWEEP_MAPS]

# session -> stop flag of that user's running sweep
_running: dict[str, threading.Event] = {}
_running_lock = threading.Lock()


def _engine():
    """(figures, views), imported on first use: see common.import_engine."""
    common.import_engine()
    from .. import figures, views
    return figures, views


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
    if view is None:
        return None, None
    figures, _ = _engine()
    status = " · cancelled" if view.cancelled else (" · time budget reached" if view.truncated else "")
    p = view.params
    plot = figures.complexity(
        view.rows, view.method_labels, theory=view.theory, slopes=view.slopes, crossover=view.crossover,
        crossover_text=view.crossover_text,
        title=f"Cost against N · d = {p['d']}, {map_label(p['map'])} m = {p['m']}, {'causal' if p['causal'] else 'non-causal'}{status}",
        note=f"dense matmul in the same run: {view.matmul_gflops or 0:.0f} GFLOP/s", style=presentation,
        disturbed="; ".join(getattr(view, "disturbance", [])))
    c = view.claim
    claim = figures.flop_claim(c["n"], c["head_dim"], c["quadratic_flops"], c["linear_flops"], c["measured"],
                               style=presentation)
    return plot, claim


def map_label(name: str) -> str:
    facts = catalog.FEATURE_MAPS.get(name)
    return facts.pretty if facts else name


def summary(view) -> str:
    c = view.claim
    lines = [f"**The article's claim** (N = {c['n']:,}, d = {c['head_dim']}, m = d): softmax needs "
             f"{c['quadratic_flops']:.3g} FLOPs per head, linear attention {c['linear_flops']:.3g}: "
             f"**{c['ratio']:,.0f}× fewer** (the article says about 780×)."]
    if c["measured"]:
        mm = c["measured"]
        lines.append(f"Measured here at the largest N both ran (N = {mm['n']:,}): SDPA {mm['quadratic_ms']:.3g} ms, "
                     f"non-causal linear {mm['linear_ms']:.3g} ms, **{mm['ratio']:.1f}× faster** "
                     f"(FLOP ratio at that N: {mm['flop_ratio']:.1f}×).")
    else:
        lines.append("No N where both SDPA and non-causal linear attention were measured: select both to compare.")
    if view.slopes:
        lines.append("Fitted log-log slopes: " + ", ".join(f"{view.method_labels.get(k, k)} {v:.2f}"
                                                          for k, v in view.slopes.items()))
    lines.append(f"Crossover: {view.crossover_text}.")
    if getattr(view, "disturbed", False):
        lines.insert(0, "**⚠ Measurement disturbed by other load** (" + "; ".join(view.disturbance) +
                     "): the times below are not this machine's quiet speed; the plot shows each point's spread. "
                     "Run again when the machine is idle.")
    if view.cancelled:
        lines.append("⚠ Sweep cancelled: the plot shows what was measured before.")
    if view.truncated:
        lines.append(f"⚠ Time budget ({TIME_BUDGET_S:.0f} s) reached: the largest runs were skipped.")
    with_notes = "\n".join(f"- {n}" for n in view.notes)
    return "\n\n".join(lines) + "\n\n<details><summary>How this was measured</summary>\n\n" + with_notes + "\n</details>"


@common.guarded
def run_complexity(n_min=512, n_max=8192, points=5, d=64, m=0, causal=True, feature_map="elu1",
                   methods=catalog.DEFAULT_METHODS, repeats=3, presentation=False,
                   request: gr.Request = None, progress=gr.Progress()):
    """Run the sweep and draw it. Returns (plot, claim figure, table, summary, view, query)."""
    _, views = _engine()
    key = getattr(request, "session_hash", None) or "api"
    stop = threading.Event()
    with _running_lock:
        if key in _running and key != "api":
            raise gr.Error("A sweep of yours is already running: wait for it or cancel it.", print_exception=False)
        _running[key] = stop
    try:
        progress(0.0, desc="measuring the dense matmul rate")
        view = views.complexity_view(
            n_min, n_max, points, d, m, bool(causal), feature_map, methods, repeats, memory_budget_bytes=MEMORY_BUDGET,
            time_budget_s=TIME_BUDGET_S, progress=lambda f, msg: progress(f, desc=msg), should_stop=stop.is_set)
    finally:
        with _running_lock:
            if _running.get(key) is stop:
                del _running[key]
    plot, claim = render(view, presentation)
    params = {"tab": "complexity", "nmin": n_min, "nmax": n_max, "points": points, "cd": d, "cm": m,
              "ccausal": bool(causal), "cmap": feature_map, "methods": methods, "repeats": repeats,
              "present": bool(presentation)}
    return plot, claim, views.complexity_table(view), summary(view), view, common.query_string(params)


def cancel(request: gr.Request = None):
    key = getattr(request, "session_hash", None) or "api"
    with _running_lock:
        stop = _running.get(key)
    if stop is None:
        gr.Info("No sweep is running.")
    else:
        stop.set()
        gr.Info("Cancelling: the sweep stops after the current measurement.")


def build(presentation: gr.Checkbox) -> ComplexityTab:
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
            summary_md = gr.Markdown("Press **Run the sweep** to time every method at each N (it takes up to "
                                     f"{TIME_BUDGET_S:.0f} s and the whole CPU), or open a complexity link.",
                                     elem_id="cx-summary")
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            claim = gr.Plot(label=i18n.label("cx_claim"), show_label=False, elem_id="cx-claim")
        with gr.Column(scale=3):
            table = gr.Dataframe(label=i18n.label("cx_table"), headers=RUN_COLUMNS, interactive=False, max_height=420,
                                 elem_id="cx-table")
    export, files, link, view, query = common.export_band("export_complexity")
    tab = ComplexityTab(n_min, n_max, points, d, m, causal, feature_map, methods, repeats, run, stop, plot, claim,
                        table, summary_md, view, query, link)

    run.click(run_complexity, tab.controls + [presentation], tab.outputs, api_name="complexity",
              concurrency_limit=1, concurrency_id="sweep").then(None, query, link, js=common.SET_URL_JS)
    # Not queued behind the sweep it cancels.
    stop.click(cancel, None, None, api_visibility="private", queue=False)

    @common.guarded
    def export_complexity(view, presentation):
        if view is None:
            raise gr.Error("Run the sweep first.", print_exception=False)
        _, views = _engine()
        plot_fig, claim_fig = render(view, presentation)
        return common.show_files(common.export_files("complexity", {"sweep": plot_fig, "claim": claim_fig},
                                   {"runs": views.complexity_table(view)}))

    common.wire_export(export, export_complexity, [view, presentation], files)
    return tab
