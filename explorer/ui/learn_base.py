"""What the learn tab's parts share (the learn part in ``learn_tab``, the hybrid panel in
``hybrid_panel``, and the Linearize section's streaming handlers): the embedded model's shape,
the learned maps' names, the held-out default, the engine imported on first use, the guard
of streaming handlers, and the reading of the page's language and of whole numbers.
"""

from __future__ import annotations

import functools
import inspect

from .. import catalog
from ..text import Message
from . import common, i18n

N_LAYERS, N_HEADS, _ = catalog.EMBEDDED_SHAPE
LEARNED_LABELS = {name: spec.pretty for name, spec in catalog.FEATURE_MAPS.items() if spec.learned}   # kind -> its name
HELDOUT_DEFAULT = 16          # held-out texts a comparison reads, unless the visitor asks fewer


def _learn_figures_and_views():
    """(figures_learned, learn_views), imported on first use: see common.import_engine."""
    common.import_engine()
    from ..figures import learn as figures_learned
    from ..views import learn as learn_views
    return figures_learned, learn_views


def guarded_stream(fn):
    """``common.guarded`` for generator handlers: their errors surface while iterating,
    after a plain wrapper has already returned. Each item is taken under the guard, so what the
    handler yields (messages, figures, tables) is said in the page's language as it comes."""
    end = object()
    signature = inspect.signature(fn)

    def step(gen, lang="en"):     # lang: the toasts' language, as the handler was called
        return next(gen, end)
    step.__name__ = fn.__name__   # what the server log names when something unexpected fails
    step = common.guarded(step)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        lang = common.handler_lang(signature, args, kwargs)
        gen = fn(*args, **kwargs)
        try:
            while (item := step(gen, lang=lang)) is not end:
                yield item
        finally:
            gen.close()     # a cancelled event closes us: close the inner generator (stops training)
    return wrapper


def _lang(lang) -> str:
    return i18n.normal_lang(lang)


def headed_table(columns):
    """An empty table headed by ``columns`` (messages, kept as they are so that the page can say
    them: pandas would keep only their English text). Built with pandas alone: the page is
    built before the engine is imported."""
    import pandas as pd
    return pd.DataFrame(columns=pd.Index(list(columns), dtype=object))


def _int(value, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(Message("common.err_whole", name=name, value=repr(str(value)[:40]))) from None
