"""The learn tab's link: its query string (the tab's controls, presentation mode and the
Linearize section's settings), the wiring that keeps it current as the buttons are pressed,
and what a link opens (the map shipped for the link's model and layer). Wired by
``explorer.ui`` once the page has added the Linearize section below the tab.
"""

from __future__ import annotations

import gradio as gr

from .. import catalog
from . import common
from .learn_base import HELDOUT_DEFAULT, _learn_figures_and_views, _int
from .learn_tab import DEFAULT_SEEDS, LEARN_OUTPUTS, LearnTab, _kind, show_shipped


def shipped_on_open(kind="hedgehog", heldout_count=HELDOUT_DEFAULT, presentation=False, trained=None, lang="en", model: str = "",
                    seeds=DEFAULT_SEEDS, heldout_texts: str = "", layer=None, request: gr.Request = None,
                    progress=gr.Progress()):
    """A link that opens the tab on the causal model (the lecture's "Go deeper") shows the
    shipped map of its model and layer when one ships, so the tab opens drawn; otherwise
    nothing changes."""
    try:
        _, lv = _learn_figures_and_views()
        # Only a link naming another model (the lecture's on SmolLM2): a plain link to the tab
        # opens it as before, its controls first.
        ships = (lv.model_argument(model) is not None
                 and _int(layer, "layer") in lv.shipped_layers(_kind(kind), model))
    except (ValueError, TypeError):
        ships = False
    if not ships:
        return tuple(gr.skip() for _ in range(LEARN_OUTPUTS))
    return show_shipped(kind, heldout_count, presentation, trained, lang, model, seeds, heldout_texts, layer,
                        request=request, progress=progress)


def learn_query(layer=2, head="3", num_features=64, steps=300, seed=0, train_count=40, heldout_count=HELDOUT_DEFAULT,
                hybrid_map="elu1", mode="greedy", layers=(2, 3), budget=2, hybrid_m=64, kind="hedgehog", model="",
                seeds=DEFAULT_SEEDS, presentation=False, *linearize) -> str:
    """The tab's controls as the query string of its link (in the order of ``LearnTab.link_keys``,
    then presentation mode, then the Linearize section's controls when given, in the order of its
    ``link_keys``); the model only when it is not the embedded one (the data panel's links do
    the same)."""
    model = "" if model in (None, catalog.EMBEDDED_MODEL) else model
    params = {
        "tab": "learn", "llayer": layer, "lhead": head, "lm": num_features, "steps": steps, "lseed": seed,
        "ntrain": train_count, "nheld": heldout_count, "hmap": hybrid_map, "hmode": mode,
        "hlayers": list(layers or []), "hk": budget, "hm": hybrid_m, "lkind": kind, "model": model,
        "lseeds": seeds}
    params.update(zip(LINEARIZE_LINK_KEYS, linearize))
    params["present"] = bool(presentation)
    return common.query_string(params)


# The Linearize section's keys in a link (linearize_tab.LinearizeControls.link_keys holds them
# with their controls; a test holds the two equal).
LINEARIZE_LINK_KEYS = ("lset", "lkeep", "lprompt", "lnew")


def wire_link(tab: LearnTab, presentation, linearize=None) -> None:
    """The link follows the tab's buttons: training, the hybrid, and (when the page has the
    section) judging and generating in the Linearize section, whose settings it carries too."""
    tab.linearize = linearize
    extra = tab.linearize_controls
    buttons = [tab.train, tab.hybrid_run] + ([linearize.run, linearize.generate] if linearize is not None else [])
    for button in buttons:
        button.click(learn_query, tab.link_controls + [presentation] + extra, tab.query, api_visibility="private",
                     queue=False).then(None, tab.query, tab.link, js=common.SET_URL_JS)
