"""The gradio app: one module per tab, wired together here. The only package importing gradio.

    from explorer.ui import build_app, launch_kwargs
    build_app().launch(**launch_kwargs())

Endpoints (gradio_client): /lecture, /maps, /quality, /state, /complexity, /learn, /hybrid. The page's address
always holds the current view as query parameters (?tab=maps&text=...), and opening such
an address restores it: a lecturer can put the link on a slide.
"""

from __future__ import annotations

import gradio as gr

from . import common, complexity_tab, i18n, learn_tab, lecture_tab, maps_tab, quality_tab, source as source_panel, state_tab

TAB_IDS = ("lecture", "maps", "quality", "state", "complexity", "learn")   # the first is where a plain address lands

INTRO = (
    "# Attention Kernel Explorer\n"
    "Softmax attention is kernel regression with the kernel exp(q·k/√d). Replace it by φ(q)·φ(k) and "
    "associativity turns O(N²) into O(N): **(φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV)**. "
    "Compare the maps, measure the approximation, watch the recurrent state, and time it."
)


def build_app() -> gr.Blocks:
    with gr.Blocks(title="Attention Kernel Explorer") as demo:
        with gr.Row(equal_height=True):
            gr.Markdown(INTRO, elem_id="intro")
            presentation = gr.Checkbox(False, label=i18n.label("presentation"),
                                       elem_id="presentation", scale=0, min_width=260)
            lang = lecture_tab.language_switch()
        panel = source_panel.build()
        with gr.Tabs(selected=TAB_IDS[0], elem_id="tabs") as tabs:
            with gr.Tab(i18n.label("tab_lecture"), id="lecture", elem_id="tab-lecture") as lecture_item:
                lecture = lecture_tab.build(panel, presentation, lang)
            with gr.Tab(i18n.label("tab_maps"), id="maps", elem_id="tab-maps"):
                maps = maps_tab.build(panel, presentation)
            with gr.Tab(i18n.label("tab_quality"), id="quality", elem_id="tab-quality"):
                quality = quality_tab.build(panel, presentation)
            with gr.Tab(i18n.label("tab_state"), id="state", elem_id="tab-state"):
                state = state_tab.build(panel, presentation)
            with gr.Tab(i18n.label("tab_complexity"), id="complexity", elem_id="tab-complexity"):
                cx = complexity_tab.build(presentation)
            with gr.Tab(i18n.label("tab_learn"), id="learn", elem_id="tab-learn"):
                learn_tab.build(presentation)

        _wire_presentation(presentation, maps, quality, state, cx)
        _wire_open_head(panel, maps, quality, tabs, presentation)
        _wire_url(demo, panel, presentation, tabs, maps, quality, state, cx)
        lecture_tab.wire_load(demo, lecture, panel, presentation, lang, lecture_item)
    return demo


def launch_kwargs() -> dict:
    """Theme, CSS, page script and translations go to launch() in gradio 6."""
    scripts = [js for js in (common.page_js(), lecture_tab.page_js()) if js]
    page_js = "() => {" + "".join(f" ({js})();" for js in scripts) + " }"
    return {"theme": common.theme(), "css": common.css() + lecture_tab.css(), "js": page_js,
            "i18n": i18n.translations()}


def _wire_presentation(presentation, maps, quality, state, cx):
    """Toggling presentation mode restyles the figures already drawn; nothing is recomputed."""
    def restyle(flag, maps_view, quality_view, x_axis, state_view, cx_view):
        flag = bool(flag)
        q_figs = quality_tab.render(quality_view, flag, x_axis)
        s_figs = state_tab.render(state_view, flag)
        c_figs = complexity_tab.render(cx_view, flag)
        figs = (maps_tab.render(maps_view, flag), *q_figs, *s_figs, *c_figs)
        # Leave empty plots empty rather than sending None over them.
        return tuple(gr.skip() if f is None else f for f in figs)

    presentation.change(
        restyle, [presentation, maps.view, quality.view, quality.x_axis, state.view, cx.view],
        [maps.plot, quality.curves, quality.shape, quality.overview, state.step, state.curves, state.memory,
         cx.plot, cx.claim], js=common.PRESENT_JS, api_visibility="private")


