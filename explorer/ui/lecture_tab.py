"""Lecture tab: the article's argument as chapters a speaker clicks through, in English or
Chinese. Endpoint: ``/lecture``.

Each chapter is one screen: its claim, its live figure(s), its own controls (built from the
engine's ``chapter_controls``), a "try this" button (the engine's preset) and a "go deeper"
link that opens the full tab on the same state. Every chapter's controls are built once and
shown or hidden, so switching chapters only changes what is visible; its figures follow.

The engine (``explorer.lecture.view``, ``explorer.lecture.figures``) does all the work;
this module lays out the tab and wires its events to ``lecture_handlers``, which turns its views
into figures, links and markdown. The chapter list and the control specs come from a
torch-free module, so the page still builds without the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from .. import catalog
from . import common, i18n, lecture_checks, source as source_panel
from .deck_html import notes_html, overview_html, talk_length_html
from .lecture_handlers import (MAX_FIGURES, _claim, _info_html, _plan, _text, drawn_once, lecture_api, make_draw,
                               make_prefetch, restyle, screen, try_preset)


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


def _choice(value, words) -> tuple:
    """(what a person reads, the value) of a chapter control's choice: the lecture's own word
    (``choice.<value>``), or a map's name (a catalogue id, or a registry name)."""
    if f"choice.{value}" in words:
        return (i18n.engine_label(f"choice.{value}"), value)
    if value in catalog.map_choices():
        return i18n.map_choice(value)
    return i18n.name_choice(value)


def _component(chapter: int, spec):
    """One chapter control from its ControlSpec; its id names the chapter too (chapters share
    control names, and a page's ids are its own)."""
    label = i18n.engine_label(spec.label_key)
    elem_id = f"lecture-{chapter}-{spec.name}"
    if spec.kind == "bool":
        return gr.Checkbox(bool(spec.default), label=label, elem_id=elem_id)
    if spec.kind == "choice":
        from ..lecture.text import TEXT
        choices = [_choice(c, TEXT) for c in spec.choices]
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
                # The build's formulas (MathML), written by the deck's script from the draw's data.
                gr.HTML(elem_id="lecture-formula", container=False, min_height=0)
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


# ---------------------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------------------

# Runs in the browser: gradio's own locale follows the switch (see assets/lecture.js).
LANG_JS = ("(ch, lang) => { if (window.explorerSetLanguage) { window.explorerSetLanguage(lang); } "
           "return [ch, lang]; }")
# The same with the page's drawn view passed on to the screen (see ``screen``). While the deck
# still waits for the chapter its address named, that chapter is the one said again: a Chinese
# link's switch can fire before its restore has moved the selector, and a draw of the page's
# first chapter then landed after the address's own and took the deck there.
LANG_VIEW_JS = ("(ch, lang, view) => { if (window.explorerSetLanguage) { window.explorerSetLanguage(lang); } "
                "const d = window.explorerDeck; if (d && d.pending !== null && Number.isInteger(d.pendingCh)) "
                "{ ch = d.pendingCh; } return [ch, lang, view]; }")


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
        drawn.then(lambda view: lecture_checks.controls_as_drawn(view, specs), tab.view, tab.all_controls,
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
        drawn.then(lambda view: lecture_checks.controls_as_drawn(view, specs), tab.view, tab.all_controls,
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
