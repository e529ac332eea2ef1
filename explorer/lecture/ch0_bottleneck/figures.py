"""Chapter 0: the bottleneck: the chapter's figures, its builds in the order the speaker shows them, drawn
from its view (``view``)."""

from __future__ import annotations

import plotly.graph_objects as go

from ...figures.lecture_common import bar_room, say_bytes, count_ticks, finish_slide, say_count, n_label, say_ratio
from ..text import t


def draw(view, lang, style):
    ladder = view.data["ladder"]
    now = view.data["current"]["n"]
    labels = [n_label(row["n"], lang) for row in ladder]
    outline = [4 if row["n"] == now else 0 for row in ladder]
    n = view.numbers

    # Linear axes: on a log axis ×38,000 looks like a few steps; here the short bars are
    # nearly invisible, which is the point, and each bar says its number.
    pairs = [row["pairs"] for row in ladder]
    fig = go.Figure(go.Bar(x=labels, y=pairs, marker_color=style.colour(0), text=[say_count(p) for p in pairs],
                           textposition="outside", cliponaxis=False, constraintext="none",
                           textfont=dict(size=style.tick_font), marker_line_width=outline,
                           marker_line_color="#000", showlegend=False))
    fig.update_xaxes(title_text=t("axis.n", lang), type="category")
    fig.update_yaxes(title_text=t("axis.pairs", lang), range=bar_room(pairs), **count_ticks(pairs))
    note = t("ch0.b0.note", lang, a=n_label(n["article_n_from"], lang), pa=say_count(n["article_pairs_from"]),
             b=n_label(n["article_n_to"], lang), pb=say_count(n["article_pairs_to"]), g=f"{n['article_growth']:,.0f}")
    first = finish_slide(fig, style, t("ch0.b0.title", lang), note)

    fig2 = go.Figure()
    gb = []
    for i, (key, name) in enumerate((("bytes_f32", "legend.float32"), ("bytes_f16", "legend.float16"))):
        values = [row[key] / 1e9 for row in ladder]
        gb += values
        fig2.add_bar(x=labels, y=values, name=t(name, lang), marker_color=style.colour(i + 1),
                     text=[say_bytes(row[key]) for row in ladder], textposition="outside", cliponaxis=False,
                     constraintext="none", textfont=dict(size=style.tick_font), marker_line_width=outline,
                     marker_line_color="#000")
    fig2.update_layout(barmode="group", legend=dict(x=0.01, xanchor="left", y=0.98, yanchor="top"))
    fig2.update_xaxes(title_text=t("axis.n", lang), type="category")
    fig2.update_yaxes(title_text=t("axis.gb", lang), range=bar_room(gb))
    second = finish_slide(fig2, style, t("ch0.b1.title", lang),
                     t("ch0.b1.note", lang, n=n_label(now, lang), f32=say_bytes(n["bytes_f32"]),
                       f16=say_bytes(n["bytes_f16"])))

    flops = [n["quadratic_flops"], n["linear_flops"]]
    fig3 = go.Figure(go.Bar(x=[t("legend.softmax_order", lang), t("legend.linear_order", lang)], y=flops,
                            marker_color=[style.colour(3), style.colour(2)], text=[say_count(f) for f in flops],
                            textposition="outside", cliponaxis=False, constraintext="none",
                            textfont=dict(size=style.font), showlegend=False, width=0.5))
    fig3.update_yaxes(title_text=t("axis.flops", lang), range=bar_room(flops), **count_ticks(flops))
    third = finish_slide(fig3, style, t("ch0.b2.title", lang, n=n_label(now, lang)),
                    t("ch0.b2.note", lang, d=f"{n['d']:.0f}", ratio=say_ratio(n["flop_ratio"])))
    return [first, second, third]
