"""Shared UI helpers: error handling, notices, presentation mode, URL parameters (the exports:
``explorer.ui.downloads``).

Nothing here computes anything about attention; it turns engine results and errors into
what gradio shows.
"""

from __future__ import annotations

import base64
import functools
import html
import inspect
import logging
import math
import re
import threading
import zlib
from urllib.parse import urlencode

import gradio as gr

from ..text import DEFAULT_LANG, normal_lang, said_throughout, say
from ..measure import budget
from ..stopping import Stopped
from ..text import Message, say_error
from ..resources import assets_dir
from .. import catalog
from . import gradio_checks, i18n, validate
from .validate import _number   # how a notice shows a number: one way for every notice

log = logging.getLogger("explorer.ui")

ASSETS = assets_dir()          # the checkout's assets/, or the installed package's copy


# ---------------------------------------------------------------------------------------
# The engine, imported on first use: importing it pulls in torch and plotly (seconds), so
# the page is built from explorer.catalog alone and app.py warms the engine in the
# background once the page is served.
# ---------------------------------------------------------------------------------------

_engine_lock = threading.Lock()
_engine_ready = False
# Engine modules that no request imports: the command line (importing it runs it), and a
# benchmark helper that only starts subprocesses. The page's own package (explorer.ui) is
# imported when the page is built.
NOT_SERVED = ("explorer.__main__", "explorer.measure.bench_sources")


def engine_modules() -> list[str]:
    """Every module of the engine a request may import, found on disk (explorer.ui aside)."""
    import pkgutil

    import explorer

    return [found.name for found in pkgutil.walk_packages(explorer.__path__, "explorer.")
            if found.name not in NOT_SERVED and not found.name.startswith("explorer.ui")]


def import_engine() -> None:
    """Import every engine module the handlers use; at once when already done.

    One thread at a time, and all of it in one go: the feature-map modules import each
    other, and two threads entering that cycle from different ends (say views and
    views.learn) could deadlock in the import system, or one could see a module the other
    has half initialised ("cannot import name ... from partially initialized module").
    A request arriving during the warm-up waits here for it; a module imported later by a
    handler (an export, a chapter, a mechanism) is then already there.
    """
    global _engine_ready
    if _engine_ready:
        return
    with _engine_lock:
        if _engine_ready:
            return
        # The sources package first: the warm-up's preload and a request's load_sample would
        # otherwise import it from two threads at once and one could see it half-initialised.
        from .. import sources  # noqa: F401
        from .. import figures, views  # noqa: F401
        from ..figures import learn as _fl
        from ..lecture import figures as _fc  # noqa: F401
        from ..views import learn as _lv
        from ..lecture import view as _lc  # noqa: F401
        # The chapters import their maths, views and figures on first use: here, once, so the
        # warm-up drawing the deck and a request for a chapter never import one side by side.
        from ..lecture import chapters
        for ch in chapters.CHAPTERS:
            chapters.chapter(ch).load()
        # The rest (exports, the deck's export, every mechanism, the theory of random
        # features, ...), found on disk so that a new module needs no line here.
        # A module that cannot be imported here (an optional package missing) is left for
        # the request that needs it, which then says why; the rest of the engine still serves.
        import importlib
        for name in engine_modules():
            try:
                importlib.import_module(name)
            except ImportError:
                log.warning("engine module %s could not be imported at start-up", name, exc_info=True)
        _engine_ready = True


# ---------------------------------------------------------------------------------------
# Errors: a clear message in the UI, never a traceback; the server stays up.
# ---------------------------------------------------------------------------------------

def handler_lang(signature: inspect.Signature, args, kwargs) -> str:
    """The page language a handler was called with (its ``lang`` argument), else English."""
    if "lang" not in signature.parameters:
        return "en"
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return "en"
    return normal_lang(bound.arguments.get("lang", "en"))


