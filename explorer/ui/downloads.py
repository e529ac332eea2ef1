"""Export: every figure as PNG and interactive HTML, every table as CSV, in a folder of this
process's own that is pruned as it grows and removed at exit."""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
import threading
import time
import uuid
import warnings
from pathlib import Path

from ..text import Message

log = logging.getLogger("explorer.ui")


_kaleido_lock = threading.Lock()
_kaleido_started = False

# Exports and trained maps: one folder per process, pruned as it grows and removed at exit.
EXPORT_ROOT = Path(tempfile.mkdtemp(prefix="attention-explorer-"))
EXPORT_MAX_AGE_S = 3600            # a download link older than this has been used or forgotten
EXPORT_MAX_BYTES = 512 * 2 ** 20   # and the folder never holds more than this
_export_lock = threading.Lock()


def _remove_export_root():
    shutil.rmtree(EXPORT_ROOT, ignore_errors=True)


atexit.register(_remove_export_root)


def prune_exports(max_age_s: float = EXPORT_MAX_AGE_S, max_bytes: int = EXPORT_MAX_BYTES, now: float | None = None):
    """Delete export folders older than ``max_age_s``, then the oldest until the rest fit in ``max_bytes``."""
    now = time.time() if now is None else now
    folders = []
    for folder in EXPORT_ROOT.glob("*"):
        try:
            size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
            folders.append((folder.stat().st_mtime, size, folder))
        except OSError:
            continue
    folders.sort()
    total = sum(size for _, size, _ in folders)
    for mtime, size, folder in folders:
        if now - mtime > max_age_s or total > max_bytes:
            shutil.rmtree(folder, ignore_errors=True)
            total -= size


def export_folder() -> Path:
    """A fresh folder for one export (or one trained map), after pruning the old ones."""
    with _export_lock:
        EXPORT_ROOT.mkdir(parents=True, exist_ok=True)
        prune_exports()
        folder = EXPORT_ROOT / f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def _stop_kaleido():
    global _kaleido_started
    with _kaleido_lock:
        if _kaleido_started:
            try:
                import kaleido
                kaleido.stop_sync_server(silence_warnings=True)
            except Exception:  # shutting down anyway
                pass
            _kaleido_started = False


def _png(fig, path: Path) -> bool:
    """Write a PNG with kaleido (Chromium); False if no browser is available.

    One browser for the whole process (kaleido's sync server), started on the first PNG
    and stopped at exit, so no Chromium outlives the app."""
    global _kaleido_started
    with _kaleido_lock:  # one Chromium at a time; the sync server makes later PNGs fast
        try:
            if not _kaleido_started:
                import kaleido
                kaleido.start_sync_server(silence_warnings=True)
                _kaleido_started = True
                atexit.register(_stop_kaleido)
            with warnings.catch_warnings():  # plotly passes options the running server ignores, and says so
                warnings.filterwarnings("ignore", message="The kopts argument is ignored")
                fig.write_image(str(path), format="png", width=1600,
                                height=max(int(fig.layout.height or 700), 500), scale=1.5)
            return True
        except Exception as exc:  # kaleido needs chromium; HTML and CSV still work without it
            log.warning("PNG export failed: %s", exc)
            return False


def export_files(prefix: str, figures: dict, tables: dict, png: bool = True, provenance: dict | None = None) -> list[str]:
    """Write figures (PNG + standalone HTML) and tables (CSV) to a fresh folder; return paths.

    The HTML embeds plotly.js so it opens offline, e.g. on a lecture-hall laptop. Each CSV
    has its provenance beside it (``explorer.export.write_csv``): ``provenance`` when the tab
    gives one (its data, model and settings), else the engine's and the packages' alone.
    """
    from .. import export as exports, provenance as where_from
    record = provenance or where_from.record(prefix)
    folder = export_folder()
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
        # floats at full precision; NaN, not an empty cell
        paths.extend(exports.write_csv(table, folder / f"{prefix}-{name}.csv", record))
    if not paths:
        raise ValueError(Message("common.toast_nothing"))     # said in the page's language (common.guarded)
    return paths
