"""The gradio app: one module per tab, wired together here. The only package importing gradio.

    from explorer.ui import build_app, launch_kwargs
    build_app().launch(**launch_kwargs())

Endpoints (gradio_client): /lecture, /maps, /quality, /state, /complexity, /learn, /hybrid, /probe, /linearize, /generate,
/mqar, /mqar_train. The page's address
always holds the current view as query parameters (?tab=maps&text=...), and opening such
an address restores it and draws it: a lecturer can put the link on a slide.

Page behaviour wired here, the same for every tab:
- the data panel sits between the tab row and the tab, and shows only on the tabs that use it;
- a data tab draws itself with its current controls the first time it is opened;
- Enter in the text box, choosing an example, or another layer/head redraws the open tab;
- the address and every tab's link box follow the open tab, and presentation mode, at once.
"""

from __future__ import annotations


import inspect
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl

import gradio as gr

from . import common, complexity_tab, i18n, learn_tab, lecture_tab, maps_tab, quality_tab, source as source_panel, state_tab
from . import learn_links, lecture_handlers, lecture_load, linearize_tab, mqar_tab, probe_tab
from . import gradio_checks, upload_sweep, validate
from .gating import OPEN_DRAWS, only_on

TAB_IDS = ("lecture", "maps", "quality", "state", "complexity", "learn")   # the first is where a plain address lands
DATA_TABS = ("maps", "quality", "state")   # the tabs drawn here that read Q, K, V from the data panel
PANEL_TABS = ("lecture", *DATA_TABS)       # the tabs that show the data panel (the lecture reads its text)


@dataclass
class PageTab:
    """What the page needs to know of one tab: how to draw it, and its link."""

    tab_id: str
    query: gr.Textbox                 # the tab's view as a query string (hidden)
    link: gr.Textbox                  # the "link to this view" box
    draw: object = None               # handler drawing the tab from its controls, or None
    inputs: list | None = None
    outputs: list | None = None
    view: gr.State | None = None      # None until the tab has drawn
    concurrency_id: str = "compute"
    lang: gr.Radio | None = None      # the language switch, for a draw that takes ``lang`` (last)
    after_draw: object = None         # called with each draw's event, to chain what must follow it


