"""The feature maps of a linearized model, one per layer: the trained (shipped) ones and the
fixed baselines, behind one interface.

    layer_maps(kind="hedgehog", window=0, model="SmolLM2-135M") -> LayerMaps
    load_shipped(kind="hedgehog", window=0, model="SmolLM2-135M") -> LayerMaps   (trained kinds)
    shipped() -> [(kind, window)]                       what ships for SmolLM2-135M

Shapes. Everything is per layer and per *query* head:

- ``maps.query(layer, q)``: q shaped (heads, N, d) after RoPE (heads = 9 query heads of
  SmolLM2, d = 64), returns phi_q shaped (heads, N, m);
- ``maps.key(layer, k)``: k shaped (heads, N, d) after RoPE, the key/value heads already
  repeated over their group of query heads (``k.repeat_interleave(heads // kv_heads, 0)``:
  query head h reads key head h // 3), returns phi_k shaped (heads, N, m).

Each query head has its own map (a Hedgehog map is per query head, for its queries and its
keys), which is why keys come repeated. ``maps.window`` is the number w of exact softmax keys
each query keeps (0: pure linear); ``attention.windowed_attention(q, k, v, phi_q, phi_k,
maps.window, maps.scale)`` is the layer's output, (heads, N, d_v) before the output projection.
With w > 0 the learned per-head weight of the kernel against the window is already folded into
phi_q (with w = 0 a per-head constant cancels). Inputs float32; outputs follow the input dtype.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..maps.base import FeatureMap, create
from ..maps.learned import KINDS as LEARNED_KINDS
from ..resources import asset

MODEL = "SmolLM2-135M"
SHAPE = {MODEL: {"layers": 30, "heads": 9, "kv_heads": 3, "head_dim": 64}}
FIXED_KINDS = ("elu1", "favor_plus")
KINDS = (*LEARNED_KINDS, *FIXED_KINDS)
MAX_WINDOW = 512
SHIPPED_FILE_BYTES = 8 * 2 ** 20
FAVOR_FEATURES = 64            # FAVOR+ as a baseline at the learned maps' feature count
_SHORT = {MODEL: "smollm2"}


def map_path(kind: str, window: int, model: str = MODEL) -> Path:
    """Where the trained maps of ``kind`` at ``window`` for every layer of ``model`` live."""
    return asset("maps", f"linearized-{_SHORT[check_model(model)]}-{kind}-w{int(window)}.safetensors")


def check_model(model) -> str:
    if model not in SHAPE:
        raise ValueError(f"model: linearized maps exist for {', '.join(SHAPE)} only, got {str(model)[:40]!r}")
    return model


def check_kind(kind) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind: choose one of {', '.join(KINDS)}, got {str(kind)[:40]!r}")
    return kind


def check_window(window) -> int:
    if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= MAX_WINDOW:
        raise ValueError(f"window: expected a whole number from 0 to {MAX_WINDOW}, got {str(window)[:40]}")
    return window


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
        if self.window:
            features = features * self.log_weight[layer].to(features.dtype).exp().view(-1, 1, 1)
        return features

    def key(self, layer: int, k: torch.Tensor) -> torch.Tensor:
        """phi_k of ``layer``: (heads, N, d), keys repeated per query head -> (heads, N, m)."""
        return self.maps[layer](k, is_query=False)


def fixed_maps(kind: str, window: int = 0, model: str = MODEL, seed: int = 0) -> LayerMaps:
    """elu+1 or FAVOR+ (seeded, m = FAVOR_FEATURES) at every layer: the untrained baselines."""
    shape = SHAPE[check_model(model)]
    if kind not in FIXED_KINDS:
        raise ValueError(f"kind: the fixed kinds are {', '.join(FIXED_KINDS)}, got {str(kind)[:40]!r}")
    options = {"num_features": FAVOR_FEATURES, "seed": seed} if kind == "favor_plus" else {}
    fmap = create(kind, shape["head_dim"], **options)
    fmap.requires_grad_(False)
    return LayerMaps(kind, check_window(window), model, [fmap] * shape["layers"],
                     torch.zeros(shape["layers"], shape["heads"]), shape["head_dim"], shape["heads"],
                     shape["kv_heads"])


def layer_maps(kind: str = "hedgehog", window: int = 0, model: str = MODEL) -> LayerMaps:
    """The maps a linearized model uses: shipped trained ones, or a fixed baseline."""
    if check_kind(kind) in FIXED_KINDS:
        return fixed_maps(kind, window, model)
    return load_shipped(kind, window, model)


_loaded: dict = {}


def shipped(model: str = MODEL) -> list[tuple[str, int]]:
    """(kind, window) of every trained set that ships for ``model``."""
    found = []
    for path in sorted(asset("maps").glob(f"linearized-{_SHORT[check_model(model)]}-*-w*.safetensors")):
        kind, window = path.stem.split("-")[-2:]
        if kind in LEARNED_KINDS and window[1:].isdigit():
            found.append((kind, int(window[1:])))
    return found


def load_shipped(kind: str = "hedgehog", window: int = 0, model: str = MODEL) -> LayerMaps:
    """The trained maps of ``kind`` at ``window`` for every layer (``scripts/train_linearized_maps.py``),
    loaded once per process; ValueError naming what ships when that set does not."""
    path = map_path(check_kind(kind), check_window(window), model)
    if kind not in LEARNED_KINDS or not path.is_file():
        offered = ", ".join(f"{k} w={w}" for k, w in shipped(model)) or "none"
        raise ValueError(f"kind, window: no trained {str(kind)[:20]} maps at window {window} ship for {model}; "
                         f"shipped: {offered}")
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
        if kind not in LEARNED_KINDS or model not in SHAPE:
            raise ValueError(f"file: {path.name} holds no linearized map set (kind {str(kind)[:20]!r})")
        shape = SHAPE[model]
        window = check_window(json.loads(meta.get("window", "-1")))
        num_features = int(json.loads(meta.get("num_features", "0")))
        template = LEARNED_KINDS[kind](shape["head_dim"], num_features, heads=(shape["heads"],))
        maps = []
        for layer in range(shape["layers"]):
            fmap = LEARNED_KINDS[kind](shape["head_dim"], num_features, heads=(shape["heads"],))
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
                     info={k: v for k, v in meta.items() if k not in ("kind", "model", "window")})


def write_maps(maps: LayerMaps, path, **info) -> Path:
    """Save a set as safetensors, parameters in float16 (the shipped sets stay small);
    ``read_maps`` gives them back as float32. The header is written with sorted keys (the
    safetensors library orders metadata by a hash), so the same maps give the same bytes."""
    tensors = {f"{layer}.{name}": p.detach().to(torch.float16).contiguous()
               for layer, fmap in enumerate(maps.maps) for name, p in fmap.state_dict().items()}
    tensors["log_weight"] = maps.log_weight.detach().to(torch.float16).contiguous()
    meta = {"kind": maps.kind, "model": maps.model, "window": json.dumps(maps.window),
            "num_features": json.dumps(maps.num_features), **{k: json.dumps(v) for k, v in info.items()}}
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
