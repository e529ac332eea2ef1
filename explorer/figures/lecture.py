"""Figures of the lecture: ``chapter_figures(view, lang, style)`` draws a ChapterView as its
builds, one figure each, in the order the speaker shows them.

Every number drawn is one the view computed (``view.data`` / ``view.numbers``); what is
decided here is the look and the words, in English or Chinese (``explorer.lecture.text``).

A slide's figure takes its height from the window (no fixed pixel height: ``autosize``), so
each figure holds one idea and stays readable from about 450 to 900 px of height; margins
grow to fit tick labels and axis titles (``automargin``) instead of cutting them.
"""

from __future__ import annotations

import math
import re
import unicodedata

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..lecture.ch2_associativity.maths import STEP_OPS
from ..lecture.text import map_name, road_label, t
from .style import CHAR_EM, NOMINAL_WIDTH_PX, as_style, finish, unique_labels

# The height the margins are laid out for; the figure itself fills the height it is given.
NOMINAL_HEIGHT = 480
# Titles, notes and labels are fitted to this width: the slide's figure beside the speaker's
# notes on a 1280-px projector (about two thirds of it); the full width only adds air.
COLUMN_PX = 0.7 * 1280 - 40


def chapter_figures(view, lang: str = "en", style=None) -> list[go.Figure]:
    """The chapter's builds, one figure each, titles and axis labels in ``lang``."""
    style = as_style(style)
    return _DRAW[view.ch](view, lang, style)


def build_count(ch: int) -> int:
    """How many builds chapter ``ch`` has (its figures, whatever the data)."""
    return BUILDS[int(ch)]


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


