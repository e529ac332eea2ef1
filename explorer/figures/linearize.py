"""Plotly figures of the linearized model: pure functions over what ``explorer.linearize``
returns (``keep_softmax``'s curves, ``sensitivity``'s rows), no gradio, no math.

- ``keep_softmax_curves``: perplexity against the number k of layers kept softmax, one solid
  curve per map kind for the greedy choice and dotted and dashed ones for the two plain rules
  (the first k, k evenly spaced), the original's perplexity as a horizontal line;
- ``sensitivity_bars``: per layer, the KL of the model with that layer alone linearized.

Every word is a message (``explorer.text``): a figure is built once and said in the page's
language at the edge (``figures.style.said_figure``).
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from ..text import Joined, Message
from .style import as_style, finish

RULE_DASH = {"greedy": "solid", "first": "dot", "even": "dash"}


def keep_softmax_curves(curves: list[dict], style=None) -> go.Figure:
    """One ``keep_softmax`` result per map kind; perplexity on a log axis (all-linear models
    are orders of magnitude worse than the original)."""
    from ..views.linearize import exact_words
    style = as_style(style)
    fig = go.Figure()
    for i, curve in enumerate(curves):
        kind = Message(f"linearize.kind_{curve['kind']}")
        for rule, dash in RULE_DASH.items():
            name = Message("linearize.curve_name", kind=kind, exact=exact_words(curve["window"], curve.get("sinks", 0)),
                           rule=Message(f"linearize.rule_{rule}"))
            fig.add_trace(go.Scatter(
                x=curve["ks"], y=curve[rule], mode="lines+markers", name=name,
                line=dict(color=style.colour(i), dash=dash, width=style.line if rule == "greedy" else style.line / 2),
                marker=dict(size=max(3, style.marker - 3)),
                hovertemplate=Joined([Message("linearize.curve_hover", name=name), "<extra></extra>"])))
    if curves:
        original_line(fig, curves[0]["original_perplexity"])
    fig.update_xaxes(title_text=Message("linearize.k_axis"))
    fig.update_yaxes(title_text=Message("linearize.perplexity_axis"), type="log")
    return finish(fig, style, Message("linearize.curve_title"), height=520 if style.presentation else 420,
                  note=Message("linearize.curve_note"))


def sensitivity_bars(rows: list[dict], kind: str, window: int, style=None, sinks: int = 0) -> go.Figure:
    """KL(original ‖ linearized) with each layer alone linearized, one bar per layer."""
    from ..views.linearize import exact_words
    style = as_style(style)
    fig = go.Figure(go.Bar(
        x=[row["layer"] for row in rows], y=[row["kl"] for row in rows], marker_color=style.colour(0),
        customdata=[[row["rank"], row["perplexity"]] for row in rows],
        hovertemplate=Joined([Message("linearize.sensitivity_hover"), "<extra></extra>"])))
    fig.update_xaxes(title_text=Message("linearize.layer_axis"), dtick=1 if len(rows) <= 12 else 2)
    fig.update_yaxes(title_text=Message("linearize.kl_axis"))
    title = Message("linearize.sensitivity_title", kind=Message(f"linearize.kind_{kind}"), exact=exact_words(window, sinks))
    return finish(fig, style, title, height=480 if style.presentation else 360)


def original_line(fig: go.Figure, original: float, decimals: int = 2, font_size=None) -> None:
    """The original model's perplexity as a dotted line across a log perplexity axis, labelled
    at its right end. On a log axis an annotation's y is log10 of the value (add_hline's own
    label would sit at 10^27 for a perplexity of 27 and stretch the axis to it)."""
    fig.add_hline(y=original, line=dict(color="#444", dash="dot", width=1))
    fig.add_annotation(x=1, xref="paper", xanchor="right", y=math.log10(original), yref="y",
                       yanchor="bottom", showarrow=False, font=dict(size=font_size) if font_size else None,
                       text=Message("linearize.original_line", value=f"{original:.{decimals}f}"))


def memory_per_step(kv_cache_bytes: list, state_bytes: list, style=None) -> go.Figure:
    """Bytes kept after each generated token: the original's KV cache against the linearized
    model's state (plus the KV cache of the layers it keeps softmax)."""
    style = as_style(style)
    fig = go.Figure()
    for i, (values, key) in enumerate(((kv_cache_bytes, "memory_original"), (state_bytes, "memory_linearized"))):
        fig.add_trace(go.Scatter(x=list(range(1, len(values) + 1)), y=list(values), mode="lines+markers",
                                 name=Message(f"linearize.{key}"), line=dict(color=style.colour(i), width=style.line),
                                 marker=dict(size=max(3, style.marker - 3))))
    fig.update_xaxes(title_text=Message("linearize.memory_step_axis"))
    fig.update_yaxes(title_text=Message("linearize.memory_bytes_axis"), rangemode="tozero")
    return finish(fig, style, Message("linearize.memory_title"), height=480 if style.presentation else 360,
                  note=Message("linearize.memory_note"))
