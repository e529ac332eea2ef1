"""Learned maps & hybrids tab: train Hedgehog or a LUNA-style map to imitate softmax, then
swap layers of the real model to linear attention. Endpoints: ``/learn`` and ``/hybrid``.

Training runs behind a progress bar with a live loss curve (the handler is a generator).
Numbers come from ``explorer.views.learn``; figures from ``explorer.figures.learn``; the
words from ``explorer/text/<lang>/learn.toml`` in the page's language. A trained or uploaded map is
this browser session's own: the maps and quality tabs of this session offer it on the
heads it was trained on, of the model it was trained on; no other session sees it.

The tab has its own model picker, offering what the data panel offers (the embedded MiniLM,
the packaged causal SmolLM2, a folder or Hub id where the server allows it); the layer and
head controls follow it, links carry it as ``model=``, and ``/learn`` takes it as ``model``
("" = the embedded MiniLM). The hybrids (part 2) and the shipped maps are MiniLM's only.
The hybrids' handler and figures are in ``hybrid_panel``; the tab's link and what it opens in
``learn_links``; what the parts share in ``learn_base``; what it says about a result in
``learn_words``. Figures, tables and words are built without a language (messages) and said in
the page's language by the handlers' guard.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from .. import catalog
from ..stopping import StopSignal
from ..text import Joined, Message, say, say_error
from . import common, downloads, i18n, server, validate
from . import source as source_panel
from .hybrid_panel import HYBRID_CHOICES, MODES, hybrid_summary, hybrid_views, render_hybrid, run_hybrid
from .learn_base import (HELDOUT_DEFAULT, LEARNED_LABELS, N_HEADS, N_LAYERS, _int, _lang, _learn_figures_and_views,
                         guarded_stream, headed_table)
from .learn_words import _seeds, learn_summary, map_status, ordering, scope  # noqa: F401 - ordering: tests read it here

ALL_HEADS = f"all {N_LAYERS * N_HEADS} heads"   # the head menu's value for "every head", whatever the model
PRETRAINED_LAYER = 2          # the embedded MiniLM's layer scripts/train_lecture_maps.py ships maps for
LEARN_OUTPUTS = 10            # LearnTab.learn_outputs
# The engine's (explorer.experiments.learning, views.learn), repeated so the tab builds before
# the engine is imported; a test holds them equal.
DEFAULT_SEEDS, MAX_SEEDS = 3, 8
COMPARISON_KEYS = ("map", "m", "kl", "kl_sd", "kl_median", "kl_median_sd", "entropy", "mono")


@dataclass
class LearnTab:
    layer: gr.Slider
    head: gr.Dropdown
    num_features: gr.Slider
    steps: gr.Slider
    seed: gr.Number
    train_count: gr.Slider
    heldout_count: gr.Slider
    kind: gr.Radio
    train: gr.Button
    stop: gr.Button
    shipped: gr.Button
    loss: gr.Plot
    summary: gr.Markdown
    table: gr.Dataframe
    comparison: gr.Plot
    tradeoff: gr.Plot
    heatmap: gr.Plot
    download: gr.File
    upload: gr.File
    view: gr.State
    trained: gr.State
    map_status: gr.Markdown
    hybrid_map: gr.Radio
    mode: gr.Radio
    layers: gr.CheckboxGroup
    budget: gr.Slider
    hybrid_m: gr.Slider
    hybrid_run: gr.Button
    cosine: gr.Plot
    drift: gr.Plot
    hybrid_table: gr.Dataframe
    hybrid_summary: gr.Markdown
    hybrid_view: gr.State
    query: gr.Textbox
    link: gr.Textbox
    lang: gr.components.Component
    model: gr.Dropdown
    seeds: gr.Slider
    train_texts: gr.Textbox
    heldout_texts: gr.Textbox
    linearize: object = None             # the Linearize section's controls, once the page adds it

    @property
    def linearize_controls(self) -> list:
        return list(self.linearize.controls) if self.linearize is not None else []

    @property
    def link_keys(self) -> list:
        """(component, query key, type) of every control the tab's link holds."""
        return [(self.layer, "llayer", int), (self.head, "lhead", str), (self.num_features, "lm", int),
                (self.steps, "steps", int), (self.seed, "lseed", int), (self.train_count, "ntrain", int),
                (self.heldout_count, "nheld", int), (self.hybrid_map, "hmap", str), (self.mode, "hmode", str),
                (self.layers, "hlayers", list), (self.budget, "hk", int), (self.hybrid_m, "hm", int),
                (self.kind, "lkind", str), (self.model, "model", str), (self.seeds, "lseeds", int)]

    @property
    def link_controls(self) -> list:
        return [component for component, _, _ in self.link_keys]

    @property
    def learn_controls(self) -> list:
        return [self.layer, self.head, self.num_features, self.steps, self.seed, self.train_count,
                self.heldout_count, self.kind]

    @property
    def learn_outputs(self) -> list:
        return [self.loss, self.summary, self.table, self.comparison, self.tradeoff, self.heatmap, self.download,
                self.view, self.trained, self.map_status]

    @property
    def hybrid_controls(self) -> list:
        return [self.hybrid_map, self.mode, self.layers, self.budget, self.hybrid_m, self.seed, self.heldout_count]

    @property
    def hybrid_outputs(self) -> list:
        return [self.cosine, self.drift, self.hybrid_table, self.hybrid_summary, self.hybrid_view]