def _finish(fig, style, title, note="", **kw):
    """``finish`` (fonts, title, wrapped note, top margin), then the height left to the
    window and margins that grow to fit what the axes write."""
    fig = finish(fig, style, title, NOMINAL_HEIGHT, note, width=_share(title, note), **kw)
    fig.update_layout(height=None, autosize=True)
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def _fmt(x: float) -> str:
    """A count or size as people say it: 1.0 × 10¹⁰, 262,144, 0.0123."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    ax = abs(x)
    if ax >= 1e7:
        exponent = int(math.floor(math.log10(ax)))
        return f"{x / 10 ** exponent:.2g} × 10{_superscript(exponent)}"
    if ax >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _superscript(n: int) -> str:
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _times(ratio: float) -> str:
    """A ratio as a multiplier; below 10 with two significant digits, so that a ratio under
    1 (the linear path costing more at short N) never reads as 0."""
    if ratio is None or not math.isfinite(ratio):
        return "—"
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.2g}"


def _bytes(b: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


def _n_label(n: float, lang: str) -> str:
    """A sequence length as a category label: 100K is 10 万 in Chinese."""
    n = int(n)
    if lang == "zh" and n >= 10_000 and n % 10_000 == 0:
        return f"{n // 10_000:,} 万"
    return f"{n:,}"


def _log_tick_values(values) -> dict:
    """Ticks for a log axis over ``values`` with at least three labels: 1-2-5 steps where
    the values span few decades (a single "10⁴" cannot be read), decades otherwise."""
    values = [v for v in values if v > 0 and math.isfinite(v)]
    if not values:
        return {}
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo > 3:
        return {"dtick": 1}
    ticks = [m * 10.0 ** e for e in range(math.floor(lo) - 1, math.ceil(hi) + 2) for m in (1, 2, 5)]
    ticks = [x for x in ticks if 10 ** lo / 2.2 <= x <= 10 ** hi * 2.2]
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [_fmt(x) for x in ticks]}


def _bar_room(values, factor: float = 1.18) -> list[float]:
    """A linear axis from 0 with room above the tallest bar for its label."""
    top = max([v for v in values if v is not None and math.isfinite(v)] or [1.0])
    return [0.0, top * factor]


def _count_ticks(values) -> dict:
    """Linear-axis ticks for large counts written as people say them (2.5 × 10⁹, not
    0.25×10¹⁰): four or five steps of 1, 2 or 2.5 times a power of ten."""
    top = max([v for v in values if v is not None and math.isfinite(v)] or [1.0])
    exponent = math.floor(math.log10(top / 4))
    step = next(m * 10.0 ** exponent for m in (1, 2, 2.5, 5, 10) if top / (m * 10.0 ** exponent) <= 5)
    ticks = [i * step for i in range(int(top * 1.15 / step) + 1)]     # up to the axis top _bar_room sets
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [_fmt(x) if x else "0" for x in ticks]}


# -- 0 ----------------------------------------------------------------------------------

def _ch0(view, lang, style):
    ladder = view.data["ladder"]
    now = view.data["current"]["n"]
    labels = [_n_label(row["n"], lang) for row in ladder]
    outline = [4 if row["n"] == now else 0 for row in ladder]
    n = view.numbers

    # Linear axes: on a log axis ×38,000 looks like a few steps; here the short bars are
    # nearly invisible, which is the point, and each bar says its number.
    pairs = [row["pairs"] for row in ladder]
    fig = go.Figure(go.Bar(x=labels, y=pairs, marker_color=style.colour(0), text=[_fmt(p) for p in pairs],
                           textposition="outside", cliponaxis=False, constraintext="none",
                           textfont=dict(size=style.tick_font), marker_line_width=outline,
                           marker_line_color="#000", showlegend=False))
    fig.update_xaxes(title_text=t("axis.n", lang), type="category")
    fig.update_yaxes(title_text=t("axis.pairs", lang), range=_bar_room(pairs), **_count_ticks(pairs))
    note = t("ch0.b0.note", lang, a=_n_label(n["article_n_from"], lang), pa=_fmt(n["article_pairs_from"]),
             b=_n_label(n["article_n_to"], lang), pb=_fmt(n["article_pairs_to"]), g=f"{n['article_growth']:,.0f}")
    first = _finish(fig, style, t("ch0.b0.title", lang), note)

    fig2 = go.Figure()
    gb = []
    for i, (key, name) in enumerate((("bytes_f32", "legend.float32"), ("bytes_f16", "legend.float16"))):
        values = [row[key] / 1e9 for row in ladder]
        gb += values
        fig2.add_bar(x=labels, y=values, name=t(name, lang), marker_color=style.colour(i + 1),
                     text=[_bytes(row[key]) for row in ladder], textposition="outside", cliponaxis=False,
                     constraintext="none", textfont=dict(size=style.tick_font), marker_line_width=outline,
                     marker_line_color="#000")
    fig2.update_layout(barmode="group", legend=dict(x=0.01, xanchor="left", y=0.98, yanchor="top"))
    fig2.update_xaxes(title_text=t("axis.n", lang), type="category")
    fig2.update_yaxes(title_text=t("axis.gb", lang), range=_bar_room(gb))
    second = _finish(fig2, style, t("ch0.b1.title", lang),
                     t("ch0.b1.note", lang, n=_n_label(now, lang), f32=_bytes(n["bytes_f32"]),
                       f16=_bytes(n["bytes_f16"])))

    flops = [n["quadratic_flops"], n["linear_flops"]]
    fig3 = go.Figure(go.Bar(x=[t("legend.softmax_order", lang), t("legend.linear_order", lang)], y=flops,
                            marker_color=[style.colour(3), style.colour(2)], text=[_fmt(f) for f in flops],
                            textposition="outside", cliponaxis=False, constraintext="none",
                            textfont=dict(size=style.font), showlegend=False, width=0.5))
    fig3.update_yaxes(title_text=t("axis.flops", lang), range=_bar_room(flops), **_count_ticks(flops))
    third = _finish(fig3, style, t("ch0.b2.title", lang, n=_n_label(now, lang)),
                    t("ch0.b2.note", lang, d=f"{n['d']:.0f}", ratio=_times(n["flop_ratio"])))
    return [first, second, third]


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
    first = _finish(fig, style, t("ch1.b0.title", lang, h=f"{toy['h']:g}", x=f"{toy['x']:g}"),
                    t("ch1.b0.note", lang, fx=f"{toy['fx']:.4f}"))

    head = view.data["head"]
    tokens = unique_labels(head["tokens"])
    # The heaviest keys as horizontal bars, their tokens written out: a label under each of
    # dozens of keys is unreadable on a projector, and these are what the query attends to.
    weights = np.asarray(head["weights"], dtype=float)
    top = np.argsort(-weights, kind="stable")[:KEY_LABELS][::-1]
    fig2 = go.Figure(go.Bar(y=[tokens[i] for i in top], x=weights[top], orientation="h",
                            marker_color=style.colour(0), showlegend=False, text=[f"{w:.2f}" for w in weights[top]],
                            textposition="outside", cliponaxis=False, textfont=dict(size=style.tick_font)))
    fig2.update_xaxes(title_text=t("axis.weight", lang), range=[0, float(weights.max()) * 1.2])
    fig2.update_yaxes(title_text=t("axis.key", lang))
    rest = len(weights) - len(top)
    note = t("ch1.b1.rest", lang, n=rest, w=f"{weights.sum() - weights[top].sum():.2f}") if rest > 0 else ""
    second = _finish(fig2, style, t("ch1.b1.title", lang, token=head["token"]), note)

    dims = list(range(len(head["output"])))
    model = head["reference_kind"] == "model"
    fig3 = go.Figure()
    fig3.add_bar(x=dims, y=head["output"], name=t("legend.nw_output", lang), marker_color=style.colour(1))
    fig3.add_scatter(x=dims, y=head["reference"], mode="markers",
                     name=t("legend.model_output" if model else "legend.engine_output", lang),
                     marker=dict(color="#000", size=style.marker * 1.4, symbol="line-ew-open", line_width=3))
    fig3.update_xaxes(title_text=t("axis.value_dim", lang))
    fig3.update_yaxes(title_text=t("axis.value", lang))
    fig3.update_layout(legend=dict(x=0.01, xanchor="left", y=0.99, yanchor="top", bgcolor="rgba(255,255,255,0.8)"))
    third = _finish(fig3, style, t("ch1.b2.title", lang, token=head["token"]),
                    t("ch1.b2.note", lang, ref=t("ref.model" if model else "ref.engine", lang),
                      diff=f"{view.numbers['max_abs_diff']:.1e}"))
    return [first, second, third]


# -- 2 ----------------------------------------------------------------------------------

SLOT = 1.25            # block centres are this many slots apart: a quarter slot of air between
GAP_SLOTS = 0.6        # the extra air between the two products of an order


def _size_labels(orders, spacing_px: float, style) -> tuple[int, bool]:
    """Font and form of the blocks' size labels so that neighbours keep apart: one line
    ("4,096 × 64") at the body font down to the tick font, else two ("4,096 ×" over "64"),
    at the largest font that fits ``spacing_px`` less the operator between them."""
    room = spacing_px - text_px("×", style.font) - 10
    blocks = orders["left"] + orders["right"]
    one = [f"{b['rows']:,} × {b['cols']:,}" for b in blocks]
    two = [part for b in blocks for part in (f"{b['rows']:,} ×", f"{b['cols']:,}")]
    names = [b["name"] for b in blocks]
    for split, lines in ((False, one), (True, two)):
        for font in range(style.font, style.tick_font - 1 if not split else 7, -1):
            widest = max(max(text_px(x, font) for x in lines), max(text_px(x, font) * 1.05 for x in names))
            if widest <= room:
                return font, split
    return 7, True


def _centre(i: int, slot: float) -> float:
    """x of block i's centre: three blocks per product, the second product after a gap."""
    return (i + 0.5) * slot * SLOT + (GAP_SLOTS * slot if i >= 3 else 0.0)


