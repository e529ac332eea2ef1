"""Corpus probe tab: a small text file, every map on every layer and head of every text.
Endpoint: ``/probe``.

The file is bounded before it is read (bytes), then as text (UTF-8, lines, characters per
line: ``views.probe.read_corpus``), and the whole run is priced by the cost model before the
model reads a line; a larger corpus belongs to ``python -m explorer probe``.
"""

from __future__ import annotations

import os

import gradio as gr

from .. import catalog
from ..catalog import PROBE_MAX_FILE_BYTES, PROBE_MAX_TEXT_CHARS, PROBE_MAX_TEXTS
from ..stopping import StopSignal
from ..text import Message, normal_lang, said, say
from . import common, downloads, i18n, server

# Registry names, as the command line takes them (a random map is drawn orthogonal).
PROBE_MAPS = ("elu1", "relu", "favor_plus", "trig_rff", "taylor2", "cosformer", "taylor1", "identity")
DEFAULT_MAPS = ("elu1", "favor_plus", "taylor2", "cosformer")
MAX_M = 1024


def _label(key: str):
    return i18n.engine_label(key)


def read_upload(path) -> str:
    """The uploaded file's text, refused (a ValueError with a message) when missing, too large
    or not UTF-8; its size is read before any of its bytes."""
    if not path:
        raise ValueError(Message("probe.err_no_file"))
    if not isinstance(path, (str, os.PathLike)):      # a file object from an older gradio: its name is the path
        path = getattr(path, "name", path)
    try:
        size = os.path.getsize(path)
    except (OSError, TypeError):
        raise ValueError(Message("probe.err_no_file")) from None
    if size > PROBE_MAX_FILE_BYTES:
        raise ValueError(Message("probe.err_bytes", size=f"{size:,}", cap=f"{PROBE_MAX_FILE_BYTES:,}"))
    with open(path, "rb") as handle:
        data = handle.read(PROBE_MAX_FILE_BYTES + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(Message("probe.err_encoding")) from None


def intro_text(lang: str = "en") -> str:
    return say("probe.intro", normal_lang(lang), texts=PROBE_MAX_TEXTS, chars=f"{PROBE_MAX_TEXT_CHARS:,}",
               kb=PROBE_MAX_FILE_BYTES // 1024)


def render(view, presentation=False, lang="en"):
    """The heads x maps heatmap of the probe, said in ``lang``."""
    if view is None:
        return None
    from ..figures.probe import probe_grid
    from ..views.probe import head_labels
    figure = probe_grid(view.grid, head_labels(view), [catalog.map_label(i) for i in view.maps],
                        Message(f"common.metric.{view.metric}"), texts=view.texts, style=presentation)
    return common.said_outputs(figure, normal_lang(lang))


@common.guarded
def run_probe(file=None, maps=DEFAULT_MAPS, metric="kl_mean", m=64, seed=0, presentation=False, lang="en",
              request: gr.Request = None, progress=gr.Progress()):
    """Probe the uploaded texts; returns (heatmap, summary table, status, CSV of the table)."""
    lang = normal_lang(lang)
    content = read_upload(file)
    common.import_engine()
    from ..measure import cost
    from ..views import probe as probe_views

    corpus = probe_views.read_corpus(content)
    stop = StopSignal(left=server.visitor_left(request), seconds=cost.LIMIT_SECONDS)
    progress(0.0, desc=say("probe.progress", lang))
    view = probe_views.probe_view(corpus, maps=list(maps or ()), metric=metric, m=m, seed=seed, should_stop=stop,
                                  progress=lambda f: progress(f, desc=say("probe.progress", lang)))
    csv = downloads.export_folder() / "probe.csv"
    view.table.to_csv(csv, index=False)
    status = [say("probe.done", lang, texts=view.texts, heads=len(view.heads), maps=len(view.maps),
                  rows=len(view.table))]
    status += [common.as_text(said(notice, lang)) for notice in view.notices]
    # (the figure and the table are said in ``lang`` by ``guarded``)
    return render(view, presentation), probe_views.summary_table(view), "\n\n".join(status), str(csv)


def build(presentation: gr.Checkbox, lang: gr.Radio | None = None):
    """The tab: the upload and its choices on the left, the heatmap and the summary on the right."""
    map_choices = [(i18n.map_choice(catalog.default_id(name))[0], name) for name in PROBE_MAPS]
    metric_choices = [i18n.metric_choice(key) for key in catalog.OVERVIEW_METRICS]
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=260):
            intro = gr.Markdown(intro_text("en"), elem_id="probe-intro")
            file = gr.File(label=_label("probe.file"), file_types=[".txt"], type="filepath", elem_id="probe-file")
            maps = gr.CheckboxGroup(map_choices, value=list(DEFAULT_MAPS), label=_label("probe.maps"),
                                    elem_id="probe-maps")
            metric = gr.Dropdown(metric_choices, value="kl_mean", label=_label("probe.metric"), elem_id="probe-metric")
            with gr.Row():
                m = gr.Number(64, precision=0, minimum=1, maximum=MAX_M, label=_label("probe.m"), elem_id="probe-m")
                seed = gr.Number(0, precision=0, minimum=0, maximum=catalog.MAX_SEED, label=_label("probe.seed"),
                                 elem_id="probe-seed")
            run = gr.Button(_label("probe.run"), variant="primary", elem_id="probe-run")
        with gr.Column(scale=4):
            status = gr.Markdown(_label("probe.start"), elem_id="probe-status")
            plot = gr.Plot(show_label=False, elem_id="probe-plot")
    summary = gr.Dataframe(label=_label("probe.summary"), interactive=False, elem_id="probe-summary",
                           # headed before the first run (gradio's placeholder would read "1 2 3")
                           headers=[say(key, "en") for key in ("common.map", "probe.col_cells", "probe.col_inf")])
    table_file = gr.File(label=_label("probe.table_file"), interactive=False, elem_id="probe-table")
    with_lang = [lang] if lang is not None else []
    if lang is not None:
        lang.change(intro_text, lang, intro, api_visibility="private", queue=False)
    run.click(run_probe, [file, maps, metric, m, seed, presentation] + with_lang, [plot, summary, status, table_file],
              api_name="probe", concurrency_limit=1, concurrency_id="probe")
    return run