N_LEARN_OUTPUTS = 10


# ---------------------------------------------------------------------------------------
# Rendering: results -> figures and text
# ---------------------------------------------------------------------------------------

def render_learn(view, presentation=False):
    """(loss curve, held-out comparison, trade-off plane, per-head KL ratio or None) for a
    LearnResult, their words messages (said at the edge in the page's language)."""
    if view is None:
        return None, None, None, None
    fl, lv = _learn_figures_and_views()
    where = scope(view)
    loss = None
    if view.losses:
        # Seeds that shared one training (the same start) share one line, named by all of them.
        groups: dict = {}
        for seed, curve in zip(view.seeds, view.losses_by_seed or [view.losses]):
            groups.setdefault(tuple(curve), []).append(seed)
        curves = list(groups)
        labels = [Message("learn.seed_legend" if len(seeds) == 1 else "learn.seeds_legend",
                          seed=seeds[0], seeds=_seeds(seeds))
                  for seeds in groups.values()]
        several = len(view.seeds) > 1
        loss = fl.loss_curve([step for c in curves for step in range(1, len(c) + 1)], [x for c in curves for x in c],
                             total_steps=view.steps,
                             seeds=[label for label, c in zip(labels, curves) for _ in c] if several else None,
                             title=Message("learn.loss_title_seeds" if several else "learn.loss_title_run",
                                           map=LEARNED_LABELS[view.kind], scope=where, m=view.num_features),
                             note=Message("learn.loss_note", count=view.train_count, seconds=f"{view.seconds:.1f}"),
                             style=presentation)
    rows = lv.labelled_rows(view.rows)
    many = view.kl_ratio.size > 1
    seeds = _seeds(view.seeds)
    if len(view.seeds) > 1:
        subtitle = (Message("learn.cmp_subtitle_boxes_seeds", count=len(view.seeds), seeds=seeds) if many
                    else Message("learn.cmp_subtitle_seeds", seeds=seeds))
    else:
        subtitle = Message("learn.cmp_subtitle_boxes") if many else ""
    comparison = fl.heldout_comparison(
        view.quality, rows, view.softmax_entropy,
        title=Message("learn.cmp_title_run", count=view.heldout_count, scope=where),
        subtitle=subtitle, style=presentation)
    tradeoff = fl.tradeoff_plane(rows, style=presentation)
    heatmap = None
    if many:
        labels = None if view.layer is None else [view.layer]
        heatmap = fl.kl_ratio_heatmap(view.kl_ratio, style=presentation, map_label=LEARNED_LABELS[view.kind],
                                      layer_labels=labels)
    return loss, comparison, tradeoff, heatmap


def empty_tables():
    """(comparison, hybrid) tables with their headers (messages) and no rows: what shows before a run."""
    comparison = [Message(f"learn.col_{key}", count=DEFAULT_SEEDS) for key in COMPARISON_KEYS]
    hybrid = [Message("learn.col_k"), Message("learn.col_kept"), Message("learn.col_linear", map="…"),
              Message("learn.col_cos_mean"), Message("learn.col_cos_min")]
    return headed_table(comparison), headed_table(hybrid)


def _export_folder() -> Path:
    return downloads.export_folder()


