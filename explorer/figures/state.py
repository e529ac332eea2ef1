"""The state tab's figures: one step of an update (what it erases, what it writes, the state
after it), state norms and recall over time, the capacity of each update, and KV-cache bytes
against state bytes. Every word is a ``Message`` of ``explorer.text``: the figures are built
once and said in the page's language at the edge (``style.said_figure``).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import mechanisms
from ..text import Joined, Message
from .style import PROJECTOR_FIGURE_PX, as_style, finish, finite_values

REFERENCE_COLOUR = "#777"


def _vmax(*arrays) -> float:
    values = finite_values(list(arrays))
    top = float(np.abs(values).max()) if values.size else 0.0
    return top or 1.0


def _bar(style, x0, x1, label, cmax):
    """A horizontal colour bar under the panels from x0 to x1 of the paper: beside a heatmap
    its ticks would run into the next heatmap's axis title."""
    return dict(colorscale=style.diverging, cmid=0, cmin=-cmax, cmax=cmax,
                colorbar=dict(orientation="h", x=(x0 + x1) / 2, xanchor="center", len=x1 - x0, lenmode="fraction",
                              y=-0.2, yanchor="top", thickness=18 if style.presentation else 12,
                              title=dict(text=label, side="top")))


def state_step(update, state, t: int, token: str = "", kind: str = "", style=None, *, erased=None,
               kind_id: str = "linear") -> go.Figure:
    """Step t of one update as heatmaps.

    Without ``erased``: what step t adds (φ(k_t) v_tᵀ, or HGRN2's (1 − f_t) v_tᵀ) and the
    state S_t, data[0] and data[1]. With ``erased`` (the delta rule): what it erases, what
    it writes and S_t, left to right; data[0] is still the written part and data[1] S_t,
    data[2] the erased part. Erased and written share one colour scale, so their sizes
    compare at a glance.
    """
    style = as_style(style)
    update, state = np.asarray(update), np.asarray(state)
    quoted = f" “{token}”" if token else ""
    delta = erased is not None
    # What the written part is: the delta rule's beta k vᵀ, the input gate's (1 − f) vᵀ or φ(k) vᵀ.
    family = "delta" if delta else ("hgrn2" if mechanisms.writes(kind_id) == mechanisms.WRITES_FORGET_GATE else "additive")
    written_title = Message(f"state.step_written_{family}", t=t, token=quoted)
    state_title = Message("state.step_state", t=t, kind=kind) if kind else f"S_t, t = {t}"
    if delta:
        erased = np.asarray(erased)
        # Wide gaps: each panel's row title sits between it and the panel before.
        fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.13 if style.presentation else 0.1,
                            subplot_titles=(Message("state.step_erased"), written_title, state_title))
        cells = ((2, update, "coloraxis", "state.step_bar_written"), (3, state, "coloraxis2", "state.step_bar_state"),
                 (1, erased, "coloraxis", "state.step_bar_erased"))
    else:
        fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12, subplot_titles=(written_title, state_title))
        cells = ((1, update, "coloraxis", "state.step_bar_update"), (2, state, "coloraxis2", "state.step_bar_state"))
    for col, z, axis, key in cells:
        label = Message(key)
        hover = Joined([Message("state.hover_cell"), "<br>%{z:.4g}<extra>", label, "</extra>"])
        fig.add_trace(go.Heatmap(z=z, coloraxis=axis, name=label, hovertemplate=hover),
                      row=1, col=col)

    def domain(col):
        return fig.layout["xaxis" + ("" if col == 1 else str(col))].domain

    if delta:
        # One scale for what goes out and what comes in, under both of their panels.
        fig.update_layout(coloraxis=_bar(style, domain(1)[0], domain(2)[1],
                                         Joined([Message("state.step_bar_erased"), " / ",
                                                 Message("state.step_bar_written")]),
                                         _vmax(update, erased)),
                          coloraxis2=_bar(style, *domain(3), Message("state.step_bar_state"), _vmax(state)))
    else:
        fig.update_layout(coloraxis=_bar(style, *domain(1), Message("state.step_bar_update"), _vmax(update)),
                          coloraxis2=_bar(style, *domain(2), Message("state.step_bar_state"), _vmax(state)))
    fig.update_xaxes(title_text=Message("state.step_x"))
    rows = "state.step_y_features" if family == "additive" else "state.step_y_keys"
    fig.update_yaxes(title_text=Message(rows), autorange="reversed")
    note = Message("state.step_note_delta") if delta else ""
    # On a projector the figure fits what the window leaves under the step slider.
    fig = finish(fig, style, Message(f"state.step_title_{family}"), height=560, note=note,
                 total=PROJECTOR_FIGURE_PX - 20)
    fig.update_layout(margin=dict(b=170 if style.presentation else 150))
    if style.presentation:
        # The plot is short on a projector: the colour bars go a fixed distance under it (past
        # the tick labels and the axis title), not a fraction of its height.
        plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        for axis in ("coloraxis", "coloraxis2"):
            fig.layout[axis].colorbar.y = -85 / max(plot_px, 1)
    return fig


