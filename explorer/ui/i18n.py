"""The app's own words in English and Simplified Chinese, for gradio's ``gr.I18n``.

Labels built into the page are translation keys (``label("tab_maps")``); the browser
translates them with the dictionaries below, in the language gradio picks (the browser's,
or the one the language switch sets). Strings the server writes at run time (the lecture's
claims, chapter titles, links) are looked up with ``text(key, lang)`` instead.

To translate another part of the app, add its keys to both ``EN`` and ``ZH`` and use
``label(key)`` where the component is built; ``tests/test_i18n.py`` checks the two
dictionaries have the same keys. The lecture's own text (claims, figure titles, control
labels) lives in the engine, ``explorer.lecture.text``; ``translations()`` merges it in.

Keys use underscores, not dots: gradio's frontend would read a dot as a nested path.
Chinese is written for this app, short enough for a button on a projector.
"""

from __future__ import annotations

import gradio as gr

LANGS = ("en", "zh")
DEFAULT_LANG = "en"
# What the language switch shows (each language named in itself).
LANG_NAMES = {"en": "English", "zh": "中文"}
# gradio picks the browser's locale only among the ones it ships (zh-CN, zh-TW, ...), and
# looks a locale's keys up in its own dictionary first, then in its language's ("zh").
GRADIO_LOCALES = {"en": "en", "zh": "zh-CN"}

EN: dict[str, str] = {
    # header and tab row
    "presentation": "Presentation mode",
    "presentation_info": "large fonts, thick lines, colour-blind-safe",
    "language": "Language",
    "tab_lecture": "Lecture",
    "tab_maps": "Attention maps",
    "tab_quality": "Feature-map quality",
    "tab_state": "Recurrent state",
    "tab_complexity": "Complexity",
    "tab_learn": "Learned maps & hybrids",
    # data panel
    "panel_title": "Data: where Q, K, V come from",
    "panel_source": "Source",
    "panel_source_info": "text: all-MiniLM-L6-v2 reads it",
    "panel_layer": "Layer",
    "panel_head": "Head",
    "panel_head_info": "'mean': all heads",
    "panel_text": "Text (up to 512 tokens)",
    "panel_text_placeholder": "Type or paste a text: Enter redraws, Shift+Enter starts a new line",
    "panel_examples": "Examples",
    "panel_examples_info": "choose one to draw it",
    "panel_preset": "Preset",
    "panel_n": "N tokens",
    "panel_d": "head dim d",
    "panel_seed": "data seed",
    "panel_temperature": "temperature",
    "panel_temperature_info": "divides the logits",
    "panel_file": "q, k (and v): .npz with arrays q, k, v; .npy stacked (2 or 3, [H,] N, d); .pt dict",
    # lecture tab
    "lecture_chapter": "Chapter",
    "lecture_prev": "◀ Previous",
    "lecture_next": "Next ▶",
    "lecture_try": "Try this",
    "lecture_controls": "This chapter's controls",
    "lecture_numbers": "Numbers",
    "lecture_keys": "← / → or PageUp / PageDown: previous / next chapter",
    "lecture_deeper": "Go deeper: the {tab} tab on this view",
}

ZH: dict[str, str] = {
    "presentation": "演示模式",
    "presentation_info": "大字号、粗线条、色盲友好配色",
    "language": "语言",
    "tab_lecture": "讲解",
    "tab_maps": "注意力图",
    "tab_quality": "特征映射质量",
    "tab_state": "循环状态",
    "tab_complexity": "复杂度",
    "tab_learn": "可学习映射与混合模型",
    "panel_title": "数据：Q、K、V 从哪里来",
    "panel_source": "来源",
    "panel_source_info": "text：由 all-MiniLM-L6-v2 读入",
    "panel_layer": "层",
    "panel_head": "头",
    "panel_head_info": "“mean”：所有头的平均",
    "panel_text": "文本（最多 512 个词元）",
    "panel_text_placeholder": "输入或粘贴文本：Enter 重画，Shift+Enter 换行",
    "panel_examples": "示例",
    "panel_examples_info": "选一个即画出",
    "panel_preset": "预设",
    "panel_n": "词元数 N",
    "panel_d": "头维度 d",
    "panel_seed": "数据随机种子",
    "panel_temperature": "温度",
    "panel_temperature_info": "logits 除以它",
    "panel_file": "q、k（及 v）：含数组 q、k、v 的 .npz；堆叠的 .npy（2 或 3，[H,] N, d）；.pt 字典",
    "lecture_chapter": "章节",
    "lecture_prev": "◀ 上一章",
    "lecture_next": "下一章 ▶",
    "lecture_try": "试一试",
    "lecture_controls": "本章的控件",
    "lecture_numbers": "数值",
    "lecture_keys": "← / → 或 PageUp / PageDown：上一章 / 下一章",
    "lecture_deeper": "深入一步：在“{tab}”标签页中打开同一视图",
}

STRINGS = {"en": EN, "zh": ZH}

_I18N = gr.I18n(en={}, zh={})    # keys only; the dictionaries go to launch(i18n=translations())


def label(key: str):
    """A label the browser translates (an ``I18nData`` carrying ``key``)."""
    if key not in EN:
        raise KeyError(f"no UI string {key!r} in explorer.ui.i18n")
    return _I18N(key)


def engine_key(key: str) -> str:
    """The gradio key under which the engine's lecture text ``key`` is registered."""
    return "lecture__" + key.replace(".", "_")


def engine_label(key: str):
    """A label from the engine's lecture text (e.g. a chapter control's ``label_key``)."""
    return _I18N(engine_key(key))


def normal_lang(lang) -> str:
    """'zh', 'zh-CN', 'zh-Hans-CN' ... -> 'zh'; anything not offered -> the default."""
    code = str(lang or "").strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGS else DEFAULT_LANG


def text(key: str, lang: str) -> str:
    """A UI string in ``lang``, for what the server writes at run time."""
    return STRINGS[normal_lang(lang)][key]


def translations() -> gr.I18n:
    """Every dictionary the browser needs: the UI's and the lecture's, for both languages."""
    from ..lecture.text import TEXT   # plain dictionaries, no engine import

    merged = {lang: dict(STRINGS[lang]) for lang in LANGS}
    for key, by_lang in TEXT.items():
        for lang in LANGS:
            merged[lang][engine_key(key)] = by_lang.get(lang) or by_lang.get(DEFAULT_LANG, key)
    # Register Chinese under gradio's locale name too: a zh-CN browser finds it directly.
    return gr.I18n(**merged, **{GRADIO_LOCALES["zh"]: merged["zh"]})
