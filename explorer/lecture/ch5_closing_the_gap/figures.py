"""Chapter 5: closing the gap: the chapter's figures, its builds in the order the speaker shows them, drawn
from its view (``view``)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..figure_common import UNIT_TICKS, finish_slide, log_ticks, say_cosine
from ..numbers import say_signed
from ...catalog import map_label, map_name
from ...text import Joined, Message
from ..text import Named, state_message, words


def draw(view, style):
    """The chapter's builds, their words in messages (said later in the reader's language)."""
    curves = view.data["recall"]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=(words("legend.early"), words("legend.recent")))
    for col, pos in enumerate(("early", "recent"), start=1):
        for i, kind in enumerate(("linear", "retnet", "gla")):
            rc = curves[(kind, pos)]
            shown = rc["lags"] > 0
            fig.add_scatter(x=rc["lags"][shown], y=rc["cosine"][shown], mode="lines+markers",
                            name=state_message(kind), showlegend=col == 1,
                            line=dict(color=style.colour(i), width=style.line), row=1, col=col)
        fig.update_xaxes(type="log", title_text=words("axis.lag"), row=1, col=col)
    fig.update_yaxes(title_text=words("axis.cosine"), range=[-0.2, 1.05], row=1, col=1)
    n = view.numbers
    c = view.controls
    note = words("ch5.b0.note", gamma=f"{c['gamma']:g}", strength=f"{c['strength']:g}",
                 **{kind: say_signed(n[f"recent_minus_early_at_256[{kind}]"]) for kind in ("linear", "retnet", "gla")})
    first = finish_slide(fig, style, words("ch5.b0.title"), note)

    overwrite = _overwrite(view, style)
    depth = _hgrn2_depth(view, style)

    kl = view.data["kl"]
    causal = bool(view.data.get("kl_causal"))
    fig2 = go.Figure()
    hidden = []
    for i, (name, r) in enumerate(kl.items()):
        # The rows the summaries count (causal: not the first, which sees one key and has KL 0
        # by construction; the engine's rowwise.rows_in_means).
        rows = r["kl"][..., r["counted"]] if "counted" in r else r["kl"]
        values = rows[np.isfinite(rows)]
        infinite = int(np.isposinf(rows).sum())
        if infinite:                              # ∞ is a value a box cannot hold: said, not dropped
            hidden.append(words("note.kl_inf_not_drawn", map=map_label(name), count=infinite))
        drawn = values[values > 0]                # a log axis cannot show KL = 0 (or -1e-17 from rounding)
        if drawn.size < values.size:
            hidden.append(words("note.kl_not_drawn", map=map_label(name), count=values.size - drawn.size))
        fig2.add_box(y=drawn, name=Joined([map_label(name), f"<br>m = {r['m']}"]), marker_color=style.colour(i),
                     boxmean=True, showlegend=False)
    fig2.update_yaxes(type="log", title_text=words("axis.kl_causal" if causal else "axis.kl"))
    values = Named((name, f"{r['mean']:.2f}") for name, r in kl.items())
    title = ("ch5.b3.title" if view.data.get("hedgehog_trained") else "ch5.b3.title_untrained") + \
        ("_causal" if causal else "")
    second = finish_slide(fig2, style, words(title),
                          Joined([words("ch5.b3.note", layer=c["layer"], head=c["head"], values=values)] + hidden, " · "))

    path = view.data.get("hybrid")
    fig3 = go.Figure()
    mode = c.get("hybrid", "last")
    if path:
        # Greedy: each step names the layer it adds back; "last k" needs no label.
        labels = []
        for before, now in zip([()] + [p["kept"] for p in path[:-1]], [p["kept"] for p in path]):
            added = sorted(set(now) - set(before))
            labels.append("+" + ",".join(map(str, added)) if added and mode == "greedy" else "")
        fig3.add_scatter(x=[p["k"] for p in path], y=[p["cosine"] for p in path],
                         mode="lines+markers+text" if mode == "greedy" else "lines+markers",
                         text=labels, textposition="bottom right", cliponaxis=False,
                         textfont=dict(size=style.tick_font), showlegend=False,
                         line=dict(color=style.colour(2), width=style.line), marker=dict(size=style.marker))
    fig3.update_xaxes(title_text=words("axis.k_softmax"), dtick=1)
    fig3.update_yaxes(title_text=words("axis.embedding_cos"))
    hybrid_name = view.data.get("hybrid_map") or c.get("hybrid_map", "")
    hybrid_map = map_name(hybrid_name) if hybrid_name else ""
    note3 = words("ch5.b6.note", map=hybrid_map, mode=words(f"ch5.b6.{mode}")) if path else ""
    if view.data.get("model_missing"):
        note3 = Joined([note3, " · ", words("note.model_missing")] if note3 else [words("note.model_missing")])
    hybrid = finish_slide(fig3, style, words("ch5.b6.title"), note3)
    if view.data.get("linearized"):
        hybrid = _linearized(view.data["linearized"], style)
    return [first, overwrite, depth, second, _row_shape(view, style), _luna(view, style), hybrid]


def _linearized(linear: dict, style):
    """The causal model linearized: perplexity (log axis) against the softmax layers kept, one
    line per set of maps, and the original's perplexity dotted across."""
    fig = go.Figure()
    for i, (set_id, points) in enumerate(linear["curves"].items()):
        fig.add_scatter(x=[p["k"] for p in points], y=[p["perplexity"] for p in points], mode="lines+markers",
                        name=Message("linearize.set_" + set_id.replace(":", "_")),
                        line=dict(color=style.colour(i), width=style.line), marker=dict(size=style.marker))
    # The original as a dotted line named in the legend: a label on the line would sit on the
    # curves, which all come down to it at k = all layers.
    original, ks = linear["original"], [p["k"] for p in points]
    fig.add_scatter(x=[min(ks), max(ks)], y=[original, original], mode="lines",
                    name=Message("linearize.original_line", value=f"{original:.1f}"),
                    line=dict(color="#444444", dash="dot", width=max(1, style.line - 2)))
    fig.update_xaxes(title_text=Message("linearize.k_axis"), tickvals=[p["k"] for p in points])
    fig.update_yaxes(title_text=Message("linearize.perplexity_axis"), type="log")
    # The legend outside, right of the plot: inside, at the top right, it lay on elu+1's curve
    # as it falls towards the original.
    return finish_slide(fig, style, words("ch5.b6.title_linearized"),
                        words("ch5.b6.note_linearized", max=linear["max_tokens"]))


