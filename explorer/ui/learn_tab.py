"""Learned maps & hybrids tab: train Hedgehog to imitate softmax, then swap layers of the
real model to linear attention. Endpoints: ``/learn`` and ``/hybrid``.

Training runs behind a progress bar with a live loss curve (the handler is a generator).
Numbers come from ``explorer.views.learn``; figures from ``explorer.figures.learn``.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from .. import catalog
from . import common, i18n

N_LAYERS, N_HEADS, _ = catalog.EMBEDDED_SHAPE
ALL_HEADS = f"all {N_LAYERS * N_HEADS} heads"
HYBRID_CHOICES = [(label, name) for name, label in catalog.HYBRID_MAP_LABELS.items()]
MODES = ["chosen layers", "greedy"]
NO_MAP_TEXT = (f"No trained Hedgehog yet. Train \"{ALL_HEADS}\" above (one head is not enough: a linear layer "
               "needs a map for each of its heads), or load a saved all-heads map.")
NO_MAP = f"**Hedgehog (trained):** {NO_MAP_TEXT[0].lower()}{NO_MAP_TEXT[1:]}"

HELP = f"""
**Part 1 — learned feature maps (Hedgehog).** φ(x) = [softmax(Wx′+b), softmax(−Wx′−b)], W starting
at the identity, trained with Adam so that its attention rows match the model's softmax rows. The
loss is the **row cross-entropy** −Σⱼ Aᵢⱼ log Âᵢⱼ, which is KL(A‖Â) plus the entropy of A, so it
levels off above zero. Training uses `assets/texts/train.txt`; every number in the comparison comes
from the **held-out texts only** (`heldout.txt`, disjoint from training). FAVOR+ gets the same m as
Hedgehog; Taylor-2's m is fixed by d (1 + d + d(d+1)/2).
One head trains in seconds; {ALL_HEADS} train jointly (fewer steps, e.g. 150, take a minute or two).
Download the trained map to reuse it in a talk, and load it back with the upload box.

**Part 2 — hybrid models.** Replace the attention of some layers of the real model by kernel
attention and compare its sentence embeddings (cosine) and attention maps (drift) to the original.
*Greedy* starts all-linear and adds back, one at a time, the softmax layer that helps most.

**Part 3 — the sliding-window hybrid** (exact softmax within a window of w keys, a linear kernel
outside) is the map *sliding window* in the **Attention maps** tab.
"""


def _engine():
    """(figures_learned, learn_views), imported on first use: see common.import_engine."""
    common.import_engine()
    from ..figures import learn as figures_learned
    from ..views import learn as learn_views
    return figures_learned, learn_views


def guarded_stream(fn):
    """``common.guarded`` for generator handlers: their errors surface while iterating,
    after a plain wrapper has already returned."""
    end = object()

    def step(gen):
        return next(gen, end)
    step.__name__ = fn.__name__   # what the server log names when something unexpected fails
    step = common.guarded(step)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            while (item := step(gen)) is not end:
                yield item
        finally:
            gen.close()     # a cancelled event closes us: close the inner generator (stops training)
    return wrapper


@dataclass
class LearnTab:
    layer: gr.Slider
    head: gr.Dropdown
    num_features: gr.Slider
    steps: gr.Slider
    seed: gr.Number
    train_count: gr.Slider
    heldout_count: gr.Slider
    train: gr.Button
    stop: gr.Button
    loss: gr.Plot
    summary: gr.Markdown
    table: gr.Dataframe
    comparison: gr.Plot
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

    @property
    def link_keys(self) -> list:
        """(component, query key, type) of every control the tab's link holds."""
        return [(self.layer, "llayer", int), (self.head, "lhead", str), (self.num_features, "lm", int),
                (self.steps, "steps", int), (self.seed, "lseed", int), (self.train_count, "ntrain", int),
                (self.heldout_count, "nheld", int), (self.hybrid_map, "hmap", str), (self.mode, "hmode", str),
                (self.layers, "hlayers", list), (self.budget, "hk", int), (self.hybrid_m, "hm", int)]

    @property
    def link_controls(self) -> list:
        return [component for component, _, _ in self.link_keys]

    @property
    def learn_controls(self) -> list:
        return [self.layer, self.head, self.num_features, self.steps, self.seed, self.train_count,
                self.heldout_count]

    @property
    def learn_outputs(self) -> list:
        return [self.loss, self.summary, self.table, self.comparison, self.heatmap, self.download, self.view,
                self.trained, self.map_status]

    @property
    def hybrid_controls(self) -> list:
        return [self.hybrid_map, self.mode, self.layers, self.budget, self.hybrid_m, self.seed, self.heldout_count]

    @property
    def hybrid_outputs(self) -> list:
        return [self.cosine, self.drift, self.hybrid_table, self.hybrid_summary, self.hybrid_view]


