"""The state tab's recall section: associative recall (MQAR) against the state's size.
Endpoints: ``/mqar`` (the shipped figure) and ``/mqar_train`` (one point trained live).

The shipped accuracy-against-state figure draws when the section is opened (no training);
a visitor trains one more point (a mechanism, a width, steps and a seed), priced first by
the cost model and refused over ``views.mqar.LIVE_SECONDS``, with a progress bar, stopped
when the page goes; the point joins the figure, ringed, and the trained model reads one test
sequence: which earlier tokens each question attends to, as the maps tab draws attention.
The engine's words are messages, said in the page's language by the handlers (``common.guarded``);
a language or presentation switch redraws what is drawn from what was trained (nothing is
trained again).
"""

from __future__ import annotations

import gradio as gr

from ..stopping import StopSignal
from ..text import Message, normal_lang, say
from . import common, i18n, server


def _shipped_mixers() -> tuple:
    """The mixers of the shipped table, in its order: what the experiment trains, read without
    importing the engine (the page is built first)."""
    import json

    from ..resources import asset
    points = json.loads(asset("mqar", "results.json").read_text(encoding="utf-8"))["points"]
    return tuple(dict.fromkeys(point["mixer"] for point in points))


MIXERS = _shipped_mixers()
# explorer.views.mqar's bounds, repeated for the same reason (a test holds them equal).
WIDTHS = (32, 64)
STEPS = (20, 500)
DEFAULT_STEPS = 300
MAX_SEED = 10_000
SEQUENCES = (0, 999)
MAX_HEADS = 16                     # width 64 in heads of 4
LIVE_SECONDS = 60                  # views.mqar.LIVE_SECONDS, said in the section's words


def _label(key: str):
    return i18n.engine_label(f"mqar.{key}")


def intro_text(lang: str = "en") -> str:
    return say("mqar.section_intro", normal_lang(lang), limit=LIVE_SECONDS)


def _status(session, lang) -> str:
    """The shipped table and the last live point, said in ``lang`` (a markdown of two paragraphs)."""
    from ..views import mqar as views
    lines = [views.shipped_status()]
    if session is not None and session.last is not None:
        lines.append(views.trained_message(session.last))
    else:
        lines.append(Message("mqar.inspect_empty"))
    return "\n\n".join(say(line, lang) for line in lines)


def _figure(session, presentation):
    from ..experiments import mqar_table
    from ..figures.mqar import mqar_figure
    return mqar_figure(mqar_table.shipped(), style=presentation, live=session.points if session is not None else ())


def _inspection(session, sequence, layer, head, presentation, with_layer=False):
    """The last live model's heatmap, or None before one is trained (and the layer drawn)."""
    if session is None or session.last is None or session.last.model is None:
        return (None, gr.skip()) if with_layer else None
    from ..figures.mqar_inspect import recall_heatmap
    from ..views import mqar as views
    inspection, layer_index, head_index = views.inspect_live(session, sequence, layer, head)
    shape = session.last.shape
    fig = recall_heatmap(inspection, layer_index, head_index, mixer=shape.mixer, width=shape.width,
                         style=presentation)
    return (fig, layer_index + 1) if with_layer else fig


@common.guarded
def show_mqar(presentation=False, lang="en", session=None, sequence=0, layer=2, head="best"):
    """The shipped figure (with the page's live points, if any): returns (figure, status,
    inspection figure or None, session)."""
    lang = normal_lang(lang)
    common.import_engine()
    from ..views import mqar as views
    session = session if session is not None else views.RecallSession()
    return (_figure(session, presentation), _status(session, lang),
            _inspection(session, sequence, layer, head, presentation), session)


@common.guarded
def train_mqar(mixer="softmax", width=32, steps=DEFAULT_STEPS, seed=0, presentation=False, lang="en", session=None,
               sequence=0, request: gr.Request = None, progress=gr.Progress()):
    """Train one point live (priced first; stopped when the visitor leaves) and add it to the
    figure: returns (figure, status, inspection figure of test sequence ``sequence`` in the
    layer and head that read the asked pairs most, session, the head choice set to "best",
    the layer choice set to that layer)."""
    lang = normal_lang(lang)
    common.import_engine()
    from ..measure import cost
    from ..views import mqar as views

    views.check_live(mixer, width, steps, seed)          # a wrong control: refused before anything
    name = Message(f"mqar.mixer.{mixer}")
    progress(0.0, desc=say("mqar.progress_start", lang))

    def on_step(step, total, loss):
        if step % 5 == 0 or step == total:
            progress(step / total, desc=say("mqar.progress", lang, mixer=name, width=width, step=step, steps=total,
                                            loss=f"{loss:.3f}"))

    stop = StopSignal(left=server.visitor_left(request), seconds=cost.TRAINING_SECONDS)
    live = views.train_live(mixer, width, steps, seed, should_stop=stop, on_step=on_step)
    session = (session if session is not None else views.RecallSession()).add(live)
    inspection, layer = _inspection(session, sequence, "best", "best", presentation, with_layer=True)
    return _figure(session, presentation), _status(session, lang), inspection, session, "best", layer


