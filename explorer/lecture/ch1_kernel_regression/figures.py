"""Chapter 1: attention is kernel regression: the chapter's figures, its builds in the order the speaker shows them, drawn
from its view (``view``). Their words are messages (``words``), said in the audience's language at the page."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..figure_common import finish_slide
from ...figures.style import unique_labels
from ..text import words


KEY_LABELS = 8         # the heaviest keys drawn with their tokens; the rest are summed in the note


def draw(view, style):
    toy = view.data["toy"]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.7, 0.3], vertical_spacing=0.06)
    fig.add_scatter(x=toy["grid"], y=toy["truth"], mode="lines", name=words("legend.truth"),
                    line=dict(color="#999", dash="dot", width=style.line), row=1, col=1)
    fig.add_scatter(x=toy["xs"], y=toy["ys"], mode="markers", name=words("legend.points"),
                    marker=dict(color=style.colour(0), size=style.marker,
                                opacity=0.35 + 0.65 * toy["weights"] / max(toy["weights"].max(), 1e-300)),
                    row=1, col=1)
    fig.add_scatter(x=toy["grid"], y=toy["curve"], mode="lines", name=words("legend.estimate"),
                    line=dict(color=style.colour(1), width=style.line), row=1, col=1)
    fig.add_scatter(x=[toy["x"]], y=[toy["fx"]], mode="markers", name=words("legend.query"),
                    marker=dict(color=style.colour(3), size=style.marker * 2, symbol="x"), row=1, col=1)
    fig.add_bar(x=toy["xs"], y=toy["weights"], name=words("legend.weights"), marker_color=style.colour(1),
                width=0.08, row=2, col=1)
    fig.add_vline(x=toy["x"], line_dash="dash", line_color=style.colour(3))
    fig.update_yaxes(title_text=words("axis.y"), row=1, col=1)
    fig.update_yaxes(title_text=words("axis.weight"), row=2, col=1)
    fig.update_xaxes(title_text=words("axis.x"), row=2, col=1)
    first = finish_slide(fig, style, words("ch1.b0.title", h=f"{toy['h']:g}", x=f"{toy['x']:g}"),
                    words("ch1.b0.note", fx=f"{toy['fx']:.4f}"))

    head = view.data["head"]
    tokens = unique_labels(head["tokens"])
    # The heaviest keys as horizontal bars, their tokens written out: a label under each of
    # dozens of keys is unreadable on a projector, and these are what the query attends to.
    weights = np.asarray(head["weights"], dtype=float)
    top = np.argsort(-weights, kind="stable")[:KEY_LABELS][::-1]
    fig2 = go.Figure(go.Bar(y=[tokens[i] for i in top], x=weights[top], orientation="h",
                            marker_color=style.colour(0), showlegend=False, text=[f"{w:.2f}" for w in weights[top]],
                            textposition="outside", cliponaxis=False, textfont=dict(size=style.tick_font)))
    fig2.update_xaxes(title_text=words("axis.weight"), range=[0, float(weights.max()) * 1.2])
    fig2.update_yaxes(title_text=words("axis.key"))
    rest = len(weights) - len(top)
    note = words("ch1.b1.rest", w=f"{weights.sum() - weights[top].sum():.2f}") if rest > 0 else ""
    second = finish_slide(fig2, style, words("ch1.b1.title", word=head["word"], pos=head["query"]), note)

    dims = list(range(len(head["output"])))
    model = head["reference_kind"] == "model"
    fig3 = go.Figure()
    fig3.add_bar(x=dims, y=head["output"], name=words("legend.nw_output"), marker_color=style.colour(1))
    fig3.add_scatter(x=dims, y=head["reference"], mode="markers",
                     name=words("legend.model_output" if model else "legend.engine_output"),
                     marker=dict(color="#000", size=style.marker * 1.4, symbol="line-ew-open", line_width=3))
    fig3.update_xaxes(title_text=words("axis.value_dim"))
    fig3.update_yaxes(title_text=words("axis.value"))
    # The legend outside, right of the plot: inside, a corner lay on the tallest bars.
    third = finish_slide(fig3, style, words("ch1.b2.title", word=head["word"], pos=head["query"]),
                    words("ch1.b2.note", ref=words("ref.model" if model else "ref.engine"),
                      diff=f"{view.numbers['max_abs_diff']:.1e}"))
    return [first, second, third]
