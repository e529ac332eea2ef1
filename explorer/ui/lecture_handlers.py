"""The lecture tab's handlers: what its events compute and return. Switching chapters (the
claim, the selector, the controls shown), drawing a chapter (its view and figures, kept in
caches), prefetching the next one, restyling for presentation mode, the "try this" preset, the
chapter's address and its go-deeper link, and the ``/lecture`` endpoint. ``lecture_tab``
lays the tab out and wires these to its components.
"""

from __future__ import annotations

import json
import math
from html import escape

import gradio as gr

from ..catalog import CAUSAL_MODEL
from ..lecture.memo import LRU
from ..lecture.numbers import format_number
from ..text import said
from . import common, i18n, lecture_checks, model_start, source as source_panel, validate

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


def _lecture_figures_and_view():
    """(lecture.figures, lecture.view), imported on first use: see common.import_engine."""
    common.import_engine()
    from ..lecture import figures
    from ..lecture import view as views
    return figures, views


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
    """Each build's one claim, its formulas (MathML, the article's, typeset under the claim)
    and its speaker notes (its notices among them), in ``lang``."""
    return {"claims": [view.claim_in(f"b{k}", lang) for k in range(builds)],
            "formulas": build_formulas(view.ch, lang, builds),
            "notes": [[str(line) for line in view.notes_in(f"b{k}", lang)] for k in range(builds)]}


def build_formulas(ch: int, lang: str, builds: int) -> list[list[str]]:
    """The formulas of each of the chapter's first ``builds`` builds, as MathML (none: [])."""
    typeset = _plan().chapter(ch).formulas(lang)
    return [list(typeset.get(f"b{k}", ())) for k in range(builds)]


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
        shown = (escape(str(value)) if isinstance(value, bool) or not isinstance(value, (int, float))
                 else format_number(value))
        rows.append(f"| {name} | {shown} |")
    return "\n".join(rows)




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
_figures = LRU(VIEW_CACHE_SIZE)          # (view key, presentation) -> [go.Figure], their words messages


def _panel_choice(source, text, preset, n, d, data_seed, temperature, file, model=None):
    """What the lecture reads: None (the engine's own text for the chapter) until the speaker
    changes the data panel, then its text or its sample (a (text, sample key) pair). A model
    other than the embedded one and the one the panel opens on (SmolLM2 once converted, which
    the chapters read by default) makes it a sample: that model reads the text."""
    if source == "text" and model and model not in (source_panel.EMBEDDED_MODEL, source_panel.default_model()):
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


def read_text(ch: int, text, sample_key, lang=None):
    """The sentence chapter ``ch`` reads: the visitor's ``text``, else (no sample either) the
    lecture's own, in the audience's language where the chapter's default model reads Chinese
    (the chapters on SmolLM2), else in English; None where it reads a sample or no text. The
    one place the language picks what is computed: the input, never the words."""
    if text is not None or sample_key is not None or not _plan().chapter(ch).reads_text:
        return text
    from ..lecture import text as lecture_text
    model = _lecture_figures_and_view()[1].default_model(ch)
    return lecture_text.default_text(i18n.normal_lang(lang) if model else "en")


def view_key(ch: int, text, sample_key, controls: dict) -> tuple:
    """The cache key of a chapter's view: what it reads (``text``: the sentence, as
    ``read_text`` gives it) and its controls; no language, so that one view serves both.
    Without a sample the chapter reads its default model, which turns from MiniLM to SmolLM2
    when SmolLM2 is converted while the server runs: that counts too, so no chapter drawn
    before stays on MiniLM beside the others on SmolLM2."""
    return (ch, text, sample_key, tuple(sorted((k, repr(v)) for k, v in controls.items())),
            source_panel.default_model() if sample_key is None else None)


def chapter_key(ch: int, text, sample_key, controls: dict, lang=None) -> tuple:
    """``view_key`` of the chapter as the page asks for it (``text`` None: the default sentence)."""
    return view_key(ch, read_text(ch, text, sample_key, lang), sample_key, controls)


