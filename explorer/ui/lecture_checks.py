"""The lecture's own request and links checked: its /lecture endpoint (chapter, language, text,
the chapter's controls as a JSON object) and the chapter and control parameters of a link,
with the same bounds and words as every other check (``explorer.ui.validate``)."""

from __future__ import annotations

from .validate import Bound, check, json_object, link, unknown_controls


# The lecture controls that pick a head: their range is the model's, which a request may not
# know (the model is chosen with it); past the last, the chapter clamps to the model with a notice.
HEAD_PICKS = ("layer", "head")


def control_bound(spec, open_above: bool = False) -> Bound:
    """A lecture control's Bound from its ControlSpec (explorer.lecture.chapters);
    ``open_above`` drops the upper end (a layer or head the model clamps)."""
    if spec.kind in ("int", "float"):
        return Bound(spec.name, spec.kind, spec.min, None if open_above else spec.max)
    if spec.kind == "bool":
        return Bound(spec.name, "bool")
    return Bound(spec.name, "choice", choices=tuple(spec.choices))


def chapter_bound(plan) -> Bound:
    chapters = tuple(plan.CHAPTERS)
    return Bound("chapter", "int", chapters[0], chapters[-1])


def lecture_request(plan, chapter, text, lang, controls, presentation, specs_for=None) -> tuple:
    """(chapter, text, lang, controls, presentation) of a /lecture request, each checked;
    missing controls take their defaults. One sentence for the first thing wrong.
    ``specs_for(ch)``: the chapter's controls for the model it reads (default:
    ``plan.chapter_controls``); a layer or head past that model's last is left to the
    chapter, which clamps it with a notice."""
    from ..sources.text import MAX_TEXT_CHARS
    from .i18n import LANGS

    ch = check(chapter_bound(plan), chapter)
    lang = check(Bound("lang", "choice", choices=tuple(LANGS)), lang)
    text = check(Bound("text", "text", max_chars=MAX_TEXT_CHARS, optional=True), text) or ""
    presentation = check(Bound("presentation", "bool"), presentation)
    given = json_object(controls, "controls")
    specs = {spec.name: spec for spec in (specs_for or plan.chapter_controls)(ch)}
    unknown_controls(given, list(specs), ch)
    values = {name: check(control_bound(spec, open_above=name in HEAD_PICKS), given[name]) if name in given
              else spec.default for name, spec in specs.items()}
    return ch, lang, text, values, presentation


def link_chapter(plan, raw, notices: list | None = None) -> int:
    """The chapter a link names, clamped (or the first, for garbage) with a notice."""
    bound = chapter_bound(plan)
    return link(bound, raw, notices, default=int(bound.lo), key="ch")


def link_control(spec, raw, notices: list | None = None, key: str | None = None):
    """A lecture control from a link (``c_<name>``): clamped or ignored with a notice; None
    when the link does not hold it."""
    return link(control_bound(spec), raw, notices, default=None, key=key)


def controls_as_drawn(view, specs: dict) -> tuple:
    """Each chapter control set to what the drawn view used (the engine may clamp a value to
    the text, e.g. a query past the last token), so that slider and figure agree; the layer
    and head sliders also take the range of the model drawn (``view.data["heads_shape"]``:
    30 layers and 9 heads on SmolLM2, 6 and 12 on MiniLM); every other control left alone
    (gr.skip)."""
    import gradio as gr

    used = dict(getattr(view, "controls", None) or {}) if view is not None else {}
    ch = getattr(view, "ch", None)
    last = head_pick_maxima(view)
    out = []
    for c, chapter_specs in specs.items():
        for spec in chapter_specs:
            if c != ch or spec.name not in used:
                out.append(gr.skip())
            elif spec.name in last:
                out.append(gr.update(value=used[spec.name], minimum=spec.min, maximum=last[spec.name]))
            else:
                out.append(used[spec.name])
    return tuple(out)


def head_pick_maxima(view) -> dict:
    """{"layer": last layer, "head": last head} of the model a chapter view drew, from the
    sample it read; {} when it read none (a chapter without a text)."""
    shape = (getattr(view, "data", None) or {}).get("heads_shape") if view is not None else None
    if not shape:
        return {}
    return {"layer": max(int(shape[0]) - 1, 0), "head": max(int(shape[1]) - 1, 0)}
