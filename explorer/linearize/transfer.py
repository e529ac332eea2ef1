"""Attention transfer, layer by layer: feature maps fitted so that a layer's causal linear (or
sliding-window) attention output matches its softmax output on the layer's own inputs.

    stack(datas) -> Batch                                 LayerData of equal-length sequences
    train_layer(batch, kind, window, ...) -> LayerFit    one map per query head, all heads at once
    layer_output(fmap, log_weight, q, k, v, window, scale)    the differentiable training form
    relative_error(prediction, target) -> float          ||y^ - y||_F / ||y||_F

The loss is the output error of each query head, relative to the size of that head's output,
averaged over heads:

    L = mean_h  sum_{n,e} (y^_hne - y_hne)^2 / sum_{n,e} y_hne^2

so heads with small outputs count as much as heads with large ones. The map is the kind's own
class (``explorer.maps``: Hedgehog, LUNA) with one parameter set per query head, trained by Adam
on minibatches of sequences drawn by a seeded generator: the same data, kind, window, seed and
settings give the same bytes. With a window, a per-head log weight of the kernel against the
exact softmax part is learned beside the map (LoLCATs' mixing factor), and so with sinks.

``layer_output`` is the masked quadratic form (sequences here are short, at most a few hundred
tokens, where it is the cheapest to differentiate); it equals ``attention.windowed_attention``
(a test holds them together).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .. import stopping
from ..checks import check_positive_int
from ..maps.learned import LEARNED_CLASSES
from .capture import LayerData

DEFAULT_LR = {"hedgehog": 0.05, "luna": 0.02}   # Adam step sizes that converge in ~100 steps


@dataclass
class Batch:
    """Sequences of one layer stacked: q, out (S, heads, N, d); k, v (S, heads, N, d) repeated."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    out: torch.Tensor

    @property
    def heads(self) -> int:
        return self.q.shape[1]


def stack(datas: list[LayerData]) -> Batch:
    lengths = {d.q.shape[-2] for d in datas}
    if len(lengths) != 1:
        raise ValueError(f"datas: sequences of one length are stacked, got lengths {sorted(lengths)[:6]}")
    kv = [d.repeated() for d in datas]
    return Batch(torch.stack([d.q for d in datas]), torch.stack([k for k, _ in kv]),
                 torch.stack([v for _, v in kv]), torch.stack([d.out for d in datas]))


def layer_output(fmap, log_weight, q, k, v, window: int, scale: float, sinks: int = 0) -> torch.Tensor:
    """The windowed causal linear attention output (..., heads, N, d_v), quadratic form.

    ``log_weight`` (heads,) multiplies the kernel by exp(log_weight) against the exact keys
    (ignored when there are none, w = s = 0, where any per-head constant cancels)."""
    n = q.shape[-2]
    rows = torch.arange(n).unsqueeze(-1)
    cols = torch.arange(n).unsqueeze(0)
    older = (cols <= rows - window) & (cols >= sinks)
    exact = bool(window or sinks)
    kernel = fmap(q, is_query=True) @ fmap(k, is_query=False).transpose(-1, -2)
    if exact:
        kernel = kernel * log_weight.exp().view(-1, 1, 1)
    weights = kernel.masked_fill(~older, 0.0)
    if exact:
        inside = (cols <= rows) & ~older
        logits = ((q @ k.transpose(-1, -2)) * scale).masked_fill(~inside, float("-inf"))
        top = logits.amax(-1, keepdim=True).detach()
        weights = weights + torch.exp(logits - top)
    return (weights @ v) / weights.sum(-1, keepdim=True)


def head_relative_loss(prediction, target) -> torch.Tensor:
    """mean over heads of the squared output error relative to the head's squared output."""
    dims = [0, 2, 3] if prediction.dim() == 4 else [1, 2]
    return ((prediction - target).square().sum(dims) / target.square().sum(dims).clamp_min(1e-12)).mean()


def relative_error(prediction, target) -> float:
    """||y^ - y||_F / ||y||_F over everything given, in float64."""
    prediction, target = prediction.double(), target.double()
    return float((prediction - target).norm() / target.norm().clamp_min(1e-30))


@dataclass
class LayerFit:
    """A layer's trained map (parameter head dimension (heads,)), its kernel log weights and losses."""

    feature_map: object
    log_weight: torch.Tensor
    losses: list = field(default_factory=list)


def train_layer(batch: Batch, kind: str = "hedgehog", window: int = 0, *, sinks: int = 0, num_features: int = 64,
                steps: int = 200, batch_size: int = 8, lr: float | None = None, seed: int = 0,
                scale: float | None = None, progress=None, should_stop=None) -> LayerFit:
    """Fit one map per query head of a layer so its windowed linear attention output matches
    the softmax output (``head_relative_loss``), by Adam on seeded minibatches of sequences.

    ``progress(fraction, loss)`` hears about each step; ``should_stop()`` is asked every step
    (``stopping.Stopped`` when it turns true)."""
    if kind not in LEARNED_CLASSES:
        raise ValueError(f"kind: trained kinds are {', '.join(LEARNED_CLASSES)}, got {str(kind)[:40]!r}")
    steps = check_positive_int(steps, "steps")
    batch_size = min(check_positive_int(batch_size, "batch_size"), batch.q.shape[0])
    scale = batch.q.shape[-1] ** -0.5 if scale is None else float(scale)
    gen = torch.Generator().manual_seed(int(seed))
    fmap = LEARNED_CLASSES[kind](batch.q.shape[-1], num_features, seed=seed, heads=(batch.heads,))
    log_weight = torch.zeros(batch.heads, requires_grad=bool(window or sinks))
    params = list(fmap.parameters()) + ([log_weight] if window or sinks else [])
    opt = torch.optim.Adam(params, lr=DEFAULT_LR[kind] if lr is None else lr)
    fit = LayerFit(fmap, log_weight)
    for step in range(steps):
        stopping.check(should_stop)
        pick = torch.randperm(batch.q.shape[0], generator=gen)[:batch_size]
        opt.zero_grad()
        y = layer_output(fmap, log_weight, batch.q[pick], batch.k[pick], batch.v[pick], window, scale, sinks)
        loss = head_relative_loss(y, batch.out[pick])
        loss.backward()
        opt.step()
        fit.losses.append(loss.item())
        if progress is not None:
            progress((step + 1) / steps, fit.losses[-1])
    fmap.requires_grad_(False)
    fit.log_weight = log_weight.detach()
    return fit