def build_app() -> gr.Blocks:
    with gr.Blocks(title="Attention Kernel Explorer") as demo:
        with gr.Row(equal_height=True, elem_id="header"):
            gr.Markdown(i18n.label("intro"), elem_id="intro")
            presentation = gr.Checkbox(False, label=i18n.label("presentation"), info=i18n.label("presentation_info"),
                                       elem_id="presentation", scale=0, min_width=220)
            lang = lecture_tab.language_switch()
        # Placed here, drawn between the tab row and the tab's content (see panel_css).
        panel = source_panel.build()
        # The open tab; a hidden textbox, not a State: the browser-side link code reads it.
        current = gr.Textbox(TAB_IDS[0], visible=False, elem_id="current-tab")
        with gr.Tabs(selected=TAB_IDS[0], elem_id="tabs") as tabs:
            with gr.Tab(i18n.label("tab_lecture"), id="lecture", elem_id="tab-lecture",
                        elem_classes=["uses-data"]) as t_lecture:
                lecture = lecture_tab.build(panel, presentation, lang)
                # The lecture's address is its own query; it has no link box (the slide is the page).
                lecture_link = gr.Textbox(visible=False, elem_id="lecture-link")
            with gr.Tab(i18n.label("tab_maps"), id="maps", elem_id="tab-maps", elem_classes=["uses-data"]) as t_maps:
                maps = maps_tab.build(panel, presentation, lang)
            with gr.Tab(i18n.label("tab_quality"), id="quality", elem_id="tab-quality",
                        elem_classes=["uses-data"]) as t_quality:
                quality = quality_tab.build(panel, presentation, lang)
                # A corpus at a time: the same judging over every head of many texts (its own file,
                # not the data panel's). A section, not a tab: the tab row fits a projector.
                with gr.Accordion(i18n.label("tab_probe"), open=False, elem_id="probe-section"):
                    probe_tab.build(presentation, lang)
            with gr.Tab(i18n.label("tab_state"), id="state", elem_id="tab-state",
                        elem_classes=["uses-data"]) as t_state:
                state = state_tab.build(panel, presentation, lang)
                # Recall as the field measures it: tiny models trained on MQAR (its own data, not the panel's).
                with gr.Accordion(i18n.engine_label("mqar.label_section"), open=False, elem_id="mqar-section") as recall:
                    mqar_tab.build(presentation, lang, recall)
            with gr.Tab(i18n.label("tab_complexity"), id="complexity", elem_id="tab-complexity") as t_cx:
                cx = complexity_tab.build(presentation, lang)
            with gr.Tab(i18n.label("tab_learn"), id="learn", elem_id="tab-learn") as t_learn:
                learn = learn_tab.build(presentation, lang)
                # The whole causal model linearized with shipped maps: the learn tab's second part.
                with gr.Accordion(i18n.label("tab_linearize"), open=False, elem_id="linearize-section"):
                    learn_links.wire_link(learn, presentation, linearize_tab.build(presentation, lang))

        state_inputs = panel.inputs + state.controls + [presentation]      # run_step's
        pages = {
            # The lecture draws itself (lecture_load.wire_load, and its own events); it takes part
            # in the links so that the address follows it like any tab.
            "lecture": PageTab("lecture", lecture.query, lecture_link),
            "maps": PageTab("maps", maps.query, maps.link, maps_tab.run_maps, panel.inputs + maps.controls,
                            maps.outputs, maps.view, lang=lang),
            "quality": PageTab("quality", quality.query, quality.link, quality_tab.run_quality,
                               panel.inputs + quality.controls, quality.outputs, quality.view, "quality", lang=lang),
            "state": PageTab("state", state.query, state.link, state_tab.run_state, panel.inputs + state.controls,
                             state.outputs, state.view,
                             after_draw=lambda drawn: state_tab.keep_step(drawn, state, state_inputs)),
            "complexity": PageTab("complexity", cx.query, cx.link, complexity_tab.run_complexity, cx.controls,
                                  cx.outputs, cx.view, "sweep", lang=lang),
            "learn": PageTab("learn", learn.query, learn.link),
        }
        links = Links(pages, current)
        _wire_presentation(presentation, maps, quality, state, cx, links, lang)
        _wire_summary(panel, presentation, lang)
        _wire_tabs({"lecture": t_lecture, "maps": t_maps, "quality": t_quality, "state": t_state,
                    "complexity": t_cx, "learn": t_learn}, pages, current, presentation, learn, links)
        _wire_redraw(panel, pages, current, presentation, links, lecture, lang, maps, quality)
        _wire_open_head(panel, maps, quality, tabs, current, presentation, links, lang)
        _wire_url(demo, panel, presentation, tabs, current, maps, quality, state, cx, learn, pages, links, lang)
        # The address and the link boxes carry the language: they follow the switch at once.
        links.after(lang.change(None, None, None, api_visibility="private", queue=False))
        lecture_load.wire_load(demo, lecture, panel, presentation, lang, t_lecture)
        # Last, once every event exists: each input checked in the same words (ui/validate.py).
        gradio_checks.install(demo)
    return demo


def launch_kwargs() -> dict:
    """Theme, CSS, page script and translations go to launch() in gradio 6."""
    scripts = [js for js in (common.page_js(), *lecture_tab.page_scripts(), i18n.page_js()) if js]
    page_js = "() => {" + "".join(f" ({js})();" for js in scripts) + " }"
    css = common.css() + panel_css(PANEL_TABS) + "\n" + _asset("projector.css") + lecture_tab.css()
    return {"theme": common.theme(), "css": css, "js": page_js,
            "i18n": i18n.translations()}


def _asset(name: str) -> str:
    """A stylesheet of assets/ (the tool tabs on a projector: projector.css)."""
    path = common.ASSETS / name
    return path.read_text(encoding="utf-8") if path.exists() else ""


