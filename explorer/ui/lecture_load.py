"""The lecture's page load: the language, the chapter and its controls read from the
address, and the chapter drawn when the lecture is the tab on screen (at once from a plain
address, beside the page's own restore). Wired by ``explorer.ui`` after every tab exists."""

from __future__ import annotations

import gradio as gr

from . import common, i18n, lecture_checks, validate
from .gating import only_on
from .deck_html import audience_html
from .lecture_handlers import (CAUSAL_MODEL_NAME, URL_PREFIX, _head_pick, _plan, drawn_once, make_draw, make_prefetch,
                               model_controls, screen)
from .lecture_tab import LectureTab, LANG_JS, _SET_URL_IF_LECTURE_JS, _then_prefetch


def address_controls(q: dict, specs: dict, ch: int, on_lecture: bool, notices: list) -> tuple[list, list]:
    """Every chapter control, in the page's order, as an address ``q`` sets it: what the page
    writes into it on load (a value, a slider put on its model's range, or a skip), and the
    value the chapter's draw then reads. Only chapter ``ch``'s controls are read from the
    address, and only when it opens on the lecture; what it held that could not be used goes
    to ``notices``. The layer and head sliders take the range and defaults of the model each
    chapter reads (the page was built with the embedded MiniLM's, before any model was known)."""
    model = q.get("model") if q.get("model") == CAUSAL_MODEL_NAME else None    # else the lecture's choice
    writes, values = [], []
    for c, chapter_specs in specs.items():
        picks = {}
        if any(spec.name in lecture_checks.HEAD_PICKS for spec in chapter_specs):   # on any tab: reached later
            picks = {spec.name: spec for spec in model_controls(c, model) if spec.name in lecture_checks.HEAD_PICKS}
        for spec in chapter_specs:
            key = URL_PREFIX + spec.name
            bound = picks.get(spec.name, spec)        # a link is clamped to the model's range
            value = lecture_checks.link_control(bound, q.get(key), notices, key) if (on_lecture and c == ch) else None
            if spec.name in picks and picks[spec.name] != spec:
                writes.append(_head_pick(spec, picks, value))
            else:
                writes.append(gr.skip() if value is None else value)
            values.append(bound.default if value is None else value)
    return writes, values


# The keys of a chapter's plain address (its chapter controls aside): one that holds nothing
# else is drawn from the address alone, before the page's own restore has landed.
PLAIN_ADDRESS_KEYS = frozenset({"tab", "ch", "lang", "present", "step", "notes"})


