"""The feature maps of a linearized model, one per layer: the trained (shipped) ones and the
fixed baselines, behind one interface.

    layer_maps(kind="hedgehog", window=0, model="SmolLM2-135M") -> LayerMaps
    load_shipped(kind="hedgehog", window=0, model="SmolLM2-135M") -> LayerMaps   (trained kinds)
    shipped() -> [(kind, window, sinks)]                what ships for SmolLM2-135M

Shapes. Everything is per layer and per *query* head:

- ``maps.query(layer, q)``: q shaped (heads, N, d) after RoPE (heads = 9 query heads of
  SmolLM2, d = 64), returns phi_q shaped (heads, N, m);
- ``maps.key(layer, k)``: k shaped (heads, N, d) after RoPE, the key/value heads already
  repeated over their group of query heads (``k.repeat_interleave(heads // kv_heads, 0)``:
  query head h reads key head h // 3), returns phi_k shaped (heads, N, m).

Each query head has its own map (a Hedgehog map is per query head, for its queries and its
keys), which is why keys come repeated. ``maps.window`` is the number w of recent keys each
query keeps exact and ``maps.sinks`` the number s of first keys kept exact (both 0: pure
linear); ``attention.windowed_attention(q, k, v, phi_q, phi_k, maps.window, maps.scale,
sinks=maps.sinks)`` is the layer's output, (heads, N, d_v) before the output projection. With
exact keys the learned per-head weight of the kernel against them is already folded into phi_q
(without, a per-head constant cancels). Inputs float32; outputs follow the input dtype.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..maps.base import FeatureMap, create
from ..maps.learned import LEARNED_CLASSES
from ..resources import asset

MODEL = "SmolLM2-135M"
SHAPE = {MODEL: {"layers": 30, "heads": 9, "kv_heads": 3, "head_dim": 64}}
FIXED_KINDS = ("elu1", "favor_plus")
LINEARIZE_KINDS = (*LEARNED_CLASSES, *FIXED_KINDS)
MAX_WINDOW = 512
MAX_SINKS = 16
SHIPPED_FILE_BYTES = 8 * 2 ** 20
FAVOR_FEATURES = 64            # FAVOR+ as a baseline at the learned maps' feature count
_SHORT = {MODEL: "smollm2"}


def map_path(kind: str, window: int, model: str = MODEL, sinks: int = 0) -> Path:
    """Where the trained maps of ``kind`` at ``window`` (and ``sinks``) for every layer of ``model`` live."""
    return asset("maps", f"linearized-{_SHORT[check_model(model)]}-{kind}-{set_suffix(window, sinks)}.safetensors")


def set_suffix(window: int, sinks: int = 0) -> str:
    """"w64", or "w16s1" with sinks: the exact keys of a set, as its file names it."""
    return f"w{int(window)}" + (f"s{int(sinks)}" if sinks else "")


def parse_suffix(text: str):
    """(window, sinks) of a ``set_suffix``, or None when ``text`` is not one."""
    window, _, sinks = text.removeprefix("w").partition("s")
    if not text.startswith("w") or not window.isdigit() or not (sinks.isdigit() or "s" not in text):
        return None
    return int(window), int(sinks or 0)


def check_model(model) -> str:
    if model not in SHAPE:
        raise ValueError(f"model: linearized maps exist for {', '.join(SHAPE)} only, got {str(model)[:40]!r}")
    return model


def check_kind(kind) -> str:
    if kind not in LINEARIZE_KINDS:
        raise ValueError(f"kind: choose one of {', '.join(LINEARIZE_KINDS)}, got {str(kind)[:40]!r}")
    return kind


def check_window(window) -> int:
    if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= MAX_WINDOW:
        raise ValueError(f"window: expected a whole number from 0 to {MAX_WINDOW}, got {str(window)[:40]}")
    return window


def check_sinks(sinks) -> int:
    if isinstance(sinks, bool) or not isinstance(sinks, int) or not 0 <= sinks <= MAX_SINKS:
        raise ValueError(f"sinks: expected a whole number from 0 to {MAX_SINKS}, got {str(sinks)[:40]}")
    return sinks


@dataclass
class LayerMaps:
    """Per-layer feature maps of one kind and window for a model (see the module doc)."""

    kind: str
    window: int
    model: str
    maps: list                      # one FeatureMap per layer, parameter head dimension (heads,)
    log_weight: torch.Tensor        # (layers, heads): log of the kernel's weight against the window
    head_dim: int = 64
    heads: int = 9
    kv_heads: int = 3
    info: dict = field(default_factory=dict)
    sinks: int = 0                  # the first keys kept exact (attention sinks)

    @property
    def exact(self) -> bool:
        """Whether some keys are read exactly (a window or sinks), beside the kernel."""
        return bool(self.window or self.sinks)

    @property
    def layers(self) -> int:
        return len(self.maps)

    @property
    def num_features(self) -> int:
        return self.maps[0].num_features

    @property
    def scale(self) -> float:
        """The softmax logit scale inside the window: 1 / sqrt(d)."""
        return self.head_dim ** -0.5

    def feature_map(self, layer: int) -> FeatureMap:
        return self.maps[layer]

    def query(self, layer: int, q: torch.Tensor) -> torch.Tensor:
        """phi_q of ``layer``: (heads, N, d) -> (heads, N, m), the kernel's weight folded in."""
        features = self.maps[layer](q, is_query=True)
        if self.exact:
            features = features * self.log_weight[layer].to(features.dtype).exp().view(-1, 1, 1)
        return features

    def key(self, layer: int, k: torch.Tensor) -> torch.Tensor:
        """phi_k of ``layer``: (heads, N, d), keys repeated per query head -> (heads, N, m)."""
        return self.maps[layer](k, is_query=False)