def panel_css(data_tabs) -> str:
    """Show the data panel only while a tab that uses it is open.

    Gradio keeps a visited tab in the page with an inline ``display: none``, and an
    unvisited one out of it, so "a .uses-data tab without 'none' in its style" is the
    open one. A new tab needs nothing here: without the class it hides the panel.
    """
    assert data_tabs   # the tabs that use it carry elem_classes=["uses-data"]
    return ("\n.gradio-container:not(:has(#tabs > .tabitem.uses-data:not([style*='none']))) #data-panel "
            "{ display: none !important; }\n")


# ---------------------------------------------------------------------------------------
# Links: the address bar and every tab's link box
# ---------------------------------------------------------------------------------------

# The page has read its address (the restore on load is done): Links may now rewrite it.
RESTORED_JS = "() => { window.explorerRestored = true; }"


class Links:
    """Puts the open tab's view into the address bar and fills every tab's link box.

    Runs in the browser (inside an iframe, e.g. on Spaces, only the page knows its own
    address). A tab that has not drawn yet is linked as ``?tab=<id>`` (and ``present=1``).
    """

    def __init__(self, pages: dict, current: gr.Textbox):
        self.ids = list(pages)
        self.current = current
        self.queries = [p.query for p in pages.values()]
        self.boxes = [p.link for p in pages.values()]
        ids = "[" + ",".join(f"'{i}'" for i in self.ids) + "]"
        self.js = """(current, ...rest) => {
  const ids = %s, n = ids.length;
  const queries = rest.slice(0, n), links = rest.slice(n, 2 * n);
  // Before the page's restore has read its address, the open tab is still the default one:
  // writing it now would replace the address the page was opened with (a "Go deeper" link
  // showed ?tab=lecture, and events sent meanwhile carried it to the server).
  if (!window.explorerRestored) { return links; }
  const tab = ids.includes(current) ? current : ids[0];
  const withLang = %s;
  let q = withLang(queries[ids.indexOf(tab)]);
  if (tab === 'lecture' && window.explorerDeck) {
    // The deck's address with its build: the last draw's (this event may carry none yet),
    // else, before the first draw, the address the page was opened with (its chapter).
    const drawn = q || window.explorerDeck.address;
    if (drawn) { q = window.explorerDeck.withStep(drawn); }
    else if ((new URLSearchParams(window.location.search).get('tab') || 'lecture') === 'lecture') {
      q = window.location.search.slice(1);
    }
  }
  if (!q && new URLSearchParams(window.location.search).get('tab') === tab) {
    q = window.location.search.slice(1);      // not drawn yet: the address it was opened with stays
  }
  if (!q) {
    const p = new URLSearchParams({tab: tab});
    if (document.body.classList.contains('presentation')) { p.set('present', '1'); }
    q = withLang(p.toString());
  }
  window.history.replaceState(null, '', '?' + q);
  const base = window.location.href.split('#')[0].split('?')[0];
  return ids.map((id, j) => queries[j] ? base + '?' + withLang(queries[j]) : (id === tab ? base + '?' + q : links[j]));
}""" % (ids, common.WITH_LANG_JS)

    @property
    def inputs(self) -> list:
        return [self.current, *self.queries, *self.boxes]

    def after(self, dependency):
        """Update the address and the link boxes once ``dependency`` has finished."""
        return dependency.then(None, self.inputs, self.boxes, js=self.js, api_visibility="private")


def with_present(flag, *queries):
    """Every tab's query with present= set to the checkbox: the link follows the mode at once."""
    out = []
    for q in queries:
        if not q:
            out.append(q)
            continue
        params = dict(parse_qsl(q, keep_blank_values=True))
        params["present"] = bool(flag)
        out.append(common.query_string(params))
    return tuple(out)


# ---------------------------------------------------------------------------------------
# Wiring
# ---------------------------------------------------------------------------------------

