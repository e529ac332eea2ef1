"""Shared UI helpers: error handling, notices, export, presentation mode, URL parameters.

Nothing here computes anything about attention; it turns engine results and errors into
what gradio shows.
"""

from __future__ import annotations

import functools
import logging
import tempfile
import threading
import time
import uuid
import warnings
from pathlib import Path
from urllib.parse import urlencode

import gradio as gr

log = logging.getLogger("explorer.ui")

ASSETS = Path(__file__).resolve().parents[2] / "assets"


# ---------------------------------------------------------------------------------------
# The engine, imported on first use: importing it pulls in torch and plotly (seconds), so
# the page is built from explorer.catalog alone and app.py warms the engine in the
# background once the page is served.
# ---------------------------------------------------------------------------------------

_engine_lock = threading.Lock()


def import_engine() -> None:
    """Import every engine module the handlers use; at once when already done.

    One thread at a time: the feature-map modules import each other, and two threads
    entering that cycle from different ends (say views and views.learn) could deadlock in
    the import system. A request arriving during the warm-up waits here for it.
    """
    with _engine_lock:
        from .. import figures, views  # noqa: F401
        from ..figures import learn as _fl  # noqa: F401
        from ..views import learn as _lv  # noqa: F401


# ---------------------------------------------------------------------------------------
# Errors: a clear message in the UI, never a traceback; the server stays up.
# ---------------------------------------------------------------------------------------