def said_outputs(value, lang: str):
    """A handler's outputs as the page shows them: every message in them (in figures, tables,
    updates, text) said in ``lang``. The engine returns messages, so this is the one place
    the page's language meets what was computed; a generator's items are said as they come."""
    if normal_lang(lang) == DEFAULT_LANG:
        return value                          # a message's text is its English form
    if inspect.isgenerator(value):
        return (said_outputs(item, lang) for item in value)
    import pandas as pd                       # loaded with the engine, not with the page
    import plotly.graph_objects as go
    from ..figures.style import said_figure
    if isinstance(value, go.Figure):
        return said_figure(value, lang)
    if isinstance(value, pd.DataFrame):
        table = value.rename(columns=lambda name: said_throughout(name, lang))
        for column in table.columns[table.dtypes == object]:
            table[column] = [said_throughout(cell, lang) for cell in table[column]]
        return table
    if isinstance(value, dict):
        return {name: said_outputs(item, lang) for name, item in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(said_outputs(item, lang) for item in value)
    return said_throughout(value, lang)


def guarded(fn):
    """Run a UI handler; turn engine ValueErrors into gr.Error with their message.

    Anything unexpected is logged with its traceback on the server and shown to the user
    as one sentence. functools.wraps keeps the signature, so gradio still injects
    gr.Request and gr.Progress arguments. A handler with a ``lang`` argument gets its
    toasts' titles and the app's own messages in that language (the engine writes its
    ValueErrors in it already).
    """
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args, kwargs, replaced = clean_arguments(args, kwargs)
        replaced += gradio_checks.take_replaced_surrogates()     # in its text boxes, before it was called
        lang = handler_lang(signature, args, kwargs)
        if replaced:
            gr.Warning(say("common.toast_surrogates", lang, count=replaced))
        try:
            with budget.request():   # what the request's cost checks claim from the server's one budget
                return said_outputs(fn(*args, **kwargs), lang)
        except gr.Error:
            raise
        except Stopped:             # the visitor left or cancelled: no one reads it, nothing to log
            raise gr.Error(say("common.toast_stopped", lang), print_exception=False) from None
        except ValueError as exc:
            # A refusal (of the request model, of a bound) says itself in the page's language.
            message = say_error(exc, lang)
            raise gr.Error(as_text(message), title=say("common.toast_check", lang), print_exception=False) from None
        except MemoryError:
            raise gr.Error(say("common.toast_memory", lang), title=say("common.toast_large", lang),
                           print_exception=False) from None
        except Exception as exc:  # the app must survive anything a request throws
            log.exception("handler %s failed", getattr(fn, "__name__", fn))
            raise gr.Error(as_text(say("common.toast_wrong", lang, what=f"{type(exc).__name__}: {plain(exc)}")),
                           title=say("common.toast_internal", lang), print_exception=False) from None
        finally:
            from .. import memory
            memory.release_after_request()
    return wrapper


def clean_text(value: str) -> tuple[str, int]:
    """``value`` with lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD, and how many."""
    return validate.without_surrogates(value)


def clean_arguments(args, kwargs):
    """Every string argument of a request cleaned at the edge (see clean_text), and the count replaced."""
    total = 0

    def fix(value):
        nonlocal total
        if isinstance(value, str):
            value, bad = clean_text(value)
            total += bad
        elif isinstance(value, list):
            value = [fix(v) for v in value]
        return value

    args = tuple(fix(a) for a in args)
    kwargs = {key: fix(value) for key, value in kwargs.items()}
    return args, kwargs, total


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def plain(message, limit: int = 300) -> str:
    """A message fit for the page: no terminal colour codes, one line, bounded length."""
    text = _ANSI.sub("", str(message)).strip()
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_text(message) -> str:
    """A message for a pop-up: gradio renders a toast's message as HTML, and a value a link,
    an upload or a request put into it must read as the characters it holds."""
    return html.escape(str(message), quote=False)


# What markdown would turn into a link: written as character references, which read the
# same on the page and are never syntax ("[..](..)", and a bare address or e-mail is linked).
_MARKDOWN_LINKS = {"[": "&#91;", "]": "&#93;", "@": "&#64;"}
_BARE_LINK = re.compile(r"(?i)\b(https?|ftp)://|\bwww\.")


def as_markdown_text(message) -> str:
    """A message for a markdown box, read as the characters it holds (see as_text)."""
    text = "".join(_MARKDOWN_LINKS.get(ch, ch) for ch in as_text(message))
    return _BARE_LINK.sub(lambda m: m.group(0).replace(":", "&#58;").replace(".", "&#46;"), text)


MAX_NOTICES = 20


def notices_markdown(notices, toast: bool = True, lang: str = "en") -> str:
    """Notices (messages) said in ``lang`` as a short markdown list (kept in the page, and in
    API results); the first few also pop up as warnings."""
    notices = [plain(said_throughout(n, lang), 600) for n in dict.fromkeys(notices or [])]
    if len(notices) > MAX_NOTICES:
        notices = notices[:MAX_NOTICES] + [say("common.toast_more", lang, count=len(notices) - MAX_NOTICES)]
    if toast:
        for n in notices[:3]:
            gr.Warning(as_text(n))
    if not notices:
        return ""
    return "\n".join(f"- ⚠ {as_markdown_text(n)}" for n in notices)


# ---------------------------------------------------------------------------------------
# URL parameters: the current view as a query string, so a slide can link to it.
# ---------------------------------------------------------------------------------------

# A link must open wherever it is pasted: proxies (nginx: 8 KiB request lines) and gradio's
# own page handler (fails near 70K characters) refuse long ones. A text that makes the query
# longer than LINK_BUDGET travels compressed (zlib, base64url) under ``tz``; if even that is
# too long, the link carries the first part of the text and says how long the whole was.
LINK_BUDGET = 7000
COMPRESSED_KEYS = {"text": "tz"}
CUT_KEY = "tcut"                   # the full text's length, when the link holds only its start
MAX_LINK_TEXT = 100_000            # characters a link's text may unpack to (the text source's own limit)


def query_string(params: dict, budget: int = LINK_BUDGET) -> str:
    """The view's parameters as a query string that always fits in ``budget`` characters."""
    clean = {}
    for key, value in params.items():
        if value is None or value == "":
            continue
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        if isinstance(value, str):
            value = clean_text(value)[0]
        clean[key] = value
    query = urlencode(clean)
    for key, short in COMPRESSED_KEYS.items():
        if len(query) <= budget or not isinstance(clean.get(key), str):
            continue
        text = clean.pop(key)
        rest = urlencode(clean)
        room = budget - len(rest) - len(short) - 2 - len(CUT_KEY) - 10
        packed = _pack(text)
        if len(packed) > room:                  # keep the longest start of the text that fits
            lo, hi = 0, len(text)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if len(_pack(text[:mid])) <= room:
                    lo = mid
                else:
                    hi = mid - 1
            clean[CUT_KEY] = len(text)
            packed = _pack(text[:lo])
        clean[short] = packed
        query = urlencode(clean)
    return query


def _pack(text: str) -> str:
    return base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii").rstrip("=")


def _unpack(packed: str, limit_chars: int = MAX_LINK_TEXT) -> str:
    """The text of a ``tz`` value; refuses anything that is not one or unpacks too far."""
    data = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))
    inflate = zlib.decompressobj()
    raw = inflate.decompress(data, 4 * limit_chars + 4)
    if inflate.unconsumed_tail:
        raise ValueError("the text in this link is longer than the app accepts")
    return raw.decode("utf-8", errors="replace")


