"""Chapter 3: choosing the kernel: the chapter's figures, its builds in the order the speaker shows them, drawn
from its view (``view``). Their words are messages (``words``), said in the audience's language at the page."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..figure_common import Wrapped, column_px, finish_slide, say_count, whole_ticks
from ..numbers import say_fixed
from ..text import words
from ...catalog import map_label
from ...text import Joined


def _reverse_kernel(view, style):
    """The kernel trick against its reverse use, as a table whose cells wrap at word
    boundaries to their column (a table that breaks words mid-way cannot be read), in
    whichever language they are said; the rows as tall as the most lines a cell takes."""
    rows = view.data["reverse_kernel"]
    header = [words("rk.header.aspect"), words("rk.header.svm"), words("rk.header.linear")]
    widths = (0.26, 0.37, 0.37)
    room = column_px(style) - 40
    font = style.tick_font
    columns = [[Wrapped(words(row[c]), font, widths[c] * room - 16) for row in rows] for c in range(3)]

    def row_height(fig):                      # from the cells as said: each language wraps its own words
        cells = fig.data[0].cells
        lines = max(str(cell).count("<br>") + 1 for col in cells.values for cell in col)
        cells.height = font * 1.35 * lines + 12
        fig.update_layout(margin=dict(l=20, r=20, b=10))

    fig = go.Figure(go.Table(
        columnwidth=list(widths),
        header=dict(values=[Joined(("<b>", h, "</b>")) for h in header], font=dict(size=font), align="left",
                    fill_color="#e8eef7", height=font * 1.9),
        cells=dict(values=columns, font=dict(size=font), align="left",
                   fill_color=[["#f7f7f7"] * len(rows), ["#ffffff"] * len(rows), ["#fff4e6"] * len(rows)])))
    return finish_slide(fig, style, words("ch3.b0.title"), then=row_height)


def _profiles(view, style, labels, title_key):
    """Kernel values of the named maps against exp(q·k/√d), one log-log panel each."""
    profiles = view.data["profiles"]
    labels = [label for label in labels if label in profiles]
    fig = make_subplots(rows=1, cols=len(labels), horizontal_spacing=0.14,
                        subplot_titles=[Joined((map_label(lab), f" (m = {profiles[lab]['m']})")) for lab in labels])
    hidden = []
    for index, label in enumerate(labels):
        p = profiles[label]
        ok = p["approx"] > 0
        if not ok.all():
            hidden.append(words("notice.not_shown_log", map=map_label(label), count=int((~ok).sum()),
                                pairs=int(ok.size)))
        fig.add_scatter(x=p["exact"][ok], y=p["approx"][ok], mode="markers", showlegend=False,
                        marker=dict(size=max(style.marker - 5, 4), color=style.colour(index), opacity=0.5),
                        row=1, col=index + 1)
        lo = float(min(p["exact"].min(), p["approx"][ok].min() if ok.any() else p["exact"].min()))
        hi = float(max(p["exact"].max(), p["approx"][ok].max() if ok.any() else p["exact"].max()))
        fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color="#000", dash="dot", width=2),
                        showlegend=False, row=1, col=index + 1)
    fig.update_xaxes(type="log", title_text=words("axis.exact"))
    fig.update_yaxes(type="log")
    fig.update_yaxes(title_text=words("axis.approx"), col=1)
    note = [words("legend.identity")]
    for line in hidden:
        note += [" · ", line]
    return finish_slide(fig, style, words(title_key), Joined(note))


def _taylor_gap(view, style):
    """The Taylor gap as the series itself: each order's share of this head's sum of exp(s)
    over its pairs, orders 0 and 1 (what 1 + s keeps) in one colour, orders 2 and up (what it
    drops) in another, the orders beyond the last drawn as one bar."""
    series = view.data["series"]
    orders = [int(n) for n in series["orders"]]
    percent = [100 * float(x) for x in series["shares"]]
    tail = len(orders)                         # the bar of the orders beyond the last drawn
    fig = go.Figure()
    for i, (name, picked) in enumerate((("legend.series_kept", orders[:2]), ("legend.series_dropped", orders[2:]))):
        values = [percent[n] for n in picked]
        x, y = (picked, values) if i == 0 else (picked + [tail], values + [100 * series["tail"]])
        fig.add_bar(x=x, y=y, name=words(name), marker_color=style.colour(i), text=[f"{v:.0f}" for v in y],
                    textposition="outside", cliponaxis=False, textfont=dict(size=style.tick_font))
    fig.add_hline(y=0, line_color="#888")
    top = max(percent + [100 * series["tail"]])          # the legend takes the top band, above every bar
    low = min(percent + [0.0])
    fig.update_yaxes(title_text=words("axis.series_share"), range=[low * 1.25 - 2, top * 1.6 + 2])
    fig.update_xaxes(title_text=words("axis.series_order"), tickmode="array", tickvals=orders + [tail],
                     ticktext=[str(n) for n in orders] + [f"≥ {tail}"])
    fig.update_layout(legend=dict(orientation="h", x=1.0, xanchor="right", y=1.0, yanchor="top",
                                  bgcolor="rgba(255,255,255,0.8)"))
    n = view.numbers
    note = words("ch3.b2.note", pairs=f"{series['pairs']:,}", kept=f"{100 * n['taylor1_kept_share']:.0f}",
             dropped=f"{100 * n['taylor1_dropped_share']:.0f}")
    return finish_slide(fig, style, words("ch3.b2.title"), note)


def _tallest_bin(values, bins: int) -> int:
    """The most values in one of ``bins`` equal bins (plotly bins in the browser, about as numpy does)."""
    values = np.asarray(values, dtype=float).ravel()
    return int(np.histogram(values, bins=bins)[0].max()) if values.size else 1


def draw(view, style):
    first = _reverse_kernel(view, style)
    n = view.numbers

    # The truncations and, behind them, where this head's logits lie (one count per
    # (query, key) pair, on the right-hand axis, ticked): order 1 fails where most pairs are.
    tay = view.data["taylor"]
    logits = view.data["logits"]
    fig = go.Figure()
    fig.add_histogram(x=logits, nbinsx=50, marker_color="#9a9a9a", opacity=0.3, yaxis="y2",
                      name=words("legend.logits"))
    fig.add_scatter(x=tay["s"], y=tay["exp"], mode="lines", name=words("legend.exp"),
                    line=dict(color="#000", width=style.line))
    for i, order in enumerate((1, 2, 3)):
        fig.add_scatter(x=tay["s"], y=tay[f"order{order}"], mode="lines", name=words("legend.order", k=order),
                        line=dict(color=style.colour(i), width=style.line, dash="dash"))
    fig.add_hline(y=0, line_color="#888")
    if tay["s"][0] < -1.0:
        # Where 1 + s < 0 the first-order "kernel" is negative: shaded, and named in the legend
        # (a label inside the plot would lie on the curves).
        fig.add_vrect(x0=float(tay["s"][0]), x1=-1.0, fillcolor=style.colour(3), opacity=0.15, line_width=0,
                      layer="below", showlegend=True, name=words("legend.taylor1_negative"))
    # The kernel axis is sized to the truncations near 0, where they part from exp(s) and
    # order 1 turns negative; exp(s) and the higher orders leave it at the top (on a scale
    # that held exp(s) at the largest logits every truncation would lie flat on 0).
    lo_s = float(tay["s"][0])
    bottom = min(-2.0, 1.2 * float(min(tay["order1"].min(), tay["order3"].min(), 0.0)))
    # The bars' counts on their own axis, on the right, its 0 level with the kernel's 0; the
    # legend right of that axis (at plotly's usual place it lay on the axis's labels).
    tallest = _tallest_bin(logits, 50)
    top2 = 2.2 * tallest
    step = whole_ticks([tallest], most=4)["dtick"]
    fig.update_layout(yaxis=dict(range=[bottom, 16.0], title_text=words("axis.kernel")),
                      yaxis2=dict(overlaying="y", side="right", showgrid=False, zeroline=False,
                                  title_text=words("axis.pair_count"), range=[bottom / 16.0 * top2, top2],
                                  tickmode="array", tickvals=list(range(0, tallest + 1, step))),
                      barmode="overlay",
                      legend=dict(x=1.12, xanchor="left", y=1.0, yanchor="top"))
    fig.update_xaxes(title_text=words("axis.s"), range=[lo_s, float(tay["s"][-1])])
    second = finish_slide(fig, style, words("ch3.b1.title"),
                     words("ch3.b1.note", lo=say_fixed(n["s_min"]), hi=say_fixed(n["s_max"]),
                       count=f"{n['negative_taylor1_pairs']:,.0f}", pairs=f"{logits.size:,}",
                       n=f"{n['tokens']:.0f}"))

    gap = _taylor_gap(view, style)

    labels = list(view.data["profiles"])
    truncations = [label for label in labels if label.startswith("taylor")]
    others = [label for label in labels if label not in truncations]
    fourth = _profiles(view, style, truncations, "ch3.b3.title")
    fifth = _profiles(view, style, others, "ch3.b4.title")

    fig3 = go.Figure()
    for i, (key, name) in enumerate((("rf_well", "legend.well"), ("rf_real", "legend.real"))):
        rf = view.data[key]
        for kind, dash in (("iid", "dash"), ("orthogonal", "solid")):
            fig3.add_scatter(x=rf["m"], y=rf[kind], mode="lines+markers",
                             name=Joined((words(name), " · ", words("legend." + kind))),
                             error_y=dict(type="data", array=rf[f"{kind}_std"], visible=True),
                             line=dict(color=style.colour(i), dash=dash, width=style.line))
    fig3.update_xaxes(type="log", title_text=words("axis.m"))
    fig3.update_yaxes(type="log", title_text=words("axis.map_error"))
    sixth = finish_slide(fig3, style, words("ch3.b5.title"))

    norms = view.data["norms"]
    fig4 = go.Figure()
    for i, (key, name) in enumerate((("q", "legend.q_norm"), ("k", "legend.k_norm"))):
        fig4.add_histogram(x=norms[key], name=Joined((words(name), " · ", words("legend.real"))), opacity=0.7,
                           marker_color=style.colour(i), nbinsx=30)
        fig4.add_histogram(x=norms[f"{key}_well"], name=Joined((words(name), " · ", words("legend.well"))), opacity=0.5,
                           marker_color=style.colour(i + 4), nbinsx=30)
    fig4.update_layout(barmode="overlay")
    fig4.update_xaxes(title_text=words("axis.norm"))
    # Counts of tokens per bin (plotly bins the norms in the browser; numpy's 30 bins give
    # the same scale): whole-number ticks.
    tallest = max(int(np.histogram(np.asarray(norms[key], dtype=float), bins=30)[0].max())
                  for key in ("q", "k", "q_well", "k_well") if len(norms[key]))
    fig4.update_yaxes(title_text=words("axis.token_count"), **whole_ticks([tallest]))
    note4 = ""
    if "m_required" in n:
        note4 = words("ch3.b6.note", real=say_count(n["m_required"]), real_label=words("legend.real"),
                  well=say_count(n["m_required_well"]), well_label=words("legend.well"))
    seventh = finish_slide(fig4, style, words("ch3.b6.title"), note4)
    return [first, second, gap, fourth, fifth, sixth, seventh]
