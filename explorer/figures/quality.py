"""The quality tab's figures: error against m (or FLOPs) with seed bands and theory lines, and
the head overview.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from ..text import Joined, Message
from .style import PROJECTOR_FIGURE_PX, NamedInEnglish, UnitBelow, as_style, finish


def quality_curves(curves: list, x: str = "m", title: str = "", note: str = "", style=None,
                   favor_need: dict | None = None, names: dict | None = None) -> go.Figure:
    """Error against m (or FLOPs), log-log: mean over seeds with a 10-90 % band, theory dashed.

    ``curves`` are objects with label, ms, flops, kernel_mse (len(ms), seeds),
    map_error (len(ms), seeds) and theory (list or None), as ``views.quality_view`` returns.
    ``favor_need`` (``rf_theory.favor_required_features``): where the m it asks for lies on
    the m axis it is marked there; beyond the axis, the note says how far. Words are
    messages (said at the edge); ``names`` gives the name shown for a curve's label.
    """
    style = as_style(style)
    names = names or {}
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=(Message("quality.kernel_panel"), Message("quality.map_panel")))
    mean_word, theory_word = Message("quality.hover_mean"), Message("quality.hover_theory")
    for i, cur in enumerate(curves):
        colour = style.colour(i)
        label = names.get(cur.map_id, cur.map_id)
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
            fig.add_trace(go.Scatter(x=xs, y=mean, mode="lines+markers", name=Message("quality.measured", label=label),
                                     line=dict(color=colour, width=style.line), marker=dict(size=style.marker),
                                     legendgroup=group, showlegend=col == 1,
                                     hovertemplate=Joined((label, "<br>x=%{x}<br>", mean_word,
                                                           "=%{y:.3g}<extra></extra>"))),
                          row=1, col=col)
        if cur.theory is not None:
            fig.add_trace(go.Scatter(x=xs, y=list(cur.theory), mode="lines", name=Message("quality.theory", label=label),
                                     line=dict(color=colour, width=style.line, dash="dash"),
                                     hovertemplate=Joined((label, " ", theory_word,
                                                           "<br>x=%{x}<br>%{y:.3g}<extra></extra>"))),
                          row=1, col=1)
    xtitle = Message("quality.x_flops" if x == "flops" else "quality.x_m")
    fig.update_xaxes(type="log", title_text=xtitle)
    fig.update_yaxes(type="log", title_text=Message("quality.y_mse"), row=1, col=1)
    fig.update_yaxes(type="log", title_text=Message("quality.y_error"), row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", y=-0.2, x=0, yanchor="top"))
    if favor_need:
        need, target = favor_need["m_required"], favor_need["rel_error"]
        all_ms = [mm for cur in curves for mm in cur.ms]
        if x == "m" and all_ms and min(all_ms) <= need <= max(all_ms):
            fig.add_vline(x=need, line=dict(color="#555", dash="dot", width=max(1, style.line / 2)), row=1, col=1)
            fig.add_annotation(x=math.log10(need), y=1, xref="x", yref="paper", yanchor="top", xanchor="left",
                               showarrow=False, text=Message("quality.need_marker", target=f"{target:.0%}", m=sci(need)),
                               font=dict(size=style.tick_font, color="#555"))
        elif all_ms and need > max(all_ms):
            extra = Message("quality.need_beyond", m=sci(need), target=f"{target:.0%}",
                            u2=f"{favor_need['sq_norm_sum']['median']:.3g}", top=max(all_ms))
            note = Joined((note, " ", extra)) if note else extra
    # On a projector the figure fits the window under the tab row: the long note (how the
    # curves were drawn) stays in the normal view, where there is room to read it.
    fig = finish(fig, style, title or Message("quality.curves_title"), height=600,
                 note="" if style.presentation else note, total=PROJECTOR_FIGURE_PX + 100)
    if style.presentation:
        # The legend at the figure's bottom edge, under the axis titles of the short plot.
        fig.update_layout(margin=dict(b=200), legend=dict(y=0, yanchor="bottom", yref="container"))
    else:
        fig.update_layout(margin=dict(b=160))
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
    # The sample's own layer names are English ("layer 0", "arrays"): numbered in other languages.
    numbered = [Message("quality.overview_layer", i=i) for i in range(layers)]
    if layer_names and len(layer_names) == layers:
        ylabels = [NamedInEnglish(name, number) for name, number in zip(layer_names, numbered)]
    else:
        ylabels = numbered
    text = [[("—" if not np.isfinite(x) else f"{x:.2g}") for x in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(heads)), y=list(range(layers)), colorscale=style.sequential, text=text,
        texttemplate="%{text}", textfont=dict(size=style.tick_font),
        colorbar=dict(title=dict(text=UnitBelow(metric_label), side="top")),
        hovertemplate=Joined((Message("quality.overview_hover"), "<br>", metric_label, ": %{z:.4g}<extra></extra>")),
    ))
    fig.update_xaxes(title_text=Message("common.head"), tickmode="array", tickvals=list(range(heads)),
                     ticktext=[str(h) for h in range(heads)])
    fig.update_yaxes(title_text=Message("common.layer"), tickmode="array", tickvals=list(range(layers)),
                     ticktext=ylabels, autorange="reversed")
    title = Message("quality.overview_title", map=map_label, metric=metric_label)
    # A row per layer stays tall enough for its numbers: 6 layers fit the usual height, a
    # 30-layer model (SmolLM2: 270 heads) grows the figure instead of squeezing the rows.
    row = 30 if style.presentation else 22
    base = 620 if style.presentation else 480
    return finish(fig, style, title, height=max(base, 200 + row * layers), note=Message("quality.overview_note"))


def sci(x: float) -> str:
    """1070 -> '1.1 × 10³', 35 -> '35', inf -> '∞': counts that span many decades."""
    if not math.isfinite(x):
        return "∞"
    if x < 1000:
        return f"{x:.3g}"
    exponent = int(math.floor(math.log10(x)))
    mantissa = x / 10 ** exponent
    if mantissa >= 9.95:
        mantissa, exponent = 1.0, exponent + 1
    sup = str(exponent).translate(str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"))
    return f"{mantissa:.1f} × 10{sup}"


def favor_norms(norms: dict, need: dict, title: str = "", style=None) -> go.Figure:
    """Histograms of ‖q′‖ and ‖k′‖ (x′ = x / d^¼) of a head, and the number of IID FAVOR+
    features its variance formula asks for: why random features converge on small norms
    and not on real heads.

    ``norms``: ``rf_theory.favor_norms`` output; ``need``: ``rf_theory.favor_required_features``.
    """
    style = as_style(style)
    fig = go.Figure()
    rows_word = Message("quality.norm_rows")
    for i, (key, name) in enumerate((("q_norms", Message("quality.norm_q")), ("k_norms", Message("quality.norm_k")))):
        values = np.asarray(norms[key], dtype=np.float64).ravel()
        fig.add_trace(go.Histogram(x=values, name=name, opacity=0.65, marker_color=style.colour(i),
                                   hovertemplate=Joined((name, " %{x}<br>%{y} ", rows_word, "<extra></extra>"))))
    # The legend under the plot: above it, it would share the lines of the title and the note.
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", x=0, xanchor="left", y=-0.3, yanchor="top"))
    fig.update_xaxes(title_text=Message("quality.norm_x"))
    fig.update_yaxes(title_text=Message("quality.norm_y"))
    target, spread = need["rel_error"], need["m_quantiles"]
    u2 = need["sq_norm_sum"]
    note = Message("quality.norm_note", u2=f"{u2['median']:.3g}", target=f"{target:.0%}", m=sci(need["m_required"]),
                   lo=sci(spread[0.1]), hi=sci(spread[0.9]))
    head = Message("quality.norm_title", m=sci(need["m_required"]), target=f"{target:.0%}")
    return finish(fig, style, Joined((head, " · ", title)) if title else head, note=note,
                  height=460 if style.presentation else 360)
