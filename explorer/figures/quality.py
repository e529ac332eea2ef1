"""The quality tab's figures: error against m (or FLOPs) with seed bands and theory lines, and
the head overview.
"""

from __future__ import annotations


import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from .style import as_style, finish, log_ticks


def quality_curves(curves: list, x: str = "m", title: str = "", note: str = "", style=None) -> go.Figure:
    """Error against m (or FLOPs), log-log: mean over seeds with a 10-90 % band, theory dashed.

    ``curves`` are objects with label, ms, flops, kernel_mse (len(ms), seeds),
    map_error (len(ms), seeds) and theory (list or None), as ``views.quality_view`` returns.
    """
    style = as_style(style)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("Kernel estimate φ(q)·φ(k) vs exp(s): relative MSE",
                                        "Attention map: relative error ‖Â − A‖/‖A‖"))
    for i, cur in enumerate(curves):
        colour = style.colour(i)
        xs = list(cur.flops if x == "flops" else cur.ms)
        for col, data in ((1, np.asarray(cur.kernel_mse)), (2, np.asarray(cur.map_error))):
            mean = np.nanmean(data, axis=1)
            lo = np.nanpercentile(data, 10, axis=1)
            hi = np.nanpercentile(data, 90, axis=1)
            group = f"g{i}"
            fig.add_trace(go.Scatter(x=xs, y=hi, mode="lines", line=dict(width=0), showlegend=False,
                                     legendgroup=group, hoverinfo="skip"), row=1, col=col)
            fig.add_trace(go.Scatter(x=xs, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                                     fillcolor=with_alpha(colour, 0.18), showlegend=False, legendgroup=group,
                                     hoverinfo="skip"), row=1, col=col)
            fig.add_trace(go.Scatter(x=xs, y=mean, mode="lines+markers", name=f"{cur.label} (measured)",
                                     line=dict(color=colour, width=style.line), marker=dict(size=style.marker),
                                     legendgroup=group, showlegend=col == 1,
                                     hovertemplate=f"{cur.label}<br>x=%{{x}}<br>mean=%{{y:.3g}}<extra></extra>"),
                          row=1, col=col)
        if cur.theory is not None:
            fig.add_trace(go.Scatter(x=xs, y=list(cur.theory), mode="lines", name=f"{cur.label} (theory, IID)",
                                     line=dict(color=colour, width=style.line, dash="dash"),
                                     hovertemplate=f"{cur.label} theory<br>x=%{{x}}<br>%{{y:.3g}}<extra></extra>"),
                          row=1, col=1)
    xtitle = "linear-path FLOPs per head" if x == "flops" else "number of features m"
    fig.update_xaxes(type="log", title_text=xtitle)
    fig.update_yaxes(type="log", title_text="relative MSE", row=1, col=1)
    fig.update_yaxes(type="log", title_text="relative error", row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", y=-0.2, x=0, yanchor="top"))
    log_ticks(fig, style)
    height = 760 if style.presentation else 600
    fig = finish(fig, style, title or "Random features: error against m", height=height, note=note)
    fig.update_layout(margin=dict(b=210 if style.presentation else 160))
    return fig


def with_alpha(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    return f"rgba({r},{g},{b},{alpha})"


def head_overview(values, layer_names=None, metric_label: str = "", map_label: str = "", style=None) -> go.Figure:
    """All (layer, head) pairs coloured by one metric: which heads are hard to approximate."""
    style = as_style(style)
    z = np.asarray(values, dtype=np.float64)
    layers, heads = z.shape
    ylabels = list(layer_names) if layer_names and len(layer_names) == layers else [f"layer {i}" for i in range(layers)]
    text = [[("—" if not np.isfinite(x) else f"{x:.2g}") for x in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(heads)), y=list(range(layers)), colorscale=style.sequential, text=text,
        texttemplate="%{text}", textfont=dict(size=style.tick_font),
        colorbar=dict(title=dict(text=metric_label.replace(" (", "<br>("), side="top")),
        hovertemplate="layer %{y}, head %{x}<br>" + metric_label + ": %{z:.4g}<extra></extra>",
    ))
    fig.update_xaxes(title_text="head", tickmode="array", tickvals=list(range(heads)),
                     ticktext=[str(h) for h in range(heads)])
    fig.update_yaxes(title_text="layer", tickmode="array", tickvals=list(range(layers)), ticktext=ylabels,
                     autorange="reversed")
    title = f"{map_label}: {metric_label} on every head"
    return finish(fig, style, title, height=620 if style.presentation else 480,
                   note="Click a cell (or a row of the table) to open that head in the maps tab.")
