"""The app's own words in English and Simplified Chinese, for gradio's ``gr.I18n``.

Labels built into the page are translation keys (``label("tab_maps")``); the browser
translates them with the dictionaries below, in the language gradio picks (the browser's,
or the one the language switch sets). Strings the server writes at run time (the lecture's
claims, chapter titles, links) are looked up with ``text(key, lang)`` instead.

The words themselves are data: the page's labels are the ``ui`` area of the language files
(``explorer/text/en/ui.toml``, ``zh/ui.toml``), the tool tabs' run-time words the other
areas. To label another part of the app, add its key to both ``ui.toml`` files and use
``label(key)`` where the component is built. The lecture's own text lives in
``explorer.lecture.text``; ``translations()`` merges it and every other area in, under the
keys ``gradio_key`` gives (gradio's frontend would read a dot as a nested path).
Chinese is written for this app, short enough for a button on a projector.
"""

from __future__ import annotations


import gradio as gr

from .. import text as text_words
from ..text import DEFAULT_LANG, LANGS, normal_lang  # noqa: F401  (one reading of a language code for page and engine)

# What the language switch shows (each language named in itself).
LANG_NAMES = {"en": "English", "zh": "中文"}
# gradio picks the browser's locale only among the ones it ships (zh-CN, zh-TW, ...), and
# looks a locale's keys up in its own dictionary first, then in its language's ("zh").
GRADIO_LOCALES = {"en": "en", "zh": "zh-CN"}

def _ui_words(lang: str) -> dict[str, str]:
    """The page's own labels in ``lang``, from ``explorer/text/<lang>/ui.toml``, under their
    gradio keys."""
    return {gradio_key(key): text_words.template(key, lang) for key in text_words.TEXT if key.startswith(UI_AREA)}


def gradio_key(key: str) -> str:
    """The key gradio's ``I18n`` registers the words of ``key`` under. gradio's frontend reads
    a dot as a path into nested dictionaries, so a key cannot keep its dots: the page's own
    labels (``ui.tab_maps``) are known by their name alone (``tab_maps``), every other key
    (the lecture's, a tool tab's) as ``lecture__`` and its dots as underscores."""
    if key.startswith(UI_AREA):
        return key[len(UI_AREA):]
    return "lecture__" + key.replace(".", "_")


UI_AREA = "ui."
EN: dict[str, str] = _ui_words("en")
ZH: dict[str, str] = _ui_words("zh")


# ---------------------------------------------------------------------------------------
# Labels made from the tool tabs' words (explorer.text, no engine import): the names of
# the maps in the choices, the metrics of the head overview's menu, the metrics glossary.
# ---------------------------------------------------------------------------------------

MAP_CHOICE = "map_"      # the page's key of a map's name in the choices: "map_" and its id
HYBRID_CHOICE = "hybrid_map_"   # ... of a hybrid layer's map: this and its registry name
NAME_CHOICE = "map_name_"       # ... of a registered map by name (a random one, either draw)


def _add_word_labels() -> None:
    from .. import catalog
    from ..text import said, say

    for map_id in catalog.map_choices():
        for lang, table in STRINGS.items():
            table[MAP_CHOICE + map_id] = said(catalog.map_label(map_id), lang)
    for name in catalog.FEATURE_MAPS:
        for lang, table in STRINGS.items():
            table[NAME_CHOICE + name] = said(catalog.map_name(name), lang)
    for name in catalog.HYBRID_MAPS:
        for lang, table in STRINGS.items():
            table[HYBRID_CHOICE + name] = said(catalog.hybrid_map_label(name), lang)
    for key in catalog.OVERVIEW_METRICS:
        for lang, table in STRINGS.items():
            table["metric_" + key] = say(f"common.metric.{key}", lang)
    for method in catalog.SWEEP_METHODS:
        for lang, table in STRINGS.items():
            table["cx_method_" + method] = say(f"complexity.method.{method}", lang)
    for lang, table in STRINGS.items():
        order = dict.fromkeys([*catalog.HEADLINE_METRICS, *catalog.METRIC_INFO])
        lines = [say("common.glossary_line", lang, short=say(f"common.short.{key}", lang),
                   label=say(f"common.metric.{key}", lang), help=say(f"common.help.{key}", lang)) for key in order]
        lines.insert(1, say("common.glossary_line", lang, short=say("maps.spread_column", lang, k=SPREAD_SEEDS),
                          label=say("common.seed_spread", lang, k=SPREAD_SEEDS),
                          help=say("maps.spread_help", lang, more=SPREAD_SEEDS - 1)))
        table["maps_glossary"] = "\n".join(lines)


SPREAD_SEEDS = 5            # explorer.views.maps.SPREAD_SEEDS (the test holds them equal)


def map_choice(map_id: str) -> tuple:
    """(the map's name in the reader's language, its id) for a choice of maps."""
    return (label(MAP_CHOICE + map_id), map_id)


