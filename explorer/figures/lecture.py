"""Figures of the lecture: ``chapter_figures(view, lang, style)`` draws a ChapterView.

Every number drawn is one the view computed (``view.data`` / ``view.numbers``); what is
decided here is the look and the words, in English or Chinese (``explorer.lecture.text``).
"""

from __future__ import annotations

import math
import re
import unicodedata

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..lecture.text import t
from .style import CHAR_EM, NOMINAL_WIDTH_PX, as_style, finish, log_ticks, unique_labels

HEIGHT = 460
# The lecture's figures sit in the right-hand column of the lecture screen, 5 parts of 7 of
# a 1280-px projector less the page's padding: titles, notes and labels are fitted to it.
COLUMN_PX = 0.7 * 1280 - 40


def chapter_figures(view, lang: str = "en", style=None) -> list[go.Figure]:
    """The chapter's figures, titles and axis labels in ``lang``."""
    style = as_style(style)
    return _DRAW[view.ch](view, lang, style)


def _em(char: str) -> float:
    """Advance of one character in em, with margin: CJK is a full em, digits and capitals
    of DejaVu Sans run wider than ``CHAR_EM``, the rest fits it."""
    if unicodedata.east_asian_width(char) in "WF":
        return 1.0
    if char in "mwMW":
        return 1.0
    if char.isdigit():
        return 0.64
    if char.isupper():
        return 0.76
    return CHAR_EM


def text_px(text: str, font: float) -> float:
    """Estimated width of one line of ``text`` at ``font`` px (tags left out)."""
    plain = re.sub(r"<[^>]+>", "", text)
    return sum(_em(c) for c in plain) * font


def _share(*texts: str) -> float:
    """``finish``'s width for a lecture figure: the column's share of the nominal width,
    narrowed where the text's characters run wider than ``finish`` counts them (Chinese:
    a full em each), so that wrapped titles and notes stay inside the figure."""
    widest = max((text_px(t, 1.0) / len(t) for t in texts if t), default=CHAR_EM)
    return 0.96 * COLUMN_PX / NOMINAL_WIDTH_PX * min(1.0, CHAR_EM / widest)     # 4 %: the estimate's error


def _finish(fig, style, title, height, note="", **kw):
    return finish(fig, style, title, height, note, width=_share(title, note), **kw)


