"""What a trained recall model reads at each question: one layer's attention as the maps tab
draws it, a heatmap of query rows (the questions) by key columns (every position of the
sequence), with the pair each question asks for outlined (its key, then its value)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..text import Joined, Message
from .style import as_style, colorscale, finish


def recall_heatmap(inspection, layer: int, head: int | None = None, *, mixer: str = "", width: int = 0,
                   style=None) -> go.Figure:
    """The question rows of ``layer``'s map (``head``, or the mean over heads when None) of an
    ``experiments.mqar_inspect.RecallInspection``. Rows are labelled with the question's
    position, the key asked and the model's answer (✓ right, ✗ wrong); each row's asked pair
    is outlined. A signed map (the delta rule) gets a diverging scale centred on 0."""
    from ..experiments.mqar_inspect import token_name

    style = as_style(style)
    task = inspection.task
    z = inspection.rows(layer, head)
    n = z.shape[1]
    names = [token_name(t, task) for t in inspection.tokens]
    rows = [Message("mqar.inspect_row", position=q, key=token_name(k, task), answer=token_name(p, task),
                    mark="✓" if ok else "✗")
            for q, k, p, ok in zip(inspection.questions, inspection.asked, inspection.predicted, inspection.right)]
    signed = inspection.signed[layer]
    if signed:
        top = float(np.abs(z).max()) or 1.0
        colours = dict(colorscale=colorscale(style.diverging), zmid=0.0, zmin=-top, zmax=top)
    else:
        colours = dict(colorscale=colorscale(style.sequential), zmin=0.0, zmax=max(float(z.max()), 1e-6))
    hover = [[Message("mqar.inspect_hover", question=rows[i], position=j, token=names[j], weight=f"{z[i, j]:.3f}")
              for j in range(n)] for i in range(len(rows))]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(n)), y=list(range(len(rows))), hovertext=hover, hoverinfo="text", xgap=1, ygap=1,
        colorbar=dict(title=dict(text=Message("mqar.inspect_bar"), side="right"), thickness=22 if style.presentation else 14),
        **colours))
    # The asked pair of each row: its key and the value after it, outlined.
    for i, p in enumerate(inspection.pair_positions):
        fig.add_shape(type="rect", x0=p - 0.5, x1=p + 1.5, y0=i - 0.5, y1=i + 0.5, xref="x", yref="y",
                      line=dict(color="#d40000", width=style.line), fillcolor="rgba(0,0,0,0)")
    fig.update_xaxes(tickmode="array", tickvals=list(range(n)), ticktext=names, tickangle=-90,
                     title_text=Message("mqar.inspect_x"), range=[-0.5, n - 0.5])
    fig.update_yaxes(tickmode="array", tickvals=list(range(len(rows))), ticktext=rows, autorange="reversed",
                     title_text=Message("mqar.inspect_y"))
    heads = inspection.maps[layer].shape[0]
    if head is None:
        which = Message("mqar.inspect_mean", heads=heads)
    else:
        which = Message("mqar.inspect_head", head=head + 1, heads=heads,
                        weight=f"{inspection.pair_weight(layer)[head]:.2f}")
    layer_mixer = Message(f"mqar.mixer.{inspection.mixers[layer]}")
    title = Message("mqar.inspect_title", mixer=Message(f"mqar.mixer.{mixer}") if mixer else layer_mixer,
                    width=width, layer=layer + 1, layer_mixer=layer_mixer, which=which)
    sums = z.sum(1)
    note = Message("mqar.inspect_note", right=sum(inspection.right), total=len(rows), seed=inspection.seed,
                   low=f"{sums.min():.2f}", high=f"{sums.max():.2f}")
    if signed:
        note = Joined([note, Message("mqar.inspect_signed")])
    # On a projector the title's lines and the larger rows need more height for the same plot.
    fig = finish(fig, style, title, height=560 if style.presentation else 440, note=note)
    fig.update_layout(margin=dict(l=170 if style.presentation else 120, b=100 if style.presentation else 80))
    return fig
