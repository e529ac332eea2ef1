"""The state tab's figures: the update and the state at step t, state norms and recall over
time, and KV-cache bytes against state bytes.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from .style import as_style, finish, finite_values


def state_step(update, state, t: int, token: str = "", kind: str = "", style=None) -> go.Figure:
    """Step t of the RNN view: the outer product φ(k_t) v_tᵀ added, and the state S_t."""
    style = as_style(style)
    update, state = np.asarray(update), np.asarray(state)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=(f"φ(k_t) v_tᵀ added at t = {t}" + (f" ({token})" if token else ""),
                                        f"state S_t after t = {t}" + (f", decay: {kind}" if kind else "")))
    for col, z, axis, label in ((1, update, "coloraxis", "update"), (2, state, "coloraxis2", "S_t")):
        fig.add_trace(go.Heatmap(z=z, coloraxis=axis, name=label,
                                 hovertemplate="feature %{y}, value dim %{x}<br>%{z:.4g}<extra>" + label + "</extra>"),
                      row=1, col=col)
    # Each colour bar lies under its own heatmap: beside it, its ticks would run into the
    # next heatmap's axis title.
    for axis, z, col, label in (("coloraxis", update, 1, "update"), ("coloraxis2", state, 2, "S_t entry")):
        vmax = finite_values([z])
        vmax = float(np.abs(vmax).max()) if vmax.size else 1.0
        x0, x1 = fig.layout["xaxis" + ("" if col == 1 else "2")].domain
        fig.update_layout({axis: dict(colorscale=style.diverging, cmid=0, cmin=-vmax or -1, cmax=vmax or 1,
                                      colorbar=dict(orientation="h", x=(x0 + x1) / 2, xanchor="center",
                                                    len=x1 - x0, lenmode="fraction", y=-0.2, yanchor="top",
                                                    thickness=18 if style.presentation else 12,
                                                    title=dict(text=label, side="top")))})
    fig.update_xaxes(title_text="value dimension j")
    fig.update_yaxes(title_text="key feature i of φ", autorange="reversed")
    fig = finish(fig, style, "Causal linear attention as an RNN: S_t = G_t ⊙ S_{t−1} + φ(k_t) v_tᵀ",
                 height=720 if style.presentation else 560)
    fig.update_layout(margin=dict(b=200 if style.presentation else 150))
    return fig


def state_curves(ts, traces: dict, recall: dict, t_marker: int | None = None, style=None) -> go.Figure:
    """Curves over t of ‖S_t‖, ‖z_t‖ and effective rank per decay kind, and recall against lag.

    ``traces``: kind -> dict(state_norm, normaliser_norm, effective_rank) arrays of length N.
    ``recall``: kind -> dict(lags, cosine, cosine_std).
    """
    style = as_style(style)
    fig = make_subplots(rows=2, cols=2, vertical_spacing=0.18, horizontal_spacing=0.1,
                        subplot_titles=("‖S_t‖ (Frobenius)", "‖z_t‖ (normaliser)", "effective rank of S_t",
                                        "recall, synthetic keys: early (solid), recent (dashed)"))
    ts = list(ts)
    for i, (kind, tr) in enumerate(traces.items()):
        colour = style.colour(i)
        for (r, c), key in (((1, 1), "state_norm"), ((1, 2), "normaliser_norm"), ((2, 1), "effective_rank")):
            fig.add_trace(go.Scatter(x=ts, y=list(np.asarray(tr[key])), mode="lines", name=kind, legendgroup=kind,
                                     showlegend=(r, c) == (1, 1), line=dict(color=colour, width=style.line)),
                          row=r, col=c)
        if kind in recall:
            rc = recall[kind]
            lags = list(np.asarray(rc["lags"]))
            cos = np.asarray(rc["cosine"], dtype=np.float64)
            std = np.asarray(rc["cosine_std"], dtype=np.float64)
            fig.add_trace(go.Scatter(x=lags, y=list(cos), mode="lines+markers", name=kind, legendgroup=kind,
                                     showlegend=False, line=dict(color=colour, width=style.line),
                                     marker=dict(size=style.marker),
                                     error_y=dict(type="data", array=list(std), visible=True, thickness=1),
                                     hovertemplate=f"{kind}, early key<br>lag %{{x}}: cosine %{{y:.2f}}<extra></extra>"),
                          row=2, col=2)
            if "recent_cosine" in rc:      # a key written last: what decay keeps clean
                fig.add_trace(go.Scatter(x=lags, y=list(np.asarray(rc["recent_cosine"], dtype=np.float64)),
                                         mode="lines+markers", name=f"{kind} (recent key)", legendgroup=kind,
                                         showlegend=False, line=dict(color=colour, width=style.line, dash="dash"),
                                         marker=dict(size=style.marker, symbol="diamond"),
                                         hovertemplate=f"{kind}, recent key<br>lag %{{x}}: cosine %{{y:.2f}}"
                                                       "<extra></extra>"),
                              row=2, col=2)
    if t_marker is not None:
        for r, c in ((1, 1), (1, 2), (2, 1)):
            fig.add_vline(x=t_marker, line=dict(color="#777", dash="dot", width=max(1, style.line / 2)), row=r, col=c)
    for r, c in ((1, 1), (1, 2), (2, 1)):
        fig.update_xaxes(title_text="token t", row=r, col=c)
    fig.update_xaxes(title_text="lag (other keys written after / before it)", type="log", row=2, col=2)
    fig.update_yaxes(title_text="‖S_t‖_F", row=1, col=1)
    fig.update_yaxes(title_text="‖z_t‖₂", row=1, col=2)
    fig.update_yaxes(title_text="effective rank", row=2, col=1)
    fig.update_yaxes(title_text="cosine(read-out, value)", row=2, col=2)
    # The legend under the panels: above them it would share the line with the title.
    fig.update_layout(legend=dict(title=dict(text="decay"), orientation="h", y=-0.1, x=0, yanchor="top"))
    fig = finish(fig, style, "What the fixed-size state holds over time", height=900 if style.presentation else 740)
    fig.update_layout(margin=dict(b=150 if style.presentation else 120))
    return fig


def memory_growth(ts, kv_bytes, state_bytes: float, labels=("softmax KV cache", "linear-attention state"),
                  style=None) -> go.Figure:
    """Softmax's KV cache grows with t; the recurrent state stays the same size."""
    style = as_style(style)
    ts = list(ts)
    kib = [b / 1024 for b in kv_bytes]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ts, y=kib, mode="lines", name=labels[0], line=dict(color=style.colour(3), width=style.line)))
    cross = next((t for t, b in zip(ts, kv_bytes) if b >= state_bytes), None)
    if cross is not None:
        fig.add_vline(x=cross, line=dict(color="#777", dash="dot", width=max(1, style.line / 2)))
        fig.add_annotation(x=math.log10(cross), y=1, yref="paper", yanchor="top", xanchor="left", showarrow=False,
                           text=f" the cache outgrows the state at t = {cross:,}", font=dict(size=style.font))
    fig.add_trace(go.Scatter(x=ts, y=[state_bytes / 1024] * len(ts), mode="lines", name=labels[1],
                             line=dict(color=style.colour(0), width=style.line, dash="dash")))
    # Log-log: the cache is a line of slope 1, the state a flat line, both visible at once.
    fig.update_xaxes(title_text="tokens seen t", type="log")
    fig.update_yaxes(title_text="memory per head (KiB, float32)", type="log")
    # The legend under the plot: inside it, it would cover the crossing's note.
    fig.update_layout(legend=dict(orientation="h", x=0, y=-0.3, xanchor="left", yanchor="top"))
    fig = finish(fig, style, "Memory while decoding: KV cache vs fixed state", height=600 if style.presentation else 480)
    fig.update_layout(margin=dict(b=190 if style.presentation else 150))
    return fig