def name_choice(name: str) -> tuple:
    """(the registered map ``name`` in the reader's language, its registry name)."""
    return (label(NAME_CHOICE + name), name)


def hybrid_choice(name: str) -> tuple:
    """(the hybrid layer's map in the reader's language, its registry name)."""
    return (label(HYBRID_CHOICE + name), name)


def metric_choice(key: str) -> tuple:
    """(translated label, key) for the head overview's metric menu."""
    return (label("metric_" + key), key)


STRINGS = {"en": EN, "zh": ZH}
_add_word_labels()

_I18N = gr.I18n(en={}, zh={})    # keys only; the dictionaries go to launch(i18n=translations())


def label(key: str):
    """A label the browser translates (an ``I18nData`` carrying ``key``)."""
    if key not in EN:
        raise KeyError(f"no UI string {key!r} in explorer.ui.i18n")
    return _I18N(key)



def engine_key(key: str) -> str:
    """The gradio key under which the engine's text ``key`` (the lecture's, or a tool tab's
    from ``explorer.text``) is registered."""
    return gradio_key(key)


def engine_label(key: str):
    """A label from the engine's lecture text (e.g. a chapter control's ``label_key``)."""
    return _I18N(engine_key(key))


def text(key: str, lang: str) -> str:
    """A UI string in ``lang``, for what the server writes at run time."""
    return STRINGS[normal_lang(lang)][key]


# Keys gradio's own page looks up but its locale files lack: its status tracker announces a
# finished event to screen readers as i18n("common.complete"), which would read the raw key.
GRADIO_GAPS = {"common.complete": {"en": "Complete", "zh": "完成"}}


def translations() -> gr.I18n:
    """Every dictionary the browser needs: the UI's and the lecture's, for both languages."""
    from ..lecture.text import TEXT   # plain dictionaries, no engine import

    merged = {lang: dict(STRINGS[lang]) for lang in LANGS}
    tool_words = {key: by_lang for key, by_lang in text_words.TEXT.items() if not key.startswith(UI_AREA)}
    for table in (TEXT, tool_words):
        for key, by_lang in table.items():
            if not all(isinstance(v, str) for v in by_lang.values()):
                continue            # lists (speaker notes) are shown by the page itself, not by gradio
            for lang in LANGS:
                merged[lang][engine_key(key)] = by_lang.get(lang) or by_lang.get(DEFAULT_LANG, key)
    for key, by_lang in GRADIO_GAPS.items():
        for lang in LANGS:
            merged[lang][key] = by_lang[lang]
    # Register Chinese under gradio's locale name too: a zh-CN browser finds it directly.
    return gr.I18n(**merged, **{GRADIO_LOCALES["zh"]: merged["zh"]})


# The tab row's ids (ui/__init__ gives each tab elem_id "tab-<id>"; gradio ids its button "<elem_id>-button").
TAB_KEYS = ("lecture", "maps", "quality", "state", "complexity", "learn")


def page_js() -> str:
    """The tab row in the chosen language from the first moment.

    gradio writes the tab buttons' labels once, in the locale the page starts in, and
    translates a tab's label again only when that tab is first shown: after a switch (or a
    link's lang=) the tabs not yet visited kept the other language. This wraps the language
    switch's browser half (assets/lecture.js, explorerSetLanguage) so that it also writes
    every tab button's label in the new language, and writes them again whenever gradio
    redraws the tab row."""
    import json

    labels = {lang: {key: STRINGS[lang][f"tab_{key}"] for key in TAB_KEYS} for lang in LANGS}
    return """() => {
  const LABELS = %s;
  const known = new Set(Object.values(LABELS).flatMap((table) => Object.values(table)));
  let current = null;
  const relabel = () => {
    const table = LABELS[current];
    if (!table) { return; }
    for (const [key, text] of Object.entries(table)) {
      const button = document.getElementById(`tab-${key}-button`);
      if (!button) { continue; }
      // Change the text node gradio wrote, not the button: gradio keeps its own reference to it.
      const walker = document.createTreeWalker(button, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const shown = node.nodeValue.trim();
        if (known.has(shown) && shown !== text) { node.nodeValue = node.nodeValue.replace(shown, text); }
      }
    }
  };
  const setLanguage = window.explorerSetLanguage;
  window.explorerSetLanguage = async (lang) => {
    current = LABELS[lang] ? lang : 'en';
    relabel();
    const done = setLanguage ? await setLanguage(lang) : false;
    relabel();
    setTimeout(relabel, 100);
    return done;
  };
  let pending = false;
  new MutationObserver(() => {
    if (current && !pending) { pending = true; requestAnimationFrame(() => { pending = false; relabel(); }); }
  })
    .observe(document.body, { childList: true, subtree: true, characterData: true });
}""" % json.dumps(labels, ensure_ascii=False)