ROW_DOMAINS = ((0.7, 1.0), (0.22, 0.5))   # the two orders' rows, in the plot's height
LABEL_GAP = 0.015                          # a block's name and size start this far under its row


def _blocks(blocks, sides, row: int, slot, tallest, font, split, op_font) -> tuple[list, list]:
    """One order left to right as layout shapes and annotations (plain dicts) on the axes of
    ``row`` (1 or 2): each block centred in its slot, its top edge at 0; its name and true
    size under the row (in paper units, so they never run into the blocks whatever the
    window's height), the operators (× and =) between the blocks of each product."""
    colours = {"operand": "#9ecae1", "intermediate": "#fdae6b", "output": "#a1d99b"}
    xref, yref = ("x", "y") if row == 1 else ("x2", "y2")
    label_y = ROW_DOMAINS[row - 1][0] - LABEL_GAP
    shapes, notes = [], []
    for i, (block, (h, w)) in enumerate(zip(blocks, sides)):
        centre = _centre(i, slot)
        shapes.append(dict(type="rect", xref=xref, yref=yref, x0=centre - w / 2, x1=centre + w / 2, y0=-h, y1=0,
                           line=dict(color="#333", width=1.5), fillcolor=colours[block["role"]]))
        size = f"{block['rows']:,} ×<br>{block['cols']:,}" if split else f"{block['rows']:,} × {block['cols']:,}"
        notes.append(dict(xref=xref, yref="paper", x=centre, y=label_y, yanchor="top", showarrow=False,
                          font=dict(size=font), text=f"<b>{block['name']}</b><br>{size}"))
        if i < len(STEP_OPS) and STEP_OPS[i]:
            notes.append(dict(xref=xref, yref=yref, x=(centre + _centre(i + 1, slot)) / 2, y=-tallest / 2,
                              text=STEP_OPS[i], showarrow=False, font=dict(size=op_font)))
    return shapes, notes


def _ch2(view, lang, style):
    o = view.data["orders"]
    left, right = view.data["left_sides"], view.data["right_sides"]
    slot = float(max(left.max(), right.max()))
    width = _centre(5, slot) + slot * SLOT / 2
    tallest = float(max(left[:, 0].max(), right[:, 0].max()))
    unit = (COLUMN_PX - 190) / width                       # px per data unit; 190: the margins below
    font, split = _size_labels(o, slot * SLOT * unit, style)
    shapes, notes = _blocks(o["left"], left, 1, slot, tallest, font, split, style.font)
    more_shapes, more_notes = _blocks(o["right"], right, 2, slot, tallest, font, split, style.font)
    notes += more_notes
    for (lo, hi), key in zip(ROW_DOMAINS, ("legend.left", "legend.right")):
        notes.append(dict(xref="paper", yref="paper", x=-0.01, y=(lo + hi) / 2, xanchor="right", showarrow=False,
                          text=f"<b>{t(key, lang)}</b>", font=dict(size=style.tick_font)))
    # Both rows on axes of the same ranges and one scale (a square is drawn square); the
    # scale follows the window, the labels stay in paper units under their row.
    # One layout for every block and label: plotly re-validates the whole list on each
    # add_shape / add_annotation, which made this figure the slowest of the lecture.
    axis = dict(visible=False, range=[0, width])
    fig = go.Figure(layout=dict(
        shapes=shapes + more_shapes, annotations=notes,
        xaxis=dict(axis, anchor="y"), xaxis2=dict(axis, anchor="y2", matches="x"),
        yaxis=dict(visible=False, range=[-tallest, 0], domain=ROW_DOMAINS[0], scaleanchor="x", scaleratio=1,
                   constrain="domain"),
        yaxis2=dict(visible=False, range=[-tallest, 0], domain=ROW_DOMAINS[1], scaleanchor="x2", scaleratio=1,
                    constrain="domain")))
    n = view.numbers
    note = t("ch2.b0.note", lang, diff=f"{n['max_abs_diff']:.1e}", rel=f"{n['max_rel_diff']:.1e}",
             nn=_bytes(n["left_intermediate_bytes"]), md=_bytes(n["right_intermediate_bytes"]),
             lf=_fmt(o["left_flops"]), rf=_fmt(o["right_flops"]))
    if view.data["sides_compressed"]:
        note += " · " + t("notice.sides_compressed", lang)
    first = _finish(fig, style, t("ch2.b0.title", lang, n=f"{o['n']:,}", d=o["d"], m=o["m"]), note,
                    fonts_done=True)
    first.update_layout(margin=dict(l=170, r=20, b=10))

    names = [t("legend.left", lang), t("legend.right", lang)]
    fig2 = make_subplots(rows=1, cols=3, horizontal_spacing=0.12,
                         subplot_titles=(t("axis.flops", lang), t("axis.bytes", lang), t("axis.seconds", lang)))
    for col, (a, b, fmt) in enumerate(((n["left_flops"], n["right_flops"], _fmt),
                                       (n["left_intermediate_bytes"], n["right_intermediate_bytes"], _bytes),
                                       (n["left_seconds"], n["right_seconds"], lambda s: f"{s * 1e3:.3g} ms")),
                                      start=1):
        fig2.add_bar(x=names, y=[a, b], marker_color=[style.colour(3), style.colour(2)], text=[fmt(a), fmt(b)],
                     textposition="outside", cliponaxis=False, constraintext="none",
                     textfont=dict(size=style.tick_font), showlegend=False, row=1, col=col)
        lo, hi = math.log10(max(min(a, b), 1e-12)), math.log10(max(a, b, 1e-12))
        # Whole decades around both bars (ticks at every decade) and room for the labels.
        fig2.update_yaxes(type="log", range=[math.floor(lo) - 0.2, hi + 0.25 * max(hi - lo, 1.0) + 0.3],
                          dtick=1, row=1, col=col)
    fig2.update_yaxes(exponentformat="power")
    note2 = t("ch2.b1.note", lang, flops=_times(n["flop_ratio"]), time=_times(n["time_ratio"]),
              timed_n=f"{n['timed_n']:,.0f}", timed_flops=_times(n["timed_flop_ratio"]),
              gflops=f"{n['matmul_gflops']:.0f}", article=_times(n["article_model_ratio"]),
              leading=f"{n['article_leading_ratio']:.0f}")
    second = _finish(fig2, style, t("ch2.b1.title", lang, n=f"{o['n']:,}"), note2)
    return [first, second]


