"""How the figures and the page are laid out, checked on their JSON (no browser): plain
labels, a legend entry for every line style, text fitted to its room, colour bars and
legends where they cannot cover anything, and every tab's link."""

from __future__ import annotations

import dataclasses
import types

import numpy as np
import pytest

from explorer.measure import bench
from explorer import catalog
from explorer.figures import quality as fq, state as fs
from explorer.figures.style import CHAR_EM, NOMINAL_WIDTH_PX, Style, finish

pytestmark = pytest.mark.slow      # a small sweep and the built app, shared

INTERNAL_IDS = ("softmax_naive", "sdpa", "linear_parallel", "linear_chunked", "linear_recurrent", "linear_cumsum",
                "elu1", "favor_plus", "trig_rff", "taylor2")


def small_sweep():
    from explorer import views
    return views.complexity_view(n_min=64, n_max=128, points=2, head_dim=16, feature_dim=0, causal=True,
                                 feature_map="elu1", methods=["sdpa", "linear_parallel", "linear_chunked"],
                                 repeats=1, time_budget_s=30)


@pytest.fixture(scope="module")
def sweep():
    return small_sweep()


def test_complexity_labels_are_plain_and_dotted_lines_have_a_legend(sweep):
    from explorer.ui import complexity_tab
    plot, _ = complexity_tab.render(sweep, presentation=True)
    names = [t.name or "" for t in plot.data]
    shown = [t for t in plot.data if t.showlegend is not False and t.name]
    for text in [*names, plot.layout.title.text, plot.layout.title.subtitle.text or "", sweep.crossover_text]:
        for ident in INTERNAL_IDS:
            assert ident not in text, (ident, text)
    dotted = [t for t in shown if t.line.dash == "dot"]
    assert len(dotted) == 1 and "FLOP" in dotted[0].name      # one legend entry explains the dotted style
    assert any(t.line.dash == "dot" for t in plot.data if t.showlegend is False)   # the dotted lines themselves


def test_complexity_controls_offer_labels_not_ids():
    from explorer.ui import complexity_tab
    assert catalog.SWEEP_METHOD_LABELS == bench.METHOD_LABELS
    from explorer.ui import i18n
    for label, value in complexity_tab.METHOD_CHOICES + complexity_tab.SWEEP_MAPS:
        label = i18n.EN[label.key] if hasattr(label, "key") else label      # translated labels are keys
        assert value in INTERNAL_IDS + catalog.SWEEP_MAPS and label != value and "_" not in label


@pytest.mark.parametrize("presentation", [False, True])
def test_state_step_colour_bars_lie_under_their_heatmaps(presentation):
    rng = np.random.default_rng(0)
    fig = fs.state_step(rng.normal(size=(32, 32)), rng.normal(size=(32, 32)) * 10, 8, "street", "linear",
                        style=presentation)
    for axis, xaxis in (("coloraxis", "xaxis"), ("coloraxis2", "xaxis2")):
        bar = fig.layout[axis].colorbar
        x0, x1 = fig.layout[xaxis].domain
        assert bar.orientation == "h" and bar.y < 0                     # below the plots, not beside them
        assert x0 - 1e-9 <= bar.x - bar.len / 2 and bar.x + bar.len / 2 <= x1 + 1e-9   # under its own heatmap


def test_memory_legend_does_not_cover_the_note():
    fig = fs.memory_growth(list(range(1, 200)), [t * 256 for t in range(1, 200)], 4096, style=True)
    assert fig.layout.legend.y < 0                                       # under the plot area
    note = [a for a in fig.layout.annotations if "outgrows" in (a.text or "")]
    assert note and note[0].y >= 0


def test_state_curves_legend_is_off_the_title_line():
    ts = list(range(10))
    trace = {"state_norm": np.arange(10.0), "normaliser_norm": np.arange(10.0), "effective_rank": np.ones(10)}
    recall = {"linear": {"lags": [1, 2, 4, 8, 16, 32, 64, 128], "cosine": np.linspace(1, 0, 8), "cosine_std": np.zeros(8)}}
    fig = fs.state_curves(ts, {"linear": trace}, recall, style=True)
    assert fig.layout.legend.y < 0
    lag_axis = fig.layout.xaxis4
    assert lag_axis.type == "log" and lag_axis.dtick == 1               # decades only: no tiny 2-and-5 labels


