"""Every input component of the app checked before gradio's own preprocessing: the one place
that patches gradio. ``install(blocks)`` puts ``validate.check`` in front of each component's
``preprocess``, with bounds read off the component (minimum, maximum, precision, step,
choices) and the name the API gives the parameter, and wraps the Blocks' ``process_api`` (the
page's language for the checks' words, arguments bounded before gradio walks them, lone
surrogates in text boxes) and ``validate_inputs`` (too few values, in one sentence)."""

from __future__ import annotations

import html
import inspect
import logging
import types
from contextvars import ContextVar

from ..text import Message, say_error
from . import upload_sweep
from .validate import MAX_CHOICE_CHARS, Bound, check, check_arguments, surrogates, without_surrogates

log = logging.getLogger("explorer.ui")


def bound_for(component, name: str) -> Bound | None:
    """The Bound a component's own settings imply, or None for components left to gradio."""
    import gradio as gr

    if isinstance(component, gr.Checkbox):
        # A box that may be empty (source.CausalBox: follow the data) takes null as well.
        return Bound(name, "bool", optional=bool(getattr(component, "follows_data", False)))
    if isinstance(component, gr.Slider):
        step = getattr(component, "step", 1) or 1
        whole = float(step).is_integer() and float(component.minimum).is_integer()
        return Bound(name, "int" if whole else "float", component.minimum, component.maximum)
    if isinstance(component, gr.Number):
        whole = getattr(component, "precision", None) == 0
        return Bound(name, "int" if whole else "float", component.minimum, component.maximum, optional=True)
    if isinstance(component, (gr.Dropdown, gr.Radio, gr.CheckboxGroup)):
        values = tuple(c[1] if isinstance(c, (tuple, list)) else c for c in (component.choices or []))
        many = isinstance(component, gr.CheckboxGroup) or getattr(component, "multiselect", False)
        if getattr(component, "allow_custom_value", False):
            return None if many else Bound(name, "free", optional=True, max_chars=MAX_CHOICE_CHARS)
        # A list may be empty, never missing: null would reach gradio's own (internal) message.
        return Bound(name, "choices" if many else "choice", choices=values, optional=not many)
    if isinstance(component, gr.Textbox):          # text, never a number or a list
        return Bound(name, "text", optional=True)
    return None


# The language of the page an event comes from, while gradio processes it: the check below
# runs in gradio's preprocessing, before the handler (and its language argument) is reached.
# The page's address travels with every request, and keeps its language (lang=).
_PAGE_LANG: ContextVar[str] = ContextVar("explorer_page_lang", default="en")


def page_language(request) -> str:
    """The ``lang`` of the page a gradio request comes from ("en" when it says none)."""
    from ..text import normal_lang

    if isinstance(request, list):
        request = request[0] if request else None
    try:
        return normal_lang(request.query_params.get("lang"))
    except AttributeError:
        return "en"


# Lone surrogates replaced in this event's text boxes, for the handler to say once
# (common.guarded): a list per event, shared with the worker thread that runs the handler.
_REPLACED: ContextVar[list | None] = ContextVar("explorer_replaced_surrogates", default=None)


def take_replaced_surrogates() -> int:
    """How many lone surrogates this event's text boxes had replaced before its handler ran;
    counted once (a handler that calls another does not say it twice)."""
    replaced = _REPLACED.get()
    if not replaced:
        return 0
    count = sum(replaced)
    replaced.clear()
    return count


def _checked_preprocess(self, payload):
    import gradio as gr

    from ..text import say

    bound = bound_for(self, self._explorer_param)
    if bound is not None:
        try:
            payload = check(bound, payload)
        except ValueError as exc:
            lang = _PAGE_LANG.get()
            raise gr.Error(html.escape(say_error(exc, lang), quote=False), title=say("common.toast_check", lang),
                           print_exception=False) from None
    try:
        return type(self).preprocess(self, payload)
    except gr.Error as exc:      # gradio's own refusal quotes the value: a pop-up renders HTML
        raise gr.Error(html.escape(str(exc.message), quote=False), title=exc.title, print_exception=False) from None


