"""The learn tab's part 2, the hybrids: some layers of the embedded MiniLM made linear with a
chosen map, and what that costs. The ``/hybrid`` handler, its figures and its summary; the
numbers come from ``explorer.views.hybrid``. ``learn_tab`` lays the part out and wires it.
The figures, the table and the summary speak in messages: ``common.guarded`` says them in the
page's language.
"""

from __future__ import annotations

import gradio as gr

from .. import catalog
from ..text import Message, say
from . import common, i18n
from .learn_base import HELDOUT_DEFAULT, LEARNED_LABELS, N_HEADS, N_LAYERS, _int, _lang, _learn_figures_and_views

# The learned maps' labels follow the page's language; the fixed maps' names stay as they are.
HYBRID_CHOICES = [i18n.hybrid_choice(name) for name in catalog.HYBRID_MAPS]
MODES = ["chosen layers", "greedy"]


def hybrid_views():
    """explorer.views.hybrid, imported on first use (see _learn_figures_and_views)."""
    common.import_engine()
    from ..views import hybrid
    return hybrid


def render_hybrid(view, presentation=False):
    """(cosine figure, drift figure) of a hybrid's view, their words messages."""
    if view is None:
        return None, None
    fl, _ = _learn_figures_and_views()
    label = catalog.hybrid_map_label(view.map_name)
    cosine = fl.hybrid_cosine(view.path, view.n_layers, label, style=presentation)
    drift = fl.hybrid_drift(view.drift, view.linear_layers, label, style=presentation)
    return cosine, drift


@common.guarded
def run_hybrid(map_name="elu1", mode="greedy", layers=(2, 3), budget=2, num_features=64, seed=0, heldout_count=HELDOUT_DEFAULT,
               presentation=False, trained=None, lang="en", model: str = "", progress=gr.Progress()):
    """Make some layers of the embedded MiniLM linear and measure the cost (``model``: "" or
    all-MiniLM-L6-v2; another model is refused in one sentence).

    Returns (cosine figure, drift figure, table of configurations, summary, view).
    """
    _, lv = _learn_figures_and_views()
    lang = _lang(lang)
    lv.check_minilm_only(model, "hybrid")
    if mode not in MODES:
        raise gr.Error(say("learn.bad_mode", lang), title=say("common.toast_check", lang), print_exception=False)
    trained_map = (trained or {}).get(map_name) if isinstance(trained, dict) else trained
    if map_name in LEARNED_LABELS and trained_map is None:
        raise gr.Error(say("learn.no_map", lang, map=LEARNED_LABELS[map_name], count=N_LAYERS * N_HEADS),
                       title=say("learn.no_map_title", lang), print_exception=False)
    chosen = "greedy" if mode == "greedy" else [_int(i, "layers") for i in (layers or [])]
    if chosen != "greedy" and not chosen:
        raise gr.Error(say("learn.no_layers", lang), title=say("common.toast_check", lang), print_exception=False)
    view = hybrid_views().hybrid_view(map_name, chosen, _int(budget, "budget"), trained_map=trained_map,
                          num_features=_int(num_features, "num_features"), seed=_int(seed or 0, "seed"),
                          heldout_count=_int(heldout_count, "heldout_count"),
                          progress=lambda f, msg: progress(f))
    cosine, drift = render_hybrid(view, presentation)
    return cosine, drift, hybrid_views().hybrid_table(view), hybrid_summary(view), view


def hybrid_summary(view) -> Message:
    none = Message("learn.hyb_none")
    return Message("learn.hyb_summary", map=catalog.hybrid_map_label(view.map_name),
                   linear=", ".join(map(str, view.linear_layers)) or none,
                   kept=", ".join(map(str, view.kept_softmax)) or none,
                   mean=f"{view.cosine_mean:.4f}", worst=f"{view.cosine_min:.4f}", count=view.n_texts,
                   seconds=f"{view.seconds:.1f}")