# ---------------------------------------------------------------------------------------
# Rendering: results -> figures and text
# ---------------------------------------------------------------------------------------

def render_learn(view, presentation=False):
    """(loss curve, held-out comparison, per-head KL ratio or None) for a LearnResult."""
    if view is None:
        return None, None, None
    fl, _ = _engine()
    loss = None
    if view.losses:
        loss = fl.loss_curve(range(1, len(view.losses) + 1), view.losses, total_steps=view.steps,
                             title=f"Training loss · {view.scope}, m = {view.num_features}",
                             note=f"{view.train_count} training texts · {view.seconds:.1f} s", style=presentation)
    comparison = fl.heldout_comparison(
        view.quality, view.rows, view.softmax_entropy,
        title=f"Held-out texts only ({view.heldout_count}) · {view.scope}",
        subtitle="each box: the spread over heads, one point per head" if view.all_heads else "",
        style=presentation)
    heatmap = fl.kl_ratio_heatmap(view.kl_ratio, style=presentation) if view.all_heads else None
    return loss, comparison, heatmap


def render_hybrid(view, presentation=False):
    if view is None:
        return None, None
    fl, _ = _engine()
    cosine = fl.hybrid_cosine(view.path, view.n_layers, view.map_label, style=presentation)
    drift = fl.hybrid_drift(view.drift, view.linear_layers, view.map_label, style=presentation,
                            title=f"Attention drift per layer · linear: {', '.join(map(str, view.linear_layers)) or 'none'}")
    return cosine, drift


def learn_summary(view) -> str:
    best = min(view.rows, key=lambda r: r["kl"])
    if view.origin == "trained":
        source = (f"Trained on **{view.train_count} training texts** for {view.steps} steps "
                  f"({view.seconds:.1f} s, seed {view.seed}); loss: row cross-entropy, "
                  f"{view.losses[0]:.3f} → {view.losses[-1]:.3f} nats.")
    else:
        source = f"Loaded from **{view.origin}** (no training curve)."
    return (f"{source} Evaluated on **{view.heldout_count} held-out texts only**, {view.scope}. "
            f"Closest to softmax: **{best['map']}** (KL {best['kl']:.3f} nats; softmax entropy "
            f"{view.softmax_entropy:.2f} nats).")


def map_status(fmap, origin: str) -> str:
    if fmap is None:
        return NO_MAP
    return (f"**Hedgehog (trained):** ready — {N_LAYERS * N_HEADS} heads, m = {fmap.num_features} ({origin}). "
            "Choose it below.")


def _export_folder() -> Path:
    return common.export_folder()


def _finished(view, trained, presentation):
    """Every learn output for a finished (trained or loaded) result."""
    _, lv = _engine()
    loss, comparison, heatmap = render_learn(view, presentation)
    download = str(lv.save_map(view, _export_folder())) if view.origin == "trained" else gr.skip()
    if view.all_heads:
        trained = view.feature_map
        status = map_status(trained, view.origin if view.origin != "trained" else
                            f"trained here, {view.steps} steps")
    else:
        status = gr.skip()  # a one-head map cannot run a whole layer: keep what the hybrid had
    return (loss if loss is not None else gr.skip(), learn_summary(view), lv.comparison_table(view), comparison,
            heatmap, download, view, trained, status)


# ---------------------------------------------------------------------------------------
# Handlers
# ---------------------------------------------------------------------------------------

# session -> stop flag of that session's training (the Stop button sets it)
_stops: dict[str, threading.Event] = {}


def _session(request) -> str:
    return getattr(request, "session_hash", None) or "api"