# The page's language (what the switch or the browser chose; lecture.js sets <html lang>)
# goes into every link, so that a link opens in the language it was taken in.
WITH_LANG_JS = """(q) => {
  if (!q || /(^|&)lang=/.test(q)) { return q; }
  const lang = (document.documentElement.lang || '').toLowerCase().split('-')[0];
  return ['en', 'zh'].includes(lang) ? q + '&lang=' + lang : q;
}"""


# Runs in the browser after a tab's run: put the view into the address bar without a
# reload, and return the full link for the "link to this view" box (inside an iframe, e.g.
# on Spaces, the address bar is not the user's). Plotly's colour bars refer to the page's
# address: assets/app.js points them at the new one on every replaceState.
SET_URL_JS = """(q) => {
  if (!q) { return ''; }
  q = (%s)(q);
  window.history.replaceState(null, '', '?' + q);
  return window.location.href.split('#')[0];
}""" % WITH_LANG_JS


def link_box() -> gr.Textbox:
    return gr.Textbox(label=i18n.label("view_link"), interactive=False, lines=1, max_lines=2,
                      buttons=["copy"], elem_classes=["view-link"])


def export_band(export_key: str, export_id: str | None = None, query_id: str | None = None):
    """The row under a tab's figures (export button, downloads, link to this view) and the
    tab's hidden state (its last view, the view's query string).

    Returns (export, files, link, view, query); ``wire_export`` connects the button.
    """
    with gr.Row():
        export = gr.Button(i18n.label(export_key), size="sm", elem_id=export_id)
        files = gr.File(label=i18n.label("downloads"), file_count="multiple", interactive=False, visible=False)
        link = link_box()
    return export, files, link, gr.State(None), gr.Textbox(visible=False, elem_id=query_id)