def _finished(view, trained, presentation):
    """Every learn output for a finished (trained or loaded) result, its words messages (the
    handler's guard says them in the page's language)."""
    _, lv = _learn_figures_and_views()
    loss, comparison, tradeoff, heatmap = render_learn(view, presentation)
    download = str(lv.save_map(view, _export_folder())) if view.origin == "trained" else gr.skip()
    if view.all_heads and view.model == catalog.EMBEDDED_MODEL:     # the hybrid runs on MiniLM only
        trained = {**(trained or {}), view.kind: view.feature_map}
        origin = view.origin if view.origin != "trained" else Message("learn.origin_trained", steps=view.steps)
        status = map_status(trained, origin)
    else:
        status = gr.skip()  # a one-head map cannot run a whole layer: keep what the hybrid had
    # The per-head ratio exists for several heads only: hidden for one, not an empty frame.
    heatmap = gr.update(value=heatmap, visible=heatmap is not None)
    return (loss if loss is not None else gr.skip(), learn_summary(view), lv.comparison_table(view),
            comparison, tradeoff, heatmap, download, view, trained, status)


# ---------------------------------------------------------------------------------------
# Handlers
# ---------------------------------------------------------------------------------------

# session -> stop flag of that session's training (the Stop button sets it)
_stops: dict[str, threading.Event] = {}


def _session(request):
    """The browser session's key (None outside a request: scripts and tests share one)."""
    return getattr(request, "session_hash", None)


def _kind(kind) -> str:
    if kind not in LEARNED_LABELS:
        raise ValueError(Message("learn.err_kind", choices=", ".join(LEARNED_LABELS), kind=repr(str(kind)[:40])))
    return kind


def own_texts(train_texts, heldout_texts, lang):
    """The two text boxes as lists (None: the built-in texts), checked (``validate.learn_texts``)
    with the refusal in ``lang``."""
    try:
        return validate.learn_texts(train_texts, "train_texts"), validate.learn_texts(heldout_texts, "heldout_texts")
    except ValueError as exc:
        raise ValueError(say_error(exc, lang)) from None


@guarded_stream
def run_learn(layer=2, head="3", num_features=64, steps=300, seed=0, train_count=40, heldout_count=HELDOUT_DEFAULT,
              kind="hedgehog", presentation=False, trained=None, lang="en", model: str = "", seeds=DEFAULT_SEEDS,
              train_texts: str = "", heldout_texts: str = "", request: gr.Request = None, progress=gr.Progress()):
    """Train Hedgehog or LUNA (one head or all) on the texts as ``model`` reads them ("" = the
    embedded all-MiniLM-L6-v2; "SmolLM2-135M"; a folder or Hub id where the server allows
    it), once for each of ``seeds`` seeds from ``seed``, and compare it with other maps on
    held-out texts (mean ± sd over seeds). A causal model's map is trained and judged
    against its causal softmax. Layer and head count within that model.

    ``train_texts`` / ``heldout_texts``: your own texts, one a line (at most 40 of at most
    2,000 characters; none in both); empty uses the built-in ones (the first
    ``train_count`` / ``heldout_count``).

    Yields the live loss curve while training, then (loss figure, summary, comparison
    table, comparison figure, trade-off figure, per-head KL ratio figure, trained map file
    (safetensors, the first seed's map), view, trained all-heads maps, hybrid map status).
    """
    fl, lv = _learn_figures_and_views()
    lang = _lang(lang)
    kind = _kind(kind)
    model = lv.check_model(model)        # an unknown or disallowed model: refused before loading
    own_train, own_heldout = own_texts(train_texts, heldout_texts, lang)
    all_heads = head == ALL_HEADS
    head_index = None if all_heads else _int(head, "head")
    key = _session(request) or "local"
    stop = _stops[key] = threading.Event()
    left = server.visitor_left(request)       # the visitor closed the page or the stream
    from ..measure import cost
    try:
        stream = lv.learn_stream(_int(layer, "layer"), head_index, _int(num_features, "num_features"),
                                 _int(steps, "steps"), _int(seed or 0, "seed"), _int(train_count, "train_count"),
                                 _int(heldout_count, "heldout_count"), all_heads=all_heads,
                                 should_stop=StopSignal(lambda: stop.is_set() or left(), cost.TRAINING_SECONDS),
                                 kind=kind, session=_session(request), model=model, seeds=_int(seeds, "seeds"),
                                 train_texts=own_train, heldout_texts=own_heldout)
        seed_order = []
        for item in stream:
            if isinstance(item, lv.LiveTraining):
                if item.losses:
                    seed = item.seeds[-1]
                    seed_order += [seed] if seed not in seed_order else []
                    message = Message("learn.live_seed" if item.seed_count > 1 else "learn.live", map=LEARNED_LABELS[kind],
                                      seed=seed, index=seed_order.index(seed) + 1, n=item.seed_count,
                                      step=item.steps[-1], total=item.total_steps, loss=f"{item.losses[-1]:.3f}")
                    if kind == "luna" and "Hedgehog" in item.message:
                        message = Joined([message, " (", Message("learn.rival"), ")"])
                else:
                    message = Message("learn.starting")
                progress(item.fraction, desc=say(message, lang))      # the bar's words: said here
                fig = fl.loss_curve(item.steps, item.losses, total_steps=item.total_steps, live=True,
                                    seeds=item.seeds if item.seed_count > 1 else None,
                                    style=presentation) if item.losses else gr.skip()
                yield (fig, Joined(["⏳ ", message]), *(gr.skip() for _ in range(N_LEARN_OUTPUTS - 2)))
            else:
                yield _finished(item, trained, presentation)
    except lv.Stopped:
        yield (gr.skip(), Message("learn.stopped"), *(gr.skip() for _ in range(N_LEARN_OUTPUTS - 2)))
    except ValueError as exc:       # a refusal (texts, cost, bounds): said in the page's language
        raise ValueError(say_error(exc, lang)) from None
    finally:
        if _stops.get(key) is stop:
            del _stops[key]


