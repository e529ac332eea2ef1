"""One spec per feature map: the facts every layer reads, written once.

A spec says what a map is without building it: its registry name, how many features it
has for head dimension d (and a chosen m, where it takes one), whether its features are
random, which keywords ``explorer.maps.create`` accepts for it, and its English label.
The map classes (``explorer.maps``), the catalogue the page is built from
(``explorer.catalog``) and the cost model (``explorer.measure.cost``) all read these specs,
so a new map is one class plus one entry here.

Standard library only: the page reads this before torch is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..text import Message


def _taylor2_count(d: int) -> int:
    # [1, x', x'_i^2 / sqrt(2), x'_i x'_j (i < j)]: 1 + d + d(d+1)/2
    return 1 + d + d * (d + 1) // 2


@dataclass(frozen=True)
class FeatureMapSpec:
    """The facts of one registered feature map."""

    name: str                          # registry name in explorer.maps, e.g. "favor_plus"
    pretty: str                        # its name, e.g. "FAVOR+"; the page says common.name.<name> where the
                                       # language files have it (a map from outside the package: this)
    default_count: Callable[[int], int]  # features for head dimension d when no m is chosen
    takes_m: bool = False              # create() accepts the number of features the user picks
    even_m: bool = False               # ... an even one only: features come in pairs
    random: bool = False               # random features, offered as IID and as orthogonal
    learned: bool = False              # trained to imitate softmax; the trained map has a label of its own
    options: tuple[str, ...] = ()      # the keywords create() accepts for this map
    trained_pretty: str | None = None  # the English name of the trained map (learned maps)

    def feature_count(self, head_dim: int, m: int | None = None) -> int:
        """The number of features the map has for head dimension ``head_dim``; ``m`` counts
        only for maps that take it, and an odd m of a paired map is rounded up (as the
        views round it before building the map)."""
        d = int(head_dim)
        if m is None or not self.takes_m:
            return self.default_count(d)
        m = int(m)
        return m + 1 if self.even_m and m % 2 else m


_RANDOM_OPTIONS = ("num_features", "seed", "orthogonal")
_LEARNED_OPTIONS = ("num_features", "seed", "heads")

# The order the page offers them in.
SPECS: dict[str, FeatureMapSpec] = {spec.name: spec for spec in (
    FeatureMapSpec("identity", "identity (q·k)", lambda d: d),
    FeatureMapSpec("taylor1", "Taylor-1", lambda d: 1 + d),
    FeatureMapSpec("elu1", "elu+1", lambda d: d),
    FeatureMapSpec("relu", "ReLU", lambda d: d),
    FeatureMapSpec("favor_plus", "FAVOR+", lambda d: d, takes_m=True, random=True, options=_RANDOM_OPTIONS),
    FeatureMapSpec("trig_rff", "trig RFF", lambda d: 2 * d, takes_m=True, even_m=True, random=True,
                   options=_RANDOM_OPTIONS),
    FeatureMapSpec("taylor2", "Taylor-2", _taylor2_count),
    FeatureMapSpec("cosformer", "cosFormer", lambda d: 2 * d, options=("max_len", "offset")),
    # Its features are its inner map's, Taylor-2 by default: fixed by d.
    FeatureMapSpec("sliding_window", "sliding window", _taylor2_count,
                   options=("num_features", "seed", "window", "inner")),
    FeatureMapSpec("hedgehog", "Hedgehog", lambda d: 2 * d, takes_m=True, even_m=True,
                   learned=True, options=_LEARNED_OPTIONS, trained_pretty="Hedgehog (trained)"),
    FeatureMapSpec("luna", "LUNA", lambda d: d, takes_m=True, learned=True,
                   options=_LEARNED_OPTIONS, trained_pretty="LUNA (trained)"),
)}

REFERENCE = "softmax"                  # the exact map every other one is compared with: no features


def add_spec(spec: FeatureMapSpec) -> FeatureMapSpec:
    """Add the spec of a map from outside the package (``explorer.plugins``), after the built-in
    ones; its class then registers itself in ``explorer.maps`` with ``spec = add_spec(...)``."""
    if not isinstance(spec, FeatureMapSpec):
        raise TypeError(f"spec: expected a FeatureMapSpec, got {type(spec).__name__}")
    if spec.name in SPECS or spec.name == REFERENCE:
        raise ValueError(f"spec: a map named {spec.name!r} exists already; give yours another name")
    SPECS[spec.name] = spec
    return spec


def spec(name: str) -> FeatureMapSpec:
    """The spec of the map registered as ``name``, or ValueError."""
    try:
        return SPECS[name]
    except KeyError:
        raise ValueError(Message("common.err_map_unknown", name=repr(name))) from None