def _lag_hover(which, lag, cosine) -> Joined:
    """"<which><br>lag %{x}: cosine %{y:.2f}", the recall panel's hover, kept in messages."""
    return Joined([which, "<br>", lag, " %{x}: ", cosine, " %{y:.2f}<extra></extra>"])


def state_curves(ts, traces: dict, recall: dict, t_marker: int | None = None, style=None) -> go.Figure:
    """Curves over t of ‖S_t‖, ‖z_t‖ and effective rank per update, and recall against lag.

    ``traces``: update label -> dict(state_norm, normaliser_norm or None, effective_rank)
    arrays of length N; an update without a normaliser draws nothing in the ‖z_t‖ panel.
    ``recall``: update label -> dict(lags, cosine, cosine_std[, recent_cosine]).
    """
    style = as_style(style)
    fig = make_subplots(rows=2, cols=2, vertical_spacing=0.18, horizontal_spacing=0.1,
                        subplot_titles=(Message("state.panel_norm"), Message("state.panel_normaliser"),
                                        Message("state.panel_rank"), Message("state.panel_recall")))
    ts = list(ts)
    lag, cosine = Message("state.hover_lag"), Message("state.hover_cosine")
    without_z = False
    for i, (kind, tr) in enumerate(traces.items()):
        colour = style.colour(i)
        for (r, c), key in (((1, 1), "state_norm"), ((1, 2), "normaliser_norm"), ((2, 1), "effective_rank")):
            if tr.get(key) is None:
                without_z = True
                continue
            fig.add_trace(go.Scatter(x=ts, y=list(np.asarray(tr[key])), mode="lines", name=kind, legendgroup=kind,
                                     showlegend=(r, c) == (1, 1), line=dict(color=colour, width=style.line)),
                          row=r, col=c)
        if kind in recall:
            rc = recall[kind]
            lags = list(np.asarray(rc["lags"]))
            cos = np.asarray(rc["cosine"], dtype=np.float64)
            std = np.asarray(rc["cosine_std"], dtype=np.float64)
            early = Message("state.hover_early", kind=kind)
            fig.add_trace(go.Scatter(x=lags, y=list(cos), mode="lines+markers", name=kind, legendgroup=kind,
                                     showlegend=False, line=dict(color=colour, width=style.line),
                                     marker=dict(size=style.marker),
                                     error_y=dict(type="data", array=list(std), visible=True, thickness=1),
                                     hovertemplate=_lag_hover(early, lag, cosine)),
                          row=2, col=2)
            if "recent_cosine" in rc:      # a key written last: what decay and the delta rule keep clean
                recent = Message("state.hover_recent", kind=kind)
                fig.add_trace(go.Scatter(x=lags, y=list(np.asarray(rc["recent_cosine"], dtype=np.float64)),
                                         mode="lines+markers", name=Message("state.recent_key", kind=kind),
                                         legendgroup=kind, showlegend=False,
                                         line=dict(color=colour, width=style.line, dash="dash"),
                                         marker=dict(size=style.marker, symbol="diamond"),
                                         hovertemplate=_lag_hover(recent, lag, cosine)),
                              row=2, col=2)
    if without_z:
        fig.add_annotation(text=Message("state.no_normaliser"), xref="x2 domain", yref="y2 domain", x=0.02, y=0.98,
                           xanchor="left", yanchor="top", showarrow=False, font=dict(size=style.tick_font, color="#555"))
    if t_marker is not None:
        for r, c in ((1, 1), (1, 2), (2, 1)):
            fig.add_vline(x=t_marker, line=dict(color=REFERENCE_COLOUR, dash="dot", width=max(1, style.line / 2)),
                          row=r, col=c)
    for r, c in ((1, 1), (1, 2), (2, 1)):
        fig.update_xaxes(title_text=Message("state.axis_token"), row=r, col=c)
    fig.update_xaxes(title_text=Message("state.axis_lag"), type="log", row=2, col=2)
    # Log: an additive state's norm grows to hundreds while the delta rule's stays near ‖v‖.
    fig.update_yaxes(title_text="‖S_t‖_F", type="log", row=1, col=1)
    fig.update_yaxes(title_text="‖z_t‖₂", row=1, col=2)
    fig.update_yaxes(title_text=Message("state.axis_rank"), row=2, col=1)
    fig.update_yaxes(title_text=Message("state.axis_cosine"), row=2, col=2)
    # The legend under the panels: above them it would share the line with the title. Every
    # update of the registry is a name in it: on a projector's large fonts it takes two rows,
    # kept clear of the lower panels' axis titles by a lower start and a deeper margin.
    fig.update_layout(legend=dict(title=dict(text=Message("state.legend_update")), orientation="h",
                                  y=-0.15 if style.presentation else -0.1, x=0, yanchor="top"))
    fig = finish(fig, style, Message("state.curves_title"), height=980 if style.presentation else 740)
    fig.update_layout(margin=dict(b=250 if style.presentation else 130))
    return fig