def stop_learn(request: gr.Request = None):
    """Stop this session's training at its next step."""
    flag = _stops.get(_session(request) or "local")
    if flag is not None:
        flag.set()


@common.guarded
def load_trained(file, layer=2, head="3", heldout_count=HELDOUT_DEFAULT, presentation=False, trained=None, lang="en",
                 model: str = "", seeds=DEFAULT_SEEDS, heldout_texts: str = "", request: gr.Request = None,
                 progress=gr.Progress()):
    """Load a saved map (.safetensors: Hedgehog or LUNA) and show its held-out comparison on
    ``model`` (a file that names another model is refused); an all-heads MiniLM map becomes
    the hybrid's map of its kind. Same outputs as ``run_learn``. The file's size, header and
    tensor shapes are checked before it is read."""
    if file is None:
        return tuple(gr.skip() for _ in range(N_LEARN_OUTPUTS))
    _, lv = _learn_figures_and_views()
    model = lv.check_model(model)
    path = Path(file if isinstance(file, str) else file.name)
    fmap = lv.load_map(path)
    head_index = 0 if head == ALL_HEADS else _int(head, "head")
    _, own_heldout = own_texts("", heldout_texts, _lang(lang))
    view = lv.evaluate_map(fmap, _int(layer, "layer"), head_index, _int(heldout_count, "heldout_count"),
                           origin=path.name[:80], progress=lambda f, msg: progress(f), session=_session(request),
                           model=model, seeds=_int(seeds, "seeds"), heldout_texts=own_heldout)
    return _finished(view, trained, presentation)


@common.guarded
def show_shipped(kind="hedgehog", heldout_count=HELDOUT_DEFAULT, presentation=False, trained=None, lang="en", model: str = "",
                 seeds=DEFAULT_SEEDS, heldout_texts: str = "", layer=None, request: gr.Request = None,
                 progress=gr.Progress()):
    """The held-out comparison of the map shipped for every head of ``model``'s ``layer`` (no
    training; ``layer`` None: the layer its maps ship for); it becomes this session's trained
    map of its kind on that layer. A layer or model no map ships for is refused in one sentence
    that names the layers that have one."""
    _, lv = _learn_figures_and_views()
    _, own_heldout = own_texts("", heldout_texts, _lang(lang))
    kind = _kind(kind)
    where = lv.shipped_layers(kind, model)
    layer = where[0] if layer is None and where else (PRETRAINED_LAYER if layer is None else _int(layer, "layer"))
    view = lv.pretrained_result(kind, layer, _int(heldout_count, "heldout_count"), session=_session(request),
                                model=model, seeds=_int(seeds, "seeds"), heldout_texts=own_heldout)
    if view is None:
        raise ValueError(Message("learn.err_no_shipped" if where else "learn.err_no_shipped_model",
                                 kind=LEARNED_LABELS[kind], layer=layer, model=lv.model_name(lv.model_argument(model)),
                                 layers=", ".join(map(str, where))))
    return _finished(view, trained, presentation)


