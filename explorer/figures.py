"""Plotly figures from engine results: pure functions, no gradio, no attention math.

Every builder takes numbers the engine (``explorer.views``) already computed and draws
them as they are: the ``z`` of a heatmap is the engine's array, a curve's ``y`` is the
engine's list. What is decided here is only how they look: colour scales and their
ranges, labels, fonts, layout. ``Style(presentation=True)`` is the lecture-hall version:
large fonts, thick lines, a colour-blind-safe palette (Okabe & Ito) and scales (cividis).

Token axes are categorical with unique labels, so two "the" never merge into one row
(plotly merges equal category names), and plotly thins the tick labels when they do not
fit instead of overprinting them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

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


def _finish(fig: go.Figure, style: Style, title: str, height: int, note: str = "", fonts_done: bool = False,
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
    note_lines = [line for part in rest for line in _wrap(part, chars)]
    note_lines += _wrap(note, chars)
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
        font=dict(size=style.font, family="DejaVu Sans, Arial, sans-serif"),
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


def _wrap(text: str, width: int) -> list[str]:
    import textwrap
    return textwrap.wrap(text, width) if text else []


def _log_ticks(fig: go.Figure, style: Style, axes: str = "y") -> None:
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


def _finite(values) -> np.ndarray:
    arrays = [np.asarray(v, dtype=np.float64).ravel() for v in values]
    flat = np.concatenate(arrays) if arrays else np.zeros(0)
    return flat[np.isfinite(flat)]


# ---------------------------------------------------------------------------------------
# Maps tab
# ---------------------------------------------------------------------------------------

def attention_grid(tokens, maps: dict, errors: dict, reference: str = "softmax", ill_defined: dict | None = None,
                   title: str = "", note: str = "", style=None, cols: int | None = None) -> go.Figure:
    """A grid of attention heatmaps, each with its error map (approx - softmax) beneath it.

    ``maps`` is label -> (n, n) array, the reference first; ``errors`` is label -> (n, n)
    for every map but the reference. All maps share one colour axis (weight) and all
    errors one symmetric diverging axis. Hovering a cell shows the query and key tokens,
    the approximate and exact weights and their difference.

    The layout is written as plain dicts and validated once: make_subplots and per-panel
    updates cost ~0.3 s for ten panels, most of the maps tab's time budget.
    """
    style = as_style(style)
    labels = unique_labels(tokens)
    names = list(maps)
    # Two big panels a row on a projector, three otherwise: token labels need the room.
    cols = max(1, min(cols or (2 if style.presentation else 3), len(names)))
    rows = 2 * math.ceil(len(names) / cols)
    h_space = 0.16 if style.presentation else 0.13   # room for long token labels and the y title
    v_space = 0.32 / rows
    width = (1 - h_space * (cols - 1)) / cols
    height = (1 - v_space * (rows - 1)) / rows

    exact = np.asarray(maps[reference]) if reference in maps else None
    weights = _finite(maps.values())
    lo = min(0.0, float(np.percentile(weights, 0.1))) if weights.size else 0.0
    hi = float(np.percentile(weights, 99.9)) if weights.size else 1.0
    if exact is not None and np.isfinite(exact).any():
        hi = max(hi, float(np.nanmax(exact)))
    errs = np.abs(_finite(errors.values())) if errors else np.zeros(0)
    emax = float(np.percentile(errs, 99.9)) if errs.size else 0.0
    emax = emax if emax > 0 else 1e-6

    hover_map = ("query: %{y}<br>key: %{x}<br>approx: %{z:.4g}<br>softmax: %{customdata[0]:.4g}"
                 "<br>difference: %{customdata[1]:+.3g}<extra>%{fullData.name}</extra>")
    hover_err = ("query: %{y}<br>key: %{x}<br>approx: %{customdata[0]:.4g}<br>softmax: %{customdata[1]:.4g}"
                 "<br>difference: %{z:+.3g}<extra>%{fullData.name}</extra>")
    tick = dict(size=style.tick_font)
    axis_title = dict(size=style.font)
    data, layout, annotations = [], {}, []

    def panel(row: int, col: int, z, customdata, name, coloraxis, hover, subtitle):
        index = row * cols + col + 1
        suffix = "" if index == 1 else str(index)
        x0 = col * (width + h_space)
        y1 = 1 - row * (height + v_space)
        data.append(dict(type="heatmap", z=z, x=labels, y=labels, customdata=customdata, name=name,
                         coloraxis=coloraxis, hovertemplate=hover, xaxis="x" + suffix, yaxis="y" + suffix))
        layout["xaxis" + suffix] = dict(domain=[max(0.0, x0), min(1.0, x0 + width)], anchor="y" + suffix, type="category",
                                        title=dict(text="key", font=axis_title), tickangle=-60, tickfont=tick)
        layout["yaxis" + suffix] = dict(domain=[max(0.0, y1 - height), min(1.0, y1)], anchor="x" + suffix, type="category",
                                        autorange="reversed", title=dict(text="query", font=axis_title),
                                        tickfont=tick)
        annotations.append(dict(text=subtitle, x=x0 + width / 2, y=y1, xref="paper", yref="paper",
                                xanchor="center", yanchor="bottom", showarrow=False, font=dict(size=style.font)))

    for i, name in enumerate(names):
        row, col = 2 * (i // cols), i % cols
        z = np.asarray(maps[name])
        ref = exact if exact is not None else z
        err = np.asarray(errors[name]) if name in errors else np.zeros_like(z)
        panel(row, col, z, np.stack([ref, err], axis=-1), name, "coloraxis", hover_map,
              _panel_title(name, ill_defined))
        if name in errors:
            panel(row + 1, col, err, np.stack([z, ref], axis=-1), f"{name} − {reference}", "coloraxis2", hover_err,
                  f"{name} − {reference}")

    bar = 22 if style.presentation else 14
    layout.update(
        annotations=annotations,
        coloraxis=dict(colorscale=style.sequential, cmin=lo, cmax=hi,
                       colorbar=dict(title=dict(text="attention<br>weight", side="top"), len=0.45, y=1.0,
                                     yanchor="top", thickness=bar)),
        coloraxis2=dict(colorscale=style.diverging, cmid=0.0, cmin=-emax, cmax=emax,
                        colorbar=dict(title=dict(text="approx −<br>softmax", side="top"), len=0.45, y=0.0,
                                      yanchor="bottom", thickness=bar)),
    )
    fig = go.Figure(data=data, layout=layout)
    panel_px = 560 if style.presentation else 430
    return _finish(fig, style, title or "Attention maps", height=rows * panel_px + 120, note=note, fonts_done=True)


def _panel_title(name, ill_defined):
    bad = (ill_defined or {}).get(name, 0)
    return f"{name}  ⚠ {bad} ill-defined rows" if bad else name


def metric_bars(rows: list, keys=("entropy_reference", "entropy_approx", "monotonicity"), labels: dict | None = None,
                title: str = "", style=None) -> go.Figure:
    """Entropy and monotonicity per map: spiky and monotone like softmax, or flat.

    ``rows`` are metric dicts with a "map" key (the engine's ``compare`` output).
    """
    style = as_style(style)
    labels = labels or {}
    names = [r["map"] for r in rows]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Entropy per row (nats, mean)", "Monotonicity (Spearman ρ)"),
                        horizontal_spacing=0.12)
    ent = [r.get("entropy_approx") for r in rows]
    fig.add_trace(go.Bar(x=names, y=ent, name=labels.get("entropy_approx", "entropy of the map"),
                         marker_color=style.colour(0)), row=1, col=1)
    ref = next((r.get("entropy_reference") for r in rows if r.get("entropy_reference") is not None), None)
    if ref is not None:
        fig.add_hline(y=ref, line=dict(color=style.colour(3), width=style.line, dash="dash"), row=1, col=1,
                      annotation_text="softmax", annotation_position="top left")
    mono = [r.get("monotonicity") for r in rows]
    fig.add_trace(go.Bar(x=names, y=mono, name=labels.get("monotonicity", "monotonicity"),
                         marker_color=style.colour(2)), row=1, col=2)
    # A missing bar would read as zero: say that the value is undefined (negative weights,
    # ill-defined rows), as the metrics table does.
    for col, values in ((1, ent), (2, mono)):
        missing = [name for name, value in zip(names, values) if value is None]
        if missing:
            fig.add_trace(go.Scatter(x=missing, y=[0] * len(missing), mode="text", text=["n/a"] * len(missing),
                                     textposition="top center", textfont=dict(size=style.tick_font, color="#b00"),
                                     showlegend=False, hoverinfo="skip"), row=1, col=col)
    fig.update_yaxes(title_text="entropy (nats)", row=1, col=1)
    fig.update_yaxes(title_text="Spearman ρ(logit, weight)", range=[min(-0.1, min([x for x in mono if x is not None] or [0])), 1.05],
                     row=1, col=2)
    fig.update_xaxes(title_text="map", tickangle=-30)
    fig.update_layout(showlegend=False)
    return _finish(fig, style, title or "Spiky and monotone like softmax, or flat?", height=560 if style.presentation else 430)


# ---------------------------------------------------------------------------------------
# Quality tab
# ---------------------------------------------------------------------------------------

def quality_curves(curves: list, x: str = "m", title: str = "", note: str = "", style=None) -> go.Figure:
    """Error against m (or FLOPs), log-log: mean over seeds with a 10-90 % band, theory dashed.

    ``curves`` are objects with label, ms, flops, kernel_mse (len(ms), seeds),
    map_error (len(ms), seeds) and theory (list or None), as ``views.quality_view`` returns.
    """
    style = as_style(style)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("Kernel estimate φ(q)·φ(k) vs exp(s): relative MSE",
                                        "Attention map: relative error ‖Â − A‖/‖A‖"))
    for i, cur in enumerate(curves):
        colour = style.colour(i)
        xs = list(cur.flops if x == "flops" else cur.ms)
        for col, data in ((1, np.asarray(cur.kernel_mse)), (2, np.asarray(cur.map_error))):
            mean = np.nanmean(data, axis=1)
            lo = np.nanpercentile(data, 10, axis=1)
            hi = np.nanpercentile(data, 90, axis=1)
            group = f"g{i}"
            fig.add_trace(go.Scatter(x=xs, y=hi, mode="lines", line=dict(width=0), showlegend=False,
                                     legendgroup=group, hoverinfo="skip"), row=1, col=col)
            fig.add_trace(go.Scatter(x=xs, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                                     fillcolor=_alpha(colour, 0.18), showlegend=False, legendgroup=group,
                                     hoverinfo="skip"), row=1, col=col)
            fig.add_trace(go.Scatter(x=xs, y=mean, mode="lines+markers", name=f"{cur.label} (measured)",
                                     line=dict(color=colour, width=style.line), marker=dict(size=style.marker),
                                     legendgroup=group, showlegend=col == 1,
                                     hovertemplate=f"{cur.label}<br>x=%{{x}}<br>mean=%{{y:.3g}}<extra></extra>"),
                          row=1, col=col)
        if cur.theory is not None:
            fig.add_trace(go.Scatter(x=xs, y=list(cur.theory), mode="lines", name=f"{cur.label} (theory, IID)",
                                     line=dict(color=colour, width=style.line, dash="dash"),
                                     hovertemplate=f"{cur.label} theory<br>x=%{{x}}<br>%{{y:.3g}}<extra></extra>"),
                          row=1, col=1)
    xtitle = "linear-path FLOPs per head" if x == "flops" else "number of features m"
    fig.update_xaxes(type="log", title_text=xtitle)
    fig.update_yaxes(type="log", title_text="relative MSE", row=1, col=1)
    fig.update_yaxes(type="log", title_text="relative error", row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", y=-0.2, x=0, yanchor="top"))
    _log_ticks(fig, style)
    height = 760 if style.presentation else 600
    fig = _finish(fig, style, title or "Random features: error against m", height=height, note=note)
    fig.update_layout(margin=dict(b=210 if style.presentation else 160))
    return fig


def _alpha(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    return f"rgba({r},{g},{b},{alpha})"


def head_overview(values, layer_names=None, metric_label: str = "", map_label: str = "", style=None) -> go.Figure:
    """All (layer, head) pairs coloured by one metric: which heads are hard to approximate."""
    style = as_style(style)
    z = np.asarray(values, dtype=np.float64)
    layers, heads = z.shape
    ylabels = list(layer_names) if layer_names and len(layer_names) == layers else [f"layer {i}" for i in range(layers)]
    text = [[("—" if not np.isfinite(x) else f"{x:.2g}") for x in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(heads)), y=list(range(layers)), colorscale=style.sequential, text=text,
        texttemplate="%{text}", textfont=dict(size=style.tick_font),
        colorbar=dict(title=dict(text=metric_label.replace(" (", "<br>("), side="top")),
        hovertemplate="layer %{y}, head %{x}<br>" + metric_label + ": %{z:.4g}<extra></extra>",
    ))
    fig.update_xaxes(title_text="head", tickmode="array", tickvals=list(range(heads)),
                     ticktext=[str(h) for h in range(heads)])
    fig.update_yaxes(title_text="layer", tickmode="array", tickvals=list(range(layers)), ticktext=ylabels,
                     autorange="reversed")
    title = f"{map_label}: {metric_label} on every head"
    return _finish(fig, style, title, height=620 if style.presentation else 480,
                   note="Click a cell (or a row of the table) to open that head in the maps tab.")


# ---------------------------------------------------------------------------------------
# State tab
# ---------------------------------------------------------------------------------------

def state_step(update, state, t: int, token: str = "", kind: str = "", style=None) -> go.Figure:
    """Step t of the RNN view: the outer product φ(k_t) v_tᵀ added, and the state S_t."""
    style = as_style(style)
    update, state = np.asarray(update), np.asarray(state)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.16,
                        subplot_titles=(f"φ(k_t) v_tᵀ added at t = {t}" + (f" ({token})" if token else ""),
                                        f"state S_t after t = {t}" + (f", decay: {kind}" if kind else "")))
    for col, z, axis, label in ((1, update, "coloraxis", "update"), (2, state, "coloraxis2", "S_t")):
        fig.add_trace(go.Heatmap(z=z, coloraxis=axis, name=label,
                                 hovertemplate="feature %{y}, value dim %{x}<br>%{z:.4g}<extra>" + label + "</extra>"),
                      row=1, col=col)
    for axis, z, x in (("coloraxis", update, 0.43), ("coloraxis2", state, 1.0)):
        vmax = _finite([z])
        vmax = float(np.abs(vmax).max()) if vmax.size else 1.0
        fig.update_layout({axis: dict(colorscale=style.diverging, cmid=0, cmin=-vmax or -1, cmax=vmax or 1,
                                      colorbar=dict(x=x, title=dict(text="update" if axis == "coloraxis" else "S_t entry",
                                                                     side="top")))})
    fig.update_xaxes(title_text="value dimension j")
    fig.update_yaxes(title_text="key feature i of φ", autorange="reversed")
    return _finish(fig, style, "Causal linear attention as an RNN: S_t = G_t ⊙ S_{t−1} + φ(k_t) v_tᵀ",
                   height=620 if style.presentation else 480)


def state_curves(ts, traces: dict, recall: dict, t_marker: int | None = None, style=None) -> go.Figure:
    """Curves over t of ‖S_t‖, ‖z_t‖ and effective rank per decay kind, and recall against lag.

    ``traces``: kind -> dict(state_norm, normaliser_norm, effective_rank) arrays of length N.
    ``recall``: kind -> dict(lags, cosine, cosine_std).
    """
    style = as_style(style)
    fig = make_subplots(rows=2, cols=2, vertical_spacing=0.18, horizontal_spacing=0.1,
                        subplot_titles=("‖S_t‖ (Frobenius)", "‖z_t‖ (normaliser)", "effective rank of S_t",
                                        "recall of an early key (cosine)"))
    ts = list(ts)
    for i, (kind, tr) in enumerate(traces.items()):
        colour = style.colour(i)
        for (r, c), key in (((1, 1), "state_norm"), ((1, 2), "normaliser_norm"), ((2, 1), "effective_rank")):
            fig.add_trace(go.Scatter(x=ts, y=list(np.asarray(tr[key])), mode="lines", name=kind, legendgroup=kind,
                                     showlegend=(r, c) == (1, 1), line=dict(color=colour, width=style.line)),
                          row=r, col=c)
        if kind in recall:
            rc = recall[kind]
            lags = list(np.asarray(rc["lags"]))
            cos = np.asarray(rc["cosine"], dtype=np.float64)
            std = np.asarray(rc["cosine_std"], dtype=np.float64)
            fig.add_trace(go.Scatter(x=lags, y=list(cos), mode="lines+markers", name=kind, legendgroup=kind,
                                     showlegend=False, line=dict(color=colour, width=style.line),
                                     marker=dict(size=style.marker),
                                     error_y=dict(type="data", array=list(std), visible=True, thickness=1)),
                          row=2, col=2)
    if t_marker is not None:
        for r, c in ((1, 1), (1, 2), (2, 1)):
            fig.add_vline(x=t_marker, line=dict(color="#777", dash="dot", width=max(1, style.line / 2)), row=r, col=c)
    for r, c in ((1, 1), (1, 2), (2, 1)):
        fig.update_xaxes(title_text="token t", row=r, col=c)
    fig.update_xaxes(title_text="lag (tokens written after the key)", type="log", row=2, col=2)
    fig.update_yaxes(title_text="‖S_t‖_F", row=1, col=1)
    fig.update_yaxes(title_text="‖z_t‖₂", row=1, col=2)
    fig.update_yaxes(title_text="effective rank", row=2, col=1)
    fig.update_yaxes(title_text="cosine(read-out, value)", row=2, col=2)
    fig.update_layout(legend=dict(title=dict(text="decay"), orientation="h", y=1.12, x=1, xanchor="right"))
    return _finish(fig, style, "What the fixed-size state holds over time", height=860 if style.presentation else 700)


def memory_growth(ts, kv_bytes, state_bytes: float, labels=("softmax KV cache", "linear-attention state"),
                  style=None) -> go.Figure:
    """Softmax's KV cache grows with t; the recurrent state stays the same size."""
    style = as_style(style)
    ts = list(ts)
    kib = [b / 1024 for b in kv_bytes]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ts, y=kib, mode="lines", name=labels[0], line=dict(color=style.colour(3), width=style.line)))
    cross = next((t for t, b in zip(ts, kv_bytes) if b >= state_bytes), None)
    if cross is not None:
        fig.add_vline(x=cross, line=dict(color="#777", dash="dot", width=max(1, style.line / 2)))
        fig.add_annotation(x=math.log10(cross), y=1, yref="paper", yanchor="top", xanchor="left", showarrow=False,
                           text=f" the cache outgrows the state at t = {cross:,}", font=dict(size=style.font))
    fig.add_trace(go.Scatter(x=ts, y=[state_bytes / 1024] * len(ts), mode="lines", name=labels[1],
                             line=dict(color=style.colour(0), width=style.line, dash="dash")))
    # Log-log: the cache is a line of slope 1, the state a flat line, both visible at once.
    fig.update_xaxes(title_text="tokens seen t", type="log")
    fig.update_yaxes(title_text="memory per head (KiB, float32)", type="log")
    # Upper left is empty on log-log axes: the cache starts low and the crossing is further right.
    fig.update_layout(legend=dict(x=0.01, y=0.98, xanchor="left", yanchor="top", bgcolor="rgba(255,255,255,0.85)"))
    return _finish(fig, style, "Memory while decoding: KV cache vs fixed state", height=520 if style.presentation else 400)


