"""Chapter 6: the trade-off: the chapter's figures, its builds in the order the speaker shows them, drawn
from its view (``view``)."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..figure_common import Wrapped, column_px, UNIT_TICKS, finish_slide, log_ticks, say_cosine, say_count
from ...catalog import map_label
from ...text import Joined, Message
from ..numbers import say_percent, say_power_of_ten
from ..text import road_message, state_road_message, words
from .maths import on_log_axis


SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "cross", "x", "star", "hexagon",
           "pentagon")


def draw(view, style):
    """The chapter's builds, their words in messages (said later in the reader's language)."""
    points = view.data["points"]
    front = view.data["frontier"]
    # A log axis drops values <= 0 without a word: such points are named in the note instead.
    good = [p for p in points if on_log_axis(p["median_kl"])]
    bad = [p for p in points if p not in good]
    fig = go.Figure()
    # One trace per map, named in the legend: several maps share a cost (m = d), so labels
    # written beside the points would sit on each other. A map keeps its colour and symbol
    # whichever maps get no point (the English and the Chinese sentence drop different ones).
    for i, p in enumerate(points):
        if p not in good:
            continue
        fig.add_scatter(x=[p["cost"]], y=[p["median_kl"]], mode="markers",
                        name=Joined([map_label(p['label']), f" (m = {p['m']})"]),
                        marker=dict(size=style.marker * 1.5, color=style.colour(i), symbol=SYMBOLS[i % len(SYMBOLS)],
                                    line=dict(color="#000", width=1)))
    on_front = [i for i in front if points[i] in good]
    if len(on_front) >= 2:              # a frontier of one map is a point, not a line: its marker says it
        fig.add_scatter(x=[points[i]["cost"] for i in on_front], y=[points[i]["median_kl"] for i in on_front],
                        mode="lines", line=dict(color="#444", width=style.line / 2, shape="hv", dash="dash"),
                        name=words("legend.frontier"))
    kls = [p["median_kl"] for p in good] or [1.0]
    fig.update_xaxes(type="log", title_text=words("axis.flops_token"),
                     **log_ticks([p["cost"] for p in good]))
    # KL on a log axis: the close maps (0.05 to 0.2 nats) sat on each other at the foot of a
    # linear one, all at the same cost (m = d).
    fig.update_yaxes(title_text=words("axis.median_kl"), type="log", **log_ticks(kls),
                     range=[math.log10(min(kls)) - 0.15, math.log10(max(kls)) + 0.15])
    # Why a map has no point is the speaker's (the notes carry it); the slide says how many are drawn.
    if getattr(style, "presentation", False):
        note = words("ch6.b0.note_drawn", drawn=int(view.numbers["plane_maps_drawn"]),
                     maps=int(view.numbers["plane_maps"])) if bad else ""
    else:
        note = Joined([_no_point(p) for p in bad], " · ")
    first = finish_slide(fig, style, words("ch6.b0.title", layer=view.controls["layer"], head=view.controls["head"]),
                         note)

    road = view.data["roadmap"]
    kinds = [[r for r in road if not r["causal"]], [r for r in road if r["causal"]]]
    # One panel per kind of measurement (a causal model's roadmap has one kind: causal); within
    # each, one bar per step, the 2020 baseline's value marked by a dashed line: a shorter bar
    # is closer to softmax.
    one_kind = not kinds[0]
    if one_kind:
        kinds = kinds[1:]
        fig2 = make_subplots(rows=1, cols=1)
    else:
        fig2 = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.16,
                             row_heights=[len(kinds[0]), max(len(kinds[1]), 1)],
                             subplot_titles=(words("legend.noncausal"), words("legend.causal")))
    top = max([r["median_kl"] for r in road if math.isfinite(r["median_kl"])] or [1.0])
    for row, points_of_kind in enumerate(kinds, start=1):
        labels = [_road_text(r) for r in points_of_kind][::-1]
        values = [r["median_kl"] for r in points_of_kind][::-1]
        colours = [style.colour(0 if r["year"] == 2020 else 2) for r in points_of_kind][::-1]
        # No bar for a median that is ∞ or that a minority of rows would give (the plane's rule).
        fig2.add_bar(y=labels, x=[v if math.isfinite(v) else None for v in values], orientation="h",
                     marker_color=colours, showlegend=False,
                     text=[f"{v:.2f}" if math.isfinite(v) else "∞" if v > 0 else Message("common.na") for v in values],
                     textposition="outside", cliponaxis=False,
                     textfont=dict(size=style.tick_font), row=row, col=1)
        base = next((r["median_kl"] for r in points_of_kind if r["year"] == 2020), None)
        if base is not None:
            fig2.add_vline(x=base, line_dash="dash", line_color="#555", line_width=2, row=row, col=1)
    fig2.update_xaxes(range=[0, top * 1.18])
    fig2.update_xaxes(title_text=words("axis.median_kl"), row=len(kinds), col=1)
    fig2.update_yaxes(tickfont=dict(size=style.tick_font - 1))
    second = finish_slide(fig2, style, words("ch6.b1.title", layer=view.controls["layer"], head=view.controls["head"]),
                          words("ch6.b1.note_causal" if one_kind else "ch6.b1.note"))
    # The end of the talk: the recap, the hybrid future, the hologram and the impression.
    return [first, second, _state_roadmap(view, style), *_ending(view, style)]


def _state_roadmap(view, style):
    """The state updates' roadmap on a figure of its own: recall of an early and a recent key
    per step, as pairs of bars. Recall is not row KL, so nothing here meets the KL panels."""
    states = view.data["state_roadmap"]
    labels = [_road_text(r) for r in states][::-1]
    fig = go.Figure()
    for i, pos in enumerate(("early", "recent")):
        values = [r[pos] for r in states][::-1]
        fig.add_bar(y=labels, x=values, orientation="h", name=words(f"legend.recall_{pos}", lag=states[0]["lag"]),
                    marker_color=style.colour(i), text=[say_cosine(v) for v in values], textposition="outside",
                    cliponaxis=False, textfont=dict(size=style.tick_font))
    low = min([0.0] + [r[pos] for r in states for pos in ("early", "recent")])
    # The legend inside the plot's top right, over the 2020 step's short bars (no decay recalls
    # little): above the plot it would sit in the subtitle's room, which spans the slide.
    fig.update_layout(barmode="group", legend=dict(orientation="h", x=1.0, xanchor="right", y=1.0, yanchor="top",
                                                   traceorder="normal", bgcolor="rgba(255,255,255,0.85)"))
    fig.update_xaxes(title_text=words("axis.cosine"), range=[low - 0.05, 1.18], **UNIT_TICKS)
    fig.update_yaxes(tickfont=dict(size=style.tick_font - 1))
    lag = states[0]["lag"]
    return finish_slide(fig, style, words("ch6.b2.title", lag=lag),
                        words("ch6.b2.note", d=view.data.get("state_dim", "d"), lag=lag))


def _no_point(p: dict) -> Message:
    """Why a map has no point on the plane: undefined on more than half of the rows, a median
    of ∞, or a median of 0 that a log axis cannot hold."""
    name = map_label(p["label"])
    if math.isfinite(p["median_kl"]):
        return words("note.kl_zero", map=name, kl=f"{p['median_kl']:.2g}")
    if p.get("mostly_undefined"):
        return words("note.kl_no_point", map=name, count=p.get("undefined_rows", 0), rows=p.get("rows", 0))
    if math.isinf(p["median_kl"]):
        return words("note.kl_infinite", map=name, count=p.get("infinite_rows", 0), rows=p.get("rows", 0))
    return words("note.kl_undefined", map=name)


def _road_text(point: dict) -> Message:
    """A roadmap point's two-line label: the step, then what exactly was measured."""
    pid = point["id"]
    if pid == "2024_hedgehog" and not point.get("trained"):
        return words("road.2024_hedgehog_untrained")
    if pid == "2021":
        return road_message(pid, m=point["m"])
    if pid == "2023":
        return road_message(pid, gamma=f"{point['gamma']:.4g}")
    if pid == "2025":
        return road_message(pid, w=point["window"])
    if point.get("measure") == "recall":          # a state update's point: the mechanism's words
        gamma, lb = point.get("gamma"), point.get("lower_bound")
        return state_road_message(point["kind"], gamma="" if gamma is None else f"{gamma:.4g}",
                                  lb="" if lb is None else f"{lb:g}")
    return words(f"road.{pid}")