def fixed_maps(kind: str, window: int = 0, model: str = MODEL, seed: int = 0, sinks: int = 0) -> LayerMaps:
    """elu+1 or FAVOR+ (seeded, m = FAVOR_FEATURES) at every layer: the untrained baselines."""
    shape = SHAPE[check_model(model)]
    if kind not in FIXED_KINDS:
        raise ValueError(f"kind: the fixed kinds are {', '.join(FIXED_KINDS)}, got {str(kind)[:40]!r}")
    options = {"num_features": FAVOR_FEATURES, "seed": seed} if kind == "favor_plus" else {}
    fmap = create(kind, shape["head_dim"], **options)
    fmap.requires_grad_(False)
    return LayerMaps(kind, check_window(window), model, [fmap] * shape["layers"],
                     torch.zeros(shape["layers"], shape["heads"]), shape["head_dim"], shape["heads"],
                     shape["kv_heads"], sinks=check_sinks(sinks))


def layer_maps(kind: str = "hedgehog", window: int = 0, model: str = MODEL, sinks: int = 0) -> LayerMaps:
    """The maps a linearized model uses: shipped trained ones, or a fixed baseline."""
    if check_kind(kind) in FIXED_KINDS:
        return fixed_maps(kind, window, model, sinks=sinks)
    return load_shipped(kind, window, model, sinks)


_loaded: dict = {}


def shipped(model: str = MODEL) -> list[tuple[str, int, int]]:
    """(kind, window, sinks) of every trained set that ships for ``model``, by kind, then by
    window, then by sinks."""
    found = []
    for path in asset("maps").glob(f"linearized-{_SHORT[check_model(model)]}-*-w*.safetensors"):
        kind, suffix = path.stem.split("-")[-2:]
        exact = parse_suffix(suffix)
        if kind in LEARNED_CLASSES and exact is not None:
            found.append((kind, *exact))
    return sorted(found)


def describe(window: int, sinks: int = 0) -> str:
    """"w=64", or "w=16 + 1 sink": a set's exact keys, for messages."""
    return f"w={window}" + (f" + {sinks} sink{'s' if sinks > 1 else ''}" if sinks else "")