@common.guarded
def inspect_mqar(session=None, sequence=0, layer=2, head="best", presentation=False, lang="en"):
    """The last live model on another sequence, layer or head (``lang``: the page's, which
    ``common.guarded`` says the figure in)."""
    if session is None or session.last is None:
        return gr.skip()
    common.import_engine()
    return _inspection(session, sequence, layer, head, presentation)


def build(presentation: gr.Checkbox, lang: gr.Component | None = None, section: gr.Accordion | None = None):
    """The section's components and events; ``section`` is the accordion it sits in (opening
    it draws the shipped figure)."""
    if lang is None:
        lang = gr.Textbox("en", visible=False)
    intro = gr.Markdown(intro_text("en"), elem_id="mqar-intro")
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            mixer = gr.Dropdown([(_label(f"mixer.{m}"), m) for m in MIXERS], value="gla", label=_label("label_mixer"),
                                elem_id="mqar-mixer")
            width = gr.Radio(list(WIDTHS), value=32, label=_label("label_width"), info=_label("label_width_info"),
                             elem_id="mqar-width")
            steps = gr.Slider(*STEPS, value=DEFAULT_STEPS, step=10, label=_label("label_steps"),
                              info=_label("label_steps_info"), elem_id="mqar-steps")
            seed = gr.Number(2, precision=0, minimum=0, maximum=MAX_SEED, label=_label("label_seed"),
                             info=_label("label_seed_info"), elem_id="mqar-seed")
            train = gr.Button(_label("label_train"), variant="primary", elem_id="mqar-train")
        with gr.Column(scale=5):
            status = gr.Markdown(elem_id="mqar-status")
            figure = gr.Plot(label=_label("figure_label"), show_label=False, elem_id="mqar-figure")
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=240):
            sequence = gr.Number(0, precision=0, minimum=SEQUENCES[0], maximum=SEQUENCES[1],
                                 label=_label("label_sequence"), info=_label("label_sequence_info"),
                                 elem_id="mqar-sequence")
            layer = gr.Radio([1, 2], value=2, label=_label("label_layer"), elem_id="mqar-layer")
            head = gr.Dropdown([(_label("head_best"), "best"), (_label("head_mean"), "mean")]
                               + [(str(h), str(h)) for h in range(1, MAX_HEADS + 1)],
                               value="best", label=_label("label_head"), info=_label("label_head_info"), elem_id="mqar-head")
        with gr.Column(scale=5):
            inspect_plot = gr.Plot(label=_label("inspect_label"), show_label=False, elem_id="mqar-inspect")
    session = gr.State(None)
    outputs = [figure, status, inspect_plot, session]
    lane = dict(concurrency_limit=2, concurrency_id="compute")
    shown = [presentation, lang, session, sequence, layer, head]
    if section is not None:
        section.expand(show_mqar, shown, outputs, api_name="mqar", **lane)
    else:
        gr.on([lang.change], show_mqar, shown, outputs, api_name="mqar", **lane)

    # Another language or presentation mode redraws what the section has drawn.
    def redraw(*args):
        if args[2] is None:                          # the section never opened
            return tuple(gr.skip() for _ in outputs)
        return show_mqar(*args)

    gr.on([lang.change, presentation.change], redraw, shown, outputs, api_visibility="private",
          trigger_mode="always_last", **lane)
    lang.change(intro_text, lang, intro, api_visibility="private", queue=False)
    # One training at a time on the server, shared with the learn tab's.
    train.click(train_mqar, [mixer, width, steps, seed, presentation, lang, session, sequence],
                outputs + [head, layer], api_name="mqar_train",
                concurrency_limit=1, concurrency_id="learn-train")
    gr.on([sequence.submit, layer.input, head.input], inspect_mqar,
          [session, sequence, layer, head, presentation, lang], inspect_plot, api_visibility="private",
          trigger_mode="always_last", **lane)
    return train
