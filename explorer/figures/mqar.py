"""Recall against the state kept (the Based paper's recall-memory figure, on the models trained
here): one marker per mixer and width at its state's size in bytes, the mean accuracy over
seeds, bars from the worst seed to the best, chance as a dashed line."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from ..experiments.mqar_table import Summary, summarise
from ..text import Joined, Message
from .style import as_style, finish

SYMBOLS = ("star", "square", "circle", "diamond", "triangle-up", "triangle-down", "x", "cross", "hexagon",
           "pentagon", "hourglass")     # one per mixer
REFERENCE = "#222222"        # softmax, the reference: dark, whatever the palette


def _byte_ticks(values) -> list[float]:
    """1-2-5 ticks over the data's range: the state sizes span about a decade and a half,
    where decades alone would label one tick."""
    lo, hi = math.log10(min(values)), math.log10(max(values))
    ticks = [m * 10.0 ** e for e in range(math.floor(lo), math.ceil(hi) + 1) for m in (1, 2, 5)]
    return [t for t in ticks if 10 ** lo / 1.5 <= t <= 10 ** hi * 1.5]


def mqar_figure(table: dict, style=None, live=()) -> go.Figure:
    """Accuracy (y) against state bytes (x, log) for every mixer of ``table`` (a recall
    table's record, such as ``mqar_table.shipped()``). Softmax is drawn last, over the rest.

    ``live``: points trained in the app (dicts with mixer, width, steps, seed, accuracy,
    state_bytes), each drawn as an open marker of its mixer's colour and shape, ringed, beside
    the shipped ones."""
    style = as_style(style)
    by_mixer: dict[str, list[Summary]] = {}
    for s in summarise(table):
        by_mixer.setdefault(s.mixer, []).append(s)
    order = [m for m in by_mixer if m != "softmax"] + [m for m in by_mixer if m == "softmax"]
    fig = go.Figure()
    task = table["task"]
    for mixer in order:
        rows = by_mixer[mixer]
        index = list(by_mixer).index(mixer)
        colour = _colour(style, mixer, list(by_mixer))
        name = Message(f"mqar.mixer.{mixer}")
        hover = [Joined([Message("mqar.hover", mixer=name, width=s.width, bytes=f"{s.state_bytes:,}",
                                 accuracy=f"{s.mean:.3f}", seeds=", ".join(f"{a:.3f}" for a in s.seeds))]
                        + ([Message("mqar.diverged", seeds=", ".join(map(str, s.diverged)))] if s.diverged else []))
                 for s in rows]
        fig.add_trace(go.Scatter(
            x=[s.state_bytes for s in rows], y=[s.mean for s in rows], name=name, mode="lines+markers",
            legendrank=index + 1, marker=dict(symbol=SYMBOLS[index % len(SYMBOLS)], size=style.marker + 4,
                                              color=colour),
            line=dict(width=style.line / 2, color=colour),
            error_y=dict(type="data", symmetric=False, array=[s.high - s.mean for s in rows],
                         arrayminus=[s.mean - s.low for s in rows], thickness=style.line / 2),
            hovertext=hover, hoverinfo="text"))
    mixers = list(by_mixer)
    for i, point in enumerate(live):
        _live_point(fig, point, mixers, style, rank=len(mixers) + i + 1)
    fig.add_hline(y=task["chance"], line_dash="dash", line_color="grey",
                  annotation_text=Message("mqar.chance", values=task["values"]), annotation_position="top right")
    ticks = _byte_ticks([s.state_bytes for rows in by_mixer.values() for s in rows] +
                        [p["state_bytes"] for p in live])
    fig.update_xaxes(type="log", title_text=Message("mqar.x"), tickmode="array", tickvals=ticks,
                     ticktext=[f"{t:,.0f}" for t in ticks])
    fig.update_yaxes(range=[0, 1.05], title_text=Message("mqar.y"))
    seeds = len({p["seed"] for p in table["points"]})
    note = Message("mqar.subtitle", pairs=task["pairs"], length=task["length"], vocab=task["vocab"], seeds=seeds)
    fig = finish(fig, style, Message("mqar.title"), height=520, note=note)
    if style.presentation:
        # On a projector ten names at the body's size would take half the width from the plot
        # (and under it, all its height): beside it, at the ticks' size.
        fig.update_layout(legend=dict(font=dict(size=style.tick_font)))
    return fig


def _colour(style, mixer: str, mixers: list) -> str:
    """Softmax dark, the others the palette's colours in order; the projector palette's
    black (its eighth) would read as softmax, and is swapped for a wine red."""
    if mixer == "softmax":
        return REFERENCE
    index = mixers.index(mixer) if mixer in mixers else len(mixers)
    colour = style.colour(index - ("softmax" in mixers[:index]))
    return "#882255" if colour.lower() == "#000000" else colour


def _live_point(fig: go.Figure, point: dict, mixers: list, style, rank: int) -> None:
    """One point trained in the app: its mixer's shape and colour, open, with a ring."""
    mixer = point["mixer"]
    index = mixers.index(mixer) if mixer in mixers else len(mixers)
    colour = _colour(style, mixer, mixers)
    name = Message("mqar.live_name", mixer=Message(f"mqar.mixer.{mixer}"), width=point["width"],
                   steps=point["steps"], seed=point["seed"])
    accuracy = point["accuracy"]
    shown = float("nan") if accuracy is None else accuracy
    hover = Message("mqar.live_hover", name=name, bytes=f"{point['state_bytes']:,}",
                    accuracy="—" if accuracy is None else f"{accuracy:.3f}")
    fig.add_trace(go.Scatter(
        x=[point["state_bytes"]], y=[shown], name=name, mode="markers", legendrank=rank,
        marker=dict(symbol=SYMBOLS[index % len(SYMBOLS)] + "-open", size=style.marker + 14, color=colour,
                    line=dict(width=style.line)),
        hovertext=[hover], hoverinfo="text"))
