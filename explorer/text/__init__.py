"""Every word a person reads, in English and Simplified Chinese, as data.

The words live in ``explorer/text/<lang>/<area>.toml`` (read with the standard library's
``tomllib``): the file ``maps.toml`` holds the key ``maps.title_error`` as ``title_error``;
nested tables join with ".". Values are ``str.format`` templates with the same
placeholders in both languages. A translator reviews ``zh/`` without reading code.

The engine and the views do not write prose; they return a ``Message`` (a key and its
values) and the edge says it in a language with ``say``. A message is also a ``str``: its
English form, which is what logs, exceptions and the English page show, so code that
only passes text along needs no change. A value that is itself a message (or a ``ModelName``)
is said in the same language.

Names (softmax, FAVOR+, elu+1, RetNet ...) and units stay in Latin letters in Chinese;
``zh/common.toml`` lists them (``kept_in_latin()``). Nothing here imports the engine.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

LANGS = ("en", "zh")
DEFAULT_LANG = "en"
HERE = Path(__file__).resolve().parent
# A key whose last part starts with this is a note about the file (such as the list of
# terms kept in Latin letters), not words to say.
META_PREFIX = "_"


def normal_lang(lang) -> str:
    """'zh', 'zh-CN', 'zh-Hans' ... -> 'zh'; anything else -> 'en'."""
    code = str(lang or "").strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGS else DEFAULT_LANG


def _flatten(table: dict, prefix: str, out: dict, meta: dict) -> None:
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if name.startswith(META_PREFIX):
            meta[key] = value
        elif isinstance(value, dict):
            _flatten(value, key, out, meta)
        elif isinstance(value, str):
            out[key] = value
        else:
            raise TypeError(f"{key}: words must be text, got {type(value).__name__}")


def _read(lang: str) -> tuple[dict[str, str], dict[str, object], dict[str, str]]:
    """(key -> template, key -> note, key -> the file that holds it) of one language."""
    words, meta, files = {}, {}, {}
    for path in sorted((HERE / lang).glob("*.toml")):
        found: dict[str, str] = {}
        with path.open("rb") as handle:
            _flatten(tomllib.load(handle), path.stem, found, meta)
        for key in found:
            files[key] = f"{lang}/{path.name}"
        words.update(found)
    return words, meta, files


def _load():
    by_lang, meta, files = {}, {}, {}
    for lang in LANGS:
        by_lang[lang], meta[lang], files[lang] = _read(lang)
    keys = dict.fromkeys([*by_lang[DEFAULT_LANG], *(k for lang in LANGS for k in by_lang[lang])])
    merged = {key: {lang: by_lang[lang][key] for lang in LANGS if key in by_lang[lang]} for key in keys}
    return merged, meta, files


# key -> {lang: template}; a key missing in a language falls back to English (the tests
# hold both files to the same keys, so this only matters while one is being written).
TEXT, META, FILES = _load()


def has(key: str) -> bool:
    return key in TEXT


def template(key: str, lang: str = DEFAULT_LANG) -> str:
    """The unformatted words of ``key`` in ``lang``."""
    entry = TEXT[key]
    return entry.get(normal_lang(lang)) or entry[DEFAULT_LANG]


def say(key_or_message, lang: str = DEFAULT_LANG, **values) -> str:
    """The words of a key (with ``values``) or of a ``Message`` in ``lang``. Values that
    can say themselves (messages, names) are said in ``lang`` first. Text that is neither
    a key nor a message is returned as it is (a sentence nobody wrote as a message yet)."""
    if isinstance(key_or_message, Message):
        key, values = key_or_message.key, {**key_or_message.values, **values}
    elif not values and callable(getattr(key_or_message, "say", None)):
        return key_or_message.say(lang)           # joined messages, an exception's words, a name
    elif key_or_message in TEXT:
        key = key_or_message
    elif values or _looks_like_key(key_or_message):
        raise KeyError(f"no words for {key_or_message!r} in explorer/text")
    else:
        return str(key_or_message)
    words = template(key, lang)
    if not values:
        return words
    return words.format(**{name: _said(value, lang) for name, value in values.items()})


AREAS = frozenset(key.split(".", 1)[0] for key in TEXT)
_KEY = re.compile(r"^[a-z_]+(\.[A-Za-z0-9_]+)+$")


def _looks_like_key(text) -> bool:
    return isinstance(text, str) and bool(_KEY.match(text)) and text.split(".", 1)[0] in AREAS


def _said(value, lang: str):
    speak = getattr(value, "say", None)
    return speak(lang) if callable(speak) else value


def _rebuild(cls, key, values):
    return cls(key, **values)


class Message(str):
    """A key of the language files and the values its words need. As a ``str`` it is the
    English form (for logs, exceptions and the English page); ``say(lang)`` gives another."""

    def __new__(cls, key: str, /, **values):
        if key not in TEXT:
            raise KeyError(f"no words for {key!r} in explorer/text")
        self = super().__new__(cls, say(key, DEFAULT_LANG, **values))
        self.key, self.values = key, values
        return self

    def say(self, lang: str = DEFAULT_LANG) -> str:
        return say(self, lang)

    def __reduce__(self):           # copies and pickles keep the key, not only the words
        return _rebuild, (type(self), self.key, self.values)


class Joined(str):
    """Several values said one after the other, with the words of ``separator`` (a key)
    between them: "a; b" in English, "a；b" in Chinese. No separator: one after the other,
    as a title and its qualifier ("FAVOR+" and " · 3 rows undefined")."""

    def __new__(cls, items, separator: str = ""):
        items = tuple(items)
        self = super().__new__(cls, say(separator).join(str(item) for item in items))
        self.items, self.separator = items, separator
        return self

    def say(self, lang: str = DEFAULT_LANG) -> str:
        return say(self.separator, lang).join(str(_said(item, lang)) for item in self.items)

    def __reduce__(self):
        return Joined, (self.items, self.separator)


# Models a person reads by more than their id: the id stays what links, requests and
# exports carry ("model=SmolLM2-135M"); the words say which file it really is.
MODEL_KEYS = {"SmolLM2-135M": "sources.model_name.smollm2"}


def model_name(name, lang: str = DEFAULT_LANG) -> str:
    """How the page names the model with id ``name`` in ``lang``; other ids as they are."""
    key = MODEL_KEYS.get(str(name))
    return say(key, lang) if key else str(name)


class ModelName(str):
    """A model's id among a message's values (or in a sample's info): compares and links as
    the id, said as the page names the model ("SmolLM2-135M-Instruct (Q4_1, ...)")."""

    def say(self, lang: str = DEFAULT_LANG) -> str:
        return model_name(str(self), lang)

    def __reduce__(self):
        return ModelName, (str(self),)


def said(value, lang: str = DEFAULT_LANG):
    """``value`` in ``lang`` when it can say itself (a message, a name); anything else as it is."""
    return _said(value, lang)


def said_throughout(value, lang: str = DEFAULT_LANG):
    """``value`` with every message inside it said in ``lang``: dicts, lists and tuples are
    copied with their messages said (a named tuple keeps its type); NumPy arrays of objects
    too; anything else is returned as it is. The edge runs a handler's outputs through this,
    so what the engine returns can stay in messages to the last moment."""
    speak = getattr(value, "say", None)
    if isinstance(value, str):
        return speak(lang) if callable(speak) else value
    if isinstance(value, dict):
        return {name: said_throughout(item, lang) for name, item in value.items()}
    if isinstance(value, list):
        return [said_throughout(item, lang) for item in value]
    if isinstance(value, tuple):
        items = [said_throughout(item, lang) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if getattr(value, "dtype", None) == object and hasattr(value, "shape"):
        out = value.copy()
        for index, item in enumerate(value.flat):
            out.flat[index] = said_throughout(item, lang)
        return out
    return value


def say_error(exc: BaseException, lang: str = DEFAULT_LANG) -> str:
    """An exception's sentence in ``lang``: one that carries a message (or says itself)
    speaks it; any other says its text."""
    speak = getattr(exc, "say", None)
    if callable(speak):
        return speak(lang)
    if len(exc.args) == 1 and callable(getattr(exc.args[0], "say", None)):
        return exc.args[0].say(lang)
    return str(exc)


class ErrorWords(str):
    """An exception's sentence kept to be said later (in a notice of a computed view): its
    words in every language are taken when it is caught, so it copies and caches as text."""

    def __new__(cls, exc_or_words):
        by_lang = exc_or_words if isinstance(exc_or_words, dict) else \
            {lang: say_error(exc_or_words, lang) for lang in LANGS}
        self = super().__new__(cls, by_lang[DEFAULT_LANG])
        self.by_lang = by_lang
        return self

    def say(self, lang: str = DEFAULT_LANG) -> str:
        return self.by_lang.get(normal_lang(lang), str(self))

    def __reduce__(self):
        return ErrorWords, (self.by_lang,)


def kept_in_latin() -> list[str]:
    """The terms the Chinese files keep in Latin letters (listed in ``zh/common.toml``)."""
    return list(META["zh"].get("common._kept_in_latin", []))
