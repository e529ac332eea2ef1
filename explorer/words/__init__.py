"""The words the tool tabs write at run time, in English and Simplified Chinese.

Figure titles, axis titles, legends, notices, table headers and error messages of the
maps, quality, state, complexity and learn tabs and of the data panel come from here,
looked up by key: ``w("maps.title_error", lang)``. Each tab keeps its words in a module of
its own (``maps.py``, ``state.py`` ...) as ``TEXT = {key: {"en": ..., "zh": ...}}`` with keys
prefixed by the module's name, so a translator reviews one tab at a time and nothing here
imports the engine. The lecture's words are in ``explorer.lecture.text``; component labels
in ``explorer.ui.i18n``, which also hands every key below to the browser (``gr.I18n``).

Names (softmax, FAVOR+, elu+1, RetNet ...) and units stay in Latin letters in Chinese.
"""

from __future__ import annotations

import importlib
import pkgutil

LANGS = ("en", "zh")


def _load() -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for key, by_lang in module.TEXT.items():
            if not key.startswith(info.name + "."):
                raise KeyError(f"{key!r} in explorer.words.{info.name} must start with {info.name + '.'!r}")
            merged[key] = by_lang
    return merged


TEXT = _load()


def normal_lang(lang) -> str:
    """'zh', 'zh-CN', 'zh-Hans' ... -> 'zh'; anything else -> 'en'."""
    code = str(lang or "").strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGS else "en"


def w(key: str, lang: str = "en", **values) -> str:
    """The words of ``key`` in ``lang``, formatted with ``values``."""
    entry = TEXT[key]
    text = entry[normal_lang(lang)]
    return text.format(**values) if values else text


def from_patterns(sentence, table, lang: str, values=None):
    """An English sentence as the engine writes it, said in ``lang`` through ``table``, a list
    of (compiled pattern, key): the first pattern that matches gives the key, and its named
    parts fill the words (``values(parts)`` may say them in ``lang`` first). None when no
    pattern matches."""
    for pattern, key in table:
        found = pattern.match(str(sentence))
        if found:
            parts = found.groupdict()
            return w(key, lang, **(values(parts) if values is not None else parts))
    return None