# -- 3 ----------------------------------------------------------------------------------

def _wrap_px(text: str, font: float, px: float) -> str:
    """``text`` broken at spaces (or between CJK characters) into lines of at most ``px``."""
    pieces = re.findall(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]|[^\s\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]+\s*|\s+",
                        text)
    lines, line = [], ""
    for piece in pieces:
        if line and text_px(line + piece.rstrip(), font) > px:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    if line.strip():
        lines.append(line.rstrip())
    return "<br>".join(lines)


def _reverse_kernel(view, lang, style):
    """The kernel trick against its reverse use, as a table whose cells wrap at word
    boundaries to their column (a table that breaks words mid-way cannot be read)."""
    rows = view.data["reverse_kernel"]
    header = [t("rk.header.aspect", lang), t("rk.header.svm", lang), t("rk.header.linear", lang)]
    widths = (0.26, 0.37, 0.37)
    room = COLUMN_PX - 40
    font = style.tick_font
    columns = [[_wrap_px(t(row[c], lang), font, widths[c] * room - 16) for row in rows] for c in range(3)]
    lines = max(cell.count("<br>") + 1 for col in columns for cell in col)
    fig = go.Figure(go.Table(
        columnwidth=list(widths),
        header=dict(values=[f"<b>{h}</b>" for h in header], font=dict(size=font), align="left",
                    fill_color="#e8eef7", height=font * 1.9),
        cells=dict(values=columns, font=dict(size=font), align="left", height=font * 1.35 * lines + 12,
                   fill_color=[["#f7f7f7"] * len(rows), ["#ffffff"] * len(rows), ["#fff4e6"] * len(rows)])))
    fig = _finish(fig, style, t("ch3.b0.title", lang))
    fig.update_layout(margin=dict(l=20, r=20, b=10))
    return fig


def _profiles(view, lang, style, labels, title_key):
    """Kernel values of the named maps against exp(q·k/√d), one log-log panel each."""
    profiles = view.data["profiles"]
    labels = [label for label in labels if label in profiles]
    fig = make_subplots(rows=1, cols=len(labels), horizontal_spacing=0.14,
                        subplot_titles=[f"{map_name(lab, lang)} (m = {profiles[lab]['m']})" for lab in labels])
    hidden = []
    for index, label in enumerate(labels):
        p = profiles[label]
        ok = p["approx"] > 0
        if not ok.all():
            hidden.append(t("notice.not_shown_log", lang, map=map_name(label, lang), count=int((~ok).sum()),
                            pairs=int(ok.size)))
        fig.add_scatter(x=p["exact"][ok], y=p["approx"][ok], mode="markers", showlegend=False,
                        marker=dict(size=max(style.marker - 5, 4), color=style.colour(index), opacity=0.5),
                        row=1, col=index + 1)
        lo = float(min(p["exact"].min(), p["approx"][ok].min() if ok.any() else p["exact"].min()))
        hi = float(max(p["exact"].max(), p["approx"][ok].max() if ok.any() else p["exact"].max()))
        fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color="#000", dash="dot", width=2),
                        showlegend=False, row=1, col=index + 1)
    fig.update_xaxes(type="log", title_text=t("axis.exact", lang))
    fig.update_yaxes(type="log")
    fig.update_yaxes(title_text=t("axis.approx", lang), col=1)
    return _finish(fig, style, t(title_key, lang), " · ".join([t("legend.identity", lang)] + hidden))