# -- the last three builds, from what the view put in for them: the recap as a table, the
#    hybrid future as two panels (quality, cost), the hologram against two impressions ------

RECAP_WIDTHS = (0.42, 0.58)


def _ending(view, style) -> list:
    return [_recap(view, style), _hologram(view, style), _retrieval(view, style), _future(view, style)]


def _recap(view, style):
    """The article's five steps, each beside the number measured here, as a table whose cells
    wrap at word boundaries to their column."""
    recap = view.data["recap"]
    font = style.tick_font
    room = column_px(style) - 40
    steps = [Joined([f"{i} · ", words(step)]) for i, (step, _) in enumerate(recap["rows"], start=1)]
    measured = [words(key, **recap["values"]) for _, key in recap["rows"]]
    columns = [[Wrapped(cell, font, width * room - 16) for cell in column]
               for column, width in zip((steps, measured), RECAP_WIDTHS)]
    header = [words("ch6.recap.header.step"), words("ch6.recap.header.measured")]

    def row_height(fig):                      # from the cells as said: each language wraps its own words
        cells = fig.data[0].cells
        lines = max(str(cell).count("<br>") + 1 for column in cells.values for cell in column)
        cells.height = font * 1.35 * lines + 12
        fig.update_layout(margin=dict(l=20, r=20, b=10))

    fig = go.Figure(go.Table(
        columnwidth=list(RECAP_WIDTHS),
        header=dict(values=[Joined(["<b>", h, "</b>"]) for h in header], font=dict(size=font), align="left",
                    fill_color="#e8eef7", height=font * 1.9),
        cells=dict(values=columns, font=dict(size=font), align="left",
                   fill_color=[["#f7f7f7"] * len(steps), ["#fff4e6"] * len(steps)])))
    return finish_slide(fig, style, words("ch6.b3.title"), words("ch6.b3.note", **recap["values"]), then=row_height)


