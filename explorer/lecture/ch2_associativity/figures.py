"""Chapter 2: associativity: the chapter's figures, its builds in the order the speaker shows them, drawn
from its view (``view``). Their words are messages (``words``), said in the audience's language at the page."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..figure_common import COLUMN_PX, finish_slide, margins, say_bytes, say_count, say_ratio, text_px
from ..text import words
from ...text import Joined
from .maths import STEP_OPS


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


def draw(view, style):
    o = view.data["orders"]
    left, right = view.data["left_sides"], view.data["right_sides"]
    slot = float(max(left.max(), right.max()))
    width = _centre(5, slot) + slot * SLOT / 2
    tallest = float(max(left[:, 0].max(), right[:, 0].max()))
    # px per data unit; 190: the margins below. The tab's column, narrower than a slide: a
    # short slide holds its blocks to its height, so they are drawn smaller than its width allows.
    unit = (COLUMN_PX - 190) / width
    font, split = _size_labels(o, slot * SLOT * unit, style)
    shapes, notes = _blocks(o["left"], left, 1, slot, tallest, font, split, style.font)
    more_shapes, more_notes = _blocks(o["right"], right, 2, slot, tallest, font, split, style.font)
    notes += more_notes
    for (lo, hi), key in zip(ROW_DOMAINS, ("legend.left", "legend.right")):
        notes.append(dict(xref="paper", yref="paper", x=-0.01, y=(lo + hi) / 2, xanchor="right", showarrow=False,
                          text=Joined(("<b>", words(key), "</b>")), font=dict(size=style.tick_font)))
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
    note = words("ch2.b0.note", diff=f"{n['max_abs_diff']:.1e}", rel=f"{n['max_rel_diff']:.1e}",
             nn=say_bytes(n["left_intermediate_bytes"]), md=say_bytes(n["right_intermediate_bytes"]),
             lf=say_count(o["left_flops"]), rf=say_count(o["right_flops"]))
    if view.data["sides_compressed"]:
        note = Joined((note, " · ", words("notice.sides_compressed")))
    first = finish_slide(fig, style, words("ch2.b0.title", n=f"{o['n']:,}", d=o["d"], m=o["m"]), note,
                         fonts_done=True, then=margins(l=170, r=20, b=10))

    names = [words("legend.left"), words("legend.right")]
    fig2 = make_subplots(rows=1, cols=3, horizontal_spacing=0.12,
                         subplot_titles=(words("axis.flops"), words("axis.bytes"), words("axis.seconds")))
    for col, (a, b, fmt) in enumerate(((n["left_flops"], n["right_flops"], say_count),
                                       (n["left_intermediate_bytes"], n["right_intermediate_bytes"], say_bytes),
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
    note2 = words("ch2.b1.note", flops=say_ratio(n["flop_ratio"]), time=say_ratio(n["time_ratio"]),
              timed_n=f"{n['timed_n']:,.0f}", timed_flops=say_ratio(n["timed_flop_ratio"]),
              gflops=f"{n['matmul_gflops']:.0f}", article=say_ratio(n["article_model_ratio"]),
              leading=f"{n['article_leading_ratio']:.0f}")
    second = finish_slide(fig2, style, words("ch2.b1.title", n=f"{o['n']:,}"), note2)
    return [first, second]
