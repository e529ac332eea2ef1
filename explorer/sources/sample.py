"""The Sample: one set of Q, K, V with everything a figure needs to label it honestly.

Every source (a model reading a text, a random preset, an uploaded file) returns the same
dataclass, so the rest of the engine never asks where the numbers came from. Shapes are
always (layers, heads, N, head_dim), even when there is only one layer and one head,
so that code indexing ``sample.q[layer, head]`` works for every source.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..catalog import MAX_HEAD_DIM, MAX_TOKENS  # noqa: F401 - the shared bounds, re-exported
from ..text import Message

# Caps that keep one request from exhausting the server's memory through the UI.
MAX_ELEMENTS = 2 ** 22       # elements in one of q, k, v (16 MiB of float32)


@dataclass
class Sample:
    """Q, K, V shaped (layers, heads, N, head_dim), float32, plus labels and provenance.

    ``tokens`` are unique display labels (one per row of a heatmap); ``offsets`` are the
    (start, end) character spans in ``text`` when the sample came from a text; ``notices``
    tell the user everything that was changed on the way (truncation, dropped special
    tokens, converted dtypes, invented values). ``model_attentions`` is the model's own
    softmax map, (layers, heads, N, N), when a model produced one.
    """

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    tokens: list[str]
    model_attentions: torch.Tensor | None = None
    notices: list[str] = field(default_factory=list)
    offsets: list[tuple[int, int]] | None = None
    causal: bool = False
    source: str = ""
    layer_names: list[str] = field(default_factory=list)
    text: str | None = None
    info: dict = field(default_factory=dict)
    # What the engine's sample cache keeps it under (explorer.views.common.load_sample): a
    # result computed from it alone may be kept under the same key. None: kept nowhere (a file).
    cache_key: tuple | None = None

    def __post_init__(self):
        # Sources build Samples; a shape mismatch here is a bug in a source, caught early.
        if self.q.dim() != 4 or self.q.shape != self.k.shape:
            raise ValueError(f"q, k: expected equal 4-d shapes, got {tuple(self.q.shape)}, {tuple(self.k.shape)}")
        if self.v.dim() != 4 or self.v.shape[:3] != self.q.shape[:3]:
            raise ValueError(f"v: shape {tuple(self.v.shape)} does not fit q's {tuple(self.q.shape)}")
        if len(self.tokens) != self.n_tokens or len(set(self.tokens)) != len(self.tokens):
            raise ValueError("tokens: need one unique label per position")
        if self.offsets is not None and len(self.offsets) != self.n_tokens:
            raise ValueError("offsets: need one span per position")
        if self.model_attentions is not None:
            want = (*self.q.shape[:2], self.n_tokens, self.n_tokens)
            if tuple(self.model_attentions.shape) != want:
                raise ValueError(f"model_attentions: expected shape {want}")
        if not self.layer_names:
            self.layer_names = [f"layer {i}" for i in range(self.n_layers)]
        if len(self.layer_names) != self.n_layers:
            raise ValueError("layer_names: need one name per layer")

    @property
    def n_layers(self) -> int:
        return self.q.shape[0]

    @property
    def n_heads(self) -> int:
        return self.q.shape[1]

    @property
    def n_tokens(self) -> int:
        return self.q.shape[2]

    @property
    def head_dim(self) -> int:
        return self.q.shape[3]

    def head(self, layer: int = 0, head: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(q, k, v) of one head, each (N, head_dim): what the N x N maps take."""
        if not 0 <= layer < self.n_layers:
            raise ValueError(Message("sources.err_layer", last=self.n_layers - 1, layer=layer))
        if not 0 <= head < self.n_heads:
            raise ValueError(Message("sources.err_head", last=self.n_heads - 1, head=head))
        return self.q[layer, head], self.k[layer, head], self.v[layer, head]


def position_labels(n: int) -> list[str]:
    """Labels for data without words: t0, t1, ... (short, unique, sortable by eye)."""
    return [f"t{i}" for i in range(n)]