def _ch3(view, lang, style):
    first = _reverse_kernel(view, lang, style)
    n = view.numbers

    # The truncations and, behind them, where this head's logits lie (one count per
    # (query, key) pair, on the right-hand axis): order 1 fails where most pairs are.
    tay = view.data["taylor"]
    logits = view.data["logits"]
    fig = go.Figure()
    fig.add_histogram(x=logits, nbinsx=50, marker_color="#9a9a9a", opacity=0.3, yaxis="y2",
                      name=t("legend.logits", lang))
    fig.add_scatter(x=tay["s"], y=tay["exp"], mode="lines", name=t("legend.exp", lang),
                    line=dict(color="#000", width=style.line))
    for i, order in enumerate((1, 2, 3)):
        fig.add_scatter(x=tay["s"], y=tay[f"order{order}"], mode="lines", name=t("legend.order", lang, k=order),
                        line=dict(color=style.colour(i), width=style.line, dash="dash"))
    fig.add_hline(y=0, line_color="#888")
    if tay["s"][0] < -1.0:
        # Where 1 + s < 0 the first-order "kernel" is negative.
        fig.add_vrect(x0=float(tay["s"][0]), x1=-1.0, fillcolor=style.colour(3), opacity=0.1, line_width=0,
                      layer="below")
        fig.add_annotation(xref="x", yref="paper", x=-1.0, y=1.0, xanchor="right", yanchor="top", showarrow=False,
                           text=t("legend.taylor1_negative", lang), font=dict(size=style.tick_font))
    # exp(s) at the largest logits would flatten everything else: show up to where most pairs lie.
    top = float(np.exp(np.percentile(logits, 98)))
    fig.update_layout(yaxis=dict(range=[-max(4.0, 0.25 * top), max(4.0, 1.3 * top)], title_text=t("axis.kernel", lang)),
                      # The bars' own scale is not read off: the note says what they count.
                      yaxis2=dict(overlaying="y", side="right", showgrid=False, rangemode="tozero",
                                  showticklabels=False, zeroline=False),
                      barmode="overlay")
    fig.update_xaxes(title_text=t("axis.s", lang))
    second = _finish(fig, style, t("ch3.b1.title", lang),
                     t("ch3.b1.note", lang, lo=f"{n['s_min']:.1f}", hi=f"{n['s_max']:.1f}",
                       neg=f"{100 * n['negative_taylor1_fraction']:.0f}", pairs=f"{logits.size:,}",
                       n=f"{n['tokens']:.0f}"))

    labels = list(view.data["profiles"])
    truncations = [label for label in labels if label.startswith("Taylor")]
    others = [label for label in labels if label not in truncations]
    fourth = _profiles(view, lang, style, truncations, "ch3.b2.title")
    fifth = _profiles(view, lang, style, others, "ch3.b3.title")

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
    sixth = _finish(fig3, style, t("ch3.b4.title", lang))

    norms = view.data["norms"]
    fig4 = go.Figure()
    for i, (key, name) in enumerate((("q", "legend.q_norm"), ("k", "legend.k_norm"))):
        fig4.add_histogram(x=norms[key], name=f"{t(name, lang)} · {t('legend.real', lang)}", opacity=0.7,
                           marker_color=style.colour(i), nbinsx=30)
        fig4.add_histogram(x=norms[f"{key}_well"], name=f"{t(name, lang)} · {t('legend.well', lang)}", opacity=0.5,
                           marker_color=style.colour(i + 4), nbinsx=30)
    fig4.update_layout(barmode="overlay")
    fig4.update_xaxes(title_text=t("axis.norm", lang))
    fig4.update_yaxes(title_text=t("axis.token_count", lang))
    note4 = ""
    if "m_required" in n:
        note4 = t("ch3.b5.note", lang, real=_fmt(n["m_required"]), real_label=t("legend.real", lang),
                  well=_fmt(n["m_required_well"]), well_label=t("legend.well", lang))
    seventh = _finish(fig4, style, t("ch3.b5.title", lang), note4)
    return [first, second, fourth, fifth, sixth, seventh]


# -- 4 ----------------------------------------------------------------------------------

