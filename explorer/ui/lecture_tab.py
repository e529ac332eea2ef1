"""Lecture tab: the article's argument as chapters a speaker clicks through, in English or
Chinese. Endpoint: ``/lecture``.

Each chapter is one screen: its claim, its live figure(s), its own controls (built from the
engine's ``chapter_controls``), a "try this" button (the engine's preset) and a "go deeper"
link that opens the full tab on the same state. Every chapter's controls are built once and
shown or hidden, so switching chapters only changes what is visible; its figures follow.

The engine (``explorer.views.lecture``, ``explorer.figures.lecture``) does all the work;
this module turns its views into components, links and markdown. The chapter list and the
control specs come from a torch-free module, so the page still builds without the engine.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from html import escape
from pathlib import Path

import gradio as gr

from ..catalog import CAUSAL_MODEL
from ..lecture.memo import LRU
from . import common, i18n, source as source_panel, validate
from .deck_html import notes_html, overview_html, talk_length_html

CAUSAL_MODEL_NAME = CAUSAL_MODEL["name"]     # the packaged causal model a link or request may name

MAX_FIGURES = 8                 # plot slots, one per build; a chapter has as many builds as figures
VIEW_CACHE_SIZE = 64            # views kept for going back and forth during a talk
URL_PREFIX = "c_"               # chapter controls in the address: c_<name>, clear of the other tabs' keys


def _plan():
    """The chapter list and control specs (plain data, importable before the engine)."""
    from ..lecture import chapters
    return chapters


def _text(key: str, lang: str) -> str:
    from ..lecture.text import t
    return t(key, lang)


def _engine():
    """(figures.lecture, views.lecture), imported on first use: see common.import_engine."""
    common.import_engine()
    from ..figures import lecture as figures
    from ..views import lecture as views
    return figures, views


# ---------------------------------------------------------------------------------------
# Components
# ---------------------------------------------------------------------------------------

@dataclass
class LectureTab:
    chapter: gr.Dropdown
    prev: gr.Button
    next: gr.Button
    goto: gr.Button         # hidden: the deck's script jumps to a chapter through it
    info: gr.HTML           # "3 / 6" and the build dots; carries the chapter's build count
    claim: gr.Markdown
    notices: gr.Markdown
    tables: gr.Markdown
    numbers: gr.Markdown
    groups: dict            # chapter -> gr.Column of its controls
    controls: dict          # chapter -> [component, ...] in the order of chapter_controls(ch)
    specs: dict             # chapter -> [ControlSpec, ...]
    try_this: gr.Button
    deeper: gr.HTML
    plots: list
    view: gr.State
    query: gr.Textbox
    upcoming: gr.Textbox    # hidden: the next chapter's first build, for the deck to show at once
    audience: gr.HTML = None   # the title build's QR code and address (filled on load: the page's own host)
    # The tab the address opened on: "pending" until the load's restore has read the address,
    # then "lecture" (the load chain draws the chapter) or "" (another tab).
    wanted: gr.Textbox = None

    @property
    def all_controls(self) -> list:
        return [c for ch in self.specs for c in self.controls[ch]]

    @property
    def outputs(self) -> list:
        """What a draw writes: the figures, numbers, notices, view, link and query."""
        return [*self.plots, self.info, self.tables, self.numbers, self.notices, self.view, self.deeper, self.query]

    @property
    def screen_outputs(self) -> list:
        """What switching chapters writes at once: the claim and which controls show."""
        return [self.claim, self.chapter, self.prev, self.next, self.info, *self.groups.values()]


def language_switch() -> gr.Radio:
    """The visible language switch (the header puts it beside presentation mode)."""
    return gr.Radio([(name, code) for code, name in i18n.LANG_NAMES.items()], value=i18n.DEFAULT_LANG,
                    label=i18n.label("language"), show_label=False, container=False, elem_id="language",
                    scale=0, min_width=220)


def _component(chapter: int, spec):
    """One chapter control from its ControlSpec; its id names the chapter too (chapters share
    control names, and a page's ids are its own)."""
    label = i18n.engine_label(spec.label_key)
    elem_id = f"lecture-{chapter}-{spec.name}"
    if spec.kind == "bool":
        return gr.Checkbox(bool(spec.default), label=label, elem_id=elem_id)
    if spec.kind == "choice":
        from ..lecture.text import TEXT
        choices = [(i18n.engine_label(f"choice.{c}"), c) if f"choice.{c}" in TEXT else c for c in spec.choices]
        if len(choices) <= 4:
            return gr.Radio(choices, value=spec.default, label=label, elem_id=elem_id)
        return gr.Dropdown(choices, value=spec.default, label=label, elem_id=elem_id)
    step = 1 if spec.kind == "int" else getattr(spec, "step", None) or (spec.max - spec.min) / 100
    return gr.Slider(spec.min, spec.max, value=spec.default, step=step, label=label, elem_id=elem_id)


def build(panel: source_panel.SourcePanel, presentation: gr.Checkbox, lang: gr.Radio) -> LectureTab:
    """The deck: a slim bar (previous, chapter, n / 6 and build dots, drawer, speaker view,
    next), the claim, one figure at a time, and the drawer with the chapter's controls."""
    plan = _plan()
    chapters = tuple(plan.CHAPTERS)
    specs = {ch: list(plan.chapter_controls(ch)) for ch in chapters}
    titles = [(_text(f"ch{ch}.title", i18n.DEFAULT_LANG), ch) for ch in chapters]
    with gr.Column(elem_id="lecture"):
        with gr.Row(equal_height=True, elem_id="lecture-nav"):
            prev = gr.Button("◀", elem_id="lecture-prev", scale=0, min_width=48, size="sm")
            chapter = gr.Dropdown(titles, value=chapters[0], label=i18n.label("lecture_chapter"), show_label=False,
                                  elem_id="lecture-chapter", scale=3, container=False, filterable=False)
            info = gr.HTML(_info_html(chapters[0], chapters, None), elem_id="deck-info", container=False,
                           min_height=0)
            drawer = gr.Button(i18n.label("lecture_drawer"), elem_id="deck-drawer-button", scale=0, min_width=48,
                               size="sm")
            speaker = gr.Button(i18n.label("lecture_speaker"), elem_id="deck-speaker-button", scale=0,
                                min_width=48, size="sm")
            next_ = gr.Button("▶", elem_id="lecture-next", scale=0, min_width=48, size="sm", variant="primary")
            goto = gr.Button("↷", elem_id="deck-goto", elem_classes=["deck-hidden"], scale=0, min_width=0)
        with gr.Row(equal_height=False, elem_id="lecture-screen"):
            with gr.Column(scale=5, min_width=320, elem_id="lecture-main"):
                claim = gr.Markdown(_claim(chapters[0], i18n.DEFAULT_LANG), elem_id="lecture-claim")
                notices = gr.Markdown(elem_id="lecture-notices")
                with gr.Column(elem_id="lecture-figures"):
                    plots = [gr.Plot(show_label=False, elem_id=f"lecture-plot-{i}", visible=i == 0)
                             for i in range(MAX_FIGURES)]
                    audience = gr.HTML(elem_id="deck-qr", container=False, min_height=0)
            with gr.Column(scale=2, min_width=300, elem_id="lecture-drawer"):
                groups, controls = {}, {}
                for ch in chapters:
                    with gr.Column(visible=ch == chapters[0], elem_id=f"lecture-controls-{ch}",
                                   elem_classes=["lecture-controls"]) as group:
                        controls[ch] = [_component(ch, spec) for spec in specs[ch]]
                    groups[ch] = group
                with gr.Row():
                    try_button = gr.Button(i18n.label("lecture_try"), elem_id="lecture-try", size="sm")
                deeper = gr.HTML(elem_id="lecture-deeper")
                tables = gr.Markdown(elem_id="lecture-tables")
                with gr.Accordion(i18n.label("lecture_numbers"), open=False, elem_id="lecture-numbers-box"):
                    numbers = gr.Markdown(elem_id="lecture-numbers")
                gr.HTML(talk_length_html(), elem_id="deck-talk", container=False, min_height=0)
                gr.Markdown(i18n.label("lecture_keys"), elem_id="lecture-keys")
        # Fixed over the screen (outside the slide, which the drawer scales): notes, overview.
        gr.HTML(notes_html(chapters), elem_id="deck-notes", container=False, min_height=0)
        gr.HTML(overview_html(chapters), elem_id="deck-overview", container=False, min_height=0)
        view = gr.State(None)
        query = gr.Textbox(visible=False, elem_id="lecture-address")
        upcoming = gr.Textbox(visible=False, elem_id="lecture-upcoming")
        wanted = gr.Textbox("pending", visible=False)
    drawer.click(None, None, None, js="() => { window.explorerDeck && window.explorerDeck.toggleDrawer(); }")
    speaker.click(None, None, None, js="() => { window.explorerDeck && window.explorerDeck.openSpeaker(); }")
    tab = LectureTab(chapter, prev, next_, goto, info, claim, notices, tables, numbers, groups, controls, specs,
                     try_button, deeper, plots, view, query, upcoming, audience, wanted)
    _wire(tab, panel, presentation, lang, chapters)
    return tab


def _info_html(ch: int, chapters, builds, says: dict | None = None) -> str:
    """The bar's "n / 6" and the place of the build dots (drawn by assets/deck.js). The
    chapter's build count travels here, and each build's own claim and speaker notes
    (``says``: {"claims": [...], "notes": [[...], ...]}): the deck's script reads them after
    each draw and shows the build's claim on the slide and its notes to the speaker."""
    count = "" if builds is None else str(int(builds))
    said = "" if says is None else f' data-says="{escape(json.dumps(says, ensure_ascii=False), quote=True)}"'
    return (f'<div class="deck-count" data-ch="{int(ch)}" data-first="{int(chapters[0])}" '
            f'data-last="{int(chapters[-1])}" data-builds="{count}"{said}><span class="deck-n">{int(ch)} / '
            f'{int(chapters[-1])}</span><span class="deck-dots"></span></div>')


def build_says(view, lang: str, builds: int) -> dict:
    """Each build's one claim and its speaker notes (its notices among them), in ``lang``."""
    return {"claims": [view.claim_in(f"b{k}", lang) for k in range(builds)],
            "notes": [[str(line) for line in view.notes_in(f"b{k}", lang)] for k in range(builds)]}


# ---------------------------------------------------------------------------------------
# What the handlers return
# ---------------------------------------------------------------------------------------

def _claim(ch: int, lang: str) -> str:
    """The chapter's claim; its title shows once, in the bar's chapter selector."""
    return _text(f"ch{ch}.claim", lang)


def screen(ch, lang, view=None):
    """Switching chapters: the claim, the selector, the arrows and the controls shown (no engine
    work). The bar's build count is emptied until the chapter is drawn, unless ``view`` (the
    page's drawn view) is that chapter already: a page opened on a chapter's address may have
    drawn it before its restore switched the selector."""
    chapters = tuple(_plan().CHAPTERS)
    ch = _chapter(ch, chapters)
    lang = i18n.normal_lang(lang)
    titles = [(_text(f"ch{c}.title", lang), c) for c in chapters]
    drawn = view is not None and getattr(view, "ch", None) == ch
    return (_claim(ch, lang), gr.update(choices=titles, value=ch),
            gr.update(interactive=True), gr.update(interactive=True),
            gr.skip() if drawn else _info_html(ch, chapters, None),
            *(gr.update(visible=c == ch) for c in chapters))


def _chapter(ch, chapters) -> int:
    try:
        ch = int(ch)
    except (TypeError, ValueError):
        return chapters[0]
    return min(max(ch, chapters[0]), chapters[-1])


def _numbers_markdown(numbers: dict, lang: str) -> str:
    if not numbers:
        return ""
    from ..lecture.text import TEXT

    head = i18n.text("lecture_numbers", lang)
    rows = [f"| {head} | |", "|---|---:|"]
    from ..lecture.text import number_label

    for key, value in numbers.items():
        try:
            name = number_label(key, lang)          # every number labelled in words
        except KeyError:
            name = _text(key, lang) if key in TEXT else key
        rows.append(f"| {name} | {_format(value)} |")
    return "\n".join(rows)


def _format(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return escape(str(value))
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    if value != value:
        return "—"
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-3 or magnitude >= 1e6):
        return f"{value:.3g}"
    return f"{value:.4g}"


def _tables_markdown(view, lang: str) -> str:
    """Tables the chapter's view carries as text keys (chapter 3's reverse kernel trick)."""
    rows = view.data.get("reverse_kernel") if isinstance(view.data, dict) else None
    if not rows:
        return ""
    head = [_text(f"rk.header.{col}", lang) for col in ("aspect", "svm", "linear")]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|"]
    lines += ["| " + " | ".join(_text(key, lang) for key in row) + " |" for row in rows]
    return "\n".join(lines)


def _deeper_html(ch: int, params: dict, lang: str) -> str:
    from urllib.parse import urlencode
    clean = {k: (int(v) if isinstance(v, bool) else v) for k, v in params.items() if v is not None and v != ""}
    tab = clean.get("tab", "")
    tab_name = i18n.text(f"tab_{tab}", lang) if f"tab_{tab}" in i18n.EN else tab
    label = i18n.text("lecture_deeper", lang).format(tab=tab_name)
    return (f'<a id="lecture-deeper-link" href="?{escape(urlencode(clean), quote=True)}" target="_blank" '
            f'rel="noopener">{escape(label)} ↗</a>')


# ---------------------------------------------------------------------------------------
# Running a chapter
# ---------------------------------------------------------------------------------------

# Finished work by key (a key another thread is computing, the prefetch of the next chapter
# say, is waited for instead of done twice).
_views = LRU(VIEW_CACHE_SIZE)            # (chapter, text, data, controls) -> ChapterView
_figures = LRU(VIEW_CACHE_SIZE)          # (view key, language, presentation) -> [go.Figure]


def _panel_choice(source, text, preset, n, d, data_seed, temperature, file, model=None):
    """What the lecture reads: None (the engine's own text for the chapter) until the speaker
    changes the data panel, then its text or its sample (a (text, sample key) pair). A model
    other than the embedded one makes it a sample: that model reads the text."""
    if source == "text" and model and model != source_panel.EMBEDDED_MODEL:
        text = (text or "").strip()
        return None, ("text", text if text and text != source_panel.DEFAULT_TEXT.strip() else _lecture_text(), model)
    if source == "text":
        text = (text or "").strip()
        return (text, None) if text and text != source_panel.DEFAULT_TEXT.strip() else (None, None)
    return None, (source, preset, n, d, data_seed, temperature, file)


def _lecture_text() -> str:
    from ..lecture.text import DEFAULT_TEXT   # plain words, no engine import
    return DEFAULT_TEXT


def chapter_values(ch: int, flat_values, specs: dict) -> dict:
    """The current chapter's control values, by name, out of every chapter's controls in order."""
    offset = 0
    for c, chapter_specs in specs.items():
        if c == ch:
            values = flat_values[offset:offset + len(chapter_specs)]
            return {spec.name: _coerce(spec, value) for spec, value in zip(chapter_specs, values)}
        offset += len(chapter_specs)
    return {}


def _coerce(spec, value):
    if value is None:
        return spec.default
    try:
        if spec.kind == "int":
            return int(round(float(value)))
        if spec.kind == "float":
            return float(value)
        if spec.kind == "bool":
            return bool(value)
    except (TypeError, ValueError):
        return spec.default
    return value


def view_key(ch: int, text, sample_key, controls: dict, lang=None) -> tuple:
    """The cache key of a chapter's view. The language counts only for the default sentence,
    which a model that reads Chinese (chapters 4 and 5 on SmolLM2) reads in the audience's language."""
    default = text is None and sample_key is None
    return (ch, text, sample_key, tuple(sorted((k, repr(v)) for k, v in controls.items())),
            i18n.normal_lang(lang) if default else None)


def compute(ch: int, text, sample_key, controls: dict, panel_values=None, progress=None, lang=None):
    """The chapter's view, from the cache when the same chapter, data and controls ran before."""
    _, views = _engine()

    def make():
        if sample_key is not None and sample_key[0] == "text":     # a chosen model reads the text
            sample = source_panel.load("text", sample_key[1], *panel_values[2:8], model=sample_key[2])
        else:
            sample = source_panel.load(*panel_values[:8]) if sample_key is not None else None
        return views.chapter_view(ch, sample=sample, text=text, progress=progress,
                                  lang=i18n.normal_lang(lang), **controls)
    return _views.get(view_key(ch, text, sample_key, controls, lang), make)


def chapter_figures(view, lang, presentation, key=None) -> list:
    """The chapter's figures in ``lang``; cached with the view's key when given."""
    figures, _ = _engine()
    lang, presentation = i18n.normal_lang(lang), bool(presentation)

    def make():
        return [_window_sized(f, presentation) for f in figures.chapter_figures(view, lang=lang, style=presentation)]
    return make() if key is None else _figures.get((key, lang, presentation), make)


def _window_sized(fig, presentation=False):
    """A slide's figure takes its height from the window (the page's stylesheet sizes its
    box): a fixed pixel height is dropped here; on a slide no text is smaller than the
    floor a projector can be read at (``lecture_common.floor_fonts``; a larger window
    enlarges the whole slide). Layout only; nothing drawn changes."""
    if fig.layout.height is not None or fig.layout.autosize is not True:
        fig.update_layout(height=None, autosize=True)
    if presentation:
        from ..figures.lecture_common import floor_fonts
        floor_fonts(fig)
    return fig


def render(view, lang, presentation, key=None):
    """The chapter's figures, padded to the plot slots (unused slots hidden), and the bar's
    chapter and build count."""
    if view is None:
        return [gr.skip() for _ in range(MAX_FIGURES + 1)]
    figs = chapter_figures(view, lang, presentation, key)[:MAX_FIGURES]
    slots = [gr.update(value=figs[i], visible=True) if i < len(figs) else gr.update(value=None, visible=False)
             for i in range(MAX_FIGURES)]
    return [*slots, _info_html(view.ch, tuple(_plan().CHAPTERS), len(figs), build_says(view, lang, len(figs)))]


def default_controls(ch: int) -> dict:
    """The chapter's controls as the page first holds them (what a plain address draws): the
    layer and head defaults of the model the chapter reads (see ``model_controls``)."""
    return {spec.name: _coerce(spec, spec.default) for spec in model_controls(ch)}


def model_controls(ch: int, model: str | None = None) -> list:
    """The chapter's controls for the model it reads (``model``, else the chapter's default:
    SmolLM2 for chapters 4 and 5 when it is ready), their layer and head ranges from that
    model's config. Imports the engine: call it from a handler, never while building the page."""
    return list(_engine()[1].chapter_controls(ch, model=model))


def _head_pick(spec, start: dict, link_value=None):
    """A layer or head slider put on its model's range (``start``: the model's spec by name),
    at the link's value when it holds one, else at that model's default for the chapter."""
    model_spec = start[spec.name]
    return gr.update(minimum=model_spec.min, maximum=model_spec.max,
                     value=model_spec.default if link_value is None else link_value)


def make_prefetch(specs: dict):
    def prefetch(ch, lang, presentation, source, text, preset, n, d, data_seed, temperature, file, model, *flat):
        """Compute and draw the chapter after ``ch`` while the speaker talks, so that the
        next → finds it ready; returns its first build for the page to hold (``upcoming``),
        or "" when there is none. Runs as the event after each draw, in gradio's queue like
        any handler; never a training run (it takes a minute); failures wait for the real
        request."""
        chapters = tuple(specs)
        ch = _chapter(ch, chapters)
        if ch == chapters[-1]:
            return ""
        panel_values = (source, text, preset, n, d, data_seed, temperature, file, model)
        text_, sample_key = _panel_choice(*panel_values)
        controls = chapter_values(ch + 1, flat, specs)
        if controls.get("train"):
            return ""
        lang = i18n.normal_lang(lang)
        try:
            key = view_key(ch + 1, text_, sample_key, controls, lang)
            view = compute(ch + 1, text_, sample_key, controls, panel_values, lang=lang)
            figures = chapter_figures(view, lang, presentation, key)
            link = link_params(view, lang, presentation, text_, sample_key, panel_values)
            return upcoming_build(view, ch, lang, presentation, figures, link)
        except Exception:
            common.log.info("prefetching lecture chapter %s failed", ch + 1, exc_info=True)
            return ""
    return prefetch


def upcoming_build(view, after: int, lang: str, presentation, figures, link: dict) -> str:
    """The next chapter's first build as the deck's script shows it before the server has
    switched chapters (assets/deck.js, ``preload``): its claim, title, build count and first
    figure, with the chapter it follows and the address it will have (the script shows it
    only if the page still reads the same text in the same language and mode)."""
    first = figures[0] if figures else None
    return json.dumps({
        "after": int(after), "ch": int(view.ch), "lang": lang, "presentation": bool(presentation),
        "builds": len(figures), "claim": _claim(view.ch, lang), "title": _text(f"ch{view.ch}.title", lang),
        "figure": json.loads(first.to_json()) if first is not None else None,
        "query": common.query_string(link)})


def link_params(view, lang, presentation, text, sample_key, panel_values) -> dict:
    """The chapter's address: tab, chapter, language, text or data, and its own controls."""
    params = {"tab": "lecture", "ch": view.ch, "lang": i18n.normal_lang(lang), "present": bool(presentation)}
    if text is not None:
        params.update(src="text", text=text)
    elif sample_key is not None and sample_key[0] == "text":     # a chosen model read the text
        params.update(src="text", text=sample_key[1], model=sample_key[2])
    elif sample_key is not None:
        source, text_, preset, n, d, data_seed, temperature, _file, *model = panel_values
        params.update({k: v for k, v in source_panel.url_params(source, text_, preset, n, d, data_seed, temperature,
                                                                None, None, *model).items()
                       if k not in ("layer", "head")})
    params.update({URL_PREFIX + name: value for name, value in view.controls.items()})
    return params


def deeper_params(view, lang, presentation, text, sample_key, panel_values) -> dict:
    """The full tab on the same state: the engine's tab and parameters, plus the text."""
    # The sentence the chapter read: the visitor's, else the default in the audience's language.
    read = text or view.data.get("text")
    params = dict(_plan().go_deeper(view.ch, text_value=read, model=view.data.get("model"), **view.controls))
    if sample_key is not None:          # random or uploaded data: the full tab reads the same panel
        source, text_, preset, n, d, data_seed, temperature, _file, *model = panel_values
        params.update(source_panel.url_params(source, text_, preset, n, d, data_seed, temperature,
                                              params.get("layer", 2), params.get("head", "3"), *model))
    params["present"] = bool(presentation)
    params["lang"] = i18n.normal_lang(lang)
    return params


def make_draw(specs: dict):
    @common.guarded
    def draw(ch, lang, presentation, source, text, preset, n, d, data_seed, temperature, file, model, *flat,
             progress=gr.Progress()):
        """Compute and draw the current chapter.

        Returns (figure slots..., bar, tables, numbers, notices, view, go-deeper link, query).
        """
        chapters = tuple(specs)
        ch = _chapter(ch, chapters)
        lang = i18n.normal_lang(lang)
        panel_values = (source, text, preset, n, d, data_seed, temperature, file, model)
        text_, sample_key = _panel_choice(*panel_values)
        controls = chapter_values(ch, flat, specs)
        view = compute(ch, text_, sample_key, controls, panel_values,
                       progress=lambda fraction, message="": progress(fraction, desc=message), lang=lang)
        figs = render(view, lang, presentation, view_key(ch, text_, sample_key, controls, lang))   # and the bar
        link = common.query_string(link_params(view, lang, presentation, text_, sample_key, panel_values))
        deeper = _deeper_html(ch, deeper_params(view, lang, presentation, text_, sample_key, panel_values), lang)
        # The slide carries no notice: each is in the notes of the build it is about (build_says).
        return (*figs, _tables_markdown(view, lang), _numbers_markdown(view.numbers, lang),
                "", view, deeper, link)
    return draw


def shown(query: str, lang, presentation) -> bool:
    """Whether the page's last drawn address (``query``) was drawn in this language and mode."""
    from urllib.parse import parse_qs
    q = {key: values[-1] for key, values in parse_qs(query or "").items()}
    return bool(q) and q.get("lang") == i18n.normal_lang(lang) and q.get("present") == str(int(bool(presentation)))


def drawn_once(draw):
    """``draw`` that sends nothing when the page already shows what it would draw: a page opened
    on a chapter's address draws it from its load and again from the chapter's change (and the
    language's, in Chinese); each rendering of every figure holds the browser for about a
    second. The same address (chapter, text, language, mode, controls) and the same view (an
    upload's address does not name its file) is the same drawing."""
    def run(shown_view, query, *args, progress=gr.Progress()):
        out = draw(*args, progress=progress)
        if query and out[-1] == query and out[-3] is shown_view:
            # Only the bar again: a chapter switch's screen, answered after a page's first
            # drawing (``early``), may have emptied its build count.
            return tuple(value if i == MAX_FIGURES else gr.skip() for i, value in enumerate(out))
        return out
    return run


def restyle(view, lang, presentation, query: str = ""):
    """Presentation mode or language changed: redraw the figures of the view already computed,
    unless the page drew them in this mode already (a link's ``present=1`` is read by the draw
    itself; a second rendering of every figure would only delay the slide)."""
    if view is not None and shown(query, lang, presentation):
        return tuple(gr.skip() for _ in range(MAX_FIGURES + 1))
    try:
        return tuple(render(view, lang, presentation))
    except Exception:  # the next draw says what is wrong; a restyle must not raise over it
        common.log.exception("lecture restyle failed")
        return tuple(gr.skip() for _ in range(MAX_FIGURES + 1))


@common.guarded
def try_preset(ch, *flat, specs: dict):
    """The engine's telling preset for the current chapter, into that chapter's controls."""
    chapters = tuple(specs)
    ch = _chapter(ch, chapters)
    preset = dict(_plan().try_this(ch))
    out = []
    for c, chapter_specs in specs.items():
        for spec in chapter_specs:
            out.append(preset[spec.name] if c == ch and spec.name in preset else gr.skip())
    return tuple(out)


# ---------------------------------------------------------------------------------------
# The /lecture endpoint (gradio_client): chapter, text, language, controls -> figures and numbers
# ---------------------------------------------------------------------------------------

@common.guarded
def lecture_api(chapter: int = 0, text: str = "", lang: str = "en", controls: str = "{}",
                presentation: bool = False, model: str = "") -> dict:
    """One chapter of the lecture, computed and drawn.

    chapter: 0 ... 6. text: what the model reads ("" = the chapter's own default sentence).
    lang: "en" or "zh". model: the model that reads the text ("" = the lecture's own choice;
    see the data panel's picker). controls: a JSON object of the chapter's own controls (names as in
    the chapter's link, without the c_ prefix); missing ones take their defaults.
    Returns {"chapter", "lang", "controls", "numbers" (None where undefined), "notices",
    "figures": [plotly JSON], "query"}.
    """
    # The data panel's model: the embedded one means the lecture's own choice (_panel_choice).
    model = validate.check(validate.Bound("model", "text", optional=True), model)
    known = model if model == CAUSAL_MODEL_NAME else None
    ch, lang, text, values, presentation = validate.lecture_request(
        _plan(), chapter, text, lang, controls, presentation, specs_for=lambda c: model_controls(c, known))
    text_ = (text or "").strip() or None
    panel_values = ("text", text_ or "", None, None, None, None, None, None, model or None)
    text_, sample_key = _panel_choice(*panel_values) if model else (text_, None)
    view = compute(ch, text_, sample_key, values, panel_values, lang=lang)
    figs = chapter_figures(view, lang, presentation, view_key(ch, text_, sample_key, values, lang))
    params = link_params(view, lang, presentation, text_, sample_key, panel_values)
    return {"chapter": ch, "lang": lang, "controls": dict(view.controls),
            "numbers": {k: float(v) if math.isfinite(float(v)) else None for k, v in view.numbers.items()},
            "notices": [str(n) for n in view.notices_in(lang)],
            "figures": [json.loads(f.to_json()) for f in figs],
            "query": common.query_string(params)}


# ---------------------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------------------

# Runs in the browser: gradio's own locale follows the switch (see assets/lecture.js).
LANG_JS = ("(ch, lang) => { if (window.explorerSetLanguage) { window.explorerSetLanguage(lang); } "
           "return [ch, lang]; }")
# The same with the page's drawn view passed on to the screen (see ``screen``).
LANG_VIEW_JS = ("(ch, lang, view) => { if (window.explorerSetLanguage) { window.explorerSetLanguage(lang); } "
                "return [ch, lang, view]; }")


def _wire(tab: LectureTab, panel, presentation, lang, chapters):
    specs = tab.specs
    draw = make_draw(specs)
    draw_inputs = [tab.chapter, lang, presentation, *panel.data_inputs, *tab.all_controls]
    compute_kwargs = dict(concurrency_limit=2, concurrency_id="compute", trigger_mode="always_last",
                          api_visibility="private", show_progress_on=tab.plots)

    prefetch = make_prefetch(specs)
    once = drawn_once(draw)

    def then_draw(event):
        # Stopped in the browser where the lecture is neither on screen, nor the tab the address
        # opened, nor drawn: its draw, controls and next chapter are not even sent.
        event = event.then(None, tab.wanted, None, js=_LECTURE_WANTED_JS)
        drawn = event.then(once, [tab.view, tab.query, *draw_inputs], tab.outputs, **compute_kwargs)
        drawn.then(None, tab.query, None, js=_SET_URL_IF_LECTURE_JS)
        drawn.then(lambda view: validate.controls_as_drawn(view, specs), tab.view, tab.all_controls,
                   api_visibility="private", queue=False)
        _then_prefetch(drawn, prefetch, draw_inputs, tab)
        return drawn

    # Previous / next run in the browser (assets/deck.js): a build of the same chapter needs
    # no round trip; past the chapter's ends the script sets its target chapter and presses
    # the hidden goto button, whose new value switches the screen and draws.
    tab.prev.click(None, None, None, js="() => { window.explorerDeck && window.explorerDeck.go(-1); }")
    tab.next.click(None, None, None, js="() => { window.explorerDeck && window.explorerDeck.go(1); }")
    first, last = chapters[0], chapters[-1]
    tab.goto.click(None, tab.chapter, tab.chapter,
                   js=f"(c) => {{ const t = window.explorerDeck && window.explorerDeck.target; "
                      f"return Number.isInteger(t) ? Math.min({last}, Math.max({first}, t)) : c; }}")
    then_draw(tab.chapter.change(screen, [tab.chapter, lang, tab.view], tab.screen_outputs, api_visibility="private",
                                 trigger_mode="always_last", queue=False))

    then_draw(lang.change(screen, [tab.chapter, lang, tab.view], tab.screen_outputs, js=LANG_VIEW_JS,
                          api_visibility="private",
                          queue=False))

    # The chapter's own controls redraw it once let go of (sliders) or picked (the rest).
    triggers = [c.release if isinstance(c, gr.Slider) else c.input for c in tab.all_controls]
    if triggers:
        drawn = gr.on(triggers, draw, draw_inputs, tab.outputs, **compute_kwargs)
        drawn.then(None, tab.query, None, js=_SET_URL_IF_LECTURE_JS)
        drawn.then(lambda view: validate.controls_as_drawn(view, specs), tab.view, tab.all_controls,
                   api_visibility="private", queue=False)
        _then_prefetch(drawn, prefetch, draw_inputs, tab)

    # The deck notes each build's figure first: it shows the build the preset changed.
    then_draw(tab.try_this.click(lambda ch, *flat: try_preset(ch, *flat, specs=specs),
                                 [tab.chapter, *tab.all_controls], tab.all_controls, api_visibility="private",
                                 js="(...args) => { if (window.explorerDeck) { window.explorerDeck.beforeTry(); } "
                                    "return args; }"))

    presentation.input(restyle, [tab.view, lang, presentation, tab.query], [*tab.plots, tab.info],
                        api_visibility="private")

    gr.api(lecture_api, api_name="lecture", concurrency_limit=2, concurrency_id="compute")


def _then_prefetch(drawn, prefetch, inputs, tab):
    """After a draw: the next chapter computed and drawn into the caches, and its first build
    handed to the deck's script (no progress shown: the speaker is talking)."""
    held = drawn.then(prefetch, inputs, tab.upcoming, api_visibility="private", concurrency_limit=2,
                      concurrency_id="compute", show_progress="hidden")
    held.then(None, tab.upcoming, None, js="(p) => { if (window.explorerDeck) { window.explorerDeck.preload(p); } }")


# A step that stops its chain (a script that throws: gradio sends nothing after it) on a page
# whose lecture is not on screen, was not the tab its address opened, and has drawn nothing.
_LECTURE_WANTED_JS = ("(which) => { const el = document.getElementById('lecture'); "
                      "const drawn = document.querySelector('#lecture-figures .js-plotly-plot .main-svg'); "
                      "if (which !== 'lecture' && !(el && el.offsetParent !== null) && !drawn) "
                      "{ throw new Error('the lecture is not open'); } }")


# Put the chapter's address into the address bar, but only while the lecture is on screen:
# a draw finishing after the speaker moved to another tab must not overwrite that tab's link.
# The deck's script first takes the draw in (its build count, the build a jump asked for)
# and adds the build to the address.
_SET_URL_IF_LECTURE_JS = ("(q) => { const el = document.getElementById('lecture'); "
                          "if (q && window.explorerDeck) { q = window.explorerDeck.drawn(q); } "
                          "if (!q || !el || el.offsetParent === null || document.body.classList.contains('speaker-view')) "
                          f"{{ return; }} ({common.SET_URL_JS})(q); }}")


def css() -> str:
    """The lecture's stylesheets (assets/lecture.css, assets/deck.css) and the rule that shows
    only the current build's figure, one per plot slot."""
    sheets = [common.ASSETS / name for name in ("lecture.css", "deck.css")]
    text = "".join("\n" + p.read_text(encoding="utf-8") for p in sheets if p.exists())
    builds = "".join(f'\n#lecture:not([data-step="{i}"]) #lecture-plot-{i} {{ visibility: hidden; }}'
                     for i in range(MAX_FIGURES))
    return text + builds + "\n#lecture:not([data-step]) #lecture-plot-0 { visibility: visible; }\n"


def page_scripts() -> list[str]:
    """The lecture's browser half: the language switch (assets/lecture.js) and the deck's
    builds, keys, drawer and speaker window (assets/deck.js); and plotly, fetched and
    evaluated as soon as the page is up (``plotly_early_js``)."""
    paths = [common.ASSETS / name for name in ("lecture.js", "deck.js")]
    return [p.read_text(encoding="utf-8") for p in paths if p.exists()] + [js for js in (plotly_early_js(),) if js]


def plotly_early_js() -> str | None:
    """Gradio loads its plotly component (4.6 MB of script, about 0.4 s of the main thread
    here) only once the first figure arrives, after the page's chain of load events. This
    imports the same module, by the same address (so it runs once), as soon as the page is
    up: its evaluation fills the time the page waits for the server instead. None where the
    installed gradio has no such file (then the page is as before)."""
    import gradio
    found = sorted((Path(gradio.__file__).parent / "templates" / "frontend" / "assets").glob("PlotlyPlot-*.js"))
    if not found:
        return None
    name = found[0].name
    return ("() => { const s = document.querySelector('script[type=\"module\"][src*=\"/assets/index-\"]'); "
            f"if (s) {{ import(new URL('./{name}', s.src).href).catch(() => {{}}); }} }}")