def _fmt(x: float) -> str:
    """A count or size as people say it: 1.0e10, 262,144, 0.0123."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    ax = abs(x)
    if ax >= 1e7:
        return f"{x:.2e}"
    if ax >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _times(ratio: float) -> str:
    """A ratio as a multiplier; below 10 with two significant digits, so that a ratio under
    1 (the linear path costing more at short N) never reads as 0."""
    if ratio is None or not math.isfinite(ratio):
        return "—"
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.2g}"


def _bytes(b: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


# -- 0 ----------------------------------------------------------------------------------

def _headroom(values, label_px: float, plot_px: float) -> list[float]:
    """A log axis range (log10 units) with ``label_px`` of room above the tallest bar for
    its label, and the shortest bar still visible."""
    logs = np.log10([v for v in values if v > 0] or [1.0])
    lo, hi = float(logs.min()) - 0.3, float(logs.max())
    room = (label_px + 8) / max(plot_px - label_px - 8, 1.0)
    return [lo, hi + room * (hi - lo)]


def _ch0(view, lang, style):
    ladder = view.data["ladder"]
    labels = [f"{row['n']:,}" for row in ladder]
    now = view.data["current"]["n"]
    plot_px = HEIGHT - 150                     # finish(): the plot's share of the height
    fig = go.Figure()
    longest, every = 0.0, []
    for i, (key, name) in enumerate((("pairs", "legend.pairs"), ("bytes_f32", "legend.float32"),
                                     ("bytes_f16", "legend.float16"))):
        values = [row[key] for row in ladder]
        text = [_fmt(v) if key == "pairs" else _bytes(v) for v in values]
        longest = max(longest, max(text_px(x, style.tick_font) for x in text))
        every += values
        # Upright, at the tick size: 18 bars share the width, and plotly would otherwise
        # shrink each label to its bar's width (unreadable on a projector).
        fig.add_bar(x=labels, y=values, name=t(name, lang), marker_color=style.colour(i), text=text,
                    textposition="outside", textangle=-90, constraintext="none", cliponaxis=False,
                    textfont=dict(size=style.tick_font),
                    marker_line_width=[4 if row["n"] == now else 0 for row in ladder], marker_line_color="#000")
    fig.update_yaxes(type="log", title_text=f"{t('axis.pairs', lang)} / {t('axis.bytes', lang)}",
                     range=_headroom(every, longest, plot_px))
    fig.update_xaxes(title_text=t("axis.n", lang), type="category")
    fig.update_layout(barmode="group")
    log_ticks(fig, style)
    note = (f"N = {now:,}: {_fmt(view.numbers['pairs'])} · float32 {_bytes(view.numbers['bytes_f32'])} · "
            f"float16 {_bytes(view.numbers['bytes_f16'])} · FLOPs {_fmt(view.numbers['quadratic_flops'])} "
            f"(N²) / {_fmt(view.numbers['linear_flops'])} ({t('word.linear', lang)}) = "
            f"{_times(view.numbers['flop_ratio'])}×")
    first = _finish(fig, style, t("ch0.fig1.title", lang, n=f"{now:,}"), HEIGHT, note)

    n0, n1 = view.numbers["article_n_from"], view.numbers["article_n_to"]
    p0, p1 = view.numbers["article_pairs_from"], view.numbers["article_pairs_to"]
    fig2 = go.Figure(go.Bar(x=[f"N = {n0:,.0f}", f"N = {n1:,.0f}"], y=[p0, p1], marker_color=[style.colour(0),
                                                                                              style.colour(3)],
                            text=[_fmt(p0), _fmt(p1)], textposition="outside", cliponaxis=False,
                            constraintext="none", textfont=dict(size=style.font)))
    fig2.update_yaxes(type="log", title_text=t("axis.pairs", lang),
                      range=_headroom([p0, p1], style.font * 1.3, plot_px))
    log_ticks(fig2, style)
    second = _finish(fig2, style, t("ch0.fig2.title", lang), HEIGHT, f"× {view.numbers['article_growth']:,.0f}")
    return [first, second]


# -- 1 ----------------------------------------------------------------------------------

KEY_LABELS = 8         # the heaviest keys drawn with their tokens; the rest are summed in the note


def _ch1(view, lang, style):
    toy = view.data["toy"]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.7, 0.3], vertical_spacing=0.06)
    fig.add_scatter(x=toy["grid"], y=toy["truth"], mode="lines", name=t("legend.truth", lang),
                    line=dict(color="#999", dash="dot", width=style.line), row=1, col=1)
    fig.add_scatter(x=toy["xs"], y=toy["ys"], mode="markers", name=t("legend.points", lang),
                    marker=dict(color=style.colour(0), size=style.marker,
                                opacity=0.35 + 0.65 * toy["weights"] / max(toy["weights"].max(), 1e-300)),
                    row=1, col=1)
    fig.add_scatter(x=toy["grid"], y=toy["curve"], mode="lines", name=t("legend.estimate", lang),
                    line=dict(color=style.colour(1), width=style.line), row=1, col=1)
    fig.add_scatter(x=[toy["x"]], y=[toy["fx"]], mode="markers", name=t("legend.query", lang),
                    marker=dict(color=style.colour(3), size=style.marker * 2, symbol="x"), row=1, col=1)
    fig.add_bar(x=toy["xs"], y=toy["weights"], name=t("legend.weights", lang), marker_color=style.colour(1),
                width=0.08, row=2, col=1)
    fig.add_vline(x=toy["x"], line_dash="dash", line_color=style.colour(3))
    fig.update_yaxes(title_text=t("axis.y", lang), row=1, col=1)
    fig.update_yaxes(title_text=t("axis.weight", lang), row=2, col=1)
    fig.update_xaxes(title_text=t("axis.x", lang), row=2, col=1)
    first = _finish(fig, style, t("ch1.fig1.title", lang, h=f"{toy['h']:g}", x=f"{toy['x']:g}"), HEIGHT + 80,
                   f"f̂(x) = {toy['fx']:.4f}")

    head = view.data["head"]
    tokens = unique_labels(head["tokens"])
    # The heaviest keys as horizontal bars, their tokens written out: a label under each of
    # dozens of keys is unreadable on a projector, and these are what the query attends to.
    weights = np.asarray(head["weights"], dtype=float)
    top = np.argsort(-weights, kind="stable")[:KEY_LABELS][::-1]
    fig2 = make_subplots(rows=1, cols=2, column_widths=[0.5, 0.5], horizontal_spacing=0.2,
                         subplot_titles=(t("axis.heaviest_keys", lang, k=len(top)), t("axis.value", lang)))
    fig2.add_bar(y=[tokens[i] for i in top], x=weights[top], orientation="h", marker_color=style.colour(0),
                 showlegend=False, text=[f"{w:.2f}" for w in weights[top]], textposition="outside",
                 cliponaxis=False, textfont=dict(size=style.tick_font), row=1, col=1)
    fig2.update_xaxes(title_text=t("axis.weight", lang), range=[0, float(weights.max()) * 1.35], row=1, col=1)
    dims = list(range(len(head["output"])))
    ref_name = "legend.model_output" if head["reference_kind"] == "model" else "legend.engine_output"
    fig2.add_bar(x=dims, y=head["output"], name=t("legend.nw_output", lang), marker_color=style.colour(1),
                 row=1, col=2)
    fig2.add_scatter(x=dims, y=head["reference"], mode="markers", name=t(ref_name, lang),
                     marker=dict(color="#000", size=style.marker, symbol="line-ew-open", line_width=3), row=1, col=2)
    fig2.update_xaxes(title_text=t("axis.value_dim", lang), row=1, col=2)
    rest = len(weights) - len(top)
    note = f"{t('num.max_diff', lang)} = {view.numbers['max_abs_diff']:.2e}"
    if rest > 0:
        note += " · " + t("ch1.fig2.rest", lang, n=rest, w=f"{weights.sum() - weights[top].sum():.2f}")
    second = _finish(fig2, style, t("ch1.fig2.title", lang, token=head["token"]), HEIGHT + 60, note)
    # The legend goes under the panels, which then get the column's whole width.
    second.update_layout(legend=dict(orientation="h", x=0, xanchor="left", y=-0.45, yanchor="top"),
                         margin=dict(b=int(style.font * 8)))
    return [first, second]


# -- 2 ----------------------------------------------------------------------------------

SLOT = 1.25            # block centres are this many slots apart: a quarter slot of air between


def _size_labels(orders, spacing_px: float, style) -> tuple[int, bool]:
    """Font and form of the blocks' size labels so that neighbours keep apart: one line
    ("4,096 × 64") at the body font down to the tick font, else two ("4,096 ×" over "64"),
    at the largest font that fits ``spacing_px`` less the operator between them."""
    room = spacing_px - text_px("→", style.font) - 10
    blocks = orders["left"] + orders["right"]
    one = [f"{b['rows']:,} × {b['cols']:,}" for b in blocks]
    two = [part for b in blocks for part in (f"{b['rows']:,} ×", f"{b['cols']:,}")]
    names = [b["name"] for b in blocks]
    for split, lines in ((False, one), (True, two)):
        for font in range(style.font, style.tick_font - 1 if not split else 7, -1):
            widest = max(max(text_px(x, font) for x in lines), max(text_px(x, font) * 1.1 for x in names))
            if widest <= room:
                return font, split
    return 7, True


def _blocks(blocks, sides, y0, slot, ops, font, split, op_font) -> tuple[list, list]:
    """One order left to right as layout shapes and annotations (plain dicts): each block
    centred in a slot of width ``slot``, its top edge at y0, its name and true size under
    it, the operators between the slots."""
    colours = {"operand": "#9ecae1", "intermediate": "#fdae6b", "output": "#a1d99b"}
    shapes, notes = [], []
    for i, (block, (h, w)) in enumerate(zip(blocks, sides)):
        centre = (i + 0.5) * slot * SLOT
        shapes.append(dict(type="rect", x0=centre - w / 2, x1=centre + w / 2, y0=y0 - h, y1=y0,
                           line=dict(color="#333", width=1.5), fillcolor=colours[block["role"]]))
        size = f"{block['rows']:,} ×<br>{block['cols']:,}" if split else f"{block['rows']:,} × {block['cols']:,}"
        notes.append(dict(x=centre, y=y0 - h, yshift=-4, yanchor="top", showarrow=False, font=dict(size=font),
                          text=f"<b>{block['name']}</b><br>{size}"))
        if i < len(ops):
            notes.append(dict(x=centre + slot * SLOT / 2, y=y0 - slot * 0.15, text=ops[i], showarrow=False,
                              font=dict(size=op_font)))
    return shapes, notes


def _ch2(view, lang, style):
    o = view.data["orders"]
    left, right = view.data["left_sides"], view.data["right_sides"]
    slot = float(max(left.max(), right.max()))
    width = 5 * slot * SLOT
    # Sized in px for the lecture column, then turned into data units (one scale on both
    # axes): the labels under a row and the next row's heading need this much room.
    unit = (COLUMN_PX - 130) / width                       # px per data unit; 130: finish()'s margins
    font, split = _size_labels(o, slot * SLOT * unit, style)
    label_px = (3 + split) * font * 1.25 + 8
    heading_px = style.font * 1.3 + 10
    row_gap = (label_px + heading_px + 6) / unit
    top_right = -float(left[:, 0].max()) - row_gap
    top, bottom = heading_px / unit, top_right - float(right[:, 0].max()) - label_px / unit
    shapes, notes = _blocks(o["left"], left, 0.0, slot, ("×", "→", "×", "→"), font, split, style.font)
    more_shapes, more_notes = _blocks(o["right"], right, top_right, slot, ("×", "→", "·", "→"), font, split,
                                      style.font)
    notes += more_notes
    for y, key, flops in ((0.0, "legend.left", o["left_flops"]), (top_right, "legend.right", o["right_flops"])):
        notes.append(dict(x=0, y=y, yshift=6, xanchor="left", yanchor="bottom", showarrow=False,
                          text=f"{t(key, lang)} · {_fmt(flops)} FLOPs", font=dict(size=style.font)))
    # One layout for every block and label: plotly re-validates the whole list on each
    # add_shape / add_annotation, which made this figure the slowest of the lecture.
    fig = go.Figure(layout=dict(
        shapes=shapes + more_shapes, annotations=notes,
        xaxis=dict(visible=False, range=[0, width]),
        yaxis=dict(visible=False, range=[bottom, top], scaleanchor="x", scaleratio=1)))
    plot_height = int((top - bottom) * unit) + 10          # tall enough that the width sets the scale
    n = view.numbers
    scale_note = t("notice.sides_compressed", lang) if view.data["sides_compressed"] else ""
    note = (f"{t('num.max_diff', lang)} = {n['max_abs_diff']:.2e} (rel. {n['max_rel_diff']:.1e}) · "
            f"N×N: {_bytes(n['left_intermediate_bytes'])} · m×d: {_bytes(n['right_intermediate_bytes'])}"
            + (f" · {scale_note}" if scale_note else ""))
    first = _finish(fig, style, t("ch2.fig1.title", lang, n=f"{o['n']:,}", d=o["d"], m=o["m"]),
                    max(HEIGHT + 120, plot_height + 150), note,
                   fonts_done=True)

    names = [t("legend.left", lang), t("legend.right", lang)]
    fig2 = make_subplots(rows=1, cols=3, subplot_titles=(t("axis.flops", lang), t("axis.bytes", lang),
                                                         t("axis.seconds", lang)))
    for col, (a, b, fmt) in enumerate(((n["left_flops"], n["right_flops"], _fmt),
                                       (n["left_intermediate_bytes"], n["right_intermediate_bytes"], _bytes),
                                       (n["left_seconds"], n["right_seconds"], lambda s: f"{s * 1e3:.3g} ms")),
                                      start=1):
        fig2.add_bar(x=names, y=[a, b], marker_color=[style.colour(3), style.colour(2)], text=[fmt(a), fmt(b)],
                     textposition="outside", cliponaxis=False, constraintext="none",
                     textfont=dict(size=style.tick_font), showlegend=False, row=1, col=col)
        fig2.update_yaxes(type="log", range=_headroom([a, b], style.tick_font * 1.3, HEIGHT - 150), row=1, col=col)
    note2 = t("ch2.fig2.note", lang, flops=_times(n["flop_ratio"]), time=_times(n["time_ratio"]),
              timed_n=f"{n['timed_n']:,.0f}", timed_flops=_times(n["timed_flop_ratio"]),
              gflops=f"{n['matmul_gflops']:.0f}", article=_times(n["article_model_ratio"]),
              leading=f"{n['article_leading_ratio']:.0f}")
    second = _finish(fig2, style, t("ch2.fig2.title", lang, n=f"{o['n']:,}"), HEIGHT, note2)
    return [first, second]


# -- 3 ----------------------------------------------------------------------------------

def _ch3(view, lang, style):
    tay = view.data["taylor"]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.68, 0.32], vertical_spacing=0.05)
    fig.add_scatter(x=tay["s"], y=tay["exp"], mode="lines", name=t("legend.exp", lang),
                    line=dict(color="#000", width=style.line), row=1, col=1)
    for i, order in enumerate((1, 2, 3)):
        fig.add_scatter(x=tay["s"], y=tay[f"order{order}"], mode="lines", name=t("legend.order", lang, k=order),
                        line=dict(color=style.colour(i), width=style.line, dash="dash"), row=1, col=1)
    fig.add_hline(y=0, line_color="#888", row=1, col=1)
    if tay["s"][0] < -1.0:
        # Where 1 + s < 0 the first-order "kernel" is negative. Shaded on both panels, so it
        # stays visible when large logits stretch the kernel axis and the dip looks flat.
        fig.add_shape(type="rect", xref="x", yref="paper", x0=float(tay["s"][0]), x1=-1.0, y0=0, y1=1,
                      fillcolor=style.colour(3), opacity=0.1, line_width=0, layer="below")
        fig.add_annotation(xref="x", yref="paper", x=-1.0, y=1.0, xanchor="right", yanchor="top", showarrow=False,
                           text=t("legend.taylor1_negative", lang), font=dict(size=style.tick_font))
    # exp(s) at the largest logits would flatten everything else: show up to where most pairs lie.
    top = float(np.exp(np.percentile(view.data["logits"], 98)))
    fig.update_yaxes(range=[-max(4.0, 0.25 * top), max(4.0, 1.3 * top)], row=1, col=1)
    fig.add_histogram(x=view.data["logits"], nbinsx=60, marker_color=style.colour(5), showlegend=False, row=2, col=1)
    fig.update_yaxes(title_text=t("axis.kernel", lang), row=1, col=1)
    fig.update_yaxes(title_text=t("axis.count", lang), row=2, col=1)
    fig.update_xaxes(title_text=t("axis.s", lang), row=2, col=1)
    n = view.numbers
    note = (f"s ∈ [{n['s_min']:.2f}, {n['s_max']:.2f}] · 1 + s < 0: {100 * n['negative_taylor1_fraction']:.1f} %")
    first = _finish(fig, style, t("ch3.fig1.title", lang), HEIGHT + 80, note)

    profiles = view.data["profiles"]
    labels = list(profiles)
    cols = 2
    rows = -(-len(labels) // cols)
    fig2 = make_subplots(rows=rows, cols=cols, vertical_spacing=0.16, horizontal_spacing=0.1,
                         subplot_titles=[f"{lab} (m = {profiles[lab]['m']})" for lab in labels])
    for index, label in enumerate(labels):
        row, col = index // cols + 1, index % cols + 1
        p = profiles[label]
        ok = p["approx"] > 0
        fig2.add_scatter(x=p["exact"][ok], y=p["approx"][ok], mode="markers", showlegend=False,
                         marker=dict(size=max(style.marker - 3, 3), color=style.colour(index), opacity=0.5),
                         row=row, col=col)
        lo = float(min(p["exact"].min(), p["approx"][ok].min() if ok.any() else p["exact"].min()))
        hi = float(max(p["exact"].max(), p["approx"][ok].max() if ok.any() else p["exact"].max()))
        fig2.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color="#000", dash="dot"),
                         name=t("legend.identity", lang), showlegend=index == 0, row=row, col=col)
    # Whole rows and columns at once: every update_*axes call walks all panels.
    fig2.update_xaxes(type="log")
    fig2.update_yaxes(type="log")
    fig2.update_xaxes(title_text=t("axis.exact", lang), row=rows)
    fig2.update_yaxes(title_text=t("axis.approx", lang), col=1)
    second = _finish(fig2, style, t("ch3.fig2.title", lang), HEIGHT + 260)

    fig3 = go.Figure()
    for i, (key, name) in enumerate((("rf_well", "legend.well"), ("rf_real", "legend.real"))):
        rf = view.data[key]
        for kind, dash in (("iid", "dash"), ("orthogonal", "solid")):
            fig3.add_scatter(x=rf["m"], y=rf[kind], mode="lines+markers",
                             name=f"{t(name, lang)} · {t('legend.' + kind, lang)}",
                             error_y=dict(type="data", array=rf[f"{kind}_std"], visible=True),
                             line=dict(color=style.colour(i), dash=dash, width=style.line))
    fig3.update_xaxes(type="log", title_text=t("axis.m", lang))
    fig3.update_yaxes(type="log", title_text=t("axis.map_error", lang))
    log_ticks(fig3, style)
    third = _finish(fig3, style, t("ch3.fig3.title", lang), HEIGHT)

    norms = view.data["norms"]
    fig4 = go.Figure()
    for i, (key, name) in enumerate((("q", "legend.q_norm"), ("k", "legend.k_norm"))):
        fig4.add_histogram(x=norms[key], name=f"{t(name, lang)} · {t('legend.real', lang)}", opacity=0.7,
                           marker_color=style.colour(i), nbinsx=30)
        fig4.add_histogram(x=norms[f"{key}_well"], name=f"{t(name, lang)} · {t('legend.well', lang)}", opacity=0.5,
                           marker_color=style.colour(i + 4), nbinsx=30)
    fig4.update_layout(barmode="overlay")
    fig4.update_xaxes(title_text=t("axis.norm", lang))
    fig4.update_yaxes(title_text=t("axis.count", lang))
    note4 = ""
    if "m_required" in n:
        note4 = t("ch3.fig4.note", lang, real=_fmt(n["m_required"]), real_label=t("legend.real", lang),
                  well=_fmt(n["m_required_well"]), well_label=t("legend.well", lang))
    fourth = _finish(fig4, style, t("ch3.fig4.title", lang), HEIGHT, note4)
    return [first, second, third, fourth]


# -- 4 ----------------------------------------------------------------------------------

def _ch4(view, lang, style):
    step = view.data["step"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=(t("legend.update", lang), t("legend.state_t", lang)),
                        horizontal_spacing=0.12)
    for col, (key, bar_x) in enumerate((("update", 0.43), ("state", 1.0)), start=1):
        z = step[key]
        lim = float(np.abs(z).max()) or 1.0
        fig.add_heatmap(z=z, colorscale=style.diverging, zmin=-lim, zmax=lim, colorbar=dict(x=bar_x, len=0.9),
                        row=1, col=col)
        fig.update_yaxes(autorange="reversed", title_text=t("axis.feature", lang) if col == 1 else None,
                         row=1, col=col)
        fig.update_xaxes(title_text=t("axis.value_dim", lang), row=1, col=col)
    n = view.numbers
    note = (f"{t('ch4.fig1.compare', lang)}: {t('num.max_diff', lang)} = {n['max_abs_diff']:.2e} "
            f"(rel. {n['max_rel_diff']:.1e}) · φ(q_t)·z_t = {step['denominator']:.4g}")
    first = _finish(fig, style, t("ch4.fig1.title", lang, t=step["t"], token=view.data["token"]), HEIGHT, note)

    mem = view.data["memory"]
    fig2 = go.Figure()
    fig2.add_scatter(x=mem["tokens"], y=mem["kv_bytes"], mode="lines+markers", name=t("legend.kv_cache", lang),
                     line=dict(color=style.colour(3), width=style.line))
    fig2.add_scatter(x=mem["tokens"], y=np.full(len(mem["tokens"]), mem["state_bytes"]), mode="lines",
                     name=t("legend.state", lang), line=dict(color=style.colour(2), width=style.line))
    fig2.update_xaxes(type="log", title_text=t("axis.tokens_seen", lang))
    fig2.update_yaxes(type="log", title_text=t("axis.bytes", lang))
    log_ticks(fig2, style)
    second = _finish(fig2, style, t("ch4.fig2.title", lang), HEIGHT,
                    t("ch4.fig2.note", lang, m=f"{n['m']:.0f}", state=_bytes(n["state_bytes"]),
                      t=f"{n['break_even_tokens']:.1f}"))

    rc = view.data["recall"]
    shown = rc["lags"] > 0          # log axis: lag 0 (nothing written over the target) is left out
    fig3 = go.Figure(go.Scatter(x=rc["lags"][shown], y=rc["cosine"][shown], mode="lines+markers",
                                error_y=dict(type="data", array=rc["cosine_std"][shown], visible=True),
                                name=t("legend.early", lang), line=dict(color=style.colour(0), width=style.line)))
    recent = view.data.get("recall_recent")
    if recent is not None:
        shown = recent["lags"] > 0
        fig3.add_scatter(x=recent["lags"][shown], y=recent["cosine"][shown], mode="lines+markers",
                         name=t("legend.recent", lang),
                         line=dict(color=style.colour(1), width=style.line, dash="dot"))
    fig3.update_xaxes(type="log", title_text=t("axis.lag", lang))
    fig3.update_yaxes(title_text=t("axis.cosine", lang), range=[-0.2, 1.05])
    third = _finish(fig3, style, t("ch4.fig3.title", lang), HEIGHT)
    return [first, second, third]


# -- 5 ----------------------------------------------------------------------------------

def _ch5(view, lang, style):
    curves = view.data["recall"]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True,
                        subplot_titles=(t("legend.early", lang), t("legend.recent", lang)))
    for col, pos in enumerate(("early", "recent"), start=1):
        for i, kind in enumerate(("none", "retnet", "gla")):
            rc = curves[(kind, pos)]
            shown = rc["lags"] > 0
            fig.add_scatter(x=rc["lags"][shown], y=rc["cosine"][shown], mode="lines+markers",
                            name=t(f"legend.{kind}", lang), showlegend=col == 1,
                            line=dict(color=style.colour(i), width=style.line), row=1, col=col)
        fig.update_xaxes(type="log", title_text=t("axis.lag", lang) if col == 1 else None, row=1, col=col)
    fig.update_yaxes(title_text=t("axis.cosine", lang), range=[-0.2, 1.05], row=1, col=1)
    first = _finish(fig, style, t("ch5.fig1.title", lang), HEIGHT)

    kl = view.data["kl"]
    fig2 = go.Figure()
    hidden = []
    for i, (name, r) in enumerate(kl.items()):
        values = r["kl"][np.isfinite(r["kl"])]
        drawn = values[values > 0]                # a log axis cannot show KL = 0 (or -1e-17 from rounding)
        if drawn.size < values.size:
            hidden.append(t("note.kl_not_drawn", lang, map=name, count=values.size - drawn.size))
        fig2.add_box(y=drawn, name=f"{name} (m = {r['m']})", marker_color=style.colour(i), boxmean=True)
    fig2.update_yaxes(type="log", title_text=t("axis.kl", lang))
    second = _finish(fig2, style, t("ch5.fig2.title", lang), HEIGHT,
                    " · ".join([f"{name}: {r['mean']:.3f}" for name, r in kl.items()] + hidden))
    figs = [first, second]

    path = view.data.get("hybrid")
    fig3 = go.Figure()
    if path:
        fig3.add_scatter(x=[p["k"] for p in path], y=[p["cosine"] for p in path], mode="lines+markers+text",
                         text=[", ".join(map(str, p["kept"])) or "—" for p in path], textposition="top center",
                         line=dict(color=style.colour(2), width=style.line))
    fig3.update_xaxes(title_text=t("axis.k_softmax", lang), dtick=1)
    fig3.update_yaxes(title_text=t("axis.embedding_cos", lang))
    figs.append(_finish(fig3, style, t("ch5.fig3.title", lang), HEIGHT))
    return figs


# -- 6 ----------------------------------------------------------------------------------

def _ch6(view, lang, style):
    points = view.data["points"]
    front = view.data["frontier"]
    # A log axis drops values <= 0 without a word: such points are named in the note instead.
    good = [p for p in points if math.isfinite(p["median_kl"]) and p["median_kl"] > 0]
    bad = [p for p in points if p not in good]
    fig = go.Figure()
    fig.add_scatter(x=[p["cost"] for p in good], y=[p["median_kl"] for p in good], mode="markers+text",
                    text=[f"{p['label']} (m={p['m']})" for p in good], textposition="top center", cliponaxis=False,
                    marker=dict(size=style.marker * 1.5, color=style.colour(0)), name=t("legend.maps", lang))
    front = [i for i in front if points[i] in good]
    fig.add_scatter(x=[points[i]["cost"] for i in front], y=[points[i]["median_kl"] for i in front],
                    mode="lines", line=dict(color=style.colour(3), width=style.line, shape="hv"),
                    name=t("legend.frontier", lang))
    costs = np.log10([p["cost"] for p in good] or [1.0])
    kls = np.log10([p["median_kl"] for p in good] or [1.0])
    pad_x, pad_y = 0.15 * max(np.ptp(costs), 0.5), 0.15 * max(np.ptp(kls), 0.2)
    fig.update_xaxes(type="log", title_text=t("axis.flops_token", lang),
                     range=[costs.min() - pad_x, costs.max() + pad_x])
    fig.update_yaxes(type="log", title_text=t("axis.median_kl", lang), range=[kls.min() - pad_y, kls.max() + 2 * pad_y])
    note = " · ".join(t("note.kl_undefined" if not math.isfinite(p["median_kl"]) else "note.kl_zero", lang,
                        map=p["label"], kl=f"{p['median_kl']:.2g}") for p in bad)
    first = _finish(fig, style, t("ch6.fig1.title", lang, layer=view.controls["layer"]), HEIGHT + 60, note)

    road = view.data["roadmap"]
    fig2 = go.Figure(go.Scatter(x=[r["year"] for r in road], y=[r["median_kl"] for r in road], mode="lines+markers+text",
                                text=[f"{r['what']}<br>{r['map']}: {r['median_kl']:.3f}" for r in road],
                                textposition="top center", cliponaxis=False,
                                line=dict(color=style.colour(2), width=style.line),
                                marker=dict(size=style.marker * 1.5,
                                            symbol=["diamond" if r["causal"] else "circle" for r in road])))
    fig2.update_xaxes(title_text=t("axis.year", lang), dtick=1, range=[2019.5, 2025.8])
    fig2.update_yaxes(type="log", title_text=t("axis.median_kl", lang))
    second = _finish(fig2, style, t("ch6.fig2.title", lang), HEIGHT + 60)
    return [first, second]


_DRAW = {0: _ch0, 1: _ch1, 2: _ch2, 3: _ch3, 4: _ch4, 5: _ch5, 6: _ch6}
