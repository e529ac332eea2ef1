"""Chapter 4: linear attention is an RNN: the chapter's figures, its builds in the order the speaker shows them, drawn
from its view (``view``)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..figure_common import say_bytes, finish_slide, whole_ticks
from ..text import words


def draw(view, style):
    """The chapter's builds, their words in messages (said later in the reader's language)."""
    step = view.data["step"]
    spacing = 0.2                 # room for the first panel's colour bar and its ticks
    fig = make_subplots(rows=1, cols=2, subplot_titles=(words("legend.update"), words("legend.state_t")),
                        horizontal_spacing=spacing)
    width = (1.0 - spacing) / 2
    for col, key in enumerate(("update", "state"), start=1):
        z = step[key]
        lim = float(np.abs(z).max()) or 1.0
        right = width if col == 1 else 1.0
        # Each colour bar just right of its own panel, thin, so its ticks end before the next panel.
        fig.add_heatmap(z=z, colorscale=style.diverging, zmin=-lim, zmax=lim,
                        colorbar=dict(x=right + 0.01, xanchor="left", len=0.9, thickness=14,
                                      tickfont=dict(size=style.tick_font - 2), nticks=5),
                        row=1, col=col)
        fig.update_yaxes(autorange="reversed", title_text=words("axis.feature") if col == 1 else None,
                         row=1, col=col)
        fig.update_xaxes(title_text=words("axis.value_dim"), row=1, col=col)
    n = view.numbers
    note = words("ch4.b0.note", diff=f"{n['max_abs_diff']:.1e}", rel=f"{n['max_rel_diff']:.1e}",
                 den=f"{step['denominator']:.4g}")
    first = finish_slide(fig, style, words("ch4.b0.title", t=step["t"], word=view.data["word"]), note)

    mem = view.data["memory"]
    fig2 = go.Figure()
    fig2.add_scatter(x=mem["tokens"], y=mem["kv_bytes"], mode="lines+markers", name=words("legend.kv_cache"),
                     line=dict(color=style.colour(3), width=style.line))
    fig2.add_scatter(x=mem["tokens"], y=np.full(len(mem["tokens"]), mem["state_bytes"]), mode="lines",
                     name=words("legend.state"), line=dict(color=style.colour(2), width=style.line))
    fig2.update_xaxes(type="log", title_text=words("axis.tokens_seen"))
    fig2.update_yaxes(type="log", title_text=words("axis.bytes"))
    fig2.update_layout(legend=dict(x=0.01, xanchor="left", y=0.99, yanchor="top"))
    second = finish_slide(fig2, style, words("ch4.b1.title"),
                          words("ch4.b1.note", m=f"{n['m']:.0f}", state=say_bytes(n["state_bytes"]),
                               t=f"{n['break_even_tokens']:.1f}"))

    rc = view.data["recall"]
    shown = rc["lags"] > 0          # log axis: lag 0 (nothing written over the target) is left out
    fig3 = go.Figure(go.Scatter(x=rc["lags"][shown], y=rc["cosine"][shown], mode="lines+markers",
                                error_y=dict(type="data", array=rc["cosine_std"][shown], visible=True),
                                name=words("legend.early"), line=dict(color=style.colour(0), width=style.line)))
    fig3.update_xaxes(type="log", title_text=words("axis.lag"))
    fig3.update_yaxes(title_text=words("axis.cosine"), range=[-0.2, 1.05])
    fig3.update_layout(showlegend=False)
    lags = rc["lags"][shown]
    third = finish_slide(fig3, style, words("ch4.b2.title"),
                         words("ch4.b2.note", first=f"{rc['cosine'][shown][0]:.2f}", last=f"{rc['cosine'][shown][-1]:.2f}",
                               lag=f"{int(lags[-1]):,}"))
    return [first, second, third, _generation(view, style)]


def _generation(view, style):
    """The causal model linearized, generating: bytes kept after each generated token, its
    states against the original's KV cache at the same length."""
    gen = view.data.get("generation")
    fig = go.Figure()
    if not gen:
        missing = view.data.get("model_missing")
        return finish_slide(fig, style, words("ch4.b3.title"),
                            words("note.model_missing" if missing else "ch4.b3.note_none"))
    fig.add_scatter(x=gen["context"], y=gen["kv_bytes"], mode="lines+markers", name=words("legend.kv_cache"),
                    line=dict(color=style.colour(3), width=style.line), marker=dict(size=style.marker))
    fig.add_scatter(x=gen["context"], y=gen["state_bytes"], mode="lines+markers", name=words("legend.state"),
                    line=dict(color=style.colour(2), width=style.line), marker=dict(size=style.marker))
    # Ticks stepped to the span drawn (a few hundred tokens read, a few dozen generated): stepped
    # to the largest count they fell outside it, and the axis had no label at all.
    context = [int(c) for c in gen["context"]]
    fig.update_xaxes(title_text=words("axis.tokens_in_context"),
                     **whole_ticks([max(context) - min(context)] if len(context) > 1 else context))
    fig.update_yaxes(title_text=words("axis.bytes"), rangemode="tozero")
    # Between the two lines: the KV cache runs along the top, the state along the bottom.
    fig.update_layout(legend=dict(x=0.99, xanchor="right", y=0.5, yanchor="middle"))
    return finish_slide(fig, style, words("ch4.b3.title"),
                        words("ch4.b3.note", prompt=gen["prompt_tokens"], new=gen["new_tokens"]))
