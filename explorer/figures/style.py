"""How every figure looks: the normal and the presentation style (projector: large fonts, thick
lines, Okabe & Ito palette, cividis), the shared layout (title, wrapped note, margins that
leave room for both), and small helpers the tab modules share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go


OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
PLOTLY_DEFAULT = ("#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692", "#B6E880")


@dataclass(frozen=True)
class Style:
    presentation: bool = False

    @property
    def font(self) -> int:
        return 22 if self.presentation else 13

    @property
    def tick_font(self) -> int:
        return 17 if self.presentation else 11

    @property
    def title_font(self) -> int:
        return 28 if self.presentation else 17

    @property
    def line(self) -> float:
        return 5.0 if self.presentation else 2.2

    @property
    def marker(self) -> int:
        return 13 if self.presentation else 7

    @property
    def palette(self) -> tuple:
        return OKABE_ITO if self.presentation else PLOTLY_DEFAULT

    @property
    def sequential(self) -> str:
        return "Cividis" if self.presentation else "Viridis"

    @property
    def diverging(self) -> str:
        # Blue-white-red reads for the common colour-vision deficiencies; red = too much weight.
        return "RdBu_r"

    def colour(self, i: int) -> str:
        return self.palette[i % len(self.palette)]


def as_style(style) -> Style:
    if isinstance(style, Style):
        return style
    return Style(presentation=bool(style))


def finish(fig: go.Figure, style: Style, title: str, height: int, note: str = "", fonts_done: bool = False,
            width: float = 1.0) -> go.Figure:
    """Shared layout: fonts, white template, the title and an optional note as its subtitle.

    Both are pinned to the top of the figure and wrapped to the width a browser gives the
    plot, and the top margin is made tall enough for them and for subplot titles, so that
    nothing overlaps at either font size.
    """
    # One-line titles: plotly anchors a multi-line title by its first line, so further lines
    # would run into the plot. What does not fit (the sample, the head) leads the subtitle.
    limit = int((70 if style.presentation else 115) * width)   # width: share of the page the plot gets
    chars = int((95 if style.presentation else 150) * width)
    parts = title.split("<br>")
    head, rest = parts[0], parts[1:]
    if len(head) > limit and " · " in head:
        head, tail = head.split(" · ", 1)
        rest.insert(0, tail)
    title = head
    note_lines = [line for part in rest for line in wrap(part, chars)]
    note_lines += wrap(note, chars)
    title_lines = 1
    note_font = max(style.font - 2, 11)
    has_panel_titles = any(a.yanchor == "bottom" and a.yref == "paper" for a in fig.layout.annotations or ())
    top = int(14 + title_lines * style.title_font * 1.35 + len(note_lines) * note_font * 1.5
              + (style.font * 1.8 if has_panel_titles else style.font * 0.8))
    title_spec = dict(text=title, font=dict(size=style.title_font), x=0.01, xanchor="left",
                      yref="container", y=1.0, yanchor="top", pad=dict(t=10))
    if note_lines:
        title_spec["subtitle"] = dict(text="<br>".join(note_lines), font=dict(size=note_font, color="#555"))
    fig.update_layout(
        template="plotly_white",
        font=dict(size=style.font, family="DejaVu Sans, Arial, Noto Sans CJK SC, sans-serif"),
        title=title_spec,
        height=height + top - 80,
        margin=dict(l=90, r=40, t=top, b=70),
        hoverlabel=dict(font_size=style.font),
        legend=dict(font=dict(size=style.font)),
    )
    if not fonts_done:  # builders with many panels set these themselves (the updates are slow)
        fig.update_annotations(font_size=style.font)  # subplot titles
        fig.update_xaxes(tickfont=dict(size=style.tick_font), title_font=dict(size=style.font))
        fig.update_yaxes(tickfont=dict(size=style.tick_font), title_font=dict(size=style.font))
    return fig


def wrap(text: str, width: int) -> list[str]:
    import textwrap
    return textwrap.wrap(text, width) if text else []


def log_ticks(fig: go.Figure, style: Style, axes: str = "y") -> None:
    """On a projector the 2-and-5 minor labels of a log axis crowd out the decades."""
    if style.presentation:
        (fig.update_yaxes if axes == "y" else fig.update_xaxes)(dtick=1)


def unique_labels(tokens) -> list[str]:
    """Labels made unique by suffixing repeats ("the", "the (2)"), so no two rows merge."""
    seen: dict[str, int] = {}
    out = []
    for tok in tokens:
        tok = str(tok)
        count = seen.get(tok, 0) + 1
        seen[tok] = count
        out.append(tok if count == 1 else f"{tok} ({count})")
    # A suffixed label could collide with a real token; number everything then.
    if len(set(out)) != len(out):
        out = [f"{i}:{tok}" for i, tok in enumerate(tokens)]
    return out


def finite_values(values) -> np.ndarray:
    arrays = [np.asarray(v, dtype=np.float64).ravel() for v in values]
    flat = np.concatenate(arrays) if arrays else np.zeros(0)
    return flat[np.isfinite(flat)]