def _row_shape(view, style):
    """What Hedgehog copies from softmax, on the chapter's head: how spiky its rows are (mean
    row entropy, left) and how monotone in q·k (mean rank correlation of weight with logit,
    right), for softmax, elu+1 and the learned map: lying bars, the maps named once on the
    left, each bar labelled with its value."""
    shape = view.data["row_shape"]
    names = list(shape)[::-1]                                  # softmax at the top
    colours = {"softmax": "#444444", "elu1": style.colour(0)}
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=(words("ch5.b4.entropy"), words("ch5.b4.spearman")))
    shown = [map_label(name) for name in names]
    for col, key in ((1, "entropy"), (2, "spearman")):
        values = [shape[name][key] for name in names]
        fig.add_bar(y=shown, x=values, orientation="h", marker_color=[colours.get(name, style.colour(2)) for name in names],
                    text=[f"{v:.2f}" for v in values], textposition="outside", cliponaxis=False,
                    textfont=dict(size=style.tick_font), showlegend=False, row=1, col=col)
    # One series a panel: "overlay" keeps the slide's finish from pairing the panels' bars as a group.
    fig.update_layout(barmode="overlay")
    top = max(shape[name]["entropy"] for name in names)
    fig.update_xaxes(range=[0, 1.3 * top if top > 0 else 1.0], title_text=words("axis.entropy_nats"), row=1, col=1)
    # A negative correlation's label sits left of its bar: room for it inside the panel.
    low = min(0.0, *(shape[name]["spearman"] for name in names))
    fig.update_xaxes(range=[low - 0.35 if low < 0 else 0.0, _RECALL_TOP], title_text=words("axis.spearman_rho"), row=1, col=2,
                     tickmode="array", tickvals=[0, 0.5, 1.0] if low >= -0.5 else [-1.0, -0.5, 0, 0.5, 1.0])
    c = view.controls
    causal = bool(view.data.get("kl_causal"))
    note = words("ch5.b4.note_causal" if causal else "ch5.b4.note", layer=c["layer"], head=c["head"],
                 rows=shape["softmax"]["rows"])
    return finish_slide(fig, style, words("ch5.b4.title"), note)


