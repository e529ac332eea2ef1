"""Linearize tab: SmolLM2 with all but k layers linearized, judged against the original, and
the two models continuing one prompt side by side. Endpoints: ``/linearize``, ``/generate``.

The numbers and the memory come from ``explorer.views.linearize`` (which prices each request
before the model reads a token); this module only turns them into components. The views and
figures speak in messages: the handlers' outputs are said in the page's language by
``common.guarded`` (and ``learn_base.guarded_stream``), a change of language says the same view
again (``relabel``).
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ..stopping import StopSignal
from ..text import Message, normal_lang, say
from . import common, i18n, server
from .learn_base import guarded_stream, headed_table

DEFAULT_PROMPT = say("linearize.default_prompt", "en")
# A prompt the visitor has not changed follows the page's language.
DEFAULT_PROMPTS = {lang: say("linearize.default_prompt", lang) for lang in ("en", "zh")}


def _label(key: str):
    return i18n.engine_label(key)


# The engine's choices (views.linearize.sets(): the shipped sets, then elu+1), repeated so the
# tab builds before the engine is imported; a test holds them equal.
SETS = ("hedgehog:0", "hedgehog:16:1", "hedgehog:64", "elu1:0")
LIVE_SET = "live"           # the set trained on the page (views.linearize.LIVE_SET)
LAYERS, DEFAULT_KEEP, MAX_PROMPT_CHARS, MAX_NEW_TOKENS = 30, 6, 200, 64   # SmolLM2's layers; the view's bounds
# The training controls' bounds (views.linearize.TRAIN_KINDS, MAX_TRAIN_WINDOW, MAX_TRAIN_SINKS,
# linearize.live.MAX_STEPS and DEFAULT_STEPS), held equal by a test.
TRAIN_KINDS, MAX_TRAIN_WINDOW, MAX_TRAIN_SINKS, MAX_TRAIN_STEPS, DEFAULT_TRAIN_STEPS = ("hedgehog", "luna"), 128, 4, 200, 50


def _views():
    common.import_engine()
    from ..views import linearize as views
    return views


def _stop(request, views):
    from ..measure import cost
    return StopSignal(left=server.visitor_left(request), seconds=cost.LIMIT_SECONDS)


def _needs() -> Message | None:
    """Where the causal model is not installed, what the section needs (a message): every
    button then says it instead of failing. None where it is installed."""
    from ..catalog import causal_model_installed
    return None if causal_model_installed() else Message("linearize.needs_model")


def needs_model(lang) -> str | None:
    """``_needs`` in the words of ``lang``."""
    needs = _needs()
    return None if needs is None else say(needs, normal_lang(lang))


def _judged(set_id, keep, request, trained=None):
    views = _views()
    return views.judge(set_id, keep, stop=_stop(request, views), trained=trained)


def _shown(view):
    """The table and summary of ``view`` (messages, said by the caller's edge); before any
    judging, the empty table headed and the invitation to start."""
    if view is None:
        return headed_table(_header_messages()), _needs() or Message("linearize.start")
    views = _views()
    from ..views.frames import rows_frame
    return rows_frame(views.table(view), views.headers()), views.summary(view)


def _header_messages() -> list[Message]:
    return [Message(f"linearize.col_{key}") for key in ("model", "softmax", "perplexity", "agreement", "kl")]


def _headers(lang):
    return [say(header, lang) for header in _header_messages()]


@common.guarded
def run_linearize(set_id="hedgehog:0", keep=6, lang="en", request: gr.Request = None):
    """Judge the hybrid: (table, summary)."""
    if _needs():
        return _shown(None)
    return _shown(_judged(set_id, keep, request))


@common.guarded
def show_linearize(set_id="hedgehog:0", keep=6, lang="en", trained=None, request: gr.Request = None):
    """The page's judging: the table and summary, and the view kept to relabel them
    (``trained``: the set trained on this page, read when ``set_id`` is LIVE_SET)."""
    if _needs():
        return (*_shown(None), None)
    view = _judged(set_id, keep, request, trained)
    return (*_shown(view), view)


@guarded_stream
def run_training(kind="hedgehog", window=0, sinks=0, steps=DEFAULT_TRAIN_STEPS, lang="en",
                 request: gr.Request = None, progress=gr.Progress()):
    """Train a set on the page: (status, the set, the chosen set) after the capture and each layer;
    the last one chooses the new set. Refused before any work the server cannot afford. What it
    yields is said in the page's language by ``guarded_stream``; the progress bar's words here."""
    lang = normal_lang(lang)
    if _needs():
        yield _needs(), gr.skip(), gr.skip()
        return
    views = _views()
    for step in views.training_steps(kind, window, sinks, steps, stop=_stop(request, views)):
        summary = views.training_summary(step)
        progress(step.fraction, desc=say(summary, lang))
        if step.maps is None:
            yield summary, gr.skip(), gr.skip()
        else:
            yield summary, step.maps, LIVE_SET


def relabel(view, prompt, lang="en"):
    """A change of language: the same view said in the new words (nothing judged again), and a
    prompt still at some language's default replaced by the new language's."""
    lang = normal_lang(lang)
    if prompt in DEFAULT_PROMPTS.values():
        prompt = DEFAULT_PROMPTS[lang]
    return (*common.said_outputs(_shown(view), lang), prompt)


@guarded_stream
def run_generate(prompt=DEFAULT_PROMPT, new_tokens=32, set_id="hedgehog:0", keep=6, presentation=False, lang="en",
                 trained=None, request: gr.Request = None):
    """Stream (original text, linearized text, memory plot, status) after every token (said in
    the page's language by ``guarded_stream``)."""
    if _needs():
        yield "", "", None, _needs()
        return
    views = _views()
    from ..figures.linearize import memory_per_step
    stop = _stop(request, views)
    new_tokens = views.check_prompt(prompt, new_tokens)[1]
    for step in views.generation_steps(prompt, new_tokens, set_id, keep, stop=stop, trained=trained):
        rate = step.tokens / step.seconds if step.seconds > 0 else 0.0
        status = Message("linearize.gen_status", which=Message(f"linearize.gen_which_{step.which}"),
                         tokens=step.tokens, total=new_tokens, rate=rate)
        fig = memory_per_step(step.kv_cache_bytes, step.state_bytes, style=presentation)
        yield step.original, step.linearized, fig, status


@dataclass
class LinearizeControls:
    """What a link holds of the section (``link_keys``: component, query key, type) and its two
    buttons (the link follows them)."""

    set_id: gr.Dropdown
    keep: gr.Slider
    prompt: gr.Textbox
    new_tokens: gr.Slider
    run: gr.Button
    generate: gr.Button

    @property
    def link_keys(self) -> list:
        return [(self.set_id, "lset", str), (self.keep, "lkeep", int), (self.prompt, "lprompt", str),
                (self.new_tokens, "lnew", int)]

    @property
    def controls(self) -> list:
        return [component for component, _, _ in self.link_keys]


def build(presentation: gr.Checkbox, lang: gr.Radio | None = None) -> LinearizeControls:
    """The section: the maps and k with the numbers; below, the prompt and the two continuations."""
    choices = [(_label("linearize.set_" + set_id.replace(":", "_")), set_id) for set_id in (*SETS, LIVE_SET)]
    with_lang = [lang if lang is not None else gr.State("en")]
    gr.Markdown(_label("linearize.tab_intro"), elem_id="linearize-intro")
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=260):
            set_id = gr.Dropdown(choices, value=SETS[0], label=_label("linearize.set_label"),
                                 elem_id="linearize-set")
            keep = gr.Slider(0, LAYERS, value=DEFAULT_KEEP, step=1, label=_label("linearize.keep_label"),
                             elem_id="linearize-keep")
            run = gr.Button(_label("linearize.run"), variant="primary", elem_id="linearize-run")
        with gr.Column(scale=3):
            # headed before the first run; relabelled with the page's language (below)
            numbers = gr.Dataframe(interactive=False, show_label=False, elem_id="linearize-numbers",
                                   headers=_headers("en"))
            summary = gr.Markdown(_label("linearize.start" if needs_model("en") is None else "linearize.needs_model"),
                                  elem_id="linearize-summary")
    view = gr.State(None)
    trained = gr.State(None)          # the set trained on this page: this visitor's only
    judge_inputs = [set_id, keep] + with_lang + [trained]
    run.click(show_linearize, judge_inputs, [numbers, summary, view], api_name="linearize",
              concurrency_limit=1, concurrency_id="linearize")
    keep.release(show_linearize, judge_inputs, [numbers, summary, view], api_visibility="private",
                 concurrency_limit=1, concurrency_id="linearize")

    gr.Markdown(_label("linearize.gen_intro"), elem_id="linearize-gen-intro")
    with gr.Row(equal_height=False):
        # No max_length: the browser would cut a longer paste without a word; the view refuses
        # it and says how long it was (MAX_PROMPT_CHARS, in the label).
        prompt = gr.Textbox(DEFAULT_PROMPT, lines=2, scale=3,
                            label=_label("linearize.prompt_label"),
                            elem_id="linearize-prompt")
        new_tokens = gr.Slider(1, MAX_NEW_TOKENS, value=32, step=1, label=_label("linearize.new_tokens_label"),
                               elem_id="linearize-new-tokens", scale=1)
        generate = gr.Button(_label("linearize.gen_run"), variant="primary", elem_id="linearize-generate", scale=0)
    status = gr.Markdown(elem_id="linearize-gen-status")
    with gr.Row(equal_height=True):
        original = gr.Textbox(label=_label("linearize.gen_original"), lines=6, interactive=False,
                              elem_id="linearize-gen-original")
        linearized = gr.Textbox(label=_label("linearize.gen_linearized"), lines=6, interactive=False,
                                elem_id="linearize-gen-linearized")
    memory = gr.Plot(show_label=False, elem_id="linearize-memory")
    _build_training(set_id, trained, judge_inputs, [numbers, summary, view], with_lang)
    generate.click(run_generate, [prompt, new_tokens, set_id, keep, presentation] + with_lang + [trained],
                   [original, linearized, memory, status], api_name="generate",
                   concurrency_limit=1, concurrency_id="linearize")
    if lang is not None:
        lang.change(relabel, [view, prompt, lang], [numbers, summary, prompt], queue=False,
                    api_visibility="private")
    return LinearizeControls(set_id, keep, prompt, new_tokens, run, generate)


def _build_training(set_id, trained, judge_inputs, judge_outputs, with_lang) -> None:
    """Training another set on the page; when it ends the set is chosen and judged."""
    with gr.Accordion(_label("linearize.train_title"), open=False, elem_id="linearize-train"):
        gr.Markdown(_label("linearize.train_intro"))
        with gr.Row(equal_height=False):
            kind = gr.Radio([(_label(f"linearize.train_kind_{name}"), name) for name in TRAIN_KINDS], value=TRAIN_KINDS[0],
                            label=_label("linearize.train_kind_label"), elem_id="linearize-train-kind")
            window = gr.Slider(0, MAX_TRAIN_WINDOW, value=32, step=1, label=_label("linearize.train_window_label"),
                               elem_id="linearize-train-window")
            sinks = gr.Slider(0, MAX_TRAIN_SINKS, value=1, step=1, label=_label("linearize.train_sinks_label"),
                              elem_id="linearize-train-sinks")
            steps = gr.Slider(1, MAX_TRAIN_STEPS, value=DEFAULT_TRAIN_STEPS, step=1,
                              label=_label("linearize.train_steps_label"), elem_id="linearize-train-steps")
            run = gr.Button(_label("linearize.train_run"), variant="primary", elem_id="linearize-train-run", scale=0)
        status = gr.Markdown(elem_id="linearize-train-status")
    trains = run.click(run_training, [kind, window, sinks, steps] + with_lang, [status, trained, set_id],
                       api_visibility="private", concurrency_limit=1, concurrency_id="linearize-train")
    trains.success(show_linearize, judge_inputs, judge_outputs, api_visibility="private",
                   concurrency_limit=1, concurrency_id="linearize")
