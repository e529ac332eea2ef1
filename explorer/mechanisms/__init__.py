"""One folder per mechanism of causal attention, each with its float64 reference loop, its
fast forms, its parameters and one ``Recurrence`` (see ``explorer.mechanisms.recurrence``).

``names()`` lists them in the order the app shows them; ``get(name)`` loads one. A
folder's ``__init__`` holds only facts that need no torch (``STATE_KIND``, ``WRITES``), so
the page can list the updates before the engine is imported; the rest lives in its
``mechanism`` module.

Adding a mechanism: a new folder here with
- ``__init__.py``: its docstring (the update in one line), ``STATE_KIND`` (its id in the state
  tab, or None when it has no fixed-size state), ``WRITES`` (how the step view writes a
  key: ``WRITES_FEATURES``, ``WRITES_FORGET_GATE`` or ``WRITES_UNIT``) and, with a state,
  ``YEAR`` (its paper's, for the lecture's roadmap); ``BESIDE_SOFTMAX = False`` where the maps
  tab should not draw it beside softmax;
- ``mechanism.py``: ``MECHANISM``, a ``recurrence.Recurrence`` with its float64 loop, its
  fast forms, ``attention_map`` and ``default_params`` (and, for the state tab, its gates;
  for the maps tab, what its map reads: ``map_inputs``, ``reads``, ``per_feature``);
- its forms and gates beside them;
then its name in ``NAMES`` and its words in the two language files: its label
(``state.kind.<STATE_KIND>``) and its roadmap point (``state.road.<STATE_KIND>``, long and
``state.road_short.<STATE_KIND>``) and its maps-tab note (``maps.note_<name>``). The tests (tests/engine/test_mechanisms.py) run every registered name.
"""

from __future__ import annotations

import functools
import importlib

NAMES = ("softmax", "linear", "retnet", "gla", "scalar_gate", "hgrn2", "deltanet", "gated_deltanet")

# How the step view writes a key into the state (a folder's ``WRITES``):
WRITES_FEATURES = "features"        # phi(k), with the tab's feature map
WRITES_FORGET_GATE = "forget_gate"  # 1 - f(k): the input gate tied to the forget gate (HGRN2)
WRITES_UNIT = "unit"                # k / ||k||: the delta rule's keys


def names() -> tuple[str, ...]:
    """Every registered mechanism, in the app's order."""
    return NAMES


def _folder(name: str):
    if name not in NAMES:
        raise ValueError(f"name: expected one of {', '.join(NAMES)}, got {str(name)[:40]!r}")
    return importlib.import_module(f"{__name__}.{name}")


def get(name: str):
    """The mechanism registered as ``name`` (a ``Recurrence``)."""
    _folder(name)
    return importlib.import_module(f"{__name__}.{name}.mechanism").MECHANISM


def beside_softmax() -> tuple[str, ...]:
    """The mechanisms the maps tab draws beside softmax, without torch: every one but those
    whose folder says ``BESIDE_SOFTMAX = False`` (softmax itself, the reference; linear,
    whose map is the tab's elu+1)."""
    return tuple(n for n in NAMES if getattr(_folder(n), "BESIDE_SOFTMAX", True))


def state_kinds() -> tuple[str, ...]:
    """The state tab's ids of the mechanisms with a fixed-size state, in order."""
    return tuple(kind for kind in (_folder(n).STATE_KIND for n in NAMES) if kind is not None)


def state_kind_years() -> tuple[tuple[str, int], ...]:
    """(state-tab id, year of its paper) of every mechanism with a fixed-size state, in order:
    the lecture's roadmap of state updates."""
    return tuple((_folder(n).STATE_KIND, _folder(n).YEAR) for n in NAMES if _folder(n).STATE_KIND is not None)


def _by_state_kind(kind: str) -> str:
    for n in NAMES:
        if _folder(n).STATE_KIND == kind:
            return n
    raise ValueError(f"kind: expected one of {', '.join(state_kinds())}, got {str(kind)[:40]!r}")


@functools.lru_cache(maxsize=None)
def for_state_kind(kind: str):
    """The mechanism behind the state tab's update ``kind`` (asked at every step of a probe's
    stream: looked up once per kind)."""
    return get(_by_state_kind(kind))


def writes(kind: str) -> str:
    """How the update ``kind`` writes a key (``WRITES_*``), without torch."""
    return _folder(_by_state_kind(kind)).WRITES
