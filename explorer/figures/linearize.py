"""Plotly figures of the linearized model: pure functions over what ``explorer.linearize``
returns (``keep_softmax``'s curves, ``sensitivity``'s rows), no gradio, no math.

- ``keep_softmax_curves``: perplexity against the number k of layers kept softmax, one solid
  curve per map kind for the greedy choice and dotted and dashed ones for the two plain rules
  (the first k, k evenly spaced), the original's perplexity as a horizontal line;
- ``sensitivity_bars``: per layer, the KL of the model with that layer alone linearized.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from ..text import say
from .style import as_style, finish

RULE_DASH = {"greedy": "solid", "first": "dot", "even": "dash"}


def keep_softmax_curves(curves: list[dict], style=None, lang: str = "en") -> go.Figure:
    """One ``keep_softmax`` result per map kind; perplexity on a log axis (all-linear models
    are orders of magnitude worse than the original)."""
    from ..views.linearize import exact_words
    style = as_style(style)
    fig = go.Figure()
    for i, curve in enumerate(curves):
        kind = say(f"linearize.kind_{curve['kind']}", lang)
        for rule, dash in RULE_DASH.items():
            name = say("linearize.curve_name", lang, kind=kind,
                       exact=exact_words(curve["window"], curve.get("sinks", 0), lang),
                       rule=say(f"linearize.rule_{rule}", lang))
            fig.add_trace(go.Scatter(
                x=curve["ks"], y=curve[rule], mode="lines+markers", name=name,
                line=dict(color=style.colour(i), dash=dash, width=style.line if rule == "greedy" else style.line / 2),
                marker=dict(size=max(3, style.marker - 3)),
                hovertemplate=say("linearize.curve_hover", lang, name=name) + "<extra></extra>"))
    if curves:
        original_line(fig, curves[0]["original_perplexity"], lang)
    fig.update_xaxes(title_text=say("linearize.k_axis", lang))
    fig.update_yaxes(title_text=say("linearize.perplexity_axis", lang), type="log")
    return finish(fig, style, say("linearize.curve_title", lang), height=520 if style.presentation else 420,
                  note=say("linearize.curve_note", lang))


def sensitivity_bars(rows: list[dict], kind: str, window: int, style=None, lang: str = "en",
                     sinks: int = 0) -> go.Figure:
    """KL(original ‖ linearized) with each layer alone linearized, one bar per layer."""
    from ..views.linearize import exact_words
    style = as_style(style)
    fig = go.Figure(go.Bar(
        x=[row["layer"] for row in rows], y=[row["kl"] for row in rows], marker_color=style.colour(0),
        customdata=[[row["rank"], row["perplexity"]] for row in rows],
        hovertemplate=say("linearize.sensitivity_hover", lang) + "<extra></extra>"))
    fig.update_xaxes(title_text=say("linearize.layer_axis", lang), dtick=1 if len(rows) <= 12 else 2)
    fig.update_yaxes(title_text=say("linearize.kl_axis", lang))
    title = say("linearize.sensitivity_title", lang, kind=say(f"linearize.kind_{kind}", lang),
                exact=exact_words(window, sinks, lang))
    return finish(fig, style, title, height=480 if style.presentation else 360)


def original_line(fig: go.Figure, original: float, lang: str = "en", decimals: int = 2, font_size=None) -> None:
    """The original model's perplexity as a dotted line across a log perplexity axis, labelled
    at its right end. On a log axis an annotation's y is log10 of the value (add_hline's own
    label would sit at 10^27 for a perplexity of 27 and stretch the axis to it)."""
    fig.add_hline(y=original, line=dict(color="#444", dash="dot", width=1))
    fig.add_annotation(x=1, xref="paper", xanchor="right", y=math.log10(original), yref="y",
                       yanchor="bottom", showarrow=False, font=dict(size=font_size) if font_size else None,
                       text=say("linearize.original_line", lang, value=f"{original:.{decimals}f}"))


def memory_per_step(kv_cache_bytes: list, state_bytes: list, style=None, lang: str = "en") -> go.Figure:
    """Bytes kept after each generated token: the original's KV cache against the linearized
    model's state (plus the KV cache of the layers it keeps softmax)."""
    style = as_style(style)
    fig = go.Figure()
    for i, (values, key) in enumerate(((kv_cache_bytes, "memory_original"), (state_bytes, "memory_linearized"))):
        fig.add_trace(go.Scatter(x=list(range(1, len(values) + 1)), y=list(values), mode="lines+markers",
                                 name=say(f"linearize.{key}", lang), line=dict(color=style.colour(i), width=style.line),
                                 marker=dict(size=max(3, style.marker - 3))))
    fig.update_xaxes(title_text=say("linearize.memory_step_axis", lang))
    fig.update_yaxes(title_text=say("linearize.memory_bytes_axis", lang), rangemode="tozero")
    return finish(fig, style, say("linearize.memory_title", lang), height=480 if style.presentation else 360,
                  note=say("linearize.memory_note", lang))
