"""The lecture's start-up warm-up: every chapter computed at its defaults and drawn into the
caches the page reads, and what each chapter's Go deeper link opens measured into the caches
of the tab it opens. ``app.py`` runs ``warm`` in the background once the server is up."""

from __future__ import annotations

from . import common, i18n
from .lecture_handlers import _plan, chapter_figures, chapter_key, compute, deeper_params, default_controls


def warm(langs=i18n.LANGS, styles=(True, False)) -> None:
    """Compute every chapter at its defaults and draw its figures, into the caches the page
    reads: run in the background once the server is up, so that a chapter opened by its
    address, or reached with →, is drawn from memory. A chapter that fails is left to its
    request, which will say why."""
    for ch in _plan().CHAPTERS:
        controls = default_controls(ch)
        try:
            for lang in langs:
                key = chapter_key(ch, None, None, controls, lang)
                view = compute(ch, None, None, controls, lang=lang)
                for presentation in styles:     # drawn once in messages: any language's are the same
                    chapter_figures(view, "en", presentation, key)
                _warm_deeper(view, lang)
        except Exception:
            common.log.info("warming lecture chapter %s failed", ch, exc_info=True)


# The session the warm-up's learn-tab measurement is made for (a shipped map judged becomes
# its session's trained map): none a visitor has, forgotten at once.
WARM_SESSION = "lecture-warm-up"


def _warm_deeper(view, lang: str) -> None:
    """What the chapter's Go deeper opens, measured into the caches that tab keeps: the state
    tab's random recall and capacity probes (about half its time, the same for every text),
    the learn tab's held-out comparison of the map shipped for the chapter's layer, and the
    quality tab's curves, shapes and head overview (random maps only: no session's own)."""
    # The engine's own functions, not the tabs' handlers: a handler's request would hold one
    # of the server's heavy slots, and a visitor's request could wait on the warm-up.
    params = deeper_params(view, lang, True, None, None, ())
    if params.get("tab") == "state":
        from ..views import state as state_views
        from ..views.common import load_sample
        sample = load_sample("text", text=params["text"], model=params.get("model"))
        state_views.warm_probes(params.get("smap", "elu1"), int(params.get("sm", 32)), int(params.get("sseed", 0)),
                                sample.head_dim)
    elif params.get("tab") == "quality":
        from ..views import quality as quality_views
        from ..views.common import load_sample
        sample = load_sample("text", text=params["text"], model=params.get("model"))
        # Read as the page reads its link (common.param): the cache key is the page's own.
        maps = common.param(params, "qmaps", list) or None
        causal = common.param(params, "causal", bool)
        quality_views.quality_page(sample, params.get("layer", 2), params.get("head", "3"), maps,
                                   int(params.get("seeds", 10)), causal, int(params.get("m", 64)))
    elif params.get("tab") == "learn" and params.get("model"):
        from ..views import learn as learn_views
        from ..views.common import forget_trained
        from .learn_base import HELDOUT_DEFAULT
        from .learn_tab import DEFAULT_SEEDS
        learn_views.pretrained_result("hedgehog", int(params.get("llayer", 0)), HELDOUT_DEFAULT,
                                      session=WARM_SESSION, model=params["model"], seeds=DEFAULT_SEEDS)
        forget_trained(WARM_SESSION)
