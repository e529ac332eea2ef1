"""The engine's figures and views for the tabs' handlers, imported on first use (see
``common.import_engine``): the page is built before torch loads."""

from __future__ import annotations

from . import common


def figures_and_views():
    """(figures, views), imported on first use: see common.import_engine."""
    common.import_engine()
    from .. import figures, views
    return figures, views
