"""The maps tab's figures: the grid of heatmaps with error maps beneath, and metric bars.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from ..text import Joined, Message
from .style import PROJECTOR_FIGURE_PX, Wrapped, as_style, colorscale, finish, finite_values, unique_labels


def attention_grid(tokens, maps: dict, errors: dict, reference: str = "softmax", ill_defined: dict | None = None,
                   title: str = "", note: str = "", style=None, cols: int | None = None,
                   names: dict | None = None, infinite_kl: dict | None = None, block: int = 1,
                   references: dict | None = None) -> go.Figure:
    """A grid of attention heatmaps, each with its error map (approx - softmax) beneath it.

    ``maps`` is label -> (n, n) array, the reference first; ``errors`` is label -> (n, n)
    for every map but the reference. Softmax and every map without negative weights share
    one colour axis (weight, 0 up), and their errors one symmetric diverging axis. A map
    with negative weights (identity, Taylor-1, trig RFF can have them) would stretch those
    axes until softmax is one flat colour, so it gets its own diverging scale, map and
    error each, said in its panel titles with the range. Hovering a cell shows the query
    and key tokens, the approximate and exact weights and their difference (the error
    panels: the difference).

    The layout is written as plain dicts and validated once: make_subplots and per-panel
    updates cost ~0.3 s for ten panels, most of the maps tab's time budget. Words are
    messages (said by the page); ``names`` gives the name shown for a map's label (default: the label).
    ``infinite_kl`` is label -> the query rows (of the full N) where the map's KL is +inf
    (the view's ``infinite_kl``): each is marked "∞" at the left edge of its map, in the
    displayed row that holds it (``block`` full rows a displayed one), and the title counts them.
    ``references`` is label -> (name, array) for a map judged against another reference than
    the grid's (a mechanism, always causal, beside non-causal softmax: causal softmax); its
    error title and hover name that one.
    """
    style = as_style(style)
    names_shown = names or {}
    labels = unique_labels(tokens)
    names = list(maps)
    # On a projector every map sits in one row with its error beneath, so that the grid fits the
    # window; token labels then only on the left (queries) and under the bottom row (keys), which
    # all panels share. Otherwise three a row, each panel labelled.
    # Past five maps, two rows of them (narrower panels would squeeze their titles to many lines).
    projector = style.presentation and cols is None
    if projector:
        cols = math.ceil(len(names) / math.ceil(len(names) / 5))
    cols = max(1, min(cols or 3, len(names)))
    rows = 2 * math.ceil(len(names) / cols)
    h_space = (0.02 if projector else 0.16) if style.presentation else 0.13
    # Projector: room for a two-line title between rows (~60 px of a ~370-px plot), whatever the rows.
    v_space = 0.16 if projector else 0.32 / rows
    width = (1 - h_space * (cols - 1)) / cols
    height = (1 - v_space * (rows - 1)) / rows

    exact = np.asarray(maps[reference]) if reference in maps else None
    signed = {name for name in names if name != reference and has_negative(maps[name])}
    weights = finite_values([maps[name] for name in names if name not in signed])
    lo = 0.0 if weights.size == 0 or weights.min() >= 0 else float(np.percentile(weights, 0.1))
    hi = float(np.percentile(weights, 99.9)) if weights.size else 1.0
    if exact is not None and np.isfinite(exact).any():
        hi = max(hi, float(np.nanmax(exact)))
    hi = hi if hi > lo else lo + 1e-6
    emax = symmetric_range([errors[name] for name in errors if name not in signed])
    own_axes = {}           # signed map name -> (map axis, error axis, map range, error range)
    for name in names:
        if name in signed:
            index = 3 + 2 * len(own_axes)
            own_axes[name] = (f"coloraxis{index}", f"coloraxis{index + 1}", symmetric_range([maps[name]]),
                              symmetric_range([errors[name]]) if name in errors else 1e-6)

    hover_map = Joined([Message("maps.hover_map"), "<extra>%{fullData.name}</extra>"])
    # The error panels carry no hover data of their own: the weights behind a difference are
    # one panel up, and two more N x N arrays per map made the reply with every map ~7 MB.
    hover_err = Joined([Message("maps.hover_err"), "<extra>%{fullData.name}</extra>"])
    key_title, query_title = Message("maps.key"), Message("maps.query")
    tick = dict(size=style.tick_font)
    axis_title = dict(size=style.font)
    data, layout, annotations = [], {}, []

    def panel(row: int, col: int, z, customdata, name, coloraxis, hover, subtitle):
        index = row * cols + col + 1
        suffix = "" if index == 1 else str(index)
        x0 = col * (width + h_space)
        y1 = 1 - row * (height + v_space)
        trace = dict(type="heatmap", z=z, x=labels, y=labels, name=name, coloraxis=coloraxis, hovertemplate=hover,
                     xaxis="x" + suffix, yaxis="y" + suffix)
        if customdata is not None:
            trace["customdata"] = customdata
        data.append(trace)
        show_x = not projector or row == rows - 1 or len(errors) == 0
        show_y = not projector or col == first_col[row]
        layout["xaxis" + suffix] = dict(domain=[max(0.0, x0), min(1.0, x0 + width)], anchor="y" + suffix, type="category",
                                        title=dict(text=key_title if show_x else "", font=axis_title), tickangle=-60,
                                        tickfont=tick, showticklabels=show_x)
        layout["yaxis" + suffix] = dict(domain=[max(0.0, y1 - height), min(1.0, y1)], anchor="x" + suffix, type="category",
                                        autorange="reversed", title=dict(text=query_title if show_y else "", font=axis_title),
                                        tickfont=tick, showticklabels=show_y)
        annotations.append(dict(text=subtitle, x=x0 + width / 2, y=y1, xref="paper", yref="paper",
                                xanchor="center", yanchor="bottom", showarrow=False, font=dict(size=style.font)))

    first_col = {}          # row -> the first column holding a panel (the one labelled on a projector)
    for i, name in enumerate(names):
        for row in (2 * (i // cols), 2 * (i // cols) + 1) if name in errors else (2 * (i // cols),):
            first_col.setdefault(row, i % cols)
    for i, name in enumerate(names):
        row, col = 2 * (i // cols), i % cols
        z = np.asarray(maps[name])
        own_ref = (references or {}).get(name)
        ref = np.asarray(own_ref[1]) if own_ref is not None else exact if exact is not None else z
        against = own_ref[0] if own_ref is not None else reference
        err = np.asarray(errors[name]) if name in errors else np.zeros_like(z)
        map_axis, err_axis, map_range, err_range = own_axes.get(name, ("coloraxis", "coloraxis2", None, None))
        shown = names_shown.get(name, name)
        map_title = [_panel_title(shown, (ill_defined or {}).get(name, 0))]
        inf_rows = (infinite_kl or {}).get(name) or []
        if inf_rows:
            map_title.append(Message("maps.inf_rows", count=len(inf_rows)))
        # On a projector the error sits right under its map: "− softmax" says what it is.
        err_title = ["− ", against] if projector else [shown, " − ", against]
        if name in own_axes:
            # One line: a second would run into the token labels of the panel above.
            map_title.append(Message("maps.own_scale", range=f"{map_range:.2g}"))
            # (On a projector the map's title above already says "own scale": the range alone.)
            err_title.append(f" ±{err_range:.2g}" if projector else Message("maps.own_scale", range=f"{err_range:.2g}"))
        map_title, err_title = Joined(map_title), Joined(err_title)
        panel(row, col, z, np.stack([ref, err], axis=-1), shown, map_axis, hover_map, map_title)
        if inf_rows:
            index = row * cols + col + 1
            suffix = "" if index == 1 else str(index)
            shown_rows = sorted({int(r) // max(1, int(block)) for r in inf_rows if int(r) // max(1, int(block)) < len(labels)})
            data.append(dict(type="scatter", x=[labels[0]] * len(shown_rows), y=[labels[r] for r in shown_rows],
                             mode="text", text=["∞"] * len(shown_rows), textposition="middle center",
                             textfont=dict(size=style.tick_font + 2, color="#b00"), name=Joined([shown, " KL = ∞"]),
                             hovertext=[Message("maps.inf_marker")] * len(shown_rows), hoverinfo="text",
                             showlegend=False, xaxis="x" + suffix, yaxis="y" + suffix))
        if name in errors:
            panel(row + 1, col, err, None, Joined([shown, " − ", against]), err_axis, hover_err,
                  err_title)

    for map_axis, err_axis, map_range, err_range in own_axes.values():
        # No colour bar of their own (one per panel would crowd the grid): the title gives the range.
        layout[map_axis] = dict(colorscale=colorscale(style.diverging), cmid=0.0, cmin=-map_range, cmax=map_range, showscale=False)
        layout[err_axis] = dict(colorscale=colorscale(style.diverging), cmid=0.0, cmin=-err_range, cmax=err_range, showscale=False)
    bar = 22 if style.presentation else 14
    # On a projector the rows are short: the colour bars' titles go beside them (two rotated
    # lines), three ticks each.
    bar_title = dict(side="right") if projector else dict(side="top")
    bar_ticks = dict(nticks=3) if projector else {}
    bar_len = 0.48 if projector else 0.45
    layout.update(
        annotations=annotations,
        coloraxis=dict(colorscale=colorscale(style.sequential), cmin=lo, cmax=hi,
                       colorbar=dict(title=dict(text=Message("maps.bar_weight"), **bar_title), len=bar_len, y=1.0,
                                     yanchor="top", thickness=bar, **bar_ticks)),
        coloraxis2=dict(colorscale=colorscale(style.diverging), cmid=0.0, cmin=-emax, cmax=emax,
                        colorbar=dict(title=dict(text=Message("maps.bar_error"), **bar_title), len=bar_len, y=0.0,
                                      yanchor="bottom", thickness=bar, **bar_ticks)),
    )
    panel_px = 560 if style.presentation else 430
    fig = finish({"data": data, "layout": layout}, style, title or Message("maps.title"), height=rows * panel_px + 120, note=note,
                 fonts_done=True, total=PROJECTOR_FIGURE_PX + 100 if projector else None, panel_lines=2 if projector else 1)
    if projector:
        # Only the bottom row's key labels (tilted) lie under the grid.
        fig.update_layout(margin=dict(b=110))
    return fig


def has_negative(values) -> bool:
    """Whether a map holds a negative (finite) weight."""
    flat = finite_values([values])
    return bool(flat.size) and float(flat.min()) < 0


def symmetric_range(arrays) -> float:
    """The 99.9th percentile of |values| (a few extreme cells must not flatten the rest),
    never 0: the half-width of a diverging scale centred on zero."""
    flat = np.abs(finite_values(arrays)) if arrays else np.zeros(0)
    top = float(np.percentile(flat, 99.9)) if flat.size else 0.0
    return top if top > 0 else 1e-6


def _panel_title(name, bad):
    return Message("maps.ill_rows", name=name, count=bad) if bad else name


def metric_bars(rows: list, keys=("entropy_reference", "entropy_approx", "monotonicity"), labels: dict | None = None,
                title: str = "", style=None, names: dict | None = None,
                spread: dict | None = None, spread_seeds: int = 0, note: str = "") -> go.Figure:
    """Entropy and monotonicity per map: spiky and monotone like softmax, or flat.

    ``rows`` are metric dicts with a "map" key (the engine's ``compare`` output); ``names``
    the name shown for each map's label; ``spread`` label -> {"entropy_approx": (mean, sd),
    "monotonicity": (mean, sd)} over ``spread_seeds`` seeds, drawn as a diamond with an error
    bar on the bar of the one draw. Words are messages (said by the page).
    """
    style = as_style(style)
    labels = labels or {}
    shown = names or {}
    names = [shown.get(r["map"], r["map"]) for r in rows]
    fig = make_subplots(rows=1, cols=2, subplot_titles=(Message("maps.bars_entropy"), Message("maps.bars_mono")),
                        horizontal_spacing=0.12)
    from ..measure.showing import mostly_undefined, undefined_share, why_key   # plain-dict helpers: no computation here
    # A mean over fewer than half of the rows is no value to draw as a bar (it read as 0 for
    # the identity map on 'needle': 1 row of 128): n/a, with the reason on hover.
    ent = [None if mostly_undefined(r, "entropy_approx") else r.get("entropy_approx") for r in rows]
    fig.add_trace(go.Bar(x=names, y=ent, name=labels.get("entropy_approx", Message("maps.bars_entropy_name")),
                         marker_color=style.colour(0)), row=1, col=1)
    ref = next((r.get("entropy_reference") for r in rows if r.get("entropy_reference") is not None), None)
    if ref is not None:
        fig.add_hline(y=ref, line=dict(color=style.colour(3), width=style.line, dash="dash"), row=1, col=1,
                      annotation_text="softmax", annotation_position="top left")
    mono = [None if mostly_undefined(r, "monotonicity") else r.get("monotonicity") for r in rows]
    fig.add_trace(go.Bar(x=names, y=mono, name=labels.get("monotonicity", Message("maps.bars_mono_name")),
                         marker_color=style.colour(2)), row=1, col=2)
    for col, key in ((1, "entropy_approx"), (2, "monotonicity")):
        stats = [(name, *spread[row["map"]][key]) for name, row in zip(names, rows)
                 if row["map"] in (spread or {}) and spread[row["map"]][key][0] is not None]
        if not stats:
            continue
        fig.add_trace(go.Scatter(x=[name for name, _, _ in stats], y=[mean for _, mean, _ in stats], mode="markers",
                                 name=Message("maps.bars_spread", k=spread_seeds),
                                 marker=dict(symbol="diamond", size=style.marker + 3, color="#222"),
                                 error_y=dict(type="data", array=[sd or 0.0 for _, _, sd in stats], visible=True,
                                              color="#222", thickness=max(1, style.line / 1.5)),
                                 customdata=[sd or 0.0 for _, _, sd in stats],
                                 hovertemplate="%{x}<br>%{y:.3g} ± %{customdata:.2g}<extra></extra>"),
                      row=1, col=col)
    # A missing bar would read as zero: say that the value is undefined (negative weights,
    # ill-defined rows), as the metrics table does.
    for col, values, metric in ((1, ent, "entropy_approx"), (2, mono, "monotonicity")):
        missing = [(name, row) for name, row, value in zip(names, rows, values) if value is None]
        if missing:
            why = [Message("maps.bars_na_why", name=name, why=Message(why_key(row, metric)),
                       **dict(zip(("count", "total"), undefined_share(row, metric)))) for name, row in missing]
            fig.add_trace(go.Scatter(x=[name for name, _ in missing], y=[0] * len(missing), mode="text",
                                     text=[Message("common.na")] * len(missing), textposition="top center",
                                     textfont=dict(size=style.tick_font, color="#b00"), showlegend=False,
                                     hovertext=[Wrapped(line, 60) for line in why], hoverinfo="text"),
                          row=1, col=col)
    fig.update_yaxes(title_text=Message("maps.bars_entropy_axis"), row=1, col=1)
    fig.update_yaxes(title_text=Message("maps.bars_mono_axis"), range=[min(-0.1, min([x for x in mono if x is not None] or [0])), 1.05],
                     row=1, col=2)
    fig.update_xaxes(title_text=Message("maps.bars_map_axis"), tickangle=-30)
    fig.update_layout(showlegend=False)
    return finish(fig, style, title or Message("maps.bars_title"), height=560 if style.presentation else 430,
                  note=note)

