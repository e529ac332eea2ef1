"""Chapter 0: the bottleneck: the chapter's figures, its builds in the order the speaker shows them, drawn
from its view (``view``). Their words are messages (``words``), said in the audience's language at the page."""

from __future__ import annotations

import plotly.graph_objects as go

from ..figure_common import bar_room, count_ticks, finish_slide, n_label, said_count, say_bytes, say_ratio
from ..text import words


def draw(view, style):
    return [_opening(view, style), *_bottleneck(view, style)]


def _opening(view, style):
    """The article's opening: a teacher's class where everyone compares with everyone, the
    comparisons against the class size on linear axes (a parabola), the class and its double
    marked and labelled with their counts."""
    curve = view.data["class_curve"]
    n = view.numbers
    fig = go.Figure(go.Scatter(x=[row["n"] for row in curve], y=[row["pairs"] for row in curve], mode="lines",
                               line=dict(color=style.colour(0), width=style.line), showlegend=False,
                               hoverinfo="x+y"))
    marked = [(n["teacher_students"], n["teacher_comparisons"]),
              (n["teacher_double_students"], n["teacher_double_comparisons"])]
    fig.add_scatter(x=[x for x, _ in marked], y=[y for _, y in marked], mode="markers+text",
                    marker=dict(size=style.marker * 2, color=style.colour(3), line=dict(color="#000", width=1)),
                    text=[words("ch0.b0.point", s=f"{x:,.0f}", c=f"{y:,.0f}") for x, y in marked],
                    textposition=["top left", "middle left"], cliponaxis=False,
                    textfont=dict(size=style.tick_font), showlegend=False)
    top = max(row["pairs"] for row in curve)
    fig.update_xaxes(title_text=words("axis.students"))
    fig.update_yaxes(title_text=words("axis.comparisons"), range=bar_room([top], 1.1), **count_ticks([top]))
    values = dict(s=f"{n['teacher_students']:,.0f}", c=f"{n['teacher_comparisons']:,.0f}",
                  s2=f"{n['teacher_double_students']:,.0f}", c2=f"{n['teacher_double_comparisons']:,.0f}",
                  g=f"{n['teacher_double_growth']:,.0f}")
    return finish_slide(fig, style, words("ch0.b0.title", **values), words("ch0.b0.note", **values))


def _bottleneck(view, style):
    """The article's step from 512 to 100K tokens: pairs, memory and FLOPs of the N x N map."""
    ladder = view.data["ladder"]
    now = view.data["current"]["n"]
    labels = [n_label(row["n"]) for row in ladder]
    outline = [4 if row["n"] == now else 0 for row in ladder]
    n = view.numbers

    # Linear axes: on a log axis ×38,000 looks like a few steps; here the short bars are
    # nearly invisible, which is the point, and each bar says its number.
    pairs = [row["pairs"] for row in ladder]
    fig = go.Figure(go.Bar(x=labels, y=pairs, marker_color=style.colour(0), text=[said_count(p) for p in pairs],
                           textposition="outside", cliponaxis=False, constraintext="none",
                           textfont=dict(size=style.tick_font), marker_line_width=outline,
                           marker_line_color="#000", showlegend=False))
    fig.update_xaxes(title_text=words("axis.n"), type="category")
    fig.update_yaxes(title_text=words("axis.pairs"), range=bar_room(pairs), **count_ticks(pairs))
    note = words("ch0.b1.note", a=n_label(n["article_n_from"]), pa=said_count(n["article_pairs_from"]),
                 b=n_label(n["article_n_to"]), pb=said_count(n["article_pairs_to"]), g=f"{n['article_growth']:,.0f}")
    first = finish_slide(fig, style, words("ch0.b1.title", a=n_label(n["article_n_from"]),
                                           b=n_label(n["article_n_to"]), g=f"{n['article_growth']:,.0f}"), note)

    fig2 = go.Figure()
    gb = []
    for i, (key, name) in enumerate((("bytes_f32", "legend.float32"), ("bytes_f16", "legend.float16"))):
        values = [row[key] / 1e9 for row in ladder]
        gb += values
        fig2.add_bar(x=labels, y=values, name=words(name), marker_color=style.colour(i + 1),
                     text=[say_bytes(row[key]) for row in ladder], textposition="outside", cliponaxis=False,
                     constraintext="none", textfont=dict(size=style.tick_font), marker_line_width=outline,
                     marker_line_color="#000")
    fig2.update_layout(barmode="group", legend=dict(x=0.01, xanchor="left", y=0.98, yanchor="top"))
    fig2.update_xaxes(title_text=words("axis.n"), type="category")
    fig2.update_yaxes(title_text=words("axis.gb"), range=bar_room(gb))
    second = finish_slide(fig2, style, words("ch0.b2.title"),
                          words("ch0.b2.note", n=n_label(now), f32=say_bytes(n["bytes_f32"]),
                                f16=say_bytes(n["bytes_f16"])))

    flops = [n["quadratic_flops"], n["linear_flops"]]
    fig3 = go.Figure(go.Bar(x=[words("legend.softmax_order"), words("legend.linear_order")], y=flops,
                            marker_color=[style.colour(3), style.colour(2)], text=[said_count(f) for f in flops],
                            textposition="outside", cliponaxis=False, constraintext="none",
                            textfont=dict(size=style.font), showlegend=False, width=0.5))
    fig3.update_yaxes(title_text=words("axis.flops"), range=bar_room(flops), **count_ticks(flops))
    third = finish_slide(fig3, style, words("ch0.b3.title", n=n_label(now)),
                         words("ch0.b3.note", d=f"{n['d']:.0f}", ratio=say_ratio(n["flop_ratio"])))
    return [first, second, third]
