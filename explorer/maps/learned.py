"""Learned feature maps trained to imitate softmax: Hedgehog (Zhang et al. 2024) here, and
the LUNA-style map of ``luna`` (Shahbazi et al. 2025), both through one training path.

Fixed maps (elu+1 and friends) give flat attention rows; softmax rows are spiky (low
entropy) and monotone in the logit. Hedgehog learns phi instead of choosing it:

    phi(x) = [softmax(W x' + b), softmax(-(W x' + b))],   x' = x / d^(1/4),

one (W, b) for queries and one for keys, per head, W initialised to the identity. The
softmax over features keeps every feature in (0, 1], so the map is positive and cannot
overflow. It is trained so that its normalised attention matches the model's softmax row
by row, with the loss

    cross-entropy  -sum_j A_ij log A^_ij, averaged over rows and heads,

which equals the mean row KL(A || A^) plus the (constant) entropy of A.

Many heads are trained at once (``explorer.experiments.learning``): the parameters carry
leading head dimensions (e.g. layers x heads) and broadcast against q, k shaped
(..., layers, heads, N, d).

Trained maps are saved as safetensors (``save_map`` / ``load_map``, which checks a file's
size and every tensor's shape before reading it), and the maps shipped in ``assets/maps``
for the lecture load with ``pretrained(kind, layer, head)``.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import torch
from torch import nn

from ..resources import asset
from ..checks import check_positive_int
from ..text import Message
from .base import SPECS, FeatureMap, _softmax_scale, register
from .luna import Luna


class Hedgehog(FeatureMap):
    """Learned positive map [softmax(Wx'+b), softmax(-Wx'-b)], m = 2 x hidden.

    ``is_query`` selects the query parameters (queries and keys get separate maps).
    ``heads`` gives leading parameter dimensions, e.g. (6, 12) for every head of MiniLM;
    an untrained map (W = identity, b = 0) is the default. With hidden > d the extra
    columns of W start as small seeded noise.
    """

    spec = SPECS["hedgehog"]

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0, heads: tuple = ()):
        super().__init__(head_dim)
        m = self.spec.feature_count(head_dim) if num_features is None else check_positive_int(num_features, "num_features")
        if m % 2:
            raise ValueError(Message("learn.err_map_even", got=m))
        hidden = m // 2
        self.heads = tuple(int(h) for h in heads)
        gen = torch.Generator().manual_seed(int(seed))

        def init_weight():
            w = torch.zeros(head_dim, hidden)
            w[: min(head_dim, hidden), : min(head_dim, hidden)] = torch.eye(min(head_dim, hidden))
            if hidden > head_dim:
                w[:, head_dim:] = 0.1 * torch.randn(head_dim, hidden - head_dim, generator=gen)
            return w.expand(*self.heads, head_dim, hidden).clone()

        self.wq, self.wk = nn.Parameter(init_weight()), nn.Parameter(init_weight())
        self.bq = nn.Parameter(torch.zeros(*self.heads, 1, hidden))
        self.bk = nn.Parameter(torch.zeros(*self.heads, 1, hidden))

    @property
    def num_features(self) -> int:
        return 2 * self.wq.shape[-1]

    def features(self, x, is_query):
        w, b = (self.wq, self.bq) if is_query else (self.wk, self.bk)
        h = _softmax_scale(x) @ w.to(x.dtype) + b.to(x.dtype)
        return torch.cat([torch.softmax(h, dim=-1), torch.softmax(-h, dim=-1)], dim=-1)

    def select(self, *index) -> "Hedgehog":
        """The map of one head (or a sub-block of heads), e.g. ``select(layer, head)``."""
        sub = Hedgehog(self.head_dim, self.num_features, heads=())
        with torch.no_grad():
            for name in ("wq", "wk", "bq", "bk"):
                getattr(sub, name).data = getattr(self, name)[index].detach().clone()
        sub.heads = tuple(sub.wq.shape[:-2])
        return sub

    def save(self, path) -> None:
        """Save a trained map (parameters and shape) to a ``.pt`` file."""
        torch.save({"kind": "hedgehog", "head_dim": self.head_dim, "num_features": self.num_features,
                    "heads": list(self.heads), "state": {k: v.detach().clone() for k, v in self.state_dict().items()}},
                   path)

    @classmethod
    def load(cls, path) -> "Hedgehog":
        """Load a map saved by ``save``; read with weights_only=True (no pickled code runs)."""
        blob = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(blob, dict) or blob.get("kind") != "hedgehog":
            raise ValueError(f"path: {path} does not hold a saved Hedgehog map")
        fmap = cls(int(blob["head_dim"]), int(blob["num_features"]), heads=tuple(blob["heads"]))
        fmap.load_state_dict(blob["state"])
        return fmap


register(Hedgehog)


# The learned kinds.
LEARNED_CLASSES = {"hedgehog": Hedgehog, "luna": Luna}


def check_kind(kind) -> str:
    if kind not in LEARNED_CLASSES:
        raise ValueError(Message("learn.err_kind", choices=", ".join(LEARNED_CLASSES), kind=repr(str(kind)[:40])))
    return kind


# ---------------------------------------------------------------------------------------
# Saving and loading trained maps (safetensors), and the maps shipped for the lecture
# ---------------------------------------------------------------------------------------

MAX_FILE_BYTES = 16 * 2 ** 20      # a map for every head of MiniLM at m = 512 is ~7 MB
MAX_HEADER_BYTES = 64 * 2 ** 10
MAX_HEAD_DIM = 1024
MAX_NUM_FEATURES = 1024
MAX_HEADS = 4096                   # layers x heads a file may cover
MAX_META_CHARS = 256               # one metadata value (a model's name or folder at most)
# Fields kept for a reader and never parsed on load: the run's provenance record (texts as
# digests, versions, settings) is a whole JSON document, bounded by the header's own size.
RECORD_FIELDS = ("provenance",)
PRETRAINED_DIR = asset("maps")            # in a checkout or an installed package alike


def save_map(fmap: FeatureMap, path, **info) -> Path:
    """Write a learned map to a safetensors file: its parameters, plus its kind, head_dim,
    num_features and head dimensions (and any ``info``, e.g. layer, head, steps, seed) as
    text metadata."""
    from safetensors.torch import save_file
    kind = check_kind(fmap.name)
    meta = {"kind": kind, "head_dim": str(fmap.head_dim), "num_features": str(fmap.num_features),
            "heads": json.dumps(list(fmap.heads)), **{k: json.dumps(v) for k, v in info.items()}}
    path = Path(path)
    save_file({k: v.detach().contiguous().cpu().float() for k, v in fmap.state_dict().items()}, str(path),
              metadata=meta)
    return path


def _whole(meta: dict, key: str, low: int, high: int) -> int:
    """An integer metadata field within [low, high], or ValueError naming it."""
    try:
        value = json.loads(meta[key])
    except (KeyError, TypeError, ValueError):
        raise ValueError(Message("learn.err_map_field_number", key=repr(key))) from None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(Message("learn.err_map_field_range", key=key, low=low, high=high, got=str(value)[:40]))
    return value


def read_header(path) -> tuple[dict, dict]:
    """(metadata, tensor entries) of a safetensors file, read without loading any tensor.

    Refuses files over MAX_FILE_BYTES and headers that are too long, not JSON, or that
    point outside the file, each with one sentence.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError:
        raise ValueError(Message("learn.err_map_unreadable")) from None
    if size > MAX_FILE_BYTES:
        raise ValueError(Message("learn.err_map_bytes", size=f"{size / 2 ** 20:.1f}", cap=MAX_FILE_BYTES // 2 ** 20))
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) < 8:
            raise ValueError(Message("learn.err_map_short"))
        (length,) = struct.unpack("<Q", raw)
        if length > MAX_HEADER_BYTES or 8 + length > size:
            raise ValueError(Message("learn.err_map_header", why=Message("learn.why_header_length")))
        try:
            header = json.loads(fh.read(length).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ValueError(Message("learn.err_map_header", why=Message("learn.why_header_json"))) from None
        except RecursionError:        # "[[[[..." nested deeper than the parser goes
            raise ValueError(Message("learn.err_map_header", why=Message("learn.why_header_deep"))) from None
    if not isinstance(header, dict):
        raise ValueError(Message("learn.err_map_header", why=Message("learn.why_header_table")))
    meta = header.pop("__metadata__", None)
    if not isinstance(meta, dict):
        raise ValueError(Message("learn.err_map_no_meta"))
    for key, value in meta.items():
        # Every field is parsed again (json) and some are echoed: a bounded string parses
        # without recursing far and reads in one line.
        limit = MAX_HEADER_BYTES if key in RECORD_FIELDS else MAX_META_CHARS
        if not isinstance(value, str) or len(value) > limit:
            raise ValueError(Message("learn.err_map_field_text", key=repr(key[:40]), limit=limit))
    return meta, header


def check_header(meta: dict, entries: dict) -> tuple[str, int, int, tuple]:
    """(kind, head_dim, num_features, heads) after checking the description and every
    tensor's name, dtype and shape against what that map needs."""
    kind = meta.get("kind")
    if kind not in LEARNED_CLASSES:
        raise ValueError(Message("learn.err_map_kind", choices=", ".join(LEARNED_CLASSES), got=repr(str(kind)[:40])))
    head_dim = _whole(meta, "head_dim", 1, MAX_HEAD_DIM)
    num_features = _whole(meta, "num_features", 1, MAX_NUM_FEATURES)
    try:
        heads = json.loads(meta.get("heads", "[]"))
    except ValueError:
        heads = None
    if (not isinstance(heads, list) or len(heads) > 2
            or not all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_HEADS for h in heads)
            or math.prod(heads) > MAX_HEADS):
        raise ValueError(Message("learn.err_map_heads", cap=MAX_HEADS))
    try:
        template = LEARNED_CLASSES[kind](head_dim, num_features)          # one head: small, bounded above
    except ValueError as exc:
        raise ValueError(Message("learn.err_map_inner", why=exc.args[0] if exc.args else type(exc).__name__)) from None
    expected = {name: [*heads, *p.shape] for name, p in template.state_dict().items()}
    if set(entries) != set(expected):
        missing, extra = sorted(set(expected) - set(entries)), sorted(set(entries) - set(expected))
        raise ValueError(Message("learn.err_map_tensors", kind=kind, expected=str(sorted(expected)),
                                 missing=str(missing[:4]), extra=str([e[:20] for e in extra[:4]])))
    for name, shape in expected.items():
        entry = entries[name]
        if not isinstance(entry, dict) or entry.get("dtype") != "F32" or entry.get("shape") != shape:
            got = (entry.get("dtype"), entry.get("shape")) if isinstance(entry, dict) else entry
            raise ValueError(Message("learn.err_map_tensor", name=name, shape=str(shape), got=str(got)[:60]))
    return kind, head_dim, num_features, tuple(heads)


def load_map(path) -> FeatureMap:
    """A map written by ``save_map``. The file's size, header and every tensor's shape are
    checked before any tensor is read; non-finite parameters are refused."""
    from safetensors.torch import load_file
    meta, entries = read_header(path)
    kind, head_dim, num_features, heads = check_header(meta, entries)
    try:
        tensors = load_file(str(path))
    except Exception as exc:          # a truncated or corrupt body: one sentence, not a traceback
        raise ValueError(Message("learn.err_map_body", kind=type(exc).__name__)) from None
    if not all(torch.isfinite(t).all() for t in tensors.values()):
        raise ValueError(Message("learn.err_map_finite"))
    fmap = LEARNED_CLASSES[kind](head_dim, num_features, heads=heads)
    fmap.load_state_dict(tensors)
    fmap.requires_grad_(False)
    fmap.info = {k: v for k, v in meta.items() if k not in ("kind", "head_dim", "num_features", "heads")}
    return fmap


# The models maps ship for, by the short name their files carry; the embedded MiniLM first.
PRETRAINED_MODELS = {"all-MiniLM-L6-v2": "minilm", "SmolLM2-135M": "smollm2"}
DEFAULT_PRETRAINED_MODEL = "all-MiniLM-L6-v2"


def pretrained_path(kind: str, layer: int, model: str = DEFAULT_PRETRAINED_MODEL) -> Path:
    """Where the shipped map for every head of ``model``'s ``layer`` lives
    (``scripts/train_lecture_maps.py``); ValueError for a model no map ships for."""
    if model not in PRETRAINED_MODELS:
        raise ValueError(Message("learn.err_map_shipped_model", models=", ".join(PRETRAINED_MODELS),
                                 got=repr(str(model)[:40])))
    return PRETRAINED_DIR / f"{check_kind(kind)}-{PRETRAINED_MODELS[model]}-layer{int(layer)}.safetensors"


_pretrained: dict = {}


def pretrained(kind: str, layer: int, head=None, model: str = DEFAULT_PRETRAINED_MODEL) -> FeatureMap | None:
    """The shipped trained map of ``kind`` for ``model``'s ``layer`` and ``head`` (a one-head
    map), or for every head of the layer (``head`` None: head dimension first); None when
    none is shipped for that model, layer or head. ``model`` defaults to the embedded
    MiniLM; the causal SmolLM2's maps were trained against its causal softmax. Loaded once
    per process."""
    if model not in PRETRAINED_MODELS:
        return None
    path = pretrained_path(kind, layer, model)
    if path not in _pretrained:
        _pretrained[path] = load_map(path) if path.exists() else None
    layer_map = _pretrained[path]
    if layer_map is None:
        return None
    if head is None:
        return layer_map
    if not 0 <= int(head) < layer_map.heads[0]:
        return None
    return layer_map.select(int(head)).requires_grad_(False)