def _luna(view, style):
    """LUNA against Hedgehog and elu+1, query by query: each map's row KL to softmax on the
    head the build reads (a log axis; a KL of 0 or one not finite is left out of the line and
    the line breaks there), the query tokens along the bottom."""
    luna = view.data.get("luna")
    fig = go.Figure()
    if not luna:
        fig.update_xaxes(title_text=words("axis.query"), showticklabels=False)
        fig.update_yaxes(title_text=words("axis.kl_query"), showticklabels=False)
        return finish_slide(fig, style, words("ch5.b5.title"))
    kl = luna["kl"]
    colours = {"elu1": style.colour(0), "hedgehog_trained": style.colour(2), "luna_trained": style.colour(3)}
    drawn = []
    for name, r in kl.items():
        rows = np.asarray(r["kl"], dtype=np.float64)
        shown = [float(v) if np.isfinite(v) and v > 0 else None for v in rows]
        drawn.extend(v for v in shown if v is not None)
        fig.add_scatter(x=list(range(len(rows))), y=shown, mode="lines+markers", name=map_label(name),
                        line=dict(color=colours.get(name, style.colour(1)), width=style.line),
                        marker=dict(size=style.marker))
    tokens = luna["tokens"]
    step = max(1, len(tokens) // 8)                 # a readable number of token labels along the bottom
    fig.update_xaxes(title_text=words("axis.query"), tickmode="array", tickvals=list(range(0, len(tokens), step)),
                     ticktext=tokens[::step], tickangle=-30)
    # The legend lies in a band above the highest point, inside the plot.
    span = [math.log10(min(drawn)) - 0.2, math.log10(max(drawn)) + 1.0] if drawn else None
    fig.update_yaxes(type="log", title_text=words("axis.kl_query"), range=span, **log_ticks(drawn))
    fig.update_layout(legend=dict(_TOP_LEGEND, x=0.02))         # clear of the tick labels at the left
    values = Named((name, f"{r['mean']:.2f}") for name, r in kl.items())
    note = words("ch5.b5.note_causal" if luna.get("causal") else "ch5.b5.note", layer=luna["layer"],
                 head=luna["head"], values=values)
    return finish_slide(fig, style, words("ch5.b5.title"), note)


# Recall and bounds lie in [0, 1]: the axes run to 1.3 and the legend sits in the top band,
# above every bar and its label, inside the plot (the title and note keep the space above).
_RECALL_TOP = 1.3
_TOP_LEGEND = dict(orientation="h", x=0.0, xanchor="left", y=1.0, yanchor="top", bgcolor="rgba(255,255,255,0.8)")


def _overwrite(view, style):
    """Forgetting by overwriting: recall of an early and a recent key at one lag, one pair of
    bars per update (no decay, RetNet, GLA, DeltaNet, Gated DeltaNet)."""
    data = view.data["overwrite"]
    lag, kinds = data["lag"], data["kinds"]
    names = [state_message(kind) for kind in kinds]
    fig = go.Figure()
    for i, pos in enumerate(("early", "recent")):
        values = [kinds[kind][pos] for kind in kinds]
        fig.add_bar(x=names, y=values, name=words(f"legend.recall_{pos}", lag=lag), marker_color=style.colour(i),
                    text=[say_cosine(v) for v in values], textposition="outside", cliponaxis=False,
                    textfont=dict(size=style.tick_font))
    fig.update_layout(barmode="group", legend=_TOP_LEGEND)
    fig.update_yaxes(title_text=words("axis.cosine"), range=[min(0.0, *_all_recall(kinds)) - 0.05, _RECALL_TOP],
                     **UNIT_TICKS)
    fig.update_xaxes(title_text=words("axis.update"))
    # The subtitle quotes the bars themselves: one experiment, one lag.
    note = words("ch5.b1.note", lag=lag, de=say_cosine(kinds["deltanet"]["early"]),
                 dr=say_cosine(kinds["deltanet"]["recent"]), ne=say_cosine(kinds["linear"]["early"]),
                 nr=say_cosine(kinds["linear"]["recent"]))
    return finish_slide(fig, style, words("ch5.b1.title", lag=lag), note)


def _all_recall(kinds) -> list[float]:
    return [r[pos] for r in kinds.values() for pos in ("early", "recent")]


def _hgrn2_depth(view, style):
    """HGRN2's bounds as one picture in two panels over the same layers: the floor of the
    forget gate (bars, each labelled with the shortest memory it allows), and the recall of
    an early and a recent key with that floor (lines)."""
    depth = view.data["hgrn2"]
    layers = [int(x) for x in depth["layers"]]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=(words("legend.lower_bound"), words("legend.recall_after", lag=depth["lag"])))
    fig.add_bar(x=layers, y=depth["lower_bound"], name=words("legend.lower_bound"), marker_color=style.colour(2),
                text=[f"≥ {m:.3g}" for m in depth["memory_tokens"]], textposition="outside", cliponaxis=False,
                textfont=dict(size=style.tick_font), showlegend=False, row=1, col=1)
    for i, pos in enumerate(("early", "recent")):
        fig.add_scatter(x=layers, y=depth[pos], mode="lines+markers", name=words(f"legend.recall_{pos}"),
                        line=dict(color=style.colour(i), width=style.line), marker=dict(size=style.marker),
                        row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(title_text=words("axis.layer"), dtick=1, row=1, col=col)
        fig.update_yaxes(range=[0, _RECALL_TOP], row=1, col=col, **UNIT_TICKS)
    fig.update_yaxes(title_text=words("axis.cosine"), row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", x=1.0, xanchor="right", y=1.0, yanchor="top",
                                  bgcolor="rgba(255,255,255,0.8)"))
    note = words("ch5.b2.note", layers=len(layers))
    return finish_slide(fig, style, words("ch5.b2.title"), note)
