"""A corpus at a time: every chosen map on every layer and head of every text, as one tidy table.

For each text the model reads it once (one forward pass gives Q, K, V of every layer), then
each head is judged as the maps tab judges it: the softmax map and its metrics' reference are
prepared once per head, and every map's N x N map is compared with it by
``explorer.measure.metrics`` (the same calls, in the same order, as ``explorer.views.maps``:
a cell of this table equals the maps tab's row for that head). One row per
text x layer x head x map; the files, resuming and merging are ``explorer.experiments.probe_table``.

Map names are the engine's registry names (``elu1``, ``favor_plus``; a random map is drawn
orthogonal, as the maps tab's default) or the catalogue's ids ("favor_plus_iid").
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field

import torch

from .. import stopping
from .. import maps as feature_maps
from ..catalog import METRIC_KEYS, REFERENCE, default_id, map_specs
from ..core.feature_maps import SPECS
from ..diagnostics import attention
from ..measure import cost, metrics
from ..text import Message

DEFAULT_MAPS = ("elu1", "favor_plus", "taylor2", "cosformer")
# The columns that say which cell a row is (the key of resuming and merging), then what was read.
KEY_COLUMNS = ("text_index", "text_sha256", "layer", "head", "map_id")
CELL_COLUMNS = ("settings_sha256", "text_index", "text_sha256", "model", "layer", "head", "map", "map_id",
                "n_tokens", "unk_tokens", "truncated", "m", "seed", "model_check")
COLUMNS = CELL_COLUMNS + tuple(key for key in METRIC_KEYS if key not in CELL_COLUMNS)
# The maps tab's default m and window (views.maps.maps_view).
DEFAULT_M = 64
DEFAULT_WINDOW = 4


@dataclass(frozen=True)
class ProbeSettings:
    """What decides the numbers of a probe (the device does not: it is provenance)."""

    model: str | None = None                  # None: the embedded all-MiniLM-L6-v2
    maps: tuple = DEFAULT_MAPS                # catalogue labels after ``resolve_maps``
    layers: tuple | None = None               # None: every layer
    heads: tuple | None = None                # None: every head
    causal: bool | None = None                # None: as the model computes (MiniLM no, SmolLM2 yes)
    m: int = DEFAULT_M
    seed: int = 0
    window: int = DEFAULT_WINDOW
    max_tokens: int = 512

    def as_dict(self) -> dict:
        return {key: (list(value) if isinstance(value, tuple) else value) for key, value in asdict(self).items()}

    def digest(self) -> str:
        """SHA-256 of the settings: rows computed under other settings are never mixed in."""
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------
# Names and settings
# ---------------------------------------------------------------------------------------

def resolve_maps(names) -> tuple:
    """Catalogue ids of ``names`` (registry names or ids), in order, without repeats;
    ValueError naming what is offered."""
    specs = map_specs()
    ids = []
    for name in names or ():
        name = str(name).strip()
        if name == REFERENCE or name in specs and not specs[name].trained:
            map_id = name
        elif name in SPECS:
            map_id = default_id(name)
        else:
            offered = [REFERENCE, *dict.fromkeys([*SPECS, *(i for i, spec in specs.items() if not spec.trained)])]
            raise ValueError(Message("probe.err_map", name=repr(name[:60]), choices=", ".join(offered)))
        if map_id not in ids:
            ids.append(map_id)
    if not ids:
        raise ValueError(Message("probe.err_no_map"))
    return tuple(ids)


def registry_name(map_id: str) -> str:
    return REFERENCE if map_id == REFERENCE else map_specs()[map_id].name


def pick(asked, count: int, what: str) -> tuple:
    """Indices ``asked`` (None or "all": every one of ``count``), checked against ``count``."""
    if asked is None or asked == "all" or list(asked) == ["all"]:
        return tuple(range(count))
    picked = []
    for x in asked:
        try:
            i = int(x)
        except (TypeError, ValueError):
            raise ValueError(Message("probe.err_pick", what=what, got=repr(str(x)[:40]))) from None
        if not 0 <= i < count:
            raise ValueError(Message("probe.err_pick_range", what=what, index=i, last=count - 1))
        if i not in picked:
            picked.append(i)
    return tuple(picked)


def settle(settings: ProbeSettings, n_layers: int, n_heads: int) -> ProbeSettings:
    """The settings with maps as catalogue ids and layers and heads as explicit indices."""
    return ProbeSettings(settings.model, resolve_maps(settings.maps), pick(settings.layers, n_layers, "layers"),
                         pick(settings.heads, n_heads, "heads"), settings.causal, int(settings.m), int(settings.seed),
                         int(settings.window), int(settings.max_tokens))


def model_shape(model) -> tuple[int, int, int]:
    """(layers, heads, head dim) of ``model`` from its config, without reading a text."""
    from ..sources.text import text_shape
    _, layers, heads, head_dim = text_shape("a", model)
    return layers, heads, head_dim


# ---------------------------------------------------------------------------------------
# The work
# ---------------------------------------------------------------------------------------

def build_map(map_id: str, head_dim: int, m: int, seed: int, window: int):
    """The feature map ``map_id`` names, built as the maps tab builds it (views.common.make_feature_map)."""
    spec = map_specs()[map_id]
    kwargs = dict(spec.options)
    if spec.takes_m:
        kwargs["num_features"] = m + 1 if spec.even_m and m % 2 else m
    if spec.name == "sliding_window":
        kwargs["window"] = int(window)
    return feature_maps.create(spec.name, head_dim, seed=int(seed) % 2 ** 32, **kwargs)


@dataclass
class Corpus:
    """A corpus read from lines: (line index, text) of every line that holds words."""

    texts: list = field(default_factory=list)
    blank: int = 0                       # lines left out because they were empty

    @classmethod
    def from_lines(cls, lines) -> "Corpus":
        texts, blank = [], 0
        for i, line in enumerate(lines):
            line = line.rstrip("\r\n")
            if line.strip():
                texts.append((i, line))
            else:
                blank += 1
        return cls(texts, blank)

    def shard(self, index: int, count: int) -> list:
        """Every ``count``-th text: those whose line index is ``index`` modulo ``count``."""
        return [(i, t) for i, t in self.texts if i % count == index]

    def digest(self) -> str:
        h = hashlib.sha256()
        for i, text in self.texts:
            h.update(f"{i}\t{text}\n".encode("utf-8"))
        return h.hexdigest()


def estimate(settings: ProbeSettings, token_counts, head_dim: int) -> cost.Estimate:
    """The cost of probing texts of ``token_counts`` tokens: one head at a time, so the peak is
    the longest text's maps view of one head, and the time every head's of every text."""
    per_text = [cost.estimate("maps", n=max(1, int(n)), d=head_dim, heads=1, maps=list(settings.maps), m=settings.m)
                for n in token_counts]
    cells = len(settings.layers) * len(settings.heads)
    worst = max(per_text, key=lambda e: e.bytes)
    return cost.Estimate(worst.bytes, sum(e.seconds for e in per_text) * cells, worst.what, worst.lower)


class Prober:
    """Probes texts one at a time under fixed settings; the maps are built once per run."""

    def __init__(self, settings: ProbeSettings, device: str = "cpu", should_stop=None):
        layers, heads, head_dim = model_shape(settings.model)
        self.settings = settle(settings, layers, heads)
        self.head_dim = head_dim
        self.device = torch.device(device)
        self.should_stop = should_stop
        self._maps = {}

    def _map(self, label: str):
        if label not in self._maps:
            s = self.settings
            fmap = build_map(label, self.head_dim, s.m, s.seed, s.window)
            self._maps[label] = fmap.to(self.device) if isinstance(fmap, torch.nn.Module) else fmap
        return self._maps[label]

    @torch.inference_mode()
    def rows(self, index: int, text: str) -> list[dict]:
        """One row per layer x head x map of one text (the order of the settings)."""
        from .. import sources

        s = self.settings
        sample = sources.from_text(text, model=s.model, max_tokens=s.max_tokens)
        n = sample.n_tokens
        cost.check(cost.estimate("maps", n=n, d=self.head_dim, heads=1, maps=list(s.maps), m=s.m),
                   limit_seconds=math.inf)
        causal = bool(sample.causal) if s.causal is None else bool(s.causal)
        info = sample.info or {}
        strings = info.get("token_strings") or []
        common = {"settings_sha256": s.digest(), "text_index": int(index), "text_sha256": text_digest(text),
                  "model": str(info.get("model", s.model)), "n_tokens": n,
                  "unk_tokens": sum(1 for x in strings if x == "[UNK]"),
                  "truncated": int(info.get("tokens_in_text", 0) > sum(1 for x in info.get("special", []) if not x)),
                  "m": s.m, "seed": s.seed}
        out = []
        for layer in s.layers:
            for head in s.heads:
                stopping.check(self.should_stop)
                out.extend(self._head(sample, layer, head, causal, common))
        return out

    def _head(self, sample, layer, head, causal, common) -> list[dict]:
        q, k, v = (t[layer, head].to(self.device) for t in (sample.q, sample.k, sample.v))
        d = q.shape[-1]
        reference = attention.softmax_map(q, k, causal=causal)
        prepared = metrics.Reference(reference, v, attention.masked_logits(q, k, causal), causal)
        check = None
        if sample.model_attentions is not None:
            own = sample.model_attentions[layer, head].to(self.device)
            model_causal = bool(sample.causal)
            plain = reference if causal == model_causal else attention.softmax_map(q, k, causal=model_causal)
            check = float((plain - own).abs().max())
        rows = []
        for label in self.settings.maps:
            if label == REFERENCE:
                row = prepared.compare(reference, head_dim=d)
            else:
                fmap = self._map(label)
                approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=causal)
                row = prepared.compare(approx, ill_defined=ill, feature_dim=fmap.num_features, head_dim=d,
                                       window=getattr(fmap, "window", None))
                del approx, ill
            rows.append({**common, "layer": layer, "head": head, "map": registry_name(label), "map_id": label,
                         "model_check": check, **row})
        return rows


def provenance(settings: ProbeSettings, device: str, corpus: Corpus | None = None, shard=(0, 1)) -> dict:
    """Everything a reader needs to know where a probe's numbers came from: the export schema
    every export carries (explorer.provenance: the model file's SHA-256, the engine's version
    and commit, the packages, the settings and seeds), plus the settings' digest, the corpus,
    the shard and the device."""
    from .. import provenance as export_record
    from ..sources.text import get_model

    loaded = get_model(settings.model)
    rec = export_record.record("probe", settings=settings.as_dict(), seeds=[settings.seed],
                               models=[(str(loaded.name), str(loaded.path))])
    rec.update({
        "settings_sha256": settings.digest(),
        # The model as it reads: no folder (an export from a public server would show its files).
        "model": {"name": str(loaded.name), "type": loaded.model_type, "causal": bool(loaded.causal)},
        "corpus": None if corpus is None else {"texts": len(corpus.texts), "blank_lines": corpus.blank,
                                               "sha256": corpus.digest()},
        "shard": {"index": int(shard[0]), "count": int(shard[1])},
        "device": str(device),
    })
    return rec
