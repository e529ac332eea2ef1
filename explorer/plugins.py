"""Feature maps from outside the package, for a local server and the command line.

A module names its map's facts and its class, and registers both on import:

    from explorer.core.feature_maps import FeatureMapSpec, add_spec
    from explorer.maps import FeatureMap, register

    @register
    class Softplus(FeatureMap):
        spec = add_spec(FeatureMapSpec("softplus", "softplus", lambda d: d))

        def features(self, x, is_query):
            return torch.nn.functional.softplus(x)

``EXPLORER_FEATURE_MAPS`` (or ``python app.py --feature-maps``) names such modules, by module
name or by the path of a .py file, separated by commas; ``load`` imports them before the page
is built, and every view that lists maps lists theirs. A public server (a Space, ``--public``)
runs no code from outside the package: ``load`` refuses there, before importing anything.
See docs/maps.md.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

from .catalog import public_server
from .core.feature_maps import SPECS

ENV = "EXPLORER_FEATURE_MAPS"


class Refused(RuntimeError):
    """Maps from outside the package asked of a public server."""


def named(raw: str | None = None) -> list[str]:
    """The modules ``raw`` (default: the environment's ``EXPLORER_FEATURE_MAPS``) names."""
    raw = os.environ.get(ENV, "") if raw is None else raw
    return [item.strip() for item in raw.split(",") if item.strip()]


def load(raw: str | None = None) -> list[str]:
    """Import the modules ``raw`` names (see ``named``); the names of the maps they added."""
    modules = named(raw)
    if not modules:
        return []
    if public_server():
        raise Refused(f"{ENV}: a public server runs no code from outside the package; "
                      f"unset it (it names {', '.join(modules)}) or serve locally without --public")
    before = set(SPECS)
    for module in modules:
        _import(module)
    added = [name for name in SPECS if name not in before]
    from . import maps                              # the classes register themselves on import
    missing = [name for name in added if name not in maps.names()]
    if missing:
        raise RuntimeError(f"{ENV}: {', '.join(missing)} has a spec but no class registered with "
                           "explorer.maps.register")
    return added


def _import(module: str):
    if module.endswith(".py"):
        path = Path(module).expanduser().resolve()
        spec = importlib.util.spec_from_file_location(f"explorer_plugin_{path.stem}", path)
        if spec is None or not path.is_file():
            raise FileNotFoundError(f"{ENV}: no Python file at {module}")
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return loaded
    return importlib.import_module(module)