# ---------------------------------------------------------------------------------------
# Complexity tab
# ---------------------------------------------------------------------------------------

def complexity(rows: list, method_labels: dict, theory: dict | None = None, slopes: dict | None = None,
               crossover: float | None = None, crossover_text: str = "", title: str = "", note: str = "",
               style=None) -> go.Figure:
    """Measured time and peak memory against N (log-log), one line per method.

    ``rows`` are bench rows (method, n, time_ms, peak_mem_bytes, skipped). ``theory`` is
    method -> (ns, ms) from the FLOP model at the measured matmul rate, drawn dotted.
    Slopes go into the legend; the crossover N is a vertical line with its value written.
    """
    style = as_style(style)
    slopes = slopes or {}
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("time per call (median)", "extra peak memory per call"))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for i, method in enumerate(methods):
        colour = style.colour(i)
        pts = sorted((r["n"], r) for r in rows if r["method"] == method and not r.get("skipped")
                     and r.get("time_ms") is not None)
        if not pts:
            continue
        label = method_labels.get(method, method)
        if method in slopes:
            label += f"  (slope {slopes[method]:.2f})"
        ns = [n for n, _ in pts]
        fig.add_trace(go.Scatter(x=ns, y=[r["time_ms"] for _, r in pts], mode="lines+markers", name=label,
                                 legendgroup=method, line=dict(color=colour, width=style.line),
                                 marker=dict(size=style.marker),
                                 hovertemplate=f"{method_labels.get(method, method)}<br>N=%{{x}}<br>%{{y:.3g}} ms<extra></extra>"),
                      row=1, col=1)
        mem = [(n, r["peak_mem_bytes"] / 2**20) for n, r in pts if r.get("peak_mem_bytes")]
        if mem:
            fig.add_trace(go.Scatter(x=[n for n, _ in mem], y=[b for _, b in mem], mode="lines+markers", name=label,
                                     legendgroup=method, showlegend=False, line=dict(color=colour, width=style.line),
                                     marker=dict(size=style.marker),
                                     hovertemplate="N=%{x}<br>%{y:.3g} MiB<extra></extra>"),
                          row=1, col=2)
        if theory and method in theory:
            tn, tms = theory[method]
            fig.add_trace(go.Scatter(x=list(tn), y=list(tms), mode="lines", name=f"{method}: FLOPs at matmul rate",
                                     legendgroup=method, showlegend=False,
                                     line=dict(color=colour, width=max(1, style.line / 2), dash="dot"),
                                     hovertemplate="FLOP model<br>N=%{x}<br>%{y:.3g} ms<extra></extra>"),
                          row=1, col=1)
    if crossover:
        fig.add_vline(x=crossover, line=dict(color="#444", width=max(1, style.line / 2), dash="dash"), row=1, col=1)
        fig.add_annotation(x=math.log10(crossover), y=0.02, xref="x", yref="y domain", yanchor="bottom",
                           text=f"crossover<br>N ≈ {crossover:,.0f}", showarrow=False,
                           font=dict(size=style.font), bgcolor="rgba(255,255,255,0.85)")
    ns_all = sorted({r["n"] for r in rows})
    if 1 < len(ns_all) <= 12:
        fig.update_xaxes(tickmode="array", tickvals=ns_all, ticktext=[f"{n:,}" for n in ns_all])
    _log_ticks(fig, style)
    fig.update_xaxes(type="log", title_text="sequence length N")
    fig.update_yaxes(type="log", title_text="time (ms)", row=1, col=1)
    fig.update_yaxes(type="log", title_text="extra peak memory (MiB)", row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", y=-0.2, x=0, yanchor="top"))
    full_note = ". ".join(x for x in (crossover_text, note, "Dotted: the FLOP model at the measured matmul rate") if x)
    fig = _finish(fig, style, title or "Measured cost against N", height=760 if style.presentation else 600,
                  note=full_note)
    fig.update_layout(margin=dict(b=230 if style.presentation else 170))
    return fig


def flop_claim(n: int, head_dim: int, quadratic: float, linear: float, measured: dict | None = None,
               style=None) -> go.Figure:
    """The article's claim as two bars (log scale): FLOPs of the quadratic and linear path."""
    style = as_style(style)
    fig = go.Figure(go.Bar(x=["softmax (N×N)", "linear φ(Q)(φ(K)ᵀV)"], y=[quadratic, linear],
                           marker_color=[style.colour(3), style.colour(0)],
                           text=[f"{quadratic:.3g}", f"{linear:.3g}"], textposition="inside", insidetextanchor="end",
                           textfont=dict(size=style.font, color="white")))
    # Log scale from 1 so that both bars have visible length and room for their labels.
    fig.update_yaxes(type="log", title_text="FLOPs per head", range=[0, math.log10(quadratic) * 1.08], dtick=2)
    fig.update_xaxes(title_text="path")
    title = f"{quadratic / linear:,.0f}× fewer FLOPs<br>N = {n:,}, d = {head_dim}, one head"
    note = ""
    if measured:
        note = (f"measured at N = {measured['n']:,}: softmax {measured['quadratic_ms']:.3g} ms, linear "
                f"{measured['linear_ms']:.3g} ms ({measured['ratio']:.1f}× faster)")
    return _finish(fig, style, title, height=520 if style.presentation else 420, note=note, width=0.4)