def _ch4(view, lang, style):
    step = view.data["step"]
    spacing = 0.2                 # room for the first panel's colour bar and its ticks
    fig = make_subplots(rows=1, cols=2, subplot_titles=(t("legend.update", lang), t("legend.state_t", lang)),
                        horizontal_spacing=spacing)
    width = (1.0 - spacing) / 2
    for col, key in enumerate(("update", "state"), start=1):
        z = step[key]
        lim = float(np.abs(z).max()) or 1.0
        right = width if col == 1 else 1.0
        # Each colour bar just right of its own panel, thin, so its ticks end before the next panel.
        fig.add_heatmap(z=z, colorscale=style.diverging, zmin=-lim, zmax=lim,
                        colorbar=dict(x=right + 0.01, xanchor="left", len=0.9, thickness=14,
                                      tickfont=dict(size=style.tick_font - 2), nticks=5),
                        row=1, col=col)
        fig.update_yaxes(autorange="reversed", title_text=t("axis.feature", lang) if col == 1 else None,
                         row=1, col=col)
        fig.update_xaxes(title_text=t("axis.value_dim", lang), row=1, col=col)
    n = view.numbers
    note = t("ch4.b0.note", lang, diff=f"{n['max_abs_diff']:.1e}", rel=f"{n['max_rel_diff']:.1e}",
             den=f"{step['denominator']:.4g}")
    first = _finish(fig, style, t("ch4.b0.title", lang, t=step["t"], token=view.data["token"]), note)

    mem = view.data["memory"]
    fig2 = go.Figure()
    fig2.add_scatter(x=mem["tokens"], y=mem["kv_bytes"], mode="lines+markers", name=t("legend.kv_cache", lang),
                     line=dict(color=style.colour(3), width=style.line))
    fig2.add_scatter(x=mem["tokens"], y=np.full(len(mem["tokens"]), mem["state_bytes"]), mode="lines",
                     name=t("legend.state", lang), line=dict(color=style.colour(2), width=style.line))
    fig2.update_xaxes(type="log", title_text=t("axis.tokens_seen", lang))
    fig2.update_yaxes(type="log", title_text=t("axis.bytes", lang))
    fig2.update_layout(legend=dict(x=0.01, xanchor="left", y=0.99, yanchor="top"))
    second = _finish(fig2, style, t("ch4.b1.title", lang),
                     t("ch4.b1.note", lang, m=f"{n['m']:.0f}", state=_bytes(n["state_bytes"]),
                       t=f"{n['break_even_tokens']:.1f}"))

    rc = view.data["recall"]
    shown = rc["lags"] > 0          # log axis: lag 0 (nothing written over the target) is left out
    fig3 = go.Figure(go.Scatter(x=rc["lags"][shown], y=rc["cosine"][shown], mode="lines+markers",
                                error_y=dict(type="data", array=rc["cosine_std"][shown], visible=True),
                                name=t("legend.early", lang), line=dict(color=style.colour(0), width=style.line)))
    fig3.update_xaxes(type="log", title_text=t("axis.lag", lang))
    fig3.update_yaxes(title_text=t("axis.cosine", lang), range=[-0.2, 1.05])
    fig3.update_layout(showlegend=False)
    lags = rc["lags"][shown]
    third = _finish(fig3, style, t("ch4.b2.title", lang),
                    t("ch4.b2.note", lang, first=f"{rc['cosine'][shown][0]:.2f}", last=f"{rc['cosine'][shown][-1]:.2f}",
                      lag=f"{int(lags[-1]):,}"))
    return [first, second, third]


# -- 5 ----------------------------------------------------------------------------------

def _ch5(view, lang, style):
    curves = view.data["recall"]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=(t("legend.early", lang), t("legend.recent", lang)))
    for col, pos in enumerate(("early", "recent"), start=1):
        for i, kind in enumerate(("none", "retnet", "gla")):
            rc = curves[(kind, pos)]
            shown = rc["lags"] > 0
            fig.add_scatter(x=rc["lags"][shown], y=rc["cosine"][shown], mode="lines+markers",
                            name=t(f"legend.{kind}", lang), showlegend=col == 1,
                            line=dict(color=style.colour(i), width=style.line), row=1, col=col)
        fig.update_xaxes(type="log", title_text=t("axis.lag", lang), row=1, col=col)
    fig.update_yaxes(title_text=t("axis.cosine", lang), range=[-0.2, 1.05], row=1, col=1)
    n = view.numbers
    c = view.controls
    note = t("ch5.b0.note", lang, gamma=f"{c['gamma']:g}", strength=f"{c['strength']:g}",
             **{kind: f"{n[f'recent_minus_early_at_256[{kind}]']:+.2f}" for kind in ("none", "retnet", "gla")})
    first = _finish(fig, style, t("ch5.b0.title", lang), note)

    overwrite = _overwrite(view, lang, style)
    depth = _hgrn2_depth(view, lang, style)

    kl = view.data["kl"]
    causal = bool(view.data.get("kl_causal"))
    fig2 = go.Figure()
    hidden = []
    for i, (name, r) in enumerate(kl.items()):
        rows = r["kl"][1:] if causal else r["kl"]  # causal: the first row sees one key, its KL is 0 by construction
        values = rows[np.isfinite(rows)]
        drawn = values[values > 0]                # a log axis cannot show KL = 0 (or -1e-17 from rounding)
        if drawn.size < values.size:
            hidden.append(t("note.kl_not_drawn", lang, map=map_name(name, lang), count=values.size - drawn.size))
        fig2.add_box(y=drawn, name=f"{map_name(name, lang)}<br>m = {r['m']}", marker_color=style.colour(i),
                     boxmean=True, showlegend=False)
    fig2.update_yaxes(type="log", title_text=t("axis.kl_causal" if causal else "axis.kl", lang))
    values = ("，" if lang == "zh" else ", ").join(f"{map_name(name, lang)} {r['mean']:.2f}" for name, r in kl.items())
    title = ("ch5.b3.title" if view.data.get("hedgehog_trained") else "ch5.b3.title_untrained") + \
        ("_causal" if causal else "")
    second = _finish(fig2, style, t(title, lang),
                     " · ".join([t("ch5.b3.note", lang, layer=c["layer"], head=c["head"], values=values)] + hidden))

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
    fig3.update_xaxes(title_text=t("axis.k_softmax", lang), dtick=1)
    fig3.update_yaxes(title_text=t("axis.embedding_cos", lang))
    hybrid_map = {"elu1": "elu+1", "favor_plus": "FAVOR+", "taylor2": "Taylor-2"}.get(
        view.data.get("hybrid_map") or c.get("hybrid_map", ""), "")
    note3 = t("ch5.b4.note", lang, map=hybrid_map, mode=t(f"ch5.b4.{mode}", lang)) if path else ""
    return [first, overwrite, depth, second, _finish(fig3, style, t("ch5.b4.title", lang), note3)]


