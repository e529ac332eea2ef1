"""The old home of the tool tabs' words, kept as a thin alias while callers move to
``explorer.text`` (where the words now live, as data: ``explorer/text/<lang>/*.toml``).

``w("maps.title_error", lang)`` is ``explorer.text.say``.
"""

from __future__ import annotations

from ..text import LANGS, TEXT, map_name, normal_lang, say  # noqa: F401  (the names callers import)


def w(key: str, lang: str = "en", **values) -> str:
    """The words of ``key`` in ``lang``, formatted with ``values``."""
    return say(key, lang, **values)