@guarded_stream
def run_learn(layer=2, head="3", num_features=64, steps=300, seed=0, train_count=40, heldout_count=16,
              presentation=False, trained=None, request: gr.Request = None, progress=gr.Progress()):
    """Train Hedgehog (one head or all) and compare it with fixed maps on held-out texts.

    Yields the live loss curve while training, then (loss figure, summary, comparison
    table, comparison figure, per-head KL ratio figure, trained map file, view, trained map,
    hybrid map status).
    """
    fl, lv = _engine()
    all_heads = head == ALL_HEADS
    head_index = None if all_heads else _int(head, "head")
    stop = _stops[_session(request)] = threading.Event()
    stream = lv.learn_stream(_int(layer, "layer"), head_index, _int(num_features, "num_features"),
                             _int(steps, "steps"), _int(seed or 0, "seed"), _int(train_count, "train_count"),
                             _int(heldout_count, "heldout_count"), all_heads=all_heads, should_stop=stop.is_set)
    try:
        for item in stream:
            if isinstance(item, lv.LiveTraining):
                progress(item.fraction, desc=item.message)
                fig = fl.loss_curve(item.steps, item.losses, total_steps=item.total_steps, live=True,
                                    style=presentation) if item.losses else gr.skip()
                yield (fig, f"⏳ {item.message}", *(gr.skip() for _ in range(7)))
            else:
                yield _finished(item, trained, presentation)
    except lv.Stopped:
        yield (gr.skip(), "⏹ Training stopped; nothing was kept. Press Train to start again.",
               *(gr.skip() for _ in range(7)))
    finally:
        if _stops.get(_session(request)) is stop:
            del _stops[_session(request)]


def stop_learn(request: gr.Request = None):
    """Stop this session's training at its next step."""
    flag = _stops.get(_session(request))
    if flag is not None:
        flag.set()


@common.guarded
def load_trained(file, layer=2, head="3", heldout_count=16, presentation=False, trained=None,
                 progress=gr.Progress()):
    """Load a saved Hedgehog (.pt) and show its held-out comparison; an all-heads map
    becomes the hybrid's Hedgehog. Same outputs as ``run_learn``."""
    if file is None:
        return tuple(gr.skip() for _ in range(9))
    _, lv = _engine()
    path = Path(file if isinstance(file, str) else file.name)
    fmap = lv.load_map(path)
    head_index = 0 if head == ALL_HEADS else _int(head, "head")
    view = lv.evaluate_map(fmap, _int(layer, "layer"), head_index, _int(heldout_count, "heldout_count"),
                           origin=path.name, progress=lambda f, msg: progress(f, desc=msg))
    return _finished(view, trained, presentation)


@common.guarded
def run_hybrid(map_name="elu1", mode="greedy", layers=(2, 3), budget=2, num_features=64, seed=0, heldout_count=16,
               presentation=False, trained=None, progress=gr.Progress()):
    """Make some layers of the model linear and measure the cost.

    Returns (cosine figure, drift figure, table of configurations, summary, view).
    """
    _, lv = _engine()
    if mode not in MODES:
        raise gr.Error(f"Mode must be one of {', '.join(MODES)}.", print_exception=False)
    if map_name == "hedgehog" and trained is None:
        raise gr.Error(NO_MAP_TEXT, title="No trained map", print_exception=False)
    chosen = "greedy" if mode == "greedy" else [_int(i, "layers") for i in (layers or [])]
    if chosen != "greedy" and not chosen:
        raise gr.Error("Tick at least one layer to make linear, or choose greedy.", print_exception=False)
    view = lv.hybrid_view(map_name, chosen, _int(budget, "budget"), trained_map=trained,
                          num_features=_int(num_features, "num_features"), seed=_int(seed or 0, "seed"),
                          heldout_count=_int(heldout_count, "heldout_count"),
                          progress=lambda f, msg: progress(f, desc=msg))
    cosine, drift = render_hybrid(view, presentation)
    kept = ", ".join(map(str, view.kept_softmax)) or "none"
    summary = (f"{view.map_label} in layers **{', '.join(map(str, view.linear_layers)) or 'none'}**, softmax kept in "
               f"**{kept}**: mean embedding cosine to the original **{view.cosine_mean:.4f}** (worst text "
               f"{view.cosine_min:.4f}) over {view.n_texts} held-out texts · {view.seconds:.1f} s.")
    return cosine, drift, lv.hybrid_table(view), summary, view