def _wire_presentation(presentation, maps, quality, state, cx, links, lang=None):
    """Toggling presentation mode restyles the figures already drawn; nothing is recomputed."""
    def restyle(flag, maps_view, quality_view, x_axis, state_view, cx_view, lang="en"):
        flag = bool(flag)
        q_figs = quality_tab.render(quality_view, flag, x_axis, lang)
        s_figs = state_tab.render(state_view, flag)
        c_figs = complexity_tab.render(cx_view, flag, lang)
        # the figures' words are said in the page's language (those drawn in it already stay as they are)
        figs = common.said_outputs((maps_tab.render(maps_view, flag), *q_figs, *s_figs, *c_figs), lang)
        # Leave empty plots empty rather than sending None over them.
        return tuple(gr.skip() if f is None else f for f in figs)

    # The page's class follows every change at once (in the browser); the figures are restyled
    # on a click only (``input``): a link's present=1, set by the page's restore, is read by the
    # tab's own draw, and restyling on that change drew every figure of the tab a second time.
    presentation.change(None, presentation, None, js=common.PRESENT_JS)
    presentation.input(
        restyle, [presentation, maps.view, quality.view, quality.x_axis, state.view, cx.view]
        + ([lang] if lang is not None else []),
        [maps.plot, quality.curves, quality.norms, quality.shape, quality.overview, *state.figures,
         cx.plot, cx.claim], api_visibility="private")
    links.after(presentation.change(with_present, [presentation, *links.queries], links.queries,
                                    api_visibility="private", queue=False))


def _wire_summary(panel, presentation, lang):
    """On a projector the data panel folds to one line naming what the figures read
    ("MiniLM · layer 2 · head 3 · 16 tokens ✎"); a click on it opens the panel. The line
    follows the panel's values and the language; presentation mode off shows the panel."""
    def label(flag, lang_, source, text, preset, n, d, data_seed, temperature, file, model, layer, head):
        if not flag:
            return i18n.label("panel_title")
        tokens = None
        if source == "text":
            try:            # the sample the open tab has just read: cached in the engine
                tokens = source_panel.load(source, text, preset, n, d, data_seed, temperature, file,
                                           model=model).n_tokens
            except Exception:
                tokens = None       # the tab's own draw says what is wrong with the text
        return common.data_summary(lang_, source, text, preset, n, d, layer, head, tokens, model=model)

    inputs = [presentation, lang, *panel.inputs]

    def fold(*args):
        return gr.update(label=label(*args), open=not args[0])

    def relabel(*args):
        return gr.update(label=label(*args))

    kwargs = dict(api_visibility="private", concurrency_limit=2, concurrency_id="summary")
    presentation.change(fold, inputs, panel.accordion, **kwargs)
    gr.on([lang.change, panel.source.change, panel.text.submit, panel.layer.release, panel.head.input,
           panel.example.input, panel.n.submit, panel.d.submit, panel.preset.input],
          relabel, inputs, panel.accordion, trigger_mode="always_last", **kwargs)


def _gated(tab_id: str, fn, n_outputs: int, only_if_empty: bool = False, once_per_open: bool = False):
    """``fn`` run only when ``tab_id`` is the open tab (and, if asked, has not drawn yet);
    otherwise every output is left as it is. Takes (request, current tab, the tab's view,
    *fn's inputs). ``once_per_open``: of the draws a page fires by itself (its load, the
    tab its load selects) only the first with the same inputs runs (``gating.OpenDraws``)."""
    takes_progress = "progress" in inspect.signature(fn).parameters

    def run(request: gr.Request, current, view, *args, progress=gr.Progress()):
        if current != tab_id or (only_if_empty and view is not None) or validate.waits_for_upload(tab_id, args):
            return tuple(gr.skip() for _ in range(n_outputs)) if n_outputs > 1 else gr.skip()
        if once_per_open and not OPEN_DRAWS.first(request, tab_id, args):
            return tuple(gr.skip() for _ in range(n_outputs)) if n_outputs > 1 else gr.skip()
        return fn(*args, progress=progress) if takes_progress else fn(*args)
    run.__name__ = f"{getattr(fn, '__name__', 'draw')}_{tab_id}"
    return run


