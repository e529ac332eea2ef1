"""The old home of the tool tabs' words, kept as a thin alias while callers move to
``explorer.text`` (where the words now live, as data: ``explorer/text/<lang>/*.toml``).

``w("maps.title_error", lang)`` is ``explorer.text.say``.
"""

from __future__ import annotations

from ..text import LANGS, TEXT, map_name, normal_lang, say  # noqa: F401  (the names callers import)


def w(key: str, lang: str = "en", **values) -> str:
    """The words of ``key`` in ``lang``, formatted with ``values``."""
    return say(key, lang, **values)


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
