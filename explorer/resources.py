"""Where the files beside the code are: the repository's ``assets/`` folder in a checkout,
``explorer/_assets`` in an installed package (pyproject.toml ships it there). Standard
library only, so the page can be built before the engine is imported."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def assets_dir() -> Path:
    """The assets folder: the checkout's when running from one (edits show at once), else
    the installed package's copy."""
    for candidate in (_PACKAGE.parent / "assets", _PACKAGE / "_assets"):
        if (candidate / "texts").is_dir():
            return candidate
    raise FileNotFoundError(f"the app's assets (texts, styles) are missing: looked in {_PACKAGE.parent / 'assets'} "
                            f"and {_PACKAGE / '_assets'}; reinstall the package")


def asset(*parts: str) -> Path:
    """A file or folder under the assets folder, e.g. ``asset("texts", "train.txt")``."""
    return assets_dir().joinpath(*parts)
