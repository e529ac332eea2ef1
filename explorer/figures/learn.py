"""Plotly figures for the learned-maps and hybrid tab: pure functions, no gradio, no math.

They draw what ``explorer.views.learn`` returns: a bar's height is the engine's mean, a
box holds the engine's per-head values, a heatmap's ``z`` is the engine's KL ratio. Fonts,
margins and the presentation style come from ``explorer.figures``. Every word is a message
(``explorer.text``): a figure is built once and said in the page's language at the edge
(``figures.style.said_figure``).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..text import Joined, Message, said
from .style import as_style, finish


class BrokenAtBracket(str):
    """A map's name as a tick label: its bracket on a second line ("Hedgehog<br>(trained)"),
    in whatever language it is said (a name that is a message keeps its key)."""

    def __new__(cls, name):
        self = super().__new__(cls, _broken(str(name)))
        self.name = name
        return self

    def say(self, lang: str = "en") -> str:
        return _broken(said(self.name, lang))

    def __reduce__(self):
        return BrokenAtBracket, (self.name,)


def _broken(name: str) -> str:
    return name.replace(" (", "<br>(").replace("（", "<br>（")


def loss_curve(steps, losses, total_steps: int | None = None, live: bool = False, title: str = "",
               note: str = "", style=None, seeds=None) -> go.Figure:
    """Training loss against step. ``live``: a preview while training runs (fewer points).
    ``seeds`` (one per point, or None): one line per seed, each named by its seed (a number)
    or by the label given (a string, e.g. for seeds that shared one training)."""
    style = as_style(style)
    steps, losses = list(steps), list(losses)
    seeds = [None] * len(steps) if seeds is None else list(seeds)
    fig = go.Figure()
    for i, seed in enumerate(dict.fromkeys(seeds)):
        xs = [x for x, s in zip(steps, seeds) if s == seed]
        ys = [y for y, s in zip(losses, seeds) if s == seed]
        name = (Message("learn.loss_legend") if seed is None
                else seed if isinstance(seed, str) else Message("learn.seed_legend", seed=seed))
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers" if live else "lines", name=name,
                                 line=dict(color=style.colour(i), width=style.line),
                                 marker=dict(size=max(3, style.marker - 3)),
                                 hovertemplate=Joined([name, "<br>", Message("learn.loss_hover"), "<extra></extra>"])))
    fig.update_xaxes(title_text=Message("learn.loss_x"), range=[0, max(total_steps or 0, max(steps, default=1))])
    fig.update_yaxes(title_text=Message("learn.loss_y"))
    several = any(s is not None for s in seeds)
    fig.update_layout(showlegend=several, legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom"))
    return finish(fig, style, title or Message("learn.loss_title_live" if live else "learn.loss_title"),
                  height=480 if style.presentation else 360, note=note)


def heldout_comparison(quality: dict, rows: list, softmax_entropy: float, title: str = "", subtitle: str = "",
                       style=None) -> go.Figure:
    """KL, entropy and monotonicity per map on held-out texts.

    One head: bars of the values (the mean over seeds), with whiskers of ± the sd over
    seeds where the rows give one (``<key>_sd``). Several heads: a box per map over the
    heads, so the spread is visible. ``rows`` (map label, name) fix the order; softmax's
    entropy is the dashed reference line, since a good imitation is as spiky as softmax.
    """
    style = as_style(style)
    keys = (("kl", Message("learn.cmp_kl")), ("entropy", Message("learn.cmp_entropy")),
            ("monotonicity", Message("learn.cmp_mono")))
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.09,
                        subplot_titles=(Message("learn.cmp_sub_kl"), Message("learn.cmp_sub_entropy"),
                                        Message("learn.cmp_sub_mono")))
    many = any(np.asarray(quality[r["name"]]["kl"]).size > 1 for r in rows)
    # Long names wrap at the bracket: horizontal ticks leave the axis title room on a projector.
    ticks = {r["map"]: BrokenAtBracket(r["map"]) for r in rows}
    for col, (key, label) in enumerate(keys, start=1):
        for i, r in enumerate(rows):
            values = np.asarray(quality[r["name"]][key], dtype=np.float64).ravel()
            colour = style.colour(i)
            if many:
                fig.add_trace(go.Box(y=values, name=ticks[r["map"]], marker_color=colour, boxpoints="all", jitter=0.4,
                                     pointpos=0, line=dict(width=max(1.5, style.line / 2)), showlegend=False,
                                     hovertemplate=Joined([r["map"], "<br>", label, ": %{y:.4g}<extra></extra>"])),
                              row=1, col=col)
            else:
                sd = r.get(f"{key}_sd", float("nan"))
                whisker = dict(type="data", array=[sd], visible=True, thickness=max(1.5, style.line / 2),
                               color="#444") if np.isfinite(sd) else None
                fig.add_trace(go.Bar(x=[ticks[r["map"]]], y=[float(values[0])], name=r["map"], marker_color=colour,
                                     error_y=whisker, showlegend=False, text=[f"{values[0]:.3g}"], textposition="outside",
                                     textfont=dict(size=style.tick_font),
                                     hovertemplate=Joined([r["map"], "<br>", label, ": %{y:.4g}<extra></extra>"])),
                              row=1, col=col)
        fig.update_yaxes(title_text=label, row=1, col=col)
    fig.add_hline(y=softmax_entropy, line=dict(color="#444", width=max(1.5, style.line / 2), dash="dash"),
                  row=1, col=2, annotation_text=Message("learn.cmp_softmax_line", value=f"{softmax_entropy:.2f}"),
                  annotation_position="bottom left")
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_yaxes(range=[-1.05, 1.05], row=1, col=3)
    fig.update_xaxes(title_text=Message("learn.cmp_x"), tickangle=0)
    title = title or Message("learn.cmp_title")
    if subtitle:
        title = Joined([title, "<br><sup>", subtitle, "</sup>"])
    return finish(fig, style, title, height=620 if style.presentation else 480)


def kl_ratio_heatmap(ratio, title: str = "", style=None, map_label: str = "Hedgehog",
                     layer_labels=None) -> go.Figure:
    """KL(elu+1) / KL(learned map) for every (layer, head): > 1 means the learned map is
    closer. ``layer_labels`` name the rows (default 0..layers-1)."""
    style = as_style(style)
    z = np.asarray(ratio, dtype=np.float64)
    layers, heads = z.shape
    layer_labels = list(range(layers)) if layer_labels is None else list(layer_labels)
    finite = z[np.isfinite(z)]
    top = float(np.percentile(finite, 98)) if finite.size else 1.0
    text = [["—" if not np.isfinite(x) else f"{x:.1f}×" for x in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(heads)), y=layer_labels, colorscale=style.sequential, zmin=0, zmax=max(top, 1.0),
        text=text, texttemplate="%{text}", textfont=dict(size=style.tick_font),
        colorbar=dict(title=dict(text=Message("learn.ratio_colorbar", map=map_label), side="top")),
        hovertemplate=Joined([Message("learn.ratio_hover"), "<extra></extra>"])))
    fig.update_xaxes(title_text=Message("learn.head"), tickmode="array", tickvals=list(range(heads)))
    fig.update_yaxes(title_text=Message("learn.layer"), tickmode="array", tickvals=layer_labels,
                     type="category", autorange="reversed")
    return finish(fig, style, title or Message("learn.ratio_title", map=map_label),
                   height=(600 if style.presentation else 440) if layers > 1 else (360 if style.presentation else 300),
                   note=Message("learn.ratio_note"))


def tradeoff_plane(rows: list, title: str = "", style=None) -> go.Figure:
    """Each map of the comparison as one point: features m (the linear form's work per
    token grows with m) against its held-out median row KL, log scale. ``rows`` are the
    view's rows (label, m, kl_median, kl_median_sd); the learned maps are the filled
    markers; whiskers reach ± the sd over seeds where there is one."""
    style = as_style(style)
    fig = go.Figure()
    for i, r in enumerate(rows):
        learned_map = r["name"] in ("hedgehog", "luna")
        sd = r.get("kl_median_sd", float("nan"))
        y = max(r["kl_median"], 1e-6)
        # On a log axis a whisker may not reach zero or below: the lower one stops at 1e-6.
        whisker = dict(type="data", symmetric=False, array=[sd], arrayminus=[min(sd, y - 1e-6)], visible=True,
                       thickness=max(1.5, style.line / 2)) if np.isfinite(sd) and sd > 0 else None
        fig.add_trace(go.Scatter(
            x=[r["features_m"]], y=[y], mode="markers+text", name=r["map"], error_y=whisker,
            # Labels alternate above and below: the two learned maps often sit close together.
            text=[r["map"]], textposition="top center" if i % 2 == 0 else "bottom center",
            textfont=dict(size=style.tick_font),
            marker=dict(size=style.marker + 8, color=style.colour(i),
                        symbol="circle" if learned_map else "circle-open", line=dict(width=style.line / 2)),
            hovertemplate=Joined([r["map"], "<br>", Message("learn.trade_hover"), "<extra></extra>"]),
            showlegend=False))
    fig.update_xaxes(title_text=Message("learn.trade_x"), type="log")
    fig.update_yaxes(title_text=Message("learn.trade_y"), type="log")
    spread = any(np.isfinite(r.get("kl_median_sd", float("nan"))) for r in rows)
    note = (Joined([Message("learn.trade_note"), Message("learn.trade_error")], "learn.note_sep") if spread
            else Message("learn.trade_note"))
    return finish(fig, style, title or Message("learn.trade_title"), height=560 if style.presentation else 420,
                  note=note)


def hybrid_cosine(path: list, n_layers: int, map_label: str = "", title: str = "", style=None) -> go.Figure:
    """Embedding cosine to the original model against k, the number of softmax layers kept.

    The greedy path is a line through k = 0..budget, each point labelled with the layers
    kept; a chosen set of layers is one point. The whisker goes down to the worst text.
    """
    style = as_style(style)
    ks = [p["k"] for p in path]
    mean = [p["cosine_mean"] for p in path]
    low = [p["cosine_mean"] - p["cosine_min"] for p in path]
    labels = [Message("learn.hyb_point", layers=", ".join(map(str, p["kept"])) or Message("learn.hyb_none"))
              for p in path]
    fig = go.Figure(go.Scatter(
        x=ks, y=mean, mode="lines+markers+text", text=labels, textposition="bottom right",
        textfont=dict(size=style.tick_font), line=dict(color=style.colour(0), width=style.line),
        marker=dict(size=style.marker + 3), name=Message("learn.hyb_mean"),
        error_y=dict(type="data", symmetric=False, array=[0.0] * len(path), arrayminus=low, visible=True,
                     thickness=max(1.5, style.line / 2)),
        customdata=[[p["cosine_min"]] for p in path],
        hovertemplate=Joined([Message("learn.hyb_hover"), "<extra></extra>"])))
    fig.add_hline(y=1.0, line=dict(color="#444", dash="dash", width=max(1.5, style.line / 2)),
                  annotation_text=Message("learn.hyb_original"), annotation_position="bottom left")
    fig.update_xaxes(title_text=Message("learn.hyb_x"), range=[-0.5, n_layers + 0.5],
                     tickmode="array", tickvals=list(range(n_layers + 1)))
    fig.update_yaxes(title_text=Message("learn.hyb_y"))
    fig = finish(fig, style, title or Message("learn.hyb_title", map=map_label),
                  height=560 if style.presentation else 430, note=Message("learn.hyb_note"))
    return fig.update_layout(margin=dict(l=140 if style.presentation else 110))


def hybrid_drift(drift, linear_layers, map_label: str = "", title: str = "", style=None) -> go.Figure:
    """Per-layer attention drift: mean row total variation between hybrid and original maps.

    Linear layers and softmax layers have different colours: softmax layers after a linear
    one drift too, because their inputs changed.
    """
    style = as_style(style)
    drift = [float(x) for x in drift]
    linear = set(linear_layers)
    fig = go.Figure()
    for kind, colour, is_linear in ((Message("learn.drift_linear", map=map_label), style.colour(3), True),
                                    (Message("learn.drift_softmax"), style.colour(0), False)):
        idx = [i for i in range(len(drift)) if (i in linear) == is_linear]
        if idx:
            fig.add_trace(go.Bar(x=idx, y=[drift[i] for i in idx], name=kind, marker_color=colour,
                                 text=[f"{drift[i]:.2f}" for i in idx], textposition="outside",
                                 textfont=dict(size=style.tick_font),
                                 hovertemplate=Joined([Message("learn.drift_hover"), "<extra>", kind, "</extra>"])))
    fig.update_xaxes(title_text=Message("learn.layer"), tickmode="array", tickvals=list(range(len(drift))))
    # Headroom above the tallest bar, so its value label (drawn outside the bar) is not cut.
    fig.update_yaxes(title_text=Message("learn.drift_y"),
                     range=[0, 1.2 * max(max(drift, default=0.0), 0.05)])
    fig.update_layout(legend=dict(title=dict(text=Message("learn.drift_legend")), orientation="h", y=1.02, x=1,
                                  xanchor="right", yanchor="bottom"))
    fig = finish(fig, style, title or Message("learn.drift_title", layers=", ".join(map(str, sorted(linear)))
                                             or Message("learn.hyb_none")),
                  height=520 if style.presentation else 420)
    return fig.update_layout(margin=dict(l=140 if style.presentation else 110))