def _future(view, style):
    """Softmax, the hybrid and its linear part alone: how far each is from softmax (left: the
    whole model's perplexity on held-out text, or this head's median row KL), FLOPs per token
    of one head at the article's long context (right, log axis)."""
    future = view.data["future"]
    model = future["scope"] == "model"
    kinds = ("linear", "hybrid", "softmax")                       # bottom to top
    prefix = "legend.future_model_" if model else "legend.future_"
    labels = [words(prefix + kind, w=future["window"]) for kind in kinds]
    colours = [style.colour(i) for i in (0, 2, 3)]
    quality_title = words("legend.future_quality_model" if model else "legend.future_quality")
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=(quality_title, words("legend.future_cost")))
    kl = [future["quality"][kind] for kind in kinds]
    fig.add_bar(y=labels, x=kl, orientation="h", marker_color=colours, text=[f"{v:.1f}" if model else f"{v:.2f}" for v in kl],
                textposition="outside", cliponaxis=False, textfont=dict(size=style.tick_font), showlegend=False,
                row=1, col=1)
    flops = [future["flops"][kind] for kind in kinds]
    fig.add_bar(y=labels, x=flops, orientation="h", marker_color=colours, text=[say_count(v) for v in flops],
                textposition="outside", cliponaxis=False, textfont=dict(size=style.tick_font), showlegend=False,
                row=1, col=2)
    # One series per panel, not a group: every label stays outside its bar (softmax's 0.00 too).
    fig.update_layout(barmode="overlay")
    top = max(kl) or 1.0
    fig.update_xaxes(range=[0, top * 1.35], title_text=words("axis.perplexity" if model else "axis.median_kl"),
                     row=1, col=1)
    low, high = math.log10(min(flops)), math.log10(max(flops))
    # Decades only, written as powers of ten: the bars carry their own numbers, and a narrow
    # panel has no room for 1-2-5 labels.
    decades = list(range(math.ceil(low - 0.4), math.floor(high + 0.9) + 1))
    fig.update_xaxes(type="log", range=[low - 0.4, high + 0.9], title_text=words("axis.flops_token_all"),
                     tickmode="array", tickvals=[10.0 ** e for e in decades],
                     ticktext=[say_power_of_ten(e) for e in decades],
                     row=1, col=2)
    values = {"w": future["window"], "layer": view.controls["layer"], "head": view.controls["head"],
              "texts": future.get("texts"), "max": future.get("max_tokens")}
    if model:
        return finish_slide(fig, style, words("ch6.b6.title_model"), words("ch6.b6.note_model", **values))
    note = words("ch6.b6.note", **values)
    if future.get("model_missing"):
        note = Joined([note, " · ", words("note.model_missing")])
    return finish_slide(fig, style, words("ch6.b6.title", **values), note)