def _keep_page_language(blocks) -> None:
    """Let the checks know the page's language: every event's processing runs with it. Its
    arguments are bounded first (check_arguments), before gradio walks them."""
    original = blocks.process_api

    async def process_api(*args, **kwargs):
        import gradio as gr
        from gradio.exceptions import InvalidPathError

        from ..text import say

        lang = page_language(kwargs.get("request"))
        block_fn = kwargs["block_fn"] if "block_fn" in kwargs else args[0]
        inputs = kwargs["inputs"] if "inputs" in kwargs else (args[1] if len(args) > 1 else [])
        try:
            check_arguments(inputs if isinstance(inputs, (list, tuple)) else [inputs])
            replaced = _clean_text_inputs(blocks, block_fn, inputs)
        except ValueError as exc:
            log.warning("refused an event's arguments: %s", exc)
            raise gr.Error(html.escape(say_error(exc, lang), quote=False), title=say("common.toast_check", lang),
                           print_exception=False) from None
        session = kwargs.get("session_hash") or getattr(kwargs.get("request"), "session_hash", None)
        upload_sweep.remember(session, inputs)          # its uploads go when the session ends
        tokens = _PAGE_LANG.set(lang), _REPLACED.set([replaced] if replaced else [])
        try:
            return await original(*args, **kwargs)
        except InvalidPathError:
            # A file path the page never uploaded (a hand-made request): gradio refuses it, and
            # its queue would print a traceback for it. One line in the log, words for the visitor.
            log.warning("refused a file path that was not uploaded")
            raise gr.Error(say("common.err_path_not_uploaded", lang), title=say("common.toast_check", lang),
                           print_exception=False) from None
        finally:
            _REPLACED.reset(tokens[1])
            _PAGE_LANG.reset(tokens[0])
    blocks.process_api = process_api


def _clean_text_inputs(blocks, block_fn, inputs) -> int:
    """Lone surrogates in an event's inputs, before gradio or a handler sees them: replaced
    by U+FFFD in free text (in ``inputs`` itself; how many is returned, for the handler to
    say), refused in words in a choice or a number. Gradio's own answers cannot carry them:
    its refusal of a choice quotes the value, and encoding that answer failed with a
    traceback. Checked against the app's own components, whatever a session's copy of them
    says; components without a bound (an API function's arguments) are left to the handler."""
    if isinstance(block_fn, int):
        block_fn = blocks.fns[block_fn]
    if not isinstance(inputs, list):
        return 0
    replaced = 0
    for index, (block, value) in enumerate(zip(getattr(block_fn, "inputs", None) or [], inputs)):
        bad = sum(surrogates(text) for text in _strings_in(value))
        bound = bound_for(block, getattr(block, "_explorer_param", None) or "value") if bad else None
        if bound is None:
            continue
        if bound.kind == "text" and isinstance(value, str):
            inputs[index] = without_surrogates(value)[0]
            replaced += bad
        else:
            raise ValueError(Message("common.refusal_surrogates", name=bound.name, count=bad))
    return replaced


def _count_inputs_first(blocks) -> None:
    """Refuse an event sent fewer values than its function takes, in one sentence, where
    gradio counts them (Blocks.validate_inputs): its own refusal repeats every value sent (up
    to the 4 MB body) and logs a traceback."""
    import gradio as gr

    from ..text import say

    original = blocks.validate_inputs

    def validate_inputs(block_fn, inputs):
        needed = len(getattr(block_fn, "inputs", None) or [])
        if isinstance(inputs, list) and len(inputs) < needed:
            lang = _PAGE_LANG.get()
            message = Message("common.arguments_too_few", needed=needed, count=len(inputs))
            log.warning("refused an event's arguments: %s", message)
            raise gr.Error(message.say(lang), title=say("common.toast_check", lang), print_exception=False)
        return original(block_fn, inputs)
    blocks.validate_inputs = validate_inputs


def _strings_in(value) -> list:
    """The strings of one input: itself, or the strings of a list (a multiple choice)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def install(blocks) -> int:
    """Check every input component of ``blocks`` with ``check`` before gradio's own
    preprocessing (which would round 100.7 to 101 and answer "abc" with a traceback).
    Each component is named as a public endpoint names its parameter, else by its elem_id.
    Returns how many were checked."""
    public, private = _parameter_names(blocks, True), _parameter_names(blocks, False)
    count = 0
    for block in blocks.blocks.values():
        if bound_for(block, "x") is None:
            continue
        block._explorer_param = (public.get(block._id) or getattr(block, "elem_id", None)
                                 or private.get(block._id) or "value")
        block.preprocess = types.MethodType(_checked_preprocess, block)
        count += 1
    if count:
        _keep_page_language(blocks)
        _count_inputs_first(blocks)
    return count


def _parameter_names(blocks, public: bool) -> dict:
    """Component id -> the parameter name the first (public or private) event gives it."""
    names: dict = {}
    fns = blocks.fns.values() if isinstance(blocks.fns, dict) else blocks.fns
    for fn in fns:
        if (getattr(fn, "api_visibility", "public") == "public") != public:
            continue
        params = getattr(fn, "input_parameter_names", None) or _signature_names(getattr(fn, "fn", None))
        for index, component in enumerate(getattr(fn, "inputs", []) or []):
            if index < len(params) and params[index] and component._id not in names:
                names[component._id] = params[index]
    return names


def _signature_names(fn) -> list:
    if fn is None:
        return []
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