def state_capacity(capacity: dict, head_dim: int, threshold: float = 0.5, trials: int = 0, style=None, *,
                   reference: str | None = None) -> go.Figure:
    """Pairs recalled (cosine > threshold) against pairs written, one line per update.

    ``capacity``: update label -> dict(pairs, recalled, recalled_std). ``reference`` names
    the entry drawn as the grey dotted reference (the additive update on unit keys). The
    diagonal is "every pair recalled"; the dotted line marks P = d.
    """
    style = as_style(style)
    fig = go.Figure()
    grid = sorted({int(p) for c in capacity.values() for p in np.asarray(c["pairs"])}) or [1]
    fig.add_trace(go.Scatter(x=grid, y=grid, mode="lines", name=Message("state.capacity_all"),
                             line=dict(color="#bbb", width=max(1, style.line / 2), dash="dash"), hoverinfo="skip"))
    colour = 0
    for label, c in capacity.items():
        is_reference = label == reference
        line = (dict(color=REFERENCE_COLOUR, width=style.line, dash="dot") if is_reference
                else dict(color=style.colour(colour), width=style.line))
        colour += 0 if is_reference else 1
        fig.add_trace(go.Scatter(x=list(np.asarray(c["pairs"])), y=list(np.asarray(c["recalled"], dtype=np.float64)),
                                 mode="lines+markers", name=label, line=line, marker=dict(size=style.marker),
                                 error_y=dict(type="data", array=list(np.asarray(c["recalled_std"], dtype=np.float64)),
                                              visible=True, thickness=1),
                                 hovertemplate=Joined([Message("state.capacity_hover", kind=label), "<extra></extra>"])))
    fig.add_vline(x=head_dim, line=dict(color=REFERENCE_COLOUR, dash="dot", width=max(1, style.line / 2)))
    # On a log axis an annotation's x is log10 of the value (a shape's is the value itself).
    fig.add_annotation(x=math.log10(head_dim), y=1, yref="paper", xanchor="left", yanchor="top", showarrow=False,
                       text=Joined([" ", Message("state.capacity_d", d=head_dim)]), font=dict(size=style.tick_font))
    highest = max((float(np.nanmax(c["recalled"])) for c in capacity.values()), default=1.0)
    # Log P: the rise below d and the level far past it both get room.
    fig.update_xaxes(title_text=Message("state.capacity_x"), type="log")
    fig.update_yaxes(title_text=Message("state.capacity_y"), range=[0, max(highest, 1.0) * 1.15])
    # The legend beside the plot: seven names under it would leave the plot no height.
    fig.update_layout(legend=dict(orientation="v", x=1.02, y=1, xanchor="left", yanchor="top"))
    note = Message("state.capacity_note", threshold=f"{threshold:g}", trials=trials)
    fig = finish(fig, style, Message("state.capacity_title"), height=640 if style.presentation else 500, note=note)
    return fig


def memory_growth(ts, kv_bytes, state_bytes: float, labels=None, style=None, *,
                  feature_dim: int | None = None) -> go.Figure:
    """Softmax's KV cache grows with t; the recurrent state stays the same size.

    ``labels`` (cache, state) default to the tab's words, the state's naming ``feature_dim``
    when given.
    """
    style = as_style(style)
    if labels is None:
        labels = (Message("state.memory_cache"),
                  Message("state.memory_state", m=feature_dim if feature_dim is not None else "m"))
    ts = list(ts)
    kib = [b / 1024 for b in kv_bytes]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ts, y=kib, mode="lines", name=labels[0], line=dict(color=style.colour(3), width=style.line)))
    cross = next((t for t, b in zip(ts, kv_bytes) if b >= state_bytes), None)
    if cross is not None:
        fig.add_vline(x=cross, line=dict(color=REFERENCE_COLOUR, dash="dot", width=max(1, style.line / 2)))
        fig.add_annotation(x=math.log10(cross), y=1, yref="paper", yanchor="top", xanchor="left", showarrow=False,
                           text=Message("state.memory_cross", t=f"{cross:,}"), font=dict(size=style.font))
    fig.add_trace(go.Scatter(x=ts, y=[state_bytes / 1024] * len(ts), mode="lines", name=labels[1],
                             line=dict(color=style.colour(0), width=style.line, dash="dash")))
    # Log-log: the cache is a line of slope 1, the state a flat line, both visible at once.
    fig.update_xaxes(title_text=Message("state.memory_x"), type="log")
    fig.update_yaxes(title_text=Message("state.memory_y"), type="log")
    # The legend under the plot: inside it, it would cover the crossing's note.
    fig.update_layout(legend=dict(orientation="h", x=0, y=-0.3, xanchor="left", yanchor="top"))
    fig = finish(fig, style, Message("state.memory_title"), height=600 if style.presentation else 480)
    fig.update_layout(margin=dict(b=190 if style.presentation else 150))
    return fig