def wire_export(export: gr.Button, fn, inputs: list, files: gr.File) -> None:
    """One export at a time across the app: exports render PNGs, which is slow."""
    export.click(fn, inputs, files, api_visibility="private", concurrency_limit=1, concurrency_id="export")


def show_files(paths):
    """The downloads box appears only once there is something in it."""
    return gr.update(value=paths, visible=True)


# Presentation mode: a class on <body> scales the page's own text (the figures get their
# large fonts from the server side Style).
# It passes its inputs on unchanged (a js hook's return value becomes the Python function's inputs).
PRESENT_JS = ("(...args) => { document.body.classList.toggle('presentation', !!args[0]); "
              "return args.length === 1 ? args[0] : args; }")


# ---------------------------------------------------------------------------------------
# The data panel on a projector: one line that says what the figures read, and opens it.
# ---------------------------------------------------------------------------------------

def data_summary(lang, source, text, preset, n, d, layer, head, n_tokens=None, model=None) -> str:
    """"MiniLM · layer 2 · head 3 · 16 tokens ✎": the data panel folded to one line.
    ``n_tokens`` is the text's length as the model read it (None while not known);
    ``model`` the name the model picker shows (the embedded MiniLM when empty)."""
    tell = i18n.text
    if source == "text":
        what = _short_model_name(model)
        count = tell("summary_tokens", lang).format(n=f"{int(n_tokens):,}") if n_tokens is not None else ""
    elif source == "random":
        what = tell("summary_random", lang).format(preset=preset, d=_number(d or 0))
        count = tell("summary_tokens", lang).format(n=_number(n or 0))
    else:
        what, count = tell("summary_file", lang), ""
    head_text = tell("summary_mean", lang) if str(head) == "mean" else tell("summary_head", lang).format(h=head)
    parts = [what, tell("summary_layer", lang).format(layer=_number(layer or 0)), head_text, count]
    return " · ".join(p for p in parts if p) + " ✎"


def _short_model_name(model) -> str:
    """"MiniLM" for the embedded model, else the picked name without its folder or owner."""
    from ..catalog import EMBEDDED_MODEL
    name = str(model or EMBEDDED_MODEL)
    if name == EMBEDDED_MODEL:
        return "MiniLM"
    return name.rstrip("/").rsplit("/", 1)[-1][:40]


# Numbers a component without its own bounds may receive from a link: JSON (orjson)
# refuses integers of 2^64 and more, so nothing near that may reach the page.
SAFE_INT = 2 ** 53