def _hologram(view, style):
    """This head's softmax map beside elu+1's and the learned map's, on one colour scale:
    the exact weights of every pair, and two impressions of them, each with its row KL."""
    holo = view.data["hologram"]
    panels = [("softmax", words("legend.hologram"), holo["softmax"])]
    panels += [(road_message(pid), words("legend.impression", kl=f"{holo['kl'][pid]:.2f}"), z)
               for pid, z in holo["maps"]]
    top = max(float(z.max()) for _, _, z in panels)
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.03, subplot_titles=[name for name, _, _ in panels])
    for col, (_, what, z) in enumerate(panels, start=1):
        fig.add_heatmap(z=z, colorscale=style.sequential, zmin=0.0, zmax=top, showscale=col == 3,
                        colorbar=dict(thickness=14, len=0.9, tickfont=dict(size=style.tick_font - 2), nticks=4),
                        row=1, col=col)
        fig.update_yaxes(autorange="reversed", showticklabels=False, showgrid=False, zeroline=False,
                         scaleanchor=f"x{col if col > 1 else ''}", row=1, col=col,
                         title_text=words("axis.query") if col == 1 else None)
        fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False, constrain="domain",
                         title_text=what, row=1, col=col)
    n = view.numbers
    note = words("ch6.b4.note", p=say_count(n["pairs_here"]), n=f"{n['tokens']:.0f}",
                 st=say_count(n["state_numbers"]))
    return finish_slide(fig, style, words("ch6.b4.title"), note)


def _retrieval(view, style):
    """Share of the stored pairs each reader recalls against how many were stored: softmax over
    its KV cache, the additive and the delta-rule linear states (log x, every P a tick)."""
    found = view.data["retrieval"]
    pairs = found["pairs"]
    fig = go.Figure()
    # The last point's share beside it (at smaller P the lines meet at 100 % and labels would
    # sit on each other); the additive state's below its line, clear of the delta rule's.
    where = {"softmax": "bottom center", "linear": "bottom left", "deltanet": "top left"}
    for i, (reader, shares) in enumerate(found["recalled"].items()):
        percent = [100 * s for s in shares]
        fig.add_scatter(x=pairs, y=percent, mode="lines+markers+text", name=words(f"legend.retrieval_{reader}"),
                        text=[""] * (len(shares) - 1) + [f"{say_percent(shares[-1])} %"],
                        textposition=where.get(reader, "top center"),
                        textfont=dict(size=style.tick_font - 2, color=style.colour(i)),
                        line=dict(color=style.colour(i), width=style.line), marker=dict(size=style.marker))
    fig.update_xaxes(type="log", title_text=words("axis.pairs_stored"), tickmode="array", tickvals=pairs,
                     ticktext=[f"{p:,}" for p in pairs], range=[math.log10(pairs[0]) - 0.15, math.log10(pairs[-1]) + 0.15])
    # Room below 0 for the label under the additive state's last point.
    fig.update_yaxes(title_text=words("axis.pairs_recalled"), range=[-16, 112], tickvals=[0, 25, 50, 75, 100])
    # The legend in the plot's empty middle: right of where the additive state has fallen,
    # left of where the delta rule falls.
    fig.update_layout(legend=dict(x=0.26, xanchor="left", y=0.3, yanchor="bottom", bgcolor="rgba(255,255,255,0.85)"))
    values = {"d": found["d"], "th": f"{found['threshold']:.1f}", "p": f"{pairs[-1]:,}"}
    return finish_slide(fig, style, words("ch6.b5.title", **values), words("ch6.b5.note", **values))