def _draw(page: PageTab, trigger_dependency_or_triggers, current, presentation, only_if_empty=False,
          once_per_open=False):
    """Chain (or attach) the page's gated draw, then the link update is up to the caller."""
    inputs = [current, page.view, *page.inputs, presentation] + ([page.lang] if page.lang is not None else [])
    fn = _gated(page.tab_id, page.draw, len(page.outputs), only_if_empty, once_per_open)
    kwargs = dict(api_visibility="private", concurrency_limit=1 if page.concurrency_id == "sweep" else 2,
                  concurrency_id=page.concurrency_id)
    if isinstance(trigger_dependency_or_triggers, list):
        drawn = gr.on(trigger_dependency_or_triggers, fn, inputs, page.outputs, trigger_mode="always_last", **kwargs)
    else:
        drawn = trigger_dependency_or_triggers.then(fn, inputs, page.outputs, **kwargs)
    if page.after_draw is not None:
        page.after_draw(drawn)
    return drawn


def _wire_tabs(tab_objects, pages, current, presentation, learn, links):
    """Opening a tab makes it current; a data tab draws itself the first time; the address follows."""
    for tab_id, tab in tab_objects.items():
        opened = tab.select(lambda t=tab_id: t, None, current, api_visibility="private", queue=False)
        page = pages[tab_id]
        if tab_id in DATA_TABS:
            opened = _draw(page, opened, current, presentation, only_if_empty=True, once_per_open=True)
        elif tab_id == "learn":
            opened = opened.then(learn_links.learn_query, learn.link_controls + [presentation] + learn.linearize_controls,
                                 learn.query, api_visibility="private", queue=False)
        links.after(opened)


def _wire_redraw(panel, pages, current, presentation, links, lecture, lang, maps, quality):
    """The data panel's own actions redraw whichever data tab is open (the lecture too: it
    reads the panel's text or sample, not its layer and head); an uploaded file is one of them."""
    def fill(text):
        return gr.skip() if not text else text

    chosen = panel.example.input(fill, panel.example, panel.text, api_visibility="private", queue=False)
    triggers = [panel.text.submit, panel.layer.release, panel.head.input, panel.file.upload]
    # Another model sets the Causal boxes to it first (causal for a causal model), then redraws.
    boxes = [maps.causal, quality.causal]
    picked = panel.model.input(source_panel.pick_model, [panel.model, lang], [panel.model, *boxes],
                               api_visibility="private", queue=False)
    typed = panel.model_typed.then(lambda: (None, None), None, boxes, api_visibility="private", queue=False)
    for tab_id in DATA_TABS:
        links.after(_draw(pages[tab_id], triggers, current, presentation))
        links.after(_draw(pages[tab_id], chosen, current, presentation))
        links.after(_draw(pages[tab_id], picked, current, presentation))
        links.after(_draw(pages[tab_id], typed, current, presentation))

    draw = lecture_handlers.make_draw(lecture.specs)
    lecture_inputs = [lecture.chapter, lang, presentation, *panel.data_inputs, *lecture.all_controls]
    kwargs = dict(api_visibility="private", concurrency_limit=2, concurrency_id="compute")
    redraw = _gated("lecture", draw, len(lecture.outputs))
    inputs = [current, lecture.view, *lecture_inputs]
    links.after(gr.on([panel.text.submit, panel.file.upload], redraw, inputs, lecture.outputs,
                      trigger_mode="always_last", **kwargs))
    # After the pick: a model that is not installed has put the menu back, said once.
    links.after(picked.then(redraw, inputs, lecture.outputs, **kwargs))
    links.after(chosen.then(redraw, inputs, lecture.outputs, **kwargs))
    links.after(panel.model_typed.then(redraw, inputs, lecture.outputs, **kwargs))