# Recall and bounds lie in [0, 1]: the axes run to 1.3 and the legend sits in the top band,
# above every bar and its label, inside the plot (the title and note keep the space above).
_RECALL_TOP = 1.3
_UNIT_TICKS = {"tickmode": "array", "tickvals": [0, 0.2, 0.4, 0.6, 0.8, 1.0]}
_TOP_LEGEND = dict(orientation="h", x=0.0, xanchor="left", y=1.0, yanchor="top", bgcolor="rgba(255,255,255,0.8)")


def _overwrite(view, lang, style):
    """Forgetting by overwriting: recall of an early and a recent key at one lag, one pair of
    bars per update (no decay, RetNet, GLA, DeltaNet, Gated DeltaNet)."""
    data = view.data["overwrite"]
    lag, kinds = data["lag"], data["kinds"]
    names = [t(f"legend.{kind}", lang) for kind in kinds]
    fig = go.Figure()
    for i, pos in enumerate(("early", "recent")):
        values = [kinds[kind][pos] for kind in kinds]
        fig.add_bar(x=names, y=values, name=t(f"legend.recall_{pos}", lang, lag=lag), marker_color=style.colour(i),
                    text=[_cos(v) for v in values], textposition="outside", cliponaxis=False,
                    textfont=dict(size=style.tick_font))
    fig.update_layout(barmode="group", legend=_TOP_LEGEND)
    fig.update_yaxes(title_text=t("axis.cosine", lang), range=[min(0.0, *_all_recall(kinds)) - 0.05, _RECALL_TOP],
                     **_UNIT_TICKS)
    fig.update_xaxes(title_text=t("axis.update", lang))
    at = {kind: {pos: _at_lag(kinds[kind]["curves"][pos], 256) for pos in ("early", "recent")}
          for kind in ("deltanet", "none")}
    note = t("ch5.b1.note", lang, de=_cos(at["deltanet"]["early"]), dr=_cos(at["deltanet"]["recent"]),
             ne=_cos(at["none"]["early"]), nr=_cos(at["none"]["recent"]))
    return _finish(fig, style, t("ch5.b1.title", lang, lag=lag), note)


def _cos(x: float) -> str:
    """A cosine to two decimals, never "-0.00"."""
    return f"{0.0 if abs(x) < 0.005 else x:.2f}"


def _all_recall(kinds) -> list[float]:
    return [r[pos] for r in kinds.values() for pos in ("early", "recent")]


def _at_lag(curve: dict, lag: int) -> float:
    return float(curve["cosine"][int(np.flatnonzero(curve["lags"] == lag)[0])])


def _hgrn2_depth(view, lang, style):
    """HGRN2's bounds as one picture in two panels over the same layers: the floor of the
    forget gate (bars, each labelled with the shortest memory it allows), and the recall of
    an early and a recent key with that floor (lines)."""
    depth = view.data["hgrn2"]
    layers = [int(x) for x in depth["layers"]]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=(t("legend.lower_bound", lang), t("legend.recall_after", lang, lag=depth["lag"])))
    fig.add_bar(x=layers, y=depth["lower_bound"], name=t("legend.lower_bound", lang), marker_color=style.colour(2),
                text=[f"≥ {m:.3g}" for m in depth["memory_tokens"]], textposition="outside", cliponaxis=False,
                textfont=dict(size=style.tick_font), showlegend=False, row=1, col=1)
    for i, pos in enumerate(("early", "recent")):
        fig.add_scatter(x=layers, y=depth[pos], mode="lines+markers", name=t(f"legend.recall_{pos}", lang),
                        line=dict(color=style.colour(i), width=style.line), marker=dict(size=style.marker),
                        row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(title_text=t("axis.layer", lang), dtick=1, row=1, col=col)
        fig.update_yaxes(range=[0, _RECALL_TOP], row=1, col=col, **_UNIT_TICKS)
    fig.update_yaxes(title_text=t("axis.cosine", lang), row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", x=1.0, xanchor="right", y=1.0, yanchor="top",
                                  bgcolor="rgba(255,255,255,0.8)"))
    note = t("ch5.b2.note", lang, layers=len(layers))
    return _finish(fig, style, t("ch5.b2.title", lang), note)


# -- 6 ----------------------------------------------------------------------------------

SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "cross", "x", "star", "hexagon",
           "pentagon")