def head_choices(layers: int, heads: int, lang="en") -> list[tuple[str, str]]:
    """The head menu of a model with ``layers`` x ``heads``: each head, then all of them."""
    return [(str(h), str(h)) for h in range(heads)] + [(say("learn.all_heads", _lang(lang), count=layers * heads),
                                                         ALL_HEADS)]


def follow_model(model, layer, head, lang="en"):
    """The layer slider and the head menu narrowed to the chosen model's layers and heads
    (the data panel's ``follow_model``, with the learn tab's "all heads" entry)."""
    shape = source_panel.shape_of(model)
    if shape is None:
        return gr.skip(), gr.skip()
    layers, heads = shape
    layer = min(int(layer or 0), layers - 1)
    keep = head == ALL_HEADS or (str(head).isdigit() and int(head) < heads)
    return (gr.update(maximum=layers - 1, value=layer),
            gr.update(choices=head_choices(layers, heads, lang), value=head if keep else str(min(3, heads - 1))))


def learn_model_choices() -> list[tuple]:
    """The data panel's model entries, less "other…": here a folder or Hub id is typed into
    the menu itself, where the server allows one."""
    return [choice for choice in source_panel.panel_model_choices() if choice[1] != source_panel.OTHER_MODEL]


# ---------------------------------------------------------------------------------------
# Layout and wiring
# ---------------------------------------------------------------------------------------