def learn_query(layer=2, head="3", num_features=64, steps=300, seed=0, train_count=40, heldout_count=16,
                hybrid_map="elu1", mode="greedy", layers=(2, 3), budget=2, hybrid_m=64, presentation=False) -> str:
    """The tab's controls as the query string of its link (in the order of ``LearnTab.link_keys``)."""
    return common.query_string({
        "tab": "learn", "llayer": layer, "lhead": head, "lm": num_features, "steps": steps, "lseed": seed,
        "ntrain": train_count, "nheld": heldout_count, "hmap": hybrid_map, "hmode": mode,
        "hlayers": list(layers or []), "hk": budget, "hm": hybrid_m, "present": bool(presentation)})


def _int(value, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a whole number, got {value!r}") from None


# ---------------------------------------------------------------------------------------
# Layout and wiring
# ---------------------------------------------------------------------------------------

def build(presentation: gr.Checkbox) -> LearnTab:
    with gr.Accordion(i18n.label("learn_help"), open=False):
        gr.Markdown(HELP)
    gr.Markdown(i18n.label("learn_part1"))
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            layer = gr.Slider(0, N_LAYERS - 1, value=2, step=1, label=i18n.label("panel_layer"), elem_id="learn-layer")
            head = gr.Dropdown([str(h) for h in range(N_HEADS)] + [ALL_HEADS], value="3", label=i18n.label("panel_head"),
                               elem_id="learn-head", info=i18n.label("learn_head_info"))
            num_features = gr.Slider(2, 256, value=64, step=2, label=i18n.label("features_m"), info=i18n.label("learn_m_info"),
                                     elem_id="learn-m")
            steps = gr.Slider(10, 1000, value=300, step=10, label=i18n.label("learn_steps"), elem_id="learn-steps")
            seed = gr.Number(0, precision=0, minimum=0, maximum=catalog.MAX_SEED, label=i18n.label("seed"), elem_id="learn-seed")
            with gr.Accordion(i18n.label("learn_texts"), open=False):
                train_count = gr.Slider(1, 40, value=40, step=1, label=i18n.label("learn_train_count"))
                heldout_count = gr.Slider(1, 16, value=16, step=1, label=i18n.label("learn_heldout_count"))
            with gr.Row():
                train = gr.Button(i18n.label("learn_train"), variant="primary", elem_id="learn-train")
                stop = gr.Button(i18n.label("learn_stop"), variant="stop", elem_id="learn-stop")
        with gr.Column(scale=4):
            summary = gr.Markdown(label=i18n.label("learn_summary"), elem_id="learn-summary")
            loss = gr.Plot(label=i18n.label("learn_loss"), show_label=False, elem_id="learn-loss")
    table = gr.Dataframe(label=i18n.label("learn_table"), interactive=False,
                         headers=["map", "features m", "held-out KL (nats)", "entropy (nats)",
                                  "monotonicity (Spearman ρ)"],
                         elem_id="learn-table")
    comparison = gr.Plot(label=i18n.label("learn_comparison"), show_label=False, elem_id="learn-comparison")
    heatmap = gr.Plot(label=i18n.label("learn_heatmap"), show_label=False, elem_id="learn-heatmap")
    with gr.Row():
        # No fixed height: the boxes size to their content (a fixed one clipped the upload box).
        download = gr.File(label=i18n.label("learn_download"), interactive=False,
                           elem_id="learn-download")
        upload = gr.File(label=i18n.label("learn_upload"), file_types=[".pt"], type="filepath",
                         elem_id="learn-upload")

    gr.Markdown(i18n.label("learn_part2"))
    trained_md = gr.Markdown(NO_MAP, label=i18n.label("learn_map_status"), elem_id="learn-map-status")
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            hybrid_map = gr.Radio(HYBRID_CHOICES, value="elu1", label=i18n.label("hybrid_map"), info=i18n.label("hybrid_map_info"),
                                  elem_id="hybrid-map")
            mode = gr.Radio(MODES, value="greedy", label=i18n.label("hybrid_mode"), elem_id="hybrid-mode")
            layers = gr.CheckboxGroup(list(range(N_LAYERS)), value=[2, 3], label=i18n.label("hybrid_layers"),
                                      elem_id="hybrid-layers")
            budget = gr.Slider(0, 3, value=2, step=1, label=i18n.label("hybrid_k"), elem_id="hybrid-k")
            hybrid_m = gr.Slider(2, 256, value=64, step=2, label=i18n.label("hybrid_m"), elem_id="hybrid-m")
            hybrid_run = gr.Button(i18n.label("hybrid_run"), variant="primary", elem_id="hybrid-run")
        with gr.Column(scale=4):
            hybrid_summary = gr.Markdown(label=i18n.label("hybrid_summary"), elem_id="hybrid-summary")
            cosine = gr.Plot(label=i18n.label("hybrid_cosine"), show_label=False, elem_id="hybrid-cosine")
    drift = gr.Plot(label=i18n.label("hybrid_drift"), show_label=False, elem_id="hybrid-drift")
    hybrid_table = gr.Dataframe(label=i18n.label("hybrid_table"), interactive=False, elem_id="hybrid-table",
                                headers=["softmax layers k", "softmax layers", "linear layers", "mean cosine",
                                         "worst cosine"])
    with gr.Row():
        export = gr.Button(i18n.label("export_learn"), size="sm", elem_id="learn-export")
        files = gr.File(label=i18n.label("downloads"), file_count="multiple", interactive=False, height=120)
        link = common.link_box()
    query = gr.Textbox(visible=False, elem_id="learn-query")

    tab = LearnTab(layer, head, num_features, steps, seed, train_count, heldout_count, train, stop, loss, summary,
                   table, comparison, heatmap, download, upload, gr.State(None), gr.State(None), trained_md,
                   hybrid_map, mode, layers, budget, hybrid_m, hybrid_run, cosine, drift, hybrid_table,
                   hybrid_summary, gr.State(None), query, link)

    # Training holds both cores for a while: one at a time for the whole server.
    training = train.click(run_learn, tab.learn_controls + [presentation, tab.trained], tab.learn_outputs,
                           api_name="learn", concurrency_limit=1, concurrency_id="learn-train")
    # The link holds the controls (a link restores them; training stays a button press).
    for event in (train.click, hybrid_run.click):
        event(learn_query, tab.link_controls + [presentation], query, api_visibility="private",
              queue=False).then(None, query, link, js=common.SET_URL_JS)
    # The flag ends the worker thread at its next step; cancelling ends the event in the page.
    stop.click(stop_learn, None, None, cancels=[training], api_visibility="private", queue=False)
    upload.upload(load_trained, [upload, layer, head, heldout_count, presentation, tab.trained], tab.learn_outputs,
                  api_visibility="private", concurrency_limit=1, concurrency_id="learn-train")
    # All heads at once is heavy: suggest fewer steps when it is chosen.
    head.input(lambda h: gr.update(value=150) if h == ALL_HEADS else gr.skip(), head, steps,
               api_visibility="private")
    hybrid_run.click(run_hybrid, tab.hybrid_controls + [presentation, tab.trained], tab.hybrid_outputs,
                     api_name="hybrid", concurrency_limit=1, concurrency_id="learn-hybrid")

    def restyle(flag, view, hview):
        figs = (*render_learn(view, bool(flag)), *render_hybrid(hview, bool(flag)))
        return tuple(gr.skip() if f is None else f for f in figs)

    # Presentation mode restyles what is drawn; the page's own JS toggle is wired in ui/__init__.
    presentation.change(restyle, [presentation, tab.view, tab.hybrid_view],
                        [loss, comparison, heatmap, cosine, drift], api_visibility="private")

    @common.guarded
    def export_learn(view, hview, presentation):
        _, lv = _engine()
        loss_fig, comparison_fig, heatmap_fig = render_learn(view, presentation)
        cosine_fig, drift_fig = render_hybrid(hview, presentation)
        tables = {}
        if view is not None:
            tables.update(comparison=lv.comparison_table(view), per_head=lv.per_head_table(view),
                          loss=lv.loss_table(view) if view.losses else None)
        if hview is not None:
            tables.update(hybrid=lv.hybrid_table(hview), drift=lv.drift_table(hview))
        return common.export_files("learn", {"loss": loss_fig, "heldout": comparison_fig, "kl-ratio": heatmap_fig,
                                             "hybrid-cosine": cosine_fig, "hybrid-drift": drift_fig}, tables)

    export.click(export_learn, [tab.view, tab.hybrid_view, presentation], files, api_visibility="private",
                 concurrency_limit=1, concurrency_id="export")
    return tab