def guarded(fn):
    """Run a UI handler; turn engine ValueErrors into gr.Error with their message.

    Anything unexpected is logged with its traceback on the server and shown to the user
    as one sentence. functools.wraps keeps the signature, so gradio still injects
    gr.Request and gr.Progress arguments.
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except ValueError as exc:
            raise gr.Error(str(exc), title="Please check the input", print_exception=False) from None
        except MemoryError:
            raise gr.Error("Not enough memory for this request; try a smaller N or fewer maps.",
                           title="Too large", print_exception=False) from None
        except Exception as exc:  # the app must survive anything a request throws
            log.exception("handler %s failed", getattr(fn, "__name__", fn))
            raise gr.Error(f"Something went wrong ({type(exc).__name__}: {exc}). The app is still running; "
                           "try other settings.", title="Internal error", print_exception=False) from None
    return wrapper


def notices_markdown(notices, toast: bool = True) -> str:
    """Notices as a short markdown list (kept in the page, and in API results); the first
    few also pop up as warnings."""
    notices = [str(n) for n in dict.fromkeys(notices or [])]
    if toast:
        for n in notices[:3]:
            gr.Warning(n)
    if not notices:
        return ""
    return "\n".join(f"- ⚠ {n}" for n in notices)


# ---------------------------------------------------------------------------------------
# Export: every figure as PNG and interactive HTML, every table as CSV.
# ---------------------------------------------------------------------------------------

_kaleido_lock = threading.Lock()
_kaleido_started = False
EXPORT_ROOT = Path(tempfile.gettempdir()) / "attention-explorer-exports"


def _png(fig, path: Path) -> bool:
    """Write a PNG with kaleido (Chromium); False if no browser is available."""
    global _kaleido_started
    with _kaleido_lock:  # one Chromium at a time; the sync server makes later PNGs fast
        try:
            if not _kaleido_started:
                import kaleido
                kaleido.start_sync_server(silence_warnings=True)
                _kaleido_started = True
            with warnings.catch_warnings():  # plotly passes options the running server ignores, and says so
                warnings.filterwarnings("ignore", message="The kopts argument is ignored")
                fig.write_image(str(path), format="png", width=1600,
                                height=max(int(fig.layout.height or 700), 500), scale=1.5)
            return True
        except Exception as exc:  # kaleido needs chromium; HTML and CSV still work without it
            log.warning("PNG export failed: %s", exc)
            return False


def export_files(prefix: str, figures: dict, tables: dict, png: bool = True) -> list[str]:
    """Write figures (PNG + standalone HTML) and tables (CSV) to a fresh folder; return paths.

    The HTML embeds plotly.js so it opens offline, e.g. on a lecture-hall laptop.
    """
    folder = EXPORT_ROOT / f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fig in figures.items():
        if fig is None:
            continue
        stem = folder / f"{prefix}-{name}"
        fig.write_html(str(stem.with_suffix(".html")), include_plotlyjs=True, full_html=True)
        paths.append(str(stem.with_suffix(".html")))
        if png and _png(fig, stem.with_suffix(".png")):
            paths.append(str(stem.with_suffix(".png")))
    for name, table in tables.items():
        if table is None:
            continue
        path = folder / f"{prefix}-{name}.csv"
        table.to_csv(path, index=False)
        paths.append(str(path))
    if not paths:
        raise gr.Error("Nothing to export yet: run this tab first.", print_exception=False)
    return paths


# ---------------------------------------------------------------------------------------
# URL parameters: the current view as a query string, so a slide can link to it.
# ---------------------------------------------------------------------------------------

def query_string(params: dict) -> str:
    clean = {}
    for key, value in params.items():
        if value is None or value == "":
            continue
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        clean[key] = value
    return urlencode(clean)


# Runs in the browser after a tab's run: put the view into the address bar without a
# reload, and return the full link for the "link to this view" box (inside an iframe, e.g.
# on Spaces, the address bar is not the user's). Plotly's colour bars refer to the page's
# address: assets/app.js (explorerFixGradients) points them at the new one.
SET_URL_JS = """(q) => {
  if (!q) { return ''; }
  window.history.replaceState(null, '', '?' + q);
  if (window.explorerFixGradients) { window.explorerFixGradients(); }
  return window.location.href.split('#')[0];
}"""


def link_box() -> gr.Textbox:
    return gr.Textbox(label="Link to this view (put it on a slide)", interactive=False, lines=1, max_lines=2,
                      buttons=["copy"], elem_classes=["view-link"])


def export_band(what: str, export_id: str | None = None, query_id: str | None = None):
    """The row under a tab's figures (export button, downloads, link to this view) and the
    tab's hidden state (its last view, the view's query string).

    Returns (export, files, link, view, query); ``wire_export`` connects the button.
    """
    with gr.Row():
        export = gr.Button(f"Export {what}", size="sm", elem_id=export_id)
        files = gr.File(label="Downloads", file_count="multiple", interactive=False, visible=False)
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


def param(query: dict, key: str, kind=str, default=None):
    """Read one query parameter, falling back to ``default`` when missing or malformed."""
    if key not in query:
        return default
    raw = query[key]
    try:
        if kind is bool:
            return str(raw).lower() in ("1", "true", "yes", "on")
        if kind is list:
            return [x for x in str(raw).split(",") if x]
        return kind(raw)
    except (TypeError, ValueError):
        return default


def fit(component, value):
    """``value`` made acceptable to ``component`` (clamped to a slider's or number's range,
    kept only if among the choices), or None when it cannot be: a link with a stale or
    mistyped parameter opens the default view instead of an error."""
    if value is None:
        return None
    lo, hi = getattr(component, "minimum", None), getattr(component, "maximum", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value != value:  # NaN
            return None
        if lo is not None:
            value = max(value, lo)
        if hi is not None:
            value = min(value, hi)
        return value
    choices = getattr(component, "choices", None)
    if choices and not getattr(component, "allow_custom_value", False):
        allowed = [c[1] if isinstance(c, (tuple, list)) else c for c in choices]
        if isinstance(value, list):
            kept = [v for v in value if v in allowed]
            return kept or None
        return value if value in allowed else None
    return value


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
    """Page-level script (assets/app.js): click-to-open on the head overview."""
    path = ASSETS / "app.js"
    return path.read_text(encoding="utf-8") if path.exists() else None