def _wire_open_head(panel, maps, quality, tabs, presentation):
    """Choosing a head in the quality tab's overview opens it in the maps tab."""
    def from_row(table, evt: gr.SelectData):
        try:
            row = table.iloc[evt.index[0]]
            return int(row["layer"]), int(row["head"])
        except Exception:
            return gr.skip(), gr.skip()

    def open_head(layer, head):
        return gr.update(value=int(layer or 0)), gr.update(value=str(int(head or 0))), gr.Tabs(selected="maps")

    maps_inputs = panel.inputs + maps.controls + [presentation]
    quality.heads.select(from_row, quality.heads, [quality.open_layer, quality.open_head],
                         api_visibility="private").then(
        open_head, [quality.open_layer, quality.open_head], [panel.layer, panel.head, tabs],
        api_visibility="private").then(maps_tab.run_maps, maps_inputs, maps.outputs, api_visibility="private")
    quality.open_button.click(open_head, [quality.open_layer, quality.open_head], [panel.layer, panel.head, tabs],
                              api_visibility="private").then(
        maps_tab.run_maps, maps_inputs, maps.outputs, api_visibility="private")


def _wire_url(demo, panel, presentation, tabs, maps, quality, state, cx):
    """On page load, restore the view from the query parameters, then draw it."""
    # (component, query key, type) for every control a link can set; the file cannot travel.
    keys = [(presentation, "present", bool), (panel.source, "src", str), (panel.text, "text", str),
            (panel.preset, "preset", str), (panel.n, "n", int), (panel.d, "d", int), (panel.data_seed, "dseed", int),
            (panel.temperature, "temp", float), (panel.layer, "layer", int), (panel.head, "head", str),
            (maps.causal, "causal", bool), (maps.maps, "maps", list), (maps.m, "m", int), (maps.seed, "seed", int),
            (maps.window, "w", int),
            (quality.causal, "causal", bool), (quality.maps, "qmaps", list), (quality.seeds, "seeds", int),
            (quality.x_axis, "x", str), (quality.m, "m", int), (quality.overview_map, "omap", str),
            (quality.overview_metric, "ometric", str),
            (state.map_label, "smap", str), (state.m, "sm", int), (state.seed, "sseed", int),
            (state.gamma, "gamma", float), (state.strength, "strength", float), (state.t, "t", int),
            (state.kind, "kind", str),
            (cx.n_min, "nmin", int), (cx.n_max, "nmax", int), (cx.points, "points", int), (cx.d, "cd", int),
            (cx.m, "cm", int), (cx.causal, "ccausal", bool), (cx.feature_map, "cmap", str),
            (cx.methods, "methods", list), (cx.repeats, "repeats", int)]

    def restore(request: gr.Request):
        q = dict(request.query_params) if request is not None else {}
        tab = q.get("tab") if q.get("tab") in TAB_IDS else TAB_IDS[0]
        out = [gr.Tabs(selected=tab)]
        for component, key, kind in keys:
            value = common.fit(component, common.param(q, key, kind))
            if component is panel.head and value is not None and value != "mean" and not str(value).isdigit():
                value = None                     # the head box accepts custom values; a link must not
            out.append(gr.skip() if value is None else value)
        return out

    restored = [tabs] + [component for component, _, _ in keys]

    tab_name = gr.Textbox(visible=False)

    def which(request: gr.Request):
        q = dict(request.query_params) if request is not None else {}
        return q.get("tab") if q.get("tab") in TAB_IDS else TAB_IDS[0]

    maps_inputs = panel.inputs + maps.controls + [presentation]
    quality_inputs = panel.inputs + quality.controls + [presentation]
    state_inputs = panel.inputs + state.controls + [presentation]

    outputs_of = {"quality": quality.outputs, "state": state.outputs}

    def maybe(tab, fn):
        """Run ``fn`` only when the URL asked for ``tab`` (the maps tab always draws)."""
        def run(name, *args):
            if name != tab:
                return tuple(gr.skip() for _ in outputs_of[tab])
            return fn(*args)
        return run

    # The .then chain: restore controls, draw the maps (cheap, and the first thing anyone sees),
    # then draw the tab the link pointed at, if it is another data tab.
    load = demo.load(restore, None, restored, api_visibility="private")
    load = load.then(which, None, tab_name, api_visibility="private")
    load = load.then(maps_tab.run_maps, maps_inputs, maps.outputs, api_visibility="private")
    load = load.then(maybe("quality", quality_tab.run_quality), [tab_name, *quality_inputs], quality.outputs,
                     api_visibility="private")
    load = load.then(maybe("state", state_tab.run_state), [tab_name, *state_inputs], state.outputs,
                     api_visibility="private")
    load.then(None, presentation, None, js=common.PRESENT_JS)