def quality_fixture(presentation):
    ms = [4, 8, 16, 32, 64, 128, 256]
    curve = types.SimpleNamespace(map_id="favor_plus_iid", ms=ms, flops=[m * 1000 for m in ms],
                                  kernel_mse=np.outer(np.logspace(3, 0, len(ms)), np.ones(3)),
                                  map_error=np.outer(np.linspace(1, 0.1, len(ms)), np.ones(3)),
                                  theory=list(np.logspace(12, 9, len(ms))))
    return fq.quality_curves([curve], title="Random features: error against m · a long sample description",
                             style=presentation)


@pytest.mark.parametrize("presentation", [False, True])
def test_subplot_titles_fit_their_panels_and_log_axes_label_decades(presentation):
    style = Style(presentation)
    fig = quality_fixture(presentation)
    plot_px = NOMINAL_WIDTH_PX - 130
    titles = [a for a in fig.layout.annotations if a.yanchor == "bottom" and a.yref == "paper"]
    assert len(titles) == 2
    for ann in titles:
        lines = ann.text.split("<br>")
        assert len(lines) <= 2 and ann.font.size >= style.tick_font
        share = 0.45                                                     # (1 - spacing) / 2
        assert max(len(line) for line in lines) * CHAR_EM * ann.font.size <= share * plot_px + 1, ann.text
    for name in ("xaxis", "xaxis2", "yaxis", "yaxis2"):
        axis = fig.layout[name]
        assert axis.type == "log"
        # Whole decades only (no 2-and-5 minor labels); a projector's short plot may skip some.
        assert (axis.dtick is not None and float(axis.dtick).is_integer() and axis.dtick >= 1
                and (axis.dtick == 1 or presentation)) or axis.tickvals is not None, name
    assert fig.layout.yaxis.exponentformat == "power"                    # 1e12 is 10^12, not "1T"


@pytest.mark.parametrize("presentation", [False, True])
def test_titles_fit_the_width_and_start_below_the_toolbar(presentation):
    style = Style(presentation)
    long = "Causal linear attention as an RNN: S_t = G_t ⊙ S_{t−1} + φ(k_t) v_tᵀ, and a few more words here"
    import plotly.graph_objects as go
    fig = finish(go.Figure(go.Scatter(x=[1, 2], y=[1, 2])), style, long, height=400)
    title = fig.layout.title
    assert len(title.text) * CHAR_EM * title.font.size <= NOMINAL_WIDTH_PX
    assert title.font.size >= style.font
    assert "more words" in title.text + (title.subtitle.text or "")     # nothing is lost
    assert title.pad.t >= (10 if presentation else 30)                  # normal mode: the toolbar sits above it


def test_head_overview_numbers_fit_their_cells():
    values = np.random.default_rng(1).uniform(0.5, 1, size=(6, 12))
    fig = fq.head_overview(values, metric_label="Map error (relative, Frobenius)", map_label="elu1", style=True)
    trace = fig.data[0]
    cell_px = (NOMINAL_WIDTH_PX - 130 - 90) / 12
    longest = max(len(t) for row in trace.text for t in row)
    assert longest * CHAR_EM * trace.textfont.size <= cell_px


def test_flop_claim_and_sweep_figures_keep_legends_below_the_plots(sweep):
    from explorer.ui import complexity_tab
    plot, claim = complexity_tab.render(sweep, presentation=False)
    assert plot.layout.legend.y < 0 and claim.layout.title.text


# --------------------------------------------------------------------------- the page (built, not served)

@pytest.fixture(scope="module")
def page():
    from explorer import ui
    demo = ui.build_app()
    return demo, [b for b in demo.blocks.values()]


def test_no_table_shows_placeholder_headers(page):
    import gradio as gr
    _, blocks = page
    tables = [b for b in blocks if isinstance(b, gr.Dataframe)]
    assert len(tables) >= 5
    for table in tables:
        assert table.value["headers"] != ["1", "2", "3"], table.elem_id


