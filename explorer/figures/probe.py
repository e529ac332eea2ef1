"""The probe page's heatmap: one metric of every (layer, head) and map, as the view averaged it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..text import Joined, Message
from .style import UnitBelow, as_style, finish


def probe_grid(values, head_labels, map_names, metric_label: str = "", texts: int = 0, style=None) -> go.Figure:
    """Heads down, maps across (``map_names``: as the reader names them), coloured by ``values``
    (heads x maps; NaN cells stay blank)."""
    style = as_style(style)
    z = np.asarray(values, dtype=np.float64)
    names = list(map_names)
    text = [["" if not np.isfinite(x) else f"{x:.2g}" for x in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=names, y=list(head_labels), colorscale=style.sequential, text=text, texttemplate="%{text}",
        textfont=dict(size=style.tick_font), xgap=1, ygap=1,
        colorbar=dict(title=dict(text=UnitBelow(metric_label), side="top")),
        hovertemplate=Joined(("%{y} · %{x}<br>", metric_label, ": %{z:.4g}<extra></extra>")),
    ))
    fig.update_xaxes(title_text=Message("probe.grid_x"), side="top", type="category")
    fig.update_yaxes(title_text=Message("probe.grid_y"), autorange="reversed", type="category")
    title = Message("probe.grid_title", metric=metric_label, texts=texts)
    # A row per head stays tall enough for its number: MiniLM's 72 heads grow the figure.
    row = 22 if style.presentation else 16
    return finish(fig, style, title, height=max(420, 160 + row * len(head_labels)),
                  note=Message("probe.grid_note"))