def param(query: dict, key: str, kind=str, default=None, notices: list | None = None):
    """Read one query parameter, falling back to ``default`` when missing or malformed.

    Never raises, whatever the link holds (integers of any size, garbage, a broken
    ``tz``); when ``notices`` is a list, what was ignored or changed is said there.
    """
    tell = notices.append if notices is not None else (lambda message: None)
    if key in COMPRESSED_KEYS and COMPRESSED_KEYS[key] in query:
        try:
            text = clean_text(_unpack(str(query[COMPRESSED_KEYS[key]])))[0]
        except Exception:
            tell(Message("common.link_unreadable_text", name=key))
            return default
        cut = query.get(CUT_KEY)
        if cut is not None and str(cut).isdigit() and len(str(cut)) < 12 and int(cut) > len(text):
            tell(Message("common.link_cut", kept=f"{len(text):,}", total=f"{int(cut):,}"))
        return text
    if key not in query:
        return default
    raw = str(query[key])
    try:
        if kind is bool:
            return raw.lower() in ("1", "true", "yes", "on")
        if kind is list:
            return [x for x in raw.split(",") if x]
        if kind is str:
            return clean_text(raw)[0]
        if kind is int:
            text = raw.strip()
            if len(text) > 40:                   # Python refuses > 4300 digits; nobody means > 40
                raise ValueError(text)
            try:
                return int(text)
            except ValueError:
                value = float(text)              # "1e3", "12.0"
                if not math.isfinite(value) or value != int(value):
                    raise
                return int(value)
        if kind is float:
            value = float(raw)
            if value != value:
                raise ValueError(raw)
            return value
        return kind(raw)
    except (TypeError, ValueError, OverflowError):
        shown = raw if len(raw) <= 24 else raw[:20] + "…"
        tell(Message("common.link_unreadable", name=key, raw=repr(shown), kind=getattr(kind, "__name__", kind)))
        return default


def fit(component, value, notices: list | None = None, key: str | None = None):
    """``value`` made acceptable to ``component`` (clamped to a slider's or number's range,
    kept only if among the choices), or None when it cannot be: a link with a stale or
    mistyped parameter opens the default view instead of an error. Clamping is said in
    ``notices`` when given."""
    if value is None:
        return None
    tell = notices.append if notices is not None else (lambda message: None)
    lo, hi = getattr(component, "minimum", None), getattr(component, "maximum", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value != value:  # NaN
            return None
        if hi is None:
            hi = SAFE_INT
        if lo is None:
            lo = -SAFE_INT
        fixed = min(max(value, lo), hi)
        if fixed != value:
            name = key or getattr(component, "label", None) or "a value"
            tell(Message("common.link_outside", name=name, value=_number(value), lo=_number(lo), hi=_number(hi),
                        fixed=_number(fixed)))
        return type(value)(fixed) if isinstance(value, int) else fixed
    choices = getattr(component, "choices", None)
    if choices and not getattr(component, "allow_custom_value", False):
        allowed = [c[1] if isinstance(c, (tuple, list)) else c for c in choices]
        if isinstance(value, list):
            kept = [_allowed(v, allowed) for v in value]
            return [v for v in kept if v is not None] or None
        return _allowed(value, allowed)
    return value


def _allowed(value, allowed: list):
    """``value`` if it is among ``allowed``; a map named by its English label (as links carried
    before maps had ids) as its id; else None."""
    if value in allowed:
        return value
    named = catalog.map_id(value)
    return named if named in allowed else None


def theme():
    """System fonts only: the default theme would be fine offline, but being explicit keeps
    any web-font request out of lecture halls without internet."""
    return gr.themes.Soft(
        primary_hue="blue", neutral_hue="slate",
        font=["system-ui", "DejaVu Sans", "Arial", "sans-serif"],
        font_mono=["ui-monospace", "DejaVu Sans Mono", "monospace"],
    )


def css() -> str:
    path = ASSETS / "app.css"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def page_js() -> str | None:
    """Page-level script (assets/app.js): click-to-open on the head overview, and the notice
    with a retry when the connection drops (its words, in both languages, put in here)."""
    path = ASSETS / "app.js"
    if not path.exists():
        return None
    import json
    words = {lang: {"lost": say("common.connection_lost", lang), "retry": say("common.connection_retry", lang)}
             for lang in ("en", "zh")}
    return path.read_text(encoding="utf-8").replace("__EXPLORER_WORDS__", json.dumps(words, ensure_ascii=False))