def build(presentation: gr.Checkbox, lang=None) -> LearnTab:
    """The tab. ``lang`` is the page's language switch (figures and text follow it)."""
    if lang is None:                      # built alone (tests): English
        lang = gr.Textbox("en", visible=False)
    with gr.Accordion(i18n.label("learn_help"), open=False):
        gr.Markdown(i18n.label("learn_help_text"))
    gr.Markdown(i18n.label("learn_part1"))
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            kind = gr.Radio([(name, key) for key, name in LEARNED_LABELS.items()], value="hedgehog",
                            label=i18n.label("learn_kind"), info=i18n.label("learn_kind_info"), elem_id="learn-kind")
            model = gr.Dropdown(learn_model_choices(), value=catalog.EMBEDDED_MODEL, label=i18n.label("panel_model"),
                                info=i18n.label("panel_model_info"), elem_id="learn-model",
                                allow_custom_value=source_panel.free_models_allowed(),
                                filterable=source_panel.free_models_allowed())
            # Built as wide as the largest built-in model, then narrowed to the chosen one
            # (follow_model), so that a link's layer of the causal model survives its restore.
            layer = gr.Slider(0, source_panel.MAX_LAYER, value=2, step=1, label=i18n.label("panel_layer"),
                              elem_id="learn-layer")
            head = gr.Dropdown([(str(h), str(h)) for h in range(source_panel.MAX_HEAD + 1)]
                               + [(i18n.label("learn_all_heads"), ALL_HEADS)],
                               value="3", label=i18n.label("panel_head"),
                               elem_id="learn-head", info=i18n.label("learn_head_info"))
            num_features = gr.Slider(2, 256, value=64, step=2, label=i18n.label("features_m"), info=i18n.label("learn_m_info"),
                                     elem_id="learn-m")
            steps = gr.Slider(10, 1000, value=300, step=10, label=i18n.label("learn_steps"), elem_id="learn-steps")
            seed = gr.Number(0, precision=0, minimum=0, maximum=catalog.MAX_SEED, label=i18n.label("seed"), elem_id="learn-seed")
            seeds = gr.Slider(1, MAX_SEEDS, value=DEFAULT_SEEDS, step=1, label=i18n.label("learn_seeds"),
                              info=i18n.label("learn_seeds_info"), elem_id="learn-seeds")
            with gr.Accordion(i18n.label("learn_texts"), open=False):
                train_count = gr.Slider(1, 40, value=40, step=1, label=i18n.label("learn_train_count"))
                heldout_count = gr.Slider(1, 16, value=HELDOUT_DEFAULT, step=1, label=i18n.label("learn_heldout_count"))
                # Each box's size is bounded again in validate.learn_texts, with a sentence.
                box_chars = catalog.LEARN_MAX_TEXTS * (catalog.LEARN_MAX_TEXT_CHARS + 1)
                train_texts = gr.Textbox("", lines=3, max_lines=8, max_length=box_chars,
                                         label=i18n.label("learn_own_train"), info=i18n.label("learn_own_info"),
                                         elem_id="learn-train-texts")
                heldout_texts = gr.Textbox("", lines=3, max_lines=8, max_length=box_chars,
                                           label=i18n.label("learn_own_heldout"), elem_id="learn-heldout-texts")
            with gr.Row():
                train = gr.Button(i18n.label("learn_train"), variant="primary", elem_id="learn-train")
                stop = gr.Button(i18n.label("learn_stop"), variant="stop", elem_id="learn-stop")
            shipped = gr.Button(i18n.label("learn_shipped"), size="sm", elem_id="learn-shipped")
        with gr.Column(scale=4):
            summary = gr.Markdown(label=i18n.label("learn_summary"), elem_id="learn-summary")
            loss = gr.Plot(label=i18n.label("learn_loss"), show_label=False, elem_id="learn-loss")
    empty_comparison, empty_hybrid = empty_tables()
    table = gr.Dataframe(empty_comparison, label=i18n.label("learn_table"), interactive=False, elem_id="learn-table")
    comparison = gr.Plot(label=i18n.label("learn_comparison"), show_label=False, elem_id="learn-comparison")
    with gr.Row(equal_height=False):
        tradeoff = gr.Plot(label=i18n.label("learn_tradeoff"), show_label=False, elem_id="learn-tradeoff")
        heatmap = gr.Plot(label=i18n.label("learn_heatmap"), show_label=False, elem_id="learn-heatmap", visible=False)
    with gr.Row():
        # No fixed height: the boxes size to their content (a fixed one clipped the upload box).
        download = gr.File(label=i18n.label("learn_download"), interactive=False,
                           elem_id="learn-download")
        upload = gr.File(label=i18n.label("learn_upload"), file_types=[".safetensors"], type="filepath",
                         elem_id="learn-upload")

    gr.Markdown(i18n.label("learn_part2"))
    trained_md = gr.Markdown(i18n.label("learn_status_none"), label=i18n.label("learn_map_status"),
                             elem_id="learn-map-status")
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            hybrid_map = gr.Radio(HYBRID_CHOICES, value="elu1", label=i18n.label("hybrid_map"), info=i18n.label("hybrid_map_info"),
                                  elem_id="hybrid-map")
            mode = gr.Radio([(i18n.label("hybrid_mode_layers"), MODES[0]), (i18n.label("hybrid_mode_greedy"), MODES[1])],
                            value="greedy", label=i18n.label("hybrid_mode"), elem_id="hybrid-mode")
            layers = gr.CheckboxGroup(list(range(N_LAYERS)), value=[2, 3], label=i18n.label("hybrid_layers"),
                                      elem_id="hybrid-layers")
            budget = gr.Slider(0, 3, value=2, step=1, label=i18n.label("hybrid_k"), elem_id="hybrid-k")
            hybrid_m = gr.Slider(2, 256, value=64, step=2, label=i18n.label("hybrid_m"), elem_id="hybrid-m")
            hybrid_run = gr.Button(i18n.label("hybrid_run"), variant="primary", elem_id="hybrid-run")
        with gr.Column(scale=4):
            hybrid_summary_md = gr.Markdown(label=i18n.label("hybrid_summary"), elem_id="hybrid-summary")
            cosine = gr.Plot(label=i18n.label("hybrid_cosine"), show_label=False, elem_id="hybrid-cosine")
    drift = gr.Plot(label=i18n.label("hybrid_drift"), show_label=False, elem_id="hybrid-drift")
    hybrid_table = gr.Dataframe(empty_hybrid, label=i18n.label("hybrid_table"), interactive=False,
                                elem_id="hybrid-table")
    with gr.Row():
        export = gr.Button(i18n.label("export_learn"), size="sm", elem_id="learn-export")
        files = gr.File(label=i18n.label("downloads"), file_count="multiple", interactive=False, height=120)
        link = common.link_box()
    query = gr.Textbox(visible=False, elem_id="learn-query")

    tab = LearnTab(layer, head, num_features, steps, seed, train_count, heldout_count, kind, train, stop, shipped,
                   loss, summary, table, comparison, tradeoff, heatmap, download, upload, gr.State(None),
                   gr.State(None), trained_md, hybrid_map, mode, layers, budget, hybrid_m, hybrid_run, cosine, drift,
                   hybrid_table, hybrid_summary_md, gr.State(None), query, link, lang, model, seeds, train_texts,
                   heldout_texts)

    # The layer and head controls follow the model (their "all heads" label the language too).
    for control in (model, lang):
        control.change(follow_model, [model, layer, head, lang], [layer, head], queue=False,
                       api_visibility="private")
    # Training holds both cores for a while: one at a time for the whole server.
    training = train.click(run_learn, tab.learn_controls + [presentation, tab.trained, lang, model, seeds, train_texts,
                                                            heldout_texts],
                           tab.learn_outputs, api_name="learn", concurrency_limit=1, concurrency_id="learn-train")
    # The link holds the controls (a link restores them; training stays a button press):
    # wire_link, once the page has added the Linearize section below the tab.
    # The flag ends the worker thread at its next step; cancelling ends the event in the page.
    stop.click(stop_learn, None, None, cancels=[training], api_visibility="private", queue=False)
    upload.upload(load_trained, [upload, layer, head, heldout_count, presentation, tab.trained, lang, model, seeds,
                                 heldout_texts],
                  tab.learn_outputs, api_visibility="private", concurrency_limit=1, concurrency_id="learn-train")
    shipped.click(show_shipped, [kind, heldout_count, presentation, tab.trained, lang, model, seeds, heldout_texts,
                                 layer],
                  tab.learn_outputs,
                  api_visibility="private", concurrency_limit=1, concurrency_id="learn-train")
    # All heads at once is heavy: suggest fewer steps when it is chosen.
    head.input(lambda h: gr.update(value=150) if h == ALL_HEADS else gr.skip(), head, steps,
               api_visibility="private")
    hybrid_run.click(run_hybrid, tab.hybrid_controls + [presentation, tab.trained, lang, model], tab.hybrid_outputs,
                     api_name="hybrid", concurrency_limit=1, concurrency_id="learn-hybrid")

    def restyle(flag, view, hview, language, trained):
        """The same views drawn again for the mode and said in the page's language: nothing is
        measured again."""
        figs = (*render_learn(view, bool(flag)), *render_hybrid(hview, bool(flag)))
        _, lv = _learn_figures_and_views()
        blank_comparison, blank_hybrid = empty_tables()
        texts = (learn_summary(view) if view is not None else gr.skip(),
                 lv.comparison_table(view) if view is not None else blank_comparison,
                 hybrid_views().hybrid_table(hview) if hview is not None else blank_hybrid,
                 hybrid_summary(hview) if hview is not None else gr.skip(),
                 map_status(trained) if trained else gr.skip())
        return common.said_outputs((*(gr.skip() if f is None else f for f in figs), *texts), _lang(language))

    # Presentation mode and the language redraw what is drawn; the page's own JS toggle is wired in ui/__init__.
    # (presentation on a click only: a link's present=1 is read by the draw itself.)
    for event in (presentation.input, lang.change):
        event(restyle, [presentation, tab.view, tab.hybrid_view, lang, tab.trained],
              [loss, comparison, tradeoff, heatmap, cosine, drift, summary, table, hybrid_table, hybrid_summary_md,
               trained_md],
              api_visibility="private")

    @common.guarded
    def export_learn(view, hview, presentation, language):
        _, lv = _learn_figures_and_views()
        language = _lang(language)
        loss_fig, comparison_fig, tradeoff_fig, heatmap_fig = render_learn(view, presentation)
        cosine_fig, drift_fig = render_hybrid(hview, presentation)
        tables = {}
        if view is not None:
            tables.update(comparison=lv.comparison_table(view), per_head=lv.per_head_table(view),
                          loss=lv.loss_table(view) if view.losses else None)
        if hview is not None:
            tables.update(hybrid=hybrid_views().hybrid_table(hview), drift=hybrid_views().drift_table(hview))
        # The files are written here, before the guard says the outputs: said in the page's language first.
        figures = {"loss": loss_fig, "heldout": comparison_fig, "tradeoff": tradeoff_fig, "kl-ratio": heatmap_fig,
                   "hybrid-cosine": cosine_fig, "hybrid-drift": drift_fig}
        return downloads.export_files("learn", common.said_outputs(figures, language),
                                      common.said_outputs(tables, language),
                                      provenance=lv.run_provenance(view) if view is not None else None)

    export.click(export_learn, [tab.view, tab.hybrid_view, presentation, lang], files, api_visibility="private",
                 concurrency_limit=1, concurrency_id="export")
    return tab