def _wire_open_head(panel, maps, quality, tabs, current, presentation, links, lang):
    """Choosing a head in the quality tab's overview opens it in the maps tab."""
    def from_row(table, evt: gr.SelectData):
        try:
            row = table.iloc[evt.index[0]]
            return int(row.iloc[0]), int(row.iloc[1])      # layer, head (headers follow the language)
        except Exception:
            return gr.skip(), gr.skip()

    def open_head(layer, head):
        return (gr.update(value=int(layer or 0)), gr.update(value=str(int(head or 0))), gr.Tabs(selected="maps"),
                "maps")

    maps_inputs = panel.inputs + maps.controls + [presentation, lang]
    targets = [panel.layer, panel.head, tabs, current]
    selected = quality.heads.select(from_row, quality.heads, [quality.open_layer, quality.open_head],
                                    api_visibility="private").then(
        open_head, [quality.open_layer, quality.open_head], targets, api_visibility="private")
    links.after(selected.then(maps_tab.run_maps, maps_inputs, maps.outputs, api_visibility="private"))
    clicked = quality.open_button.click(open_head, [quality.open_layer, quality.open_head], targets,
                                        api_visibility="private")
    links.after(clicked.then(maps_tab.run_maps, maps_inputs, maps.outputs, api_visibility="private"))


def _layer_bound(bound, model):
    """The layer slider's range narrowed to the link's model: the slider's own range is the
    largest built-in model's, and a layer past the named model's would reach the slider after
    it has been narrowed to that model (gradio then refuses it)."""
    if not source_panel.is_built_in(model):
        return bound
    layers = source_panel.shape_of(model)[0]
    return replace(bound, hi=min(bound.hi, layers - 1))