def wire_load(demo, tab: LectureTab, panel, presentation, lang, tab_item):
    """On page load: the language (link, else browser), the chapter and its controls from the
    address; then draw the chapter when the lecture is the tab on screen. Opening the tab
    later draws it too."""
    specs = tab.specs
    chapters = tuple(specs)
    draw, prefetch = make_draw(specs), make_prefetch(specs)
    draw_inputs = [tab.chapter, lang, presentation, *panel.data_inputs, *tab.all_controls]
    browser_lang = gr.Textbox(visible=False)
    wanted = tab.wanted

    def restore(browser, request: gr.Request):
        q = dict(request.query_params) if request is not None else {}
        chosen = q.get("lang") if q.get("lang") in i18n.LANGS else i18n.normal_lang(browser)
        on_lecture = q.get("tab", "lecture") == "lecture"
        notices = []                # what the link held that could not be used as it was (ui/validate.py)
        ch = lecture_checks.link_chapter(_plan(), q.get("ch"), notices) if on_lecture else chapters[0]
        # Presentation mode as the page's own restore reads it (its notices are said there): the
        # chapter is drawn in the link's mode from the start, not redrawn once that restore lands.
        present = common.param(q, "present", bool, notices=[])
        out = [chosen, ch, "lecture" if on_lecture else "", gr.skip() if present is None else bool(present)]
        writes, _ = address_controls(q, specs, ch, on_lecture, notices)
        out.extend(writes)
        for notice in notices[:4]:
            gr.Warning(common.as_text(validate.in_language(notice, chosen)))
        return tuple(out)

    once = drawn_once(draw)

    def early(browser, present_now, source, text, preset, n, d, data_seed, temperature, file, model,
              request: gr.Request, progress=gr.Progress()):
        """A chapter's plain address (``PLAIN_ADDRESS_KEYS``) drawn from the address alone, at
        once, beside the page's restore: the chain restore → screen → draw costs about a
        second of round trips before the figure. The chain's own draw then finds the same
        drawing on the page and sends nothing (``drawn_once``). Any other address (a text, data,
        a model) waits for the chain, which draws what the panel then holds."""
        q = dict(request.query_params) if request is not None else {}
        plain = all(key in PLAIN_ADDRESS_KEYS or key.startswith(URL_PREFIX) for key in q)
        if q.get("tab", "lecture") != "lecture" or not plain:
            return tuple(gr.skip() for _ in tab.outputs)
        chosen = q.get("lang") if q.get("lang") in i18n.LANGS else i18n.normal_lang(browser)
        ch = lecture_checks.link_chapter(_plan(), q.get("ch"), [])          # the restore says what was wrong
        present = common.param(q, "present", bool, notices=[])
        _, values = address_controls(q, specs, ch, True, [])
        panel_values = (source, text, preset, n, d, data_seed, temperature, file, model)   # panel.data_inputs
        return once(None, "", ch, chosen, present_now if present is None else bool(present), *panel_values, *values,
                    progress=progress)

    def draw_if(which, shown_view, query, *args, progress=gr.Progress()):
        if which != "lecture":
            return tuple(gr.skip() for _ in tab.outputs)
        return once(shown_view, query, *args, progress=progress)

    def audience(request: gr.Request):
        return audience_html(request.headers if request is not None else {})

    demo.load(audience, None, tab.audience, api_visibility="private", queue=False)
    first = demo.load(early, [browser_lang, presentation, *panel.data_inputs], tab.outputs,
                      js="(browser, ...rest) => [navigator.language || '', ...rest]", api_visibility="private",
                      concurrency_limit=2, concurrency_id="compute", show_progress_on=tab.plots)
    first.then(None, tab.query, None, js=_SET_URL_IF_LECTURE_JS)
    load = demo.load(restore, browser_lang, [lang, tab.chapter, wanted, presentation, *tab.all_controls],
                     js="() => [navigator.language || '']", api_visibility="private",
                     show_progress_on=[wanted])      # one box, not its 41 outputs (see ui._wire_url)
    load = load.then(None, [tab.chapter, lang], None, js=LANG_JS)     # gradio's labels follow the chosen language
    load = only_on(load, "lecture", wanted)       # a page opened on another tab: its lecture waits to be opened
    load = load.then(screen, [tab.chapter, lang, tab.view], tab.screen_outputs, api_visibility="private", queue=False)
    drawn = load.then(draw_if, [wanted, tab.view, tab.query, *draw_inputs], tab.outputs, api_visibility="private",
                      concurrency_limit=2, concurrency_id="compute", show_progress_on=tab.plots)
    drawn.then(None, tab.query, None, js=_SET_URL_IF_LECTURE_JS)
    drawn.then(lambda view: lecture_checks.controls_as_drawn(view, specs), tab.view, tab.all_controls,
               api_visibility="private", queue=False)
    _then_prefetch(drawn, lambda which, *args: prefetch(*args) if which == "lecture" else "",
                   [wanted, *draw_inputs], tab)

    # Opening the tab draws the chapter if nothing is drawn yet, and puts its address up. The
    # page's own load selects the tab too, before the address is read (the chapter still 0):
    # that select, and any on a page the load draws itself, must leave the drawing to the
    # load, or a stale chapter 0 could land after the address's chapter.
    def draw_once(which, view, *args):
        if view is not None or which != "":
            return tuple(gr.skip() for _ in tab.outputs)
        return draw(*args)

    tab_item.select(draw_once, [wanted, tab.view, *draw_inputs], tab.outputs, api_visibility="private",
                    concurrency_limit=2, concurrency_id="compute", show_progress_on=tab.plots).then(
        None, tab.query, None, js=_SET_URL_IF_LECTURE_JS)