def test_text_box_submits_on_enter_and_says_so(page):
    import gradio as gr
    _, blocks = page
    text = next(b for b in blocks if isinstance(b, gr.Textbox) and b.elem_id == "text")
    assert text.lines == 1 and text.max_lines > 1          # gradio: Enter submits, Shift+Enter is a new line
    from explorer.ui import i18n
    for lang in i18n.LANGS:                                  # the placeholder is a key, in both languages
        placeholder = i18n.STRINGS[lang][text.placeholder.key]
        assert "Enter" in placeholder and "Shift+Enter" in placeholder, lang


def test_panel_shows_only_on_the_tabs_that_use_it(page):
    import gradio as gr
    from explorer import ui
    _, blocks = page
    tabs = {b.id: b for b in blocks if isinstance(b, gr.Tab)}
    using = {t for t, tab in tabs.items() if "uses-data" in (tab.elem_classes or [])}
    assert using == set(ui.PANEL_TABS) and {"complexity", "learn"} <= set(tabs) - using
    assert "#data-panel" in ui.launch_kwargs()["css"]


def test_presentation_goes_into_every_link():
    from explorer import ui
    q = "tab=maps&text=a+b&present=0"
    out = ui.with_present(True, q, "", "tab=state&t=3")
    assert out[1] == "" and "present=1" in out[0] and "text=a+b" in out[0] and "present=1" in out[2]
    assert "present=0" in ui.with_present(False, "tab=state&present=1")[0]


def test_learn_link_holds_every_control():
    from explorer.ui import learn_links
    from urllib.parse import parse_qs
    q = parse_qs(learn_links.learn_query(4, "5", 32, 70, 1, 8, 4, "favor_plus", "chosen layers", [1, 4], 1, 48,
                                           kind="luna", presentation=True))
    assert {k: v[0] for k, v in q.items()} == {
        "tab": "learn", "llayer": "4", "lhead": "5", "lm": "32", "steps": "70", "lseed": "1", "ntrain": "8",
        "nheld": "4", "hmap": "favor_plus", "hmode": "chosen layers", "hlayers": "1,4", "hk": "1", "hm": "48",
        "lkind": "luna", "lseeds": "3", "present": "1"}     # three training seeds by default


def test_hybrid_error_is_plain_text():
    import gradio as gr
    from explorer.ui import hybrid_panel
    with pytest.raises(gr.Error) as excinfo:
        hybrid_panel.run_hybrid(map_name="hedgehog", trained=None)
    message = str(excinfo.value.message if hasattr(excinfo.value, "message") else excinfo.value)
    assert "*" not in message and "Hedgehog" in message


# --------------------------------------------------------------------------- the docs' pictures

def screenshots_script():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "scripts" / "screenshots.py"
    spec = importlib.util.spec_from_file_location("screenshots", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_screenshots_refuse_timings_from_a_busy_machine(sweep):
    from explorer.ui import complexity_tab
    script = screenshots_script()
    plot, _ = complexity_tab.render(sweep, presentation=False)
    text = plot.layout.title.text + " " + (plot.layout.title.subtitle.text or "")

    class Page:               # what the script reads from the browser: the figure's title and note
        def evaluate(self, _js):
            return text
    title = script.figure_title(Page(), "#cx-plot")
    rate = script.measured_rate(title)
    assert rate == pytest.approx(round(sweep.matmul_gflops), abs=0.51)
    assert script.quiet_enough(150 / 2, 150) and not script.quiet_enough(150 / 2 - 1, 150)
    assert not script.quiet_enough(None, 150)                          # no rate printed: no picture
    assert script.timings_usable(title, rate) == ("disturbed" not in title.lower())
    disturbed, _ = complexity_tab.render(dataclasses.replace(sweep, disturbed=True, disturbance=["a test"]),
                                         presentation=False)
    assert not script.timings_usable(disturbed.layout.title.text + " " + (disturbed.layout.title.subtitle.text or ""),
                                     rate)
    assert "complexity" in script.TIMED and "complexity" in script.TABS