def load_shipped(kind: str = "hedgehog", window: int = 0, model: str = MODEL, sinks: int = 0) -> LayerMaps:
    """The trained maps of ``kind`` at ``window`` and ``sinks`` for every layer
    (``scripts/train_linearized_maps.py``), loaded once per process; ValueError naming what
    ships when that set does not."""
    path = map_path(check_kind(kind), check_window(window), model, check_sinks(sinks))
    if kind not in LEARNED_CLASSES or not path.is_file():
        offered = ", ".join(f"{k} {describe(w, s)}" for k, w, s in shipped(model)) or "none"
        raise ValueError(f"kind, window: no trained {str(kind)[:20]} maps at {describe(window, sinks)} ship for "
                         f"{model}; shipped: {offered}")
    if path not in _loaded:
        _loaded[path] = read_maps(path)
    return _loaded[path]


def read_maps(path) -> LayerMaps:
    """A file written by ``write_maps``: its size, metadata and every tensor's shape are
    checked before the tensors are read."""
    from safetensors import safe_open
    path = Path(path)
    if path.stat().st_size > SHIPPED_FILE_BYTES:
        raise ValueError(f"file: {path.name} is over {SHIPPED_FILE_BYTES // 2 ** 20} MB")
    with safe_open(str(path), framework="pt") as fh:
        meta = fh.metadata() or {}
        kind, model = meta.get("kind"), meta.get("model")
        if kind not in LEARNED_CLASSES or model not in SHAPE:
            raise ValueError(f"file: {path.name} holds no linearized map set (kind {str(kind)[:20]!r})")
        shape = SHAPE[model]
        window = check_window(json.loads(meta.get("window", "-1")))
        sinks = check_sinks(json.loads(meta.get("sinks", "0")))
        num_features = int(json.loads(meta.get("num_features", "0")))
        template = LEARNED_CLASSES[kind](shape["head_dim"], num_features, heads=(shape["heads"],))
        maps = []
        for layer in range(shape["layers"]):
            fmap = LEARNED_CLASSES[kind](shape["head_dim"], num_features, heads=(shape["heads"],))
            state = {}
            for name, param in template.state_dict().items():
                tensor = fh.get_tensor(f"{layer}.{name}").float()
                if tensor.shape != param.shape or not torch.isfinite(tensor).all():
                    raise ValueError(f"file: tensor {layer}.{name} is not a finite {tuple(param.shape)}")
                state[name] = tensor
            fmap.load_state_dict(state)
            fmap.requires_grad_(False)
            maps.append(fmap)
        log_weight = fh.get_tensor("log_weight").float()
        if log_weight.shape != (shape["layers"], shape["heads"]):
            raise ValueError("file: log_weight must be (layers, heads)")
    return LayerMaps(kind, window, model, maps, log_weight, shape["head_dim"], shape["heads"], shape["kv_heads"],
                     info={k: v for k, v in meta.items() if k not in ("kind", "model", "window", "sinks")}, sinks=sinks)


def write_maps(maps: LayerMaps, path, **info) -> Path:
    """Save a set as safetensors, parameters in float16 (the shipped sets stay small);
    ``read_maps`` gives them back as float32. The header is written with sorted keys (the
    safetensors library orders metadata by a hash), so the same maps give the same bytes."""
    tensors = {f"{layer}.{name}": p.detach().to(torch.float16).contiguous()
               for layer, fmap in enumerate(maps.maps) for name, p in fmap.state_dict().items()}
    tensors["log_weight"] = maps.log_weight.detach().to(torch.float16).contiguous()
    meta = {"kind": maps.kind, "model": maps.model, "window": json.dumps(maps.window),
            "num_features": json.dumps(maps.num_features), **{k: json.dumps(v) for k, v in info.items()}}
    if maps.sinks:              # only then: the sets without sinks keep their bytes
        meta["sinks"] = json.dumps(maps.sinks)
    header, blobs, offset = {"__metadata__": meta}, [], 0
    for name in sorted(tensors):
        blob = tensors[name].numpy().tobytes()
        header[name] = {"dtype": "F16", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    path = Path(path)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    return path