def compute(ch: int, text, sample_key, controls: dict, panel_values=None, progress=None, lang=None):
    """The chapter's view, from the cache when the same chapter, data and controls ran before.
    ``lang`` only picks the default sentence (``read_text``)."""
    _, views = _lecture_figures_and_view()
    if sample_key is None and ch in views.CAUSAL_CHAPTERS:   # its own model, which a Space converts at start
        model_start.wait(progress)
    read = read_text(ch, text, sample_key, lang)

    def make():
        if sample_key is not None and sample_key[0] == "text":     # a chosen model reads the text
            sample = source_panel.load("text", sample_key[1], *panel_values[2:8], model=sample_key[2])
        else:
            sample = source_panel.load(*panel_values[:8]) if sample_key is not None else None
        return views.chapter_view(ch, sample=sample, text=read, progress=progress, **controls)
    return _views.get(view_key(ch, read, sample_key, controls), make)


def chapter_figures(view, lang, presentation, key=None) -> list:
    """The chapter's figures said in ``lang``. Drawn once in messages and cached with the
    view's key when given (no language in it); said after the cache."""
    figures, _ = _lecture_figures_and_view()
    presentation = bool(presentation)

    def make():
        return [_window_sized(f, presentation) for f in figures.chapter_figures(view, style=presentation)]
    drawn = make() if key is None else _figures.get((key, presentation), make)
    return [_said(fig, lang, presentation) for fig in drawn]


def _said(fig, lang, presentation):
    """``fig`` said in ``lang`` and sized for the window again (saying fits its layout anew).
    English is the figure as drawn; another language's is a copy whose words are said, so
    that the handler's own saying (``common.guarded``) leaves it as it is."""
    from ..figures.style import said_figure
    said = said_figure(fig, i18n.normal_lang(lang))
    if said is fig:
        return fig
    said = _window_sized(said, presentation)
    said._draft = None          # said already: nothing for the page to fit again
    return said


def _window_sized(fig, presentation=False):
    """A slide's figure takes its height from the window (the page's stylesheet sizes its
    box): a fixed pixel height is dropped here; on a slide no text is smaller than the
    floor a projector can be read at (``lecture.figure_common.floor_fonts``; a larger window
    enlarges the whole slide). Layout only; nothing drawn changes."""
    if fig.layout.height is not None or fig.layout.autosize is not True:
        fig.update_layout(height=None, autosize=True)
    if presentation:
        from ..lecture.figure_common import floor_fonts
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
    return list(_lecture_figures_and_view()[1].chapter_controls(ch, model=model))


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
            key = chapter_key(ch + 1, text_, sample_key, controls, lang)
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
        "formulas": build_formulas(view.ch, lang, 1)[0],
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
                       progress=lambda fraction, message="": progress(fraction, desc=said(message, lang)), lang=lang)
        figs = render(view, lang, presentation, chapter_key(ch, text_, sample_key, controls, lang))   # and the bar
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
    ch, lang, text, values, presentation = lecture_checks.lecture_request(
        _plan(), chapter, text, lang, controls, presentation, specs_for=lambda c: model_controls(c, known))
    text_ = (text or "").strip() or None
    panel_values = ("text", text_ or "", None, None, None, None, None, None, model or None)
    text_, sample_key = _panel_choice(*panel_values) if model else (text_, None)
    view = compute(ch, text_, sample_key, values, panel_values, lang=lang)
    figs = chapter_figures(view, lang, presentation, chapter_key(ch, text_, sample_key, values, lang))
    params = link_params(view, lang, presentation, text_, sample_key, panel_values)
    return {"chapter": ch, "lang": lang, "controls": dict(view.controls),
            "numbers": {k: float(v) if math.isfinite(float(v)) else None for k, v in view.numbers.items()},
            "notices": [str(n) for n in view.notices_in(lang)],
            "figures": [json.loads(f.to_json()) for f in figs],
            "query": common.query_string(params)}