def _ch6(view, lang, style):
    points = view.data["points"]
    front = view.data["frontier"]
    # A log axis drops values <= 0 without a word: such points are named in the note instead.
    good = [p for p in points if math.isfinite(p["median_kl"]) and p["median_kl"] > 0]
    bad = [p for p in points if p not in good]
    fig = go.Figure()
    # One trace per map, named in the legend: several maps share a cost (m = d), so labels
    # written beside the points would sit on each other.
    for i, p in enumerate(good):
        fig.add_scatter(x=[p["cost"]], y=[p["median_kl"]], mode="markers",
                        name=f"{map_name(p['label'], lang)} (m = {p['m']})",
                        marker=dict(size=style.marker * 1.5, color=style.colour(i), symbol=SYMBOLS[i % len(SYMBOLS)],
                                    line=dict(color="#000", width=1)))
    on_front = [i for i in front if points[i] in good]
    fig.add_scatter(x=[points[i]["cost"] for i in on_front], y=[points[i]["median_kl"] for i in on_front],
                    mode="lines", line=dict(color="#444", width=style.line / 2, shape="hv", dash="dash"),
                    name=t("legend.frontier", lang))
    kls = [p["median_kl"] for p in good] or [1.0]
    fig.update_xaxes(type="log", title_text=t("axis.flops_token", lang),
                     **_log_tick_values([p["cost"] for p in good]))
    fig.update_yaxes(title_text=t("axis.median_kl", lang), range=[0, max(kls) * 1.15])
    note = " · ".join(t("note.kl_undefined" if not math.isfinite(p["median_kl"]) else "note.kl_zero", lang,
                        map=map_name(p["label"], lang), kl=f"{p['median_kl']:.2g}") for p in bad)
    first = _finish(fig, style, t("ch6.b0.title", lang, layer=view.controls["layer"]), note)

    road = view.data["roadmap"]
    kinds = [[r for r in road if not r["causal"]], [r for r in road if r["causal"]]]
    # Two panels, one per kind of measurement; within each, one bar per step, the 2020
    # baseline's value marked by a dashed line: a shorter bar is closer to softmax.
    fig2 = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.16,
                         row_heights=[len(kinds[0]), max(len(kinds[1]), 1)],
                         subplot_titles=(t("legend.noncausal", lang), t("legend.causal", lang)))
    top = max([r["median_kl"] for r in road if math.isfinite(r["median_kl"])] or [1.0])
    for row, points_of_kind in enumerate(kinds, start=1):
        labels = [_road_text(r, lang) for r in points_of_kind][::-1]
        values = [r["median_kl"] for r in points_of_kind][::-1]
        colours = [style.colour(0 if r["year"] == 2020 else 2) for r in points_of_kind][::-1]
        fig2.add_bar(y=labels, x=values, orientation="h", marker_color=colours, showlegend=False,
                     text=[f"{v:.2f}" for v in values], textposition="outside", cliponaxis=False,
                     textfont=dict(size=style.tick_font), row=row, col=1)
        base = next((r["median_kl"] for r in points_of_kind if r["year"] == 2020), None)
        if base is not None:
            fig2.add_vline(x=base, line_dash="dash", line_color="#555", line_width=2, row=row, col=1)
    fig2.update_xaxes(range=[0, top * 1.18])
    fig2.update_xaxes(title_text=t("axis.median_kl", lang), row=2, col=1)
    fig2.update_yaxes(tickfont=dict(size=style.tick_font - 1))
    second = _finish(fig2, style, t("ch6.b1.title", lang, layer=view.controls["layer"], head=view.controls["head"]),
                     t("ch6.b1.note", lang))
    return [first, second, _state_roadmap(view, lang, style)]


def _state_roadmap(view, lang, style):
    """The state updates' roadmap on a figure of its own: recall of an early and a recent key
    per step, as pairs of bars. Recall is not row KL, so nothing here meets the KL panels."""
    states = view.data["state_roadmap"]
    labels = [_road_text(r, lang) for r in states][::-1]
    fig = go.Figure()
    for i, pos in enumerate(("early", "recent")):
        values = [r[pos] for r in states][::-1]
        fig.add_bar(y=labels, x=values, orientation="h", name=t(f"legend.recall_{pos}", lang, lag=states[0]["lag"]),
                    marker_color=style.colour(i), text=[_cos(v) for v in values], textposition="outside",
                    cliponaxis=False, textfont=dict(size=style.tick_font))
    low = min([0.0] + [r[pos] for r in states for pos in ("early", "recent")])
    fig.update_layout(barmode="group", legend=dict(orientation="h", x=1.0, xanchor="right", y=1.0, yanchor="bottom",
                                                   traceorder="normal"))
    fig.update_xaxes(title_text=t("axis.cosine", lang), range=[low - 0.05, 1.18], **_UNIT_TICKS)
    fig.update_yaxes(tickfont=dict(size=style.tick_font - 1))
    lag = states[0]["lag"]
    return _finish(fig, style, t("ch6.b2.title", lang, lag=lag),
                   t("ch6.b2.note", lang, d=view.data.get("state_dim", "d"), lag=lag))


def _road_text(point: dict, lang: str) -> str:
    """A roadmap point's two-line label: the step, then what exactly was measured."""
    pid = point["id"]
    if pid == "2024_hedgehog" and not point.get("trained"):
        return t("road.2024_hedgehog_untrained", lang)
    if pid == "2021":
        return road_label(pid, lang, m=point["m"])
    if pid == "2023":
        return road_label(pid, lang, gamma=f"{point['gamma']:.4g}")
    if pid == "2025":
        return road_label(pid, lang, w=point["window"])
    if pid == "2023_state":
        return road_label(pid, lang, gamma=f"{point['gamma']:.4g}")
    if pid == "2024_hgrn2":
        return road_label(pid, lang, lb=f"{point['lower_bound']:g}")
    return t(f"road.{pid}", lang)


_DRAW = {0: _ch0, 1: _ch1, 2: _ch2, 3: _ch3, 4: _ch4, 5: _ch5, 6: _ch6}
BUILDS = {0: 3, 1: 3, 2: 2, 3: 6, 4: 3, 5: 5, 6: 3}
