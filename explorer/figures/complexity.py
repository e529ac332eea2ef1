"""The complexity tab's figures: measured time and memory against N on log axes with fitted
slopes and FLOP lines, and the FLOP-model claim.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots
from ..text import Joined, Message
from .style import PROJECTOR_FIGURE_PX, as_style, finish, log_ticks



def complexity(rows: list, method_labels: dict, theory: dict | None = None, slopes: dict | None = None,
               crossover: float | None = None, crossover_text: str = "", title: str = "", note: str = "",
               style=None, disturbed: str = "") -> go.Figure:
    """Measured time and peak memory against N (log-log), one line per method.

    ``rows`` are bench rows (method, n, time_ms, peak_mem_bytes, skipped). ``theory`` is
    method -> (ns, ms) from the FLOP model at the measured matmul rate, drawn dotted.
    Slopes go into the legend; the crossover N is a vertical line with its value written.
    ``disturbed`` (the reason, when other load moved the timings): every point carries its
    spread (fastest to slowest round), lines are dashed, and the title and note say why.
    Words are messages (``method_labels``, ``crossover_text`` and ``disturbed`` may be too),
    said at the edge.
    """
    style = as_style(style)
    slopes = slopes or {}
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=(Message("complexity.panel_time"), Message("complexity.panel_memory")))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for i, method in enumerate(methods):
        colour = style.colour(i)
        pts = sorted((r["n"], r) for r in rows if r["method"] == method and not r.get("skipped")
                     and r.get("time_ms") is not None)
        if not pts:
            continue
        label = method_labels.get(method, method)
        if method in slopes:
            label = Message("complexity.slope", label=label, slope=f"{slopes[method]:.2f}")
        ns = [n for n, _ in pts]
        spread = None
        if disturbed and all(r.get("time_min_ms") is not None and r.get("time_max_ms") is not None for _, r in pts):
            spread = dict(type="data", symmetric=False, visible=True, color=colour, thickness=max(1, style.line / 2),
                          array=[r["time_max_ms"] - r["time_ms"] for _, r in pts],
                          arrayminus=[r["time_ms"] - r["time_min_ms"] for _, r in pts])
        fig.add_trace(go.Scatter(x=ns, y=[r["time_ms"] for _, r in pts], mode="lines+markers", name=label,
                                 legendgroup=method, error_y=spread,
                                 line=dict(color=colour, width=style.line, dash="dash" if disturbed else None),
                                 marker=dict(size=style.marker),
                                 hovertemplate=Joined((method_labels.get(method, method),
                                                       "<br>N=%{x}<br>%{y:.3g} ms<extra></extra>"))),
                      row=1, col=1)
        mem = [(n, r["peak_mem_bytes"] / 2**20) for n, r in pts if r.get("peak_mem_bytes")]
        if mem:
            fig.add_trace(go.Scatter(x=[n for n, _ in mem], y=[b for _, b in mem], mode="lines+markers", name=label,
                                     legendgroup=method, showlegend=False, line=dict(color=colour, width=style.line),
                                     marker=dict(size=style.marker),
                                     hovertemplate="N=%{x}<br>%{y:.3g} MiB<extra></extra>"),
                          row=1, col=2)
        if theory and method in theory:
            tn, tms = theory[method]
            fig.add_trace(go.Scatter(x=list(tn), y=list(tms), mode="lines",
                                     name=Message("complexity.flop_line", label=method_labels.get(method, method)),
                                     legendgroup=method, showlegend=False,
                                     line=dict(color=colour, width=max(1, style.line / 2), dash="dot"),
                                     hovertemplate=Joined((Message("complexity.hover_model"),
                                                           "<br>N=%{x}<br>%{y:.3g} ms<extra></extra>"))),
                          row=1, col=1)
    if theory and any(method in theory for method in methods):
        # One legend entry for the dotted style (each dotted line has its method's colour).
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=Message("complexity.flop_model"),
                                 hoverinfo="skip",
                                 line=dict(color="#555", width=max(1, style.line / 2), dash="dot")), row=1, col=1)
    if crossover:
        fig.add_vline(x=crossover, line=dict(color="#444", width=max(1, style.line / 2), dash="dash"), row=1, col=1)
        fig.add_annotation(x=math.log10(crossover), y=0.02, xref="x", yref="y domain", yanchor="bottom",
                           text=Message("complexity.crossover", n=f"{crossover:,.0f}"), showarrow=False,
                           font=dict(size=style.font), bgcolor="rgba(255,255,255,0.85)")
    ns_all = sorted({r["n"] for r in rows})
    if 1 < len(ns_all) <= 12:
        fig.update_xaxes(tickmode="array", tickvals=ns_all, ticktext=[f"{n:,}" for n in ns_all])
    log_ticks(fig, style)
    fig.update_xaxes(type="log", title_text=Message("complexity.x"))
    fig.update_yaxes(type="log", title_text=Message("complexity.y_time"), row=1, col=1)
    fig.update_yaxes(type="log", title_text=Message("complexity.y_memory"), row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", y=-0.2, x=0, yanchor="top"))
    parts = [x for x in (disturbed, crossover_text, note) if x]
    full_note = Joined(parts, "complexity.note_sep") if parts else ""
    title = title or Message("complexity.title")
    if disturbed:
        title = Message("complexity.title_disturbed", title=title)
    # On a projector the figure fits the window under the tab row (the note keeps the
    # crossover and any disturbance: they are what the figure claims).
    fig = finish(fig, style, title, height=600, note=full_note, total=PROJECTOR_FIGURE_PX + 100)
    if style.presentation:
        # The legend at the figure's bottom edge, under the axis titles of the short plot.
        fig.update_layout(margin=dict(b=200), legend=dict(y=0, yanchor="bottom", yref="container"))
    else:
        fig.update_layout(margin=dict(b=170))
    return fig


def flop_claim(n: int, head_dim: int, quadratic: float, linear: float, measured: dict | None = None,
               style=None) -> go.Figure:
    """The article's claim as two bars (log scale): FLOPs of the quadratic and linear path."""
    style = as_style(style)
    fig = go.Figure(go.Bar(x=[Message("complexity.claim_softmax"), Message("complexity.claim_linear")],
                           y=[quadratic, linear],
                           marker_color=[style.colour(3), style.colour(0)],
                           text=[f"{quadratic:.3g}", f"{linear:.3g}"], textposition="inside", insidetextanchor="end",
                           textfont=dict(size=style.font, color="white")))
    # Log scale from 1 so that both bars have visible length and room for their labels.
    fig.update_yaxes(type="log", title_text=Message("complexity.claim_y"), range=[0, math.log10(quadratic) * 1.08],
                     dtick=2)
    fig.update_xaxes(title_text=Message("complexity.claim_x"))
    title = Message("complexity.claim_title", ratio=f"{quadratic / linear:,.0f}", n=f"{n:,}", d=head_dim)
    note = ""
    if measured:
        faster = measured["ratio"] >= 1
        note = Message("complexity.claim_measured" if faster else "complexity.claim_measured_slower",
                 n=f"{measured['n']:,}", q=f"{measured['quadratic_ms']:.3g}", l=f"{measured['linear_ms']:.3g}",
                 # the two forms timed (views.complexity.measured_headline), else the bars' names
                 a=measured.get("quadratic_name") or Message("complexity.claim_softmax"),
                 b=measured.get("linear_name") or Message("complexity.claim_linear"),
                 ratio=f"{measured['ratio'] if faster else 1 / measured['ratio']:.1f}")
        if measured.get("disturbed"):
            note = Joined((note, Message("complexity.claim_disturbed")))
    return finish(fig, style, title, height=520 if style.presentation else 420, note=note, width=0.4)