def _wire_url(demo, panel, presentation, tabs, current, maps, quality, state, cx, learn, pages, links, lang):
    """On page load, restore the view from the query parameters (the language too: the link's,
    else the browser's), then draw the tab it names."""
    # (component, query key, type) for every control a link can set; the file cannot travel.
    keys = [(presentation, "present", bool), (panel.source, "src", str), (panel.text, "text", str),
            (panel.preset, "preset", str), (panel.n, "n", int), (panel.d, "d", int), (panel.data_seed, "dseed", int),
            (panel.temperature, "temp", float), (panel.model, "model", str), (panel.layer, "layer", int),
            (panel.head, "head", str),
            (maps.causal, "causal", bool), (maps.maps, "maps", list), (maps.m, "m", int), (maps.seed, "seed", int),
            (maps.window, "w", int), (maps.mechanisms, "mech", list), (maps.gamma, "mgamma", float),
            (maps.gates, "mgates", str), (maps.mechanism_seed, "mseed", int), (maps.lower_bound, "mlb", float),
            (maps.beta, "mbeta", float), (maps.paper, "mpaper", bool),
            (quality.causal, "causal", bool), (quality.maps, "qmaps", list), (quality.seeds, "seeds", int),
            (quality.x_axis, "x", str), (quality.m, "m", int), (quality.overview_map, "omap", str),
            (quality.overview_metric, "ometric", str),
            (state.map_id, "smap", str), (state.m, "sm", int), (state.seed, "sseed", int),
            (state.gamma, "gamma", float), (state.strength, "strength", float), (state.t, "t", int),
            (state.kind, "kind", str), (state.lower_bound, "lb", float), (state.beta, "beta", float),
            (cx.n_min, "nmin", int), (cx.n_max, "nmax", int), (cx.points, "points", int), (cx.d, "cd", int),
            (cx.m, "cm", int), (cx.causal, "ccausal", bool), (cx.feature_map, "cmap", str),
            (cx.methods, "methods", list), (cx.repeats, "repeats", int),
            *learn.link_keys, *(learn.linearize.link_keys if learn.linearize is not None else [])]

    def restore(request: gr.Request, browser: str = ""):
        q = dict(request.query_params) if request is not None else {}
        tab = q.get("tab") if q.get("tab") in TAB_IDS else TAB_IDS[0]
        chosen = q.get("lang") if q.get("lang") in i18n.LANGS else i18n.normal_lang(browser)
        out, notices = [gr.Tabs(selected=tab), tab, chosen], []
        # Random data's N and d are clamped together, to a shape the linked tab can draw.
        shape = dict(zip(("n", "d"), validate.link_shape(tab, q.get("n"), q.get("d"), notices,
                                                         seeds=q.get("seeds"))))
        # The model the panel opens on: the link's; MiniLM for a link with a text and no model (a
        # MiniLM view's); else SmolLM2 once it is converted, as the lecture's chapters read it.
        opened_on = q["model"] if "model" in q else \
            source_panel.EMBEDDED_MODEL if "text" in q else source_panel.default_model()
        for component, key, kind in keys:
            if component in (panel.n, panel.d):
                value = shape[key]
            elif kind in (int, float, bool):     # numbers and flags: the bounds of the control itself
                bound = gradio_checks.bound_for(component, key)
                if component is panel.layer or component is learn.layer:
                    bound = _layer_bound(bound, opened_on if component is panel.layer else q.get("model"))
                value = validate.link(bound, q.get(key), notices, None, key)
            else:
                value = common.fit(component, _typed_list(component, common.param(q, key, kind, notices=notices)),
                                   notices, key)
            if component is panel.head and value is not None and value != "mean" and not str(value).isdigit():
                value = None                     # the head box accepts custom values; a link must not
            if component is panel.model and "model" not in q and opened_on != source_panel.EMBEDDED_MODEL:
                value = opened_on
            if component in (maps.causal, quality.causal) and "causal" not in q:
                # A link without causal= opens as the model computes (causal for a causal model).
                value = source_panel.causal_for(q.get("src", "text"), opened_on)
            out.append(gr.skip() if value is None else value)
        if q.get("src") == "file":
            notices.append(validate.NO_FILE_IN_LINK)
        for notice in list(dict.fromkeys(notices))[:4]:
            gr.Warning(common.as_text(validate.in_language(notice, chosen)))
        return out

    restored = [tabs, current, lang] + [component for component, _, _ in keys]
    browser_lang = gr.Textbox(visible=False)
    # Its progress shows on one hidden box, not on its 69 outputs: the page's script updates
    # the loading status of every component an event has ever shown progress on, at every
    # status change of every event, so each output listed here costs every later event.
    load = demo.load(restore, browser_lang, restored, js="() => [navigator.language || '']",
                     api_visibility="private", show_progress_on=[current])
    demo.unload(upload_sweep.on_unload)      # the session's uploads go with it
    # The open tab draws (each gated on being the one the link named), then the address and
    # the link boxes follow; the learn tab only restores its controls (training is a button).
    # The other tabs' draws stop in the browser (``only_on``): each event a page sends costs
    # it a pass over every component's loading status, on the thread that draws the figure.
    for page in pages.values():
        if page.draw is not None:
            links.after(_draw(page, only_on(load, page.tab_id, current), current, presentation, once_per_open=True))
    on_learn = only_on(load, "learn", current)
    learned = on_learn.then(_gated("learn", learn_links.learn_query, 1),
                            [current, learn.query, *learn.link_controls, presentation, *learn.linearize_controls],
                            learn.query, api_visibility="private")
    links.after(learned)
    # A link that opens the learn tab on a layer a map ships for (the lecture's "Go deeper")
    # opens it drawn: that map against softmax, no training.
    on_learn.then(_gated("learn", learn_links.shipped_on_open, len(learn.learn_outputs), only_if_empty=True),
              [current, learn.view, learn.kind, learn.heldout_count, presentation, learn.trained, lang, learn.model,
               learn.seeds, learn.heldout_texts, learn.layer],
              learn.learn_outputs, api_visibility="private", concurrency_limit=1, concurrency_id="learn-train")
    load.then(None, presentation, None, js=common.PRESENT_JS)
    load.then(None, None, None, js=RESTORED_JS)       # from now on the address follows the page
    # The layer and head controls fit the model the link names (or the default one).
    load.then(source_panel.follow_model, [panel.model, panel.layer, panel.head], [panel.layer, panel.head],
              api_visibility="private", queue=False)
    load.then(learn_tab.follow_model, [learn.model, learn.layer, learn.head, lang], [learn.layer, learn.head],
              api_visibility="private", queue=False)


def _typed_list(component, value):
    """A list read from a link as strings, as ints where the component's choices are ints."""
    choices = getattr(component, "choices", None) or []
    values = [c[1] if isinstance(c, (tuple, list)) else c for c in choices]
    if isinstance(value, list) and values and all(isinstance(v, int) for v in values):
        return [int(v) for v in value if str(v).isdigit() and len(str(v)) < 6]
    return value
